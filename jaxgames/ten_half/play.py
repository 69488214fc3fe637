"""Play ten-and-a-half against the dealer in the terminal, with a trained agent's hints.

    python -m jaxgames.ten_half.play                        # hints from the shipped learned policy
    python -m jaxgames.ten_half.play --agent optimal        # hints from the exact optimum
    python -m jaxgames.ten_half.play --pretrained mc-wis-off-policy --games 10 --seed 3
    python -m jaxgames.ten_half.play --agent agent --run runs/ten_half/quick-seed0 [--method off-policy]

You are dealt one card; type ``hit`` (``1``, ``+``, ``d``) to draw another or ``stick``
(``0``, ``-``, ``s``) to let the dealer draw (docs/rules/ten_half.md: the dealer draws until
it busts, makes a special hand, beats your sum, or ties it with no more cards than you).
Every card drawn is shown, the dealer's too. ``hint`` (``tip``) shows what the agent would
play here and its two action values (the expected reward of sticking and of hitting, by its
own estimate: a learner's learned Q, the optimum's exact values). ``help``, ``quit``.
After each game: its reward and your running total; at the end the games played and the mean
reward per game next to the optimum's expectation.

The agent: by default the learned policy shipped with jaxgames (``--agent pretrained``;
``--pretrained NAME`` picks another of ``jaxgames.pretrained.names("ten_half")``: the
on-policy learner first, the off-policy one, the optimum), ``--agent optimal`` the exact
optimum computed now (:mod:`jaxgames.ten_half.dp`), or a ``python -m train.ten_half`` run
(``--agent agent --run runs/ten_half/<run>``, ``--method on-policy`` or ``off-policy``:
:func:`jaxgames.ten_half.agent.load_agent`). A bad flag, or a run folder or shipped agent
that cannot be used, ends with one line and exit status 2.

The logic is importable: :class:`Session` takes any iterable of input lines and writes to any
text stream; :func:`main` is the thin command line. The loop (reading, quit, help, the end of
input, Ctrl-C) is :class:`jaxgames.terminal.PlaySession`; here is what is ten-and-a-half's.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from typing import Any, Iterable, Iterator, TextIO

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import cli_args
from jaxgames.player import Player
from jaxgames.ten_half import dp
from jaxgames.ten_half.agent import AgentError, action_and_values, load_agent, optimal_player
from jaxgames.ten_half.game import (HAND_TYPE_NAMES, HIT, JACK, MAX_CARDS, RANK_NAMES, STICK, card_value_halves,
                                    dealer_outcomes, draw_rank, hand_type)
from jaxgames.ten_half.render import points_text
from jaxgames.terminal import (OpponentUnavailable, PlaySession, add_pretrained_flag, check_agent_flags,
                               exit_process, exit_status, run_cli, seed_or_random)

PROG = "python -m jaxgames.ten_half.play"
PRETRAINED, OPTIMAL, AGENT = "pretrained", "optimal", "agent"
AGENTS = (PRETRAINED, OPTIMAL, AGENT)
#: what a person may type for each action
ALIASES = {HIT: ("hit", "1", "+", "d", "draw"), STICK: ("stick", "0", "-", "s", "stand")}
HINT_WORDS = ("hint", "tip")
_BY_WORD = {word: action for action, words in ALIASES.items() for word in words}
ACTION_NAMES = {STICK: "stick", HIT: "hit"}
HELP = ("Commands: hit (1, +, d) draws a card; stick (0, -, s) lets the dealer draw; hint (tip) shows "
        "the agent's move and its action values; help; quit (Ctrl-D also quits).")


@dataclasses.dataclass(frozen=True)
class Settings:
    agent: str = PRETRAINED          # who gives the hints: "pretrained", "optimal" or "agent"
    pretrained: str | None = None    # which shipped agent (agent "pretrained"); None: the first
    run: str | None = None           # run folder (agent "agent")
    method: str = "on_policy"        # which learner of the run (agent "agent")
    games: int | None = None         # stop after this many games (None: until quit / end of input)
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class Result:
    """How a session ended."""

    games: int               # games finished
    results: tuple           # your reward in each finished game
    hints: int               # hints asked
    ended_by: str            # "games" (the --games limit), "quit", "eof" or "interrupt"
    exit_code: int           # 0; 130 after Ctrl-C

    @property
    def total(self) -> float:
        return float(sum(self.results))


@functools.lru_cache(maxsize=None)
def _table():
    """Jitted ``deal(key) -> (state, rank)`` and ``play(state, action, key) -> (state, ranks
    [6], dealer_cards)``: the game's own ``init``/``step`` and the cards they drew, read again
    from the same key (``TenHalf`` draws ``draw_rank(key)`` at the deal and ``draw_rank(key,
    (6,))`` at a step: the hit's card, then the dealer's five) so a person sees every card.
    Compiled once per process."""
    env = jaxgames.make("ten_half")

    def deal(key):
        return env.init(key), draw_rank(key)

    def play(state, action, key):
        ranks = draw_rank(key, (1 + MAX_CARDS,))
        stops, _ = dealer_outcomes(state.player_sum, state.num_cards, ranks[1:])
        return env.step(state, action, key), ranks, jnp.argmax(stops) + 1

    return jax.jit(deal), jax.jit(play)


def parse_action(text: str) -> int | None:
    """The action a person typed (a word or sign of :data:`ALIASES`), or None."""
    return _BY_WORD.get(text.strip().lower())


def cards_text(ranks) -> str:
    return " ".join(RANK_NAMES[int(r)] for r in ranks)


def points(halves: int) -> str:
    """``7 points``, ``½ point``, ``10½ points``."""
    return f"{points_text(halves)} point{'s' * (halves != 1)}"


def hand_points(ranks) -> int:
    """The hand's sum in half-points."""
    return int(sum(int(card_value_halves(int(r))) for r in ranks))


