"""Random words for hot loops: ``jax.random.bits`` without its CPU slowdown.

``jax.random.bits`` lowers Threefry-2x32 to a *rolled* while loop on CPU, whose per-iteration
launch overhead costs more than a whole 2048 or ten-and-a-half step at a batch of a thousand
games. The same hash, unrolled below, fuses into one elementwise loop and gives the very words
``jax.random.bits`` gives (under JAX's default partitionable Threefry; tested), so the stream is
JAX's own. Keys of other PRNG implementations fall back to ``jax.random.bits``.

The unrolled hash pays only on the CPU (``docs/benchmarks.md`` has the measurement); on GPU
and TPU ``jax.random`` itself is used, so there the stream is JAX's by construction.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def unrolled() -> bool:
    """Whether the unrolled hash is used: on the CPU backend, where it pays (measured)."""
    return jax.default_backend() == "cpu" and jax.config.jax_threefry_partitionable


def _rotl(x: Array, r: int) -> Array:
    return (x << jnp.uint32(r)) | (x >> jnp.uint32(32 - r))


def threefry2x32(k0: Array, k1: Array, x0: Array, x1: Array) -> tuple[Array, Array]:
    """Threefry-2x32 (20 rounds, Random123), unrolled; bit-identical to JAX's (tested)."""
    ks = (k0, k1, k0 ^ k1 ^ jnp.uint32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = _rotl(x1, r) ^ x0
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + jnp.uint32(i + 1)
    return x0, x1


def random_words(key: Array, n: int) -> Array:
    """``jax.random.bits(key, (n,), jnp.uint32)``: uint32 [n]; unrolled where that pays."""
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    if data.shape != (2,) or data.dtype != jnp.uint32 or not unrolled():
        return jax.random.bits(key, (n,), jnp.uint32)
    return threefry_words(key, n)


def threefry_words(key: Array, n: int) -> Array:
    """The unrolled ``jax.random.bits(key, (n,), jnp.uint32)`` on any backend: uint32 [n]."""
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    # word i = hash(key, counter (hi=0, lo=i)), its two halves xor-ed: JAX's partitionable
    # layout.
    lo = jnp.arange(n, dtype=jnp.uint32)
    y0, y1 = threefry2x32(data[0], data[1], jnp.zeros_like(lo), lo)
    # Round trip through a running sum (exact in wrapping uint32 arithmetic). Left as plain
    # `y0 ^ y1`, XLA's CPU fusion copies the ~100-op hash into every consumer and recomputes
    # it there (once per board cell, per line code ...), which made a step 4x slower; XLA
    # never fuses a cumulative sum with what feeds it, so the words are computed once.
    # (lax.optimization_barrier does not survive XLA's CPU pipeline.)
    acc = jnp.cumsum(y0 ^ y1, dtype=jnp.uint32)
    return acc - jnp.concatenate([jnp.zeros(1, jnp.uint32), acc[:-1]])


def split(key: Array, n: int) -> Array:
    """``jax.random.split(key, n)``: typed keys [n]; unrolled where that pays."""
    if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key) or not unrolled() \
            or jax.random.key_impl(key) != jax.random.key_impl(jax.random.key(0)):
        return jax.random.split(key, n)
    return threefry_split(key, n)


def threefry_split(key: Array, n: int) -> Array:
    """The unrolled ``jax.random.split(key, n)`` on any backend (typed Threefry keys).

    JAX's partitionable split hashes the counters (0, i); key i is the two output words.
    """
    data = jax.random.key_data(key)
    lo = jnp.arange(n, dtype=jnp.uint32)
    y0, y1 = threefry2x32(data[0], data[1], jnp.zeros_like(lo), lo)
    return jax.random.wrap_key_data(jnp.stack([y0, y1], axis=-1))


def mix32(x: Array) -> Array:
    """A strong 32-bit integer mixer (Wellons' "lowbias32"), a bijection on uint32: cheap
    per-element randomness spread from a few Threefry words (Hex playouts, UCT tie-breaks)."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)
