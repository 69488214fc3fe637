"""The chunked driver: a jitted ``lax.scan`` of K pure updates on device, then, between chunks
and in Python only, the progress bar, metrics, evaluation and checkpoint.

Update ``i`` (counted from 0 over the whole run) draws its key as ``fold_in(key, i)``, so a run
resumed from any checkpoint replays exactly the updates an unbroken run would have made.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from train.common.checkpoint import Checkpointer

Update = Callable[[Any, jax.Array], tuple[Any, Any]]
# on_chunk(step, carry, stacked_metrics, seconds) -> flat dict of scalars (shown in the bar);
# ``seconds`` is the chunk's compute time, compile excluded after the first chunk of a size
OnChunk = Callable[[int, Any, Any, float], Mapping[str, float]]


@dataclasses.dataclass
class DriverResult:
    carry: Any
    step: int
    chunks_run: int


def make_chunk(update: Update, chunk_size: int) -> Callable[[Any, jax.Array, jax.Array], tuple[Any, Any]]:
    """``chunk(carry, key, start) -> (carry, metrics[chunk_size, ...])``, jitted, carry donated."""

    def chunk(carry, key, start):
        def body(c, i):
            return update(c, jax.random.fold_in(key, i))
        return jax.lax.scan(body, carry, start + jnp.arange(chunk_size, dtype=jnp.int32))

    return jax.jit(chunk, donate_argnums=0)


def run(
    update: Update,
    carry: Any,
    key: jax.Array,
    *,
    num_updates: int,
    chunk_size: int,
    on_chunk: OnChunk,
    checkpointer: Checkpointer | None = None,
    config_json: str = "{}",
    resume: bool = False,
    progress: bool = True,
    desc: str = "train",
    show: Callable[[Mapping[str, float]], str] | None = None,
    units_per_update: int = 1,
    stop_after_chunks: int | None = None,
    checkpoint_every: int = 1,
    best_checkpointer: Checkpointer | None = None,
    best_metric: str | None = None,
) -> DriverResult:
    """Run ``num_updates`` updates in chunks of ``chunk_size`` (the last may be shorter).

    ``stop_after_chunks`` ends early as a killed run would (used to test ``--resume``).
    A checkpoint is written every ``checkpoint_every`` chunks and after the last one. With
    ``best_metric`` (a key of what ``on_chunk`` returns, higher is better) the carry with the
    best value seen at a checkpoint is also kept by ``best_checkpointer``.
    """
    step = 0
    if resume:
        if checkpointer is None:
            raise ValueError("resume needs a checkpointer")
        step, carry, key, _ = checkpointer.restore(carry, key)
    chunks = {}
    bar = tqdm(total=num_updates * units_per_update, initial=step * units_per_update,
               desc=desc, disable=not progress, dynamic_ncols=True, unit_scale=True)
    n_chunks = 0
    best = -float("inf")
    if best_checkpointer is not None and best_checkpointer.latest_step() is not None:
        best = best_checkpointer.best_value()
    try:
        while step < num_updates:
            size = min(chunk_size, num_updates - step)
            if size not in chunks:
                chunks[size] = make_chunk(update, size)
            started = time.perf_counter()
            carry, metrics = chunks[size](carry, key, jnp.int32(step))
            jax.block_until_ready((carry, metrics))
            seconds = time.perf_counter() - started
            step += size
            n_chunks += 1
            shown = on_chunk(step, carry, metrics, seconds)
            if checkpointer is not None and (n_chunks % checkpoint_every == 0 or step >= num_updates):
                checkpointer.save(step, carry, key, config_json)
                if best_checkpointer is not None and shown and shown[best_metric] > best:
                    best = float(shown[best_metric])
                    best_checkpointer.save(step, carry, key, config_json, extra={best_metric: best})
            bar.update(size * units_per_update)
            if shown:
                bar.set_postfix_str(show(shown) if show else _fmt(shown), refresh=False)
            if stop_after_chunks is not None and n_chunks >= stop_after_chunks:
                break
    finally:
        bar.close()
    return DriverResult(carry=carry, step=step, chunks_run=n_chunks)


def _fmt(metrics: Mapping[str, float]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, (float, np.floating)) else f"{k}={v}"
                    for k, v in metrics.items())
