"""What every ``python -m jaxgames.<game>.play`` shares: the loop of a game between a person
(typed lines) and the computer, and the command line around it.

:meth:`PlaySession.run` is the loop, written once: the computer moves while it is not the
person's turn; on the person's turn a line is read, ``quit`` (``exit``, ``q``) stops, ``help``
(``h``, ``?``) lists the game's commands, an empty line prompts again, and any other line goes
to the game's :meth:`~PlaySession.parse`, which names a move, a command of the game's own
(``undo``, ``show`` ...), or says in one line what is wrong (and the prompt comes again). The
end of the input (Ctrl-D) and Ctrl-C stop too; :meth:`~PlaySession.finish` then reports and
returns the game's result. Each game's ``play.py`` keeps what is its own: drawing the board or
the table, reading a move, its options and commands.

A session reads lines from any iterator (tests feed lists, the command line feeds
:func:`stdin_lines`) and writes to any text stream; ``echo`` repeats piped input so a
transcript reads like a game. :func:`run_cli` is the body of every ``main``: the session on
standard input and output, and an opponent that cannot be used ends with one line and exit
status 2 (as a bad flag does, through argparse).

Ctrl-C stops at any moment with exit status 130 and no traceback. Before play begins (while
the computer is built or compiled: :attr:`PlaySession.began` is still False) it says so in one
line and nothing else: no report, no record of a game never played. During play it ends the
game as quitting does, with the game's report.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.player import jitted  # one jit per function in a process (re-exported)

__all__ = ["HELP_WORDS", "INTERRUPTED", "OpponentUnavailable", "PlaySession", "QUIT_WORDS",
           "check_agent_flags", "exit_process", "exit_status", "format_seconds", "interrupted_before", "jitted",
           "raise_if_interrupted", "run_cli", "seed_or_random", "stdin_lines"]

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "h", "?")
INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as a shell reports it)."""


class OpponentUnavailable(Exception):
    """The chosen opponent cannot be used (the command line exits 2 with the message)."""


def stdin_lines() -> Iterator[str]:
    """Lines typed on standard input, read one at a time (a game answers each before the next)."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def format_seconds(seconds: float) -> str:
    """``0.04 s`` below a second, ``4.2 s`` below a minute, ``1:02.5`` above, ``1:02:03``
    above an hour."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}:{s:04.1f}"
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{int(s):02d}"


def exit_status(ended_by: str) -> int:
    """The command line's exit status for how a session ended: 130 after Ctrl-C, else 0."""
    return INTERRUPTED if ended_by == "interrupt" else 0


def check_agent_flags(parser: Any, args: Any, game: str, *, flag: str = "opponent") -> None:
    """The checks every play command makes of its ``--<flag>`` (``pretrained``, ``agent`` or a
    bot), ``--pretrained NAME`` and ``--run RUN``: each flag only with the choice it is for, and
    ``agent`` needs a run folder (``runs/<game>/...``); ``parser.error`` (one line, exit 2)."""
    chosen = getattr(args, flag)
    if args.run is not None and chosen != "agent":
        parser.error(f"argument --run: only with --{flag} agent")
    if args.pretrained is not None and chosen != "pretrained":
        parser.error(f"argument --pretrained: only with --{flag} pretrained (the default)")
    if chosen == "agent" and not args.run:
        parser.error(f"argument --run: --{flag} agent needs the run folder of a trained agent, "
                     f"e.g. --run runs/{game}/quick-seed0")


def check_opponent_settings(opponent: str, run: Any, pretrained: Any, choices: Sequence[str]) -> None:
    """The checks a play session's settings get (``check_agent_flags``'s for a caller that is
    not a command line): ``opponent`` one of ``choices``, a run folder only for "agent", a shipped
    agent's name only for "pretrained"; ValueError."""
    if opponent not in choices:
        raise ValueError(f"unknown opponent {opponent!r}; choose from {', '.join(choices)}")
    if run is not None and opponent != "agent":
        raise ValueError(f"a run folder is for the opponent 'agent', not {opponent!r}")
    if pretrained is not None and opponent != "pretrained":
        raise ValueError(f"a shipped agent's name is for the opponent 'pretrained', not {opponent!r}")


