"""2048 in the browser, with hints: the move values of a depth-2 expectimax (no 2048 agent
ships), or of a trained n-tuple network (``--run 2048=runs/game2048/<run>``), as
``jaxgames.game2048.play``. A single-player game with nothing hidden but the next tile (drawn
from the server's key). Moves: ``{"action": "up" | "right" | "down" | "left"}`` (or 0..3).
"""

from __future__ import annotations

import functools
import secrets

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.game2048 import board as B
from jaxgames.game2048.board import rules
from jaxgames.game2048.game import Game2048
from jaxgames.game2048.play import EMPTY_CELL_VALUE, hint_values, read_run_tables
from jaxgames.web.errors import BadRequest, check_keys, require

HINTS = ("expectimax", "agent")
OPTIONS = ("variant", "hints", "depth", "seed")
NAMES = tuple(B.ACTION_NAMES)


@functools.lru_cache(maxsize=None)
def _jitted(variant: str):
    env = Game2048(variant=variant)
    return jax.jit(env.init), jax.jit(env.step)


def seat_view(state, variant: str) -> dict:
    tiles = rules(variant).values[np.asarray(state.board).astype(np.int64)].reshape(4, 4)
    over = bool(state.terminated)
    return {"board": tiles.tolist(), "score": int(state.score), "over": over, "max_tile": int(tiles.max()),
            "legal": [] if over else [NAMES[a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))]}


class Game:
    def __init__(self, options: dict, agents):
        check_keys(options, OPTIONS, "2048 option")
        self.variant = require(options, "variant", str, default="2048", choices=("2048", "2584"))
        hints = require(options, "hints", str, default="expectimax", choices=HINTS)
        depth = require(options, "depth", int, default=2, low=1, high=3)
        self.seed = require(options, "seed", int, default=secrets.randbelow(2**31), low=0, high=2**32 - 1)
        if hints == "agent":
            run = agents.run("2048")
            net, self.weights = agents.get(("2048", run, self.variant), lambda: read_run_tables(run, self.variant))
            self.hints_from = f"the n-tuple network of {run}, depth {depth}"
        else:
            net, self.weights = None, jnp.zeros(())
            self.hints_from = f"expectimax, depth {depth}, {EMPTY_CELL_VALUE:g} points per empty cell"
        self._values = hint_values(self.variant, depth, net)
        self._init, self._step = _jitted(self.variant)
        self._key = jax.random.key(self.seed)
        self.state = self._init(jax.random.fold_in(self._key, 0))
        self.moves = 0
        self.version = 0

    def move(self, body: dict) -> None:
        check_keys(body, ("action",), "2048 move")
        action = body.get("action")
        if isinstance(action, str) and action in NAMES:
            action = NAMES.index(action)
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < 4:
            raise BadRequest(f'a 2048 move is {{"action": "up" | "right" | "down" | "left"}}, got {body.get("action")!r}')
        if bool(self.state.terminated):
            raise BadRequest("the game is over: start a new one", 422)
        if not bool(np.asarray(self.state.legal_action_mask)[action]):
            raise BadRequest(f"{NAMES[action]} moves no tile", 422)
        self.state = self._step(self.state, jnp.int32(action), jax.random.fold_in(self._key, self.moves + 1))
        self.moves += 1
        self.version += 1

    def view(self) -> dict:
        return {"game": "2048", "version": self.version, "variant": self.variant, "hints_from": self.hints_from,
                "seed": self.seed, "moves": self.moves, **seat_view(self.state, self.variant)}

    def think(self) -> dict:
        if bool(self.state.terminated):
            raise BadRequest("the game is over: nothing to think about", 422)
        q, legal = (np.asarray(x) for x in self._values(self.weights, self.state.board))
        moves = [a for a in range(4) if legal[a]]
        best = max(moves, key=lambda a: q[a])
        return {"who": self.hints_from, "kind": "expected value of each move", "best": NAMES[best],
                "values": {NAMES[a]: float(q[a]) for a in moves}}
