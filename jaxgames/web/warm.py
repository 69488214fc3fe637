"""The server's warm-up: right after it starts answering, one game of each page with its
default options is played in a background thread, off the store, so that the programs a
person's first game runs (the agent's search, the step, "think") are compiled before anyone
waits on them (jaxgames.player.jitted keeps them for every later game). The pages answer at
once meanwhile; a person who starts a game before its warm-up is done waits as without it.
``python -m jaxgames.web --no-warm-up`` leaves the compiles to each program's first use.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from jaxgames.web.server import game_class

#: the order the games are warmed in: the short compiles first, then the long ones
ORDER = ("ten_half", "2048", "holdem", "hex", "hearts")
#: moves of the warm-up game: Hearts' three passes and its first card, hold'em's next hand
MOVES = 6


def first_legal(game: str, view: dict) -> dict | None:
    """A legal move of ``view`` (the first listed), the next deal once a hand is over, or None
    when the game is over (Hex, Hearts, 2048: no next deal)."""
    if view.get("over") and game in ("hearts", "2048", "hex"):
        return None
    if game == "holdem":
        return {"deal": True} if view["hand"]["over"] else {"action": view["hand"]["legal"][0]["action"]}
    if game == "ten_half":
        return {"deal": True} if view["over"] else {"action": view["legal"][-1]}
    if game == "hearts":
        return {"card": view["legal"][0]["id"]}
    if game == "2048":
        return {"action": view["legal"][0]}
    return {"cell": view["legal"][len(view["legal"]) // 2]}


def warm_game(game: str, agents, *, moves: int = MOVES) -> None:
    """One game of ``game`` with its default options: a "think", then ``moves`` legal moves
    (fewer if the game ends)."""
    g = game_class(game)({}, agents)
    g.think()
    view = g.view()
    for _ in range(moves):
        move = first_legal(game, view)
        if move is None:
            return
        g.move(move)
        view = g.view()


def warm_up(agents, *, games=ORDER, ready: Callable[[], bool] = lambda: True,
            log: TextIO | None = None) -> None:
    """Wait until ``ready()`` (the server answers), then warm each of ``games``, saying so on
    ``log`` (default standard output); a game whose warm-up fails is skipped with one line
    (its first real game says why)."""
    log = log or sys.stdout
    while not ready():
        time.sleep(0.05)
    for game in games:
        start = time.perf_counter()
        try:
            warm_game(game, agents)
        except Exception as e:    # noqa: BLE001 - the warm-up must not stop the server
            print(f"jaxgames web: warm-up of {game} skipped: {type(e).__name__}: {e}", file=log, flush=True)
            continue
        print(f"jaxgames web: {game} ready ({time.perf_counter() - start:.1f} s)", file=log, flush=True)