def add_pretrained_flag(parser: Any, *, flag: str = "opponent", default: str = "the first",
                        names: str = "python -m jaxgames.pretrained lists them") -> None:
    """``--pretrained NAME``, the shipped agent a play command's ``--<flag> pretrained`` plays."""
    parser.add_argument("--pretrained", metavar="NAME", default=None,
                        help=f"with --{flag} pretrained: which shipped agent ({names}; default: {default})")


def exit_process(status: int) -> None:
    """End a play command's process with ``status`` (its ``main()``'s).

    After a Ctrl-C (status 130) the process ends at once, its output flushed, without Python's
    shutdown: a Ctrl-C that stops the wait for the computer's first move leaves XLA running that
    program on its own threads, and tearing the runtime down under it crashed the process
    (exit 139) in 3 of 4 tries, 3 s into an 11x11 UCT compile on a 2-core Zen 2. A play command
    holds nothing else to close by then: its record is written and closed as the game ends."""
    if status == INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # a closed pipe has nothing more to say
                pass
        os._exit(status)
    sys.exit(status)


def seed_or_random(seed: int | None) -> int:
    """The ``--seed`` given, else a random one (the session shows it, so a game can be replayed)."""
    return seed if seed is not None else secrets.randbelow(2**31)


def interrupted_before(stops: str = "game") -> str:
    """The one line of a Ctrl-C that comes before play begins."""
    return f"Interrupted before the {stops} began: nothing was played."


_interrupt_pending = False


def _on_ctrl_c(signum, frame):
    """Ctrl-C: KeyboardInterrupt, as Python's own handler raises it, and a note that it came.

    Python drops an exception raised while a garbage-collection callback runs, and JAX's runs
    at any allocation, in the middle of a compile too: that Ctrl-C would be lost and the game
    would go on. The note lets the session raise it again where it is safe
    (:func:`raise_if_interrupted`)."""
    global _interrupt_pending
    _interrupt_pending = True
    raise KeyboardInterrupt


def _interrupt_handled() -> None:
    global _interrupt_pending
    _interrupt_pending = False


def raise_if_interrupted() -> None:
    """Raise the KeyboardInterrupt of a Ctrl-C that Python dropped (see :func:`_on_ctrl_c`)."""
    if _interrupt_pending:
        _interrupt_handled()
        raise KeyboardInterrupt


