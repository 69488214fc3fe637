"""Terminal play against a bot (jaxgames.holdem.play), driven by typed lines; the shipped agent,
the default opponent; the flags of play against a trained agent (the agent itself:
tests/holdem/test_agent.py).

The person's lines never depend on the cards: "check" and "call" alternate (one of them is
always legal until the hand ends, the other gets a message), and the deterministic call and
all-in bots make the hand-made situations. The command line itself runs once in a subprocess
with its input piped in, against the equity bot, as a person would start it.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys

import pytest

from jaxgames.holdem import play as hp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = re.compile(r"You (win|lose|split) (?:([\d,]+) chips|the pot)")


def session(**settings):
    out = io.StringIO()
    return hp.Session(hp.Settings(**{"seed": 0, **settings}), out, echo=True), out


def check_or_call():
    """Endless input: check, call, check, call ... (the illegal one of each pair is refused)."""
    return itertools.cycle(["check", "call"])


def won(text: str) -> list[float]:
    """Each hand's result as announced."""
    sign = {"win": 1, "lose": -1, "split": 0}
    return [sign[verb] * float((chips or "0").replace(",", "")) for verb, chips in RESULT.findall(text)]


def test_hands_to_the_end_with_running_totals():
    s, out = session(opponent="call", hands=3)
    result = s.run(check_or_call())
    text = out.getvalue()
    assert result.ended_by == "hands" and result.exit_code == 0 and result.hands == 3
    # each hand's announced result is the game's reward, and the totals add up
    assert won(text) == list(result.results)
    assert f"After 3 hands: {result.total:+,.0f} chips" in text
    assert "Session over: 3 hands" in text
    # the button alternates, starting with the person
    assert re.findall(r"=== Hand (\d): you are (on the button|in the big blind)", text) == [
        ("1", "on the button"), ("2", "in the big blind"), ("3", "on the button")]
    # check/call against a calling station goes to the showdown: both hands are shown, described
    assert text.count("You: ") >= 3 and text.count("Computer: ") == 3
    assert "--- flop: " in text and "--- river: " in text
    # the table before each decision: your cards, the other's hidden, legal actions with chips
    assert "seat 1 (big blind): ?? ??" in text and "Your options: [0] fold  [2] call 50" in text


def test_bad_input_gets_a_message_and_the_hand_goes_on():
    s, out = session(opponent="call", hands=1)
    lines = iter(["hello", "9", "", "help", "check", "call",       # preflop, on the button: 50 to call
                  "fold",                                            # flop: nothing to call
                  "quit"])
    result = s.run(lines)
    text = out.getvalue()
    assert "'hello' is not an action" in text and "'9' is not an action" in text
    assert "Actions (type the number shown or a name)" in text
    assert "You cannot check: there are 50 chips to call." in text
    assert "You: call 50" in text
    assert "You cannot fold: there is nothing to call (check instead)." in text
    assert result.ended_by == "quit" and result.hands == 0 and "You quit" in text


def test_raises_that_are_not_legal_say_why():
    # 2-pot raises called by the calling station: to 500, a bet of 2,000 on the flop, 10,000 on
    # the turn; on the river 2 pots (50,000) are more than the 7,500 chips left
    s, out = session(opponent="call", hands=1)
    s.run(iter(["2pot", "2pot", "2pot", "2pot", "quit"]))
    text = out.getvalue()
    assert "You: raise 2 pot (to 500)" in text and "You: bet 2 pot (to 10,000)" in text
    assert "You cannot raise 2 pot: it needs 50,000 chips and you have 7,500 (all-in instead)." in text
    # facing an all-in no raise is left: hand 1 the person folds the button, hand 2 the bot shoves
    s, out = session(opponent="allin", hands=2)
    result = s.run(iter(["fold", "pot", "allin", "fold"]))
    text = out.getvalue()
    assert "Computer (allin): all-in (to 20,000)" in text
    assert text.count("You cannot raise: your opponent is all-in (call or fold).") == 2
    assert result.results == (-50.0, -100.0) and result.ended_by == "hands"


def test_end_of_input_stops_the_session():
    s, out = session(opponent="call")
    result = s.run(iter(["call"]))
    assert result.ended_by == "eof" and result.hands == 0
    assert "End of input" in out.getvalue() and "no hand finished" in out.getvalue()


