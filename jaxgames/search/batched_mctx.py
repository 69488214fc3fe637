"""mctx's search and policies with a backward pass that updates the tree in place.

``mctx.search`` backs each simulation's value up with a ``jax.vmap`` of a ``while_loop`` whose
carry is the whole tree. Vmapped, the loop's predicate is batched, and JAX's batching rule
then selects between the old and the new carry at every step: every array of the tree
(``[B, N, A]`` children statistics and the ``[B, N, ...]`` embeddings) is copied once per level
of the deepest path, each simulation. The cost grows with simulations times depth times tree
size; on a CPU with the Hex network it left the network 12% of the search time at 128
simulations and 1% at 200 (``bench/hex_selfplay.py``, docs/benchmarks.md).

:func:`search` is mctx's loop with mctx's own ``simulate``, ``expand`` and tree (imported from
``mctx._src``, pinned by the differential tests in ``tests/search/test_batched_mctx.py``) and
:func:`backward`, which walks all games up together under one scalar predicate and scatters
only the ``B`` entries each step changes, so XLA updates the tree in place.
:func:`muzero_policy` and :func:`gumbel_muzero_policy` are mctx's policies on it, with mctx's
arguments and key use: for the same inputs they return mctx's outputs (tested).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import chex
import jax
import jax.numpy as jnp
import mctx
from mctx._src import action_selection, policies, seq_halving
from mctx._src.search import expand, instantiate_tree_from_root

Array = jax.Array
Tree = mctx.Tree


def simulate(keys: Array, tree: Tree, root_select, interior_select, max_depth: int,
             stop_at=None) -> tuple[Tree, Array, Array]:
    """``(tree, parent int32 [B], action int32 [B])``: each game's walk from its root to an
    unexpanded action (or ``max_depth``), mctx's ``simulate`` with its key use.

    ``stop_at(embeddings [B, ...]) -> bool [B]``: also end the walk on the edge into a node
    for which it is true (a finished game), as at ``max_depth``: that node is evaluated again
    instead of growing a line of copies of the finished game below it.

    The tree rides through the loop's carry unchanged, so XLA neither copies it into the loop
    (as for a closed-over operand still live afterwards) nor selects it per step (as under a
    vmapped loop); the root step, the same for every game, runs once before the loop.
    """
    batch = jnp.arange(keys.shape[0])

    def step(tree, select, keys, node, depth) -> _Walk:
        """One level: select at ``node``, look at the child it leads to."""
        pairs = jax.vmap(jax.random.split)(keys)
        action = jax.vmap(select)(pairs[:, 1], tree, node, depth)
        child = tree.children_index[batch, node, action]
        depth = depth + 1
        going_on = (child != Tree.UNVISITED) & (depth < max_depth)
        if stop_at is not None:
            below = jax.tree_util.tree_map(lambda x: x[batch, jnp.maximum(child, 0)], tree.embeddings)
            going_on = going_on & ~stop_at(below)
        return _Walk(node=node, keys=pairs[:, 0], action=action, child=child, depth=depth,
                     going_on=going_on)

    root = jnp.full(batch.shape, Tree.ROOT_INDEX, jnp.int32)
    depth = jnp.zeros(batch.shape, tree.children_prior_logits.dtype)
    walk = step(tree, lambda k, t, n, d: root_select(k, t, n), keys, root, depth)

    def one_level(carry):
        tree, walk = carry
        deeper = step(tree, interior_select, walk.keys,
                      jnp.where(walk.going_on, walk.child, Tree.ROOT_INDEX), walk.depth)
        # games whose walk has ended keep it as it is
        walk = jax.tree_util.tree_map(lambda a, b: jnp.where(walk.going_on, a, b), deeper, walk)
        return tree, walk

    tree, walk = jax.lax.while_loop(lambda carry: jnp.any(carry[1].going_on), one_level, (tree, walk))
    return tree, walk.node, walk.action


class _Walk(NamedTuple):
    """Each game's walk, [B] per field: the node it selects at and what it selected."""

    node: Array        # int32  the node of the last selection
    keys: Array        # the walk's keys for the next levels
    action: Array      # int32  the action selected there
    child: Array       # int32  the node that action leads to (UNVISITED: none yet)
    depth: Array       # float  the child's depth
    going_on: Array    # bool   the walk goes on into ``child``


