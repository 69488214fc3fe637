"""Hex as a GTP engine: the shipped agent, a run's agent or plain UCT behind GTP v2, as HexGui
and Benzene/MoHex speak it.

    python -m jaxgames.hex.gtp                                   # the shipped agent of the board
    python -m jaxgames.hex.gtp --run runs/hex/<run>              # a run's agent (its board only)
    python -m jaxgames.hex.gtp --opponent uct --simulations 500  # plain UCT, any size 3 .. 19

Commands: ``protocol_version name version known_command list_commands boardsize clear_board
play genmove undo showboard final_score hexgui-analyze_commands quit``; responses ``=[id]
text`` or ``?[id] message``, each ended by an empty line; input cleaned as GTP v2 says (control
characters, ``#`` comments, empty lines). Conventions (Benzene's and HexGui's, which are this
game's: docs/rules/hex.md): cells ``a1`` ... (column letter, row number from 1; ``a1`` the top
left); ``black`` (``b``) moves first and joins top and bottom, ``white`` (``w``) joins left and
right; ``swap-pieces`` is White's first move under ``--swap`` (Black's stone on (r, c) becomes
White's on (c, r)); ``play <colour> resign`` ends the game; ``final_score`` is ``B+``, ``W+``
or ``cannot score``. Unlike Benzene, moves must alternate (a move or genmove for the colour not
to move is refused: the game's state knows whose turn it is) and nothing is played after the end.

The engine is :class:`Engine` (``handle(line) -> response``, importable, no I/O of its own);
:func:`main` is the stdin/stdout loop. Each board size's search is built and compiled once,
when the size is first chosen (at start and at ``boardsize``), so ``genmove`` takes the
search's time; it logs each search's time on stderr. A bad flag, or an agent that cannot be
used, ends with one line and exit status 2 before any GTP is spoken.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import inspect
import re
import sys
import time
from typing import Any, Callable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import cli_args
from jaxgames.hex import play as hex_play
from jaxgames.hex.board import BLACK, MAX_SIZE, MIN_SIZE, WHITE, cell_name, parse_cell
from jaxgames.hex.render import render_text
from jaxgames.hex.sgf import SWAP_NAME
from jaxgames.player import Player, jitted
from jaxgames.search.uct import DEFAULT_EXPLORATION
from jaxgames.terminal import INTERRUPTED, OpponentUnavailable, check_agent_flags, exit_process

PROG = "python -m jaxgames.hex.gtp"
NAME = "jaxgames"
RESIGN = "resign"
COMMANDS = ("boardsize", "clear_board", "final_score", "genmove", "hexgui-analyze_commands",
            "known_command", "list_commands", "name", "play", "protocol_version", "quit",
            "showboard", "undo", "version")
_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_COLOUR_WORD = {BLACK: "black", WHITE: "white"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")   # GTP v2: drop control characters but HT, LF


class GtpError(Exception):
    """A command that fails: answered ``? <message>``."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
    """The engine's command-line flags."""

    opponent: str = hex_play.PRETRAINED      # "pretrained", "uct" or "agent"
    pretrained: str | None = None            # a shipped agent by name (None: the board's)
    run: str | None = None                   # the run folder of --opponent agent
    simulations: int | None = None           # None: 1000 for UCT, the agent's own
    exploration: float = DEFAULT_EXPLORATION  # UCT only
    board_size: int | None = None            # the board at start (None: 11, or the agent's)
    swap: bool = False                       # accept (and, UCT, play) swap-pieces
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class _Seat:
    """One board size's game and the player searching it, compiled."""

    env: Any                     # jaxgames.make("hex", board_size=n, swap=options.swap)
    player: Player
    policy: Callable[..., Any]   # jax.jit(player.policy)
    step: Callable[..., Any]     # jax.jit(env.step)
    init: Callable[..., Any]     # jax.jit(env.init): the empty board without eager ops
    swaps: bool                  # the player's own game has the swap (UCT with --swap)


