"""max^n over the current Hearts trick with any leaf value, evaluating only the legal leaves.

The search of the Hearts source's learned player (Sturtevant & White): max^n from the player to
move to the end of the current trick (1 to 4 plies), ``value_fn(params, state) -> float32 [4]``
(higher is better, on the rewards' scale) at the leaves, called on the legal leaves only. A
leaf's vector is the trick's rewards plus ``value_fn`` (0 where the game is over); each player
takes the card of highest own component, the lowest card on ties (at the root
``ties="highest"`` takes the highest): maxn.py's values with ``depth=4, max_branching=13,
stop=trick over``, bit for bit. :func:`per_seat` builds the ``[4]`` vector from a one-seat
value; :class:`KeyedValue` computes a value once per distinct key. :func:`trick_search` (one
position; a ``jax.vmap`` folds into one search) returns :class:`TrickMaxnOutput`;
:func:`trick_search_values` is PIMC's ``search_fn``, :func:`trick_search_policy` an arena
policy. Each position keeps at most ``max_leaves`` (static, >= 13^3) leaves: the leader's cards
whose grids do not fit are not searched (no value, never chosen, ``overflow`` set). The search
reads every hand (as PIE).

How it works (values, the compact leaves, batches, keyed values, the cap, measurements):
docs/hearts_features.md#the-trick-search.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Policy, PRNGKey
from jaxgames.hearts.bots import pass_scores
from jaxgames.hearts.cards import NO_PASS, NUM_CARDS, NUM_PLAYERS, PASS_SIZE
from jaxgames.hearts.game import Hearts, State
from jaxgames.search.batching import fold_vmap
from jaxgames.search.pimc import best_of, check_ties

Array = jax.Array
#: ``value_fn(params, state) -> float32 [4]``: each seat's value of a leaf, higher is better
ValueFn = Callable[[Any, State], Array]

__all__ = ["DEFAULT_CHUNK", "DEFAULT_MAX_LEAVES", "KeyedValue", "MAX_MAX_LEAVES", "MIN_MAX_LEAVES", "TrickMaxnOutput", "per_seat",
           "trick_search", "trick_search_policy", "trick_search_values"]

_SLOTS = 13                                   # most cards a hand holds
_IDS = np.arange(NUM_CARDS, dtype=np.int32)
#: smallest ``max_leaves``: one leader's card's grid at most (so one card is always searched)
MIN_MAX_LEAVES = _SLOTS ** 3
#: the most leaves a trick can have: above it ``max_leaves`` changes nothing
MAX_MAX_LEAVES = _SLOTS ** 4
DEFAULT_MAX_LEAVES = 4096
#: leaves evaluated per iteration of the batch's loop: a batch's last chunk is evaluated whole,
#: so small chunks waste less where leaves are few (the 2nd to 4th card); on the 2-core CPU 64
#: and 128 were best at a lead too (bench/hearts_trick_search.py, docs/lab/hearts.md)
DEFAULT_CHUNK = 64
_NODES3 = _SLOTS ** 3                         # nodes two cards above the leaves, at most
_NODES2 = _SLOTS ** 2                         # nodes three cards above the leaves, at most
_NUM_PASSES = NUM_PLAYERS * PASS_SIZE


@chex.dataclass(frozen=True)
class TrickMaxnOutput:
    """What :func:`trick_search` returns for one position (leading axes when vmapped)."""

    action: Array         # int32 []        searched card of highest own value (ties: the lowest id, or the highest with ties="highest"); 0 when none
    action_values: Array  # float32 [52, 4] value vector (seats 0..3) of each searched card; NaN elsewhere
    own_values: Array     # float32 [52]    the mover's component; -inf where not searched
    value: Array          # float32 [4]     action_values[action] (0 when nothing is searched)
    num_leaves: Array     # int32 []        leaves evaluated (value_fn's calls, finished leaves included)
    overflow: Array       # bool []         some legal card was not searched: its grid passed max_leaves


@chex.dataclass(frozen=True)
class _Plan:
    """The shape of one position's trick tree (docs/hearts_features.md#the-trick-search), the
    leader's cards sorted by grid size. ``r`` below indexes that order; place i is the trick's
    (i+1)-th card."""

    k: Array          # int32 []        cards of the trick on the table (the mover's place)
    seat_of: Array    # int32 [4]       seat of each place
    cards: Array      # int32 [4, 4, 13] legal cards of each place (ascending) for each suit led;
                      #                 a card on the table: its one card; place 0: suit 0's row
    first: Array      # int32 [13]      leader's card of each r
    suit: Array       # int32 [13]      its suit
    g: Array          # int32 [13, 3]   legal cards of places 1, 2, 3 under r's suit (>= 1 where r fits)
    fits: Array       # bool [13]       r's grid is searched (a prefix of r)
    off4: Array       # int32 [13]      r's first leaf
    off3: Array       # int32 [13]      r's first node of three cards
    off2: Array       # int32 [13]      r's first node of two cards
    num_leaves: Array  # int32 []
    overflow: Array   # bool []


@dataclasses.dataclass(frozen=True)
class KeyedValue:
    """A one-seat leaf value whose costly part reads only a small boolean *key* of the state,
    so that the search computes it once per distinct key among a chunk's leaves and seats.

    ``value(params, state, seat) = finish(params, state, seat, costly(params, key(state, seat)))``:
    ``key(state, seat) -> bool [K]``, ``costly(params, key) -> float32 []`` (the dear part: a
    learned sum over the key's features), ``finish(params, state, seat, c) -> float32 []`` (the
    cheap rest). The leaves of one position share few keys (the Hearts learner's atoms: about
    13 times fewer distinct atom vectors than leaves at a lead, docs/lab/hearts.md), so the
    search's cost follows the distinct keys, not the leaves. Called as a ``value_fn`` (every
    seat, ``float32 [4]``) it computes the same numbers without sharing. Hashable (frozen): the
    search is compiled once per object."""

    key: Callable[[State, Array], Array]
    costly: Callable[[Any, Array], Array]
    finish: Callable[[Any, State, Array, Array], Array]
    block: int = 32        # distinct keys valued per iteration of the loop over them

    def seat_value(self, params, state, seat):
        return self.finish(params, state, seat, self.costly(params, self.key(state, seat)))

    def __call__(self, params, state):
        return per_seat(self.seat_value)(params, state)


def _pack(keys: Array) -> Array:
    """uint32 [n, ceil(K / 32)]: the bits of ``keys`` bool [n, K], 32 to a word."""
    n, k = keys.shape
    words = -(-k // 32)
    bits = jnp.pad(keys, ((0, 0), (0, words * 32 - k))).reshape(n, words, 32).astype(jnp.uint32)
    return (bits << jnp.arange(32, dtype=jnp.uint32)).sum(-1, dtype=jnp.uint32)


def _keyed_values(value: KeyedValue, params: Any, leaves: State) -> Array:
    """float32 [n, 4]: ``value`` of every seat of ``n`` leaves, ``costly`` once per distinct key
    (sorted, the first of each run of equal keys valued, ``block`` at a time while any are left)."""
    n = leaves.terminated.shape[0]
    seats = jnp.arange(NUM_PLAYERS, dtype=jnp.int32)
    keys = jax.vmap(lambda s: jax.vmap(lambda p: value.key(s, p))(seats))(leaves)        # [n, 4, K]
    flat = keys.reshape(n * NUM_PLAYERS, -1)
    m = flat.shape[0]
    words = _pack(flat)
    order = jax.lax.sort((*(words[:, w] for w in range(words.shape[1])), jnp.arange(m, dtype=jnp.int32)),
                         num_keys=words.shape[1])[-1]
    sorted_words = words[order]
    new = jnp.concatenate([jnp.ones(1, bool), jnp.any(sorted_words[1:] != sorted_words[:-1], axis=-1)])
    uid = jnp.cumsum(new, dtype=jnp.int32) - 1                                          # [m] in sorted order
    count = uid[-1] + 1
    first = jnp.zeros(m, jnp.int32).at[jnp.where(new, uid, m)].set(order, mode="drop")  # a key's first entry
    block = value.block

    def body(carry):
        i, out = carry
        u = i * block + jnp.arange(block, dtype=jnp.int32)
        v = jax.vmap(lambda key: jnp.asarray(value.costly(params, key), jnp.float32))(flat[first[jnp.minimum(u, m - 1)]])
        return i + 1, out.at[jnp.where(u < count, u, m)].set(v, mode="drop")

    _, costly = jax.lax.while_loop(lambda c: c[0] * block < count, body, (jnp.int32(0), jnp.zeros(m, jnp.float32)))
    per_entry = jnp.zeros(m, jnp.float32).at[order].set(costly[uid]).reshape(n, NUM_PLAYERS)
    return jax.vmap(lambda s, c: jax.vmap(lambda p, cp: jnp.asarray(value.finish(params, s, p, cp), jnp.float32))(
        seats, c))(leaves, per_entry)


def per_seat(seat_value: Callable[[Any, State, Array], Array]) -> ValueFn:
    """``value_fn(params, state) -> float32 [4]`` from ``seat_value(params, state, seat) ->
    float32 []`` (one seat's value, ``seat`` int32 []): the same function for every seat, as
    the source's learned value stands for the opponents."""

    def value_fn(params, state):
        seats = jnp.arange(NUM_PLAYERS, dtype=jnp.int32)
        return jax.vmap(lambda s: jnp.asarray(seat_value(params, state, s), jnp.float32))(seats)

    return value_fn


def trick_search(env: Hearts, value_fn: ValueFn, state: State, params: Any = None, *,
                 max_leaves: int = DEFAULT_MAX_LEAVES, chunk: int = DEFAULT_CHUNK,
                 ties: str = "lowest") -> TrickMaxnOutput:
    """max^n over the rest of the current trick of one position, ``value_fn(params, leaf)``
    at its end (module docstring).

    Args:
      env: a :class:`Hearts` env (any variant and options).
      value_fn: ``(params, state) -> float32 [4]``, each seat's value (higher is better, on the
        rewards' scale) of a state after a trick; not called on finished games (value 0).
      state: a play-phase state (one position; ``jax.vmap`` for a batch: one search). In the
        passing phase, or at a finished game, nothing is searched (action 0).
      params: passed to ``value_fn``; one for the whole batch, or vmapped with the states
        (then each value of the vmapped axis has a search of its own, in sequence).
      max_leaves: leaves kept per position (static), ``13^3 <= max_leaves``; see the module
        docstring for what happens past it.
      chunk: leaves evaluated per iteration of the batch's loop (static, >= 1).
      ties: the mover's card among equal own values: the ``"lowest"`` id (maxn.py's rule) or
        the ``"highest"`` (the learned player's: docs/hearts_training.md). The nodes below the
        root keep the lowest.

    Returns:
      :class:`TrickMaxnOutput`.
    """
    max_leaves, chunk = _check(env, max_leaves, chunk)
    search = _batched_search(env, value_fn, max_leaves, chunk, check_ties(ties))
    params = jax.tree_util.tree_map(jnp.asarray, params)
    out = search(jax.tree_util.tree_map(lambda x: x[None], state), params)
    return jax.tree_util.tree_map(lambda x: x[0], out)


@functools.lru_cache(maxsize=64)
def trick_search_values(env: Hearts, value_fn: ValueFn, *, max_leaves: int = DEFAULT_MAX_LEAVES,
                        chunk: int = DEFAULT_CHUNK) -> Callable[[Any, State], Array]:
    """``search(params, state) -> float32 [52]``: the mover's own value of each card (-inf
    where not searched): the ``search_fn`` that :mod:`jaxgames.search.pimc` averages over worlds."""
    _check(env, max_leaves, chunk)

    def search(params, state):
        return trick_search(env, value_fn, state, params, max_leaves=max_leaves, chunk=chunk).own_values

    return search


@functools.lru_cache(maxsize=64)
def trick_search_policy(env: Hearts, value_fn: ValueFn, *, max_leaves: int = DEFAULT_MAX_LEAVES,
                        chunk: int = DEFAULT_CHUNK, ties: str = "lowest") -> Policy:
    """An arena policy ``policy(params, state, key) -> action`` (int32 []): the trick search's
    card, ``params`` passed to ``value_fn`` (one compiled arena evaluates every checkpoint);
    while passing (the standard variant), the passing rule of the bots
    (:func:`jaxgames.hearts.bots.pass_scores`). Reads every hand (a perfect-information
    player, as PIE); the key is unused; ``ties`` as :func:`trick_search`'s. The same arguments
    give the same policy (one compile per arena)."""
    _check(env, max_leaves, chunk)
    check_ties(ties)

    def policy(params: Any, state: State, key: PRNGKey) -> Array:
        del key
        play = trick_search(env, value_fn, state, params, max_leaves=max_leaves, chunk=chunk, ties=ties).action
        hand = state.owner == state.current_player.astype(jnp.int8)
        pass_card = jnp.argmax(jnp.where(state.legal_action_mask, pass_scores(hand), -2))
        return jnp.where(_passing(state), pass_card, play).astype(jnp.int32)

    return policy


# -- helpers ----------------------------------------------------------------------------------------


def _check(env: Any, max_leaves: int, chunk: int) -> tuple[int, int]:
    if not isinstance(env, Hearts):
        raise ValueError(f"the trick search needs a Hearts env, got {type(env).__name__}")
    for name, v, low in (("max_leaves", max_leaves, MIN_MAX_LEAVES), ("chunk", chunk, 1)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"trick search {name} must be an integer >= {low}, got {v!r}")
    return min(int(max_leaves), MAX_MAX_LEAVES), int(chunk)


def _passing(state: State) -> Array:
    return (state.pass_dir != NO_PASS) & (state.num_passed < _NUM_PASSES)


def _compact(mask: Array) -> tuple[Array, Array]:
    """The True entries of ``mask`` bool [..., 52] in ascending order in 13 slots: (cards int32
    [..., 13], 0 in empty slots; count int32 [...])."""
    rank = jnp.cumsum(mask, axis=-1, dtype=jnp.int32) - 1
    hit = mask[..., None, :] & (rank[..., None, :] == jnp.arange(_SLOTS, dtype=jnp.int32)[:, None])
    return (hit * _IDS).sum(-1, dtype=jnp.int32), mask.sum(-1, dtype=jnp.int32)


def _at(x: Array, index: Array) -> Array:
    """``x[index]`` along the first axis of ``x`` [13, ...] as a masked sum (a select that
    fuses; index int32 [])."""
    hit = (jnp.arange(x.shape[0]) == index).reshape((-1,) + (1,) * (x.ndim - 1))
    return jnp.where(hit, x, 0).sum(0, dtype=x.dtype)


def _plan(env: Hearts, state: State, max_leaves: int) -> _Plan:
    """One position's :class:`_Plan`."""
    k = (state.num_played % NUM_PLAYERS).astype(jnp.int32)
    base = state.num_played.astype(jnp.int32) - k               # cards played before the trick
    leader = state.leader.astype(jnp.int32)
    places = jnp.arange(NUM_PLAYERS, dtype=jnp.int32)
    seat_of = (leader + places) % NUM_PLAYERS
    table = jnp.stack([_at(state.trick.astype(jnp.int32), seat_of[i]) for i in range(NUM_PLAYERS)])   # [4] -1 from k on
    live = ~(state.terminated | state.truncated) & ~_passing(state)
    mover = state.legal_action_mask & live                      # [52]

    def follower(i: int, suit: Array) -> Array:   # bool [52]: place i's legal cards, ``suit`` led
        trick = jnp.where(places == leader, suit, -1).astype(jnp.int8)    # card ``suit`` is of that suit
        return env.play_mask(state.owner, seat_of[i].astype(jnp.int8), trick, state.leader,
                             (base + i).astype(state.num_played.dtype), state.hearts_broken)

    suits = jnp.arange(4, dtype=jnp.int32)
    rows = []
    for i in range(NUM_PLAYERS):
        down = (_IDS == table[i])[None, :]                                         # [1, 52]
        later = jax.vmap(lambda s, i=i: follower(i, s))(suits) if i else down      # [4, 52]
        rows.append(jnp.where(i < k, down, jnp.where(i == k, mover[None, :], later)))
    rows = [jnp.broadcast_to(r, (4, NUM_CARDS)) for r in rows]
    cards, counts = _compact(jnp.stack(rows))                                      # [4, 4, 13], [4, 4]

    lead, leads = cards[0, 0], counts[0, 0]                                        # [13], []
    valid = jnp.arange(_SLOTS) < leads
    suit = lead & 3
    g = jnp.stack([(counts[i][None, :] * (suit[:, None] == suits)).sum(-1) for i in (1, 2, 3)], -1)   # [13, 3]
    size = g[:, 0] * g[:, 1] * g[:, 2]
    order = jnp.argsort(jnp.where(valid, size, MAX_MAX_LEAVES + 1), stable=True)
    lead, suit, g, size, valid = lead[order], suit[order], g[order], size[order], valid[order]
    ends = jnp.cumsum(jnp.where(valid, size, 0))
    fits = valid & (ends <= max_leaves)
    size = jnp.where(fits, size, 0)
    g = jnp.where(fits[:, None], g, 0)
    n3 = g[:, 0] * g[:, 1]
    return _Plan(k=k, seat_of=seat_of, cards=cards, first=lead, suit=suit, g=g, fits=fits,
                 off4=jnp.cumsum(size) - size, off3=jnp.cumsum(n3) - n3, off2=jnp.cumsum(g[:, 0]) - g[:, 0],
                 num_leaves=size.sum(), overflow=(valid & ~fits).any())


def _locate(offsets: Array, sizes: Array, index: Array) -> Array:
    """int32 [...]: the r whose run ``offsets[r] .. offsets[r] + sizes[r]`` (int32 [13], runs
    laid end to end) holds ``index`` (int32 [...])."""
    ends = offsets + sizes
    return ((ends <= index[..., None]) & (sizes > 0)).sum(-1, dtype=jnp.int32)


def _decode_leaf(plan: _Plan, e: Array) -> tuple[Array, Array]:
    """Leaf ``e`` (int32 []) of ``plan``: (its cards by place int32 [4], its node of three
    cards int32 [])."""
    g = plan.g
    r = _locate(plan.off4, g[:, 0] * g[:, 1] * g[:, 2], e)
    g1, g2, g3 = (jnp.maximum(_at(g[:, i], r), 1) for i in range(3))
    rem = e - _at(plan.off4, r)
    i3 = rem % g3
    t = rem // g3
    i2, i1 = t % g2, t // g2
    s = _at(plan.suit, r)
    row = lambda i, j: _at(_at(plan.cards[i], s), j)   # noqa: E731  place i's j-th card for suit s
    cards = jnp.stack([_at(plan.first, r), row(1, i1), row(2, i2), row(3, i3)])
    return cards, _at(plan.off3, r) + t


def _leaf(env: Hearts, state: State, plan: _Plan, e: Array) -> tuple[State, Array]:
    """Leaf ``e`` of ``plan``: (the state after the trick, played from ``state`` by
    ``env.step``; the rewards of each place's card float32 [4 places, 4], 0 for cards that were
    already on the table)."""
    cards, _ = _decode_leaf(plan, e)
    rewards = []
    for i in range(NUM_PLAYERS):   # places 0..k-1 are on the table: their steps are discarded
        stepped = env.step(state, cards[i])
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(i >= plan.k, a, b), stepped, state)
        rewards.append(jnp.where(i >= plan.k, stepped.rewards, 0.0))
    return state, jnp.stack(rewards)


