"""max^n search (Luckhardt & Irani 1986) on any multi-player env of the contract, batched and jitted.

The search of the Hearts source (Sturtevant & White, "Feature construction for reinforcement
learning in Hearts"): every player, at its own turn, picks the move that maximises its own
component of a value vector over all players. The source searches 1 to 4 plies, to the end of
the current trick; :func:`maxn_search` does that with ``depth=4`` and a ``stop`` predicate that
marks a completed trick.

Values. The value of a path is the vector (float32 ``[num_players]``) of the rewards collected
along it (``state.rewards`` of every step, summed) plus, at the leaf, ``value_fn(params, leaf)``
(float32 ``[num_players]``; zeros when no ``value_fn`` is given). A node is a leaf when

* its game is finished (terminated or truncated): value 0, only the rewards that led there count;
* ``stop(node)`` holds (never asked of the root): value ``value_fn(node)``;
* the depth is spent: value ``value_fn(node)``.

At any other node the player to move (``current_player``) takes the child whose vector has the
largest own component, and the node's value is that child's vector (its edge reward included).

Ties go to the lowest action id. max^n leaves ties open and its value depends on how they are
broken (Sturtevant 2003); without a model of the other players no rule is right, so the search
uses the one that is cheapest (argmax's first index), deterministic, and that a plain recursive
reference reproduces exactly (the tests compare against one). The alternative of some max^n
variants, breaking a tie towards the child worst for the others, says nothing in the main use:
inside a Hearts trick with no leaf value the points of a trick are a constant total, so among
the mover's ties the others' sum is fixed too.

Branching. ``max_branching`` B is static: at every node the legal moves are compacted to B
slots in ascending action id (a compare of ranks against slots, no sort and no scatter) and the
rest of the slots are empty. When more than B moves are legal only the first B (lowest ids)
are searched, at the root too (the others get no value and are never chosen), and the output's
``overflow`` flag says that this happened somewhere in the tree. For Hearts, B = 13 is exact
(a hand never holds more than 13 cards).

Layout. As in :mod:`jaxgames.search.expectimax`, the tree is unrolled at trace time (``depth``
is static) and every layer is a ``vmap`` over the B children of the layer above: one fused XLA
program of ``B + B^2 + ... + B^depth`` steps, the leaves evaluated as one batch, no Python and
no control flow at run time. Static shapes cost what they cost: the subtrees under finished,
stopped or empty nodes are computed and thrown away (a Hearts search from the third card of a
trick at depth 4 steps all B^4 leaves although the trick ends after 2 plies: pass the smaller
depth when it is known statically). ``jax.vmap`` the search for a batch of positions.

Imperfect-information games: the search reads the whole state, every hidden card included: on
its own it is the source's perfect-information expert (PIE), a player that cheats. Honest play
searches sampled worlds instead: :mod:`jaxgames.search.pimc`.
"""

from __future__ import annotations

from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy, State

Array = jax.Array
#: ``value_fn(params, state) -> float32 [num_players]``: each player's value of a leaf
ValueFn = Callable[[Any, State], Array]
#: ``stop(state) -> bool []``: the node is a leaf whatever the depth left
StopFn = Callable[[State], Array]