class Engine:
    """A GTP Hex engine's state: the board size, the moves played, the compiled players.

    ``handle(line)`` answers one input line (``None`` for a line GTP says to ignore); after
    ``quit`` has been answered, ``done`` is True. Construction loads and compiles the player of
    the starting board (OpponentUnavailable when it cannot)."""

    def __init__(self, options: Options, *, log: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.options = options
        self.log = log
        self.clock = clock
        self.done = False
        self._seats: dict[int, _Seat] = {}
        self._key = jax.random.key(options.seed)
        self._searches = 0
        self._agent = None
        if options.opponent == "agent":   # load once: its board is the only one it plays
            self._agent = hex_play.agent_opponent(self._settings(None))[1]
        self.sizes = self._sizes()
        n = options.board_size or (self._agent.board_size if self._agent else
                                   (hex_play.DEFAULT_SIZE if hex_play.DEFAULT_SIZE in self.sizes
                                    else min(self.sizes)))
        problem = self._size_problem(n)
        if problem:
            raise OpponentUnavailable(f"--board-size {n}: {problem}")
        self._new_game(n)

    # -- players ---------------------------------------------------------------------------

    def _settings(self, n: int | None) -> hex_play.Settings:
        o = self.options
        # the agents are trained without the swap; the game's own env carries the option
        return hex_play.Settings(board_size=n, swap=o.swap and o.opponent == "uct", opponent=o.opponent,
                                 simulations=o.simulations, exploration=o.exploration, run=o.run,
                                 pretrained=o.pretrained)

    def _sizes(self) -> tuple[int, ...]:
        """The board sizes the engine plays."""
        if self.options.opponent == "uct":
            return tuple(range(MIN_SIZE, MAX_SIZE + 1))
        if self._agent is not None:
            return (self._agent.board_size,)
        from jaxgames import pretrained

        names = [self.options.pretrained] if self.options.pretrained else pretrained.names("hex")
        try:
            return tuple(sorted(pretrained.card("hex", name)["config"]["board_size"] for name in names))
        except pretrained.PretrainedError as e:
            raise OpponentUnavailable(str(e)) from None

    def _size_problem(self, n: int) -> str | None:
        if n in self.sizes:
            return None
        if self.options.opponent == "uct":
            return f"the board size must be from {MIN_SIZE} to {MAX_SIZE}"
        plays = ", ".join(f"{m}x{m}" for m in self.sizes)
        who = (f"the agent of {self.options.run} plays" if self._agent else
               f"the shipped agent {self.options.pretrained} plays" if self.options.pretrained else
               "the shipped agents play")
        return (f"{who} {plays} only "
                f"(start the engine with --opponent uct for any size from {MIN_SIZE} to {MAX_SIZE})")

    def _seat(self, n: int) -> _Seat:
        """The player of board size ``n``, built and compiled on first use (once per size)."""
        if n in self._seats:
            return self._seats[n]
        start = self.clock()
        if self._agent is not None:
            player, swaps = self._agent, False
        else:
            _, player = hex_play.OPPONENTS[self.options.opponent](self._settings(n))
            swaps = self.options.swap and self.options.opponent == "uct"
        env = jaxgames.make("hex", board_size=n, swap=self.options.swap)
        # an agent's own jitted policy, shared with whatever else plays it in this process
        policy = player.compiled_policy() if hasattr(player, "compiled_policy") else jitted(player.policy)
        seat = _Seat(env=env, player=player, policy=policy, step=jitted(env.step),
                     init=jitted(env.init), swaps=swaps)
        self._say(f"{n}x{n}: compiling {player.name} ...")
        state = seat.init(jax.random.key(0))
        # everything genmove runs, once, so that its time is the search's
        jax.block_until_ready(seat.policy(player.params, state, jax.random.fold_in(self._key, 0)))
        jax.block_until_ready(seat.step(state, jnp.int32(0)))
        self._say(f"{n}x{n}: ready ({self.clock() - start:.1f} s)")
        self._seats[n] = seat
        return seat

    def _say(self, text: str) -> None:
        if self.log is not None:
            print(f"{NAME}: {text}", file=self.log, flush=True)

    # -- the game --------------------------------------------------------------------------

    def _new_game(self, n: int) -> None:
        self.seat = self._seat(n)
        self.n = n
        self.states = [self.seat.init(jax.random.key(0))]
        self.moves: list[tuple[int, str]] = []   # (colour, GTP name) per move, resign included
        self.resigned: int | None = None

    @property
    def state(self):
        return self.states[-1]

    def winner(self) -> int | None:
        if self.resigned is not None:
            return 1 - self.resigned
        if bool(np.asarray(self.state.terminated)):
            return int(np.argmax(np.asarray(self.state.rewards)))
        return None

    def _check_turn(self, colour: int, what: str) -> None:
        won = self.winner()
        if won is not None:
            raise GtpError(f"{what} (the game is over: {_COLOUR_WORD[won]} won)")
        to_move = int(self.state.current_player)
        if colour != to_move:
            raise GtpError(f"{what} (it is {_COLOUR_WORD[to_move]}'s turn)")

    def _action(self, colour: int, move: str) -> int:
        """The action of GTP move ``move`` for ``colour``; GtpError saying why it is illegal."""
        n, mask = self.n, np.asarray(self.state.legal_action_mask)
        what = f"illegal move: {_COLOUR_WORD[colour]} {move}"
        if move == SWAP_NAME:
            if not self.options.swap:
                raise GtpError(f"{what} (the swap rule is off: start the engine with --swap)")
            if not mask[n * n]:
                raise GtpError(f"{what} (swap-pieces is legal only as white's first move)")
            return n * n
        try:
            action = parse_cell(move, n)
        except ValueError:
            off = re.fullmatch(r"[a-s][1-9]\d*", move) is not None
            raise GtpError(f"{what} ({f'off the {n}x{n} board' if off else 'not a cell'})") from None
        if not mask[action]:
            raise GtpError(f"{what} (occupied)")
        return action

    def _play(self, colour: int, action: int) -> str:
        self.states.append(self.seat.step(self.state, jnp.int32(action)))
        name = SWAP_NAME if action == self.n * self.n else cell_name(action, self.n)
        self.moves.append((colour, name))
        return name

    def genmove(self, colour: int) -> str:
        """The player's move for ``colour`` (the colour to move), played."""
        self._check_turn(colour, f"cannot genmove {_COLOUR_WORD[colour]}")
        state, n = self.state, self.n
        mask = np.asarray(state.legal_action_mask)
        if not self.seat.swaps and mask[n * n]:
            # the player's own game has no swap: its search must not see one at the root
            mask = mask.copy()
            mask[n * n] = False
            state = state.replace(legal_action_mask=jnp.asarray(mask))
        key = jax.random.fold_in(self._key, self._searches)
        self._searches += 1
        start = self.clock()
        action = int(self.seat.policy(self.seat.player.params, state, key))
        seconds = self.clock() - start
        if not mask[action]:
            raise GtpError(f"internal error: {self.seat.player.name} chose the illegal action {action}")
        name = self._play(colour, action)
        self._say(f"genmove {_COLOUR_WORD[colour]}: {name} ({seconds:.2f} s)")
        return name

    # -- GTP -------------------------------------------------------------------------------

    def handle(self, line: str) -> str | None:
        """The response to one line of input (with its ``\\n\\n``), None for an ignored line."""
        line = _CONTROL.sub("", line).split("#", 1)[0].replace("\t", " ").strip()
        if not line:
            return None
        words = line.split()
        ident = ""
        if words[0].isdigit():
            ident, words = words[0], words[1:]
            if not words:
                return f"?{ident} no command after the id\n\n"
        command, args = words[0], words[1:]
        try:
            method = getattr(self, "cmd_" + command.replace("-", "_"), None) if command in COMMANDS else None
            if method is None:
                raise GtpError(f"unknown command: {command}")
            _check_arity(command, method, args)
            first, *rest = method(*args).split("\n")
        except GtpError as e:
            return f"?{ident} {e}\n\n"
        # GTP ends a response at its first empty line: none may come inside one (the first
        # line may be empty: showboard's board starts on the line after "= ", as Benzene's)
        return f"={ident} {first}" + "".join(f"\n{row}" for row in rest if row.strip()) + "\n\n"

    def cmd_protocol_version(self) -> str:
        return "2"

    def cmd_name(self) -> str:
        return NAME

    def cmd_version(self) -> str:
        try:
            version = importlib.metadata.version("jaxgames")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        return f"{version} ({self.seat.player.name})"

    def cmd_known_command(self, command: str) -> str:
        return "true" if command in COMMANDS else "false"

    def cmd_list_commands(self) -> str:
        return "\n".join(COMMANDS)

    def cmd_hexgui_analyze_commands(self) -> str:
        # HexGui's analyze menu: type/label/command, one a line (Benzene's format)
        return "string/ShowBoard/showboard\nstring/Final Score/final_score"

    def cmd_boardsize(self, *sizes: str) -> str:
        if not 1 <= len(sizes) <= 2 or not all(s.isdigit() for s in sizes):
            raise GtpError("syntax error: boardsize N, or boardsize N N")
        n, m = int(sizes[0]), int(sizes[-1])
        if n != m:
            raise GtpError(f"unacceptable size: {n}x{m} (square boards only)")
        problem = self._size_problem(n)
        if problem:
            raise GtpError(f"unacceptable size: {n}x{n} ({problem})")
        try:
            self._new_game(n)
        except OpponentUnavailable as e:   # a shipped agent's file damaged since the start
            raise GtpError(f"unacceptable size: {n}x{n} ({e})") from None
        return ""

    def cmd_clear_board(self) -> str:
        self._new_game(self.n)
        return ""

    def cmd_play(self, colour: str, move: str) -> str:
        c, move = _colour(colour), move.lower()
        if move == RESIGN:
            self._check_turn(c, f"illegal move: {_COLOUR_WORD[c]} resign")
            self.moves.append((c, RESIGN))
            self.resigned = c
            return ""
        self._check_turn(c, f"illegal move: {_COLOUR_WORD[c]} {move}")
        self._play(c, self._action(c, move))
        return ""

    def cmd_genmove(self, colour: str) -> str:
        return self.genmove(_colour(colour))

    def cmd_undo(self) -> str:
        if not self.moves:
            raise GtpError("cannot undo")
        _, move = self.moves.pop()
        if move == RESIGN:
            self.resigned = None
        else:
            self.states.pop()
        return ""

    def cmd_showboard(self) -> str:
        return "\n" + render_text(self.state)

    def cmd_final_score(self) -> str:
        won = self.winner()
        return "cannot score" if won is None else ("B+" if won == BLACK else "W+")

    def cmd_quit(self) -> str:
        self.done = True
        return ""


def _colour(word: str) -> int:
    if word.lower() not in _COLOURS:
        raise GtpError(f"syntax error: invalid color {word!r} (black, white, b or w)")
    return _COLOURS[word.lower()]


def _check_arity(command: str, method: Callable[..., Any], args: list[str]) -> None:
    code = method.__code__
    fixed = code.co_argcount - 1   # self
    if len(args) != fixed and not code.co_flags & inspect.CO_VARARGS:
        raise GtpError(f"syntax error: {command} takes {fixed or 'no'} argument{'' if fixed == 1 else 's'}")


# -- command line -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Hex as a GTP engine (for HexGui, twogtp, referees).")
    p.add_argument("--opponent", choices=sorted(hex_play.OPPONENTS), default=None,
                   help="who plays: pretrained (the shipped agent of the board: 7, 9 or 11; the default), "
                        "uct (plain UCT, any size) or agent (a run's agent; --run alone implies it)")
    p.add_argument("--pretrained", metavar="NAME", default=None,
                   help="with pretrained: one shipped agent by name (python -m jaxgames.pretrained lists "
                        "them); it plays its own board only")
    p.add_argument("--run", "--checkpoint", dest="run", metavar="RUN",
                   help="the run folder of a python -m train.hex run, runs/hex/<run>")
    p.add_argument("--simulations", type=cli_args.count(1, 10**7), default=None, metavar="N",
                   help=f"search simulations per move (default: {hex_play.DEFAULT_UCT_SIMULATIONS} for uct, "
                        f"the agent's own for an agent)")
    p.add_argument("--exploration", type=float, default=None, metavar="C",
                   help=f"UCT's exploration constant (default {DEFAULT_EXPLORATION}; uct only)")
    p.add_argument("--board-size", type=cli_args.count(MIN_SIZE, MAX_SIZE), default=None, metavar="N",
                   help="the board at start (default 11, or the agent's); GTP boardsize changes it")
    p.add_argument("--swap", action="store_true",
                   help="the swap rule: accept swap-pieces as white's first move (uct may play it; "
                        "an agent, trained without it, never does)")
    p.add_argument("--seed", type=cli_args.seed, default=0, help="seed of the search's randomness (default 0)")
    return p


def parse_args(argv: list[str] | None = None) -> Options:
    """Options from command-line flags; a bad flag exits 2 with one line (argparse)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.opponent is None:
        args.opponent = "agent" if args.run else hex_play.PRETRAINED
    check_agent_flags(parser, args, "hex")
    if args.exploration is not None:
        if args.opponent != "uct":
            parser.error("argument --exploration: only with --opponent uct")
        if not args.exploration >= 0:
            parser.error(f"argument --exploration: must be >= 0, got {args.exploration}")
    return Options(opponent=args.opponent, pretrained=args.pretrained, run=args.run,
                   simulations=args.simulations,
                   exploration=DEFAULT_EXPLORATION if args.exploration is None else args.exploration,
                   board_size=args.board_size, swap=args.swap, seed=args.seed)


def serve(engine: Engine, lines, out: TextIO) -> None:
    """Answer every line of ``lines`` on ``out`` until ``quit`` or the end of the input."""
    for line in lines:
        response = engine.handle(line)
        if response is not None:
            out.write(response)
            out.flush()
        if engine.done:
            return


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    try:
        engine = Engine(options, log=sys.stderr)
        serve(engine, iter(sys.stdin.readline, ""), sys.stdout)
    except OpponentUnavailable as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:   # the controller went away: nothing left to answer
        return 0
    return 0


if __name__ == "__main__":
    exit_process(main())
