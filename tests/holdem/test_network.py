"""AlphaHoldem's pseudo-Siamese network (jaxgames/holdem/network.py): shapes, illegal actions
masked to probability exactly 0, separate tower weights, the sizes' parameter counts (the
source's from shapes alone), and the network on real encoded observations."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.holdem import encode as E
from jaxgames.holdem import network as N

B = 8
NETS = {tower: N.make_network(tower=tower) for tower in N.TOWERS}
# Jitted once per module.
INIT = {tower: jax.jit(lambda key, net=net: N.init_params(net, key)) for tower, net in NETS.items()}
APPLY = {tower: jax.jit(net.apply) for tower, net in NETS.items()}


@functools.cache
def params_of(tower: str):
    """The tower's parameters, made on first use rather than at import: every pytest-xdist
    worker imports every test module to collect it, and this init took 4 s of that."""
    return INIT[tower](jax.random.key(0))


def random_inputs(seed: int = 0, batch: int = B):
    rng = np.random.default_rng(seed)
    cards = (rng.random((batch, *E.CARD_SHAPE)) < 0.1).astype(np.int8)
    actions = (rng.random((batch, *E.ACTION_SHAPE)) < 0.1).astype(np.int8)
    legal = rng.random((batch, 9)) < 0.5
    legal[np.arange(batch), rng.integers(0, 9, batch)] = True   # at least one legal action
    return jnp.asarray(cards), jnp.asarray(actions), jnp.asarray(legal)


@pytest.mark.parametrize("tower", N.TOWERS)
def test_shapes_and_illegal_actions_get_probability_zero(tower):
    cards, actions, legal = random_inputs()
    logits, value = APPLY[tower](params_of(tower), cards, actions, legal)
    assert logits.shape == (B, 9) and logits.dtype == jnp.float32
    assert value.shape == (B,) and value.dtype == jnp.float32
    logits, value, legal = np.asarray(logits), np.asarray(value), np.asarray(legal)
    assert np.isfinite(logits).all() and np.isfinite(value).all()    # masked, not -inf
    assert (logits[~legal] == N.ILLEGAL_LOGIT).all()
    probs = np.asarray(jax.nn.softmax(jnp.asarray(logits)))
    assert (probs[~legal] == 0.0).all()                               # exactly, not just small
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-6)
    # the policy head starts small: nearly uniform over the legal actions
    uniform = legal / legal.sum(axis=1, keepdims=True)
    assert np.abs(probs - uniform).max() < 0.05


@pytest.mark.parametrize("tower", N.TOWERS)
def test_the_towers_have_separate_weights(tower):
    """Each tower's features depend on its own weights only: the gradient of the card
    features with respect to the action tower is zero, and the other way round (shared
    weights would give both a gradient). The towers have the same shape past their inputs."""
    net, params = NETS[tower], params_of(tower)
    cards, actions, _ = random_inputs(1)

    def features(p, which):
        return net.apply(p, cards, actions, method=N.PseudoSiamese.embed)[which].sum()

    # jitted: op by op, each primitive of the gradient compiles on its own (22 s in the suite)
    grad = jax.jit(jax.grad(features), static_argnums=1)
    for which, own, other in ((0, "cards_tower", "actions_tower"), (1, "actions_tower", "cards_tower")):
        grads = grad(params, which)["params"]
        assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads[other]))
        assert any(float(jnp.abs(g).max()) > 0.0 for g in jax.tree_util.tree_leaves(grads[own]))
        assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree_util.tree_leaves(grads["policy_head"]))
    a, c = params["params"]["actions_tower"], params["params"]["cards_tower"]
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(c)
    for layer in a:   # the same widths (inputs differ: 24 channels or 6, 4x9 planes or 4x13)
        assert a[layer]["kernel"].shape[-1] == c[layer]["kernel"].shape[-1]
        if a[layer]["kernel"].shape == c[layer]["kernel"].shape:
            assert not np.array_equal(a[layer]["kernel"], c[layer]["kernel"])


def test_sizes_and_parameter_counts():
    small = N.param_count(params_of("dense"))
    assert small == 219_146 and 100_000 <= N.param_count(params_of("conv")) <= 300_000
    # the source's scale, from shapes alone (no initialisation)
    shapes = N.param_shapes(N.make_network("source"))
    total, split = N.param_count(shapes), N.param_breakdown(shapes)
    assert total == 8_628_234 and split == {"conv": 1_805_312, "dense": 6_822_922}
    assert abs(total - N.SOURCE_PARAMS) <= 0.1 * N.SOURCE_PARAMS
    assert abs(split["conv"] - N.SOURCE_CONV_PARAMS) <= 0.1 * N.SOURCE_CONV_PARAMS
    assert abs(split["dense"] - N.SOURCE_DENSE_PARAMS) <= 0.1 * N.SOURCE_DENSE_PARAMS
    assert N.make_network("source").tower == "conv" and N.make_network().tower == N.SIZES["small"].tower
    with pytest.raises(ValueError, match="size"):
        N.make_network("huge")
    with pytest.raises(ValueError, match="tower"):
        N.make_network(tower="lstm")


def test_on_encoded_observations():
    """The network on real observations: encode the mover's view, mask with its
    legal actions."""
    env = jaxgames.make("holdem")
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(3), B))
    obs = jax.vmap(env.observe)(states, states.current_player)
    cards, actions = jax.jit(jax.vmap(E.encode))(obs)
    logits, value = APPLY["dense"](params_of("dense"), cards, actions, states.legal_action_mask)
    probs = np.asarray(jax.nn.softmax(logits))
    assert (probs[~np.asarray(states.legal_action_mask)] == 0).all() and value.shape == (B,)
    # different hole cards, different outputs
    assert np.abs(np.asarray(value) - np.asarray(value)[0]).max() > 0
