"""TD(λ) on a linear value over sparse binary features (train/algos/linear_td.py): one backward
update worked by hand, λ = 0 (TD(0)) and λ = 1 (Monte Carlo), the clipped output, the initial
weights' range, padding ignored, repeated features, and a batch of games learned one after
another; every random case also against a plain sequential reference
(a dense weight vector updated state by state, backwards, in Python)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from train.algos import linear_td as L

chex.clear_trace_counter()

WIDE = L.LinearTDConfig(value_low=-100.0, value_high=100.0, lam=0.75, lr_scale=1.0, clip_margin=0.0)
# Jitted once per config (a static argument) and shape.
UPDATE = jax.jit(L.backward_update, static_argnames="cfg")
PASS = jax.jit(L.backward_pass, static_argnames="cfg")
SEQUENTIAL = jax.jit(L.sequential_update, static_argnames="cfg")


def reference(weights, indices, valid, present, final_return, cfg):
    """The source's backward pass, state by state on a dense copy (float64)."""
    w = np.asarray(weights, np.float64).copy()
    rows = [t for t in range(len(present)) if present[t]]
    g_next = v_next = None
    for t in reversed(rows):
        active = [int(i) for i, ok in zip(indices[t], valid[t]) if ok]
        v = float(np.clip(sum(w[i] for i in active), cfg.low, cfg.high))
        g = final_return if g_next is None else (1 - cfg.lam) * v_next + cfg.lam * g_next
        if active:
            lr = 1.0 / (cfg.lr_scale * len(active))
            for i in active:
                w[i] += lr * (g - v)
        g_next, v_next = g, v
    return w


def random_game(gen, *, num_features=12, rows=6, slots=5, padded=2):
    """A random game: rows of distinct active features, some slots invalid, ``padded`` rows
    absent (anywhere)."""
    indices = np.stack([gen.choice(num_features, slots, replace=False) for _ in range(rows)]).astype(np.int32)
    valid = gen.random((rows, slots)) < 0.7
    present = np.ones(rows, bool)
    present[gen.choice(rows, padded, replace=False)] = False
    return indices, valid, present, np.float32(gen.uniform(-3, 3))


# -- hand-worked ----------------------------------------------------------------------------------


def test_one_backward_update_by_hand():
    """A game of 3 states, 4 features; λ = 0.75, lr = 1 / |active| (lr_scale 1), outcome 1.

    w = (0.1, 0.2, -0.1, 0.3); s0 = {0, 1}, s1 = {1, 2, 3}, s2 = {0, 3}.
    t = 2: V = w0 + w3 = 0.4, G = 1, error 0.6, lr 1/2: w0, w3 += 0.3 -> (0.4, 0.2, -0.1, 0.6).
    t = 1: V = 0.2 - 0.1 + 0.6 = 0.7, G = 0.25 * 0.4 + 0.75 * 1 = 0.85, error 0.15, lr 1/3:
           w1, w2, w3 += 0.05 -> (0.4, 0.25, -0.05, 0.65).
    t = 0: V = 0.4 + 0.25 = 0.65, G = 0.25 * 0.7 + 0.75 * 0.85 = 0.8125, error 0.1625, lr 1/2:
           w0, w1 += 0.08125 -> (0.48125, 0.33125, -0.05, 0.65).
    """
    w = jnp.array([0.1, 0.2, -0.1, 0.3], jnp.float32)
    indices = jnp.array([[0, 1, 0], [1, 2, 3], [0, 3, 0]], jnp.int32)
    valid = jnp.array([[1, 1, 0], [1, 1, 1], [1, 1, 0]], bool)
    present = jnp.ones(3, bool)
    cfg = L.LinearTDConfig(value_low=-10.0, value_high=10.0, lam=0.75, lr_scale=1.0)
    new = UPDATE(w, indices, valid, present, jnp.float32(1.0), cfg=cfg)
    np.testing.assert_allclose(new, [0.48125, 0.33125, -0.05, 0.65], atol=1e-6)
    bp = PASS(w, indices, valid, present, jnp.float32(1.0), cfg=cfg)
    np.testing.assert_allclose(bp.values, [0.65, 0.7, 0.4], atol=1e-6)
    np.testing.assert_allclose(bp.targets, [0.8125, 0.85, 1.0], atol=1e-6)
    np.testing.assert_allclose(bp.errors, [0.1625, 0.15, 0.6], atol=1e-6)
    np.testing.assert_allclose(bp.coef, [0.08125, 0.05, 0.3], atol=1e-6)


