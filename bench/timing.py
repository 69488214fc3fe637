"""Timing shared by the benchmarks: the best of several calls of a jitted function, and the
CPU model every figure is printed beside."""

from __future__ import annotations

import platform
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


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else what the platform module knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
