"""Play heads-up no-limit hold'em in the terminal against a bot.

    python -m jaxgames.holdem.play                      # against the shipped agent
    python -m jaxgames.holdem.play --opponent equity
    python -m jaxgames.holdem.play --opponent random --hands 10 --seed 3
    python -m jaxgames.holdem.play --opponent agent --run runs/holdem/quick-seed0

You sit in seat 0; the button (small blind) alternates from hand to hand, starting with you;
stacks are reset every hand (docs/rules/holdem.md). Before each of your actions the table is
drawn (street, pot, the board, your cards, both stacks, bets and chips in, the history) with
your legal actions and their chip amounts. Type an action by its number or its name
(``fold``, ``check``, ``call``, ``half``, ``3/4``, ``pot``, ``1.5``, ``2pot``, ``allin``; ``f``,
``k``, ``c``, ``a`` for short), ``help``, or ``quit``; an action that is not legal now gets a
message that says why and what is, and the prompt again. After each hand: the cards shown at a
showdown, what you won, your running total in chips, big blinds and mbb per hand.

Opponents: by default the trained agent shipped with jaxgames (``--opponent pretrained``;
``--pretrained NAME`` picks another of ``jaxgames.pretrained.names("holdem")``), the
baselines of :mod:`jaxgames.holdem.bots` (:data:`bots.BOT_NAMES`), or the trained agent of a
``python -m train.holdem`` run (``--opponent agent --run runs/holdem/<run>``;
``--checkpoint`` is the same flag, as ``jaxgames.hex.play`` names it):
:func:`jaxgames.holdem.agent.load_agent` reads the run's config.json and its best parameters
(else its newest checkpoint), and the agent samples its network's policy at every decision.
It was trained at the default table (stacks of 20,000, blinds 50/100); other ``--stack`` and
blinds are allowed, but are new to it. A bad flag, or a run folder or shipped agent that cannot
be used (missing, not a hold'em run, no checkpoint, damaged files), ends with one line and exit
status 2 (argparse, as ``jaxgames.hex.play``).

The logic is importable: :class:`Session` takes any iterable of input lines and writes to any
text stream; :func:`main` is the thin command line around it. The loop (reading, quit, help,
the end of input, Ctrl-C) is :class:`jaxgames.terminal.PlaySession`; here is what is hold'em's:
the table, the actions and their names, the hands and the running totals.
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

from jaxgames import cli_args
from jaxgames.holdem import betting, bots, hand_eval
from jaxgames.holdem.agent import AgentError, load_agent
from jaxgames.holdem.cards import BOARD_VISIBLE, cards_text
from jaxgames.holdem.game import SHOWDOWN, STREET_NAMES, Holdem
from jaxgames.holdem.render import action_text, render_text
from jaxgames.player import Player
from jaxgames.terminal import (OpponentUnavailable, PlaySession, add_pretrained_flag, check_agent_flags,
                               check_opponent_settings, exit_process, exit_status, run_cli, seed_or_random)

PROG = "python -m jaxgames.holdem.play"
HUMAN = 0
COMPUTER = 1 - HUMAN
AGENT = "agent"
#: the agent shipped with jaxgames (jaxgames.pretrained), the default opponent
PRETRAINED = "pretrained"
#: who may sit across: the baselines, a trained agent (needs a run folder), or the shipped one
OPPONENTS = bots.BOT_NAMES + (AGENT, PRETRAINED)
#: what a person may type for each action (besides its number)
ALIASES = {
    betting.FOLD: ("fold", "f"),
    betting.CHECK: ("check", "k", "x"),
    betting.CALL: ("call", "c"),
    betting.RAISE_HALF: ("half", "1/2", "r1/2", "0.5"),
    betting.RAISE_THREE_QUARTERS: ("3/4", "r3/4", "0.75"),
    betting.RAISE_POT: ("pot", "r1"),
    betting.RAISE_ONE_HALF: ("1.5", "3/2", "r3/2", "r1.5"),
    betting.RAISE_TWO: ("2pot", "r2"),
    betting.ALL_IN: ("allin", "all-in", "all", "a", "shove"),
}
_BY_NAME = {alias: action for action, names in ALIASES.items() for alias in names}

HELP = """\
Actions (type the number shown or a name):
  0 fold (f)    1 check (k, x)    2 call (c)
  3 raise ½ pot (half)   4 ¾ pot (3/4)   5 1 pot (pot)   6 1½ pot (1.5)   7 2 pots (2pot)
  8 all-in (allin, a)
