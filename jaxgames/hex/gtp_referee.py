"""A referee for two GTP Hex engines: one game, every move checked, the result and the record.

    python -m jaxgames.hex.gtp_referee --board-size 7 \\
        --black "python -m jaxgames.hex.gtp" \\
        --white "python -m jaxgames.hex.gtp --opponent uct --simulations 500" --sgf game.sgf

The referee starts both engines (any GTP Hex engine: jaxgames', MoHex ...), sends each
``boardsize N N`` and ``clear_board``, then asks the side to move for ``genmove <colour>`` and
tells the other ``play <colour> <move>``, Black first. Every move is checked by the host-side
rules of :func:`jaxgames.hex.sgf.replay` (independent of the JAX game): a move that is not a
cell of the board, an occupied cell, or a swap where none is allowed loses the game for the
engine that made it; ``resign`` loses it too. When a side connects, both engines are asked
``final_score`` (:attr:`GameResult.scores`), then ``quit``. An engine that refuses a command
the protocol needs, or stops answering, is a :class:`RefereeError`.

From Python: :func:`play_game` on two started :class:`GtpClient` engines returns a
:class:`GameResult`.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import subprocess
import sys
import time

from jaxgames import cli_args
from jaxgames.hex.board import MAX_SIZE, MIN_SIZE, parse_cell
from jaxgames.hex.sgf import SWAP_NAME, replay, to_sgf

PROG = "python -m jaxgames.hex.gtp_referee"
COLOURS = ("black", "white")
RESIGN = "resign"


class RefereeError(RuntimeError):
    """An engine broke the protocol (refused a needed command, died, said nothing)."""


class GtpFailure(RefereeError):
    """An engine answered ``? message``."""


class GtpClient:
    """One engine process spoken to over its standard input and output (stderr passes on)."""

    def __init__(self, command: list[str], *, stderr=None):
        self.command = list(command)
        self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=stderr, text=True, bufsize=1)

    def send(self, command: str) -> str:
        """The engine's answer to ``command`` (the text after ``=``); GtpFailure on ``?``."""
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise RefereeError(f"{self.command[0]}: the engine has exited (asked {command!r})") from None
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RefereeError(f"{shlex.join(self.command)}: no answer to {command!r} (the engine exited)")
            if line.strip() == "" and lines:
                break
            if line.strip() or lines:
                lines.append(line.rstrip("\n"))
        head, body = lines[0], "\n".join(lines)
        if head.startswith("?"):
            raise GtpFailure(f"{shlex.join(self.command)}: {command!r} -> {body}")
        if not head.startswith("="):
            raise RefereeError(f"{shlex.join(self.command)}: {command!r} -> not a GTP answer: {body!r}")
        return body[1:].strip()

    def close(self, timeout: float = 10.0) -> None:
        """``quit``, then wait for the process (killed if it does not end)."""
        if self.process.poll() is None:
            try:
                self.send("quit")
            except RefereeError:
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()


@dataclasses.dataclass(frozen=True)
class GameResult:
    board_size: int
    moves: tuple            # GTP names of the moves, Black's first ("resign" possible last)
    actions: tuple          # the same as actions (cell r*n + c, n*n the swap), no resign
    times: tuple            # seconds each genmove took, the referee's clock
    winner: int             # BLACK (0) or WHITE (1)
    reason: str             # "connected", "resign" or "illegal: <why>"
    scores: tuple           # final_score of the black and the white engine ("" if not asked)


def play_game(black: GtpClient, white: GtpClient, *, board_size: int, swap: bool = False,
              clock=time.monotonic) -> GameResult:
    """One game between two started engines; ``swap`` allows swap-pieces as White's 1st move."""
    n = board_size
    engines = (black, white)
    for engine in engines:
        engine.send(f"boardsize {n} {n}")
        engine.send("clear_board")
    moves, actions, times = [], [], []
    while True:
        mover = len(moves) % 2
        colour = COLOURS[mover]
        start = clock()
        move = engines[mover].send(f"genmove {colour}").lower()
        times.append(clock() - start)
        moves.append(move)
        if move == RESIGN:
            return _result(n, moves, actions, times, 1 - mover, "resign", ("", ""))
        try:
            action = _action(move, n, swap, actions)
        except ValueError as why:
            return _result(n, moves, actions, times, 1 - mover, f"illegal: {why}", ("", ""))
        actions.append(action)
        engines[1 - mover].send(f"play {colour} {move}")
        _, won = replay(actions, n)
        if won >= 0:
            scores = tuple(engine.send("final_score") for engine in engines)
            return _result(n, moves, actions, times, won, "connected", scores)



def _action(move: str, n: int, swap: bool, actions: list) -> int:
    """The action of ``move`` after ``actions``; ValueError naming what is wrong."""
    if move == SWAP_NAME:
        if not swap:
            raise ValueError("swap-pieces without the swap rule")
        action = n * n
    else:
        action = parse_cell(move, n)
    replay(actions + [action], n)
    return action


def _result(n, moves, actions, times, winner, reason, scores) -> GameResult:
    return GameResult(board_size=n, moves=tuple(moves), actions=tuple(actions), times=tuple(times),
                      winner=winner, reason=reason, scores=tuple(scores))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="One Hex game between two GTP engines.")
    p.add_argument("--black", required=True, metavar="COMMAND", help="the command line of Black's engine")
    p.add_argument("--white", required=True, metavar="COMMAND", help="the command line of White's engine")
    p.add_argument("--board-size", type=cli_args.count(MIN_SIZE, MAX_SIZE), default=11, metavar="N")
    p.add_argument("--swap", action="store_true", help="allow swap-pieces as White's first move")
    p.add_argument("--sgf", metavar="PATH", help="write the game's record here (HexGui SGF)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = []
    for flag, text in (("--black", args.black), ("--white", args.white)):
        try:
            words = shlex.split(text)
        except ValueError as e:
            _parser().error(f"argument {flag}: {e}")
        if not words:
            _parser().error(f"argument {flag}: an empty command")
        commands.append(words)
    engines: list[GtpClient] = []
    try:
        for words in commands:
            engines.append(GtpClient(words))
        result = play_game(*engines, board_size=args.board_size, swap=args.swap)
    except (OSError, RefereeError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    finally:
        for engine in engines:
            engine.close()
    n = result.board_size
    print(" ".join(result.moves))
    print(f"{COLOURS[result.winner]} wins ({result.reason}) after {len(result.moves)} moves; "
          f"final_score: black engine {result.scores[0] or '-'}, white engine {result.scores[1] or '-'}")
    if args.sgf:
        with open(args.sgf, "w", encoding="utf-8") as f:
            f.write(to_sgf(result.actions, n, {"PB": args.black, "PW": args.white}) + "\n")
        print(f"record written to {args.sgf}")
    return 0


__all__ = ["GameResult", "GtpClient", "GtpFailure", "RefereeError", "play_game"]

if __name__ == "__main__":
    sys.exit(main())
