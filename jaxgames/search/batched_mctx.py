"""mctx's search and policies, batched by hand so that each level of a walk is a few fused ops.

``mctx.search`` runs each game's walk and backup as a ``jax.vmap`` of per-node functions. On a
CPU that costs far more than the network: its backup is a vmapped ``while_loop`` whose batched
predicate makes JAX select the whole tree at every level, and every level of a walk draws
Threefry numbers and takes ``jnp.argmax``, ``max`` and ``min`` over the actions, which XLA's CPU
backend lowers to slow serial reductions (over ``[128, 122]``: 85 us for an ``argmax``, 14 us
for a ``max``, against 3.5 us for a sum).

This module runs the same algorithm (mctx's tree, selection rules, expansion and backup; its
``Tree`` comes out) with

* the walk's statistics packed so that a level gathers one ``[B, 3, A]`` row per game (each
  child's Q from the parent's view, its visits, its prior) and one ``[B, 3]`` row of the node's
  own (value, visits, raw value); the selection rules written for the whole batch, their
  reductions on integer keys that order like the floats (:func:`max_last`, :func:`argmax_last`);
* tie-breaking noise (mctx: ``1e-7 * uniform`` drawn per node visit) drawn once per search,
  ``[B, A]``: it only orders exact ties;
* the walk's path recorded in ``[B, max_depth]`` buffers and backed up in chunks of
  :data:`CHUNK` levels, one vectorised gather-compute-scatter per chunk (the return
  ``G = r + gamma G'`` along the chunk is a short unrolled recurrence), as many chunks as the
  batch's longest path needs;
* ``stop_at_finished``: a walk also ends on the edge into a visited child whose discount is 0
  (a finished game, for :mod:`jaxgames.search.mcts`'s ``recurrent_fn``), which is then
  evaluated again instead of growing copies of the finished game below it.

:func:`muzero_policy` (PUCT with ``qtransform_by_parent_and_siblings``, Dirichlet root noise)
and :func:`gumbel_muzero_policy` (``qtransform_completed_by_mix_value``, sequential halving at
the root) take mctx's arguments and its keys for the root noise, the Gumbel draw and the
acting; the tie-breaking noise and the keys handed to ``recurrent_fn`` are drawn differently.
For a deterministic model whose scores never tie exactly they return mctx's outputs (tested
against ``mctx`` itself).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx
from mctx._src import action_selection, policies, seq_halving

from jaxgames.search import keys as key_lib

Array = jax.Array
Tree = mctx.Tree

#: levels of a path backed up by one vectorised step
CHUNK = 8
#: a prior logit at or below this is masked (mctx masks with the lowest float32)
_MASKED_BELOW = 0.5 * float(jnp.finfo(jnp.float32).min)
# channels of the packed edge rows and node rows
_Q, _VISITS, _PRIOR = 0, 1, 2
_VALUE, _NODE_VISITS, _RAW = 0, 1, 2


# -- reductions over the last axis --------------------------------------------------------------
# XLA:CPU reduces floats with max/min serially (NaN semantics) and argmax (a variadic reduce)
# slower still: over [128, 122], 14 us and 85 us against 3.5 us for a sum. Integers reduce
# fast, so floats are mapped to int32 keys with the same order (the sign-magnitude bits,
# negatives flipped), reduced, and mapped back. NaN is not handled (no score here is NaN).


def _order_key(x: Array) -> Array:
    """int32 with the order of float32 ``x`` (an involution: applied twice, the bits again)."""
    bits = jax.lax.bitcast_convert_type(x.astype(jnp.float32), jnp.int32)
    return jnp.where(bits < 0, bits ^ jnp.int32(0x7FFFFFFF), bits)


def _from_key(key: Array) -> Array:
    return jax.lax.bitcast_convert_type(jnp.where(key < 0, key ^ jnp.int32(0x7FFFFFFF), key), jnp.float32)


def max_last(x: Array) -> Array:
    """``x.max(-1)`` (float32)."""
    return _from_key(jnp.max(_order_key(x), axis=-1))


def min_last(x: Array) -> Array:
    """``x.min(-1)`` (float32)."""
    return _from_key(jnp.min(_order_key(x), axis=-1))


def sum_last(x: Array) -> Array:
    return jnp.sum(x, axis=-1)


def argmax_last(x: Array) -> Array:
    """int32: ``jnp.argmax(x, -1)``, the first of equal maxima."""
    # materialised once: fused, the expression below would be computed again for the max
    # and for the comparison
    key = jax.lax.optimization_barrier(_order_key(x))
    best = jnp.max(key, axis=-1, keepdims=True)
    index = jnp.arange(x.shape[-1], dtype=jnp.int32)
    return jnp.min(jnp.where(key == best, index, x.shape[-1]), axis=-1)


# -- one node of every game, as the selection rules see it ------------------------------------


class Rows(NamedTuple):
    """The statistics of one node per game: ``[B, A]`` for its children, ``[B]`` its own."""

    q: Array            # float  [B, A]  reward + discount * child value (0 where unvisited)
    visits: Array       # float  [B, A]  children's visit counts
    prior: Array        # float  [B, A]  softmax of the node's prior logits
    masked: Array       # bool   [B, A]  prior logit masked (mctx's lowest float32)
    value: Array        # float  [B]     the node's value
    node_visits: Array  # float  [B]
    raw_value: Array    # float  [B]     the network's value of the node
    invalid: Any        # bool [B, A] at the root (``invalid_actions``), None below it


Select = Callable[[Rows, Array], Array]  # (rows, tie-break noise [B, A]) -> action int32 [B]


def qtransform_by_parent_and_siblings(rows: Rows, *, epsilon: float = 1e-8) -> Array:
    """mctx's ``qtransform_by_parent_and_siblings`` for the batch: ``[B, A]`` in [0, 1]."""
    visited = rows.visits > 0
    value = rows.value[:, None]
    safe = jnp.where(visited, rows.q, value)
    low = jnp.minimum(rows.value, min_last(safe))[:, None]
    high = jnp.maximum(rows.value, max_last(safe))[:, None]
    completed = jnp.where(visited, rows.q, low)
    return (completed - low) / jnp.maximum(high - low, epsilon)