def hint_player(settings: Settings) -> Player:
    """The agent the hints come from; OpponentUnavailable with one line when it cannot be used."""
    if settings.agent == OPTIMAL:
        return optimal_player()
    if settings.agent == AGENT:
        if not settings.run:
            raise OpponentUnavailable("--agent agent needs the run folder of a trained agent: --run runs/ten_half/<run>")
        try:
            return load_agent(settings.run, method=settings.method)
        except AgentError as e:
            raise OpponentUnavailable(str(e)) from None
    from jaxgames import pretrained

    try:
        return pretrained.load("ten_half", settings.pretrained)
    except pretrained.PretrainedError as e:
        raise OpponentUnavailable(str(e)) from None


class Session(PlaySession):
    """Games of ten-and-a-half typed by a person, with hints from :attr:`opponent`."""

    HELP = HELP
    STOPS = "session"

    def __init__(self, settings: Settings, output: TextIO, *, echo: bool = False):
        if settings.agent not in AGENTS:
            raise ValueError(f"unknown agent {settings.agent!r}; choose from {', '.join(AGENTS)}")
        # the agent first: one that cannot be used stops before anything is said
        self.opponent = hint_player(settings)
        super().__init__(settings, output, echo=echo)
        #: the hints' values are the optimum's exact ones, or a learner's estimates
        self.exact = settings.agent == OPTIMAL or (settings.agent == PRETRAINED and settings.pretrained == "optimal")
        self.human = 0
        self._deal, self._play = _table()
        self._deal_key, self._step_key = jax.random.split(jax.random.key(settings.seed))
        self.results: list[float] = []
        self.cards: list[int] = []
        self.state = None

    # -- a game ---------------------------------------------------------------------------------

    def _new_game(self) -> None:
        self.state, rank = self._deal(jax.random.fold_in(self._deal_key, len(self.results)))
        self.cards = [int(rank)]
        self._check_hand()
        self._say()
        self._say(f"=== Game {len(self.results) + 1}: you are dealt {RANK_NAMES[self.cards[0]]} ===")

    def _check_hand(self) -> None:
        """The cards shown add up to the game's own state (else this module misreads the draws: a bug)."""
        if hand_points(self.cards) != int(self.state.player_sum) or len(self.cards) != int(self.state.num_cards):
            raise RuntimeError(f"the cards shown ({cards_text(self.cards)}) are not the game's hand "
                               f"({int(self.state.player_sum)} half-points, {int(self.state.num_cards)} cards)")

    def _hand(self) -> str:
        n = len(self.cards)
        return f"{cards_text(self.cards)} ({points(hand_points(self.cards))}, {n} card{'s' * (n > 1)})"

    def turn_starts(self) -> None:
        self._say(f"Your hand: {self._hand()}")

    def prompt(self) -> str:
        return f"Game {len(self.results) + 1}, hit or stick > "

    def parse(self, line: str) -> tuple[str, Any]:
        word = line.strip().lower()
        if word in HINT_WORDS:
            return "hint", None
        action = parse_action(word)
        if action is None:
            return "bad", f"{line.strip()!r} is not a move: type hit or stick (or hint, help, quit)."
        if not bool(np.asarray(self.state.legal_action_mask)[action]):
            return "bad", f"You cannot {ACTION_NAMES[action]} now: five cards end the game."
        return "move", action

    def hint(self) -> None:
        action, values = action_and_values(self.opponent, self.state)
        if self.exact:
            whose = "exact values"
        elif not values.any():
            whose = "it never met this hand in training: no estimates, it sticks"
        else:
            whose = "its learned estimates"
        self._say(f"Hint ({self.opponent.name}): {ACTION_NAMES[action]}. Expected reward of stick "
                  f"{values[STICK]:+.4f}, of hit {values[HIT]:+.4f} ({whose}).")

    def move(self, action: int) -> None:
        key = jax.random.fold_in(jax.random.fold_in(self._step_key, len(self.results)), int(self.state.step_count))
        before = self.state
        self.state, ranks, dealer_cards = self._play(before, jnp.int32(action), key)
        ranks = [int(r) for r in np.asarray(ranks)]
        if action == HIT:
            self.cards.append(ranks[0])
            self._check_hand()
            self._say(f"You hit: {RANK_NAMES[ranks[0]]}.")
            if self.over:
                type_id = int(hand_type(hand_points(self.cards), len(self.cards),
                                        int(self.state.num_faces))[0])
                self._say(f"Your hand: {self._hand()}: {HAND_TYPE_NAMES[type_id]}.")
            return
        dealer = ranks[1:1 + int(dealer_cards)]
        self._say(f"You stick on {points_text(hand_points(self.cards))}. The dealer draws "
                  f"{cards_text(dealer)}: {self._dealer_text(dealer)}.")

    def _dealer_text(self, dealer: list[int]) -> str:
        dealer_sum = hand_points(dealer)
        faces = sum(r >= JACK for r in dealer)
        type_id = int(hand_type(dealer_sum, len(dealer), faces)[0])
        if type_id == 0:
            return f"{points(dealer_sum)}, the dealer busts"
        if type_id >= 2:
            return f"{points(dealer_sum)}, the dealer makes {HAND_TYPE_NAMES[type_id]}"
        mine = hand_points(self.cards)
        if dealer_sum > mine:
            return f"{points(dealer_sum)} beats your {points_text(mine)}"
        return f"{points(dealer_sum)} ties your {points_text(mine)} with no more cards than yours"

    def computer_move(self) -> None:   # the dealer plays inside the game's step: never asked
        raise RuntimeError("ten-and-a-half has no computer's turn")

    def _game_over(self) -> None:
        won = float(np.asarray(self.state.rewards)[0])
        self.results.append(won)
        n, total = len(self.results), sum(self.results)
        verb = "win" if won > 0 else "lose"
        self._say(f"You {verb} {abs(won):g}. After {n} game{'s' * (n > 1)}: {total:+g} "
                  f"({total / n:+.3f} per game).")

    # -- the session ------------------------------------------------------------------------------

    def start(self) -> None:
        s = self.settings

        def compile_all():
            state, _ = self._deal(jax.random.key(0))
            jax.block_until_ready(self._play(state, jnp.int32(STICK), jax.random.key(0)))
            action_and_values(self.opponent, state)

        self.compile_first("(compiling the game and the agent's move once)", compile_all)
        self._say(f"Ten-and-a-half against the dealer (seed {s.seed}); hints from {self.opponent.name}. "
                  f"Type hit, stick, hint, help or quit.")

    def play(self, lines: Iterator[str]) -> str:
        """Games until ``settings.games`` ("games"), or "quit" or "eof" if the person stopped."""
        return self.play_deals(lines, self.settings.games, self._new_game, self._game_over) or "games"

    def finish(self, ended_by: str) -> Result:
        n = len(self.results)
        result = Result(games=n, results=tuple(self.results), hints=self.hints, ended_by=ended_by,
                        exit_code=exit_status(ended_by))
        if not self.began:
            return result
        self._say()
        if n:
            self._say(f"Session over: {n} game{'s' * (n > 1)}, {result.total:+g} in all, "
                      f"{result.total / n:+.3f} per game (optimal play expects {dp.optimal_value():+.3f}); "
                      f"{self.hints} hint{'s' * (self.hints != 1)} asked.")
        else:
            self._say("Session over: no game finished.")
        return result