With nothing to call a raise is a bet of that fraction of the pot; a raise of f pot calls,
then adds f times the pot after the call. help: this list; quit: stop (Ctrl-D too)."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """One session's options (the command line's flags)."""

    opponent: str = PRETRAINED      # a name of OPPONENTS: a bot of bots.BOT_NAMES, "agent" or "pretrained"
    hands: int | None = None        # stop after this many hands; None: until quit / end of input
    seed: int = 0                   # the deals and the computer's randomness
    stack: int = 20_000
    small_blind: int = 50
    big_blind: int = 100
    run: str | None = None          # run folder of a trained agent (opponent "agent")
    pretrained: str | None = None   # which shipped agent (opponent "pretrained"); None: the first


@dataclasses.dataclass(frozen=True)
class Result:
    """How a session ended."""

    hands: int               # hands finished
    results: tuple           # your chips won in each finished hand
    ended_by: str            # "hands" (the --hands limit), "quit", "eof" or "interrupt"
    exit_code: int           # 0; 130 after Ctrl-C

    @property
    def total(self) -> float:
        return float(sum(self.results))


@functools.lru_cache(maxsize=None)
def _env(stack: int, small_blind: int, big_blind: int) -> Holdem:
    return Holdem(stack=stack, small_blind=small_blind, big_blind=big_blind)


@functools.lru_cache(maxsize=None)
def _table(env: Holdem):
    """Jitted ``deal(key, button)``, ``step`` and ``evaluate``: compiled once per process and
    table (few compiles: each costs seconds, the session's whole wait)."""
    deal = jax.jit(lambda key, button: env.deal(env.shuffle(key), button))
    return deal, jax.jit(env.step), jax.jit(hand_eval.evaluate)


def agent_opponent(settings: Settings) -> Player:
    """The trained agent of the run folder ``settings.run`` (:func:`jaxgames.holdem.agent.load_agent`,
    its best parameters); OpponentUnavailable, with the loader's one line, when it cannot be used."""
    if not settings.run:
        raise OpponentUnavailable("--opponent agent needs the run folder of a trained agent: "
                                  "--run runs/holdem/<run>")
    try:
        return load_agent(settings.run)
    except AgentError as e:
        raise OpponentUnavailable(str(e)) from None


def pretrained_opponent(settings: Settings) -> Player:
    """The hold'em agent shipped with jaxgames (``settings.pretrained``, else the first);
    OpponentUnavailable, with its one line, when it cannot be used (a damaged file)."""
    from jaxgames import pretrained

    try:
        return pretrained.load("holdem", settings.pretrained)
    except pretrained.PretrainedError as e:
        raise OpponentUnavailable(str(e)) from None


def parse_action(text: str) -> int | None:
    """The action a person typed (a number 0-8 or a name of :data:`ALIASES`), or None."""
    word = text.strip().lower()
    if word.isdigit() and int(word) < betting.NUM_ACTIONS:
        return int(word)
    return _BY_NAME.get(word)


class Session(PlaySession):
    """A sequence of hands between a person (typed lines) and a bot, written to ``output``."""

    HELP = HELP
    STOPS = "session"

    def __init__(self, settings: Settings, output: TextIO, *, echo: bool = False):
        check_opponent_settings(settings.opponent, settings.run, settings.pretrained, OPPONENTS)
        env = _env(settings.stack, settings.small_blind, settings.big_blind)
        # the agent first: a run folder that cannot be used stops before anything is said
        if settings.opponent == AGENT:
            self.opponent = agent_opponent(settings)
        elif settings.opponent == PRETRAINED:
            self.opponent = pretrained_opponent(settings)
        else:
            self.opponent = bots.make_bot(env, settings.opponent)
        #: how the computer's actions are signed: the bot's name, or "agent"
        self.label = AGENT if settings.opponent in (AGENT, PRETRAINED) else self.opponent.name
        super().__init__(settings, output, echo=echo)
        self.env = env
        self._deal, self._step, self._evaluate = _table(self.env)
        self.human = HUMAN
        key = jax.random.key(settings.seed)
        self._deal_key, self._bot_key = jax.random.split(key)
        self.results: list[float] = []
        self.state = None

    # -- the table ----------------------------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(np.asarray(self.state.legal_action_mask))]

    def options_text(self) -> str:
        return "  ".join(f"[{a}] {action_text(self.state, a)}" for a in self.legal_actions())

    def why_not(self, action: int) -> str:
        """Why ``action`` is not legal for the person now (host side, from the state)."""
        s = self.state
        to_call = int(s.bets[COMPUTER] - s.bets[HUMAN])
        name = betting.ACTION_NAMES[action]
        if action == betting.CHECK:
            return f"You cannot check: there are {to_call:,} chips to call."
        if action in (betting.FOLD, betting.CALL):
            return f"You cannot {name}: there is nothing to call (check instead)."
        if int(s.stacks[COMPUTER]) == 0:
            return "You cannot raise: your opponent is all-in (call or fold)."
        if action == betting.ALL_IN:
            return f"You cannot go all-in: your {int(s.stacks[HUMAN]):,} chips only call."
        chips = np.asarray(betting.amounts(jnp.int32(int(s.committed.sum())), jnp.int32(max(to_call, 0)),
                                           jnp.int32(int(s.stacks[HUMAN]))))[action]
        if chips >= int(s.stacks[HUMAN]):
            return (f"You cannot {name}: it needs {int(chips):,} chips and you have {int(s.stacks[HUMAN]):,} "
                    f"(all-in instead).")
        return (f"You cannot {name}: it raises by less than the minimum raise of {int(s.min_raise):,} "
                f"(pick a larger raise).")

    # -- a hand ---------------------------------------------------------------------------------------

    def _new_hand(self) -> None:
        # the button alternates, the person first (what env.reset does from hand to hand)
        key = jax.random.fold_in(self._deal_key, len(self.results))
        self.state = self._deal(key, jnp.int32(len(self.results) % 2))
        n = len(self.results) + 1
        role = "on the button (small blind, you act first preflop)" if int(self.state.button) == HUMAN \
            else "in the big blind (you act first after the flop)"
        self._say()
        self._say(f"=== Hand {n}: you are {role} ===")

    def _apply(self, action: int) -> None:
        """Play ``action``; announce a new street and its board."""
        street = int(self.state.street)
        self.state = self._step(self.state, jnp.int32(action))
        new = int(self.state.street)
        if new != street and new != SHOWDOWN:
            board = np.asarray(self.state.deck)[4:4 + BOARD_VISIBLE[new]]
            self._say(f"--- {STREET_NAMES[new]}: {cards_text(board)} ---")

    def computer_move(self) -> None:
        key = jax.random.fold_in(self._bot_key, 1000 * len(self.results) + int(self.state.step_count))
        action = self.computer_action(key)
        self._say(f"Computer ({self.label}): {action_text(self.state, action)}")
        self._apply(action)

    def turn_starts(self) -> None:
        self._say()
        self._say(render_text(self.state, HUMAN))
        self._say("Your options: " + self.options_text())

    def prompt(self) -> str:
        return f"Hand {len(self.results) + 1}, you > "

    def parse(self, line: str) -> tuple[str, Any]:
        """``("move", action)``, or ``("bad", message)`` for a line that is not an action or
        an action not legal now (the message says why, and what is)."""
        action = parse_action(line)
        if action is None:
            return "bad", (f"{line.strip()!r} is not an action: type a number or a name from "
                           f"your options ({', '.join(str(a) for a in self.legal_actions())}), or help.")
        if action not in self.legal_actions():
            return "bad", self.why_not(action) + " Your options: " + self.options_text()
        return "move", action

    def move(self, action: int) -> None:
        self._say(f"You: {action_text(self.state, action)}")
        self._apply(action)

    def _hand_over(self) -> None:
        s = self.state
        won = float(s.rewards[HUMAN])
        self.results.append(won)
        self._say()
        if int(s.street) == SHOWDOWN:
            deck = np.asarray(s.deck).astype(int)
            board = deck[4:9]
            self._say(render_text(s))
            for who, seat in (("You", HUMAN), ("Computer", COMPUTER)):
                value = self._evaluate(np.concatenate([deck[2 * seat:2 * seat + 2], board]))
                self._say(f"{who}: {hand_eval.describe(int(value))}")
        else:
            self._say(render_text(s, HUMAN))
        bb = self.settings.big_blind
        total = sum(self.results)
        verb = "win" if won > 0 else "lose" if won < 0 else "split"
        amount = f"{abs(won):,.0f} chips ({abs(won) / bb:,.1f} bb)" if won else "the pot"
        self._say(f"You {verb} {amount}. After {len(self.results)} hand{'s' if len(self.results) > 1 else ''}: "
                  f"{total:+,.0f} chips, {total / bb:+,.1f} bb, "
                  f"{1000 * total / bb / len(self.results):+,.0f} mbb/hand.")

    def start(self) -> None:
        s = self.settings
        who = self.opponent.name if s.opponent in (AGENT, PRETRAINED) else f"the {self.opponent.name} bot"
        self._say(f"Heads-up no-limit hold'em against {who} (seed {s.seed}): stacks "
                  f"{s.stack:,}, blinds {s.small_blind:,}/{s.big_blind:,}. You are seat 0. "
                  f"Type an action's number or name, help, or quit.")

    def play(self, lines: Iterator[str]) -> str:
        """Hands until ``settings.hands`` ("hands"), or "quit" or "eof" if the person stopped."""
        return self.play_deals(lines, self.settings.hands, self._new_hand, self._hand_over) or "hands"

    def finish(self, ended_by: str) -> Result:
        n = len(self.results)
        bb = self.settings.big_blind
        total = sum(self.results)
        if not self.began:   # a Ctrl-C before the first hand: its one line is all
            return Result(hands=0, results=(), ended_by=ended_by, exit_code=exit_status(ended_by))
        self._say()
        if n:
            self._say(f"Session over: {n} hand{'s' if n > 1 else ''}, you {'won' if total >= 0 else 'lost'} "
                      f"{abs(total):,.0f} chips ({total / bb:+,.1f} bb, {1000 * total / bb / n:+,.0f} mbb/hand).")
        else:
            self._say("Session over: no hand finished.")
        return Result(hands=n, results=tuple(self.results), ended_by=ended_by,
                      exit_code=exit_status(ended_by))


def play(input_lines: Iterable[str], output: TextIO = sys.stdout, *, echo: bool = False, **settings) -> Result:
    """Play a session: ``settings`` are :class:`Settings` fields (``opponent="call"``, ...)."""
    return Session(Settings(**settings), output, echo=echo).run(input_lines)


# -- command line -------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Play heads-up no-limit hold'em in the terminal against a bot or a "
                               "trained agent.",
        epilog="In the game: an action's number or name (fold, check, call, half, 3/4, pot, 1.5, "
               "2pot, allin), help, quit (Ctrl-D also quits).")
    p.add_argument("--opponent", choices=OPPONENTS, default=PRETRAINED,
                   help="pretrained (the trained agent shipped with jaxgames; the default); a bot: equity "
                        "(Monte Carlo equity), random, call, allin, fold; or agent (the trained network of "
                        "a python -m train.holdem run; needs --run)")
    add_pretrained_flag(p)
    p.add_argument("--run", "--checkpoint", dest="run", metavar="RUN",
                   help="with --opponent agent: the run folder, runs/holdem/<run> (its newest "
                        "checkpoints/ step: the run's last round, the agent its summary describes)")
    p.add_argument("--hands", type=int, default=None, metavar="N",
                   help="stop after N hands (default: play until quit or the end of input)")
    p.add_argument("--seed", type=cli_args.seed, default=None,
                   help="seed of the deals and the bot's randomness (default: a random one, shown)")
    p.add_argument("--stack", type=int, default=20_000, help="chips each seat starts every hand with (20,000)")
    p.add_argument("--small-blind", type=int, default=50, metavar="CHIPS", help="small blind (50)")
    p.add_argument("--big-blind", type=int, default=100, metavar="CHIPS", help="big blind (100)")
    return p


def parse_args(argv: list[str] | None = None) -> Settings:
    """Settings from command-line flags; a bad flag exits 2 with one clear line (argparse)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.hands is not None and args.hands < 1:
        parser.error(f"argument --hands: must be at least 1, got {args.hands}")
    check_agent_flags(parser, args, "holdem")
    try:  # the game's own checks of the chip options, as one line
        Holdem(stack=args.stack, small_blind=args.small_blind, big_blind=args.big_blind)
    except ValueError as err:
        parser.error(str(err))
    seed = seed_or_random(args.seed)
    return Settings(opponent=args.opponent, hands=args.hands, seed=seed, stack=args.stack,
                    small_blind=args.small_blind, big_blind=args.big_blind, run=args.run,
                    pretrained=args.pretrained)


def main(argv: list[str] | None = None) -> int:
    return run_cli(PROG, Session, parse_args(argv))


if __name__ == "__main__":
    exit_process(main())
