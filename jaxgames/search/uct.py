"""Plain UCT with random playouts, as in the Hex source; game-agnostic, batched and jitted.

The source's algorithm (Zhang, Meng & Yang 2020, sec. 1.2; UCB of its eq. (4) with ``C`` =
``exploration``, default 1: exactly UCB1), ``num_simulations`` times from the searched
position, on any deterministic, perfect-information env of the contract with
``playout_returns``, any number of players. :func:`uct_search` takes one state (``jax.vmap``
it for a batch: the vmap folds into one batched search,
:func:`jaxgames.search.batching.fold_vmap`) and returns :class:`UCTOutput`: the most visited
root child, the root's visit counts and its children's win rates ``W/N`` for the root's mover
(the source's policy labels). :func:`uct_policy` is an arena policy. On a CPU, run one XLA
device per core and shard the games over them.

How it works (the four steps, ``C``, wins, the tree's layout and memory, batching, devices):
docs/search.md#uct.
"""

from __future__ import annotations

import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.core import Env, State
from jaxgames.search.batching import fold_vmap

Array = jax.Array

#: ``C`` of eq. (4). The source leaves it unstated; 1 makes eq. (4) exactly UCB1.
DEFAULT_EXPLORATION = 1.0

UNEXPLORED = -1  # children_index of a child not yet in the tree
NO_PARENT = -1   # parents / action_from_parent of the root and of unused node slots


@chex.dataclass(frozen=True)
class UCTTree:
    """The search tree of one position (a leading batch axis ``[B]`` when vmapped).

    ``N = num_simulations + 1`` nodes; ``A = env.num_actions``; ``P = env.num_players``.
    A node's ``W`` counts the wins of the player who moved into it (at the root: of the
    player to move there). Selection reads one row per node: ``children_win_rates`` and
    ``children_scale`` cache each child's ``W/N`` and ``1/sqrt(N)`` (set by the backup), so eq.
    (4) is one multiply-add per child, ``W/N + sqrt(2 C^2 ln N') * (1/sqrt(N))``, with no
    division, square root or gather of the children's own statistics. Slots of simulations
    that ended in a finished game already in the tree stay unused (``parents == -1``,
    ``node_visits == 0``; their ``node_states`` are arbitrary).
    """

    node_states: Any            # State, every leaf [N, ...]  the position at each node
    node_returns: Array         # float32 [N, P]  rewards collected from the root to the node
    node_visits: Array          # int32 [N]       N
    node_wins: Array            # float32 [N]     W (a draw counts 1/2)
    parents: Array              # int32 [N]       -1 at the root and in unused slots
    action_from_parent: Array   # int32 [N]       -1 at the root and in unused slots
    children_index: Array       # int32 [N, A]    node of each child, -1 if unexplored
    children_win_rates: Array   # float32 [N, A]  W/N of each child; +inf unexplored, -inf illegal
    children_scale: Array       # float32 [N, A]  1/sqrt(N) of each child; 0 if unexplored

    @property
    def num_nodes(self) -> int:
        return self.parents.shape[-1]


@chex.dataclass(frozen=True)
class UCTOutput:
    """What :func:`uct_search` returns for one position (a leading ``[B]`` when vmapped)."""

    action: Array        # int32 []      the most visited root child (tie rule: see uct_search)
    visit_counts: Array  # int32 [A]     N of each root child (0: illegal or never explored)
    win_rates: Array     # float32 [A]   W/N of each root child for the root's mover (0 where N = 0)
    value: Array         # float32 []    the root mover's win rate over all simulations
    tree: UCTTree        # the whole tree (unused parts are removed by XLA under jit)


def uct_search(env: Env, state: State, key: Array, *, num_simulations: int,
               exploration: float = DEFAULT_EXPLORATION) -> UCTOutput:
    """Plain UCT from one position: ``num_simulations`` simulations, then the most visited move.

    Args:
      env: a deterministic, perfect-information env of the contract with
        ``playout_returns(state, key) -> float32 [num_players]``.
      state: the position to search (one game; ``jax.vmap`` this function for a batch).
      key: consumed.
      num_simulations: how many selection-expansion-playout-backup rounds (>= 1).
      exploration: ``C`` of eq. (4).

    Returns:
      :class:`UCTOutput`. The chosen action is the legal root child with the most visits;
      ties go to the higher win rate, then to the lowest action index.
    """
    _check(env, num_simulations, exploration)
    search = _batched_search(env, int(num_simulations), float(exploration))
    out = search(jax.tree_util.tree_map(lambda x: x[None], state), key[None])
    return jax.tree_util.tree_map(lambda x: x[0], out)


