"""A replay buffer in fixed-size arrays: pure, jittable, checkpointable.

Rows are any pytree (every leaf ``[capacity, ...]``). :func:`write` appends the rows of a
batch that are marked valid, in order, overwriting the oldest rows once full (ring buffer);
:func:`sample` draws rows uniformly (with replacement) among the filled ones.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp

__all__ = ["Replay", "empty", "sample", "write"]


@chex.dataclass(frozen=True)
class Replay:
    data: Any           # pytree, every leaf [capacity, ...]
    size: jax.Array     # int32 []  filled rows
    next: jax.Array     # int32 []  where the next row goes
    written: jax.Array  # int32 []  rows ever written (wraps past 2**31: a count for metrics)

    @property
    def capacity(self) -> int:
        return jax.tree_util.tree_leaves(self.data)[0].shape[0]


def empty(row_like: Any, capacity: int) -> Replay:
    """An empty buffer of ``capacity`` rows shaped like ``row_like`` (one row, no batch axis)."""
    if int(capacity) < 1:
        raise ValueError(f"replay capacity must be >= 1, got {capacity}")
    data = jax.tree_util.tree_map(
        lambda x: jnp.zeros((int(capacity),) + jnp.shape(x), jnp.asarray(x).dtype), row_like)
    return Replay(data=data, size=jnp.int32(0), next=jnp.int32(0), written=jnp.int32(0))


def write(buf: Replay, rows: Any, valid: jax.Array) -> Replay:
    """Append the rows with ``valid`` [N] (bool) True, keeping their order; rows past the
    capacity in one call overwrite the earliest of that call (only the newest remain)."""
    cap = buf.capacity
    valid = valid.astype(bool)
    rank = jnp.cumsum(valid, dtype=jnp.int32) - 1
    count = valid.sum(dtype=jnp.int32)
    # of one call's rows only the last `cap` are kept, so every kept row has its own slot
    keep = valid & (rank >= count - cap)
    slot = jnp.where(keep, (buf.next + rank) % cap, cap)  # cap: dropped
    data = jax.tree_util.tree_map(
        lambda d, r: d.at[slot].set(r.astype(d.dtype), mode="drop"), buf.data, rows)
    return buf.replace(data=data, size=jnp.minimum(buf.size + count, cap),
                       next=(buf.next + count) % cap, written=buf.written + count)


def sample(buf: Replay, key: jax.Array, batch_size: int) -> Any:
    """``batch_size`` rows drawn uniformly with replacement among the filled ones (row 0 of
    an empty buffer)."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buf.size, 1))
    return jax.tree_util.tree_map(lambda d: d[idx], buf.data)
