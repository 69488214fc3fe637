"""Hearts players: the source's two experts (PIE, IIE) and two baselines (rule-based, random).

Sturtevant & White's expert program, re-implemented from their paper's words:

* ``pie``    — :func:`pie_policy`: max^n over the current trick on the **real state**, the
  leaves scored by :func:`evaluation`. It sees every card, by design. ``honest=False``.
* ``iie``    — :func:`iie_policy`: PIMC (:mod:`jaxgames.search.pimc`) over ``num_worlds``
  (20) worlds dealt by ``Hearts.sample_world``, the same trick search in each. Honest.
* ``rule``   — :func:`rule_policy`: duck when possible, dump the Q♠ and high hearts when
  void, lead low. Honest (reads its seat's observation only).
* ``random`` — uniform over the legal cards. Honest.

:func:`make_bot` builds one by name. PIE, IIE and the rule-based player pass cards (the
standard variant) by :func:`pass_scores`. :func:`trick_search` is max^n over the trick on a
grid of card slots: exactly :func:`jaxgames.search.maxn.maxn_search` with ``depth=4``,
``max_branching=13``, ``value_fn=value_fn`` and ``stop=trick_over``, bit for bit
(``pie_policy(env, search="maxn")`` plays through ``maxn.py`` itself). :func:`evaluation`
``(state) -> float32 [4]``, ours (the source's is unpublished): minus each seat's expected
points still to come.

How they work (the players beside the source's, passing, the rule bot, the trick search, the
evaluation's formula, measurements): docs/hearts_eval.md.
"""

from __future__ import annotations

import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Policy, PRNGKey, random_policy
from jaxgames.hearts.cards import (
    HEARTS,
    NO_PASS,
    NUM_CARDS,
    NUM_PLAYERS,
    NUM_RANKS,
    PASS_SIZE,
    POINTS,
    QUEEN,
    QUEEN_OF_SPADES,
    RANK,
    SPADES,
    SUIT,
    TOTAL_POINTS,
    card,
)
from jaxgames.hearts.game import Hearts, State
from jaxgames.player import Player
from jaxgames.search.batching import fold_vmap
from jaxgames.search.maxn import maxn_policy
from jaxgames.search.pimc import pimc_policy

Array = jax.Array

__all__ = ["BOT_NAMES", "DEFAULT_WORLDS", "TrickSearch", "evaluation", "iie_policy", "make_bot",
           "pass_action", "pass_scores", "pie_policy", "rule_policy", "rule_scores", "trick_over", "trick_search",
           "value_fn"]

#: the names :func:`make_bot` knows
BOT_NAMES = ("pie", "iie", "rule", "random")
#: the source's number of Monte Carlo worlds
DEFAULT_WORLDS = 20

_SLOTS = 13                                  # most cards a hand holds
_IDS = np.arange(NUM_CARDS)
_RANK = RANK.astype(np.int32)
_SUIT = SUIT.astype(np.int32)
_HEART = _SUIT == HEARTS
_SPADE = _SUIT == SPADES
#: int32 [52] liability weight of each card: (rank + 1)^2, doubled for hearts
_WEIGHT = ((_RANK + 1) ** 2 * np.where(_HEART, 2, 1)).astype(np.int32)
_LOW_SPADE = _SPADE & (_RANK < QUEEN)
_ACE_KING_SPADES = (_IDS == card(11, SPADES)) | (_IDS == card(12, SPADES))
_POINTS = POINTS.astype(np.int32)
_NUM_PASSES = NUM_PLAYERS * PASS_SIZE


# -- the evaluation -------------------------------------------------------------------------------


