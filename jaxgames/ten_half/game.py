"""Ten-and-a-half (十点半): one player against a fixed-strategy dealer, infinite deck.

Rules as implemented: ``docs/rules/ten_half.md``. Summary:

* Cards are drawn from an infinite deck: rank ``0..12`` uniformly, with ``0 = A`` (1 point),
  ``1..8 = 2..9``, ``9 = 10`` and ``10, 11, 12 = J, Q, K`` ("face cards", ½ point each).
* All sums are kept in HALF-POINTS (an integer): a face card is 1, an A is 2, a 10 is 20,
  ten-and-a-half is 21.
* Hand types (``hand_type``), best first, with the payout to the holder:
  five faces 5, heavenly king 4, five small 3, ten-and-a-half 2, plain 1, bust -1.
* The player is dealt one card, then hits (action 1) or sticks (action 0). A hit that makes a
  special hand (payout >= 2) ends the game with ``+payout``; a bust ends it with ``-1``.
  Sticking lets the dealer draw (inside ``step``) until it busts (``+1``), makes a special
  hand (``-payout``), beats the player's sum (``-1``), or ties it with no more cards than the
  player (``-1``).

Every rule lives in a small pure, jittable helper (``card_value_halves``, ``is_face``,
``hand_type``, ``hit_result``, ``dealer_result``) that ``TenHalf._step`` uses and that tests
can feed hand-built cards.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core
from jaxgames.rng import random_words

Array = jax.Array

NUM_RANKS = 13
#: ``ten-and-a-half`` in half-points
TEN_HALF = 21
#: most cards a hand can hold
MAX_CARDS = 5

# Rank encoding: 0 = A, 1..8 = 2..9, 9 = 10, 10/11/12 = J/Q/K.
ACE, TEN, JACK, QUEEN, KING = 0, 9, 10, 11, 12
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

# Hand type ids, ordered worst to best; for every type but BUST the id equals the payout.
BUST = 0
PLAIN = 1
TEN_AND_A_HALF = 2
FIVE_SMALL = 3
HEAVENLY_KING = 4
FIVE_FACES = 5
HAND_TYPE_NAMES = ("bust", "plain", "ten-and-a-half", "five small", "heavenly king", "five faces")

STICK = 0
HIT = 1


# -- rule helpers (pure, jittable, broadcast over any leading shape) ---------------------------


def is_face(rank: Array) -> Array:
    """Whether ``rank`` (int, any shape) is J, Q or K: bool, same shape."""
    return jnp.asarray(rank) >= JACK


def card_value_halves(rank: Array) -> Array:
    """Value of ``rank`` in half-points: int32, same shape (face 1, A 2, ..., 10 20)."""
    rank = jnp.asarray(rank, jnp.int32)
    return jnp.where(is_face(rank), 1, 2 * (rank + 1)).astype(jnp.int32)


def hand_type(sum_halves: Array, num_cards: Array, num_faces: Array) -> tuple[Array, Array]:
    """Type of a hand and its payout to the holder, broadcast over the inputs.

    Args:
      sum_halves: int [...] the hand's sum in half-points.
      num_cards:  int [...] cards held (0..5).
      num_faces:  int [...] how many of them are J/Q/K.

    Returns:
      ``(type_id, payout)``: int32 [...] one of ``BUST, PLAIN, TEN_AND_A_HALF, FIVE_SMALL,
      HEAVENLY_KING, FIVE_FACES``; float32 [...] ``-1`` for a bust, else ``type_id``
      (plain 1, ten-and-a-half 2, five small 3, heavenly king 4, five faces 5).
    """
    s = jnp.asarray(sum_halves, jnp.int32)
    n = jnp.asarray(num_cards, jnp.int32)
    f = jnp.asarray(num_faces, jnp.int32)
    five = n >= MAX_CARDS
    type_id = jnp.where(
        s > TEN_HALF, BUST,
        jnp.where(five & (f >= MAX_CARDS), FIVE_FACES,
                  jnp.where(five & (s == TEN_HALF), HEAVENLY_KING,
                            jnp.where(five, FIVE_SMALL,
                                      jnp.where(s == TEN_HALF, TEN_AND_A_HALF, PLAIN))))
    ).astype(jnp.int32)
    payout = jnp.where(type_id == BUST, -1, type_id).astype(jnp.float32)
    return type_id, payout


def is_special(type_id: Array) -> Array:
    """Whether a hand type ends the game at once (five faces, heavenly king, five small,
    ten-and-a-half): bool, same shape."""
    return jnp.asarray(type_id) >= TEN_AND_A_HALF


def hit_result(player_sum: Array, num_cards: Array, num_faces: Array, rank: Array
               ) -> tuple[Array, Array, Array, Array, Array]:
    """The player's hand after drawing ``rank``, and what that draw decides.

    Args: int [...] each; the hand before the hit (a live plain hand) and the card drawn.

    Returns:
      ``(new_sum, new_cards, new_faces, reward, done)``: int32 [...] x3, float32 [...]
      (``-1`` bust, ``+payout`` special, ``0`` otherwise), bool [...] (bust or special).
    """
    new_sum = jnp.asarray(player_sum, jnp.int32) + card_value_halves(rank)
    new_cards = jnp.asarray(num_cards, jnp.int32) + 1
    new_faces = jnp.asarray(num_faces, jnp.int32) + is_face(rank).astype(jnp.int32)
    type_id, payout = hand_type(new_sum, new_cards, new_faces)
    done = type_id != PLAIN
    reward = jnp.where(done, payout, 0.0).astype(jnp.float32)
    return new_sum, new_cards, new_faces, reward, done


def dealer_outcomes(player_sum: Array, player_cards: Array, dealer_ranks: Array
                    ) -> tuple[Array, Array]:
    """Per-prefix dealer evaluation: ``(stops, rewards)``, bool [5], float32 [5].

    ``stops[i]``: the dealer stops after its ``i+1``-th card; ``rewards[i]``: the player's
    reward if it does. ``stops[4]`` is always True (every 5-card hand is special or bust).
    Branch-free: cumulative sums over the 5 ranks drawn up front.
    """
    dealer_ranks = jnp.asarray(dealer_ranks, jnp.int32)
    sums = jnp.cumsum(card_value_halves(dealer_ranks), axis=-1)
    faces = jnp.cumsum(is_face(dealer_ranks).astype(jnp.int32), axis=-1)
    cards = jnp.arange(1, MAX_CARDS + 1, dtype=jnp.int32)
    type_id, payout = hand_type(sums, cards, faces)
    p = jnp.asarray(player_sum, jnp.int32)
    pc = jnp.asarray(player_cards, jnp.int32)
    bust = type_id == BUST
    special = is_special(type_id)
    beats = (sums > p) | ((sums == p) & (cards <= pc))
    stops = bust | special | beats
    rewards = jnp.where(bust, 1.0, jnp.where(special, -payout, -1.0)).astype(jnp.float32)
    return stops, rewards


def dealer_result(player_sum: Array, player_cards: Array, dealer_ranks: Array) -> Array:
    """The player's reward when sticking on a plain hand, float32 [].

    Args:
      player_sum:   int [] the player's sum in half-points (< 21: a plain hand).
      player_cards: int [] the player's number of cards (1..4).
      dealer_ranks: int [5] the dealer's next five cards, in draw order; only the cards up to
        the dealer's stop matter.
    """
    stops, rewards = dealer_outcomes(player_sum, player_cards, dealer_ranks)
    return rewards[jnp.argmax(stops)]


def legal_mask(num_cards: Array) -> Array:
    """bool [2]: (stick, hit) for a live hand of ``num_cards`` cards."""
    return jnp.stack([jnp.bool_(True), jnp.asarray(num_cards) < MAX_CARDS])


def draw_rank(key: core.PRNGKey, shape: tuple[int, ...] = ()) -> Array:
    """Ranks drawn uniformly from the infinite deck: int32 ``shape``.

    Each 32-bit word of randomness yields three ranks (its base-13 digits). The bias this
    leaves (< 13**3 / 2**32 ≈ 5e-7 per rank) is far below anything measurable, and it costs a
    sixth of ``randint``'s two words per rank: the learners draw millions of cards per second
    and the hash behind the words is most of a step's cost on a CPU (hence also
    :func:`jaxgames.rng.random_words`, JAX's own words without its rolled loop).
    """
    n = int(np.prod(shape, dtype=np.int64))
    words = random_words(key, -(-n // 3))
    digits = jnp.stack([words % 13, (words // 13) % 13, (words // 169) % 13], axis=-1)
    return digits.reshape(-1)[:n].reshape(shape).astype(jnp.int32)


# -- the environment -------------------------------------------------------------------------


@struct.dataclass
class State(core.State):
    current_player: Array      # int32 []       always 0 (one player; the dealer plays in step)
    observation: Array         # int32 [3]      (player_sum, num_cards, num_faces)
    rewards: Array             # float32 [1]    the player's reward of the last step
    terminated: Array          # bool []
    truncated: Array           # bool []        never set (a game lasts at most 5 steps)
    legal_action_mask: Array   # bool [2]       (stick, hit)
    step_count: Array          # int32 []
    player_sum: Array          # int32 []       the player's sum in half-points (10½ = 21)
    num_cards: Array           # int32 []       cards in the player's hand, 1..5
    num_faces: Array           # int32 []       how many of them are J/Q/K, 0..5


class TenHalf(core.Env):
    """Ten-and-a-half against the dealer. Actions: 0 = stick, 1 = hit.

    Observation: int32 [3] = (player_sum in half-points, num_cards, num_faces).
    Reward: float32 [1], nonzero only on the final step (see module docstring).
    """

    id = "ten_half"
    num_players = 1
    num_actions = 2
    stochastic = True  # every hit and the dealer's turn draw cards

    def __init__(self):
        pass

    def _init(self, key: core.PRNGKey) -> State:
        rank = draw_rank(key)
        return State(
            current_player=jnp.int32(0),
            observation=jnp.zeros(3, jnp.int32),  # filled in by ``init``
            rewards=jnp.zeros(1, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=legal_mask(jnp.int32(1)),
            step_count=jnp.int32(0),
            player_sum=card_value_halves(rank),
            num_cards=jnp.int32(1),
            num_faces=is_face(rank).astype(jnp.int32),
        )

    def _step(self, state: State, action: Array, key: core.PRNGKey) -> State:
        # one draw for the card a hit takes and the five the dealer may take after a stick
        ranks = draw_rank(key, (1 + MAX_CARDS,))
        new_sum, new_cards, new_faces, hit_reward, hit_done = hit_result(
            state.player_sum, state.num_cards, state.num_faces, ranks[0])
        stick_reward = dealer_result(state.player_sum, state.num_cards, ranks[1:])
        hit = action == HIT
        return state.replace(
            player_sum=jnp.where(hit, new_sum, state.player_sum),
            num_cards=jnp.where(hit, new_cards, state.num_cards),
            num_faces=jnp.where(hit, new_faces, state.num_faces),
            rewards=jnp.where(hit, hit_reward, stick_reward).reshape(1).astype(jnp.float32),
            terminated=jnp.where(hit, hit_done, True),
            # Stick is always legal, hit while the hand has < 5 cards (a live hand always has);
            # terminal masks are made all True by the core contract.
            legal_action_mask=legal_mask(jnp.where(hit, new_cards, state.num_cards)),
        )

    def _observe(self, state: State, player_id: Array) -> Array:
        return jnp.stack([state.player_sum, state.num_cards, state.num_faces]).astype(jnp.int32)