def qtransform_completed_by_mix_value(rows: Rows, *, value_scale: float = 0.1,
                                      maxvisit_init: float = 50.0, epsilon: float = 1e-8) -> Array:
    """mctx's ``qtransform_completed_by_mix_value`` (its defaults: mixed value, rescaled)."""
    visited = rows.visits > 0
    total = sum_last(rows.visits)
    prior = jnp.maximum(jnp.finfo(rows.prior.dtype).tiny, rows.prior)
    prior_visited = sum_last(jnp.where(visited, prior, 0.0))
    weighted_q = sum_last(jnp.where(visited, prior * rows.q / jnp.where(visited, prior_visited[:, None], 1.0), 0.0))
    mixed = (rows.raw_value + total * weighted_q) / (total + 1.0)
    completed = jnp.where(visited, rows.q, mixed[:, None])
    low, high = min_last(completed)[:, None], max_last(completed)[:, None]
    completed = (completed - low) / jnp.maximum(high - low, epsilon)
    return (maxvisit_init + max_last(rows.visits))[:, None] * value_scale * completed


def _masked_argmax(score: Array, invalid) -> Array:
    if invalid is not None:
        score = jnp.where(invalid, -jnp.inf, score)
    return argmax_last(score)


def puct_selection(rows: Rows, noise: Array, *, pb_c_init: float = 1.25, pb_c_base: float = 19652.0,
                   mask_children: bool = False) -> Array:
    """mctx's ``muzero_action_selection`` (qtransform by parent and siblings); with
    ``mask_children`` the children with masked priors score -inf at every node (mctx's would
    still pick one now and then below the root)."""
    n = rows.node_visits[:, None]
    pb_c = pb_c_init + jnp.log((n + pb_c_base + 1.0) / pb_c_base)
    value_score = qtransform_by_parent_and_siblings(rows)
    if mask_children:
        value_score = jnp.where(rows.masked, -jnp.inf, value_score)
    score = value_score + jnp.sqrt(n) * pb_c * rows.prior / (rows.visits + 1.0) + noise
    return _masked_argmax(score, rows.invalid)


