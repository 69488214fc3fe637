"""One key for a batch of searches, or one key per game: the searches' random draws either way.

With one key per game (``[B]`` keys) each game's draws come from its own key alone, so a
game's search does not depend on which other games share its batch, or its device: the
pipelines that split their games over devices (``train/algos/alphazero.py``) rely on it.
With one key, every function here draws exactly as ``jax.random`` on the whole batch (mctx's
own draws), so searches given one key are unchanged.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

Array = jax.Array


def per_game(key: Array) -> bool:
    """True for a batch of keys (typed ``[B]``, or raw ``uint32 [B, 2]``)."""
    typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    return key.ndim > (0 if typed else 1)


def split(key: Array, num: int = 2) -> Array:
    """``jax.random.split(key, num)``; for ``[B]`` keys, ``num`` batches of ``[B]`` keys."""
    if not per_game(key):
        return jax.random.split(key, num)
    return jnp.swapaxes(jax.vmap(lambda k: jax.random.split(k, num))(key), 0, 1)


def game_keys(key: Array, batch: int) -> Array:
    """``[B]`` keys, one per game: ``jax.random.split(key, batch)``, or the keys themselves."""
    return key if per_game(key) else jax.random.split(key, batch)


def draw(key: Array, sample: Callable[[Array, tuple[int, ...]], Array], batch: int) -> Array:
    """``[B, ...]``: ``sample(key, (batch,))`` with one key; ``sample(key_b, ())`` per game."""
    if not per_game(key):
        return sample(key, (batch,))
    return jax.vmap(lambda k: sample(k, ()))(key)


def categorical(key: Array, logits: Array) -> Array:
    """``jax.random.categorical`` over the last axis of ``logits [B, A]``."""
    if not per_game(key):
        return jax.random.categorical(key, logits)
    return jax.vmap(jax.random.categorical)(key, logits)
