"""jaxgames.search.symmetry: the half turn, and a network averaged over a position's images.

The networks here are hand-made functions of the observation, so every expected output is
worked out from the definition, not read from a run."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.search import symmetry

N = 3
CELLS = N * N
ACTIONS = CELLS + 1            # the cells and one action that is no cell (Hex's swap)
HALF_TURN = symmetry.reverse_cells(CELLS)


def boards(batch: int = 4) -> jax.Array:
    """float32 [batch, N, N, 2], distinct values everywhere (no board is its own image)."""
    return jnp.arange(batch * CELLS * 2, dtype=jnp.float32).reshape(batch, N, N, 2) / 10.0


def equivariant_net(params, obs):
    """Logits that turn with the board (cell logits = plane 0) and a value that does not
    (the top-left cell)."""
    cells = obs[..., 0].reshape(obs.shape[0], CELLS)
    logits = jnp.concatenate([cells, jnp.full((obs.shape[0], 1), params)], axis=1)
    return logits, jnp.tanh(obs[:, 0, 0, 0])


def test_the_half_turn_is_an_involution():
    obs, actions = boards(1)[0], jnp.arange(ACTIONS, dtype=jnp.float32)
    image, moved = HALF_TURN(obs, actions)
    np.testing.assert_array_equal(image[0, 0], obs[N - 1, N - 1])
    np.testing.assert_array_equal(moved[:CELLS], actions[:CELLS][::-1])
    assert moved[CELLS] == actions[CELLS]          # the non-cell action stays
    back, again = HALF_TURN(image, moved)
    np.testing.assert_array_equal(back, obs)
    np.testing.assert_array_equal(again, actions)


def test_an_equivariant_policy_is_unchanged_and_the_values_are_averaged():
    obs = boards()
    log_probs, value = symmetry.averaged_apply(equivariant_net, [HALF_TURN])(0.5, obs)
    logits, _ = equivariant_net(0.5, obs)
    np.testing.assert_allclose(log_probs, jax.nn.log_softmax(logits), atol=1e-5)
    # the value is the mean of the top-left cell's and (the image's top-left) the bottom-right's
    want = 0.5 * (jnp.tanh(obs[:, 0, 0, 0]) + jnp.tanh(obs[:, N - 1, N - 1, 0]))
    np.testing.assert_allclose(value, want, rtol=1e-6)
    assert not np.allclose(value, jnp.tanh(obs[:, 0, 0, 0]))


def test_a_fixed_policy_becomes_the_mean_of_it_and_its_mirror_image():
    prior = jnp.array([5.0, 1, 0, 0, 0, 0, 0, 0, -1, 2.0])      # ignores the board

    def net(params, obs):
        return jnp.broadcast_to(prior, (obs.shape[0], ACTIONS)), jnp.zeros(obs.shape[0])

    log_probs, _ = symmetry.averaged_apply(net, [HALF_TURN])(None, boards(2))
    p = np.asarray(jax.nn.softmax(prior))
    mirrored = np.concatenate([p[:CELLS][::-1], p[CELLS:]])
    for row in np.exp(np.asarray(log_probs)):
        np.testing.assert_allclose(row, 0.5 * (p + mirrored), rtol=1e-5)
        assert row.sum() == pytest.approx(1.0, abs=1e-5)


def test_the_images_go_through_the_network_in_one_batch():
    def net(params, obs):              # sin marks one evaluation of the network in the program
        logits, value = equivariant_net(params, obs)
        return logits, jnp.sin(value)

    jaxpr = jax.make_jaxpr(symmetry.averaged_apply(net, [HALF_TURN]))(0.0, boards(4))
    sins = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "sin"]
    assert [e.invars[0].aval.shape for e in sins] == [(8,)]    # 4 positions and 4 images, together


def test_no_symmetry_is_refused():
    with pytest.raises(ValueError, match="at least one symmetry"):
        symmetry.averaged_apply(equivariant_net, [])