def test_a_known_part_of_the_value_by_hand():
    """The game above with offsets (1.0, 0.5, 0.0): each value is its offset plus the weights'
    sum; the weights learn the rest.

    t = 2: V = 0.4 + 0, G = 1, error 0.6, lr 1/2: w0, w3 += 0.3 -> (0.4, 0.2, -0.1, 0.6).
    t = 1: V = 0.7 + 0.5 = 1.2, G = 0.25 * 0.4 + 0.75 * 1 = 0.85, error -0.35, lr 1/3:
           w1, w2, w3 -= 0.35 / 3.
    t = 0: V = 0.4 + (0.2 - 0.35 / 3) + 1.0, G = 0.25 * 1.2 + 0.75 * 0.85 = 0.9375, lr 1/2.
    """
    w = jnp.array([0.1, 0.2, -0.1, 0.3], jnp.float32)
    indices = jnp.array([[0, 1, 0], [1, 2, 3], [0, 3, 0]], jnp.int32)
    valid = jnp.array([[1, 1, 0], [1, 1, 1], [1, 1, 0]], bool)
    present = jnp.ones(3, bool)
    cfg = L.LinearTDConfig(value_low=-10.0, value_high=10.0, lam=0.75, lr_scale=1.0)
    offset = jnp.array([1.0, 0.5, 0.0], jnp.float32)
    bp = PASS(w, indices, valid, present, jnp.float32(1.0), cfg=cfg, offset=offset)
    w1 = 0.2 - 0.35 / 3
    v0 = 0.4 + w1 + 1.0
    np.testing.assert_allclose(bp.values, [v0, 1.2, 0.4], atol=1e-6)
    np.testing.assert_allclose(bp.targets, [0.9375, 0.85, 1.0], atol=1e-6)
    new = UPDATE(w, indices, valid, present, jnp.float32(1.0), cfg=cfg, offset=offset)
    step0 = (0.9375 - v0) / 2
    np.testing.assert_allclose(new, [0.4 + step0, w1 + step0, -0.1 - 0.35 / 3, 0.6 - 0.35 / 3], atol=1e-6)
    # a batch of this game twice with these offsets: the update, then the update again from its weights
    batch, _ = SEQUENTIAL(w, jnp.stack([indices] * 2), jnp.stack([valid] * 2), jnp.stack([present] * 2),
                          jnp.float32([1.0, 1.0]), cfg=cfg, offset=jnp.stack([offset] * 2))
    again = UPDATE(new, indices, valid, present, jnp.float32(1.0), cfg=cfg, offset=offset)
    np.testing.assert_allclose(batch, again, atol=1e-6)


def test_the_sources_learning_rate():
    """Default lr_scale 13: one state with 4 active features moves by error / (13 * 4) each,
    so its value moves 1/13 of the way to the target."""
    cfg = L.LinearTDConfig(value_low=-100.0, value_high=100.0)
    assert (cfg.lam, cfg.lr_scale) == (0.75, 13.0)
    w = jnp.zeros(6, jnp.float32)
    indices = jnp.array([[0, 2, 3, 5]], jnp.int32)
    new = UPDATE(w, indices, jnp.ones((1, 4), bool), jnp.ones(1, bool), jnp.float32(13.0), cfg=cfg)
    np.testing.assert_allclose(new, [0.25, 0, 0.25, 0.25, 0, 0.25], atol=1e-7)
    assert float(L.raw_value(new, indices[0], jnp.ones(4, bool))) == pytest.approx(1.0)


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_td0_and_monte_carlo(lam):
    """λ = 0: each target is the next state's value (as the pass reads it), the last the
    outcome; λ = 1: every target is the outcome."""
    cfg = L.LinearTDConfig(value_low=-100.0, value_high=100.0, lam=lam, lr_scale=2.0)
    gen = np.random.default_rng(3)
    indices, valid, _, z = random_game(gen, padded=0)
    valid[:, 0] = True                     # every state has an active feature
    w = jnp.asarray(gen.uniform(-1, 1, 12), jnp.float32)
    bp = PASS(w, indices, valid, jnp.ones(6, bool), z, cfg=cfg)
    if lam == 0.0:
        np.testing.assert_allclose(bp.targets[:-1], bp.values[1:], atol=1e-6)
    else:
        np.testing.assert_allclose(bp.targets, np.full(6, z), atol=1e-6)
    assert bp.targets[-1] == pytest.approx(float(z))
    new = UPDATE(w, indices, valid, jnp.ones(6, bool), z, cfg=cfg)
    np.testing.assert_allclose(new, reference(w, indices, valid, np.ones(6, bool), float(z), cfg), atol=1e-5)


