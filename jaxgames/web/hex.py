"""Hex in the browser: the person plays Black or White against the shipped AlphaZero-style
agent of the board's size (7, 9, 11), a trained run, or plain UCT (which plays every size and
the swap rule). The opponents are ``jaxgames.hex.play``'s own (same flags, same caches).

Moves: ``{"cell": 0..n*n-1}`` (row-major, a1 = 0), ``{"swap": true}`` (White's first move,
with the swap rule), ``{"undo": true}`` (takes back the person's last move and the reply).
``think`` runs the opponent's search from the person's position and returns its visit counts.
A perfect-information game: the view is the whole board.
"""

from __future__ import annotations

import functools
import secrets

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hex import play as hex_play
from jaxgames.hex.board import BLACK, MAX_SIZE, MIN_SIZE, to_cell_name
from jaxgames.hex.sgf import to_sgf
from jaxgames.player import jitted
from jaxgames.web.errors import BadRequest, check_keys, require

OPPONENTS = tuple(hex_play.OPPONENTS)          # pretrained, uct, agent
OPTIONS = ("opponent", "board_size", "colour", "swap", "simulations", "seed")
COLOURS = ("black", "white")


def opponent(name: str, board_size: int | None, swap: bool, simulations: int | None, agents):
    """``(env, player)`` from ``jaxgames.hex.play``'s factories (cached by ``agents``)."""
    run = agents.run("hex") if name == "agent" else None
    settings = hex_play.Settings(board_size=board_size, swap=swap, opponent=name, simulations=simulations, run=run)
    return agents.get(("hex", name, board_size, swap, simulations, run), lambda: hex_play.OPPONENTS[name](settings))


@functools.lru_cache(maxsize=None)
def _az_visits(board_size: int, network: str, search: str, simulations: int, sizes: tuple, symmetric: bool):
    """Jitted ``visits(params, state, key) -> int32 [A]``: the agent's own MCTS (no root noise,
    as it plays) from ``state``, its root visit counts."""
    from jaxgames.hex.agent import _build, agent_apply
    from jaxgames.search import mcts
    env, net, _, _ = _build(board_size, network, search, simulations, sizes, symmetric)
    apply = agent_apply(net.apply, board_size, symmetric)
    extra = {"gumbel_scale": 0.0} if search == "gumbel" else {}

    def visits(params, state, key):
        one = jax.tree_util.tree_map(lambda x: x[None], state)
        out = mcts.search(env, apply, params, one, key, num_simulations=simulations, kind=search,
                          dirichlet_fraction=0.0, **extra)
        return out.search_tree.summary().visit_counts[0]
    return jax.jit(visits)


@functools.lru_cache(maxsize=None)
def _uct(env, simulations: int):
    """Jitted ``search(state, key) -> UCTOutput`` (the move and the root's visit counts): the
    computer's UCT move and the person's "think" are one compiled search (the policy the play
    CLI jits is this search's ``.action``; compiling both would double the first wait)."""
    from jaxgames.search.uct import uct_search
    return jax.jit(lambda state, key: uct_search(env, state, key, num_simulations=simulations))


def seat_view(state, n: int, human: int) -> dict:
    board = np.asarray(state.board).astype(int).reshape(n, n)
    over = bool(state.terminated)
    mask = np.asarray(state.legal_action_mask)
    mine = not over and int(state.current_player) == human
    view = {"board": board.tolist(), "to_move": None if over else int(state.current_player),
            "last_move": int(state.last_move), "over": over,
            "legal": np.flatnonzero(mask[: n * n]).tolist() if mine else [],
            "can_swap": bool(mine and mask[n * n])}
    if over:
        view["winner"] = int(np.argmax(np.asarray(state.rewards)))
    return view


