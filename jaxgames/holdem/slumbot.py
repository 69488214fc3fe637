"""Play the shipped hold'em agent against Slumbot, through its JSON API (urllib only).

    python -m jaxgames.holdem.slumbot --hands N [--host https://slumbot.com] [--seed S]

The API (slumbot.com's sample client): ``POST <host>/api/new_hand`` with ``{"token": T}``
(none on the first hand) starts a hand; ``POST <host>/api/act`` with ``{"token": T, "incr":
A}`` plays our action. Each answer is JSON: ``token`` (keep the newest), ``action`` (the hand's
whole betting so far), ``client_pos`` (0: we are the big blind, 1: the small blind, the button:
first preflop, second after), ``hole_cards`` (``["Ac", "9d"]``), ``board``, and once the hand
is over ``winnings`` (our chips; also ``bot_hole_cards`` at a showdown); ``error_msg`` if
something is wrong. Actions: ``k`` check, ``c`` call, ``f`` fold, ``b<N>`` bet or raise to N
chips *on this street* (preflop the blinds count: a raise to 300 is ``b300``), streets
separated by ``/`` (optional at the end of the string, and after a call of an all-in).

Slumbot plays stacks 20,000, blinds 50/100 reset every hand: the game's own default table, so
chips need no scaling (:class:`jaxgames.holdem.acpc.Wire` scales by the big blinds' ratio where
they differ). Its betting is turned into ACPC rounds (raise-to over the hand = the street's
opening commitment + N) and replayed onto the game's state as the ACPC client does
(:mod:`jaxgames.holdem.acpc`: real chips, off-tree raises labelled by the pseudo-harmonic
mapping). The result is Slumbot's ``winnings``, printed in mbb/hand with a 95% interval. Bad
flags, an unreachable host, an answer that is not the documented JSON or an ``error_msg`` end
with one line and exit status 2; Ctrl-C prints the hands so far, status 130.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import urllib.error
import urllib.request
from typing import Callable

from jaxgames import cli_args
from jaxgames.holdem.acpc import ACPC_TABLE, BOARD_PER_ROUND, ACPCError, Action, Betting, MatchState, Table
from jaxgames.holdem.acpc_client import DEFAULT_AGENT, MatchResult, Seat, load_seat
from jaxgames.holdem.cards import parse_card
from jaxgames.terminal import INTERRUPTED, exit_process

PROG = "python -m jaxgames.holdem.slumbot"
DEFAULT_HOST = "https://slumbot.com"
#: Slumbot's table: stacks 20,000, blinds 50/100, position 1 the button
SLUMBOT_TABLE = ACPC_TABLE

__all__ = ["DEFAULT_HOST", "SLUMBOT_TABLE", "SlumbotError", "Client", "Street", "incr", "main", "parse_betting"]


class SlumbotError(ValueError):
    """An answer that is not Slumbot's documented JSON, or one carrying ``error_msg``."""


@dataclasses.dataclass(frozen=True)
class Street:
    """A Slumbot action string as ACPC rounds, with the betting it reaches and ``base``: what
    each seat had put in when the current street opened (a ``b<N>`` raises to base + N)."""

    rounds: tuple[tuple[Action, ...], ...]
    betting: Betting
    base: int


_TOKEN = re.compile(r"/|k|c|f|b[0-9]+")


def parse_betting(text: str, table: Table = SLUMBOT_TABLE) -> Street:
    """Slumbot's ``action`` string as ACPC rounds; SlumbotError naming what is wrong."""
    if not isinstance(text, str):
        raise SlumbotError(f"action must be a string, got {type(text).__name__}")
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != text:
        raise SlumbotError(f"bad Slumbot action {text!r}: k, c, f, b<chips> and '/' only")
    bets, rounds, base = Betting.start(table), [[]], 0
    try:
        for tok in tokens:
            if tok == "/":
                if len(rounds) - 1 >= bets.round:
                    raise SlumbotError(f"'/' before the street ended in {text!r}")
                rounds.append([])
                continue
            if len(rounds) - 1 != bets.round and not bets.over:
                raise SlumbotError(f"missing '/' after a street ended in {text!r}")
            if tok == "k" and not bets.over and bets.to_call:
                raise SlumbotError(f"check facing a bet in {text!r}")
            if tok == "c" and not bets.over and not bets.to_call:
                raise SlumbotError(f"call with nothing to call in {text!r}")
            action = Action("r", base + int(tok[1:])) if tok[0] == "b" else Action("c" if tok in "kc" else "f")
            before = bets.round
            bets = bets.apply(action)
            rounds[-1].append(action)
            if bets.round != before:
                base = bets.spent[0]
    except ACPCError as err:
        raise SlumbotError(f"bad Slumbot action {text!r}: {err}") from None
    rounds += [[] for _ in range(bets.round + 1 - len(rounds))]   # the optional closing '/'s
    return Street(rounds=tuple(map(tuple, rounds)), betting=bets, base=base)


def incr(street: Street, action: Action) -> str:
    """Our ACPC action in Slumbot's words: ``k``/``c`` by what there is to call, ``f``, ``b<N>``."""
    if action.kind == "f":
        return "f"
    if action.kind == "c":
        return "c" if street.betting.to_call else "k"
    return f"b{action.amount - street.base}"