def gumbel_interior_selection(rows: Rows, noise: Array, **qtransform_kwargs) -> Array:
    """mctx's ``gumbel_muzero_interior_action_selection`` (deterministic: no noise):
    ``argmax softmax(logits + completed Q) - N / (1 + sum N)``, the softmax written as
    ``prior * exp(completed Q)`` normalised."""
    del noise
    completed = qtransform_completed_by_mix_value(rows, **qtransform_kwargs)
    completed = completed - max_last(jnp.where(rows.prior > 0, completed, -jnp.inf))[:, None]
    weight = rows.prior * jnp.exp(jnp.minimum(completed, 0.0))
    probs = weight / sum_last(weight)[:, None]
    return argmax_last(probs - rows.visits / (1.0 + sum_last(rows.visits))[:, None])


def gumbel_root_selection(rows: Rows, noise: Array, *, gumbel: Array, logits: Array,
                          num_simulations: int, max_num_considered_actions: int,
                          **qtransform_kwargs) -> Array:
    """mctx's ``gumbel_muzero_root_action_selection``: sequential halving over the
    considered actions (``gumbel`` and the root's ``logits`` [B, A] as given to the search)."""
    del noise
    table = jnp.asarray(seq_halving.get_table_of_considered_visits(
        max_num_considered_actions, num_simulations), jnp.int32)
    num_valid = sum_last(1 - rows.invalid.astype(jnp.int32))
    considered = jnp.minimum(max_num_considered_actions, num_valid)
    simulation = sum_last(rows.visits).astype(jnp.int32)
    considered_visit = table[considered, simulation][:, None]
    completed = qtransform_completed_by_mix_value(rows, **qtransform_kwargs)
    logits = logits - max_last(logits)[:, None]
    penalty = jnp.where(rows.visits == considered_visit, 0.0, -jnp.inf)
    score = jnp.maximum(-1e9, gumbel + logits + completed) + penalty
    return _masked_argmax(score, rows.invalid)


# -- the search's own state --------------------------------------------------------------------


class _State(NamedTuple):
    """The tree during the search (mctx's ``Tree`` is built from it at the end)."""

    edges: Array          # float32 [B, N, 3, A]  per child: Q, visits, prior (-1: masked)
    nodes: Array          # float32 [B, N, 3]     value, visits, raw value
    children_index: Array  # int32  [B, N, A]
    rewards: Array        # float32 [B, N, A]
    discounts: Array      # float32 [B, N, A]
    logits: Array         # float32 [B, N, A]     prior logits
    parents: Array        # int32   [B, N]
    action_from_parent: Array  # int32 [B, N]
    embeddings: Any       # [B, N, ...]


def _prior_row(logits: Array) -> Array:
    """[B, A]: the softmax of ``logits``, -1 where a logit is masked."""
    return jnp.where(logits <= _MASKED_BELOW, -1.0, jax.nn.softmax(logits, axis=-1))


def _rows(state: _State, node: Array, invalid=None) -> Rows:
    batch, num_nodes = state.nodes.shape[:2]
    flat = jnp.arange(batch) * num_nodes + node
    edges = state.edges.reshape((batch * num_nodes,) + state.edges.shape[2:])[flat]
    own = state.nodes.reshape(batch * num_nodes, 3)[flat]
    prior = edges[:, _PRIOR]
    return Rows(q=edges[:, _Q], visits=edges[:, _VISITS], prior=jnp.maximum(prior, 0.0),
                masked=prior < 0, value=own[:, _VALUE], node_visits=own[:, _NODE_VISITS],
                raw_value=own[:, _RAW], invalid=invalid)


def _edge_at(table: Array, node: Array, action: Array) -> Array:
    """``table[b, node[b], action[b]]`` for a ``[B, N, A]`` table."""
    batch, num_nodes, num_actions = table.shape
    return table.reshape(-1)[(jnp.arange(batch) * num_nodes + node) * num_actions + action]


