"""The in-place search equals mctx's: the same trees and outputs for the same inputs and keys."""

import chex
import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from jaxgames.search import batched_mctx

B, A, SIMS = 6, 5, 24


def _model():
    """A random deterministic model: rewards, discounts ±1, values and logits from the
    embedding (an int32 path code), some actions invalid at the root."""
    def features(emb, salt):
        x = jnp.sin(emb[:, None].astype(jnp.float32) * 0.37 + salt * 1.3 + jnp.arange(A) * 0.71)
        return x * 3.0

    def recurrent_fn(params, key, action, emb):
        del params, key
        new = emb * 7 + action + 1
        out = mctx.RecurrentFnOutput(
            reward=jnp.tanh(features(new, 1.0)[:, 0]),
            discount=jnp.where(new % 5 == 0, 0.0, -1.0),
            prior_logits=features(new, 2.0),
            value=jnp.tanh(features(new, 3.0)[:, 1]))
        return out, new

    emb = jnp.arange(B, dtype=jnp.int32)
    root = mctx.RootFnOutput(prior_logits=features(emb, 2.0), value=jnp.zeros(B), embedding=emb)
    invalid = (jnp.arange(A)[None, :] == (emb[:, None] % A)).astype(jnp.float32)
    return root, recurrent_fn, invalid


def _assert_same(ours, theirs):
    chex.assert_trees_all_close(ours.search_tree, theirs.search_tree, rtol=1e-6, atol=1e-6)
    chex.assert_trees_all_close(ours.action_weights, theirs.action_weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ours.action, theirs.action)


def _both(policy_name, **kwargs):
    """Ours and mctx's policy, each jitted once, as ``f(key) -> PolicyOutput``."""
    root, recurrent_fn, invalid = _model()

    def bind(policy):
        return jax.jit(lambda key: policy(None, key, root, recurrent_fn, invalid_actions=invalid, **kwargs))

    return bind(getattr(batched_mctx, policy_name)), bind(getattr(mctx, policy_name))


@pytest.mark.parametrize("max_depth", [None, 3])
def test_muzero_policy_equals_mctx(max_depth):
    ours_fn, theirs_fn = _both("muzero_policy", num_simulations=SIMS, max_depth=max_depth,
                               dirichlet_fraction=0.25, temperature=1.0)
    for seed in range(3):
        ours, theirs = ours_fn(jax.random.key(seed)), theirs_fn(jax.random.key(seed))
        _assert_same(ours, theirs)
        # deep enough to exercise the walk and the backup over several levels
        assert int(np.max(np.asarray(theirs.search_tree.node_visits)[:, 0])) == SIMS + 1


def test_gumbel_policy_equals_mctx():
    ours_fn, theirs_fn = _both("gumbel_muzero_policy", num_simulations=SIMS, max_num_considered_actions=4)
    for seed in range(3):
        _assert_same(ours_fn(jax.random.key(seed)), theirs_fn(jax.random.key(seed)))


def test_backward_leaves_finished_games_alone():
    """Games whose walk is already at the root are not touched while others walk up."""
    root, recurrent_fn, invalid = _model()
    tree = jax.jit(lambda key: batched_mctx.muzero_policy(
        None, key, root, recurrent_fn, 8, invalid_actions=invalid).search_tree)(jax.random.key(0))
    leaf = np.zeros(B, np.int32)
    leaf[0] = 8                      # only game 0 backs up from its last node
    after = jax.jit(batched_mctx.backward)(tree, jnp.asarray(leaf))
    for name in ("node_values", "node_visits", "children_values", "children_visits"):
        np.testing.assert_array_equal(np.asarray(getattr(after, name))[1:], np.asarray(getattr(tree, name))[1:])
    assert int(after.node_visits[0, 0]) == int(tree.node_visits[0, 0]) + 1


def test_stop_at_ends_walks_at_finished_games():
    """With ``stop_at`` no node is ever expanded below a finished one (the model's finished
    positions: discount 0, i.e. embedding % 5 == 0); the search still spends every
    simulation."""
    root, recurrent_fn, invalid = _model()
    finished = lambda emb: emb % 5 == 0  # noqa: E731
    tree = jax.jit(lambda key: batched_mctx.muzero_policy(
        None, key, root, recurrent_fn, SIMS, invalid_actions=invalid, stop_at=finished).search_tree)(
        jax.random.key(0))
    parents = np.asarray(tree.parents)[:, 1:]
    emb = np.asarray(tree.embeddings)
    parent_emb = np.take_along_axis(emb, np.maximum(parents, 0), axis=1)
    assert not np.any((parents >= 0) & (parent_emb % 5 == 0) & (parents != 0))
    np.testing.assert_array_equal(np.asarray(tree.node_visits)[:, 0], SIMS + 1)
    expanded = np.asarray(tree.node_visits)[:, 1:] > 0
    assert np.any(expanded & (emb[:, 1:] % 5 == 0))  # finished positions were reached
    # nothing below a finished game changes anything above it: the root's statistics are
    # mctx's (the walk's keys are drawn level by level, so the levels above are the same)
    plain = jax.jit(lambda key: batched_mctx.muzero_policy(
        None, key, root, recurrent_fn, SIMS, invalid_actions=invalid).search_tree)(jax.random.key(0))
    for name in ("visit_counts", "qvalues", "value"):
        np.testing.assert_allclose(getattr(tree.summary(), name), getattr(plain.summary(), name),
                                   rtol=1e-6, atol=1e-6)
