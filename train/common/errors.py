"""Expected failures of a pipeline: the CLI prints the message on one line and exits 2.

Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import functools
import sys
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


class UserError(Exception):
    """A failure the user can fix (bad input, a run folder in use, a damaged file ...)."""


def exit_on_user_error(prog: str) -> Callable[[F], F]:
    """Decorate a ``main``: a :class:`UserError` becomes ``prog: error: message`` and exit 2."""

    def wrap(main: F) -> F:
        @functools.wraps(main)
        def wrapped(*args, **kwargs):
            try:
                return main(*args, **kwargs)
            except UserError as e:
                print(f"{prog}: error: {e}", file=sys.stderr)
                raise SystemExit(2) from None
        return wrapped  # type: ignore[return-value]

    return wrap
