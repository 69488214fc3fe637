"""The chunked driver: a jitted ``lax.scan`` of K pure updates on device, then, between chunks
and in Python only, the divergence check, progress bar, metrics, evaluation, a hook that may
change the carry, and the checkpoint.

Update ``i`` (counted from 0 over the whole run) draws its key as ``fold_in(key, i)``, so a run
resumed from any checkpoint replays exactly the updates an unbroken run would have made. The
hook runs before the checkpoint, so what it changes (a model promoted into an opponent pool)
is saved with the carry and a resumed run stays exact.

In a multi-host run (``train/common/distributed.py``) every process runs the same loop: the
chunks, the checks, ``on_chunk`` (its metrics come as NumPy arrays holding the global values,
the same on every process), the hook and the checkpoint; only process 0 shows the progress
bar and notes.

Ctrl-C or SIGTERM (``train/common/exits.py``) abandons the chunk in flight: nothing of it is
saved, a checkpoint save already started is finished first, nothing a save cut short is left
behind (:meth:`Checkpointer.settle`), and the interrupt goes on to the pipeline's ``main``,
which says in one line where the run stopped (:func:`exits.note_progress`, kept up to date
here) and how to continue it with ``--resume``; the resumed run ends as an unbroken one.

    result = run(learner.update, carry, key, Schedule(num_updates=1000, chunk_size=50),
                 on_chunk=log_and_evaluate, between_chunks=promote,
                 checkpointing=Checkpointing(latest=ck, config_json=cfg.to_json(), resume=True),
                 display=Display(desc="hex games"))
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from train.common import distributed, exits
from train.common.checkpoint import Checkpointer
from train.common.errors import UserError
from train.common.mesh import to_global

Update = Callable[[Any, jax.Array], tuple[Any, Any]]
# on_chunk(step, carry, stacked_metrics, seconds) -> flat dict of scalars (shown in the bar);
# the metrics are NumPy arrays [chunk, ...]; ``seconds`` is the chunk's compute time, compile
# excluded after the first chunk of a size
OnChunk = Callable[[int, Any, Any, float], Mapping[str, float]]
# between_chunks(step, carry) -> carry: deterministic in its inputs, or resuming is not exact
Hook = Callable[[int, Any], Any]


class DivergenceError(UserError):
    """The parameters or metrics turned non-finite; the last good checkpoint is kept."""


@dataclasses.dataclass(frozen=True)
class Schedule:
    num_updates: int
    chunk_size: int                        # updates per jitted chunk (the last may be shorter)
    checkpoint_every: int = 1              # chunks between checkpoints (and after the last one)
    stop_after_chunks: int | None = None   # end early as a killed run would (tests of --resume)


@dataclasses.dataclass(frozen=True)
class BulkyPart:
    """A large part of the carry (a replay buffer) saved less often than the rest, or never.

    Resume semantics: the rest of the carry comes from the latest checkpoint; the bulky part
    from ``checkpointer``'s latest save, or from the fresh carry when it was never saved. The
    resumed run is exact only if that save was made at the same step as the latest
    checkpoint (always the case with ``every=1``); otherwise it continues from an older part.
    """

    get: Callable[[Any], Any]              # carry -> part
    put: Callable[[Any, Any], Any]         # (carry, part) -> carry; part None = left out
    checkpointer: Checkpointer | None = None   # None: never saved
    every: int = 1                         # saved with every ``every``-th checkpoint


@dataclasses.dataclass(frozen=True)
class Checkpointing:
    latest: Checkpointer | None = None
    config_json: str = "{}"
    resume: bool = False
    # keeps params(carry) at the best ``best_metric`` so far; a later chunk that equals it
    # replaces it: an evaluation over few games ties often, and the later model trained longer
    best: Checkpointer | None = None
    best_metric: str | None = None         # a key of what on_chunk returns; higher is better
    params: Callable[[Any], Any] = lambda carry: carry
    bulky: BulkyPart | None = None


@dataclasses.dataclass(frozen=True)
class Display:
    enabled: bool = True
    desc: str = "train"
    units_per_update: int = 1              # the bar counts units (episodes, moves, games)
    show: Callable[[Mapping[str, float]], str] | None = None


@dataclasses.dataclass
class DriverResult:
    carry: Any
    step: int
    chunks_run: int
    resumed_from: int | None = None        # the checkpoint step a resumed run started from


@functools.lru_cache(maxsize=16)
def make_chunk(update: Update, chunk_size: int) -> Callable[[Any, jax.Array, jax.Array], tuple[Any, Any]]:
    """``chunk(carry, key, start) -> (carry, metrics[chunk_size, ...])``, jitted, carry donated.

    Cached per (update function, size): a pipeline that hands the same ``update`` object to
    several runs of one process (a resume, a notebook re-run, the tests) compiles it once."""

    def chunk(carry, key, start):
        def body(c, i):
            return update(c, jax.random.fold_in(key, i))
        return jax.lax.scan(body, carry, start + jnp.arange(chunk_size, dtype=jnp.int32))

    return jax.jit(chunk, donate_argnums=0)


def _uncommitted(tree):
    """Restored single-device arrays as a fresh run has them: not committed to a device.

    orbax hands back arrays committed to device 0; jit keys its cache on that, so every
    function of the run (the chunk, the arenas) would compile once more after a resume."""
    def one(x):
        if isinstance(x, jax.Array) and len(x.sharding.device_set) == 1 and x.committed \
                and not jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            return jnp.asarray(np.asarray(x))
        return x
    return jax.tree_util.tree_map(one, tree)


@jax.jit
def _all_finite(tree) -> jax.Array:
    leaves = [jnp.isfinite(x).all() for x in jax.tree_util.tree_leaves(tree)
              if jnp.issubdtype(x.dtype, jnp.inexact)]
    return jnp.all(jnp.stack(leaves)) if leaves else jnp.bool_(True)


def run(update: Update, carry: Any, key: jax.Array, schedule: Schedule, *, on_chunk: OnChunk,
        between_chunks: Hook | None = None, checkpointing: Checkpointing = Checkpointing(),
        display: Display = Display()) -> DriverResult:
    """Run ``schedule.num_updates`` updates of ``update`` from ``carry`` (or, resuming, from the
    latest checkpoint; a run that never saved one starts from the beginning, saying so).

    Raises :class:`DivergenceError` when a chunk leaves a non-finite float in the carry or its
    metrics; nothing of that chunk is saved, so the last checkpoint is the last good state.
    Ctrl-C or SIGTERM (``KeyboardInterrupt``) is raised on after the checkpointers are settled
    and closed; the last checkpoint is then the last one finished.
    """
    ck = checkpointing
    step, resumed_from = 0, None
    if ck.resume:
        if ck.latest is None:
            raise ValueError("resume needs a checkpointer")
        if ck.latest.latest_step() is None:
            _note(f"--resume: {ck.latest.directory} holds no checkpoint (the run stopped before "
                  f"its first); starting from the beginning")
        else:
            step, carry, key = _restore(ck, carry, key)
            resumed_from = step
    bar = tqdm(total=schedule.num_updates * display.units_per_update,
               initial=step * display.units_per_update, desc=display.desc,
               disable=not (display.enabled and distributed.is_primary()), dynamic_ncols=True,
               unit_scale=True)
    n_chunks = saves = 0
    last_saved = ck.latest.latest_step() if ck.latest is not None else None
    ck_dir = ck.latest.directory if ck.latest is not None else None
    exits.note_progress(step, schedule.num_updates, last_saved, ck_dir)
    best = -float("inf")
    if ck.best is not None and ck.best.latest_step() is not None:
        best = ck.best.best_value()
    try:
        while step < schedule.num_updates:
            size = min(schedule.chunk_size, schedule.num_updates - step)
            started = time.perf_counter()
            # one-device leaves (fresh, restored, set by the hook) replicated over the mesh:
            # every chunk then has the same input shardings and compiles once
            carry, metrics = make_chunk(update, size)(to_global(carry), key, jnp.int32(step))
            jax.block_until_ready((carry, metrics))
            seconds = time.perf_counter() - started
            if not bool(_all_finite((carry, metrics))):
                last = ck.latest.latest_step() if ck.latest is not None else None
                where = (f"the last good checkpoint (update {last}) is kept in {ck.latest.directory}"
                         if last is not None else "no checkpoint was saved before it")
                raise DivergenceError(
                    f"training diverged: a parameter or metric turned non-finite (NaN or inf) "
                    f"between updates {step} and {step + size}; {where}. Lower the learning rate "
                    f"or check the inputs")
            step += size
            n_chunks += 1
            exits.note_progress(step, schedule.num_updates, last_saved, ck_dir)
            shown = on_chunk(step, carry, distributed.to_host(metrics), seconds)
            if between_chunks is not None:
                carry = between_chunks(step, carry)
            if ck.latest is not None and (n_chunks % schedule.checkpoint_every == 0
                                          or step >= schedule.num_updates):
                # the step's checkpoints (the carry, the part saved apart, the best) are one:
                # an interrupt waits until all are written, or a resumed run would not be exact
                with exits.deferred_interrupts():
                    saves += 1
                    _save(ck, step, carry, key, saves)
                    if ck.best is not None and shown and shown[ck.best_metric] >= best:
                        best = float(shown[ck.best_metric])
                        ck.best.save(step, ck.params(carry), key, ck.config_json, extra={ck.best_metric: best})
                    last_saved = step
                    exits.note_progress(step, schedule.num_updates, last_saved, ck_dir)
            bar.update(size * display.units_per_update)
            if shown:
                bar.set_postfix_str(display.show(shown) if display.show else _fmt(shown), refresh=False)
            if schedule.stop_after_chunks is not None and n_chunks >= schedule.stop_after_chunks:
                break
    except KeyboardInterrupt:
        # a second Ctrl-C does not cut this short (it is dropped: the first one stops the run)
        with exits.deferred_interrupts(then_raise=False):
            if ck.latest is not None:
                ck.latest.settle()
                try:
                    last_saved = ck.latest.latest_step()
                except Exception:  # noqa: BLE001 - the interrupt is what goes on
                    pass
                exits.note_progress(step, schedule.num_updates, last_saved, ck_dir)
            _settle(ck)
        raise
    finally:
        bar.close()
    return DriverResult(carry=carry, step=step, chunks_run=n_chunks, resumed_from=resumed_from)


def _save(ck: Checkpointing, step: int, carry: Any, key: jax.Array, saves: int) -> None:
    bulky = ck.bulky
    if bulky is None:
        ck.latest.save(step, carry, key, ck.config_json)
        return
    ck.latest.save(step, bulky.put(carry, None), key, ck.config_json)
    if bulky.checkpointer is not None and saves % bulky.every == 0:
        bulky.checkpointer.save(step, bulky.get(carry), key, ck.config_json)


def _settle(ck: Checkpointing) -> None:
    """After an interrupt: every checkpointer of the run with nothing in flight, nothing half
    written, and closed (the run is over; its owner's own close is then a no-op, so a second
    Ctrl-C cannot leave an orbax manager open, whose threads would flood stderr at exit)."""
    for c in (ck.latest, ck.best, ck.bulky.checkpointer if ck.bulky is not None else None):
        if c is not None:
            c.settle()
    for c in (ck.latest, ck.best, ck.bulky.checkpointer if ck.bulky is not None else None):
        if c is not None:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - the interrupt is what goes on
                pass


def _restore(ck: Checkpointing, fresh: Any, key: jax.Array) -> tuple[int, Any, jax.Array]:
    bulky = ck.bulky
    if bulky is None:
        step, carry, key, _ = ck.latest.restore(fresh, key)
        return step, _uncommitted(carry), key
    step, rest, key, _ = ck.latest.restore(bulky.put(fresh, None), key)
    part = bulky.get(fresh)
    saved = bulky.checkpointer
    if saved is not None and step in saved.all_steps():
        _, part, _, _ = saved.restore(part, key, step=step)
    elif saved is not None and saved.latest_step() is not None:
        part_step, part, _, _ = saved.restore(part, key)
        _note(f"resuming at update {step} with the part saved at update {part_step} "
              f"(it is saved less often): the run continues, but not exactly as an unbroken "
              f"run would")
    else:
        _note(f"resuming at update {step} with a fresh copy of the part not checkpointed")
    return step, _uncommitted(bulky.put(rest, part)), key


def _note(message: str) -> None:
    if distributed.is_primary():
        print(message, file=sys.stderr)


def _fmt(metrics: Mapping[str, float]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, (float, np.floating)) else f"{k}={v}"
                    for k, v in metrics.items())
