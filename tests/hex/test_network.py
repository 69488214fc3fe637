"""The Hex networks (jaxgames.hex.network): the source's parameter count, shapes and ranges at
several sizes, the small-board padding rule, the adapter's swap logit and value."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.hex import network as N


@pytest.fixture(autouse=True)
def _float32_products():
    """These tests compare two computations of one function at float32 tolerances. A GPU's
    default float32 product is TF32, whose rounding differs between them by up to 5e-4 (seen on
    an H200); full float32 makes them agree there as on the CPU."""
    with jax.default_matmul_precision("float32"):
        yield


@functools.lru_cache(maxsize=None)
def _net(n, kind="source", **kw):
    """``(network, params, jitted apply)``. The params are drawn in NumPy in the shapes
    ``init`` gives (``eval_shape``), so each size compiles only its apply; :func:`test_init`
    runs ``init``."""
    net = N.make(n, kind=kind, **kw)
    shapes = jax.eval_shape(net.init, jax.random.key(0))
    rng = np.random.default_rng(n)

    def draw(s):
        scale = 1.0 / np.sqrt(np.prod(s.shape[:-1])) if len(s.shape) > 1 else 0.1
        return jnp.asarray(rng.normal(0.0, scale, s.shape).astype(s.dtype))

    return net, jax.tree_util.tree_map(draw, shapes), jax.jit(net.apply)


def _observations(n, num, seed=0):
    """``num`` observations (bool [num, n, n, 2]) of random positions, built as
    ``Hex.observe`` does: plane 0 the mover's stones, plane 1 the opponent's."""
    rng = np.random.default_rng(seed)
    obs = np.zeros((num, n * n, 2), bool)
    for g in range(num):
        k = rng.integers(0, n * n // 2)
        cells = rng.permutation(n * n)[: 2 * k + rng.integers(0, 2)]
        black, white = cells[0::2], cells[1::2]
        mover_black = len(black) == len(white)
        obs[g, black, 0 if mover_black else 1] = True
        obs[g, white, 1 if mover_black else 0] = True
    return obs.reshape(num, n, n, 2)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_source_parameter_count_at_11():
    net, params, _ = _net(11)
    assert N.num_params(params) == N.SOURCE_PARAMS_11 == 237_882
    shapes = jax.tree_util.tree_map(lambda x: x.shape, params)["params"]
    # the layers of the source's Fig. 5
    assert [shapes[f"Conv_{i}"]["kernel"] for i in range(4)] == [
        (3, 3, 2, 32), (3, 3, 32, 64), (3, 3, 64, 64), (3, 3, 64, 96)]
    assert shapes["Dense_0"]["kernel"] == (864, 128)   # 3 x 3 x 96 after four VALID convolutions
    assert shapes["value"]["kernel"] == (128, 1) and shapes["policy"]["kernel"] == (128, 121)
    assert N.conv_sizes(11) == [("VALID", 9), ("VALID", 7), ("VALID", 5), ("VALID", 3)]


def test_init():
    net, params, _ = _net(5)
    real = net.init(jax.random.key(1))
    assert jax.tree_util.tree_structure(real) == jax.tree_util.tree_structure(params)
    assert all(a.shape == b.shape for a, b in zip(jax.tree_util.tree_leaves(real), jax.tree_util.tree_leaves(params)))
    # Keras's defaults (the source used TensorFlow): zero biases, Glorot-uniform kernels
    for name, limit in [("Conv_1", np.sqrt(6 / (9 * 32 + 9 * 64))), ("Dense_0", np.sqrt(6 / (96 + 128))),
                        ("policy", np.sqrt(6 / (128 + 25)))]:
        k = np.asarray(real["params"][name]["kernel"])
        assert np.abs(k).max() <= limit and np.abs(k).max() > 0.9 * limit, name
        assert abs(k.mean()) < 0.1 * limit and 0.8 < k.std() / (limit / np.sqrt(3)) < 1.2, name
        assert not np.asarray(real["params"][name]["bias"]).any()


def test_padding_rule_for_small_boards():
    assert N.conv_sizes(9) == [("VALID", 7), ("VALID", 5), ("VALID", 3), ("VALID", 1)]
    assert N.conv_sizes(8) == [("VALID", 6), ("VALID", 4), ("VALID", 2), ("SAME", 2)]
    assert N.conv_sizes(7) == [("VALID", 5), ("VALID", 3), ("VALID", 1), ("SAME", 1)]
    assert N.conv_sizes(5) == [("VALID", 3), ("VALID", 1), ("SAME", 1), ("SAME", 1)]
    assert N.conv_sizes(3) == [("VALID", 1), ("SAME", 1), ("SAME", 1), ("SAME", 1)]
    # parameters: the convolutions' are fixed; the dense layer sees side^2 x 96; the policy n*n
    conv = 608 + 18_496 + 36_928 + 55_392
    for n, side in [(3, 1), (5, 1), (7, 1), (8, 2), (9, 1), (13, 5)]:
        expected = conv + (side * side * 96 + 1) * 128 + 129 + 129 * n * n
        assert N.num_params(_net(n)[1]) == expected, n


@pytest.mark.parametrize("n", [3, 5, 7, 11])
def test_adapter_shapes_and_ranges(n):
    net, params, _ = _net(n)
    obs = _observations(n, 6, seed=n)

    @jax.jit
    def everything(params, obs):
        return (net.apply(params, obs), net.apply(params, obs.astype(jnp.float32)),
                net.apply(params, obs[2]), net.raw(params, obs), net.value_prob(params, obs))

    out = jax.tree_util.tree_map(np.asarray, everything(params, obs))
    (logits, value), (logits_f, _), (one_logits, one_value), (cell_logits, _), prob = out
    assert logits.shape == (6, n * n + 1) and logits.dtype == np.float32
    assert value.shape == (6,) and value.dtype == np.float32
    assert np.isfinite(logits).all() and np.all(np.abs(value) <= 1)
    # bool and float observations agree; one unbatched observation gives unbatched outputs
    np.testing.assert_allclose(logits_f, logits, rtol=1e-6)
    assert one_logits.shape == (n * n + 1,) and one_value.shape == ()
    np.testing.assert_allclose(one_logits, logits[2], rtol=1e-5, atol=1e-5)
    # the source's heads: softmax over the cells, sigmoid value; the adapter's value is 2p - 1
    assert cell_logits.shape == (6, n * n)
    np.testing.assert_allclose(value, 2 * prob - 1, atol=1e-6)
    # the swap logit gives the swap exactly a uniform share, the cells keep their proportions
    probs = _softmax(logits.astype(np.float64))
    np.testing.assert_allclose(probs[:, -1], 1 / (n * n + 1), rtol=1e-5)
    np.testing.assert_allclose(probs[:, :-1] / probs[:, :-1].sum(-1, keepdims=True),
                               _softmax(cell_logits.astype(np.float64)), rtol=1e-4, atol=1e-7)


def test_vmap_matches_batch():
    net, params, apply = _net(5)
    obs = _observations(5, 4, seed=1)
    logits, value = apply(params, obs)
    vl, vv = jax.jit(jax.vmap(net.apply, in_axes=(None, 0)))(params, obs)
    np.testing.assert_allclose(vl, logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vv, value, rtol=1e-5, atol=1e-6)


def test_resnet_option():
    net, params, apply = _net(7, "resnet", blocks=2, channels=16)
    obs = _observations(7, 3)
    logits, value = apply(params, obs)
    assert logits.shape == (3, 50) and value.shape == (3,)
    assert np.isfinite(logits).all() and np.all(np.abs(value) <= 1)
    raw = jax.eval_shape(net.raw, params, obs)
    assert raw[0].shape == (3, 50)   # the swap logit is learned here


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        N.make(5, kind="mlp")
    with pytest.raises(ValueError, match="board_size"):
        N.make(2)
    net, params, _ = _net(5)
    with pytest.raises(ValueError, match="observations"):
        net.apply(params, jnp.zeros((1, 7, 7, 2)))


def test_flops_estimate():
    # multiply-adds of the 11x11 network, counted by hand from Fig. 5
    macs = 81 * 32 * 18 + 49 * 64 * 288 + 25 * 64 * 576 + 9 * 96 * 576 + 864 * 128 + 128 * 122
    assert N.flops_per_eval(11) == 2 * macs


def test_mover_frame_shows_white_the_board_transposed():
    """White to move: the module sees the transposed board (White's left-right task as
    top-bottom) and the cell logits come back transposed; Black to move: the board as is."""
    n = 5
    net, params, apply = _net(n)
    obs = _observations(n, 12, seed=2)
    white = obs[..., 0].sum((1, 2)) < obs[..., 1].sum((1, 2))
    assert white.any() and (~white).any()
    np.testing.assert_array_equal(N.mover_is_white(jnp.asarray(obs)), white)
    logits, value = apply(params, obs)
    seen = np.where(white[:, None, None, None], obs.swapaxes(1, 2), obs)
    # jitted: op by op, each layer's primitives compile one at a time
    raw_cells, raw_value = jax.jit(net.module.apply)(params, jnp.asarray(seen, jnp.float32))
    cells = np.asarray(raw_cells).reshape(-1, n, n)
    cells = np.where(white[:, None, None], cells.swapaxes(1, 2), cells).reshape(-1, n * n)
    np.testing.assert_allclose(logits[:, : n * n], cells, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(value, np.tanh(0.5 * np.asarray(raw_value)), rtol=1e-5, atol=1e-6)
    # the same position for White, and for Black with the board transposed, look the same
    plain = N.make(n, mover_frame=False)
    _, value_plain = jax.jit(plain.apply)(params, seen)
    np.testing.assert_allclose(value, value_plain, rtol=1e-5, atol=1e-6)


# every padding and kernel on a 5 x 6 input, and the inputs whose output is 1x1 (VALID on a
# kernel-sized input, SAME on a 1x1 one), which PatchConv computes as one matrix product
_CONV_CASES = [(padding, size, (5, 6)) for padding in ("VALID", "SAME") for size in (1, 3)] + [
    ("VALID", 3, (3, 3)), ("VALID", 1, (1, 1)), ("SAME", 3, (1, 1)), ("SAME", 1, (1, 1)),
    ("SAME", 3, (3, 3))]


@pytest.mark.parametrize("padding,size,side", _CONV_CASES)
def test_patch_conv_is_flax_conv(padding, size, side):
    """PatchConv: nn.Conv's parameters, outputs and gradients (input and kernel)."""
    import flax.linen as nn

    x = jax.random.normal(jax.random.key(1), (3, *side, 4))
    ref, ours = nn.Conv(7, (size, size), padding=padding), N.PatchConv(7, (size, size), padding=padding)
    params = ref.init(jax.random.key(2), x)
    params = jax.tree_util.tree_map(lambda a: a + 0.05, params)  # nonzero bias too
    assert jax.tree_util.tree_structure(params) == jax.tree_util.tree_structure(ours.init(jax.random.key(2), x))
    np.testing.assert_allclose(ours.apply(params, x), ref.apply(params, x), rtol=1e-5, atol=1e-5)

    def loss(module):
        return lambda p, x: jnp.sum(jnp.sin(module.apply(p, x)))

    g_ref = jax.grad(loss(ref), argnums=(0, 1))(params, x)
    g_ours = jax.jit(jax.grad(loss(ours), argnums=(0, 1)))(params, x)
    for a, b in zip(jax.tree_util.tree_leaves(g_ours), jax.tree_util.tree_leaves(g_ref)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