def run_cli(prog: str, session: Callable[..., PlaySession], settings: Any) -> int:
    """Play ``session(settings, stdout, echo=...)`` on standard input; its exit status. Piped
    input is echoed; an :class:`OpponentUnavailable` ends with one line and status 2; Ctrl-C,
    whenever it comes (the computer being built, compiled, play, the report), with one line
    (or the game's report) and status 130."""
    own_handler = threading.current_thread() is threading.main_thread() \
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    unraisable_hook = sys.unraisablehook

    def quiet_dropped_ctrl_c(unraisable):
        # Python prints the KeyboardInterrupt it drops with a traceback; it is noted and will
        # stop the game in one line, so it is not shown
        if not (_interrupt_pending and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            unraisable_hook(unraisable)

    if own_handler:
        signal.signal(signal.SIGINT, _on_ctrl_c)
        sys.unraisablehook = quiet_dropped_ctrl_c
    try:
        return _run_cli(prog, session, settings)
    finally:
        if own_handler:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            # a hook installed on top of this one (jaxgames.checkpoints drops orbax's late
            # reports through it) stays: ours passes everything on once no Ctrl-C is pending
            if sys.unraisablehook is quiet_dropped_ctrl_c:
                sys.unraisablehook = unraisable_hook
        _interrupt_handled()


def _run_cli(prog: str, session: Callable[..., PlaySession], settings: Any) -> int:
    try:
        game = session(settings, sys.stdout, echo=not sys.stdin.isatty())
        raise_if_interrupted()
    except OpponentUnavailable as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _interrupt_handled()
        print(interrupted_before(getattr(session, "STOPS", "game")), flush=True)
        return INTERRUPTED
    try:
        return game.run(stdin_lines()).exit_code
    except KeyboardInterrupt:   # a second Ctrl-C, or one during the report
        print(flush=True)
        return INTERRUPTED


class PlaySession:
    """A game between a person and the computer in a terminal; :meth:`run` is its loop.

    A game subclasses it and sets, in ``__init__`` after this one's: ``state`` (the current
    position, or a property), ``human`` (the person's seat) and ``opponent`` (the computer, a
    :class:`jaxgames.player.Player`). It writes what is its own: :meth:`start`,
    :meth:`prompt`, :meth:`parse`, :meth:`move`, :meth:`computer_move` and :meth:`finish`, and
    where it has more to do :meth:`turn_starts`, :meth:`command` and :meth:`play`. Class
    attributes: ``HELP`` (the commands), ``STOPS`` (what "the ... stops here" names: "game" or
    "session") and ``ENDED`` (how ``ended_by`` reads when play reaches its end).
    """

    HELP = ""
    STOPS = "game"
    ENDED = "end"

    state: Any
    human: int
    opponent: Any
    hints: int = 0
    """Hints the person asked for (the "hint" command)."""
    began: bool = False
    """Play began (:meth:`start`, the computer's compile included, is done): :meth:`finish`
    reports only then; a Ctrl-C before it is one line."""

    def __init__(self, settings: Any, output: TextIO, *, echo: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.out = output
        self.echo = echo
        self.clock = clock

    # -- writing and reading ----------------------------------------------------------------------

    def _say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self, lines: Iterator[str], prompt: str) -> str | None:
        """The next line without its newline, or None at the end of input."""
        raise_if_interrupted()
        self.out.write(prompt)
        self.out.flush()
        try:
            line = next(lines)
        except StopIteration:
            self._say()
            return None
        line = line.rstrip("\r\n")
        if self.echo:
            self._say(line)
        return line

    # -- the position -----------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return bool(self.state.terminated)

    @property
    def your_turn(self) -> bool:
        """The person is to move."""
        return int(self.state.current_player) == self.human

    # -- the loop ---------------------------------------------------------------------------------

    def run(self, input_lines: Iterable[str]) -> Any:
        """Play until the end, ``quit``, the end of ``input_lines`` or Ctrl-C; then
        :meth:`finish` with how it ended (``ENDED``, "quit", "eof" or "interrupt")."""
        lines = iter(input_lines)
        try:
            self.start()
            raise_if_interrupted()    # one that came while the computer compiled
            self.began = True
            ended_by = self.play(lines)
        except KeyboardInterrupt:
            _interrupt_handled()
            ended_by = "interrupt"
            self._say()   # ends a partial line (the prompt, "Preparing ...")
            self._say(f"Interrupted: the {self.STOPS} stops here." if self.began
                      else interrupted_before(self.STOPS))
        return self.finish(ended_by)

    def play(self, lines: Iterator[str]) -> str:
        """Play the game: ``ENDED`` at its end, "quit" or "eof" if the person stopped. (A game
        of several deals overrides it: a deal after another, each by :meth:`play_moves`.)"""
        return self.play_moves(lines) or self.ENDED

    def play_deals(self, lines: Iterator[str], limit: int | None, new_deal: Callable[[], None],
                   deal_over: Callable[[], None]) -> str | None:
        """Deals one after another, each ``new_deal()``, its moves, ``deal_over()``, until
        ``limit`` of them (None: no end); None then, or "quit" or "eof" if the person stopped."""
        played = 0
        while limit is None or played < limit:
            new_deal()
            stopped = self.play_moves(lines)
            if stopped:
                return stopped
            deal_over()
            played += 1
        return None

    def play_moves(self, lines: Iterator[str]) -> str | None:
        """Moves, the computer's and the person's, until :attr:`over`; None then, or "quit" or
        "eof" if the person stopped."""
        while not self.over:
            if not self.your_turn:
                self.computer_move()
                continue
            self.turn_starts()
            stopped = self._persons_move(lines)
            if stopped:
                return stopped
        return None

    def _persons_move(self, lines: Iterator[str]) -> str | None:
        """Read lines until one is a move and play it; "quit" or "eof" if the person stopped."""
        while True:
            line = self._read(lines, self.prompt())
            if line is None:
                self._say(f"End of input: the {self.STOPS} stops here.")
                return "eof"
            word = line.strip().lower()
            if not word:
                continue
            if word in QUIT_WORDS:
                self._say(f"You quit: the {self.STOPS} stops here.")
                return "quit"
            if word in HELP_WORDS:
                self._say(self.HELP)
                continue
            kind, value = self.parse(line)
            if kind == "move":
                self.move(value)
                return None
            if kind == "bad":
                self._say(value)
            else:
                self.command(kind, value)

    # -- the computer -----------------------------------------------------------------------------

    def computer_action(self, key: jax.Array) -> int:
        """The opponent's action in ``state`` (its policy, jitted once, with its params);
        an illegal one is a bug of the player, not the person's: RuntimeError."""
        action = int(jitted(self.opponent.policy)(self.opponent.params, self.state, key))
        if not bool(np.asarray(self.state.legal_action_mask)[action]):
            raise RuntimeError(f"{self.opponent.name} chose the illegal action {action}")
        return action

    def prepare(self, step: Callable[..., Any], key: jax.Array) -> None:
        """Compile the opponent's move and ``step`` (jitted) before the first prompt
        (:meth:`compile_first`)."""
        def compile_both():
            jax.block_until_ready(jitted(self.opponent.policy)(self.opponent.params, self.state, key))
            jax.block_until_ready(step(self.state, jnp.int32(0)))

        self.compile_first("the computer (compiling its move once)", compile_both)

    def compile_first(self, what: str, work: Callable[[], Any]) -> None:
        """Run ``work`` (the compiles a game needs) before the first prompt, saying so:
        "Preparing <what> ... ready (1.4 s)." The first compile takes seconds, and the person
        sees why nothing happens."""
        start = self.clock()
        self.out.write(f"Preparing {what} ... ")
        self.out.flush()
        work()
        # a Ctrl-C that Python dropped during the compile stops here, before "ready" says
        # otherwise
        raise_if_interrupted()
        self._say(f"ready ({format_seconds(self.clock() - start)}).")

    # -- what a game writes -----------------------------------------------------------------------

    def start(self) -> None:
        """Before the first move: what the game is, who plays; the board."""
        raise NotImplementedError

    def turn_starts(self) -> None:
        """The person's turn begins (after any move): show what they decide on, start a clock."""

    def prompt(self) -> str:
        """The prompt for the person's next line."""
        raise NotImplementedError

    def parse(self, line: str) -> tuple[str, Any]:
        """A line the person typed (not empty, not quit or help): ``("move", move)``,
        ``("bad", message)`` or ``(command, value)`` for :meth:`command`."""
        raise NotImplementedError

    def move(self, move: Any) -> None:
        """Play the person's move (as :meth:`parse` gave it) and show it."""
        raise NotImplementedError

    def command(self, kind: str, value: Any) -> None:
        """Carry out a command of the game's own that :meth:`parse` named: "hint" counts in
        :attr:`hints` and shows :meth:`hint`."""
        if kind != "hint":
            raise ValueError(f"{type(self).__name__}.parse named the unknown command {kind!r}")
        self.hints += 1
        self.hint()

    def hint(self) -> None:
        """Show the computer's advice for the person's move (a game with a "hint" command)."""
        raise NotImplementedError

    def computer_move(self) -> None:
        """Play the computer's move (:meth:`computer_action`) and show it."""
        raise NotImplementedError

    def finish(self, ended_by: str) -> Any:
        """After the last move: report and return the game's result (with ``exit_code``).
        Before play :attr:`began` (a Ctrl-C while preparing) only the result: no report, no
        record."""
        raise NotImplementedError
