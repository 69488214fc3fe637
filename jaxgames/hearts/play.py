"""Play Hearts in the terminal: you hold one seat, three computer players the others.

    python -m jaxgames.hearts.play                      # standard Hearts, one hand, vs the shipped agent
    python -m jaxgames.hearts.play --opponent iie --worlds 40
    python -m jaxgames.hearts.play --opponent rule --target-score 100 --seat 2
    python -m jaxgames.hearts.play --variant paper --no-moon --opponent pie
    python -m jaxgames.hearts.play --opponent agent --run runs/hearts/quick-seed0

The computer players are by default the learned player shipped with jaxgames
(``--opponent pretrained``; ``--pretrained NAME`` picks another of
``jaxgames.pretrained.names("hearts")``): Sturtevant & White's learned value at the leaves of
max^n over the trick inside PIMC over ``--worlds`` sampled deals, honest, passing by the bots'
rule; or the bots of :mod:`jaxgames.hearts.bots`: ``iie`` (Monte Carlo over
``--worlds`` sampled deals, a max^n search of the trick in each; honest), ``pie`` (the same
search on the real cards: it sees your hand, as the source's perfect-information expert),
``rule`` (duck, dump the Q♠ and high hearts, lead low) or ``random``; or ``agent``, the learned
player of a ``python -m train.hearts`` run (``--opponent agent --run runs/hearts/<run>``:
:func:`jaxgames.hearts.agent.load_agent` reads the run's config.json and its newest checkpoint;
the learned trick search inside PIMC over ``--worlds`` sampled deals, honest; it passes by the
bots' rule). Rules as implemented: docs/rules/hearts.md.

Type a card (``QS``, ``Q♠``, ``10h``, ``th``) to play it; while passing, one card or several on
one line (``QS AH KD``). ``show`` prints the table again, ``tricks`` the tricks of this hand,
``help`` the commands, ``quit`` (or Ctrl-D) stops. After each trick its taker and points are
shown, after each hand the points and the scores.

The logic is importable: :class:`Session` takes any iterable of input lines and writes to any
text stream; :func:`main` is the thin command line around it. The loop (reading, quit, help,
the end of input, Ctrl-C) is :class:`jaxgames.terminal.PlaySession`; here is what is Hearts':
the table, cards, passing, ``show`` and ``tricks``, the tricks' and hands' reports. Bad flags, and a
run folder or shipped agent that cannot be used (missing, not a Hearts run, no checkpoint, damaged
files), end with one line and exit status 2 (argparse's ``error``, as ``python -m jaxgames.hex.play``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from typing import Any, Callable, Iterable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import cli_args
from jaxgames.hearts.agent import AgentError, load_agent
from jaxgames.hearts.bots import BOT_NAMES, DEFAULT_WORLDS, make_bot
from jaxgames.hearts.cards import (
    HEARTS,
    NO_PASS,
    NUM_CARDS,
    NUM_PLAYERS,
    PASS_SIZE,
    PASS_WORDS,
    POINTS,
    QUEEN_OF_SPADES,
    SUIT,
    TOTAL_POINTS,
    card_name,
    cards_text,
    parse_card,
)
from jaxgames.hearts.game import MAX_TARGET_SCORE, VARIANTS, Hearts
from jaxgames.hearts.render import tricks
from jaxgames.player import Player
from jaxgames.terminal import (OpponentUnavailable, PlaySession, add_pretrained_flag, check_agent_flags,
                               check_opponent_settings, exit_process, exit_status, jitted, run_cli,
                               seed_or_random)

PROG = "python -m jaxgames.hearts.play"
AGENT = "agent"
#: the agent shipped with jaxgames (jaxgames.pretrained), the default opponent
PRETRAINED = "pretrained"
#: who may sit at the three other seats: a bot, a trained agent (needs a run folder), or the shipped one
OPPONENTS = tuple(BOT_NAMES) + (AGENT, PRETRAINED)
#: the opponents that search over sampled worlds (--worlds)
SAMPLING = ("iie", AGENT, PRETRAINED)
_SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

HELP = """\
Commands:
  QS      play the Q♠ (rank then suit: 2-9, T or 10, J, Q, K, A; C D H S or ♣ ♦ ♥ ♠)
  QS AH   while passing: pass several cards at once
  show    the table again
  tricks  the tricks of this hand
  help    this list
  quit    stop here (Ctrl-D does the same)"""


@dataclasses.dataclass(frozen=True)
class Settings:
    """One game's options (the command line's flags)."""

    seat: int = 0                      # your seat, 0..3 (play goes 0 -> 1 -> 2 -> 3)
    opponent: str = PRETRAINED         # a name of OPPONENTS: a bot of BOT_NAMES, "agent" or "pretrained"
    worlds: int = DEFAULT_WORLDS       # iie's (and the agents') sampled worlds
    variant: str = "standard"          # "standard" or "paper"
    moon: bool = True
    target_score: int | None = None    # None: one hand
    seed: int = 0                      # the deal and the computer's randomness
    ascii: bool = False                # QS rather than Q♠
    run: str | None = None             # run folder of a trained agent (opponent "agent")
    pretrained: str | None = None      # which shipped agent (opponent "pretrained"); None: the first

    def __post_init__(self):
        if self.seat not in range(NUM_PLAYERS):
            raise ValueError(f"seat must be 0, 1, 2 or 3, got {self.seat!r}")
        check_opponent_settings(self.opponent, self.run, self.pretrained, OPPONENTS)
        if isinstance(self.worlds, bool) or not isinstance(self.worlds, int) or self.worlds < 1:
            raise ValueError(f"worlds must be an integer >= 1, got {self.worlds!r}")


@dataclasses.dataclass(frozen=True)
class Result:
    """How a session ended."""

    actions: tuple           # every move (passes and cards), in order
    scores: tuple            # the scores at the end (finished hands), seats 0..3
    points: tuple            # the current hand's points at the end
    over: bool               # the game (hand) reached its end
    ended_by: str            # "end", "quit", "eof" or "interrupt"
    exit_code: int           # 0; 130 after Ctrl-C


@functools.lru_cache(maxsize=None)
def _env(variant: str, moon: bool, target_score: int | None) -> Hearts:
    return Hearts(variant=variant, moon=moon, target_score=target_score)


def agent_opponent(settings: Settings, env: Hearts) -> Player:
    """The trained agent of the run folder ``settings.run`` for ``env``
    (:func:`jaxgames.hearts.agent.load_agent`, PIMC over ``settings.worlds`` worlds);
    OpponentUnavailable, with the loader's one line, when it cannot be used."""
    if not settings.run:
        raise OpponentUnavailable("--opponent agent needs the run folder of a trained agent: "
                                  "--run runs/hearts/<run>")
    try:
        return load_agent(settings.run, env=env, num_worlds=settings.worlds)
    except AgentError as e:
        raise OpponentUnavailable(str(e)) from None