def uct_policy(env: Env, *, num_simulations: int, exploration: float = DEFAULT_EXPLORATION):
    """An arena policy ``policy(params, state, key) -> action`` (int32 []); params are ignored."""
    _check(env, num_simulations, exploration)

    def policy(params, state, key):
        del params  # plain UCT has no parameters
        return uct_search(env, state, key, num_simulations=num_simulations,
                          exploration=exploration).action

    return policy


def _check(env: Env, num_simulations: int, exploration: float) -> None:
    if int(num_simulations) < 1:
        raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
    if not exploration >= 0:
        raise ValueError(f"exploration must be >= 0, got {exploration}")
    if env.stochastic or not env.perfect_information:
        raise ValueError(f"plain UCT needs a deterministic perfect-information game; {env.id!r} is not")


# -- the batched search, registered as the vmap rule ------------------------------------------


@functools.lru_cache(maxsize=None)
def _batched_search(env: Env, num_simulations: int, exploration: float):
    """``(states [B], keys [B]) -> UCTOutput [B]``, whose own vmap folds the new axis into B."""
    return fold_vmap(functools.partial(_search, env, num_simulations=num_simulations,
                                       exploration=exploration))


@chex.dataclass(frozen=True)
class _Work:
    """The tree as the loops keep it: fewer, wider arrays, so that a step of the selection
    or of the backup gathers and scatters a handful of times (each gather or scatter is a
    separate operation of fixed cost on the CPU). :func:`_published` turns it into a UCTTree.
    """

    states: Any        # State, every leaf [B, N, ...]
    returns: Array     # float32 [B, N, P]  rewards collected from the root to the node
    stats: Array       # float32 [B, N, 2]  (N, W) of the node (exact integers and halves)
    links: Array       # int32 [B, N]  (parent * A + action) * P + chooser; -1 at the root, unused
    children: Array    # int32 [B, N, A]  child node | FINISHED_BIT if a finished game; -1 unexplored
    edges: Array       # float32 [B, N, A, 2]  (W/N, 1/sqrt(N)) of each child: eq. (4)'s two terms
                       #   per child; (+inf, 0) unexplored, (-inf, 0) illegal


FINISHED_BIT = 1 << 30
_INDEX_MASK = FINISHED_BIT - 1


def _search(env: Env, states: State, keys: Array, *, num_simulations: int,
            exploration: float) -> UCTOutput:
    """The search over an explicit batch: ``states`` [B], ``keys`` [B] -> UCTOutput [B]."""
    batch = keys.shape[0]
    num_nodes = num_simulations + 1
    num_actions, num_players = env.num_actions, env.num_players
    chex.assert_shape(states.legal_action_mask, (batch, num_actions))
    if num_nodes * num_actions * num_players >= 2**31 or num_nodes >= FINISHED_BIT:
        raise ValueError(f"{num_simulations} simulations of {env.id!r} overflow the int32 tree links")
    lanes = jnp.arange(batch)
    # Zeros [B] that vary wherever an input varies: inside shard_map, a loop's carry must have
    # the manual-axis type of what the loop computes from its inputs, so every array of the
    # tree is made "like" this one.
    anchor = _anchor(states, keys)

    def full(shape, value, dtype):
        return jnp.full_like(anchor, value, shape=(batch,) + shape, dtype=dtype)

    def root_slot(x):
        return full((num_nodes,) + x.shape[1:], 0, x.dtype).at[:, 0].set(x)

    work = _Work(
        states=jax.tree_util.tree_map(root_slot, states),
        returns=full((num_nodes, num_players), 0, jnp.float32),
        stats=full((num_nodes, 2), 0, jnp.float32),
        links=full((num_nodes,), -1, jnp.int32),
        children=full((num_nodes, num_actions), UNEXPLORED, jnp.int32),
        edges=root_slot(_fresh_row(states.legal_action_mask)),
    )
    root_mover = jnp.maximum(states.current_player, 0)
    # One key per game per simulation, split up front (unrolled Threefry: cheap on CPU).
    sim_keys = jax.vmap(lambda k: rng.split(k, num_simulations))(keys)  # [B, S]

    def simulate(sim, work):
        select_key, playout_key = jnp.moveaxis(
            jax.vmap(lambda k: rng.split(k, 2))(sim_keys[:, sim]), 1, 0)  # 2 x [B]
        word = jax.vmap(lambda k: rng.random_words(k, 1)[0])(select_key)  # uint32 [B]
        node, action, expand = _select(work, word, exploration)

        # Expansion: step the env from the chosen node (no chance: no key). Games whose
        # selection ended in a finished game step it too (a no-op, by the contract) and
        # discard the result.
        parent_state = jax.tree_util.tree_map(lambda x: x[lanes, node], work.states)
        child = jax.vmap(env.step)(parent_state, action)
        finished = child.terminated | child.truncated
        # Simulation: random play to the end from the new node; a finished one is exact.
        playout = jax.vmap(env.playout_returns)(child, playout_key)
        returns_to_node = work.returns[lanes, node]
        returns_to_child = returns_to_node + child.rewards
        outcome = jnp.where(expand[:, None],
                            returns_to_child + jnp.where(finished[:, None], 0.0, playout),
                            returns_to_node)  # the finished leaf's exact result

        new = jnp.where(expand, sim + 1, num_nodes)  # out of range: dropped by the scatters
        put = lambda x, v: x.at[lanes, new].set(v, mode="drop")  # noqa: E731
        chooser = jnp.maximum(parent_state.current_player, 0)
        work = work.replace(
            states=jax.tree_util.tree_map(put, work.states, child),
            returns=put(work.returns, returns_to_child),
            links=put(work.links, (node * num_actions + action) * num_players + chooser),
            children=work.children.at[lanes, jnp.where(expand, node, num_nodes), action].set(
                new | jnp.where(finished, FINISHED_BIT, 0), mode="drop"),
            edges=put(work.edges, _fresh_row(child.legal_action_mask)),
        )
        leaf = jnp.where(expand, new, node)
        return _backup(work, leaf, _wins(outcome), root_mover)

    work = jax.lax.fori_loop(0, num_simulations, simulate, work)
    return _root_output(_published(work, num_actions, num_players), states)


