"""Play 2048 in the terminal, with hints from a search or from a trained n-tuple network.

    python -m jaxgames.game2048.play                               # hints: expectimax, depth 2
    python -m jaxgames.game2048.play --depth 3 --seed 7
    python -m jaxgames.game2048.play --run runs/game2048/quick-seed0   # hints: the run's tables
    python -m jaxgames.game2048.play --variant 2584

Type a move: ``up``, ``right``, ``down``, ``left`` (``u``, ``r``, ``d``, ``l``), or its number 0-3. A move that changes nothing is not legal and
gets a message. ``hint`` (``tip``) shows the move the hint player picks and the value of every
legal move by its own measure. ``help``, ``quit``; the game ends when no move is legal.

No agent ships for 2048 (its n-tuple tables are hundreds of megabytes: docs/pretrained.md), so
the hints come from one of two players:

- by default, expectimax (:mod:`jaxgames.search.expectimax`) to ``--depth`` move layers (2:
  each move, then every tile that may spawn, then each move again) over the merge reward, with
  a simple evaluation at the leaves, :func:`empty_cells_value`: ``EMPTY_CELL_VALUE`` points
  for every empty cell of the afterstate (room to move is what keeps a game alive). A move's
  value is its merge reward plus the expected value below it;
- ``--run runs/game2048/<run>``: the n-tuple network a ``python -m train.game2048`` run
  exported (its ``tables.npz``: patterns, base and variant are read from the file), greedy on
  merge reward + V(afterstate) (``jaxgames.game2048.players.value_policy``, depth 1, as the
  run evaluates it; ``--depth`` searches deeper on it).

A bad flag, or a run folder whose tables cannot be used, ends with one line and exit status 2.
The loop (reading, quit, help, the end of input, Ctrl-C) is
:class:`jaxgames.terminal.PlaySession`; here is what is 2048's.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import pathlib
import sys
from typing import Any, Iterable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import cli_args
from jaxgames.game2048 import board as B
from jaxgames.game2048.game import Game2048
from jaxgames.game2048.ntuple import NTupleNetwork
from jaxgames.game2048.players import search_game
from jaxgames.game2048.render import render_text
from jaxgames.game2048.tables import load_tables
from jaxgames.player import Player
from jaxgames.run_folder import read_config_json
from jaxgames.search import expectimax
from jaxgames.terminal import (OpponentUnavailable, PlaySession, exit_process, exit_status, run_cli,
                               seed_or_random)

PROG = "python -m jaxgames.game2048.play"
#: the leaf evaluation's points per empty cell: about one merge of two 8s (16 points), so
#: the search trades a small merge for room, not a large one
EMPTY_CELL_VALUE = 16.0
ALIASES = {0: ("up", "u", "0"), 1: ("right", "r", "1"), 2: ("down", "d", "2"), 3: ("left", "l", "3")}
_BY_WORD = {w: a for a, words in ALIASES.items() for w in words}
HINT_WORDS = ("hint", "tip")
MAX_DEPTH = 3
HELP = ("Commands: up (u, 0), right (r, 1), down (d, 2), left (l, 3); hint (tip) shows the hint player's "
        "move and each move's value; help; quit (Ctrl-D also quits).")


@dataclasses.dataclass(frozen=True)
class Settings:
    run: str | None = None       # a python -m train.game2048 run folder: its tables give the hints
    depth: int | None = None     # search depth (None: 2 for the evaluation, 1 for a run's tables)
    variant: str = "2048"
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class Result:
    score: int
    moves: int
    max_tile: int
    hints: int
    ended_by: str            # "end" (no legal move), "quit", "eof" or "interrupt"
    exit_code: int


def empty_cells_value(board: jax.Array) -> jax.Array:
    """The leaf evaluation of the default hints: ``EMPTY_CELL_VALUE`` per empty cell, float32 []."""
    return EMPTY_CELL_VALUE * jnp.sum(board == 0).astype(jnp.float32)


@functools.lru_cache(maxsize=None)
def hint_values(variant: str, depth: int, net: NTupleNetwork | None):
    """Jitted ``values(weights, board) -> (q float32 [4], legal bool [4])``: expectimax to
    ``depth`` on the n-tuple network ``net`` with its ``weights``, or (``net`` None, weights
    unused) on :func:`empty_cells_value`. One compile per process and setting."""
    game = search_game(variant)
    if net is None:
        return jax.jit(lambda weights, board: expectimax.action_values(game, empty_cells_value, board, depth))
    return jax.jit(lambda weights, board: expectimax.action_values(
        game, lambda b: net.value(weights, b), board, depth))


def read_run_tables(run: str | pathlib.Path, variant: str) -> tuple[NTupleNetwork, jax.Array]:
    """The network and weights a run exported (``run/tables.npz``); OpponentUnavailable with one line."""
    path = pathlib.Path(run) / "tables.npz"
    # the folder's own config first: another game's run, or no run at all, is named as such
    read_config_json(run, game="game2048", error=OpponentUnavailable, title="2048")
    if not path.is_file():
        raise OpponentUnavailable(f"{path} is missing: the run has not finished (it exports its tables at the end)")
    try:
        with np.load(path, allow_pickle=False) as f:
            patterns = tuple(tuple(int(c) for c in p) for p in f["patterns"].tolist())
            base, saved = int(f["base"]), str(f["variant"])
    except Exception as e:   # numpy's many errors for a file that is not one: one line
        raise OpponentUnavailable(f"{path} is not a readable tables file ({type(e).__name__}: "
                                  f"{' '.join(str(e).split())[:200]})") from None
    if saved != variant:
        raise OpponentUnavailable(f"{path} holds a {saved} network and this game is {variant}: give --variant {saved}")
    try:
        net = NTupleNetwork(patterns=patterns, base=base)
        return net, load_tables(path, net, variant)
    except ValueError as e:
        raise OpponentUnavailable(" ".join(str(e).split())[:300]) from None


class Session(PlaySession):
    """One game of 2048 typed by a person, with hints."""

    HELP = HELP

    def __init__(self, settings: Settings, output: TextIO, *, echo: bool = False):
        self.tables = settings.run is not None
        depth = settings.depth or (1 if self.tables else 2)
        if self.tables:
            net, self.weights = read_run_tables(settings.run, settings.variant)
            label = f"the n-tuple network of {pathlib.Path(settings.run).name}, depth {depth}"
        else:
            net, self.weights = None, jnp.zeros(())
            label = f"expectimax, depth {depth}, {EMPTY_CELL_VALUE:g} points per empty cell"
        # the hint player, as the shared loop names the computer (it never moves here)
        self.opponent = Player(name=label, policy=None)
        super().__init__(settings, output, echo=echo)
        self.env = Game2048(variant=settings.variant)
        self._init, self._step = _jitted_env(settings.variant)
        self._values = hint_values(settings.variant, depth, net)
        self.human = 0
        init_key, self._step_key = jax.random.split(jax.random.key(settings.seed))
        self.state = self._init(init_key)

    def turn_starts(self) -> None:
        self._say()
        self._say(render_text(np.asarray(self.state.board), self.settings.variant))
        self._say(f"score {int(self.state.score):,}, move {int(self.state.step_count) + 1}")

    def prompt(self) -> str:
        return "your move > "

    def legal(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(np.asarray(self.state.legal_action_mask))]

    def parse(self, line: str) -> tuple[str, Any]:
        word = line.strip().lower()
        if word in HINT_WORDS:
            return "hint", None
        action = _BY_WORD.get(word)
        if action is None:
            return "bad", f"{line.strip()!r} is not a move: type up, right, down or left (or hint, help, quit)."
        if action not in self.legal():
            moves = ", ".join(B.ACTION_NAMES[a] for a in self.legal())
            return "bad", f"{B.ACTION_NAMES[action]} moves nothing: try {moves}."
        return "move", action

    def hint(self) -> None:
        q, legal = (np.asarray(x) for x in self._values(self.weights, self.state.board))
        best = int(np.argmax(np.where(legal, q, -np.inf)))
        shown = ", ".join(f"{B.ACTION_NAMES[a]} {q[a]:,.1f}" for a in range(4) if legal[a])
        self._say(f"Hint ({self.opponent.name}): {B.ACTION_NAMES[best]}. Values: {shown}.")

    def move(self, action: int) -> None:
        key = jax.random.fold_in(self._step_key, int(self.state.step_count))
        self.state = self._step(self.state, jnp.int32(action), key)
        gained = int(np.asarray(self.state.rewards)[0])
        self._say(f"You: {B.ACTION_NAMES[action]}" + (f" (+{gained:,})" if gained else ""))

    def computer_move(self) -> None:   # the tile spawns inside the game's step: never asked
        raise RuntimeError("2048 has no computer's turn")

    def start(self) -> None:
        s = self.settings

        def compile_both():
            jax.block_until_ready(self._values(self.weights, self.state.board))
            jax.block_until_ready(self._step(self.state, jnp.int32(0), jax.random.key(0)))

        self.compile_first("(compiling the game and the hint's search once)", compile_both)
        self._say(f"{s.variant} (seed {s.seed}); hints from {self.opponent.name}. Type up, right, down, left, "
                  f"hint, help or quit.")

    def finish(self, ended_by: str) -> Result:
        board = np.asarray(self.state.board)
        tile = int(B.rules(self.settings.variant).values[int(board.max())])
        result = Result(score=int(self.state.score), moves=int(self.state.step_count), max_tile=tile,
                        hints=self.hints, ended_by=ended_by, exit_code=exit_status(ended_by))
        if not self.began:
            return result
        if ended_by == self.ENDED:
            self._say()
            self._say(render_text(board, self.settings.variant))
            self._say("No move is left: the game is over.")
        self._say(f"Score {result.score:,} in {result.moves:,} moves, largest tile {tile:,}; "
                  f"{self.hints} hint{'s' * (self.hints != 1)} asked.")
        return result


@functools.lru_cache(maxsize=None)
def _jitted_env(variant: str):
    env = Game2048(variant=variant)
    return jax.jit(env.init), jax.jit(env.step)


def play(input_lines: Iterable[str], output: TextIO = sys.stdout, *, echo: bool = False, **settings) -> Result:
    """Play a game: ``settings`` are :class:`Settings` fields."""
    return Session(Settings(**settings), output, echo=echo).run(input_lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play 2048 in the terminal; ask for a hint at any move.",
                                epilog="In the game: up, right, down, left, hint, help, quit.")
    p.add_argument("--run", metavar="RUN", help="hints from the n-tuple network of a python -m train.game2048 "
                                                "run, runs/game2048/<run> (its tables.npz); default: expectimax")
    p.add_argument("--depth", type=int, default=None,
                   help=f"the hint's search depth in moves, 1..{MAX_DEPTH} (default: 2, or 1 with --run)")
    p.add_argument("--variant", choices=B.VARIANTS, default="2048", help="2048, or 2584 (Fibonacci tiles)")
    p.add_argument("--seed", type=cli_args.seed, default=None, help="seed of the tiles (default: a random one, shown)")
    return p


def parse_args(argv: list[str] | None = None) -> Settings:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.depth is not None and not 1 <= args.depth <= MAX_DEPTH:
        parser.error(f"argument --depth: must be 1..{MAX_DEPTH}, got {args.depth}")
    return Settings(run=args.run, depth=args.depth, variant=args.variant, seed=seed_or_random(args.seed))


def main(argv: list[str] | None = None) -> int:
    return run_cli(PROG, Session, parse_args(argv))


if __name__ == "__main__":
    exit_process(main())
