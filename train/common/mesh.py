"""Scale-out: the batch axis sharded over every device, parameters replicated.

Learners call :func:`shard_batch` on their batch-shaped arrays inside ``jit``; the compiler
then runs each device's slice locally and inserts the all-reduce for the replicated result.
On one device these are no-ops, so the same code runs on a laptop CPU and a TPU pod.
Multi-host runs call :func:`init_distributed` first.
"""

from __future__ import annotations

import functools
import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

BATCH = "batch"


@functools.lru_cache(maxsize=None)
def batch_mesh() -> Mesh:
    """A 1-D mesh over all devices (every host's, in a multi-host run)."""
    return Mesh(np.asarray(jax.devices()), (BATCH,))


def shard_batch(x):
    """Constrain the leading axis of every leaf to be split over the mesh (inside jit)."""
    mesh = batch_mesh()
    if mesh.size == 1:
        return x
    return jax.tree_util.tree_map(
        lambda a: jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P(BATCH))), x)


def replicate(x):
    """Place ``x`` replicated on every device (parameters, tables)."""
    mesh = batch_mesh()
    if mesh.size == 1:
        return x
    return jax.device_put(x, NamedSharding(mesh, P()))


def check_divisible(batch_size: int) -> None:
    n = batch_mesh().size
    if batch_size % n:
        raise ValueError(f"batch size {batch_size} must be a multiple of the {n} devices")


def init_distributed() -> None:
    """Join a multi-host run when the launcher set the coordinator address."""
    if os.environ.get("JAX_COORDINATOR_ADDRESS"):
        jax.distributed.initialize()