def test_parse_action_names_and_numbers():
    assert hp.parse_action("3") == 3 and hp.parse_action(" FOLD ") == 0 and hp.parse_action("k") == 1
    assert hp.parse_action("pot") == 5 and hp.parse_action("allin") == 8 and hp.parse_action("1.5") == 6
    assert hp.parse_action("9") is None and hp.parse_action("raise") is None
    assert len(hp._BY_NAME) == sum(len(v) for v in hp.ALIASES.values())  # no name means two actions


def test_cli_against_the_equity_bot_typed_on_stdin(monkeypatch, capsys):
    """``python -m jaxgames.holdem.play --opponent equity`` as a person runs it, the lines
    typed on stdin (the jitted table is shared with the tests above: one compile)."""
    lines = "\n".join(["nonsense"] + ["check", "call"] * 40) + "\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code = hp.main(["--opponent", "equity", "--hands", "2", "--seed", "5"])
    text = capsys.readouterr().out
    assert code == 0
    assert "against the equity bot (seed 5)" in text
    assert "'nonsense' is not an action" in text and "Computer (equity): " in text
    assert "Session over: 2 hands" in text
    results = won(text)
    assert len(results) == 2
    total = sum(results)
    assert f"you {'won' if total >= 0 else 'lost'} {abs(total):,.0f} chips" in text


def test_cli_bad_flag_from_a_shell(tmp_path):
    """The command line in a subprocess, input piped in: a bad flag is one line and exit 2,
    before any hand is dealt."""
    done = subprocess.run([sys.executable, "-m", "jaxgames.holdem.play", "--opponent", "equity", "--stack", "100"],
                          input="call\n", capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "python -m jaxgames.holdem.play: error: holdem stack must be above the big blind (100) and at most "
        "100,000,000, got 100")
    assert done.stdout == ""


@pytest.mark.parametrize("argv, message", [
    (["--seed", "4294967296"], "--seed: must be in 0..4294967295"),
    (["--seed", "-1"], "--seed: must be in 0..4294967295"),
    (["--opponent", "shark"], "--opponent: invalid choice"),
    (["--hands", "0"], "--hands: must be at least 1"),
    (["--hands", "x"], "--hands: invalid int value"),
    (["--stack", "50"], "holdem stack must be above the big blind"),
    (["--small-blind", "200"], "must not exceed big_blind"),
    (["--opponent", "agent"], "--run: --opponent agent needs the run folder of a trained agent, "
                              "e.g. --run runs/holdem/quick-seed0"),
    (["--opponent", "call", "--run", "runs/holdem/x"], "--run: only with --opponent agent"),
    (["--checkpoint", "runs/holdem/x"], "--run: only with --opponent agent"),
    (["--opponent", "call", "--pretrained", "alphaholdem-small"],
     "--pretrained: only with --opponent pretrained (the default)"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(hp.main, argv, message)


def test_a_run_folder_is_for_the_agent_only():
    with pytest.raises(ValueError, match="a run folder is for the opponent 'agent', not 'call'"):
        session(opponent="call", run="runs/holdem/x")
    with pytest.raises(ValueError, match="unknown opponent 'shark'; choose from random, call, allin, fold, "
                                         "equity, agent"):
        session(opponent="shark")


def test_cli_agent_missing_run_from_a_shell(tmp_path):
    """(The agent itself is played in tests/holdem/test_agent.py, against a real tiny run.)"""
    done = subprocess.run([sys.executable, "-m", "jaxgames.holdem.play", "--opponent", "agent",
                           "--run", "runs/holdem/nothing"],
                          capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "python -m jaxgames.holdem.play: error: runs/holdem/nothing: no such run folder (give the folder "
        "of a python -m train.holdem run, e.g. runs/holdem/quick-seed0)"]
    assert done.stdout == "" and not list(tmp_path.iterdir())


def test_the_default_opponent_is_the_shipped_agent():
    """No --opponent: the agent shipped in jaxgames.pretrained sits across and plays."""
    assert hp.parse_args([]).opponent == hp.PRETRAINED == hp.Settings().opponent
    s, out = session(hands=2)
    result = s.run(check_or_call())
    text = out.getvalue()
    assert result.hands == 2 and len(won(text)) == 2
    assert "against alphaholdem-small (shipped holdem agent)" in text and "Computer (agent): " in text
    with pytest.raises(ValueError, match="a shipped agent's name is for the opponent 'pretrained', not 'call'"):
        session(opponent="call", pretrained="alphaholdem-small")


def test_cli_unknown_shipped_agent_is_one_line(capsys):
    assert hp.main(["--pretrained", "nobody", "--seed", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m jaxgames.holdem.play: error: no shipped holdem agent "
                                               "named 'nobody'") and "alphaholdem-small" in err[0]
