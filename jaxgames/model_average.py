"""The agent of a self-play run as the mean of the weights of its pool's newest models.

A learner that plays against its own past models does not settle on one strategy: its last
iterates circle around one. Averaging the iterates is the classic fix in two-player zero-sum
games (fictitious play, and no-regret learning, converge in their *average*); for a network the
average is taken over the weights of the last few models, all of one lineage and close to each
other (stochastic weight averaging, Izmailov et al. 2018). ``train.holdem --average-models`` uses
it for the agent a run evaluates and ships; ``jaxgames.holdem.agent`` reads the same mean back.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["newest_mean", "newest_slots"]


def newest_slots(ids: Any, n: int) -> np.ndarray:
    """int [min(n, filled)]: the slots of the ``n`` newest models of a pool whose slot ``i``
    holds generation ``ids[i]`` (int [capacity], -1 for an empty slot), newest first.
    ``ValueError`` when ``n < 1`` or the pool is empty."""
    if n < 1:
        raise ValueError(f"the number of models to average must be >= 1, got {n}")
    ids = np.asarray(ids)
    filled = int((ids >= 0).sum())
    if filled == 0:
        raise ValueError("the pool holds no model to average")
    return np.argsort(-ids, kind="stable")[:min(n, filled)]


def newest_mean(stacked: Any, ids: Any, n: int) -> Any:
    """The mean of the weights of the ``n`` newest models of a pool (fewer when it holds
    fewer): ``stacked``, a pytree of leaves ``[capacity, ...]`` (e.g. a league's ``params``),
    ``ids`` int [capacity] as in :func:`newest_slots`. A pytree of one model's leaves, in their
    dtypes (the mean taken in float32)."""
    slots = jnp.asarray(newest_slots(ids, n))
    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x)[slots].astype(jnp.float32).mean(0).astype(jnp.asarray(x).dtype), stacked)
