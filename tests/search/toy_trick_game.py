"""A tiny Hearts-like trick game as a ``core.Env``, for testing max^n and PIMC (not registered).

Rules as implemented:

* 3 players, a deck of 12 cards: 4 suits x 3 ranks, card id ``suit * 3 + rank`` (rank 2 is
  high). Each player is dealt 4 cards uniformly at random (``init``'s key); the game is 4
  tricks, 12 moves. Action = the card id played (12 actions).
* Seat 0 leads the first trick with any card. Players follow in seat order (leader, leader+1,
  ...); a player holding a card of the led suit must play one, otherwise any card (and is then
  known to be void in the led suit: public, kept in ``void``). The highest card of the led
  suit wins the trick; its winner leads the next one.
* Points: each card of suit 0 ("hearts") is worth 1, card 10 (suit 3, rank 1: the "queen")
  3; 6 points in all. When a trick completes, its winner's reward is minus the points in it
  (every other reward 0). No passing, no moon shooting.

What a player sees (``observe``): its own hand, who played every card already played, the
cards on the table, the leader, the points taken so far and the public voids. ``sample_world``
redeals the cards that player has not seen between the two others, uniformly among the deals
that match the hand sizes and the voids (exact for three players: with two opponents every
card of a suit one of them is void in goes to the other, the rest are split at random).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core, rng

NUM_PLAYERS = 3
NUM_SUITS = 4
NUM_RANKS = 3
NUM_CARDS = NUM_SUITS * NUM_RANKS
HAND = NUM_CARDS // NUM_PLAYERS
HEARTS = 0
QUEEN = 3 * NUM_RANKS + 1
SUIT = np.arange(NUM_CARDS, dtype=np.int32) // NUM_RANKS
RANK = np.arange(NUM_CARDS, dtype=np.int32) % NUM_RANKS
POINTS = np.where(SUIT == HEARTS, 1, 0) + np.where(np.arange(NUM_CARDS) == QUEEN, 3, 0)
NO_CARD = -1


@struct.dataclass
class TrickObs:
    hand: jnp.ndarray       # bool [12]  the observer's cards still held
    played_by: jnp.ndarray  # int8 [12]  seat that played each card, -1 not yet played
    table: jnp.ndarray      # int8 [3]   card each seat put on the current trick, -1 none
    leader: jnp.ndarray     # int8 []    seat that led the current trick
    points: jnp.ndarray     # int8 [3]   points taken so far per seat
    void: jnp.ndarray       # bool [3, 4]  seat known to hold no card of the suit


@struct.dataclass
class TrickState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: TrickObs           # what current_player sees
    rewards: jnp.ndarray            # float32 [3]  minus the points of a trick, to its winner
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []  always False
    legal_action_mask: jnp.ndarray  # bool [12]
    step_count: jnp.ndarray         # int32 []
    holder: jnp.ndarray             # int8 [12]  seat dealt each card (kept after it is played)
    played: jnp.ndarray             # bool [12]
    table: jnp.ndarray              # int8 [3]   card of each seat on the current trick, -1 none
    leader: jnp.ndarray             # int32 []
    points: jnp.ndarray             # int8 [3]
    void: jnp.ndarray               # bool [3, 4]


class TrickGame(core.Env):
    id = "toy_trick"
    num_players = NUM_PLAYERS
    num_actions = NUM_CARDS
    stochastic = False
    perfect_information = False

    def _init(self, key):
        holder = jnp.asarray(np.repeat(np.arange(NUM_PLAYERS), HAND), jnp.int8)[
            jax.random.permutation(key, NUM_CARDS)]
        return self.from_holder(holder)

    def from_holder(self, holder, *, played=None, table=None, leader=0,
                    current_player=None, points=None, void=None) -> TrickState:
        """A state built by hand: ``holder`` int [12] the seat dealt each card, the rest as in
        the state's fields (defaults: the start of the game). Host-side helper for tests."""
        played = np.zeros(NUM_CARDS, bool) if played is None else np.asarray(played, bool)
        table = np.full(NUM_PLAYERS, NO_CARD) if table is None else np.asarray(table)
        if current_player is None:
            current_player = (leader + int((table >= 0).sum())) % NUM_PLAYERS
        state = TrickState(
            current_player=jnp.int32(current_player),
            observation=None,
            rewards=jnp.zeros(NUM_PLAYERS, jnp.float32),
            terminated=jnp.bool_(played.all()),
            truncated=jnp.bool_(False),
            legal_action_mask=jnp.zeros(NUM_CARDS, bool),
            step_count=jnp.int32(played.sum()),
            holder=jnp.asarray(holder, jnp.int8),
            played=jnp.asarray(played),
            table=jnp.asarray(table, jnp.int8),
            leader=jnp.int32(leader),
            points=jnp.zeros(NUM_PLAYERS, jnp.int8) if points is None else jnp.asarray(points, jnp.int8),
            void=jnp.zeros((NUM_PLAYERS, NUM_SUITS), bool) if void is None else jnp.asarray(void, bool),
        )
        state = state.replace(legal_action_mask=_legal(state) | state.terminated)
        return state.replace(observation=self._observe(state, state.current_player))

    def _step(self, state, action, key):
        del key
        suit, rank, points = jnp.asarray(SUIT), jnp.asarray(RANK), jnp.asarray(POINTS)
        seats, cards = jnp.arange(NUM_PLAYERS), jnp.arange(NUM_CARDS)
        mover = state.current_player
        # one-hot selects instead of gathers and scatters: they fuse, and compile fast under
        # the search's nested vmaps
        card_suit = (suit * (cards == action)).sum()
        led = (state.table * (seats == state.leader)).sum()
        led_suit = jnp.where(led < 0, card_suit, (suit * (cards == led)).sum())
        void = state.void | ((seats == mover)[:, None] & (jnp.arange(NUM_SUITS) == led_suit)[None, :]
                             & (card_suit != led_suit))
        table = jnp.where(seats == mover, action.astype(jnp.int8), state.table)
        played = state.played | (cards == action)
        complete = (table >= 0).all()
        # winner: highest rank among the table's cards of the led suit
        on_table = (table[:, None] == cards[None, :])                          # [3, 12]
        strength = jnp.where(on_table & (suit == led_suit)[None, :], rank[None, :], -1).max(1)
        winner = jnp.argmax(strength).astype(jnp.int32)
        trick_points = (on_table * points[None, :]).sum().astype(jnp.int8)
        takes = complete & (seats == winner)
        new = state.replace(
            current_player=jnp.where(complete, winner, (mover + 1) % NUM_PLAYERS).astype(jnp.int32),
            rewards=jnp.where(takes, -trick_points.astype(jnp.float32), 0.0),
            terminated=played.all(),
            played=played,
            table=jnp.where(complete, jnp.int8(NO_CARD), table),
            leader=jnp.where(complete, winner, state.leader).astype(jnp.int32),
            points=state.points + jnp.where(takes, trick_points, jnp.int8(0)),
            void=void,
        )
        return new.replace(legal_action_mask=_legal(new))

    def _observe(self, state, player_id):
        return TrickObs(
            hand=(state.holder == player_id) & ~state.played,
            played_by=jnp.where(state.played, state.holder, jnp.int8(NO_CARD)).astype(jnp.int8),
            table=state.table,
            leader=state.leader.astype(jnp.int8),
            points=state.points,
            void=state.void,
        )

    def sample_world(self, state, player_id, key):
        """The unseen cards redealt to the two other seats, uniformly among consistent deals."""
        player_id = jnp.asarray(player_id, jnp.int32)
        a, b = (player_id + 1) % NUM_PLAYERS, (player_id + 2) % NUM_PLAYERS
        suit = jnp.asarray(SUIT)
        unseen = (state.holder != player_id) & ~state.played
        count_a = ((state.holder == a) & ~state.played).sum()
        to_a = unseen & state.void[b, suit]            # b cannot hold them
        to_b = unseen & state.void[a, suit]
        free = unseen & ~to_a & ~to_b
        # a random ranking of the free cards; a takes the first (count_a - forced) of them
        words = rng.random_words(key, NUM_CARDS)
        ids = jnp.arange(NUM_CARDS)
        # j ranks before i: a smaller word, or an equal one and a smaller id
        before = (words[None, :] < words[:, None]) | (
            (words[None, :] == words[:, None]) & (ids[None, :] < ids[:, None]))
        order = (before & free[None, :]).sum(1)        # free cards ranked ahead of each card
        gets_a = to_a | (free & (order < count_a - to_a.sum()))
        holder = jnp.where(unseen, jnp.where(gets_a, a, b), state.holder).astype(jnp.int8)
        world = state.replace(holder=holder)
        world = world.replace(legal_action_mask=jnp.where(world.terminated, True, _legal(world)))
        return world.replace(observation=self._observe(world, world.current_player))