def _leaf_values(value_fn: ValueFn, params: Any, leaves: State, rewards: Array, valid: Array) -> Array:
    """float32 [n, 4]: the vectors of ``n`` leaves (``rewards`` [n, 4 places, 4]): the rewards
    of the trick plus ``value_fn`` (0 at a finished game), summed as maxn.py sums them (a
    move's reward plus its child's value, deepest first)."""
    n = rewards.shape[0]

    def evaluate(leaves):
        if isinstance(value_fn, KeyedValue):
            return _keyed_values(value_fn, params, leaves)
        return jax.vmap(lambda s: jnp.asarray(value_fn(params, s), jnp.float32).reshape(NUM_PLAYERS))(leaves)

    # value_fn runs in a branch of its own: its computation cannot be fused with the steps that
    # made the leaves (XLA's CPU fusion would redo the steps for every element value_fn
    # gathers: 9x slower with a sparse linear value; an optimization_barrier is dropped on the CPU).
    value = jax.lax.cond(valid.any(), evaluate, lambda _: jnp.zeros((n, NUM_PLAYERS), jnp.float32), leaves)
    value = jnp.where((leaves.terminated | leaves.truncated)[:, None], 0.0, value)
    for i in reversed(range(NUM_PLAYERS)):   # rewards of places before k are 0: adding them is exact
        value = rewards[:, i] + value
    return value