def _anchor(states: State, keys: Array) -> Array:
    """int32 [B] zeros computed from every input (see ``_search``)."""
    parts = [x.reshape(x.shape[0], -1)[:, 0].astype(jnp.int32) for x in jax.tree_util.tree_leaves(states)]
    data = jax.random.key_data(keys) if jnp.issubdtype(keys.dtype, jax.dtypes.prng_key) else keys
    parts.append(data.reshape(keys.shape[0], -1)[:, 0].astype(jnp.int32))
    return sum(jnp.zeros_like(p) for p in parts)


def _fresh_row(legal: Array) -> Array:
    """``edges`` row of a new node [..., A, 2]: (+inf, 0) for its legal (unexplored)
    children, (-inf, 0) for the others."""
    first = jnp.where(legal, jnp.inf, -jnp.inf).astype(jnp.float32)
    return jnp.stack([first, jnp.zeros_like(first)], axis=-1)


def _select(work: _Work, word: Array, exploration: float) -> tuple[Array, Array, Array]:
    """Walk down from the root: ``(node [B], action [B], expand [B])``.

    ``expand``: ``action`` is an unexplored child of ``node`` to add. Otherwise the walk
    entered a finished game: ``node`` is that leaf (``action`` is stale).
    """
    batch, _, num_actions = work.children.shape
    lanes = jnp.arange(batch)
    actions = jnp.arange(num_actions, dtype=jnp.uint32)
    # Ties among the best children go to the smallest key: the action index for explored
    # children (the lowest action wins), and for the unexplored ones (all at +inf) a random
    # number of this simulation with the action in its low bits, so that the pick among them
    # is uniform (the source's rule). Two plain reductions, max then min, over int32 keys:
    # XLA's CPU argmax is a slow two-operand reduction and its float max keeps NaN rules.
    bits = max(1, (num_actions - 1).bit_length())
    shuffled = (rng.mix32(word[:, None] ^ (actions * jnp.uint32(0x9E3779B9))) << bits) | actions
    low = jnp.uint32((1 << bits) - 1)
    c2 = 2.0 * exploration * exploration  # C sqrt(2 ln N' / N) = sqrt(2 C^2 ln N') / sqrt(N)

    def cond(c):
        return c[3].any()

    def body(c):
        node, action, expand, walking = c
        edges = work.edges[lanes, node]                           # [B, A, 2] one row each
        # N' >= 1 but for the root's first simulation, where every child is unexplored
        reach = jnp.sqrt(c2 * jnp.log(jnp.maximum(work.stats[lanes, node, 0], 1.0)))
        win_rates = edges[..., 0]
        ucb = _ordered(win_rates + reach[:, None] * edges[..., 1])  # eq. (4)
        best = jnp.max(ucb, -1)
        expand_here = best == _INF_ORDERED
        tie = jnp.where(win_rates == jnp.inf, shuffled, actions)
        tie = jnp.where(ucb == best[:, None], tie, jnp.uint32(0xFFFFFFFF))
        chosen = (jnp.min(tie, -1) & low).astype(jnp.int32)
        code = work.children[lanes, node, chosen]
        # Games that stopped walking keep their cursor.
        descend = walking & ~expand_here
        return (jnp.where(descend, code & _INDEX_MASK, node),
                jnp.where(walking, chosen, action),
                jnp.where(walking, expand_here, expand),
                descend & (code & FINISHED_BIT == 0))

    zeros = jnp.zeros_like(work.links[:, 0])  # the tree's manual-axis type (see _search)
    init = (zeros, zeros, zeros != 0, zeros == 0)
    node, action, expand, _ = jax.lax.while_loop(cond, body, init)
    return node, action, expand


