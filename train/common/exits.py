"""How a pipeline's ``main`` ends on a failure.

A :class:`~train.common.errors.UserError` is printed on one line and the process exits 2;
anything else is a bug and keeps its traceback. In a multi-host run a process that fails
leaves at once (``watchdog.leave``: its output flushed, the others told, ``os._exit``)
instead of waiting at JAX's exit barrier for processes that are blocked waiting for it; the
others then stop too. A process that stops because another one is gone says so on one line
and exits with ``distributed.PEER_LOST_STATUS``.
"""

from __future__ import annotations

import functools
import sys
import traceback
from typing import Callable, NoReturn, TypeVar

from train.common import distributed, watchdog
from train.common.errors import UserError

__all__ = ["exit_on_user_error"]

F = TypeVar("F", bound=Callable)


def exit_on_user_error(prog: str) -> Callable[[F], F]:
    """Decorate a ``main``: a :class:`UserError` becomes ``prog: error: message`` and exit 2."""

    def wrap(main: F) -> F:
        @functools.wraps(main)
        def wrapped(*args, **kwargs):
            try:
                return main(*args, **kwargs)
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
        return wrapped  # type: ignore[return-value]

    return wrap


def _leave(message: str | None, status: int) -> NoReturn:
    if distributed.is_multiprocess():
        watchdog.leave(message, status)  # tells the others, and never returns
    if message is not None:
        sys.stderr.write(message + "\n")  # one write: other processes may share the stream
        sys.stderr.flush()
    raise SystemExit(status) from None