def backward(tree: Tree, leaf_index: Array) -> Tree:
    """Back up the value of every game's new leaf ``leaf_index`` int32 [B] to its root."""
    batch = jnp.arange(leaf_index.shape[0])

    def active(loop_state) -> Array:
        return loop_state[2] != Tree.ROOT_INDEX

    def body(loop_state):
        tree, leaf_value, index = loop_state
        live = active(loop_state)
        # a game already at its root writes its parent-0 entries back unchanged
        parent = jnp.where(live, tree.parents[batch, index], Tree.ROOT_INDEX)
        action = jnp.where(live, tree.action_from_parent[batch, index], 0)
        count = tree.node_visits[batch, parent]
        reward = tree.children_rewards[batch, parent, action]
        new_leaf_value = reward + tree.children_discounts[batch, parent, action] * leaf_value
        parent_value = (tree.node_values[batch, parent] * count + new_leaf_value) / (count + 1.0)
        tree = tree.replace(
            node_values=tree.node_values.at[batch, parent].set(
                jnp.where(live, parent_value, tree.node_values[batch, parent])),
            node_visits=tree.node_visits.at[batch, parent].set(jnp.where(live, count + 1, count)),
            children_values=tree.children_values.at[batch, parent, action].set(
                jnp.where(live, tree.node_values[batch, index],
                          tree.children_values[batch, parent, action])),
            children_visits=tree.children_visits.at[batch, parent, action].set(
                tree.children_visits[batch, parent, action] + live.astype(jnp.int32)))
        return tree, jnp.where(live, new_leaf_value, leaf_value), jnp.where(live, parent, index)

    leaf_index = leaf_index.astype(jnp.int32)
    loop_state = (tree, tree.node_values[batch, leaf_index], leaf_index)
    tree, _, _ = jax.lax.while_loop(lambda s: jnp.any(active(s)), body, loop_state)
    return tree


def search(params: Any, rng_key: Array, *, root: mctx.RootFnOutput, recurrent_fn,
           root_action_selection_fn, interior_action_selection_fn, num_simulations: int,
           max_depth: int | None = None, invalid_actions: Array | None = None,
           extra_data: Any = None, stop_at=None) -> Tree:
    """``mctx.search`` (same arguments and result) with the in-place :func:`backward`;
    ``stop_at`` as in :func:`simulate` (None: mctx's walk)."""
    batch_size = root.value.shape[0]
    batch = jnp.arange(batch_size)
    max_depth = num_simulations if max_depth is None else max_depth
    if invalid_actions is None:
        invalid_actions = jnp.zeros_like(root.prior_logits)

    def one_simulation(sim, loop_state):
        rng_key, tree = loop_state
        rng_key, simulate_key, expand_key = jax.random.split(rng_key, 3)
        tree, parent, action = simulate(jax.random.split(simulate_key, batch_size), tree,
                                        root_action_selection_fn, interior_action_selection_fn,
                                        max_depth, stop_at)
        # the node first expanded by simulation `sim` gets index sim + 1 (0 is the root)
        child = tree.children_index[batch, parent, action]
        child = jnp.where(child == Tree.UNVISITED, sim + 1, child)
        tree = expand(params, expand_key, tree, recurrent_fn, parent, action, child)
        return rng_key, backward(tree, child)

    tree = instantiate_tree_from_root(root, num_simulations, root_invalid_actions=invalid_actions,
                                      extra_data=extra_data)
    _, tree = jax.lax.fori_loop(0, num_simulations, one_simulation, (rng_key, tree))
    return tree