#: largest tree (``max_branching ** depth`` leaves) accepted: beyond it the batch of leaf states
#: outgrows memory long before the search would finish
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
      state: the position (one game; ``jax.vmap`` this function for a batch).
      params: passed to ``value_fn`` (a learned evaluation's weights).
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
    num_players, num_actions = env.num_players, env.num_actions
    levels = _expand_tree(env, state, params, depth, branching, value_fn, stop)

    # Backup, deepest level first: a node's value is its mover's best child's vector.
    leaves = levels[-1]
    q = leaves.rewards + jnp.where(leaves.done[:, None], 0.0, leaves.leaf_value)   # [B^depth, P]
    overflow = jnp.zeros(leaves.done.shape, jnp.bool_)
    for level, below in zip(levels[-2::-1], levels[:0:-1]):
        n = level.done.shape[0]
        value, overflow = _back_up(level, q.reshape(n, branching, num_players),
                                   below.searched.reshape(n, branching), overflow.reshape(n, branching))
        q = level.rewards + value                                                  # [n, P]

    # The root: the same rule, then the slots back to action ids.
    searched = levels[0].searched                                                  # [B]
    own = jnp.where(searched, _component(q, state.current_player), -jnp.inf)       # [B]
    best = jnp.argmax(own)                                                         # first index: lowest id
    actions, _, root_overflow = _compact(_live_mask(state), branching)
    finished = state.terminated | state.truncated
    index = jnp.where(searched, actions, num_actions)   # empty slots point past the end: dropped
    action_values = jnp.full((num_actions, num_players), jnp.nan, jnp.float32).at[index].set(q, mode="drop")
    own_values = jnp.full(num_actions, -jnp.inf, jnp.float32).at[index].set(own, mode="drop")
    return MaxnOutput(
        action=jnp.where(finished, 0, actions[best]).astype(jnp.int32),
        action_values=action_values,
        own_values=own_values,
        value=jnp.where(finished, 0.0, q[best]).astype(jnp.float32),
        overflow=root_overflow | (searched & overflow).any(),
    )


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


# -- the tree ---------------------------------------------------------------------------------


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
    [B, A] compare and a sum, which fuse (no sort, no scatter, cheap under nested vmaps).
    """
    rank = jnp.cumsum(mask, dtype=jnp.int32) - 1                              # [A]
    hit = mask[None, :] & (rank[None, :] == jnp.arange(branching, dtype=jnp.int32)[:, None])  # [B, A]
    actions = (hit * jnp.arange(mask.shape[0], dtype=jnp.int32)[None, :]).sum(1, dtype=jnp.int32)
    return actions, hit.any(1), rank[-1] >= branching


def _component(q: Array, player: Array) -> Array:
    """``q[:, player]`` as a masked sum: under nested vmaps a gather per node compiles and runs
    slower than this elementwise select, which fuses."""
    return jnp.where(jnp.arange(q.shape[-1]) == player, q, 0.0).sum(-1)


def _row(q: Array, index: Array) -> Array:
    """``q[index]`` as a masked sum (see :func:`_component`); q must be finite."""
    return jnp.where((jnp.arange(q.shape[0]) == index)[:, None], q, 0.0).sum(0)


@chex.dataclass(frozen=True)
class _Level:
    """Every node of one level of the tree, in heap order (node j's children are j*B .. j*B+B-1
    of the level below); n = B^k at level k."""

    rewards: Array     # float32 [n, P]  rewards of the move into the node
    player: Array      # int32 [n]       the node's player to move
    done: Array        # bool [n]        finished game
    stopped: Array     # bool [n]        stop(node) held
    leaf_value: Array  # float32 [n, P]  value_fn(node) (zeros where not needed)
    searched: Array    # bool [n]        the slot holds a searched move of the parent
    crowded: Array     # bool [n]        more than B moves are legal at the node


def _expand_tree(env, root, params, depth, branching, value_fn, stop) -> list[_Level]:
    """The levels 1 .. depth of the tree below ``root``, made by one loop of one expansion.

    Every iteration steps ``M = B^(depth-2)`` parents into ``C = M * B`` children (one
    ``vmap``ped ``env.step``: compiled once whatever the depth). Iterations 0 .. depth-2 build
    the inner levels (level k+1 from the first B^k slots of the frontier; the rest of the
    slots are stepped and ignored), and carry the new level as the frontier; the last B
    iterations expand the frontier (level depth-1, C nodes) M parents at a time into the
    leaves. Each iteration records its children's few figures; the states themselves live
    only in the frontier, so memory is C states, not B^depth.
    """
    b = branching
    m = b ** max(depth - 2, 0)
    c = m * b
    inner = depth - 1
    iterations = inner + (b if depth >= 2 else 1)
    key = jax.random.key(0)    # the step's chance, if any: one fixed sample
    zeros = jnp.zeros((c, env.num_players), jnp.float32)

    def values(children):
        return jax.vmap(lambda s: jnp.asarray(value_fn(params, s), jnp.float32).reshape(env.num_players))(children)

    def body(i, carry):
        frontier, record = carry
        start = jnp.where(i < inner, 0, (i - inner) * m)
        parents = jax.tree_util.tree_map(lambda x: jax.lax.dynamic_slice_in_dim(x, start, m), frontier)
        actions, searched, _ = jax.vmap(lambda s: _compact(_live_mask(s), b))(parents)     # [M, B]
        children = jax.vmap(jax.vmap(lambda s, a: env.step(s, a, key), (None, 0)))(parents, actions)
        children = jax.tree_util.tree_map(lambda x: x.reshape((c,) + x.shape[2:]), children)
        if value_fn is None:
            leaf_value = zeros
        elif stop is None:   # only the leaves need it: skip it on inner iterations
            leaf_value = jax.lax.cond(i >= inner, values, lambda _: zeros, children)
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
        record = jax.tree_util.tree_map(lambda r, x: r.at[i].set(x), record, level)
        frontier = jax.lax.cond(i < inner, lambda: children, lambda: frontier)
        return frontier, record

    frontier = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (c,) + x.shape), root)
    record = jax.tree_util.tree_map(lambda x: jnp.zeros((iterations,) + x.shape, x.dtype), _level_shape(env, c))
    _, record = jax.lax.fori_loop(0, iterations, body, (frontier, record))
    levels = [jax.tree_util.tree_map(lambda r, k=k: r[k - 1, :b ** k], record) for k in range(1, depth)]
    levels.append(jax.tree_util.tree_map(lambda r: r[inner:].reshape((b ** depth,) + r.shape[2:]), record))
    return levels


def _level_shape(env, n) -> _Level:
    p = env.num_players
    return _Level(rewards=jnp.zeros((n, p), jnp.float32), player=jnp.zeros(n, jnp.int32),
                  done=jnp.zeros(n, jnp.bool_), stopped=jnp.zeros(n, jnp.bool_),
                  leaf_value=jnp.zeros((n, p), jnp.float32), searched=jnp.zeros(n, jnp.bool_),
                  crowded=jnp.zeros(n, jnp.bool_))


def _back_up(level: _Level, q: Array, searched: Array, overflow: Array) -> tuple[Array, Array]:
    """(value [n, P], overflow [n]) of the n nodes of ``level`` from their children's vectors
    ``q`` [n, B, P], which slots hold searched moves [n, B] and the children's overflow [n, B]."""
    own = jnp.where(searched, jax.vmap(_component)(q, level.player), -jnp.inf)     # [n, B]
    best = jax.vmap(_row)(q, jnp.argmax(own, axis=1))                              # [n, P]
    # a node is a leaf when stop holds (or, against the contract, no move is legal)
    leaf = level.stopped | ~searched.any(1)
    value = jnp.where(level.done[:, None], 0.0, jnp.where(leaf[:, None], level.leaf_value, best))
    expanded = ~level.done & ~leaf
    return value, expanded & (level.crowded | (searched & overflow).any(1))