def _backup(work: _Work, leaf: Array, wins: Array, root_mover: Array) -> _Work:
    """Every node from ``leaf`` [B] up to the root gains one visit and, from ``wins`` [B, P],
    the share of the player who chose it; the parents' ``edges`` follow."""
    batch, num_nodes, num_actions = work.children.shape
    num_players = wins.shape[-1]
    lanes = jnp.arange(batch)

    def body(c):
        node, stats, edges = c
        safe = jnp.maximum(node, 0)
        link = work.links[lanes, safe]
        has_parent = link >= 0
        parent = jnp.where(has_parent, link // (num_actions * num_players), num_nodes)
        chooser = jnp.where(has_parent, link % num_players, root_mover)
        n, w = jnp.moveaxis(stats[lanes, safe], -1, 0)
        n = n + 1
        w = w + jnp.take_along_axis(wins, chooser[:, None], -1)[:, 0]
        stats = stats.at[lanes, jnp.where(node >= 0, node, num_nodes)].set(  # past the root: dropped
            jnp.stack([n, w], -1), mode="drop")
        edges = edges.at[lanes, parent, (link // num_players) % num_actions].set(
            jnp.stack([w / n, jax.lax.rsqrt(n)], -1), mode="drop")
        return jnp.where(node >= 0, jnp.where(has_parent, parent, NO_PARENT), NO_PARENT), stats, edges

    _, stats, edges = jax.lax.while_loop(
        lambda c: (c[0] >= 0).any(), body, (leaf, work.stats, work.edges))
    return work.replace(stats=stats, edges=edges)


def _published(work: _Work, num_actions: int, num_players: int) -> UCTTree:
    """The UCTTree of the working arrays (once, after the search)."""
    linked = work.links >= 0
    return UCTTree(
        node_states=work.states,
        node_returns=work.returns,
        node_visits=work.stats[..., 0].astype(jnp.int32),
        node_wins=work.stats[..., 1],
        parents=jnp.where(linked, work.links // (num_actions * num_players), NO_PARENT),
        action_from_parent=jnp.where(linked, (work.links // num_players) % num_actions, NO_PARENT),
        children_index=jnp.where(work.children >= 0, work.children & _INDEX_MASK, UNEXPLORED),
        children_win_rates=work.edges[..., 0],
        children_scale=work.edges[..., 1],
    )


def _ordered(x: Array) -> Array:
    """int32 keys of float32 ``x`` in the same order (no NaN here): XLA's CPU max reduction
    vectorises over int32 but not over float32, whose NaN rule it keeps."""
    bits = jax.lax.bitcast_convert_type(x, jnp.int32)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


_INF_ORDERED = int(np.float32(np.inf).view(np.int32))


def _wins(returns: Array) -> Array:
    """float32 [..., P]: 1 for a positive return (a win), 1/2 for zero (a draw), else 0."""
    return jnp.where(returns > 0, 1.0, jnp.where(returns == 0, 0.5, 0.0)).astype(jnp.float32)


def _root_output(tree: UCTTree, states: State) -> UCTOutput:
    batch = tree.parents.shape[0]
    lanes = jnp.arange(batch)[:, None]
    children = tree.children_index[:, 0]                                  # [B, A]
    explored = children >= 0
    visits = jnp.where(explored, tree.node_visits[lanes, jnp.maximum(children, 0)], 0)
    win_rates = jnp.where(explored, tree.children_win_rates[:, 0], 0.0)
    # Most visits; ties: the higher win rate, then the lowest index (argmax takes the first).
    most = visits == visits.max(-1, keepdims=True)
    action = jnp.argmax(jnp.where(most & states.legal_action_mask, win_rates, -1.0), -1)
    value = tree.node_wins[:, 0] / jnp.maximum(tree.node_visits[:, 0], 1)
    return UCTOutput(action=action.astype(jnp.int32), visit_counts=visits,
                     win_rates=win_rates, value=value, tree=tree)