def matchstate(answer: dict, street: Street, hand: int, table: Table = SLUMBOT_TABLE) -> MatchState:
    """The answer as a MATCHSTATE from our position (the bot's cards hidden)."""
    pos = answer.get("client_pos")
    if pos not in (0, 1):
        raise SlumbotError(f"client_pos must be 0 or 1, got {pos!r}")
    try:
        hole = tuple(parse_card(c) for c in answer.get("hole_cards") or ())
        board = [parse_card(c) for c in answer.get("board") or ()]
    except (ValueError, TypeError) as err:
        raise SlumbotError(f"bad cards in {answer}: {err}") from None
    if len(hole) != 2:
        raise SlumbotError(f"hole_cards must be two cards, got {answer.get('hole_cards')!r}")
    needed = sum(BOARD_PER_ROUND[:street.betting.round + 1])
    if len(board) != needed:
        raise SlumbotError(f"the board has {len(board)} cards on street {street.betting.round + 1}, expected {needed}")
    groups, at = [], 3
    if needed:
        groups.append(tuple(board[:3]))
    for _ in range(street.betting.round - 1):
        groups.append((board[at],))
        at += 1
    holes = (hole, ()) if pos == 0 else ((), hole)
    return MatchState(position=pos, hand_number=hand, rounds=street.rounds, hole=holes, board=tuple(groups),
                      table=table)


class Client:
    """Hands against Slumbot at ``host`` (``post(path, body) -> dict`` replaceable for tests)."""

    def __init__(self, seat: Seat, *, host: str = DEFAULT_HOST, timeout: float = 60.0,
                 post: Callable[[str, dict], dict] | None = None):
        self.seat, self.host, self.timeout = seat, host.rstrip("/"), timeout
        self.post = post or self._post
        self.token: str | None = None
        self.fallbacks: set[int] = set()    # hands played out with calls (beyond the game's history)

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(self.host + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:   # Slumbot answers errors with a JSON body too
            raw = err.read()
        try:
            answer = json.loads(raw)
        except ValueError:
            raise SlumbotError(f"{self.host}{path} answered something that is not JSON: {raw[:80]!r}") from None
        if not isinstance(answer, dict):
            raise SlumbotError(f"{self.host}{path} answered {answer!r}, not a JSON object")
        return answer

    def _call(self, path: str, body: dict) -> dict:
        answer = self.post(path, body)
        if answer.get("error_msg"):
            raise SlumbotError(f"Slumbot: {answer['error_msg']}")
        self.token = answer.get("token") or self.token
        return answer

    def play_hand(self, hand: int) -> int:
        """One hand: our chips won (Slumbot's ``winnings``)."""
        answer = self._call("/api/new_hand", {"token": self.token} if self.token else {})
        wire = self.seat.wire
        while True:
            if answer.get("winnings") is not None:
                winnings = answer["winnings"]
                if not isinstance(winnings, (int, float)):
                    raise SlumbotError(f"winnings must be a number, got {winnings!r}")
                return int(winnings)
            street = parse_betting(answer.get("action", ""), wire.table)
            ms = matchstate(answer, street, hand, wire.table)
            if street.betting.to_act != ms.position:
                raise SlumbotError(f"the hand is not over and not ours to act: {answer.get('action')!r}")
            try:
                state = wire.to_state(ms)
                action = wire.action(state, self.seat.decide(state, hand))
            except ACPCError:
                if len(ms.actions) < wire.env.history_length:
                    raise
                action = Action("c")     # beyond the game's history: call down
                self.fallbacks.add(hand)
            answer = self._call("/api/act", {"token": self.token, "incr": incr(street, action)})

    def play(self, hands: int, on_hand: Callable[[int, int], None] | None = None) -> MatchResult:
        results = []
        for hand in range(hands):
            results.append(self.play_hand(hand))
            if on_hand:
                on_hand(hand, results[-1])
        return MatchResult(results=tuple(results), big_blind=self.seat.wire.table.big_blind,
                           fallbacks=len(self.fallbacks))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play the shipped hold'em agent against Slumbot "
                                                       "(its JSON API) and report mbb/hand.")
    p.add_argument("--hands", type=cli_args.count(1, 1_000_000), required=True, metavar="N", help="hands to play")
    p.add_argument("--host", default=DEFAULT_HOST, metavar="URL", help=f"the API's base URL ({DEFAULT_HOST})")
    p.add_argument("--seed", type=cli_args.seed, default=0, help="seed of the agent's sampling and the bet translation")
    p.add_argument("--pretrained", default=DEFAULT_AGENT, metavar="NAME", help=f"the shipped agent ({DEFAULT_AGENT})")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds to wait for an answer (60)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not re.match(r"https?://[^/\s]+", args.host):
        parser.error(f"argument --host: must be an http:// or https:// URL, got {args.host!r}")
    from jaxgames.pretrained import PretrainedError

    try:
        seat = load_seat(args.pretrained, seed=args.seed, table=SLUMBOT_TABLE)
    except (PretrainedError, ACPCError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    done: list[int] = []
    client = Client(seat, host=args.host, timeout=args.timeout)
    try:
        result = client.play(args.hands, on_hand=lambda _, chips: done.append(chips))
    except (SlumbotError, ACPCError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:   # urllib's URLError, a timeout, a refused connection
        print(f"{PROG}: error: {args.host}: {getattr(err, 'reason', err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(MatchResult(results=tuple(done), big_blind=SLUMBOT_TABLE.big_blind).summary(args.host) + " (interrupted)")
        return INTERRUPTED
    print(result.summary(args.host))
    return 0


if __name__ == "__main__":
    exit_process(main())