def pretrained_opponent(settings: Settings, env: Hearts) -> Player:
    """The Hearts agent shipped with jaxgames (``settings.pretrained``, else the first) for
    ``env``, PIMC over ``settings.worlds`` worlds; OpponentUnavailable, with its one line, when
    it cannot be used (a damaged file)."""
    from jaxgames import pretrained

    try:
        shipped = pretrained.load("hearts", settings.pretrained)
    except pretrained.PretrainedError as e:
        raise OpponentUnavailable(str(e)) from None
    return shipped.playing(env, num_worlds=settings.worlds)


class Session(PlaySession):
    """One game between a person (typed lines) and three computer players, written to
    ``output``. ``state`` is the current position, ``actions`` the moves so far."""

    HELP = HELP

    def __init__(self, settings: Settings, output: TextIO, *, echo: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        env = _env(settings.variant, settings.moon, settings.target_score)
        # the agent first: a run folder that cannot be used stops before anything is said
        if settings.opponent == AGENT:
            self.opponent = agent_opponent(settings, env)   # all three seats
        elif settings.opponent == PRETRAINED:
            self.opponent = pretrained_opponent(settings, env)
        else:
            options = {"num_worlds": settings.worlds} if settings.opponent == "iie" else {}
            self.opponent = make_bot(env, settings.opponent, **options)   # all three seats
        super().__init__(settings, output, echo=echo, clock=clock)
        self.env = env
        self.human = settings.seat
        self._step = jitted(self.env.step)
        self._key = jax.random.key(settings.seed)
        self.state = self.env.init(jax.random.fold_in(self._key, 0))
        self.actions: list[int] = []

    # -- what the person sees -----------------------------------------------------------------

    def name(self, c: int) -> str:
        return card_name(c, ascii=self.settings.ascii)

    def cards(self, cs) -> str:
        return cards_text(cs, ascii=self.settings.ascii)

    def who(self, seat: int) -> str:
        return "you" if seat == self.human else f"seat {seat}"

    @property
    def passing(self) -> bool:
        s = self.state
        return int(s.pass_dir) != NO_PASS and int(s.num_passed) < NUM_PLAYERS * PASS_SIZE

    def legal(self) -> list[int]:
        if self.over:
            return []
        return np.flatnonzero(np.asarray(self.state.legal_action_mask)).tolist()

    def hand(self) -> list[int]:
        return np.flatnonzero(np.asarray(self.state.owner) == self.human).tolist()

    def table_text(self) -> str:
        """Your view: the hand's progress, the points and scores, the trick on the table, your
        cards and what you may play."""
        s = self.state
        points = [int(p) for p in np.asarray(s.points)]
        scores = [int(p) for p in np.asarray(s.scores)]
        pass_word = PASS_WORDS[int(s.pass_dir)]
        lines = []
        if self.passing:
            lines.append(f"Hand {int(s.hand_number) + 1}: passing {pass_word} "
                         f"(to seat {(self.human + int(s.pass_dir)) % NUM_PLAYERS}).")
        else:
            trick = int(s.num_played) // NUM_PLAYERS + 1
            broken = ""   # the paper variant leads anything at any time
            if self.env.standard:
                broken = ", hearts broken" if bool(s.hearts_broken) else ", hearts not broken"
            lines.append(f"Hand {int(s.hand_number) + 1}, trick {trick}{broken}.")
        lines.append("Points this hand: " + ", ".join(f"{self.who(p)} {points[p]}" for p in range(NUM_PLAYERS))
                     + (("; scores: " + ", ".join(f"{self.who(p)} {scores[p]}" for p in range(NUM_PLAYERS)))
                        if self.settings.target_score is not None else ""))
        if not self.passing:
            leader = int(s.leader)
            played = [(leader + j) % NUM_PLAYERS for j in range(int(s.num_played) % NUM_PLAYERS)]
            trick_cards = np.asarray(s.trick)
            on_table = ", ".join(f"{self.who(p)} {self.name(int(trick_cards[p]))}" for p in played)
            lines.append(f"On the table: {on_table or 'nothing yet'}.")
        lines.append(f"Your hand: {self.cards(self.hand())}")
        if not self.over and int(s.current_player) == self.human:
            verb = "pass" if self.passing else "play"
            lines.append(f"You may {verb}: " + " ".join(self.name(c) for c in self.legal()))
        return "\n".join(lines)

    def tricks_text(self) -> str:
        done = tricks(self.state)
        if not done:
            return "No card played yet this hand."
        lines = []
        for i, (leader, cs, taker) in enumerate(done):
            shown = ", ".join(f"{self.who((leader + j) % NUM_PLAYERS)} {self.name(c)}" for j, c in enumerate(cs))
            lines.append(f"Trick {i + 1}: {shown}" + (f" -> {self.who(taker)}" if taker >= 0 else ""))
        return "\n".join(lines)

    # -- reading a card -----------------------------------------------------------------------

    def why_not(self, c: int) -> str:
        """Why the person may not play (pass) card ``c`` now."""
        name = self.name(c)
        s = self.state
        if int(np.asarray(s.owner)[c]) != self.human:
            return f"You do not hold the {name}."
        legal = self.legal()
        hand = self.hand()
        if self.passing:
            return f"You cannot pass the {name} now."
        if int(s.num_played) % NUM_PLAYERS:
            leader_card = int(np.asarray(s.trick)[int(s.leader)])
            led = leader_card % 4
            if any(SUIT[x] == led for x in hand) and SUIT[c] != led:
                return f"You must follow {_SUIT_NAMES[led]}: play one of " + " ".join(self.name(x) for x in legal) + "."
            if int(s.num_played) < NUM_PLAYERS and POINTS[c] > 0:
                return (f"No hearts and not the {self.name(QUEEN_OF_SPADES)} on the first trick while you "
                        f"hold another card.")
        else:
            if int(s.num_played) == 0 and self.env.standard:
                return f"The first trick is led with the {self.name(0)}."
            if SUIT[c] == HEARTS and not bool(s.hearts_broken):
                return "Hearts are not broken yet: lead another suit."
        return f"The {name} cannot be played now: play one of " + " ".join(self.name(x) for x in legal) + "."

    def parse(self, text: str) -> tuple[str, Any]:
        """``("move", [card, ...])``, ``("show" | "tricks", None)`` or ``("bad", message)`` for
        a line typed in the current position."""
        words = text.replace(",", " ").split()
        word = words[0].lower()
        if len(words) == 1:
            if word in ("show", "table", "hand"):
                return "show", None
            if word == "tricks":
                return "tricks", None
        chosen = []
        for w in words:
            try:
                chosen.append(parse_card(w))
            except ValueError as err:
                return "bad", f"{err}. Type help for the commands."
        if len(chosen) > 1 and not self.passing:
            return "bad", "One card at a time (several cards only while passing)."
        if self.passing:
            left = PASS_SIZE - int(np.asarray(self.state.passed_by == self.human).sum())
            if len(chosen) > left:
                return "bad", f"You have {left} card{'s' if left != 1 else ''} left to pass."
            if len(set(chosen)) < len(chosen):
                return "bad", "The same card twice."
        legal = self.legal()
        for c in chosen:
            if c not in legal:
                return "bad", self.why_not(c)
        return "move", chosen

    # -- moves ----------------------------------------------------------------------------------

    def _play(self, action: int) -> None:
        before = self.state
        mover = int(before.current_player)
        was_passing = self.passing
        self.state = self._step(before, jnp.int32(action))
        self.actions.append(int(action))
        if was_passing:
            if mover == self.human:
                self._say(f"You pass the {self.name(action)}.")
            elif int(before.num_passed) % PASS_SIZE == PASS_SIZE - 1:
                self._say(f"Seat {mover} passes {PASS_SIZE} cards.")
            if not self.passing and not self.over:
                self._exchange_text(before)
            return
        self._say(f"{'You play' if mover == self.human else f'Seat {mover} plays'} the {self.name(action)}.")
        played = int(before.num_played) + 1
        if played % NUM_PLAYERS == 0:
            self._trick_done(before, action, played)

    def _exchange_text(self, before) -> None:
        s = self.state
        d = int(before.pass_dir)
        received = np.flatnonzero(np.asarray(s.passed_by) == (self.human - d) % NUM_PLAYERS).tolist()
        self._say(f"Cards exchanged: you received {' '.join(self.name(c) for c in received)} from "
                  f"seat {(self.human - d) % NUM_PLAYERS}.")

    def _trick_done(self, before, action: int, played: int) -> None:
        leader = int(before.leader)
        cards = np.asarray(before.trick).copy()
        cards[int(before.current_player)] = action
        led = int(cards[leader]) % 4
        taker = max(range(NUM_PLAYERS), key=lambda p: (int(cards[p]) % 4 == led, int(cards[p]) // 4))
        pts = int(sum(POINTS[int(c)] for c in cards))
        self._say(f"{self.who(taker).capitalize()} take{'' if taker == self.human else 's'} the trick"
                  + (f" (+{pts} point{'s' if pts != 1 else ''})." if pts else "."))
        if played == NUM_CARDS:
            self._hand_done(before, taker, pts)

    def _hand_done(self, before, taker: int, pts: int) -> None:
        points = np.asarray(before.points).astype(int)
        points[taker] += pts
        shooter = [p for p in range(NUM_PLAYERS) if points[p] == TOTAL_POINTS]
        if self.settings.moon and shooter:
            self._say(f"{self.who(shooter[0]).capitalize()} shot the moon: 0 for "
                      f"{'you' if shooter[0] == self.human else 'it'}, 26 for everyone else.")
            points = np.where(points == TOTAL_POINTS, 0, TOTAL_POINTS)
        scores = np.asarray(before.scores).astype(int) + points
        self._say("Hand over. Points: " + ", ".join(f"{self.who(p)} {points[p]}" for p in range(NUM_PLAYERS)) + ".")
        if self.settings.target_score is not None:
            self._say("Scores: " + ", ".join(f"{self.who(p)} {scores[p]}" for p in range(NUM_PLAYERS))
                      + f" (the game ends when a score reaches {self.settings.target_score}).")

    def computer_move(self) -> None:
        self._play(self.computer_action(jax.random.fold_in(self._key, len(self.actions) + 1)))

    def turn_starts(self) -> None:
        self._say()
        self._say(self.table_text())

    def prompt(self) -> str:
        if self.passing:
            return f"Pass a card ({int(np.asarray(self.state.passed_by == self.human).sum()) + 1}/{PASS_SIZE}) > "
        return "Your card > "

    def move(self, cards: list[int]) -> None:
        for c in cards:
            self._play(c)

    def command(self, kind: str, value: Any) -> None:
        """``show`` (the table again) and ``tricks`` (this hand's)."""
        if kind == "show":
            self._say(self.table_text())
        elif kind == "tricks":
            self._say(self.tricks_text())
        else:
            super().command(kind, value)

    # -- the game -----------------------------------------------------------------------------

    def start(self) -> None:
        st = self.settings
        length = "one hand" if st.target_score is None else f"a game to {st.target_score} points"
        opponent = {"iie": f"iie (Monte Carlo, {st.worlds} worlds)",
                    "pie": "pie (sees every card, your hand included)",
                    AGENT: self.opponent.name,
                    PRETRAINED: f"{self.opponent.name}, PIMC over {st.worlds} worlds"}.get(st.opponent, st.opponent)
        self._say(f"Hearts, {st.variant} variant, {length}, the moon {'on' if st.moon else 'off'}: "
                  f"you are seat {self.human}; the three others are {opponent}. Seed {st.seed}.")
        self._say("Lowest score wins. Type a card such as QS or 10h; help lists the commands.")
        self.prepare(self._step, self._key)

    def finish(self, ended_by: str) -> Result:
        s = self.state
        scores = tuple(int(x) for x in np.asarray(s.scores))
        points = tuple(int(x) for x in np.asarray(s.points))
        if not self.began:   # a Ctrl-C while the computer players were prepared: its one line
            pass
        elif self.over:
            final = scores
            best = min(final)
            winners = [p for p in range(NUM_PLAYERS) if final[p] == best]
            what = "points" if self.settings.target_score is None else "final scores"
            self._say()
            self._say(f"Game over. {what.capitalize()}: " + ", ".join(f"{self.who(p)} {final[p]}" for p in range(NUM_PLAYERS)) + ".")
            if self.human in winners:
                self._say("You win" + (" (a tie)" if len(winners) > 1 else "") + ": well played.")
            else:
                self._say(f"{' and '.join(self.who(p) for p in winners).capitalize()} win"
                          f"{'s' if len(winners) == 1 else ''}; you are {sorted(final).index(final[self.human]) + 1}"
                          f"{['st', 'nd', 'rd', 'th'][min(sorted(final).index(final[self.human]), 3)]}.")
        else:
            self._say(f"Game not finished ({len(self.actions)} moves played).")
        return Result(tuple(self.actions), scores, points, self.over, ended_by, exit_status(ended_by))


def play(input_lines: Iterable[str], output: TextIO = sys.stdout, *, echo: bool = False, **settings) -> Result:
    """Play one game: ``settings`` are :class:`Settings` fields (``seat=2``, ...)."""
    return Session(Settings(**settings), output, echo=echo).run(input_lines)


# -- command line ---------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Play Hearts in the terminal against three computer players.",
        epilog="In the game: a card such as QS (several while passing), show, tricks, help, quit "
               "(Ctrl-D also quits).")
    p.add_argument("--opponent", choices=OPPONENTS, default=PRETRAINED,
                   help="the computer players: pretrained (the learned player shipped with jaxgames; the "
                        "default), iie (Monte Carlo + max^n), pie (the same search on the real cards: it sees "
                        "your hand), rule (rule-based), random; or agent (the learned player of a python -m "
                        "train.hearts run; needs --run)")
    add_pretrained_flag(p)
    p.add_argument("--run", metavar="RUN",
                   help="with --opponent agent: the run folder, runs/hearts/<run> (its newest "
                        "checkpoints/ step is loaded)")
    p.add_argument("--worlds", type=int, default=None, metavar="N",
                   help=f"iie's or the agents' sampled deals per move (default {DEFAULT_WORLDS}, as the source)")
    p.add_argument("--seat", type=int, default=0, metavar="S",
                   help="your seat, 0 to 3 (default 0; play goes 0, 1, 2, 3)")
    p.add_argument("--variant", choices=VARIANTS, default="standard",
                   help="standard (passing, 2♣ leads, hearts broken) or paper (the source's: no "
                        "passing, any lead)")
    p.add_argument("--no-moon", dest="moon", action="store_false", help="shooting the moon does not score")
    p.add_argument("--target-score", type=int, default=None, metavar="T",
                   help="play hands until a score reaches T (default: one hand)")
    p.add_argument("--seed", type=cli_args.seed, default=None,
                   help="seed of the deal and the computer's randomness (default: a random one, shown)")
    p.add_argument("--ascii", action="store_true", help="write cards as QS rather than Q♠")
    return p


def parse_args(argv: list[str] | None = None) -> Settings:
    """Settings from command-line flags; a bad flag exits 2 with one clear line (argparse)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.seat not in range(NUM_PLAYERS):
        parser.error(f"argument --seat: must be 0, 1, 2 or 3, got {args.seat}")
    check_agent_flags(parser, args, "hearts")
    if args.worlds is not None:
        if args.opponent not in SAMPLING:
            parser.error("argument --worlds: only with --opponent iie or agent (or pretrained, the default)")
        if args.worlds < 1:
            parser.error(f"argument --worlds: must be at least 1, got {args.worlds}")
    if args.target_score is not None and not 1 <= args.target_score <= MAX_TARGET_SCORE:
        parser.error(f"argument --target-score: must be from 1 to {MAX_TARGET_SCORE}, got {args.target_score}")
    seed = seed_or_random(args.seed)
    return Settings(seat=args.seat, opponent=args.opponent,
                    worlds=DEFAULT_WORLDS if args.worlds is None else args.worlds, variant=args.variant,
                    moon=args.moon, target_score=args.target_score, seed=seed, ascii=args.ascii, run=args.run,
                    pretrained=args.pretrained)


def main(argv: list[str] | None = None) -> int:
    return run_cli(PROG, Session, parse_args(argv))


if __name__ == "__main__":
    exit_process(main())
