"""Play Hex in the terminal against the computer.

    python -m jaxgames.hex.play                                  # the shipped 11x11 agent
    python -m jaxgames.hex.play --board-size 7                   # the shipped 7x7 agent
    python -m jaxgames.hex.play --opponent uct --simulations 1000 --board-size 11
    python -m jaxgames.hex.play --opponent agent --run runs/hex/quick-seed0

The computer is, by default, the trained agent shipped with jaxgames for the board size
(``--opponent pretrained``: ``jaxgames.pretrained``'s Hex agents play 7x7, 9x9 and 11x11, the
default; ``--pretrained NAME`` picks one by name and plays its board), plain UCT (``--opponent
uct``), or the trained agent of a ``python -m train.hex`` run (``--opponent agent --run
runs/hex/<run>``; ``--checkpoint`` is the same flag, its older name:
:func:`jaxgames.hex.agent.load_agent` reads the run's config.json and its best parameters; the
board size comes from the run). An agent searches with the simulations its evaluation used
unless ``--simulations`` says otherwise, and plays without the swap rule, being trained without
it. A run folder or shipped agent that cannot be used (missing, not a Hex run, no checkpoint,
damaged files), or a board size no shipped agent plays, ends with one line and exit status 2.

Type a cell (``f6``) to play there, ``undo`` to take back your last move and the computer's
reply, ``swap`` to use the pie rule (``--swap``; White's first move only), ``help``, ``quit``.
The board is drawn after every move, each move's thinking time is shown with both sides'
totals, and the game is saved as an SGF record at the end, also when you quit, the input
ends (Ctrl-D) or Ctrl-C stops it (exit status 130); a game with no move on the board is not
saved, and a Ctrl-C while the computer is prepared (compiled) stops with one line. Rules:
docs/rules/hex.md ("Playing against the computer").

The logic is importable: :func:`play` (or :class:`Session`) takes any iterable of input
lines and writes to any text stream; :func:`main` is the thin command line around it. The
loop (reading, quit, help, the end of input, Ctrl-C) is :class:`jaxgames.terminal.PlaySession`;
here is what is Hex's: the board, cells, ``undo``, ``swap``, the clocks and the record.

Opponents are named in :data:`OPPONENTS`: a factory ``settings -> (env, player)`` each, the
game the computer plays (the settings' board size and swap rule, or its own: a trained agent
plays the board of its run) and the :class:`jaxgames.player.Player` that plays it (an arena
policy ``policy(params, state, key) -> action`` and its params), jitted once per process.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import os
import re
import sys
import time
from typing import Any, Callable, Iterable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import cli_args
from jaxgames.hex.agent import Agent, AgentError, load_agent
from jaxgames.hex.board import BLACK, MAX_SIZE, MIN_SIZE, WHITE, from_cell_name, to_cell_name
from jaxgames.hex.render import render_text
from jaxgames.hex.sgf import SWAP_NAME, to_sgf
from jaxgames.player import Player
from jaxgames.search.uct import DEFAULT_EXPLORATION, uct_policy
from jaxgames.terminal import (
    OpponentUnavailable,
    PlaySession,
    add_pretrained_flag,
    check_agent_flags,
    exit_process,
    exit_status,
    format_seconds,
    jitted,
    run_cli,
    seed_or_random,
)

PROG = "python -m jaxgames.hex.play"
DEFAULT_SIZE = 11
#: the agent shipped with jaxgames (jaxgames.pretrained) for the board size, the default opponent
PRETRAINED = "pretrained"
DEFAULT_UCT_SIMULATIONS = 1000
COLOURS = ("black", "white")
_COLOUR_NAME = {BLACK: "Black", WHITE: "White"}
_STONE = {BLACK: "X", WHITE: "O"}
_EDGES = {BLACK: "top-bottom", WHITE: "left-right"}
_CELL = re.compile(r"([a-z])(\d+)")

HELP = """\
Commands:
  f6      put your stone on a cell: column letter, then row number (a1 is the top-left)
  undo    take back your last move and the computer's reply
  swap    the pie rule: as White, on White's first move, take over Black's first stone
          (mirrored: b4 becomes d2); needs --swap
  help    this list
  quit    stop here; the game is saved (Ctrl-D does the same)"""


@dataclasses.dataclass(frozen=True)
class Settings:
    """One game's options (the command line's flags)."""

    board_size: int | None = None        # None: 11, or the board of the run (agent) or named agent
    swap: bool = False
    human_colour: str = "black"          # "black" (moves first) or "white"
    opponent: str = PRETRAINED           # a key of OPPONENTS
    simulations: int | None = None       # per computer move; None: 1000 (UCT), the agent's own
    exploration: float = DEFAULT_EXPLORATION  # UCT's exploration constant
    run: str | None = None               # run folder of a trained agent (--opponent agent)
    pretrained: str | None = None        # a shipped agent's name (--opponent pretrained); None: the board's
    seed: int = 0                        # the computer's randomness
    sgf: str | None = None               # where the record goes; None: hex-<time>.sgf here

    @property
    def human(self) -> int:
        return COLOURS.index(self.human_colour)


def uct_opponent(settings: Settings) -> tuple[Any, Player]:
    """Plain UCT (``jaxgames.search.uct``) with ``settings.simulations`` simulations (default
    1000) on ``settings.board_size`` (default 11)."""
    n = DEFAULT_SIZE if settings.board_size is None else int(settings.board_size)
    sims = DEFAULT_UCT_SIMULATIONS if settings.simulations is None else int(settings.simulations)
    return _uct_opponent(_env(n, settings.swap), sims, float(settings.exploration))


@functools.lru_cache(maxsize=None)
def _uct_opponent(env, simulations: int, exploration: float) -> tuple[Any, Player]:
    # Cached, so one compile serves every game of a process with the same settings.
    policy = uct_policy(env, num_simulations=simulations, exploration=exploration)
    return env, Player(name=f"UCT ({simulations} simulations)", policy=policy)


def agent_opponent(settings: Settings) -> tuple[Any, Player]:
    """The trained agent of the run folder ``settings.run``
    (:func:`jaxgames.hex.agent.load_agent`), searching with ``settings.simulations`` (None:
    the run's). It plays its run's board: a different ``board_size`` is refused, as is the
    swap rule (the agent is trained without it)."""
    if not settings.run:
        raise OpponentUnavailable("--opponent agent needs the run folder of a trained agent: "
                                  "--run runs/hex/<run>")
    try:
        agent = load_agent(settings.run, simulations=settings.simulations)
    except AgentError as e:
        raise OpponentUnavailable(str(e)) from None
    return _fits(agent, settings, f"the agent of {settings.run}", "the board of its run")


def pretrained_opponent(settings: Settings) -> tuple[Any, Player]:
    """The Hex agent shipped with jaxgames (:mod:`jaxgames.pretrained`): ``settings.pretrained``
    by name, else the one of ``settings.board_size`` (default 11), searching with
    ``settings.simulations`` (None: the simulations of its card's evaluation). A board size no
    shipped agent plays, a name of another board, the swap rule or a damaged file: refused
    with one line."""
    from jaxgames import pretrained

    try:
        name = settings.pretrained or shipped_agent_name(
            DEFAULT_SIZE if settings.board_size is None else settings.board_size)
        agent = pretrained.load("hex", name)
    except pretrained.PretrainedError as e:
        raise OpponentUnavailable(str(e)) from None
    if settings.simulations is not None:
        agent = agent.with_simulations(settings.simulations)
    return _fits(agent, settings, f"the shipped agent {name}", "the board it was trained on")


def shipped_agent_name(board_size: int) -> str:
    """The name of the shipped Hex agent that plays ``board_size`` (reads the cards only);
    ``PretrainedError`` naming the sizes that ship when none does."""
    from jaxgames import pretrained

    sizes = {pretrained.card("hex", name)["config"]["board_size"]: name for name in pretrained.names("hex")}
    if board_size not in sizes:
        shipped = ", ".join(f"{n}x{n} ({sizes[n]})" for n in sorted(sizes))
        raise pretrained.PretrainedError(
            f"--board-size {board_size}: no shipped Hex agent plays {board_size}x{board_size} (the shipped "
            f"ones play {shipped}); give one of those sizes, or play --opponent uct")
    return sizes[board_size]


def _fits(agent: Agent, settings: Settings, what: str, whose: str) -> tuple[Any, Player]:
    """``(env, agent)`` if the settings ask for the agent's board (or none) and no swap rule."""
    n = agent.board_size
    if settings.board_size is not None and settings.board_size != n:
        raise OpponentUnavailable(f"--board-size {settings.board_size}: {what} plays {n}x{n} ({whose}); "
                                  f"leave out --board-size or give {n}")
    if settings.swap:
        raise OpponentUnavailable(f"--swap: {what} was trained without the swap rule; leave out --swap")
    return agent.env, agent


#: name -> factory ``settings -> (env, player)``; raises OpponentUnavailable when it cannot.
OPPONENTS: dict[str, Callable[[Settings], tuple[Any, Player]]] = {
    PRETRAINED: pretrained_opponent,
    "uct": uct_opponent,
    "agent": agent_opponent,
}


@functools.lru_cache(maxsize=None)
def _env(board_size: int, swap: bool):
    return jaxgames.make("hex", board_size=board_size, swap=swap)


@dataclasses.dataclass(frozen=True)
class Result:
    """How a session ended."""

    actions: tuple           # every move on the board, in order (n*n is the swap)
    times: tuple             # seconds each move took, same order
    winner: int | None       # BLACK, WHITE, or None when the game was stopped
    ended_by: str            # "win", "quit", "eof" or "interrupt"
    sgf_path: str | None     # where the record was written (None: no move played, or it failed)
    exit_code: int           # 0; 1 if the record could not be written; 130 after Ctrl-C


def default_sgf_path(now: datetime.datetime | None = None, folder: str = ".") -> str:
    """``hex-YYYYMMDD-HHMMSS.sgf`` in ``folder``; ``-2``, ``-3`` ... if that name is taken."""
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(folder, f"hex-{stamp}.sgf")
    k = 2
    while os.path.exists(path):
        path = os.path.join(folder, f"hex-{stamp}-{k}.sgf")
        k += 1
    return path


def check_sgf_path(path: str) -> str | None:
    """Why the record could not be written to ``path`` (None if it looks writable)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"--sgf {path}: is a folder; give a file name"
    if not os.path.isdir(folder):
        return f"--sgf {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"--sgf {path}: the folder {folder} is not writable"
    return None


class Session(PlaySession):
    """One game between a person (typed lines) and the computer, written to ``output``.

    ``state`` is the current position; ``actions`` and ``times`` the moves on the board so
    far. Construction builds the opponent (OpponentUnavailable if it cannot; ``settings``
    then holds the board size it plays on) and the jitted step; :meth:`run` plays the game to
    the end and saves it.
    """

    HELP = HELP
    ENDED = "win"

    def __init__(self, settings: Settings, output: TextIO, *, echo: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        if settings.human_colour not in COLOURS:
            raise ValueError(f"human_colour must be one of {COLOURS}, got {settings.human_colour!r}")
        if settings.opponent not in OPPONENTS:
            raise ValueError(f"unknown opponent {settings.opponent!r}; choose from {sorted(OPPONENTS)}")
        self.env, self.opponent = OPPONENTS[settings.opponent](settings)
        settings = dataclasses.replace(settings, board_size=self.env.board_size)
        super().__init__(settings, output, echo=echo, clock=clock)
        self.n = settings.board_size
        self.human = settings.human
        self.computer = 1 - self.human
        self._step = jitted(self.env.step)
        self._key = jax.random.key(settings.seed)
        self._searches = 0
        self.states = [self.env.init(jax.random.key(0))]
        self.actions: list[int] = []
        self.times: list[float] = []
        self._turn_began = self.clock()

    # -- the position ---------------------------------------------------------------------------

    @property
    def state(self):
        return self.states[-1]

    @property
    def to_move(self) -> int:
        return int(self.state.current_player)

    def board_text(self) -> str:
        return render_text(self.state)

    def legal_cells(self) -> list[str]:
        """Names of the empty cells (the moves a person may type, the swap aside)."""
        mask = np.asarray(self.state.legal_action_mask)[: self.n * self.n]
        return [to_cell_name(int(a), self.n) for a in np.flatnonzero(mask)] if not self.over else []

    def winner(self) -> int | None:
        if not self.over:
            return None
        return int(np.argmax(np.asarray(self.state.rewards)))

    def _who(self, player: int) -> str:
        return "you" if player == self.human else "computer"

    def _name(self, action: int) -> str:
        return "swap" if action == self.n * self.n else to_cell_name(action, self.n)

    def _example(self) -> str:
        return to_cell_name((self.n // 2) * (self.n + 1), self.n)  # the centre: f6 on 11x11

    def _total(self, player: int) -> float:
        return sum(t for i, t in enumerate(self.times) if i % 2 == player)

    # -- moves --------------------------------------------------------------------------------

    def _play(self, action: int, seconds: float) -> None:
        mover = self.to_move
        before = self.state
        self.states.append(self._step(self.state, jnp.int32(action)))
        self.actions.append(int(action))
        self.times.append(float(seconds))
        who = "You" if mover == self.human else "Computer"
        colour = _COLOUR_NAME[mover]
        if action == self.n * self.n:
            first = int(before.last_move)
            r, c = divmod(first, self.n)
            what = (f"swap{'s' if who == 'Computer' else ''}: Black's stone on "
                    f"{to_cell_name(first, self.n)} becomes White's on {to_cell_name(c * self.n + r, self.n)}")
        else:
            what = f"play{'s' if who == 'Computer' else ''} {to_cell_name(action, self.n)}"
        self._say()
        self._say(self.board_text())
        self._say(f"{who} ({colour}) {what}  [{format_seconds(seconds)}; "
                  f"{self._who(mover)} {format_seconds(self._total(mover))} in total]")

    def computer_move(self) -> None:
        key = jax.random.fold_in(self._key, self._searches)
        self._searches += 1
        start = self.clock()
        action = self.computer_action(key)
        self._play(action, self.clock() - start)

    def turn_starts(self) -> None:
        self._turn_began = self.clock()   # the person's thinking time runs from here

    def prompt(self) -> str:
        return f"Move {len(self.actions) + 1}, {_COLOUR_NAME[self.human]} (you) > "

    def move(self, action: int) -> None:
        self._play(action, self.clock() - self._turn_began)

    def command(self, kind: str, value: Any) -> None:
        """``undo``, the one command of Hex's own; the clock starts again."""
        if kind != "undo":
            return super().command(kind, value)
        self.undo()
        self._turn_began = self.clock()

    def parse(self, text: str) -> tuple[str, Any]:
        """``("move", action)``, ``("undo", None)`` or ``("bad", message)`` for a line a
        person typed in the current position."""
        word = text.strip().lower()
        n = self.n
        if word == "undo":
            return "undo", None
        if word in ("swap", SWAP_NAME):
            if not self.settings.swap:
                return "bad", "The swap rule is off in this game (start with --swap to play with it)."
            if not bool(np.asarray(self.state.legal_action_mask)[n * n]):
                return "bad", ("No swap now: only White may swap, as White's first move "
                               "(right after Black's first stone).")
            return "move", n * n
        m = _CELL.fullmatch(word)
        if not m:
            return "bad", (f"{text.strip()!r} is not a move: type a cell such as "
                           f"{self._example()}, or undo, {'swap, ' if self.settings.swap else ''}help, quit.")
        col, row = ord(m.group(1)) - ord("a"), int(m.group(2))
        last = to_cell_name(n * n - 1, n)
        if col >= n or not 1 <= row <= n:
            return "bad", (f"{word} is off the {n}x{n} board (columns a-{last[0]}, rows 1-{n}).")
        action = from_cell_name(f"{m.group(1)}{row}", n)
        cell = int(np.asarray(self.state.board)[action])
        if cell != 0:
            owner = BLACK if cell > 0 else WHITE
            whose = "your" if owner == self.human else "the computer's"
            return "bad", f"{to_cell_name(action, n)} is already taken ({whose} {_STONE[owner]}); choose an empty cell."
        return "move", action

    def undo(self) -> None:
        """Take back the person's last move and everything after it (the computer's reply)."""
        if len(self.actions) <= self.human:  # the person has not moved yet
            self._say("Nothing to undo: you have not moved yet.")
            return
        taken = []
        while True:
            i = len(self.actions) - 1
            taken.append(f"{self._name(self.actions[i])} ({'yours' if i % 2 == self.human else 'computer'})")
            self.states.pop()
            self.actions.pop()
            self.times.pop()
            if i % 2 == self.human:
                break
        self._say()
        self._say(self.board_text())
        self._say(f"Took back {' and '.join(reversed(taken))}. Your move again.")

    # -- the game -----------------------------------------------------------------------------

    def start(self) -> None:
        s, n = self.settings, self.n
        you, it = self.human, self.computer
        self._say(f"Hex {n}x{n}: you are {_COLOUR_NAME[you]} ({_STONE[you]}, joining {_EDGES[you]}), "
                  f"the computer is {_COLOUR_NAME[it]} ({_STONE[it]}, {_EDGES[it]}): "
                  f"{self.opponent.name}, seed {s.seed}.")
        self._say(f"Black moves first. Swap rule: {'on' if s.swap else 'off'}. "
                  f"Type a cell such as {self._example()}, or undo, "
                  f"{'swap, ' if s.swap else ''}help, quit.")
        self.prepare(self._step, self._key)
        self._say()
        self._say(self.board_text())

    def finish(self, ended_by: str) -> Result:
        """The result and the times; the game saved (unless no move is on the board: no empty
        record; nothing at all is said when play never began, a Ctrl-C while preparing)."""
        winner = self.winner()
        code = exit_status(ended_by)
        if not self.began:
            return Result((), (), None, ended_by, None, code)
        self._say()
        if winner is not None:
            self._say(f"Game over: {_COLOUR_NAME[winner]} wins ("
                      f"{'you win, well played' if winner == self.human else 'the computer wins'}) "
                      f"after {len(self.actions)} moves.")
        else:
            self._say(f"Game not finished ({len(self.actions)} moves played).")
        for player in (self.human, self.computer):
            moves = [t for i, t in enumerate(self.times) if i % 2 == player]
            mean = f", {format_seconds(sum(moves) / len(moves))} a move" if moves else ""
            self._say(f"Time, {'you' if player == self.human else 'computer'} ({_COLOUR_NAME[player]}): "
                      f"{format_seconds(sum(moves))} over {len(moves)} move{'' if len(moves) == 1 else 's'}{mean}")
        if not self.actions:
            self._say("No move on the board: no record saved.")
            return Result((), (), winner, ended_by, None, code)
        path = self.settings.sgf or default_sgf_path()
        text = self.sgf()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as err:
            self._say(f"Could not save the game to {path}: {err.strerror or err}. The record:")
            self._say(text)
            return Result(tuple(self.actions), tuple(self.times), winner, ended_by, None, 1)
        self._say(f"Game saved to {os.path.abspath(path)}")
        return Result(tuple(self.actions), tuple(self.times), winner, ended_by, path, code)

    def sgf(self) -> str:
        """The game so far as a HexGui SGF record (players, date, seed and times in the root)."""
        names = {self.human: "Human", self.computer: self.opponent.name}
        totals = ", ".join(f"{_COLOUR_NAME[p]} {format_seconds(self._total(p))}" for p in (BLACK, WHITE))
        comment = (f"jaxgames.hex.play, {self.opponent.name}, seed {self.settings.seed}, "
                   f"swap {'on' if self.settings.swap else 'off'}; thinking time: {totals}")
        props = {"PB": names[BLACK], "PW": names[WHITE],
                 "DT": datetime.date.today().isoformat(), "C": comment}
        return to_sgf(self.actions, self.n, props)


def play(input_lines: Iterable[str], output: TextIO = sys.stdout, *, echo: bool = False,
         clock: Callable[[], float] = time.monotonic, **settings) -> Result:
    """Play one game: ``settings`` are :class:`Settings` fields (``board_size=5``, ...)."""
    return Session(Settings(**settings), output, echo=echo, clock=clock).run(input_lines)


# -- command line -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Play Hex in the terminal against the computer.",
        epilog="In the game: a cell such as f6, undo, swap, help, quit (Ctrl-D also quits). "
               "The game is saved as SGF when it ends.")
    p.add_argument("--opponent", choices=sorted(OPPONENTS), default=PRETRAINED,
                   help="the computer player: pretrained (the trained agent shipped with jaxgames for "
                        "the board size, 7, 9 or 11; the default), uct (plain UCT search) or agent (the "
                        "trained network and search of a python -m train.hex run; needs --run)")
    add_pretrained_flag(p, default="the one of the board size")
    p.add_argument("--simulations", type=int, default=None, metavar="N",
                   help=f"search simulations per computer move (default: {DEFAULT_UCT_SIMULATIONS} "
                        f"for uct; for an agent, what its evaluation used)")
    p.add_argument("--exploration", type=float, default=None, metavar="C",
                   help=f"UCT exploration constant (default {DEFAULT_EXPLORATION}; uct only)")
    p.add_argument("--run", "--checkpoint", dest="run", metavar="RUN",
                   help="with --opponent agent: the run folder, runs/hex/<run> (its best/ parameters "
                        "are loaded, else its newest checkpoints/ step)")
    p.add_argument("--board-size", type=int, default=None, metavar="N",
                   help=f"board size, {MIN_SIZE} to {MAX_SIZE} (default {DEFAULT_SIZE}; against an "
                        f"agent the board of its run, or of the shipped agent named)")
    p.add_argument("--swap", action="store_true", help="play with the swap (pie) rule (uct only)")
    p.add_argument("--human-colour", "--human-color", dest="human_colour", type=str.lower,
                   choices=COLOURS, default="black", help="your colour; Black moves first (default black)")
    p.add_argument("--seed", type=cli_args.seed, default=None,
                   help="seed of the computer's randomness (default: a random one, shown and saved)")
    p.add_argument("--sgf", metavar="PATH",
                   help="where to save the game (default: hex-<date>-<time>.sgf in this folder)")
    return p


def parse_args(argv: list[str] | None = None) -> Settings:
    """Settings from command-line flags; a bad flag exits 2 with one clear line (argparse)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.board_size is not None and not MIN_SIZE <= args.board_size <= MAX_SIZE:
        parser.error(f"argument --board-size: must be from {MIN_SIZE} to {MAX_SIZE}, got {args.board_size}")
    if args.simulations is not None and args.simulations < 1:
        parser.error(f"argument --simulations: must be at least 1, got {args.simulations}")
    if args.exploration is not None and not args.exploration >= 0:
        parser.error(f"argument --exploration: must be >= 0, got {args.exploration}")
    check_agent_flags(parser, args, "hex")
    if args.opponent != "uct":
        if args.exploration is not None:
            parser.error("argument --exploration: only with --opponent uct (the agent searches with "
                         "its network)")
        if args.swap:
            parser.error("argument --swap: the trained agent plays without the swap rule (it was "
                         "trained without it); play --opponent uct --swap")
    if args.sgf is not None and (problem := check_sgf_path(args.sgf)):
        parser.error(problem)
    seed = seed_or_random(args.seed)
    return Settings(board_size=args.board_size, swap=args.swap, human_colour=args.human_colour,
                    opponent=args.opponent, simulations=args.simulations,
                    exploration=DEFAULT_EXPLORATION if args.exploration is None else args.exploration,
                    run=args.run, pretrained=args.pretrained, seed=seed, sgf=args.sgf)


def main(argv: list[str] | None = None) -> int:
    return run_cli(PROG, Session, parse_args(argv))


if __name__ == "__main__":
    exit_process(main())