def _init(root: mctx.RootFnOutput, num_nodes: int) -> _State:
    batch, num_actions = root.prior_logits.shape
    dtype = root.prior_logits.dtype
    nodes = jnp.zeros((batch, num_nodes, 3), dtype).at[:, 0].set(
        jnp.stack([root.value, jnp.ones_like(root.value), root.value], axis=-1))
    edges = jnp.zeros((batch, num_nodes, 3, num_actions), dtype).at[:, 0, _PRIOR].set(
        _prior_row(root.prior_logits))
    embeddings = jax.tree_util.tree_map(
        lambda x: jnp.zeros((batch, num_nodes) + x.shape[1:], x.dtype).at[:, 0].set(x), root.embedding)
    return _State(
        edges=edges, nodes=nodes,
        children_index=jnp.full((batch, num_nodes, num_actions), Tree.UNVISITED, jnp.int32),
        rewards=jnp.zeros((batch, num_nodes, num_actions), dtype),
        discounts=jnp.zeros((batch, num_nodes, num_actions), dtype),
        logits=jnp.zeros((batch, num_nodes, num_actions), dtype).at[:, 0].set(root.prior_logits),
        parents=jnp.full((batch, num_nodes), Tree.NO_PARENT, jnp.int32),
        action_from_parent=jnp.full((batch, num_nodes), Tree.NO_PARENT, jnp.int32),
        embeddings=embeddings)


# -- walk, expand, backup ---------------------------------------------------------------------


class _Walk(NamedTuple):
    """Each game's walk, [B] per field, and its path so far."""

    node: Array        # int32  the node of the last selection
    action: Array      # int32  the action selected there
    child: Array       # int32  the node that action leads to (UNVISITED: none yet)
    depth: Array       # int32  the child's depth (the path's length)
    going_on: Array    # bool   the walk goes on into ``child``
    path_nodes: Array  # int32 [B, D]  the node at each depth (num_nodes past the path's end)
    path_actions: Array  # int32 [B, D]  the action taken there


def simulate(state: _State, root_select: Select, interior_select: Select, noise: Array,
             invalid: Array, max_depth: int, path_depth: int,
             stop_at_finished: bool) -> tuple[_State, _Walk]:
    """Each game's walk from its root to an unexpanded action (or ``max_depth``, or with
    ``stop_at_finished`` the edge into a finished game), in lockstep over the batch."""
    batch, num_nodes = state.nodes.shape[:2]
    rows_b = jnp.arange(batch)

    def step(state, node, depth, select, invalid, path_nodes, path_actions) -> _Walk:
        action = select(_rows(state, node, invalid), noise).astype(jnp.int32)
        child = _edge_at(state.children_index, node, action)
        path_nodes = path_nodes.at[rows_b, depth].set(node, mode="drop")
        path_actions = path_actions.at[rows_b, depth].set(action, mode="drop")
        depth = depth + 1
        going_on = (child != Tree.UNVISITED) & (depth < max_depth)
        if stop_at_finished:
            going_on = going_on & (_edge_at(state.discounts, node, action) != 0)
        return _Walk(node=node, action=action, child=child, depth=depth, going_on=going_on,
                     path_nodes=path_nodes, path_actions=path_actions)

    empty = jnp.full((batch, path_depth), num_nodes, jnp.int32)
    walk = step(state, jnp.zeros(batch, jnp.int32), jnp.zeros(batch, jnp.int32), root_select, invalid,
                empty, jnp.zeros_like(empty))

    def one_level(carry):
        state, walk = carry
        on = walk.going_on
        # a finished walk records at depth path_depth (dropped) and keeps its fields
        deeper = step(state, jnp.where(on, walk.child, 0), jnp.where(on, walk.depth, path_depth),
                      interior_select, None, walk.path_nodes, walk.path_actions)
        keep = lambda new, old: jnp.where(on, new, old)  # noqa: E731
        return state, deeper._replace(
            node=keep(deeper.node, walk.node), action=keep(deeper.action, walk.action),
            child=keep(deeper.child, walk.child), depth=keep(deeper.depth, walk.depth),
            going_on=on & deeper.going_on)

    # the tree rides in the loop's carry, unchanged: closed over, XLA would copy it into the loop
    return jax.lax.while_loop(lambda carry: jnp.any(carry[1].going_on), one_level, (state, walk))


