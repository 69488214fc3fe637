"""Opponent pool: capacity and ring behaviour, uniform sampling, Best-K by Elo."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.ratings import elo
from train.algos import pool as P


def params(i):
    return {"w": jnp.full((2, 3), float(i)), "b": jnp.int32(i)}


@jax.jit
def _add(pool, x):
    return P.add(pool, x)


def filled_pool(n, capacity):
    pool = P.empty(params(0), capacity)
    for i in range(n):
        pool = _add(pool, params(i))
    return pool


def test_add_fills_then_overwrites_the_oldest():
    pool = P.empty(params(0), 3)
    assert pool.capacity == 3 and int(pool.size) == 0 and pool.params["w"].shape == (3, 2, 3)
    pool = filled_pool(2, 3)
    assert int(pool.size) == 2 and int(pool.next) == 2
    assert pool.ids.tolist() == [0, 1, -1]
    assert float(P.get(pool, 1)["w"][0, 0]) == 1.0 and int(P.get(pool, 1)["b"]) == 1
    pool = filled_pool(5, 3)  # 0 1 2, then 3 and 4 replace 0 and 1
    assert int(pool.size) == 3 and int(pool.added) == 5
    assert pool.ids.tolist() == [3, 4, 2]
    assert [int(P.get(pool, i)["b"]) for i in range(3)] == [3, 4, 2]
    with pytest.raises(ValueError):
        P.empty(params(0), 0)


def test_sample_is_uniform_over_filled_slots():
    pool = filled_pool(5, 8)
    slots = np.asarray(jax.jit(jax.vmap(lambda k: P.sample(pool, k)))(
        jax.random.split(jax.random.key(0), 20_000)))
    counts = np.bincount(slots, minlength=8)
    assert counts[5:].sum() == 0
    np.testing.assert_allclose(counts[:5] / 20_000, 0.2, atol=0.015)  # ~5 sigma
    assert int(P.sample(P.empty(params(0), 4), jax.random.key(1))) == 0


def test_best_k_picks_only_the_top_k_uniformly():
    pool = filled_pool(6, 8)
    ratings = jnp.array([10.0, 50.0, -20.0, 40.0, 30.0, 0.0, 999.0, 999.0])  # 6, 7 empty
    draw = jax.jit(jax.vmap(lambda k, kk: P.sample_best_k(pool, ratings, kk, k)), static_argnums=())
    keys = jax.random.split(jax.random.key(2), 12_000)
    slots = np.asarray(draw(keys, jnp.full(12_000, 3)))
    counts = np.bincount(slots, minlength=8)
    assert set(np.nonzero(counts)[0]) == {1, 3, 4}
    np.testing.assert_allclose(counts[[1, 3, 4]] / 12_000, 1 / 3, atol=0.02)
    # k larger than the pool: every filled slot
    assert P.best_k_mask(pool, ratings, 10).tolist() == [True] * 6 + [False] * 2
    # ties go to the newer model
    tied = P.best_k_mask(pool, jnp.zeros(8), 2)
    assert np.nonzero(np.asarray(tied))[0].tolist() == [4, 5]


def test_best_k_with_elo_from_results():
    # 4 models, model g beats model h with probability rising in g - h: Elo orders them
    pool = filled_pool(4, 4)
    points = np.array([[0, 3, 2, 1], [7, 0, 4, 2], [8, 6, 0, 3], [9, 8, 7, 0]], float)
    games = points + points.T
    ratings = elo(points, games, prior_games=1.0)
    assert np.all(np.diff(ratings) > 0)
    best2 = P.best_k_mask(pool, jnp.asarray(ratings, jnp.float32)[pool.ids], 2)
    assert np.nonzero(np.asarray(best2))[0].tolist() == [2, 3]