def test_monte_carlo_single_state_values_are_exact():
    """λ = 1, lr_scale 1, states with disjoint features: each value jumps to the outcome."""
    cfg = L.LinearTDConfig(value_low=-100.0, value_high=100.0, lam=1.0, lr_scale=1.0)
    indices = jnp.array([[0, 1], [2, 3], [4, 5]], jnp.int32)
    valid = jnp.ones((3, 2), bool)
    w = jnp.asarray(np.arange(6) / 10, jnp.float32)
    new = UPDATE(w, indices, valid, jnp.ones(3, bool), jnp.float32(7.0), cfg=cfg)
    np.testing.assert_allclose(L.raw_value(new, indices, valid), [7.0, 7.0, 7.0], atol=1e-5)


# -- the output's range ---------------------------------------------------------------------------


def test_clipping():
    cfg = L.LinearTDConfig(value_low=0.0, value_high=13.0, clip_margin=0.01)
    w = jnp.array([20.0, -20.0, 5.0], jnp.float32)
    idx = jnp.array([[0, 2], [1, 2], [2, 2]], jnp.int32)
    ok = jnp.array([[1, 0], [1, 0], [1, 0]], bool)
    np.testing.assert_allclose(L.value(w, idx, ok, cfg=cfg), [12.99, 0.01, 5.0], atol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda i, v: L.value(w, i, v, cfg=cfg))(idx, ok), [12.99, 0.01, 5.0],
                               atol=1e-6)
    assert float(L.value(w, idx[0], ok[0], cfg=cfg)) < 13.0 and float(L.value(w, idx[1], ok[1], cfg=cfg)) > 0.0
    # The error is taken on the clipped output: a state valued 20 (read 12.99) with target 13
    # moves by (13 - 12.99) / 13, not by (13 - 20) / 13.
    new = UPDATE(w, idx[:1], ok[:1], jnp.ones(1, bool), jnp.float32(13.0), cfg=cfg)
    assert float(new[0]) == pytest.approx(20.0 + 0.01 / 13, abs=1e-5)
    with pytest.raises(ValueError, match="lam"):
        L.LinearTDConfig(value_low=0.0, value_high=1.0, lam=1.5)
    with pytest.raises(ValueError, match="range"):
        L.LinearTDConfig(value_low=1.0, value_high=1.0)
    with pytest.raises(ValueError, match="lr_scale"):
        L.LinearTDConfig(value_low=0.0, value_high=1.0, lr_scale=0.0)


def test_init_range():
    for n in (7, 1830):
        w = L.init_weights(jax.random.key(0), n)
        assert w.shape == (n,) and w.dtype == jnp.float32
        assert float(jnp.abs(w).max()) <= 1.0 / n
    w = L.init_weights(jax.random.key(1), 1000)
    assert float(w.min()) < -0.9e-3 and float(w.max()) > 0.9e-3     # the whole range is used
    assert abs(float(w.mean())) < 1e-4
    with pytest.raises(ValueError):
        L.init_weights(jax.random.key(0), 0)


# -- padding, repeats, against the reference --------------------------------------------------------