def _hand_scores(hands: Array) -> tuple[Array, Array, Array, Array]:
    """Per hand (bool [..., 52]): (L int32 [...], R int32 [...], hearts held int32 [...], holds
    the Q♠ bool [...]); see the module docstring."""
    h = hands.astype(jnp.int32)
    count = h.sum(-1)
    suits = h.reshape(h.shape[:-1] + (NUM_RANKS, 4)).sum(-2)           # [..., 4] cards per suit
    voids = ((suits == 0) & (count > 0)[..., None]).sum(-1)
    liability = (16 + (h * _WEIGHT).sum(-1)) * 4 // (4 + voids)
    low = (h * _LOW_SPADE).sum(-1)
    queen = hands[..., QUEEN_OF_SPADES]
    high = (h * _ACE_KING_SPADES).sum(-1)
    risk = 4 + jnp.where(queen, 24 + 48 // (1 + low), high * (8 + 24 // (1 + low)))
    return liability, risk, (h * _HEART).sum(-1), queen


def _expected_points(hearts_left: Array, queen_live: Array, liability: Array, risk: Array) -> Array:
    """float32 [..., 4]: each seat's expected points to come from the hands' scores
    (``liability``, ``risk`` int32 [..., 4]), the hearts left int [...] and whether the Q♠ is
    unplayed bool [...]. The one formula both searches use (so their floats agree)."""
    lf = liability.astype(jnp.float32)
    rf = risk.astype(jnp.float32)
    hearts = hearts_left.astype(jnp.float32)[..., None] * lf / liability.sum(-1, keepdims=True).astype(jnp.float32)
    queen = jnp.where(queen_live[..., None], jnp.float32(13.0) * rf / risk.sum(-1, keepdims=True).astype(jnp.float32),
                      jnp.float32(0.0))
    return hearts + queen


def evaluation(state: State) -> Array:
    """float32 [4]: each seat's value of ``state`` (minus its expected points still to come,
    module docstring), from all four hands: a perfect-information evaluation. 0 at the start
    of a hand (a search leaf there is the next hand of a ``target_score`` game, the same for
    every move)."""
    seats = jnp.arange(NUM_PLAYERS, dtype=jnp.int8)
    hands = state.owner[None, :] == seats[:, None]                       # [4, 52]
    liability, risk, hearts, queen = _hand_scores(hands)
    expected = _expected_points(hearts.sum(), queen.any(), liability, risk)
    return jnp.where(state.num_played == 0, jnp.float32(0.0), -expected)


def value_fn(params: Any, state: State) -> Array:
    """:func:`evaluation` as a max^n ``value_fn(params, state)`` (``params`` unused)."""
    del params
    return evaluation(state)


def trick_over(state: State) -> Array:
    """bool []: no card of a trick on the table (a trick just ended): the search's leaves."""
    return state.num_played % NUM_PLAYERS == 0


# -- the trick search -----------------------------------------------------------------------------


@chex.dataclass(frozen=True)
class TrickSearch:
    """max^n over the rest of the current trick (:func:`trick_search`), one position."""

    action: Array         # int32 []        the mover's card of highest own value (ties: lowest id)
    action_values: Array  # float32 [52, 4] value vector (seats 0..3) of each legal card; NaN elsewhere
    own_values: Array     # float32 [52]    the mover's component; -inf where not legal



def trick_search(env: Hearts, state: State) -> TrickSearch:
    """max^n over the rest of the current trick on the full ``state`` (a play-phase state of
    ``env``), with :func:`evaluation` at the trick's end: what ``maxn_search(env, state,
    depth=4, max_branching=13, value_fn=value_fn, stop=trick_over)`` computes.

    Jittable, one position; ``jax.vmap`` it for a batch: the batch is searched as one (a
    ``custom_vmap`` rule, as ``maxn.py``'s), and when all its positions have the same number of
    cards on the table (the arena's games move in step; PIMC's worlds share the position)
    only that grid is built: 13^4 cells to lead, 13^3, 13^2, 13 after. In the passing phase
    the output means nothing.
    """
    _check_env(env)
    out = _batched_search(env)(jax.tree_util.tree_map(lambda x: x[None], state))
    return jax.tree_util.tree_map(lambda x: x[0], out)


def _check_env(env: Any) -> None:
    if not isinstance(env, Hearts):
        raise ValueError(f"Hearts players need a Hearts env, got {type(env).__name__}")


@functools.lru_cache(maxsize=None)
def _batched_search(env: Hearts):
    """``search(states [N]) -> TrickSearch [N]``, whose vmap folds the new axis into N."""

    def search(states):
        k = (states.num_played % NUM_PLAYERS).astype(jnp.int32)                   # [N]
        # a lead searches a 13^4 grid, a later place 13^3: each is built only when some
        # position of the batch needs it (a real cond: the batch is explicit here)
        lead = jax.lax.cond((k == 0).any(), lambda: jax.vmap(lambda s: _search(env, s, 0))(states),
                            lambda: _empty(k.shape[0]))
        follow = jax.lax.cond((k > 0).any(), lambda: jax.vmap(lambda s: _search(env, s, 1))(states),
                              lambda: _empty(k.shape[0]))
        out = jax.tree_util.tree_map(lambda a, b: jnp.where(_expand(k == 0, a), a, b), lead, follow)
        return out

    return fold_vmap(search)


def _expand(mask: Array, like: Array) -> Array:
    return mask.reshape(mask.shape + (1,) * (like.ndim - 1))


def _empty(n: int) -> TrickSearch:
    return TrickSearch(action=jnp.zeros(n, jnp.int32),
                       action_values=jnp.full((n, NUM_CARDS, NUM_PLAYERS), jnp.nan, jnp.float32),
                       own_values=jnp.full((n, NUM_CARDS), -jnp.inf, jnp.float32))


def _compact(mask: Array) -> tuple[Array, Array]:
    """The True entries of ``mask`` bool [..., 52] in ascending order, in 13 slots:
    (cards int32 [..., 13] (0 in empty slots), filled bool [..., 13])."""
    rank = jnp.cumsum(mask, axis=-1, dtype=jnp.int32) - 1
    hit = mask[..., None, :] & (rank[..., None, :] == jnp.arange(_SLOTS, dtype=jnp.int32)[:, None])
    return (hit * _IDS.astype(np.int32)).sum(-1, dtype=jnp.int32), hit.any(-1)


def _on(x: Array, axes: tuple[int, ...], ndim: int) -> Array:
    """``x`` (one size-13 dimension per entry of ``axes``, then any trailing ones) placed on
    those grid axes of an ``ndim``-axis grid (size 1 elsewhere)."""
    shape = [1] * ndim
    for a in axes:
        shape[a] = _SLOTS
    return x.reshape(tuple(shape) + x.shape[len(axes):])


def _search(env: Hearts, state: State, first: int) -> TrickSearch:
    """The trick search of one position whose trick has at least ``first`` (static: 0 or 1)
    cards on the table: 0 is a lead (k = 0 cards down), 1 any later place (k = 1, 2, 3).

    The grid has one axis per place in the trick from ``first`` on (``n = 4 - first``; grid
    axis j is the trick's (first + j)-th card) and one slot per card of that seat's hand in
    ascending card order; a card already on the table is its axis' only slot (slot 0). The
    mover's axis is ``k - first``. Vectors are kept in trick order (component i: the seat
    playing i-th) until the end.
    """
    n = NUM_PLAYERS - first
    leader = state.leader.astype(jnp.int32)
    k = (state.num_played % NUM_PLAYERS).astype(jnp.int32)      # cards of the trick on the table
    base = state.num_played.astype(jnp.int32) - k                # cards played before the trick
    order = jnp.arange(NUM_PLAYERS, dtype=jnp.int32)
    seat_of = (leader + order) % NUM_PLAYERS                     # [4] seat playing i-th
    hands = state.owner[None, :] == seat_of[:, None].astype(jnp.int8)              # [4, 52]
    table = state.trick[seat_of].astype(jnp.int32)                                 # [4], -1 from k on
    down = order < k
    choice = jnp.where(down[:, None], _IDS[None, :] == table[:, None], hands)      # [4, 52]
    cards, filled = _compact(choice[first:])                                       # [n, 13]

    # The slots each place may play: a card on the table, its slot 0; the mover, its legal
    # mask; a later seat, the rules (follow the led suit, the first trick's discards) for the
    # suit led: known once a card is down, else the suit of the mover's lead (one row a suit).
    def later(i, trick):
        mask = env.play_mask(state.owner, seat_of[i].astype(jnp.int8), trick, state.leader,
                             (base + i).astype(state.num_played.dtype), state.hearts_broken)
        return mask[cards[i - first]]

    def valid_on(j: int, ndim: int) -> Array:       # bool, broadcastable to an ndim-axis grid
        i = first + j
        mover = state.legal_action_mask[cards[j]]
        if first == 0 and j > 0:   # a lead: the later seats' slots depend on the led suit
            by_suit = jax.vmap(lambda s: later(i, jnp.full(NUM_PLAYERS, -1, jnp.int8).at[leader].set(
                s.astype(jnp.int8))))(jnp.arange(4))                               # [4 suits, 13]
            return _on(by_suit[cards[0] % 4] & filled[j], (0, j), ndim)            # [slot0, slot_j]
        rule = later(i, state.trick) if j > 0 else mover
        ok = jnp.where(i < k, jnp.arange(_SLOTS) == 0, jnp.where(i == k, mover, rule))
        return _on(ok & filled[j], (j,), ndim)

    # Every way to finish the trick: each card (on the table or on its axis), the taker, the points.
    played = [table[i] if i < first else _on(cards[i - first], (i - first,), n) for i in range(NUM_PLAYERS)]
    led = played[0] % 4
    best = played[0] // 4
    taker = jnp.zeros_like(best)
    for i in range(1, NUM_PLAYERS):
        strength = jnp.where(played[i] % 4 == led, played[i] // 4, -1)
        taker = jnp.where(strength > best, i, taker)
        best = jnp.maximum(best, strength)
    points = sum(jnp.asarray(_POINTS)[c] for c in played)
    grid_shape = (_SLOTS,) * n
    taker = jnp.broadcast_to(taker, grid_shape)
    points = jnp.broadcast_to(points, grid_shape)
    won = jnp.where(taker[..., None] == order, points[..., None], 0)               # [grid, 4]
    rewards = -won.astype(jnp.float32)
    last = base == NUM_CARDS - NUM_PLAYERS
    if env.moon:   # the hand's last trick: the moon, as the game pays it
        final = state.points[seat_of].astype(jnp.int32) + won
        shooter = final == TOTAL_POINTS
        shot = last & shooter.any(-1, keepdims=True)
        rewards = rewards + jnp.where(shot, jnp.where(shooter, TOTAL_POINTS, -TOTAL_POINTS), 0)

    # The hands after the trick: each seat's hand less its slot's card (a card on the table is
    # no longer in the hand: the hand stays as it is).
    fixed_scores = _hand_scores(hands[:first]) if first else None                  # each [first]
    after = hands[first:, None, :] & (_IDS[None, None, :] != cards[:, :, None])    # [n, 13, 52]
    free_scores = _hand_scores(after)                                              # each [n, 13]

    def per_seat(m):   # [grid, 4]: score m of each seat in trick order
        parts = [fixed_scores[m][i] for i in range(first)] + [_on(free_scores[m][j], (j,), n) for j in range(n)]
        return jnp.stack([jnp.broadcast_to(p, grid_shape) for p in parts], -1)

    liability, risk, hearts, queen = (per_seat(m) for m in range(4))
    expected = _expected_points(hearts.sum(-1), queen.any(-1), liability, risk)
    values = rewards + jnp.where(last, jnp.float32(0.0), -expected)                # [grid, 4]

    # Backup: the seat on the last axis keeps its best slot (ties: the lowest card), then the
    # one before, down to the mover's axis; the mover reads its slots with the axes before
    # it at their one card (slot 0).
    roots = [values[(0,) * (n - 1)]]                                               # mover on axis n-1
    for j in range(n - 1, 0, -1):
        own = jnp.where(valid_on(j, j + 1), values[..., first + j], -jnp.inf)
        pick = jnp.argmax(own, axis=j)
        chosen = jnp.expand_dims(pick, j) == _on(jnp.arange(_SLOTS), (j,), j + 1)
        values = jnp.where(chosen[..., None], values, 0.0).sum(j)
        roots.append(values[(0,) * (j - 1)])                                       # mover on axis j-1
    mover_axis = k - first
    pick = lambda xs: functools.reduce(  # noqa: E731  xs[mover_axis], xs listed from axis n-1 down
        lambda acc, jx: jnp.where(mover_axis == jx[0], jx[1], acc), enumerate(reversed(xs)), xs[-1])
    root = pick(roots)                                                             # [13, 4]
    mover_cards = pick([cards[j] for j in range(n - 1, -1, -1)])
    root_valid = state.legal_action_mask[mover_cards] & pick([filled[j] for j in range(n - 1, -1, -1)])
    hit = (mover_cards[:, None] == _IDS[None, :]) & root_valid[:, None]            # [13, 52]
    legal = hit.any(0)
    by_seat = root[:, (order - leader) % NUM_PLAYERS]                              # [13, 4] seats 0..3
    action_values = jnp.where(legal[:, None], jnp.where(hit[:, :, None], by_seat[:, None, :], 0.0).sum(0),
                              jnp.nan)
    own = jnp.where(order == k, root, 0.0).sum(-1)                                 # root[:, k], exactly
    own_values = jnp.where(legal, jnp.where(hit, own[:, None], 0.0).sum(0), -jnp.inf)
    finished = state.terminated | state.truncated
    return TrickSearch(action=jnp.where(finished, 0, jnp.argmax(own_values)).astype(jnp.int32),
                       action_values=action_values, own_values=own_values)


# -- the rules: passing and the rule-based player ---------------------------------------------------


def _passing(obs) -> Array:
    """bool []: the hand is in its passing phase (from the public fields of an observation)."""
    return (obs.pass_dir != NO_PASS) & (obs.num_passed < _NUM_PASSES)


def pass_scores(hand: Array) -> Array:
    """int32 [52]: how much the passing rule wants to pass each card of ``hand`` (bool [52]);
    the card of highest score is passed (one a step, three in all).

    The Q♠ first; then the A♠ and K♠ unless three low spades (below the queen) guard them;
    then hearts from the jack up, highest first; then the other cards, the shortest suits
    first (to make a void) and the highest card of a suit first. Cards not in ``hand``: -1.
    """
    h = hand.astype(jnp.int32)
    suit_count = h.reshape(NUM_RANKS, 4).sum(0)[_SUIT]                  # [52] cards held of its suit
    low_spades = (h * _LOW_SPADE).sum()
    score = 10 * (NUM_RANKS - suit_count) + _RANK
    score = jnp.where(_HEART & (_RANK >= 9), 1000 + _RANK, score)
    score = jnp.where(_ACE_KING_SPADES & (low_spades < 3), 1500 + _RANK, score)
    score = jnp.where(_IDS == QUEEN_OF_SPADES, 2000, score)
    return jnp.where(hand, score, -1)


def pass_action(hand: Array, legal: Array) -> Array:
    """int32 []: the card the passing rule passes from ``hand`` (bool [52]), among ``legal``."""
    return jnp.argmax(jnp.where(legal, pass_scores(hand), -2)).astype(jnp.int32)


def rule_scores(obs, legal: Array) -> Array:
    """int32 [52]: the rule-based player's preference for each card (it plays the legal card
    of highest score; ties: the lowest card), from its seat's observation ``obs`` only.

    * Leading: the lowest card; never a spade above the jack while the Q♠ is out (it could
      draw the queen onto its own trick), hearts last.
    * Following suit: duck — the highest card below the trick's best; when every card is
      above it, the highest (to take the trick with a high card) if it plays last, the lowest
      otherwise (a later seat may still go over it); never the Q♠ over a spade trick it would
      win while another spade will do.
    * Void in the led suit: the Q♠, then the A♠/K♠ while the queen is out, then the highest
      heart, then the highest card of its shortest suit.
    """
    hand = obs.hand
    h = hand.astype(jnp.int32)
    trick = obs.trick.astype(jnp.int32)
    on_table = trick >= 0
    k = on_table.sum()
    leader = jnp.maximum(obs.leader.astype(jnp.int32), 0)
    led_card = jnp.where(jnp.arange(NUM_PLAYERS) == leader, jnp.maximum(trick, 0), 0).sum()
    led = led_card % 4
    top = jnp.where(on_table & (trick % 4 == led), trick // 4, -1).max()          # best rank so far
    queen_out = (obs.played_by[QUEEN_OF_SPADES] < 0) & ~hand[QUEEN_OF_SPADES]    # someone else holds it
    queen_unplayed = obs.played_by[QUEEN_OF_SPADES] < 0
    suit_count = h.reshape(NUM_RANKS, 4).sum(0)[_SUIT]

    lead = 100 - 4 * _RANK - jnp.where(_HEART, 60, 0) \
        - jnp.where(_SPADE & (_RANK >= QUEEN) & queen_unplayed, 200, 0)
    follows = legal & (_SUIT == led)
    ducks = _RANK < top
    last = k == NUM_PLAYERS - 1
    over = jnp.where(last, _RANK, -_RANK)                                    # cannot duck
    over = jnp.where((_IDS == QUEEN_OF_SPADES), -100, over)                  # the queen over a spade trick
    follow = jnp.where(ducks, 1000 + _RANK, over)
    void = 4 * _RANK + (NUM_RANKS - suit_count)
    void = jnp.where(_HEART, 1000 + _RANK, void)
    void = jnp.where(_ACE_KING_SPADES & queen_out, 2000 + _RANK, void)
    void = jnp.where(_IDS == QUEEN_OF_SPADES, 3000, void)
    return jnp.where(k == 0, lead, jnp.where(follows.any(), follow, void)).astype(jnp.int32)


def _rule(env: Hearts):
    def policy(params: Any, state: State, key: PRNGKey) -> Array:
        del params, key
        obs = env.observe(state, state.current_player)
        legal = state.legal_action_mask
        play = jnp.argmax(jnp.where(legal, rule_scores(obs, legal), jnp.iinfo(jnp.int32).min))
        return jnp.where(_passing(obs), pass_action(obs.hand, legal), play).astype(jnp.int32)

    return policy


# -- the players ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def rule_policy(env: Hearts) -> Policy:
    """The rule-based player (:func:`rule_scores`, :func:`pass_scores`) as an arena policy.
    Honest: reads its seat's observation and the legal mask only. Deterministic."""
    _check_env(env)
    return _rule(env)


@functools.lru_cache(maxsize=None)
def pie_policy(env: Hearts, *, search: str = "trick") -> Policy:
    """The perfect-information expert: max^n over the current trick on the real state (every
    hidden card read: it cheats by design, as the source's PIE), :func:`evaluation` at the
    leaves; the passing rule while passing. ``search="trick"`` (default) uses
    :func:`trick_search`, ``"maxn"`` the same search through :mod:`jaxgames.search.maxn`
    (identical moves, many times slower). Deterministic."""
    _check_env(env)
    if search == "trick":
        def play(state):
            return trick_search(env, state).action
    elif search == "maxn":
        searcher = maxn_policy(env, depth=4, max_branching=_SLOTS, value_fn=value_fn, stop=trick_over)

        def play(state):
            return searcher(None, state, None)
    else:
        raise ValueError(f"search must be 'trick' or 'maxn', got {search!r}")

    def policy(params: Any, state: State, key: PRNGKey) -> Array:
        del params, key
        obs = env.observe(state, state.current_player)
        return jnp.where(_passing(obs), pass_action(obs.hand, state.legal_action_mask), play(state)).astype(jnp.int32)

    return policy


@functools.lru_cache(maxsize=None)
def iie_policy(env: Hearts, *, num_worlds: int = DEFAULT_WORLDS) -> Policy:
    """The imperfect-information expert: PIMC over ``num_worlds`` worlds dealt by
    ``env.sample_world`` from the mover's view, :func:`trick_search` in each, the card of best
    mean value (ties: the lowest); the passing rule while passing. Honest; the key deals the
    worlds."""
    _check_env(env)

    def search_fn(params: Any, world: State) -> Array:
        del params
        return trick_search(env, world).own_values

    pimc = pimc_policy(env, search_fn, num_worlds=num_worlds)

    def policy(params: Any, state: State, key: PRNGKey) -> Array:
        obs = env.observe(state, state.current_player)
        return jnp.where(_passing(obs), pass_action(obs.hand, state.legal_action_mask),
                         pimc(params, state, key)).astype(jnp.int32)

    return policy


def make_bot(env: Hearts, name: str, **options: Any) -> Player:
    """The player ``name`` (one of :data:`BOT_NAMES`) for ``env``, parameter-free; ``honest``
    False for ``pie`` alone (it reads the hidden cards by design). ``options``: ``search`` for
    ``pie``, ``num_worlds`` for ``iie``. The same arguments give an equal player (one compile
    per arena)."""
    _check_env(env)
    known = {"pie": ("search",), "iie": ("num_worlds",), "rule": (), "random": ()}
    if name not in known:
        raise ValueError(f"unknown Hearts bot {name!r}; choose from {', '.join(BOT_NAMES)}")
    unknown = sorted(set(options) - set(known[name]))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(unknown)} for the {name} bot; valid: "
                         f"{', '.join(known[name]) or '(none)'}")
    if name == "pie":
        return Player("pie", pie_policy(env, **options), honest=False)
    if name == "iie":
        worlds = options.get("num_worlds", DEFAULT_WORLDS)
        if isinstance(worlds, (bool, np.bool_)) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
            raise ValueError(f"num_worlds must be an integer >= 1, got {worlds!r}")
        return Player("iie", iie_policy(env, num_worlds=int(worlds)))
    if name == "rule":
        return Player("rule", rule_policy(env))
    return Player("random", random_policy)
