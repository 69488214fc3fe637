"""Scale-out: the batch axis sharded over every device, parameters replicated.

Learners call :func:`shard_batch` on their batch-shaped arrays inside ``jit``; the compiler
then runs each device's slice locally and inserts the all-reduce for the replicated result.
On one device these are no-ops, so the same code runs on a laptop CPU and a TPU pod.
Multi-host runs call :func:`init_distributed` first (``train/common/distributed.py``): the
mesh then spans every host's devices, and each host computes the slices of its own devices.
"""

from __future__ import annotations

import functools
import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from train.common.distributed import init_distributed

__all__ = ["BATCH", "batch_mesh", "check_divisible", "init_distributed", "one_cpu_device_per_core",
           "replicate", "shard_batch", "to_global"]

BATCH = "batch"

_DEVICE_COUNT_FLAG = "xla_force_host_platform_device_count"


def one_cpu_device_per_core() -> None:
    """Give JAX's CPU backend one device per core this process may use, unless ``XLA_FLAGS``
    already sets a count (the multi-host launcher, a user's choice). Call it before JAX first
    touches a device (an entry module's ``__main__``); it changes nothing on a GPU or TPU.

    A pipeline that splits its games over the mesh (``shard_map``) then runs each core's share
    on its own, where one device would run a search's many small operations one after another
    on one core (XLA's threads only split the large ones): a full-preset Hex self-play update
    took 15 s on 2 CPU devices against 21.5 s on one (docs/benchmarks.md)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _DEVICE_COUNT_FLAG not in flags:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        os.environ["XLA_FLAGS"] = f"{flags} --{_DEVICE_COUNT_FLAG}={cores or 1}".strip()


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


def to_global(tree):
    """Every ``jax.Array`` leaf held by one device (a fresh carry, one built in Python between
    chunks, one restored) replicated over the whole mesh, and likewise the sharding of every
    ``jax.ShapeDtypeStruct`` leaf; other leaves, and everything on a one-device mesh, unchanged.

    The driver feeds every chunk through it, so every chunk sees the same input shardings and
    compiles once; orbax's multi-host checkpoints need it (they refuse arrays of one host). In
    a multi-host run such a leaf must hold the same value on every process (it does: every
    process computes it alike)."""
    mesh = batch_mesh()
    if mesh.size == 1:
        return tree
    everywhere = NamedSharding(mesh, P())

    def one(x):
        if isinstance(x, jax.ShapeDtypeStruct):
            sharding = x.sharding  # None: a NumPy leaf, restored as NumPy
            if sharding is not None and len(sharding.device_set) == 1:
                return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=everywhere)
            return x
        if isinstance(x, jax.Array) and len(x.sharding.device_set) == 1:
            return jax.device_put(x, everywhere)
        return x
    return jax.tree_util.tree_map(one, tree)


def check_divisible(batch_size: int) -> None:
    n = batch_mesh().size
    if batch_size % n:
        raise ValueError(f"batch size {batch_size} must be a multiple of the {n} devices")
