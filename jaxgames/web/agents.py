"""Who plays against the person, loaded once per server and shared by every game.

The shipped agents (``jaxgames.pretrained``) are the default; a trained run folder given to
the server (``--run holdem=runs/holdem/<run>``) is the opponent ``"agent"`` of that game.
Players are cached per choice, and their jitted policies are cached per process
(``jaxgames.player.jitted``), so a second game with the same opponent compiles nothing.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from jaxgames.terminal import OpponentUnavailable
from jaxgames.web.errors import BadRequest

#: the games whose play CLI takes a trained run folder (``--run``)
RUN_GAMES = ("hex", "holdem", "hearts", "ten_half", "2048")


class Agents:
    """``runs``: game -> run folder of a trained agent (``opponent: "agent"``)."""

    def __init__(self, runs: dict[str, str] | None = None):
        self.runs = dict(runs or {})
        for game in self.runs:
            if game not in RUN_GAMES:
                raise ValueError(f"no game {game!r} takes a run folder; the games: {', '.join(RUN_GAMES)}")
        self._cache: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    def run(self, game: str) -> str:
        """The run folder of ``game``'s trained agent; BadRequest when the server has none."""
        if game not in self.runs:
            raise BadRequest(f"this server has no trained {game} agent: start it with "
                             f"--run {game}=runs/{game}/<run> (or pick another opponent)")
        return self.runs[game]

    def get(self, key: tuple, build: Callable[[], Any]) -> Any:
        """The player cached under ``key``, built once; a ValueError of the loader (a damaged
        or missing file: jaxgames' loaders raise nothing else on purpose) is a 400 for the
        request and is not cached (as the play CLIs' OpponentUnavailable)."""
        with self._lock:
            if key not in self._cache:
                try:
                    self._cache[key] = build()
                except (ValueError, OpponentUnavailable) as e:
                    raise BadRequest(f"the {key[0]} opponent cannot be used: {e}") from None
            return self._cache[key]