def _legal(state) -> jnp.ndarray:
    suit = jnp.asarray(SUIT)
    hand = (state.holder == state.current_player) & ~state.played
    led = (state.table * (jnp.arange(NUM_PLAYERS) == state.leader)).sum()
    led_suit = (suit * (jnp.arange(NUM_CARDS) == led)).sum()
    follow = hand & (suit == led_suit)
    return jnp.where((led >= 0) & follow.any(), follow, hand)


# -- search helpers shared by the max^n and PIMC tests -------------------------------------------

#: dyadic weight of still holding each card: point cards are bad to keep, high cards too
CARD_WEIGHT = (-0.5 * POINTS - 0.125 * RANK).astype(np.float32)


def card_value(params, state) -> jnp.ndarray:
    """A leaf evaluation, float32 [3]: ``params`` (a float32 scale) times each seat's summed
    CARD_WEIGHT of the cards it still holds. Reads hidden cards; every value is exact in float32."""
    held = (state.holder[None, :] == jnp.arange(NUM_PLAYERS)[:, None]) & ~state.played[None, :]
    return params * (held * jnp.asarray(CARD_WEIGHT)).sum(1)


def trick_done(state) -> jnp.ndarray:
    """bool []: no card on the table (a trick has just completed)."""
    return (state.table < 0).all()


