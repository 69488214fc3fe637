"""Timing shared by the benchmarks: the best of several calls of a jitted function."""

from __future__ import annotations

import time

import jax


def best_seconds(fn, *args, repeats: int = 3) -> float:
    """Seconds of the fastest of ``repeats`` calls of ``fn(*args)``, after one untimed call
    (compilation); the best, because on a shared machine noise only slows."""
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - t)
    return best