def play(input_lines: Iterable[str], output: TextIO = sys.stdout, *, echo: bool = False, **settings) -> Result:
    """Play a session: ``settings`` are :class:`Settings` fields (``agent="optimal"``, ...)."""
    return Session(Settings(**settings), output, echo=echo).run(input_lines)


# -- command line -------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Play ten-and-a-half against the dealer in the terminal; a trained agent "
                               "gives hints.",
        epilog="In the game: hit, stick, hint, help, quit (Ctrl-D also quits).")
    p.add_argument("--agent", choices=AGENTS, default=PRETRAINED,
                   help="who gives the hints: pretrained (the learned policy shipped with jaxgames; the "
                        "default), optimal (the exact optimum), or agent (a python -m train.ten_half run; "
                        "needs --run)")
    add_pretrained_flag(p, flag="agent", names="mc-on-policy, mc-wis-off-policy, optimal")
    p.add_argument("--run", metavar="RUN", help="with --agent agent: the run folder, runs/ten_half/<run>")
    p.add_argument("--method", choices=("on-policy", "off-policy"), default=None,
                   help="with --agent agent: which of the run's two learners (default: on-policy)")
    p.add_argument("--games", type=int, default=None, metavar="N",
                   help="stop after N games (default: play until quit or the end of input)")
    p.add_argument("--seed", type=cli_args.seed, default=None,
                   help="seed of the cards (default: a random one, shown)")
    return p


def parse_args(argv: list[str] | None = None) -> Settings:
    """Settings from command-line flags; a bad flag exits 2 with one clear line (argparse)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.games is not None and args.games < 1:
        parser.error(f"argument --games: must be at least 1, got {args.games}")
    check_agent_flags(parser, args, "ten_half", flag="agent")
    if args.method is not None and args.agent != AGENT:
        parser.error("argument --method: only with --agent agent")
    return Settings(agent=args.agent, pretrained=args.pretrained, run=args.run,
                    method=(args.method or "on-policy").replace("-", "_"), games=args.games,
                    seed=seed_or_random(args.seed))


def main(argv: list[str] | None = None) -> int:
    return run_cli(PROG, Session, parse_args(argv))


if __name__ == "__main__":
    exit_process(main())