@functools.lru_cache(maxsize=None)
def _jitted(fn):
    return jax.jit(fn)


def reference_maxn(env, state, *, depth, max_branching, value_fn=None, stop=None, params=None):
    """max^n by plain recursion over ``env.step``: (action_values float64 [A, P], NaN where not
    searched; overflow: some expanded node had more than ``max_branching`` legal moves).

    Independent of jaxgames.search.maxn: Python recursion, one step at a time; the legal ids
    in ascending order, the first ``max_branching`` kept; the mover keeps the first child
    strictly better for it (ties: the lowest id); finished games are worth 0 below, stopped
    nodes (never the root) and depth-0 nodes ``value_fn(params, node)``.
    """
    step = _jitted(env.step)
    overflow = [False]

    def leaf(s):
        if value_fn is None:
            return np.zeros(env.num_players)
        return np.asarray(_jitted(value_fn)(params, s), np.float64)

    def children(s):
        legal = np.flatnonzero(np.asarray(s.legal_action_mask))
        overflow[0] |= len(legal) > max_branching
        for a in legal[:max_branching]:
            yield a, step(s, jnp.int32(a))

    def node(s, d):
        if bool(s.terminated | s.truncated):
            return np.zeros(env.num_players)
        if d == 0 or (stop is not None and bool(_jitted(stop)(s))):
            return leaf(s)
        mover, best = int(s.current_player), None
        for _, c in children(s):
            v = np.asarray(c.rewards, np.float64) + node(c, d - 1)
            if best is None or v[mover] > best[mover]:
                best = v
        return best

    q = np.full((env.num_actions, env.num_players), np.nan)
    if not bool(state.terminated | state.truncated):
        for a, c in children(state):
            q[a] = np.asarray(c.rewards, np.float64) + node(c, depth - 1)
    return q, overflow[0]