def expand(params: Any, key: Array, state: _State, recurrent_fn, parent: Array, action: Array,
           child: Array) -> tuple[_State, Array]:
    """Evaluate ``action`` at ``parent`` into node ``child`` (mctx's ``expand``: a node
    evaluated again keeps its statistics but takes the new value); ``(state, value [B])``."""
    batch = parent.shape[0]
    b = jnp.arange(batch)
    embedding = jax.tree_util.tree_map(lambda x: x[b, parent], state.embeddings)
    step, embedding = recurrent_fn(params, key, action, embedding)
    chex.assert_shape(step.prior_logits, [batch, state.logits.shape[-1]])
    visits = state.nodes[b, child, _NODE_VISITS] + 1.0
    return state._replace(
        nodes=state.nodes.at[b, child].set(jnp.stack([step.value, visits, step.value], axis=-1)),
        edges=state.edges.at[b, child, _PRIOR].set(_prior_row(step.prior_logits)),
        logits=state.logits.at[b, child].set(step.prior_logits),
        embeddings=jax.tree_util.tree_map(lambda t, s: t.at[b, child].set(s), state.embeddings, embedding),
        children_index=state.children_index.at[b, parent, action].set(child),
        rewards=state.rewards.at[b, parent, action].set(step.reward),
        discounts=state.discounts.at[b, parent, action].set(step.discount),
        parents=state.parents.at[b, child].set(parent),
        action_from_parent=state.action_from_parent.at[b, child].set(action)), step.value


def backward(state: _State, walk: _Walk, leaf_value: Array) -> _State:
    """Back ``leaf_value`` [B] (the new leaf's value) up each game's path, mctx's update:
    along the path ``G = r + gamma G'``; each node's value becomes the mean of the returns
    through it, each edge's Q ``r + gamma * (its child's new value)``, visits + 1.

    Chunks of :data:`CHUNK` levels from the deepest path's end up to the root, one
    vectorised update per chunk; levels past a path's end pass ``G`` through unchanged."""
    batch, num_nodes, _, num_actions = state.edges.shape
    b = jnp.arange(batch)[:, None]
    num_chunks = (jnp.max(walk.depth) + CHUNK - 1) // CHUNK

    def chunk(carry):
        c, state, ret, child_value = carry        # ret: G at level (c + 1) * CHUNK
        start = c * CHUNK
        nodes = jax.lax.dynamic_slice_in_dim(walk.path_nodes, start, CHUNK, axis=1)     # [B, K]
        actions = jax.lax.dynamic_slice_in_dim(walk.path_actions, start, CHUNK, axis=1)
        on = nodes < num_nodes
        safe = jnp.where(on, nodes, 0)
        edge = (b * num_nodes + safe) * num_actions + actions                           # [B, K]
        reward = jnp.where(on, state.rewards.reshape(-1)[edge], 0.0)
        discount = jnp.where(on, state.discounts.reshape(-1)[edge], 1.0)
        returns = []
        for k in reversed(range(CHUNK)):           # G_l = r_l + gamma_l G_{l+1}
            ret = reward[:, k] + discount[:, k] * ret
            returns.append(ret)
        returns = jnp.stack(returns[::-1], axis=1)                                     # [B, K]
        own_index = b * num_nodes + safe
        own = state.nodes.reshape(-1, 3)[own_index]                                    # [B, K, 3]
        count = own[..., _NODE_VISITS]
        value = (own[..., _VALUE] * count + returns) / (count + 1.0)
        # the new value of the child below each level: the next level's, below the chunk the
        # carried one, past the path's end the leaf's
        below = jnp.concatenate([value[:, 1:], child_value[:, None]], axis=1)
        on_below = jnp.concatenate([on[:, 1:], (start + CHUNK < walk.depth)[:, None]], axis=1)
        below = jnp.where(on_below, below, leaf_value[:, None])
        drop_node = jnp.where(on, own_index, batch * num_nodes)
        nodes_flat = state.nodes.reshape(-1, 3).at[drop_node].set(
            jnp.stack([value, count + 1.0, own[..., _RAW]], axis=-1), mode="drop", unique_indices=True)
        row = ((b * num_nodes + safe) * 3) * num_actions + actions                      # channel _Q
        row = jnp.where(on, row, state.edges.size)
        edges_flat = state.edges.reshape(-1)
        q = reward + discount * below
        visits = edges_flat.at[row + _VISITS * num_actions].get(mode="fill", fill_value=0.0) + 1.0
        edges_flat = edges_flat.at[jnp.stack([row, row + _VISITS * num_actions], -1)].set(
            jnp.stack([q, visits], -1), mode="drop", unique_indices=True)
        state = state._replace(nodes=nodes_flat.reshape(state.nodes.shape),
                               edges=edges_flat.reshape(state.edges.shape))
        return c - 1, state, returns[:, 0], value[:, 0]

    _, state, _, _ = jax.lax.while_loop(lambda carry: carry[0] >= 0, chunk,
                                        (num_chunks - 1, state, leaf_value, leaf_value))
    return state