def muzero_policy(params: Any, rng_key: Array, root: mctx.RootFnOutput, recurrent_fn,
                  num_simulations: int, invalid_actions: Array | None = None,
                  max_depth: int | None = None, *,
                  qtransform=mctx.qtransform_by_parent_and_siblings,
                  dirichlet_fraction: chex.Numeric = 0.25, dirichlet_alpha: chex.Numeric = 0.3,
                  pb_c_init: chex.Numeric = 1.25, pb_c_base: chex.Numeric = 19652,
                  temperature: chex.Numeric = 1.0, stop_at=None) -> mctx.PolicyOutput:
    """``mctx.muzero_policy`` on :func:`search` (``stop_at``: see :func:`simulate`)."""
    rng_key, dirichlet_key, search_key = jax.random.split(rng_key, 3)
    noisy = policies._add_dirichlet_noise(  # noqa: SLF001 - mctx's own noise, for equal outputs
        dirichlet_key, jax.nn.softmax(root.prior_logits),
        dirichlet_fraction=dirichlet_fraction, dirichlet_alpha=dirichlet_alpha)
    root = root.replace(prior_logits=policies._mask_invalid_actions(  # noqa: SLF001
        policies._get_logits_from_probs(noisy), invalid_actions))  # noqa: SLF001
    select = functools.partial(mctx.muzero_action_selection, pb_c_base=pb_c_base,
                               pb_c_init=pb_c_init, qtransform=qtransform)
    tree = search(params, search_key, root=root, recurrent_fn=recurrent_fn,
                  root_action_selection_fn=functools.partial(select, depth=0),
                  interior_action_selection_fn=select, num_simulations=num_simulations,
                  max_depth=max_depth, invalid_actions=invalid_actions, stop_at=stop_at)
    weights = tree.summary().visit_probs
    logits = policies._apply_temperature(  # noqa: SLF001
        policies._get_logits_from_probs(weights), temperature)  # noqa: SLF001
    action = jax.random.categorical(rng_key, logits)
    return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)


def gumbel_muzero_policy(params: Any, rng_key: Array, root: mctx.RootFnOutput, recurrent_fn,
                         num_simulations: int, invalid_actions: Array | None = None,
                         max_depth: int | None = None, *,
                         qtransform=mctx.qtransform_completed_by_mix_value,
                         max_num_considered_actions: int = 16,
                         gumbel_scale: chex.Numeric = 1.0, stop_at=None) -> mctx.PolicyOutput:
    """``mctx.gumbel_muzero_policy`` on :func:`search` (``stop_at``: see :func:`simulate`)."""
    root = root.replace(prior_logits=policies._mask_invalid_actions(  # noqa: SLF001
        root.prior_logits, invalid_actions))
    rng_key, gumbel_key = jax.random.split(rng_key)
    gumbel = gumbel_scale * jax.random.gumbel(gumbel_key, root.prior_logits.shape,
                                              root.prior_logits.dtype)
    tree = search(
        params, rng_key, root=root, recurrent_fn=recurrent_fn,
        root_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_root_action_selection, num_simulations=num_simulations,
            max_num_considered_actions=max_num_considered_actions, qtransform=qtransform),
        interior_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_interior_action_selection, qtransform=qtransform),
        num_simulations=num_simulations, max_depth=max_depth, invalid_actions=invalid_actions,
        extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel), stop_at=stop_at)
    summary = tree.summary()
    considered_visit = jnp.max(summary.visit_counts, axis=-1, keepdims=True)
    completed_q = jax.vmap(qtransform, in_axes=[0, None])(tree, Tree.ROOT_INDEX)
    score = seq_halving.score_considered(considered_visit, gumbel, root.prior_logits, completed_q,
                                         summary.visit_counts)
    action = action_selection.masked_argmax(score, invalid_actions)
    weights = jax.nn.softmax(policies._mask_invalid_actions(  # noqa: SLF001
        root.prior_logits + completed_q, invalid_actions))
    return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)


__all__ = ["backward", "gumbel_muzero_policy", "muzero_policy", "search"]
