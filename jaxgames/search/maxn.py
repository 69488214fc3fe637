"""max^n search (Luckhardt & Irani 1986) on any multi-player env of the contract, batched and jitted.

The search of the Hearts source (Sturtevant & White): every player, at its own turn, picks the
move that maximises its own component of a value vector over all players. A path's value
(float32 ``[num_players]``) is the rewards collected along it plus the leaf's: 0 at a finished
game, else ``value_fn(params, leaf)`` (zeros without one); a node is a leaf when its game is
finished, ``stop(node)`` holds (never asked of the root) or the depth is spent. Ties go to the
lowest action id. ``max_branching`` B is static: only the first B legal moves (lowest ids) of a
node are searched, and ``overflow`` says when more were legal (B = 13 is exact for Hearts).
:func:`maxn_search` (one position; a ``jax.vmap`` folds into one batched search) returns
:class:`MaxnOutput`; :func:`maxn_action_values` is PIMC's ``search_fn``, :func:`maxn_policy` an
arena policy. The source's search is ``depth=4`` with a ``stop`` at a completed trick. It reads
every hidden card (the source's PIE); honest play searches sampled worlds:
:mod:`jaxgames.search.pimc`.

How it works (values, ties, branching, the level-by-level layout, the early exit, batching,
measurements): docs/search.md#maxn.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy, State
from jaxgames.search.batching import fold_axis, fold_vmap, split_axis

Array = jax.Array
#: ``value_fn(params, state) -> float32 [num_players]``: each player's value of a leaf
ValueFn = Callable[[Any, State], Array]
#: ``stop(state) -> bool []``: the node is a leaf whatever the depth left
StopFn = Callable[[State], Array]

#: largest tree (``max_branching ** depth`` leaves) accepted: beyond it a search takes minutes
#: and its frontier of ``max_branching ** (depth - 1)`` states outgrows memory
MAX_LEAVES = 1 << 22


@chex.dataclass(frozen=True)
class MaxnOutput:
    """What :func:`maxn_search` returns for one position (leading axes when vmapped).

    ``A = env.num_actions``, ``P = env.num_players``; "searched" = legal and among the first
    ``max_branching`` legal actions.
    """

    action: Array         # int32 []      the searched root action of highest own value (ties: lowest id);
                          #               0 at a finished root
    action_values: Array  # float32 [A, P]  value vector of each root action; NaN where not searched
    own_values: Array     # float32 [A]   the mover's component of action_values; -inf where not searched
    value: Array          # float32 [P]   value of the root: action_values[action] (0 at a finished root)
    overflow: Array       # bool []       some node had more than max_branching legal actions


def maxn_search(env: Env, state: State, params: Any = None, *, depth: int, max_branching: int,
                value_fn: ValueFn | None = None, stop: StopFn | None = None) -> MaxnOutput:
    """max^n values of every root action of one position, ``depth`` plies deep.

    Args:
      env: any env of the contract, any number of players (a stochastic env's ``step`` is
        called with a fixed key: the search sees one sample of its chance).
      state: the position (one game; ``jax.vmap`` this function for a batch: the vmap folds
        into one batched search, see the module docstring).
      params: passed to ``value_fn`` (a learned evaluation's weights); a pytree of arrays.
      depth: plies searched, >= 1 (static).
      max_branching: children per node, >= 1 (static); more legal moves are cut, see the
        module docstring.
      value_fn: ``(params, state) -> float32 [num_players]`` at leaves that are not finished
        games; ``None``: zeros (rewards only).
      stop: ``state -> bool []``: nodes where it holds are leaves (the root is always searched).

    Returns:
      :class:`MaxnOutput`.
    """
    depth, branching = _check(env, depth, max_branching)
    search = _batched_search(env, depth, branching, value_fn, stop, False)
    params = jax.tree_util.tree_map(jnp.asarray, params)
    out = search(jax.tree_util.tree_map(lambda x: x[None], state), params)
    return jax.tree_util.tree_map(lambda x: x[0], out)


def maxn_action_values(env: Env, *, depth: int, max_branching: int, value_fn: ValueFn | None = None,
                       stop: StopFn | None = None) -> Callable[[Any, State], Array]:
    """``search(params, state) -> float32 [num_actions]``: the mover's own max^n value of each
    root action (-inf where not searched). The ``search_fn`` that PIMC averages over worlds."""
    _check(env, depth, max_branching)

    def search(params, state):
        return maxn_search(env, state, params, depth=depth, max_branching=max_branching,
                           value_fn=value_fn, stop=stop).own_values

    return search


def maxn_policy(env: Env, *, depth: int, max_branching: int, value_fn: ValueFn | None = None,
                stop: StopFn | None = None) -> Policy:
    """An arena policy ``policy(params, state, key) -> action`` (int32 []) that plays the max^n
    move; ``params`` go to ``value_fn``, the key is unused (the search is deterministic). On an
    imperfect-information game it reads the hidden cards (the source's PIE)."""
    _check(env, depth, max_branching)

    def policy(params, state, key):
        del key
        return maxn_search(env, state, params, depth=depth, max_branching=max_branching,
                           value_fn=value_fn, stop=stop).action

    return policy


# -- helpers ----------------------------------------------------------------------------------


def _check(env: Env, depth: int, max_branching: int) -> tuple[int, int]:
    for name, v in (("depth", depth), ("max_branching", max_branching)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"max^n {name} must be an integer >= 1, got {v!r}")
    if max_branching > env.num_actions:
        raise ValueError(f"max_branching {max_branching} exceeds {env.id}'s {env.num_actions} actions")
    if max_branching ** depth > MAX_LEAVES:
        raise ValueError(f"max^n tree of {max_branching}^{depth} leaves is too large "
                         f"(at most {MAX_LEAVES}): lower depth or max_branching")
    return int(depth), int(max_branching)


def _live_mask(state: State) -> Array:
    """bool [A]: moves to search (none at a finished game, whose contract mask is all True)."""
    return state.legal_action_mask & ~(state.terminated | state.truncated)


def _compact(mask: Array, branching: int) -> tuple[Array, Array, Array]:
    """The first ``branching`` True entries of ``mask`` [A] in ascending order.

    Returns (actions int32 [B] (0 in empty slots), searched bool [B], overflow bool []: more
    than B were True). Slot b holds the action whose rank among the True entries is b: a
    [B, A] compare and a sum (no sort, no scatter).
    """
    rank = jnp.cumsum(mask, dtype=jnp.int32) - 1   # [A] (a triangular compare-and-sum: 12x slower)
    hit = mask[None, :] & (rank[None, :] == jnp.arange(branching, dtype=jnp.int32)[:, None])  # [B, A]
    actions = (hit * jnp.arange(mask.shape[0], dtype=jnp.int32)[None, :]).sum(1, dtype=jnp.int32)
    return actions, hit.any(1), rank[-1] >= branching


def _component(q: Array, player: Array) -> Array:
    """``q[:, player]`` as a masked sum: an elementwise select that fuses, where a gather per
    node is an operation of its own."""
    return jnp.where(jnp.arange(q.shape[-1]) == player, q, 0.0).sum(-1)


def _row(q: Array, index: Array) -> Array:
    """``q[index]`` as a masked sum (see :func:`_component`)."""
    return jnp.where((jnp.arange(q.shape[0]) == index)[:, None], q, 0.0).sum(0)


# -- the tree ---------------------------------------------------------------------------------


@chex.dataclass(frozen=True)
class _Level:
    """Every node of one level of one tree in heap order (node j's children are j*B .. j*B+B-1
    of the level below); n = B^k at level k."""

    rewards: Array     # float32 [n, P]  rewards of the move into the node
    player: Array      # int32 [n]       the node's player to move
    done: Array        # bool [n]        finished game
    stopped: Array     # bool [n]        stop(node) held
    leaf_value: Array  # float32 [n, P]  value_fn(node) (zeros where not needed)
    searched: Array    # bool [n]        the slot holds a searched move of the parent
    crowded: Array     # bool [n]        more than B moves are legal at the node


@functools.lru_cache(maxsize=128)
def _batched_search(env, depth, branching, value_fn, stop, params_batched):
    """``(states [N], params) -> MaxnOutput [N]`` (params with a leading [N] on every leaf when
    ``params_batched``), whose own vmap folds the new axis into N."""

    def search(states, params):
        return _search(env, states, params, params_batched, depth, branching, value_fn, stop)

    def per_position_params(axis_size, in_batched, states, params):
        # params differ along the new axis only: one copy per position of the folded batch
        states = fold_axis(states, in_batched[0], axis_size)
        n = jax.tree_util.tree_leaves(states)[0].shape[0] // axis_size
        params = jax.tree_util.tree_map(
            lambda x, b: jnp.repeat(x, n, axis=0) if b else jnp.broadcast_to(x, (axis_size * n,) + x.shape),
            params, in_batched[1])
        out = _batched_search(env, depth, branching, value_fn, stop, True)(states, params)
        return split_axis(out, axis_size)

    return fold_vmap(search, shared=() if params_batched else (1,), shared_batched=per_position_params)


def _search(env, states, params, params_batched, depth, b, value_fn, stop) -> MaxnOutput:
    """The search of a batch ``states`` [N] (docs/search.md#maxn): the loop, then the
    backup of each tree."""
    m = b ** max(depth - 2, 0)
    c = m * b
    recorded = max(depth - 1, 1)            # levels kept in the record: 1 .. recorded
    iterations = recorded + (b if depth >= 2 else 0)
    num_players = env.num_players
    p_axis = 0 if params_batched else None

    def expand(i, frontier, real, params):
        """One position's iteration i: its C children and their record, the new real flags."""
        start = jnp.where(i < recorded, 0, (i - recorded) * m)
        parents, parents_real = jax.tree_util.tree_map(
            lambda x: jax.lax.dynamic_slice_in_dim(x, start, m), (frontier, real))
        actions, searched, _ = jax.vmap(lambda s: _compact(_live_mask(s), b))(parents)     # [M, B]
        step = lambda s, a: env.step(s, a, jax.random.key(0))  # noqa: E731  (chance: one fixed sample)
        children = jax.vmap(jax.vmap(step, (None, 0)))(parents, actions)
        children = jax.tree_util.tree_map(lambda x: x.reshape((c,) + x.shape[2:]), children)
        zeros = jnp.zeros((c, num_players), jnp.float32)
        values = lambda s: jax.vmap(  # noqa: E731
            lambda x: jnp.asarray(value_fn(params, x), jnp.float32).reshape(num_players))(s)
        if value_fn is None:
            leaf_value = zeros
        elif stop is None and depth >= 2:   # only leaves need it: skipped on inner levels (i is not batched)
            leaf_value = jax.lax.cond(i >= recorded, values, lambda _: zeros, children)
        else:
            leaf_value = values(children)
        level = _Level(
            rewards=children.rewards,
            player=children.current_player,
            done=children.terminated | children.truncated,
            stopped=jax.vmap(stop)(children) if stop is not None else jnp.zeros(c, jnp.bool_),
            leaf_value=leaf_value,
            searched=searched.reshape(c),
            crowded=jax.vmap(_live_mask)(children).sum(-1) > b,
        )
        return children, level, (parents_real[:, None] & searched).reshape(c)

    def body(carry):
        i, frontier, real, _, record, best, has_child = carry
        children, level, children_real = jax.vmap(
            functools.partial(expand, i), in_axes=(0, 0, p_axis))(frontier, real, params)

        # Iterations before ``recorded`` make an inner level: recorded, and the next frontier.
        # Later ones make leaves, children of frontier nodes start .. start+M-1, of which only
        # each parent's best child is kept. Both updates are computed every time and written
        # through small selects (i is not batched): a cond whose branches return the whole
        # carry copied it at every iteration (measured).
        is_inner = i < recorded
        slot = jnp.minimum(i, recorded - 1)
        record = jax.tree_util.tree_map(
            lambda r, x: r.at[:, slot].set(jnp.where(is_inner, x, r[:, slot])), record, level)
        frontier, real = jax.lax.cond(is_inner, lambda: (children, children_real), lambda: (frontier, real))
        # once every real node of an inner level is finished or stopped nothing deeper counts
        alive = ~is_inner | (children_real & ~level.done & ~level.stopped).any()

        start = jnp.maximum(i - recorded, 0) * m
        q = level.rewards + jnp.where(level.done[..., None], 0.0, level.leaf_value)         # [N, C, P]
        parents_player = jax.lax.dynamic_slice_in_dim(record.player[:, recorded - 1], start, m, axis=1)
        searched = level.searched.reshape(-1, m, b)
        chosen = jax.vmap(_choose)(q.reshape(-1, m, b, num_players), searched, parents_player)
        old_best = jax.lax.dynamic_slice_in_dim(best, start, m, axis=1)
        old_has = jax.lax.dynamic_slice_in_dim(has_child, start, m, axis=1)
        best = jax.lax.dynamic_update_slice_in_dim(best, jnp.where(is_inner, old_best, chosen), start, axis=1)
        has_child = jax.lax.dynamic_update_slice_in_dim(
            has_child, jnp.where(is_inner, old_has, searched.any(-1)), start, axis=1)
        return i + 1, frontier, real, alive, record, best, has_child

    n = jax.tree_util.tree_leaves(states)[0].shape[0]
    frontier = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x[:, None], (n, c) + x.shape[1:]), states)
    real = jnp.broadcast_to(jnp.arange(c) == 0, (n, c))
    record = jax.tree_util.tree_map(
        lambda x: jnp.zeros((n, recorded) + x.shape, x.dtype),
        _Level(rewards=jnp.zeros((c, num_players), jnp.float32), player=jnp.zeros(c, jnp.int32),
               done=jnp.zeros(c, jnp.bool_), stopped=jnp.zeros(c, jnp.bool_),
               leaf_value=jnp.zeros((c, num_players), jnp.float32), searched=jnp.zeros(c, jnp.bool_),
               crowded=jnp.zeros(c, jnp.bool_)))
    best = jnp.zeros((n, c, num_players), jnp.float32)    # level depth-1: the best child's vector
    has_child = jnp.zeros((n, c), jnp.bool_)              # level depth-1: some child searched
    live = ~(states.terminated | states.truncated).all()  # a finished root has no tree
    *_, record, best, has_child = jax.lax.while_loop(
        lambda carry: (carry[0] < iterations) & carry[3], body,
        (jnp.int32(0), frontier, real, live, record, best, has_child))
    return jax.vmap(functools.partial(_finish, env, depth, b))(states, record, best, has_child)