def _to_tree(state: _State, invalid: Array, extra_data: Any) -> Tree:
    b = jnp.arange(state.nodes.shape[0])[:, None, None]
    visited = state.children_index != Tree.UNVISITED
    child_values = state.nodes[b, jnp.maximum(state.children_index, 0), _VALUE]
    return Tree(
        node_visits=state.nodes[..., _NODE_VISITS].astype(jnp.int32),
        raw_values=state.nodes[..., _RAW], node_values=state.nodes[..., _VALUE],
        parents=state.parents, action_from_parent=state.action_from_parent,
        children_index=state.children_index, children_prior_logits=state.logits,
        children_visits=state.edges[:, :, _VISITS].astype(jnp.int32),
        children_rewards=state.rewards, children_discounts=state.discounts,
        children_values=jnp.where(visited, child_values, 0.0), embeddings=state.embeddings,
        root_invalid_actions=invalid, extra_data=extra_data)


def search(params: Any, rng_key: Array, *, root: mctx.RootFnOutput, recurrent_fn,
           root_action_selection_fn: Select, interior_action_selection_fn: Select,
           num_simulations: int, max_depth: int | None = None, invalid_actions: Array | None = None,
           extra_data: Any = None, stop_at_finished: bool = False) -> Tree:
    """``mctx.search`` with batched selection rules ``select(rows, noise) -> action [B]``
    (:class:`Rows`; the root's carry ``invalid``): the same tree.

    ``stop_at_finished``: a walk also ends on the edge into a visited child with discount 0
    (a finished game in :mod:`jaxgames.search.mcts`), as at ``max_depth``.
    """
    batch_size, num_actions = root.prior_logits.shape
    max_depth = num_simulations if max_depth is None else max_depth
    path_depth = -(-min(max_depth, num_simulations) // CHUNK) * CHUNK
    if invalid_actions is None:
        invalid_actions = jnp.zeros_like(root.prior_logits)
    invalid = invalid_actions.astype(bool)
    noise_key, rng_key = key_lib.split(rng_key)
    noise = 1e-7 * key_lib.draw(noise_key, lambda k, lead: jax.random.uniform(
        k, lead + (num_actions,), root.prior_logits.dtype), batch_size)

    def one_simulation(sim, loop_state):
        rng_key, state = loop_state
        rng_key, expand_key = key_lib.split(rng_key)
        state, walk = simulate(state, root_action_selection_fn, interior_action_selection_fn, noise, invalid,
                        max_depth, path_depth, stop_at_finished)
        # the node first expanded by simulation `sim` gets index sim + 1 (0 is the root)
        child = jnp.where(walk.child == Tree.UNVISITED, sim + 1, walk.child)
        state, value = expand(params, expand_key, state, recurrent_fn, walk.node, walk.action, child)
        return rng_key, backward(state, walk, value)

    state = _init(root, num_simulations + 1)
    _, state = jax.lax.fori_loop(0, num_simulations, one_simulation, (rng_key, state))
    return _to_tree(state, invalid_actions, extra_data)


def muzero_policy(params: Any, rng_key: Array, root: mctx.RootFnOutput, recurrent_fn,
                  num_simulations: int, invalid_actions: Array | None = None,
                  max_depth: int | None = None, *, mask_children: bool = False,
                  dirichlet_fraction: chex.Numeric = 0.25, dirichlet_alpha: chex.Numeric = 0.3,
                  pb_c_init: chex.Numeric = 1.25, pb_c_base: chex.Numeric = 19652,
                  temperature: chex.Numeric = 1.0, stop_at_finished: bool = False) -> mctx.PolicyOutput:
    """``mctx.muzero_policy`` (its default qtransform) on :func:`search`; ``mask_children``:
    see :func:`puct_selection`."""
    rng_key, dirichlet_key, search_key = key_lib.split(rng_key, 3)
    # mctx's ``_add_dirichlet_noise`` (the same draw from one key), or each game's from its own
    probs = jax.nn.softmax(root.prior_logits)
    batch, num_actions = probs.shape
    noise = key_lib.draw(dirichlet_key, lambda k, lead: jax.random.dirichlet(
        k, jnp.full([num_actions], dirichlet_alpha), shape=lead), batch)
    noisy = (1 - dirichlet_fraction) * probs + dirichlet_fraction * noise
    root = root.replace(prior_logits=policies._mask_invalid_actions(  # noqa: SLF001
        policies._get_logits_from_probs(noisy), invalid_actions))  # noqa: SLF001

    def select(rows, noise):
        return puct_selection(rows, noise, pb_c_init=pb_c_init, pb_c_base=pb_c_base,
                              mask_children=mask_children)

    tree = search(params, search_key, root=root, recurrent_fn=recurrent_fn, root_action_selection_fn=select,
                  interior_action_selection_fn=select, num_simulations=num_simulations,
                  max_depth=max_depth, invalid_actions=invalid_actions, stop_at_finished=stop_at_finished)
    weights = tree.summary().visit_probs
    logits = policies._apply_temperature(  # noqa: SLF001
        policies._get_logits_from_probs(weights), temperature)  # noqa: SLF001
    action = key_lib.categorical(rng_key, logits)
    return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)


