"""Opponent pools: past models' parameters stacked in a fixed-capacity array, pure and jittable.

A :class:`Pool` keeps up to ``capacity`` parameter sets of one network (every leaf of
``params`` is ``[capacity, ...]``), so it lives in a training carry, goes through ``jit`` and
``lax.scan`` and is checkpointed like any other array. Games against the pool pick a slot
with :func:`sample` (uniformly among the filled slots, as the Hex source's pool of past
models) or :func:`sample_best_k` (uniformly among the K best by Elo, "Best-K"), then read its
parameters with :func:`get`.

When full, :func:`add` overwrites the oldest model (a ring buffer): a long run keeps its
``capacity`` most recent models. A run that must keep every model (the Hex source's ten
rounds) sizes the pool to the number of models it adds. Each slot remembers the generation
of its model (``ids``: 0 for the first model ever added, 1 for the next ...), so ratings and
result tables can follow a model whatever slot it sits in.

    pool = pool_lib.empty(params, capacity=16)
    pool = pool_lib.add(pool, params)                       # jittable, e.g. in a driver hook
    slot = pool_lib.sample(pool, key)                       # int32 []
    opponent = pool_lib.get(pool, slot)                     # params of that model
    slot = pool_lib.sample_best_k(pool, ratings, 4, key)    # ratings float [capacity] per slot
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

__all__ = ["UNRATED", "Pool", "add", "best_k_mask", "empty", "get", "sample", "sample_best_k"]

#: the rating of a model not rated yet: below any Elo, and finite, since a training carry
#: with a non-finite value is taken for a diverged run
UNRATED = -1e9


@chex.dataclass(frozen=True)
class Pool:
    params: Any         # pytree, every leaf [capacity, ...]  the stored models
    size: jax.Array     # int32 []  filled slots (0 .. capacity)
    next: jax.Array     # int32 []  the slot the next add writes (the oldest when full)
    ids: jax.Array      # int32 [capacity]  generation of each slot's model, -1 empty
    added: jax.Array    # int32 []  models ever added (the next model's generation)

    @property
    def capacity(self) -> int:
        return self.ids.shape[-1]


def empty(params_like: Any, capacity: int) -> Pool:
    """An empty pool for parameters shaped like ``params_like`` (zeros in every slot)."""
    if int(capacity) < 1:
        raise ValueError(f"pool capacity must be >= 1, got {capacity}")
    stacked = jax.tree_util.tree_map(
        lambda x: jnp.zeros((int(capacity),) + jnp.shape(x), jnp.asarray(x).dtype), params_like)
    return Pool(params=stacked, size=jnp.int32(0), next=jnp.int32(0),
                ids=jnp.full((int(capacity),), -1, jnp.int32), added=jnp.int32(0))


def add(pool: Pool, params: Any) -> Pool:
    """``pool`` with ``params`` written at slot ``next``: a free slot, or the oldest model's
    when the pool is full (ring buffer)."""
    i = pool.next
    stacked = jax.tree_util.tree_map(
        lambda s, x: jax.lax.dynamic_update_index_in_dim(s, jnp.asarray(x, s.dtype), i, 0),
        pool.params, params)
    return pool.replace(params=stacked, size=jnp.minimum(pool.size + 1, pool.capacity),
                        next=(i + 1) % pool.capacity, ids=pool.ids.at[i].set(pool.added),
                        added=pool.added + 1)


def get(pool: Pool, i: jax.Array | int) -> Any:
    """The parameters in slot ``i`` (int, may be traced)."""
    return jax.tree_util.tree_map(lambda s: jax.lax.dynamic_index_in_dim(s, i, 0, keepdims=False),
                                  pool.params)


def _pick(mask: jax.Array, key: jax.Array) -> jax.Array:
    """Uniform index among the True entries of ``mask`` [C] (0 when none)."""
    count = mask.sum(dtype=jnp.int32)
    k = jax.random.randint(key, (), 0, jnp.maximum(count, 1))
    return jnp.argmax(jnp.cumsum(mask, dtype=jnp.int32) > k).astype(jnp.int32)


def filled(pool: Pool) -> jax.Array:
    """bool [capacity]: the slots that hold a model."""
    return jnp.arange(pool.capacity) < pool.size


def sample(pool: Pool, key: jax.Array) -> jax.Array:
    """int32 []: a slot drawn uniformly among the filled ones (0 in an empty pool)."""
    return _pick(filled(pool), key)


def best_k_mask(pool: Pool, ratings: jax.Array, k: jax.Array | int) -> jax.Array:
    """bool [capacity]: the ``k`` filled slots of highest ``ratings`` (all filled slots when
    fewer than ``k``). Ties go to the newer model (higher generation)."""
    chex.assert_shape(ratings, (pool.capacity,))
    full = filled(pool)
    r = jnp.where(full, ratings.astype(jnp.float32), -jnp.inf)
    gen = pool.ids
    # rank of slot i = filled slots that come before it: higher rating, or equal and newer
    before = (r[None, :] > r[:, None]) | ((r[None, :] == r[:, None]) & (gen[None, :] > gen[:, None]))
    rank = (before & full[None, :]).sum(1)
    return full & (rank < k)


def sample_best_k(pool: Pool, ratings: jax.Array, k: jax.Array | int, key: jax.Array) -> jax.Array:
    """int32 []: a slot drawn uniformly among the ``k`` best filled slots by ``ratings``
    [capacity] (Elo per slot; entries of empty slots are ignored)."""
    return _pick(best_k_mask(pool, ratings, k), key)