def _pick(values: Array, seat: Array, parent: Array, valid: Array, num_parents: int) -> Array:
    """[num_parents, 4]: for each parent, the vector of its child (of ``values`` [n, 4], children
    of one parent contiguous and in ascending card order; ``parent`` int32 [n], ``valid`` bool
    [n]) with the largest ``seat`` component, the first on ties; zeros for a parent with none."""
    n = values.shape[0]
    own = jnp.where(valid, jnp.where(jnp.arange(NUM_PLAYERS) == seat, values, 0.0).sum(-1), -jnp.inf)
    parent = jnp.where(valid, parent, num_parents)              # dropped
    best = jax.ops.segment_max(own, parent, num_parents, indices_are_sorted=True)
    is_best = valid & (own == best[jnp.minimum(parent, num_parents - 1)])
    first = jax.ops.segment_min(jnp.where(is_best, jnp.arange(n), n), parent, num_parents,
                                indices_are_sorted=True)
    return jnp.where((first < n)[:, None], values[jnp.minimum(first, n - 1)], 0.0)


def _finish(plan: _Plan, leaves: Array, ties: str) -> TrickMaxnOutput:
    """One position's output from its leaves' vectors ``leaves`` [max_leaves, 4]: the backup,
    one segment argmax per place from the last, then the mover's cards back to card ids."""
    max_leaves = leaves.shape[0]
    nodes3 = min(max_leaves, _NODES3)
    g = plan.g
    e = jnp.arange(max_leaves, dtype=jnp.int32)
    _, parent4 = jax.vmap(lambda x: _decode_leaf(plan, x))(e)
    v3 = _pick(leaves, plan.seat_of[3], parent4, e < plan.num_leaves, nodes3)          # [nodes3, 4]

    q3 = jnp.arange(nodes3, dtype=jnp.int32)
    n3 = g[:, 0] * g[:, 1]
    r3 = _locate(plan.off3, n3, q3)
    at_r3 = lambda x: jax.vmap(lambda r: _at(x, r))(r3)  # noqa: E731
    parent3 = at_r3(plan.off2) + (q3 - at_r3(plan.off3)) // jnp.maximum(at_r3(g[:, 1]), 1)
    v2 = _pick(v3, plan.seat_of[2], parent3, q3 < n3.sum(), _NODES2)                   # [169, 4]

    q2 = jnp.arange(_NODES2, dtype=jnp.int32)
    parent2 = _locate(plan.off2, g[:, 0], q2)
    v1 = _pick(v2, plan.seat_of[1], parent2, q2 < g[:, 0].sum(), _SLOTS)                # [13, 4]

    # The mover's cards: at a lead the leader's cards (r order); else the cards of place k,
    # which are the first nodes of the level below it (every place before k is one card).
    k = plan.k
    slots = jnp.arange(_SLOTS)
    moves = [(v1, plan.first, plan.fits)] + [
        (v[:_SLOTS], _at(plan.cards[i], 0), (slots < _at(plan.g[:, i - 1], 0)) & plan.fits[0])
        for i, v in ((1, v2), (2, v3), (3, leaves))]
    pick = lambda j: functools.reduce(  # noqa: E731
        lambda acc, i: jnp.where(k == i, moves[i][j], acc), range(1, NUM_PLAYERS), moves[0][j])
    values, cards, searched = pick(0), pick(1), pick(2)                                # [13, 4], [13], [13]
    hit = (cards[:, None] == _IDS[None, :]) & searched[:, None]                        # [13, 52]
    legal = hit.any(0)
    action_values = jnp.where(legal[:, None], jnp.where(hit[:, :, None], values[:, None, :], 0.0).sum(0),
                              jnp.nan)
    mover = _at(plan.seat_of, k)
    own_values = jnp.where(legal, jnp.where(jnp.arange(NUM_PLAYERS) == mover, action_values, 0.0).sum(-1),
                           -jnp.inf)
    action = jnp.where(legal.any(), best_of(own_values, ties), 0).astype(jnp.int32)
    value = jnp.where(legal.any(), jnp.where((_IDS == action)[:, None], action_values, 0.0).sum(0), 0.0)
    return TrickMaxnOutput(action=action, action_values=action_values, own_values=own_values,
                           value=value.astype(jnp.float32), num_leaves=plan.num_leaves, overflow=plan.overflow)