def test_padding_is_ignored():
    """Absent rows, wherever they are and whatever they hold, change nothing."""
    gen = np.random.default_rng(0)
    indices, valid, present, z = random_game(gen, padded=0)
    w = jnp.asarray(gen.uniform(-1, 1, 12), jnp.float32)
    base = UPDATE(w, indices, valid, jnp.ones(6, bool), z, cfg=WIDE)
    junk = np.stack([gen.choice(12, 5, replace=False) for _ in range(3)]).astype(np.int32)
    for where in ([0, 1, 2], [3, 5, 8], [6, 7, 8]):
        rows = [r for r in range(9) if r not in where]
        big_i = np.zeros((9, 5), np.int32)
        big_v = np.ones((9, 5), bool)
        big_i[rows], big_v[rows] = indices, valid
        big_i[where] = junk
        pres = np.isin(np.arange(9), rows)
        padded = UPDATE(w, big_i, big_v, pres, z, cfg=WIDE)
        np.testing.assert_allclose(padded, base, atol=1e-6)
    nothing = UPDATE(w, indices, valid, jnp.zeros(6, bool), z, cfg=WIDE)
    np.testing.assert_array_equal(nothing, w)


@pytest.mark.parametrize("seed", range(4))
def test_against_the_sequential_reference(seed):
    gen = np.random.default_rng(10 + seed)
    indices, valid, present, z = random_game(gen, num_features=9, rows=7, slots=4, padded=seed % 3)
    if seed == 3:                            # repeated indices within a state count twice
        indices[:, 1] = indices[:, 0]
    cfg = L.LinearTDConfig(value_low=-1.5, value_high=2.0, lam=(0.0, 0.4, 0.75, 1.0)[seed], lr_scale=1.5,
                           clip_margin=0.05)
    w = jnp.asarray(gen.uniform(-1.5, 1.5, 9), jnp.float32)
    new = UPDATE(w, indices, valid, present, z, cfg=cfg)
    np.testing.assert_allclose(new, reference(w, indices, valid, present, float(z), cfg), atol=1e-5)


def test_sequential_is_one_game_after_another():
    """The source's one game at a time: game b learns from the weights games 0..b-1 left (the
    Python reference chained), which differs from the summed batch when the games share features."""
    gen = np.random.default_rng(6)
    games = [random_game(gen, num_features=8, padded=int(gen.integers(0, 3))) for _ in range(4)]
    w = jnp.asarray(gen.uniform(-1, 1, 8), jnp.float32)
    stacked = [jnp.asarray(np.stack(x)) for x in zip(*games)]
    new, bp = SEQUENTIAL(w, *stacked, cfg=WIDE)
    expect = np.asarray(w, np.float64)
    for b, g in enumerate(games):
        np.testing.assert_allclose(bp.values[b], PASS(jnp.asarray(expect, jnp.float32), *g, cfg=WIDE).values, atol=1e-5)
        expect = reference(expect, *g[:3], float(g[3]), WIDE)
    np.testing.assert_allclose(new, expect, atol=1e-5)
    # the games share features: learned from the same weights and summed, the result differs
    summed = w + sum(UPDATE(w, *g, cfg=WIDE) - w for g in games)
    assert np.abs(np.asarray(summed) - expect).max() > 1e-2


def test_no_recompiles():
    """Each jitted function compiled once per (config, shape) the tests use."""
    gen = np.random.default_rng(9)
    fn = jax.jit(chex.assert_max_traces(L.backward_update, n=1), static_argnames="cfg")
    w = jnp.zeros(12, jnp.float32)
    for _ in range(3):
        fn(w, *random_game(gen), cfg=WIDE)


def test_overlaps_given_by_the_caller():
    """``overlap`` (the pairs of slots with one index, counted in Python here) gives the same
    update as the one computed from the indices; the internal count agrees."""
    gen = np.random.default_rng(7)
    games = [random_game(gen, padded=1) for _ in range(3)]
    indices, valid, present, z = (np.stack(x) for x in zip(*games))
    overlap = np.zeros((3, 6, 6), np.float32)
    for b, t, u in np.ndindex(3, 6, 6):
        a = indices[b, t][valid[b, t]]
        c = indices[b, u][valid[b, u]]
        overlap[b, t, u] = (a[:, None] == c[None, :]).sum()
    np.testing.assert_array_equal(jax.vmap(L._overlaps)(indices, valid), overlap)
    w = jnp.asarray(gen.uniform(-1, 1, 12), jnp.float32)
    for b in range(3):
        given = UPDATE(w, indices[b], valid[b], present[b], z[b], cfg=WIDE, overlap=overlap[b])
        computed = UPDATE(w, indices[b], valid[b], present[b], z[b], cfg=WIDE)
        np.testing.assert_allclose(given, computed, atol=1e-6)
