"""The batched search equals mctx's: the same trees and outputs for the same inputs and keys.

Only the tie-breaking noise differs from mctx's (drawn once per search, not per node visit),
so the models here never tie: every prior and value comes from a distinct input.
"""

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from jaxgames.search import batched_mctx

B, A, SIMS = 6, 5, 24


def _model(line: bool = False):
    """A random deterministic model: rewards, discounts ±1 (0 at "finished" embeddings, code
    % 5 == 0), values and logits from an integer hash of the embedding (a path code kept
    below 9973), exact in float32, some actions invalid at the root. ``line``: every value -0.4
    for the mover, which makes each visited child look better than the unvisited ones and grows
    lines as deep as the simulations (an untrained network's trees), with distinct rewards
    to keep the Q values apart."""
    def features(emb, salt):
        # an integer hash, then multiples of 2^-15 in [-1, 1): exact in float32 whatever the
        # compiler does, so both searches see the same bits (a sin() here was rounded
        # differently by the two programs under the suite's XLA flags)
        code = (emb[:, None] * 131 + salt * 977 + jnp.arange(A) * 389) % 65521
        return (code - 32760).astype(jnp.float32) * (1.0 / 32768)

    def recurrent_fn(params, key, action, emb):
        del params, key
        new = (emb * 7 + action + 1) % 9973
        value = jnp.full(new.shape, -0.4) if line else features(new, 3)[:, 1]
        out = mctx.RecurrentFnOutput(
            reward=(1.0 / 128 if line else 1.0) * features(new, 1)[:, 0],
            discount=jnp.where(new % 5 == 0, 0.0, -1.0),
            prior_logits=3.0 * features(new, 2),
            value=value)
        return out, new

    emb = jnp.arange(B, dtype=jnp.int32) + 1
    root = mctx.RootFnOutput(prior_logits=3.0 * features(emb, 2), value=jnp.zeros(B), embedding=emb)
    invalid = (jnp.arange(A)[None, :] == (emb[:, None] % A)).astype(jnp.float32)
    return root, recurrent_fn, invalid


def _assert_same(ours, theirs):
    chex.assert_trees_all_close(ours.search_tree, theirs.search_tree, rtol=1e-5, atol=1e-5)
    chex.assert_trees_all_close(ours.action_weights, theirs.action_weights, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ours.action, theirs.action)


def _both(policy_name, line=False, **kwargs):
    """Ours and mctx's policy, each jitted once, as ``f(key) -> PolicyOutput``."""
    root, recurrent_fn, invalid = _model(line)

    def bind(policy):
        return jax.jit(lambda key: policy(None, key, root, recurrent_fn, invalid_actions=invalid, **kwargs))

    return bind(getattr(batched_mctx, policy_name)), bind(getattr(mctx, policy_name))


def _depth(tree) -> int:
    """The deepest node of the batch (the root has depth 0)."""
    parents = np.asarray(tree.parents)
    depth = np.zeros_like(parents)
    for node in range(1, parents.shape[1]):
        depth[:, node] = np.where(parents[:, node] >= 0, depth[np.arange(len(depth)), np.maximum(parents[:, node], 0)] + 1, 0)
    return int(depth.max())


@pytest.mark.parametrize("max_depth,line", [(None, False), (3, False), (None, True)])
def test_muzero_policy_equals_mctx(max_depth, line):
    ours_fn, theirs_fn = _both("muzero_policy", line=line, num_simulations=SIMS, max_depth=max_depth,
                               dirichlet_fraction=0.25, temperature=1.0)
    for seed in range(2):
        ours, theirs = ours_fn(jax.random.key(seed)), theirs_fn(jax.random.key(seed))
        _assert_same(ours, theirs)
        assert int(np.max(np.asarray(theirs.search_tree.node_visits)[:, 0])) == SIMS + 1
    if line:   # paths over several of the backup's chunks
        assert _depth(theirs.search_tree) > batched_mctx.CHUNK


def test_gumbel_policy_equals_mctx():
    ours_fn, theirs_fn = _both("gumbel_muzero_policy", num_simulations=SIMS, max_num_considered_actions=4)
    for seed in range(2):
        _assert_same(ours_fn(jax.random.key(seed)), theirs_fn(jax.random.key(seed)))


def test_reductions_equal_numpy():
    """The integer-keyed reductions: negatives, -inf, ties (the first index wins)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 37)).astype(np.float32)
    x[0, :] = -np.inf
    x[1, 3] = x[1, 30] = 9.0            # a tie: index 3
    x[2, :] = -x[2, :] ** 2 - 1.0        # all negative
    x[3, 5] = np.inf
    np.testing.assert_array_equal(jax.jit(batched_mctx.max_last)(x), x.max(-1))
    np.testing.assert_array_equal(jax.jit(batched_mctx.min_last)(x), x.min(-1))
    np.testing.assert_array_equal(jax.jit(batched_mctx.argmax_last)(x), x.argmax(-1))


def test_stop_at_finished_ends_walks_at_finished_games():
    """With ``stop_at_finished`` no node is ever expanded below a finished one (the model's
    finished positions: discount 0, i.e. embedding % 5 == 0); the search still spends every
    simulation, and the root's statistics are mctx's where no walk went below one."""
    root, recurrent_fn, invalid = _model()
    tree = jax.jit(lambda key: batched_mctx.muzero_policy(
        None, key, root, recurrent_fn, SIMS, invalid_actions=invalid, stop_at_finished=True).search_tree)(
        jax.random.key(0))
    parents = np.asarray(tree.parents)[:, 1:]
    emb = np.asarray(tree.embeddings)
    parent_emb = np.take_along_axis(emb, np.maximum(parents, 0), axis=1)
    assert not np.any((parents >= 0) & (parent_emb % 5 == 0) & (parents != 0))
    np.testing.assert_array_equal(np.asarray(tree.node_visits)[:, 0], SIMS + 1)
    expanded = np.asarray(tree.node_visits)[:, 1:] > 0
    assert np.any(expanded & (emb[:, 1:] % 5 == 0))  # finished positions were reached
    # a finished node is evaluated again, never searched below: its visits count its
    # evaluations, its Q stays its exact reward (value 0 below a discount of 0)
    visits = np.asarray(tree.node_visits)
    finished = (emb % 5 == 0) & (visits > 1)
    finished[:, 0] = False
    assert finished.any()
    np.testing.assert_array_equal(np.asarray(tree.node_values)[finished], np.asarray(tree.raw_values)[finished])