def gumbel_muzero_policy(params: Any, rng_key: Array, root: mctx.RootFnOutput, recurrent_fn,
                         num_simulations: int, invalid_actions: Array | None = None,
                         max_depth: int | None = None, *, max_num_considered_actions: int = 16,
                         gumbel_scale: chex.Numeric = 1.0,
                         stop_at_finished: bool = False) -> mctx.PolicyOutput:
    """``mctx.gumbel_muzero_policy`` (its default qtransform) on :func:`search`."""
    root = root.replace(prior_logits=policies._mask_invalid_actions(  # noqa: SLF001
        root.prior_logits, invalid_actions))
    rng_key, gumbel_key = key_lib.split(rng_key)
    batch, num_actions = root.prior_logits.shape
    gumbel = gumbel_scale * key_lib.draw(gumbel_key, lambda k, lead: jax.random.gumbel(
        k, lead + (num_actions,), root.prior_logits.dtype), batch)

    def root_select(rows, noise):
        return gumbel_root_selection(rows, noise, gumbel=gumbel, logits=root.prior_logits,
                                     num_simulations=num_simulations,
                                     max_num_considered_actions=max_num_considered_actions)

    tree = search(params, rng_key, root=root, recurrent_fn=recurrent_fn,
                  root_action_selection_fn=root_select,
                  interior_action_selection_fn=gumbel_interior_selection,
                  num_simulations=num_simulations, max_depth=max_depth, invalid_actions=invalid_actions,
                  extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel),
                  stop_at_finished=stop_at_finished)
    summary = tree.summary()
    considered_visit = jnp.max(summary.visit_counts, axis=-1, keepdims=True)
    completed_q = jax.vmap(mctx.qtransform_completed_by_mix_value, in_axes=[0, None])(tree, Tree.ROOT_INDEX)
    score = seq_halving.score_considered(considered_visit, gumbel, root.prior_logits, completed_q,
                                         summary.visit_counts)
    action = action_selection.masked_argmax(score, invalid_actions)
    weights = jax.nn.softmax(policies._mask_invalid_actions(  # noqa: SLF001
        root.prior_logits + completed_q, invalid_actions))
    return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)


__all__ = [
    "CHUNK",
    "Rows",
    "argmax_last",
    "backward",
    "gumbel_interior_selection",
    "gumbel_muzero_policy",
    "gumbel_root_selection",
    "max_last",
    "min_last",
    "muzero_policy",
    "puct_selection",
    "qtransform_by_parent_and_siblings",
    "qtransform_completed_by_mix_value",
    "search",
]
