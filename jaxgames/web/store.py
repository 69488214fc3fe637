"""The games a server holds, by id; one lock per game so two requests for the same game run one
after the other (Starlette runs plain endpoints on a thread pool), while different games go on
side by side."""

from __future__ import annotations

import collections
import secrets
import threading
from typing import Any

from jaxgames.web.errors import BadRequest

#: games kept; the oldest untouched game goes when a new one would pass this (a page left open
#: for days should not grow the server without bound)
MAX_GAMES = 256


class Store:
    """``create(kind, game) -> id``; ``get(kind, id)`` the game and its lock (404 for an id
    never made, dropped, or made for another game)."""

    def __init__(self, max_games: int = MAX_GAMES):
        self.max_games = max_games
        self._games: collections.OrderedDict[str, tuple[str, Any, threading.Lock]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def create(self, kind: str, game: Any) -> str:
        gid = secrets.token_urlsafe(12)   # unguessable: one page cannot play another's game
        with self._lock:
            self._games[gid] = (kind, game, threading.Lock())
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        return gid

    def get(self, kind: str, gid: str) -> tuple[Any, threading.Lock]:
        with self._lock:
            entry = self._games.get(gid)
            if entry is None or entry[0] != kind:
                raise BadRequest(f"no {kind} game {gid!r} on this server (it may have been dropped: "
                                 f"start a new one)", 404)
            self._games.move_to_end(gid)
            return entry[1], entry[2]

    def __len__(self) -> int:
        return len(self._games)
