"""The checkpoint manager of a run: rotation (the newest ``keep``), the best checkpoint, and
surviving damage. What it writes (a pytree: the training carry, or only the parameters for
``best/``; the update step, the PRNG key, the config and a format version; no pickle) is
defined in :mod:`jaxgames.checkpoints`, the one module that knows the format: trained players
read through it.

Damage is survived where it can be, and said on stderr (``docs/runs.md``):

- a save cut short by a kill leaves an orbax temporary folder (``<step>.orbax-checkpoint-tmp*``):
  it is removed when the folder is opened again;
- an unreadable newest checkpoint: :meth:`Checkpointer.restore` falls back to the newest one
  that reads, and moves the unreadable ones aside to ``damaged-<step>/`` (orbax ignores such
  folders and does not count them in ``keep``); nothing is deleted;
- unreadable metadata of a best checkpoint: :meth:`Checkpointer.best_value` treats the best
  value as unknown (the next evaluation replaces that checkpoint), with a warning.

Ctrl-C and SIGTERM never cut an orbax call short (``exits.deferred_interrupts``): a save, a
restore or the closing of the manager is finished first, and the interrupt raised after it.
A save cut short would leave a temporary folder, and orbax threads whose tracebacks flood
stderr at exit (``Save Finalize thread failed``, ``cannot schedule new futures after
shutdown``). :meth:`Checkpointer.settle` (the driver calls it on an interrupt) waits for
anything still in flight and removes what a cut-short save left.

A Checkpointer assumes it is the only writer of its folder (the run folder's lock sees to it).

Multi-host runs (``train/common/distributed.py``): every process creates the Checkpointer and
calls ``save`` and ``restore`` in step (orbax's multi-host support: each process writes its
shards, process 0 the metadata and the commit); arrays that live on one host only are first
replicated over the mesh, and restored arrays come back replicated over the mesh. Process 0
alone removes cut-short saves, moves damaged checkpoints aside and prints warnings. The
folder must be one that every host sees (a shared file system or a bucket).
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
from typing import Any

import jax
import orbax.checkpoint as ocp

from jaxgames import checkpoints
from train.common import distributed
from train.common.exits import deferred_interrupts, note_run_folder
from train.common.errors import UserError
from train.common.mesh import to_global

__all__ = ["CheckpointError", "Checkpointer"]


class CheckpointError(UserError, checkpoints.CheckpointError):
    """A checkpoint that is missing, unreadable or of another format version (a
    :class:`UserError`: the CLI says it on one line)."""


class _OtherFormat(CheckpointError):
    """Readable, but written by another format version: never moved aside."""


def _for_the_user(e: checkpoints.CheckpointError) -> CheckpointError:
    """The format's error as this manager's (another format version with what to do)."""
    if isinstance(e, checkpoints.OtherFormatError):
        return _OtherFormat(f"{e}: resume it with the version that wrote it, or start another --run-name")
    return CheckpointError(str(e))


def _warn(message: str) -> None:
    if distributed.is_primary():
        print(f"warning: {message}", file=sys.stderr)


class Checkpointer:
    def __init__(self, directory: str | pathlib.Path, *, keep: int = 3):
        self.directory = pathlib.Path(directory).absolute()
        self._closed = False
        if self.directory.is_dir() and distributed.is_primary():
            self._remove_cut_short(warn=True)
        distributed.barrier(f"checkpointer-open {self.directory}")
        if pathlib.Path(directory).name == checkpoints.LATEST:
            # a run's checkpoints (RunDir.open_checkpoints, once config.json is written): the
            # line a Ctrl-C prints names the run folder and continues it with --resume
            note_run_folder(pathlib.Path(directory).parent)
        with deferred_interrupts():
            self._manager = ocp.CheckpointManager(
                self.directory,
                options=ocp.CheckpointManagerOptions(max_to_keep=keep, create=True),
            )

    def _remove_cut_short(self, *, warn: bool) -> None:
        for stale in sorted(self.directory.glob(f"*{checkpoints.TMP_MARK}*")):
            if warn:
                _warn(f"removing {stale}: a checkpoint save that was cut short")
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)

    def save(self, step: int, tree: Any, key: jax.Array, config_json: str,
             extra: dict | None = None) -> None:
        """Save ``tree`` (any pytree of arrays) with ``key`` at ``step``; ``extra`` (a flat dict
        of numbers, e.g. the score of a best checkpoint) is kept in the JSON metadata. Ctrl-C or
        SIGTERM during the save are raised when it is finished."""
        state = checkpoints.state_tree(to_global(tree), key)
        with deferred_interrupts():
            self._manager.save(int(step), args=checkpoints.save_args(state, step, json.loads(config_json), extra))
            self._manager.wait_until_finished()
        # orbax counts this wait as the next save's "waiting for previous save" and warns on
        # stderr when it was long; every save here is waited for, so that warning is false
        if hasattr(self._manager, "_wait_for_prev_save_duration"):
            self._manager._wait_for_prev_save_duration = 0.0

    def _step_dir(self, step: int) -> pathlib.Path:
        return self.directory / str(step)

    def _meta(self, step: int) -> dict:
        try:
            with deferred_interrupts():
                meta = self._manager.restore(step, args=checkpoints.meta_args())["meta"]
        except Exception as e:  # orbax raises many types for unreadable files
            raise _for_the_user(checkpoints.unreadable(
                self._step_dir(step), e, what="the metadata of checkpoint")) from e
        try:
            return checkpoints.check_meta(meta, self._step_dir(step))
        except checkpoints.CheckpointError as e:
            raise _for_the_user(e) from None

    def best_value(self, *, strict: bool = False) -> float:
        """The ``extra`` metric saved with the latest checkpoint (for a best-only manager);
        -inf when there is none. Unreadable metadata raises :class:`CheckpointError` with
        ``strict``; otherwise it warns and gives -inf (the best so far is unknown, so the next
        evaluation replaces that checkpoint)."""
        step = self._manager.latest_step()
        if step is None:
            return -float("inf")
        try:
            meta = self._meta(step)
            return max((float(v) for k, v in meta.items() if k not in checkpoints.META_KEYS),
                       default=-float("inf"))
        except (CheckpointError, TypeError, ValueError) as e:
            err = e if isinstance(e, CheckpointError) else CheckpointError(
                f"the metadata of checkpoint {self._step_dir(step)} holds no number ({e})")
            if strict:
                raise err from e
            _warn(f"{err}; the best value so far is unknown: the next evaluation replaces it")
            return -float("inf")

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def all_steps(self) -> list[int]:
        return sorted(self._manager.all_steps())

    def restore(self, like_tree: Any, like_key: jax.Array, *, step: int | None = None
                ) -> tuple[int, Any, jax.Array, dict]:
        """The newest readable checkpoint as ``(step, tree, key, meta)``; ``like_*`` give the
        structure, shapes and dtypes. Newer checkpoints that cannot be read are moved aside to
        ``damaged-<step>/`` (said on stderr); if none can be read, nothing is moved and
        :class:`CheckpointError` says what to do. With ``step``, exactly that checkpoint (no
        fallback, nothing moved; e.g. a part of the carry saved apart at the step the rest was
        restored from)."""
        steps = self.all_steps()
        if not steps:
            raise CheckpointError(
                f"no checkpoint in {self.directory}: the run never saved one")
        like = checkpoints.state_tree(like_tree, like_key)
        abstract = to_global(jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, like))
        if step is not None:
            if step not in steps:
                raise CheckpointError(f"no checkpoint of step {step} in {self.directory} "
                                      f"(it holds {', '.join(map(str, steps))})")
            return self._restore_step(step, abstract)
        failures = []
        for step in reversed(steps):
            try:
                found = self._restore_step(step, abstract)
            except _OtherFormat:
                raise
            except CheckpointError as e:
                failures.append((step, e))
                continue
            for bad, err in failures:
                if distributed.is_primary():
                    aside = self._move_aside(bad)
                    _warn(f"{err}; moved it to {aside} and resumed from step {step} instead")
            if failures:
                distributed.barrier(f"checkpointer-moved-aside {self.directory}")
                self._manager.reload()
            return found
        raise CheckpointError(
            f"none of the checkpoints in {self.directory} can be read (newest: "
            f"{failures[0][1]}); start another --run-name, or move the step folders aside to "
            f"start this run again from the beginning with --resume")

    def restore_or_warn(self, like_tree: Any, like_key: jax.Array, *, step: int,
                        consequence: str) -> Any | None:
        """The tree saved at exactly ``step``, or None when it cannot be read, said in one
        warning that ends with ``consequence`` (what the caller does without it): for side
        results, such as the best model's evaluation at the end of a long run, which should not
        fail the run."""
        try:
            return self.restore(like_tree, like_key, step=step)[1]
        except CheckpointError as e:
            _warn(f"{e}; {consequence}")
            return None

    def _restore_step(self, step: int, abstract: Any) -> tuple[int, Any, jax.Array, dict]:
        where = self._step_dir(step)
        try:
            checkpoints.check_shapes(where, abstract)
            try:
                with deferred_interrupts():  # a restore cut short leaves pending reads
                    restored = self._manager.restore(step, args=checkpoints.restore_args(abstract))
            except Exception as e:  # orbax raises many types for unreadable files
                raise checkpoints.unreadable(where, e, why="its files are damaged, or it does not "
                                                           "match this configuration") from e
            carry, key, meta = checkpoints.unpack(restored, where)
        except checkpoints.CheckpointError as e:
            raise _for_the_user(e) from e
        return step, carry, key, meta

    def _move_aside(self, step: int) -> pathlib.Path:
        target = checkpoints.aside_path(self.directory, step)
        self._step_dir(step).rename(target)
        return target

    def settle(self) -> None:
        """After an interrupt: wait for any save still in flight, then remove what a save cut
        short left (``*.orbax-checkpoint-tmp*``; process 0). The newest finished checkpoint is
        then the last one. Never raises: the interrupt is what the user sees."""
        if self._closed:
            return
        try:
            with deferred_interrupts(then_raise=False):
                self._manager.wait_until_finished()
        except Exception:  # noqa: BLE001 - a failed save is cleaned below
            pass
        if distributed.is_primary():
            self._remove_cut_short(warn=False)
        try:
            self._manager.reload()
        except Exception:  # noqa: BLE001
            pass

    def close(self) -> None:
        """Finish pending saves and stop orbax's threads; closing twice is a no-op."""
        if not self._closed:
            self._closed = True
            with deferred_interrupts():
                self._manager.close()