def _finish(env, depth, b, state, record, best, has_child) -> MaxnOutput:
    """One position's output from its tree's record (leaves [recorded, C, ...]) and, for
    depth >= 2, the best child's vector of each node of level depth-1 (``best`` [C, P],
    ``has_child`` [C])."""
    num_players, num_actions = env.num_players, env.num_actions
    recorded = record.done.shape[0]
    levels = [jax.tree_util.tree_map(lambda r, k=k: r[k - 1, :b ** k], record) for k in range(1, recorded + 1)]

    # Backup, deepest level first: a node's value is its mover's best child's vector.
    deepest = levels[-1]
    if depth == 1:   # level 1 holds leaves
        value = jnp.where(deepest.done[:, None], 0.0, deepest.leaf_value)
        overflow = jnp.zeros(deepest.done.shape, jnp.bool_)
    else:
        value, overflow = _node_value(deepest, best, has_child, jnp.zeros_like(has_child))
    q = deepest.rewards + value
    for level, below in zip(levels[-2::-1], levels[:0:-1]):
        n = level.done.shape[0]
        searched = below.searched.reshape(n, b)
        value, overflow = _node_value(
            level, _choose(q.reshape(n, b, num_players), searched, level.player),
            searched.any(1), (searched & overflow.reshape(n, b)).any(1))
        q = level.rewards + value                                                  # [n, P]

    # The root: the same rule, then the slots back to action ids.
    searched = levels[0].searched                                                  # [B]
    own = jnp.where(searched, _component(q, state.current_player), -jnp.inf)       # [B]
    best_slot = jnp.argmax(own)                                                    # first index: lowest id
    actions, _, root_overflow = _compact(_live_mask(state), b)
    finished = state.terminated | state.truncated
    index = jnp.where(searched, actions, num_actions)   # empty slots point past the end: dropped
    action_values = jnp.full((num_actions, num_players), jnp.nan, jnp.float32).at[index].set(q, mode="drop")
    own_values = jnp.full(num_actions, -jnp.inf, jnp.float32).at[index].set(own, mode="drop")
    return MaxnOutput(
        action=jnp.where(finished, 0, actions[best_slot]).astype(jnp.int32),
        action_values=action_values,
        own_values=own_values,
        value=jnp.where(finished, 0.0, q[best_slot]).astype(jnp.float32),
        overflow=root_overflow | (searched & overflow).any(),
    )


def _choose(q: Array, searched: Array, player: Array) -> Array:
    """[n, P]: for each of n nodes, the vector of the searched child (of ``q`` [n, B, P],
    ``searched`` [n, B]) with the largest ``player`` [n] component, the first on ties."""
    own = jnp.where(searched, jax.vmap(_component)(q, player), -jnp.inf)          # [n, B]
    return jax.vmap(_row)(q, jnp.argmax(own, axis=1))


def _node_value(level: _Level, best: Array, has_child: Array, child_overflow: Array) -> tuple[Array, Array]:
    """(value [n, P], overflow [n]) of the n nodes of ``level``, given each one's best child's
    vector ``best`` [n, P], whether it had a searched child, and whether a searched child's
    subtree overflowed."""
    # a node is a leaf when stop holds (or, against the contract, no move is legal)
    leaf = level.stopped | ~has_child
    value = jnp.where(level.done[:, None], 0.0, jnp.where(leaf[:, None], level.leaf_value, best))
    expanded = ~level.done & ~leaf
    return value, expanded & (level.crowded | child_overflow)
