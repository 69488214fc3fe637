"""Play the shipped hold'em agent against an ACPC dealer, over its TCP protocol.

    python -m jaxgames.holdem.acpc_client HOST PORT [--hands N] [--seed S] [--pretrained NAME]

The client connects, sends ``VERSION:2.0.0``, then reads one ``MATCHSTATE`` line per action
(lines starting with ``#`` or ``;`` are comments). Each state is replayed onto the game
(:class:`jaxgames.holdem.acpc.Wire`); when the client's position is to act it answers the
line followed by ``:<action>`` (``f``, ``c`` or ``r<raise-to>``, real amounts). Each finished
hand's result is read from the wire's own betting and cards. It stops after ``--hands`` hands
or when the dealer closes the connection, and prints the result in mbb/hand (thousandths of a
big blind per hand) with a 95% interval (1.96 standard errors over hands).

Our game's units are the table's (stacks 20,000, blinds 50/100: ``holdem.nolimit.2p.
reverse_blinds.game``). A hand longer than the game's history (a min-raise war no abstraction
of ours reaches) is played out with ``c`` and counted; a line that is not a valid MATCHSTATE
ends the match with one line naming it, exit status 2, as do a bad flag, a dealer that cannot be
reached and a shipped agent that cannot be read. Ctrl-C prints the hands so far, status 130.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import socket
import sys
from typing import Callable, Iterable

import jax
import numpy as np

from jaxgames import cli_args
from jaxgames.holdem.acpc import ACPCError, Translator, Wire, parse_matchstate
from jaxgames.terminal import INTERRUPTED, exit_process

PROG = "python -m jaxgames.holdem.acpc_client"
VERSION = "VERSION:2.0.0"
#: the shipped agent played by default
DEFAULT_AGENT = "alphaholdem-small"

__all__ = ["DEFAULT_AGENT", "MatchResult", "Seat", "load_seat", "main", "play", "play_lines"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class MatchResult:
    """Our net chips per finished hand (the table's units), and how they read in mbb/hand."""

    results: tuple[int, ...]
    big_blind: int
    fallbacks: int = 0          # hands played out with "c" (longer than the game's history)

    @property
    def hands(self) -> int:
        return len(self.results)

    @property
    def mbb_per_hand(self) -> float:
        return 1000 * float(np.mean(self.results)) / self.big_blind if self.results else 0.0

    @property
    def ci95(self) -> float:
        """Half-width of the 95% interval of :attr:`mbb_per_hand`; inf below two hands."""
        if self.hands < 2:
            return math.inf
        return 1.96 * 1000 * float(np.std(self.results, ddof=1)) / self.big_blind / math.sqrt(self.hands)

    def summary(self, against: str) -> str:
        ci = f"{self.ci95:,.0f}" if math.isfinite(self.ci95) else "n/a"
        extra = f"; {self.fallbacks} hand(s) beyond the game's history played out with calls" if self.fallbacks else ""
        return (f"{self.hands:,} hands against {against}: {self.mbb_per_hand:+,.0f} ± {ci} mbb/hand (95% interval), "
                f"{sum(self.results):+,} chips{extra}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Seat:
    """The agent at a wire table: its decisions on replayed states, seeded per hand and step."""

    agent: object       # a jaxgames.holdem.agent.Agent
    wire: Wire
    seed: int = 0

    def decide(self, state, hand: int) -> int:
        key = jax.random.fold_in(jax.random.key(self.seed), hand * 1024 + int(state.step_count))
        action = self.agent.act(state, key)
        if not bool(state.legal_action_mask[action]):   # a bug, never a table's doing
            raise RuntimeError(f"the agent chose illegal action {action}")
        return action


def load_seat(name: str = DEFAULT_AGENT, *, seed: int = 0, table=None) -> Seat:
    """The shipped agent ``name`` at ``table`` (default the ACPC one); PretrainedError if unreadable."""
    from jaxgames import pretrained
    from jaxgames.holdem.acpc import ACPC_TABLE

    agent = pretrained.load("holdem", name)
    return Seat(agent=agent, wire=Wire(agent.env, table or ACPC_TABLE, Translator(seed=seed)), seed=seed)


def play_lines(lines: Iterable[str], send: Callable[[str], None], seat: Seat, *,
               hands: int | None = None, on_hand: Callable[[int, int], None] | None = None) -> MatchResult:
    """The match on ``lines`` (what the dealer sends, one MATCHSTATE a line) answering through
    ``send`` (a line, without its line break); stops after ``hands`` hands or the lines' end."""
    results: dict[int, int] = {}
    fallback_hands: set[int] = set()
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line or line[0] in "#;":
            continue
        ms = parse_matchstate(line, seat.wire.table)
        bets = ms.betting
        if bets.over:
            if ms.hand_number not in results:
                results[ms.hand_number] = seat.wire.result(ms)
                if on_hand:
                    on_hand(ms.hand_number, results[ms.hand_number])
                if hands is not None and len(results) >= hands:
                    break
            continue
        if bets.to_act != ms.position:
            continue
        try:
            state = seat.wire.to_state(ms)
            text = seat.wire.action_text(state, seat.decide(state, ms.hand_number))
        except ACPCError:
            if len(ms.actions) < seat.wire.env.history_length:
                raise
            fallback_hands.add(ms.hand_number)
            text = "c"
        send(f"{line}:{text}")
    return MatchResult(results=tuple(results.values()), big_blind=seat.wire.table.big_blind,
                       fallbacks=len(fallback_hands & results.keys()))


def play(host: str, port: int, seat: Seat, *, hands: int | None = None, timeout: float | None = 600.0,
         on_hand: Callable[[int, int], None] | None = None) -> MatchResult:
    """Connect to the dealer at ``host:port``, send the version, play (:func:`play_lines`)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall((VERSION + "\r\n").encode())
        reader = sock.makefile("r", encoding="ascii", newline="\n")
        return play_lines(reader, lambda text: sock.sendall((text + "\r\n").encode()), seat, hands=hands,
                          on_hand=on_hand)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play the shipped hold'em agent against an ACPC dealer "
                                                       "(heads-up no-limit, protocol 2.0.0) and report mbb/hand.")
    p.add_argument("host", help="the dealer's host")
    p.add_argument("port", type=cli_args.count(1, 65_535, "a TCP port"), help="the port the dealer gave this seat")
    p.add_argument("--hands", type=cli_args.count(1, 10_000_000), default=None, metavar="N",
                   help="stop after N hands (default: until the dealer closes the connection)")
    p.add_argument("--seed", type=cli_args.seed, default=0, help="seed of the agent's sampling and the bet translation")
    p.add_argument("--pretrained", default=DEFAULT_AGENT, metavar="NAME", help=f"the shipped agent ({DEFAULT_AGENT})")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds to wait for the dealer (600)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from jaxgames.pretrained import PretrainedError

    where = f"{args.host}:{args.port}"
    try:
        seat = load_seat(args.pretrained, seed=args.seed)
    except (PretrainedError, ACPCError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    done: list[int] = []
    try:
        result = play(args.host, args.port, seat, hands=args.hands, timeout=args.timeout,
                      on_hand=lambda _, chips: done.append(chips))
    except ACPCError as err:
        print(f"{PROG}: error: the dealer at {where} sent a bad state: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{PROG}: error: the dealer at {where}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(MatchResult(results=tuple(done), big_blind=seat.wire.table.big_blind).summary(where) + " (interrupted)")
        return INTERRUPTED
    print(result.summary(where))
    return 0


if __name__ == "__main__":
    exit_process(main())