class Game:
    def __init__(self, options: dict, agents):
        check_keys(options, OPTIONS, "Hex option")
        name = require(options, "opponent", str, default="pretrained", choices=OPPONENTS)
        size = require(options, "board_size", int, low=MIN_SIZE, high=MAX_SIZE)
        colour = require(options, "colour", str, default="black", choices=COLOURS)
        swap = require(options, "swap", bool, default=False)
        simulations = require(options, "simulations", int, low=1, high=20_000)
        self.seed = require(options, "seed", int, default=secrets.randbelow(2**31), low=0, high=2**32 - 1)
        self.env, self.player = opponent(name, size, swap, simulations, agents)
        self.opponent_name = name
        self.uct_simulations = simulations or hex_play.DEFAULT_UCT_SIMULATIONS
        self.n = self.env.board_size
        self.swap = self.env.swap
        self.human = COLOURS.index(colour)
        self._step = jitted(self.env.step)
        self._key = jax.random.key(self.seed)
        self.searches = 0
        self.states = [self.env.init(jax.random.key(0))]
        self.actions: list[int] = []
        self.version = 0
        self._computer_moves()

    @property
    def state(self):
        return self.states[-1]

    def _computer_moves(self) -> None:
        while not bool(self.state.terminated) and int(self.state.current_player) != self.human:
            self.searches += 1
            key = jax.random.fold_in(self._key, self.searches)
            if self.opponent_name == "uct":
                action = int(_uct(self.env, self.uct_simulations)(self.state, key).action)
            else:
                action = int(jitted(self.player.policy)(self.player.params, self.state, key))
            if not bool(np.asarray(self.state.legal_action_mask)[action]):
                raise RuntimeError(f"{self.player.name} chose the illegal move {action}")
            self.states.append(self._step(self.state, jnp.int32(action)))
            self.actions.append(action)

    def move(self, body: dict) -> None:
        check_keys(body, ("cell", "swap", "undo"), "Hex move")
        if body.get("undo"):
            if len(self.actions) <= self.human:
                raise BadRequest("nothing to undo: you have not moved yet", 422)
            keep = len(self.actions) - 1
            while keep % 2 != self.human:   # back to before the person's last move
                keep -= 1
            del self.states[keep + 1:], self.actions[keep:]
            self.version += 1
            return
        n = self.n
        if body.get("swap"):
            action = n * n
        else:
            action = require(body, "cell", int, low=0, high=n * n - 1)
            if action is None:
                raise BadRequest('a Hex move is {"cell": 0..n*n-1}, {"swap": true} or {"undo": true}')
        if bool(self.state.terminated):
            raise BadRequest("the game is over: undo or start a new one", 422)
        if not bool(np.asarray(self.state.legal_action_mask)[action]):
            if action == n * n:
                raise BadRequest("no swap now: only White's first move may swap, with the swap rule on", 422)
            raise BadRequest(f"{to_cell_name(action, n)} is taken", 422)
        before = len(self.actions)
        self.states.append(self._step(self.state, jnp.int32(action)))
        self.actions.append(action)
        try:
            self._computer_moves()
        except Exception:
            del self.states[before + 1:], self.actions[before:]   # nothing happened
            raise
        self.version += 1

    def view(self) -> dict:
        return {"game": "hex", "version": self.version, "opponent": self.player.name, "seed": self.seed,
                "board_size": self.n, "swap_rule": self.swap, "human": self.human,
                "moves": [("swap" if a == self.n * self.n else to_cell_name(a, self.n)) for a in self.actions],
                **seat_view(self.state, self.n, self.human)}

    def think(self) -> dict:
        s = self.state
        if bool(s.terminated) or int(s.current_player) != self.human:
            raise BadRequest("not your turn: nothing to think about", 422)
        key = jax.random.fold_in(self._key, 10**6 + self.version)
        p = self.player
        if self.opponent_name == "uct":
            visits = np.asarray(_uct(self.env, self.uct_simulations)(s, key).visit_counts)
        else:
            visits = np.asarray(_az_visits(p.board_size, p.network_kind, p.search, p.simulations, p.sizes,
                                           p.symmetric)(p.params, s, key))
        n = self.n
        legal = np.asarray(s.legal_action_mask)
        best = int(np.argmax(np.where(legal, visits, -1)))
        return {"who": p.name, "kind": "search visit counts", "total": int(visits[legal].sum()),
                "visits": visits[: n * n].astype(int).reshape(n, n).tolist(),
                "swap_visits": int(visits[n * n]) if legal[n * n] else None,
                "best": "swap" if best == n * n else to_cell_name(best, n)}

    def sgf(self) -> str:
        names = {self.human: "Human", 1 - self.human: self.player.name}
        return to_sgf(self.actions, self.n, {"PB": names[BLACK], "PW": names[1 - BLACK],
                                             "C": f"jaxgames.web, {self.player.name}, seed {self.seed}, "
                                                  f"swap {'on' if self.swap else 'off'}"})
