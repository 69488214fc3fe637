"""The loop every terminal game shares (jaxgames.terminal.PlaySession), on a toy game.

The toy is a race to a total: the person and the computer take turns adding 1 or 2, and who
reaches the target ends the game. Its computer always adds 1 (a one-line policy, compiled in a
moment), so the loop itself is what is tested: the turn order, quit, help, empty
lines, a bad line's message, a game's own command, the end of input, Ctrl-C, and the command
line's one-line exit 2. The games' own play tests drive the same loop through their sessions.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import signal
import subprocess
import sys
import time
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxgames.player import Player
import pytest

from jaxgames.terminal import (OpponentUnavailable, PlaySession, check_opponent_settings, exit_status, format_seconds,
                               run_cli)


class Race(NamedTuple):
    """A position: the total so far and whose turn it is (0: the person, 1: the computer)."""

    total: int = 0
    current_player: int = 0
    target: int = 5

    @property
    def terminated(self) -> bool:
        return self.total >= self.target

    @property
    def legal_action_mask(self) -> np.ndarray:
        return np.array([False, True, True])     # add 1 or add 2


class RaceSession(PlaySession):
    HELP = "Type 1 or 2."
    ENDED = "reached"

    def __init__(self, settings, output, *, echo=False):
        super().__init__(settings, output, echo=echo)
        self.state = Race(target=settings)
        self.human = 0
        self.opponent = Player("adds one", lambda params, state, key: 1)

    def start(self):
        self._say("Race to the target.")

    def turn_starts(self):
        self._say(f"Total {self.state.total}.")

    def prompt(self):
        return "> "

    def parse(self, line):
        word = line.strip()
        if word in ("total", "hint"):
            return word, None
        if word not in ("1", "2"):
            return "bad", f"{word!r} is not 1 or 2."
        return "move", int(word)

    def move(self, n):
        self.state = self.state._replace(total=self.state.total + n, current_player=1)

    def command(self, kind, value):
        if kind != "total":
            return super().command(kind, value)
        self._say(f"The total is {self.state.total}.")

    def hint(self):
        self._say("Hint: add 2.")

    def computer_move(self):
        n = self.computer_action(None)
        self._say(f"Computer adds {n}.")
        self.state = self.state._replace(total=self.state.total + n, current_player=0)

    def finish(self, ended_by):
        self._say(f"Ended: {ended_by}.")
        return dataclasses.make_dataclass("Result", ["ended_by", "exit_code"])(ended_by, exit_status(ended_by))


def race(lines, target=5):
    out = io.StringIO()
    result = RaceSession(target, out, echo=True).run(lines)
    return result.ended_by, out.getvalue()


def test_turns_to_the_end():
    ended_by, text = race(["2", "2"])        # 2, the computer 3, 5
    assert ended_by == "reached"
    assert text.count("Computer adds 1.") == 1 and text.endswith("Ended: reached.\n")
    assert "Race to the target." in text.splitlines()[0]


def test_help_empty_bad_and_a_command_keep_the_turn():
    ended_by, text = race(["help", "   ", "three", "total", "2", "quit"])
    assert ended_by == "quit"
    assert "Type 1 or 2." in text and "'three' is not 1 or 2." in text and "The total is 0." in text
    assert text.count("Total 0.") == 1                 # the turn began once, before the move
    assert "You quit: the game stops here." in text


class RacesSession(RaceSession):
    """Races one after another (the shape of hold'em's hands and ten-and-a-half's games)."""

    def __init__(self, settings, output, *, echo=False):
        target, self.limit = settings
        super().__init__(target, output, echo=echo)
        self.deals = []

    def _new_race(self):
        self.state = Race(target=self.state.target)
        self._say(f"Race {len(self.deals) + 1}.")

    def _race_over(self):
        self.deals.append(self.state.total)

    def play(self, lines):
        return self.play_deals(lines, self.limit, self._new_race, self._race_over) or "races"


def test_deals_until_the_limit_or_the_person_stops():
    out = io.StringIO()
    session = RacesSession((3, 2), out, echo=True)
    assert session.run(["2", "2"]).ended_by == "races"      # each race: 2, the computer's 1
    assert session.deals == [3, 3] and "Race 3." not in out.getvalue()

    session = RacesSession((3, None), io.StringIO(), echo=True)
    assert session.run(["2", "2", "quit"]).ended_by == "quit"
    assert session.deals == [3, 3]                          # the third race stopped unfinished


def test_hints_are_counted_and_shown():
    out = io.StringIO()
    session = RaceSession(5, out, echo=True)
    session.run(["hint", "hint", "2", "2"])
    assert session.hints == 2 and out.getvalue().count("Hint: add 2.") == 2


def test_opponent_settings_are_checked():
    choices = ("rule", "agent", "pretrained")
    check_opponent_settings("agent", "runs/x", None, choices)
    check_opponent_settings("pretrained", None, "name", choices)
    with pytest.raises(ValueError, match="unknown opponent 'shark'; choose from rule, agent, pretrained"):
        check_opponent_settings("shark", None, None, choices)
    with pytest.raises(ValueError, match="a run folder is for the opponent 'agent', not 'rule'"):
        check_opponent_settings("rule", "runs/x", None, choices)
    with pytest.raises(ValueError, match="a shipped agent's name is for the opponent 'pretrained', not 'agent'"):
        check_opponent_settings("agent", "runs/x", "name", choices)


def test_end_of_input_and_interrupt():
    ended_by, text = race(["1"])
    assert ended_by == "eof" and "End of input: the game stops here." in text

    def interrupted():
        yield "1"
        raise KeyboardInterrupt

    ended_by, text = race(interrupted())
    assert ended_by == "interrupt" and "Interrupted: the game stops here." in text


def test_an_unusable_opponent_is_one_line_and_exit_2(monkeypatch, capsys):
    def refuse(settings, output, *, echo=False):
        raise OpponentUnavailable("no such opponent")

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert run_cli("race", refuse, None) == 2
    assert capsys.readouterr().err.splitlines() == ["race: error: no such opponent"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("2\n2\n"))
    assert run_cli("race", RaceSession, 5) == 0


def ctrl_c_in_garbage_collection():
    """Ctrl-C arrives while a garbage-collection callback runs (JAX's runs at allocations, a
    compile's included): Python drops the KeyboardInterrupt raised there and goes on."""
    def collecting(phase, info):
        if phase == "start":
            gc.callbacks.remove(collecting)
            signal.raise_signal(signal.SIGINT)
            for _ in range(100):     # Python runs the handler between these instructions
                pass

    gc.callbacks.append(collecting)
    gc.collect()


class CtrlCInGarbageCollection(RaceSession):
    def start(self):
        super().start()
        ctrl_c_in_garbage_collection()


class CtrlCDroppedWhileCompiling(RaceSession):
    """The dropped Ctrl-C comes while :meth:`PlaySession.prepare` compiles the computer's move."""

    def start(self):
        super().start()

        def step(state, action):
            ctrl_c_in_garbage_collection()
            return jnp.int32(0)

        self.prepare(step, None)
        self._say("The board.")


def test_a_ctrl_c_that_python_dropped_still_stops_before_play(monkeypatch, capsys):
    # Python's own SIGINT handler, as in a terminal (a pytest-xdist worker ignores SIGINT)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("2\n2\n"))
        hook = sys.unraisablehook
        assert run_cli("race", CtrlCInGarbageCollection, 5) == 130
        out, err = capsys.readouterr()
        assert "Interrupted before the game began" in out and "Total" not in out
        assert err == ""                                 # no traceback of the dropped one
        assert sys.unraisablehook is hook and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        monkeypatch.setattr(sys, "stdin", io.StringIO("2\n2\n"))
        assert run_cli("race", RaceSession, 5) == 0      # nothing left pending
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_dropped_while_compiling_stops_before_ready(monkeypatch, capsys):
    """Not "ready", then the board, then the Ctrl-C line: the Ctrl-C line right after
    "Preparing ..."."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("2\n2\n"))
        assert run_cli("race", CtrlCDroppedWhileCompiling, 5) == 130
        out, err = capsys.readouterr()
        after = out.split("Preparing the computer (compiling its move once) ... ")[1].strip().splitlines()
        assert after[0] == "Interrupted before the game began: nothing was played."
        assert "ready" not in out and "The board." not in out
        assert err == ""
    finally:
        signal.signal(signal.SIGINT, before)


class InstallsAHook(RaceSession):
    """A session whose opponent installs an unraisable hook while it loads, as
    jaxgames.checkpoints does to drop orbax's reports that arrive after a damaged read."""

    def __init__(self, *args, **kwargs):
        previous = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: previous(unraisable)
        InstallsAHook.installed = sys.unraisablehook
        super().__init__(*args, **kwargs)


def test_a_hook_installed_during_the_game_outlives_it(monkeypatch):
    """The reports a hook was installed for may come after the game ended (at exit): run_cli
    leaves it in place instead of restoring the hook it found."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    hook = sys.unraisablehook
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("2\n2\n"))
        assert run_cli("race", InstallsAHook, 5) == 0
        assert sys.unraisablehook is InstallsAHook.installed
    finally:
        sys.unraisablehook = hook
        signal.signal(signal.SIGINT, before)


def test_format_seconds():
    assert format_seconds(0.042) == "0.04 s"
    assert format_seconds(4.21) == "4.2 s"
    assert format_seconds(62.5) == "1:02.5"
    assert format_seconds(3723) == "1:02:03"


def test_exit_process_after_ctrl_c_ends_at_once_with_its_output(tmp_path):
    """Status 130 ends the process without Python's shutdown (which waits for a thread still
    running, as XLA's are after a Ctrl-C) and keeps what was written; any other status exits
    as ``sys.exit`` does."""
    script = ("import sys, threading, time; from jaxgames.terminal import exit_process; "
              "threading.Thread(target=time.sleep, args=(60,)).start(); "
              "print('said', end=''); sys.stderr.write('noted'); exit_process(int(sys.argv[1]))")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script, "130"], capture_output=True, text=True, timeout=50)
    assert (done.returncode, done.stdout, done.stderr) == (130, "said", "noted")
    assert time.monotonic() - start < 30
    quick = script.replace("args=(60,)", "args=(0,)")
    done = subprocess.run([sys.executable, "-c", quick, "2"], capture_output=True, text=True, timeout=50)
    assert (done.returncode, done.stdout, done.stderr) == (2, "said", "noted")