@functools.lru_cache(maxsize=64)
def _batched_search(env: Hearts, value_fn: ValueFn, max_leaves: int, chunk: int, ties: str):
    """``(states [N], params) -> TrickMaxnOutput [N]`` whose vmap folds the new axis into N
    (params shared); with params vmapped too, one such search per params value in sequence."""

    def search(states: State, params: Any) -> TrickMaxnOutput:
        plans = jax.vmap(lambda s: _plan(env, s, max_leaves))(states)
        n = plans.num_leaves.shape[0]
        ends = jnp.cumsum(plans.num_leaves)                                        # [N]
        total = ends[-1]

        def body(carry):
            i, table = carry
            flat = i * chunk + jnp.arange(chunk, dtype=jnp.int32)                  # [chunk]
            b = jnp.minimum(jnp.searchsorted(ends, flat, side="right"), n - 1).astype(jnp.int32)
            e = flat - (ends[b] - plans.num_leaves[b])
            take = lambda tree: jax.tree_util.tree_map(lambda x: x[b], tree)  # noqa: E731
            leaves, rewards = jax.vmap(lambda s, p, x: _leaf(env, s, p, x))(take(states), take(plans), e)
            valid = flat < total
            values = _leaf_values(value_fn, params, leaves, rewards, valid)        # [chunk, 4]
            b = jnp.where(valid, b, n)                                             # past the end: dropped
            return i + 1, table.at[b, e].set(values, mode="drop")

        table = jnp.zeros((n, max_leaves, NUM_PLAYERS), jnp.float32)                # every leaf's vector
        _, table = jax.lax.while_loop(lambda c: c[0] * chunk < total, body, (jnp.int32(0), table))
        return jax.vmap(functools.partial(_finish, ties=ties))(plans, table)

    def per_params(axis_size, in_batched, states, params):
        # params differ along the new axis: one folded search per value, in sequence (a plain
        # vmap would batch the loop's predicate, and with it the cond that keeps value_fn apart
        # from the steps)
        states, params = (jax.tree_util.tree_map(
            lambda x, b: x if b else jnp.broadcast_to(x, (axis_size,) + x.shape), tree, batched)
            for tree, batched in zip((states, params), in_batched))
        return jax.lax.map(lambda sp: search(*sp), (states, params))

    return fold_vmap(search, shared=(1,), shared_batched=per_params)
