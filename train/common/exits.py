"""How a pipeline's ``main`` ends on a failure or an interrupt.

A :class:`~train.common.errors.UserError` is printed on one line and the process exits 2;
anything else is a bug and keeps its traceback. In a multi-host run a process that fails
leaves at once (``watchdog.leave``: its output flushed, the others told, ``os._exit``)
instead of waiting at JAX's exit barrier for processes that are blocked waiting for it; the
others then stop too. A process that stops because another one is gone says so on one line
and exits with ``distributed.PEER_LOST_STATUS``.

Ctrl-C (SIGINT) and SIGTERM (what a cluster sends before it kills a job) stop a run the same
way: while ``main`` runs, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) in the
main thread as Ctrl-C raises ``KeyboardInterrupt``. The driver abandons the chunk it is in and
keeps the last checkpoint (a checkpoint save, once started, is finished first:
:func:`deferred_interrupts`); the command then prints one line that says where the run stands
and the exact command that continues it (the user's flags and ``--resume``) and exits with
status 130 (:data:`INTERRUPTED_STATUS`). Where the run stands is told to this module as the run
goes (:func:`note_run_folder` by the run folder, :func:`note_progress` by the driver). A process
of a multi-host run leaves as for a failure (``watchdog.leave``), so that the others stop too
and none hangs.
"""

from __future__ import annotations

import contextlib
import functools
import pathlib
import shlex
import signal
import sys
import threading
import traceback
from typing import Callable, Iterator, NoReturn, Sequence, TypeVar

from train.common import distributed, watchdog
from train.common.errors import UserError

__all__ = ["INTERRUPTED_STATUS", "Terminated", "deferred_interrupts", "exit_on_user_error",
           "note_progress", "note_run_folder"]

F = TypeVar("F", bound=Callable)

INTERRUPTED_STATUS = 130
"""Exit status of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as a shell reports Ctrl-C)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread while a pipeline's ``main`` runs (as Ctrl-C is)."""


# Where the run of this process stands, for the line an interrupt prints; reset by each main.
_where: dict = {}


def note_run_folder(path: str | pathlib.Path) -> None:
    """The run folder is opened (its ``config.json`` written): ``--resume`` continues it."""
    _where["folder"] = pathlib.Path(path)


def note_progress(step: int, num_updates: int, checkpoint: int | None,
                  checkpoints: str | pathlib.Path | None) -> None:
    """The driver's progress: ``step`` updates of ``num_updates`` done, the last checkpoint
    (None: none yet) in the folder ``checkpoints``."""
    _where.update(step=int(step), num_updates=int(num_updates), checkpoint=checkpoint,
                  checkpoints=checkpoints)


def exit_on_user_error(prog: str) -> Callable[[F], F]:
    """Decorate a ``main(argv)``: a :class:`UserError` becomes ``prog: error: message`` and exit
    2; Ctrl-C or SIGTERM one line saying how to continue the run, and exit 130."""

    def wrap(main: F) -> F:
        @functools.wraps(main)
        def wrapped(*args, **kwargs):
            argv = kwargs.get("argv", args[0] if args else None)
            argv = list(sys.argv[1:] if argv is None else argv)
            _where.clear()
            previous = _on_sigterm()
            try:
                return main(*args, **kwargs)
            except KeyboardInterrupt as e:
                _leave(_interrupted_line(prog, argv, e), INTERRUPTED_STATUS)
            except UserError as e:
                _leave(f"{prog}: error: {e}", 2)
            except Exception as e:
                if distributed.peer_lost(e):
                    _leave(f"{prog}: error: {distributed.peer_lost_message(e)}",
                           distributed.PEER_LOST_STATUS)
                if distributed.is_multiprocess():
                    traceback.print_exc()
                    _leave(None, 1)
                raise
            finally:
                if previous is not None:
                    signal.signal(signal.SIGTERM, previous)
        return wrapped  # type: ignore[return-value]

    return wrap


@contextlib.contextmanager
def deferred_interrupts(*, then_raise: bool = True) -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block ends, and are then raised as they would have
    been (``then_raise``; else dropped: for the cleanup after a first interrupt, which a second
    Ctrl-C must not cut short). For work that must not be left half done: an orbax save cut
    short leaves a temporary folder and threads whose tracebacks flood stderr at exit. Outside
    the main thread (where no signal handler runs) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def hold(signum, frame):
        if not got:
            got.append(signum)

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, hold)
    try:
        signal.signal(signal.SIGTERM, hold)
        yield
    finally:
        try:
            signal.signal(signal.SIGTERM, before[signal.SIGTERM])
        finally:
            signal.signal(signal.SIGINT, before[signal.SIGINT])
    if got and then_raise:
        handler = before[got[0]]
        if callable(handler):
            handler(got[0], None)       # Python's raises KeyboardInterrupt, ours Terminated
        elif handler == signal.SIG_DFL:
            signal.raise_signal(got[0])


def _raise_terminated(signum, frame) -> NoReturn:
    raise Terminated()


def _on_sigterm():
    """Install the SIGTERM handler (main thread only); the handler it replaces."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)


def _resume_command(prog: str, argv: Sequence[str], resume: bool) -> str:
    words = [w for w in argv if w not in ("--resume", "--no-resume") and not w.startswith("--resume=")]
    return " ".join([prog, shlex.join(words + (["--resume"] if resume else []))]).rstrip()


def _interrupted_line(prog: str, argv: Sequence[str], e: KeyboardInterrupt) -> str:
    what = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
    if distributed.is_multiprocess() and not distributed.is_primary():
        import jax
        return f"{prog}: process {jax.process_index()} of {jax.process_count()} {what}"
    w = dict(_where)
    folder = w.get("folder")
    resume = folder is not None or "step" in w or any(
        a == "--resume" or a.startswith("--resume=") for a in argv)
    command = _resume_command(prog, argv, resume)
    if "step" in w:
        step, n, last = w["step"], w["num_updates"], w["checkpoint"]
        at = (f"{what} after the last update ({n}), before the results were written" if step >= n
              else f"{what} at update {step} of {n}")
        if last is None:
            kept = "no checkpoint was saved yet (--resume starts the run from the beginning)"
        else:
            kept = f"the last checkpoint (update {last}) is kept in {folder or w['checkpoints']}"
        return f"{prog}: {at}; {kept}; continue with: {command}"
    if folder is not None:
        return f"{prog}: {what} before training started; the run is in {folder}; continue with: {command}"
    if resume:
        return f"{prog}: {what} before the run was opened; continue with: {command}"
    return f"{prog}: {what} before the run folder was made (nothing was written); start it again with: {command}"


def _leave(message: str | None, status: int) -> NoReturn:
    if distributed.is_multiprocess():
        watchdog.leave(message, status)  # tells the others, and never returns
    if message is not None:
        sys.stderr.write(message + "\n")  # one write: other processes may share the stream
        sys.stderr.flush()
    raise SystemExit(status) from None
