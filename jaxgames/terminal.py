"""What every ``python -m jaxgames.<game>.play`` shares: reading typed lines and writing replies.

A session reads lines from any iterator (tests feed lists, the CLI feeds :func:`stdin_lines`)
and writes to any text stream; :class:`TerminalIO` gives it ``_say`` and ``_read`` over its
``out`` stream and ``echo`` flag (echo repeats piped input so a transcript reads like a game).
"""

from __future__ import annotations

import sys
from typing import Iterator, TextIO


def stdin_lines() -> Iterator[str]:
    """Lines typed on standard input, read one at a time (a game answers each before the next)."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        yield line


class TerminalIO:
    """Mixin: ``_say`` writes a line, ``_read`` shows a prompt and takes the next line.

    The class using it sets ``out`` (a text stream) and ``echo`` (bool)."""

    out: TextIO
    echo: bool

    def _say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self, lines: Iterator[str], prompt: str) -> str | None:
        """The next line without its newline, or None at the end of input."""
        self.out.write(prompt)
        self.out.flush()
        try:
            line = next(lines)
        except StopIteration:
            self._say()
            return None
        line = line.rstrip("\r\n")
        if self.echo:
            self._say(line)
        return line
