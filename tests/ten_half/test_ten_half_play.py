"""Terminal play of ten-and-a-half (jaxgames.ten_half.play), driven by typed lines: games played
to the end with every card shown (the session checks the cards it shows against the game's own
hand at every draw), the dealer's draws matching the reward, hints that are the agent's move,
bad input, the flags, and the command line once from a shell.

Nothing depends on which cards come: the lines are all-hit or all-stick, and what is checked
holds for any deal. The session's jitted deal and step are compiled once for the module.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.ten_half import dp
from jaxgames.ten_half import play as tp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = re.compile(r"You (win|lose) (\d)\. After")
HINT = re.compile(r"Hint \(.*\): (hit|stick)\. Expected reward of stick ([-+]\d\.\d+), of hit ([-+]\d\.\d+)")


def session(**settings):
    out = io.StringIO()
    return tp.Session(tp.Settings(**{"seed": 0, **settings}), out, echo=True), out


def rewards(text: str) -> list[int]:
    return [(1 if verb == "win" else -1) * int(n) for verb, n in RESULT.findall(text)]


def test_sticking_games_show_the_dealers_draws_and_their_result():
    game, out = session(games=12, agent="optimal")
    result = game.run(itertools.repeat("stick"))
    text = out.getvalue()
    assert result.ended_by == "games" and result.exit_code == 0 and result.games == 12
    assert list(result.results) == rewards(text)
    # a stick wins only when the dealer busts, and then exactly 1
    draws = re.findall(r"The dealer draws [^:]+: (.*)\.\nYou (win|lose) (\d)", text)
    assert len(draws) == 12
    for what, verb, n in draws:
        assert ("busts" in what) == (verb == "win")
        assert verb == "lose" or n == "1"
    assert "Session over: 12 games" in text


def test_hitting_games_end_by_a_bust_or_a_special_hand():
    game, out = session(games=12, seed=3)
    result = game.run(itertools.repeat("hit"))
    text = out.getvalue()
    assert result.games == 12 and list(result.results) == rewards(text)
    ends = re.findall(r"cards?\): (bust|ten-and-a-half|five small|heavenly king|five faces)\.\nYou (win|lose)", text)
    assert len(ends) == 12
    assert all((kind == "bust") == (verb == "lose") for kind, verb in ends)


def test_a_hint_is_the_agents_move_with_its_values():
    game, out = session(games=1, seed=5)
    result = game.run(["hint", "stick"])
    assert result.hints == 1
    match = HINT.search(out.getvalue())
    assert match, out.getvalue()
    # the hand dealt, from the text: the agent's table says the same move and values
    first = re.search(r"you are dealt (\w+)", out.getvalue()).group(1)
    rank = tp.RANK_NAMES.index(first)
    s, f = (1, 1) if rank >= tp.JACK else (2 * (rank + 1), 0)
    params = pretrained.load("ten_half").params
    assert match.group(1) == tp.ACTION_NAMES[int(params["policy"][s, 1, f])]
    q = np.asarray(params["q"][s, 1, f])
    assert float(match.group(2)) == pytest.approx(q[0], abs=1e-4)
    assert float(match.group(3)) == pytest.approx(q[1], abs=1e-4)
    assert "its learned estimates" in out.getvalue()


def test_the_optimums_hints_are_exact_values():
    game, out = session(games=1, seed=5, agent="optimal")
    game.run(["tip", "stick"])
    match = HINT.search(out.getvalue())
    first = re.search(r"you are dealt (\w+)", out.getvalue()).group(1)
    rank = tp.RANK_NAMES.index(first)
    s, f = (1, 1) if rank >= tp.JACK else (2 * (rank + 1), 0)
    assert match.group(1) == tp.ACTION_NAMES[int(dp.optimal_policy()[s, 1, f])]
    assert float(match.group(2)) == pytest.approx(dp.optimal_q()[s, 1, f, 0], abs=1e-4)
    assert "(exact values)" in out.getvalue()


def test_bad_input_gets_a_message_and_the_game_goes_on():
    game, out = session(games=1)
    result = game.run(["raise", "", "help", "stick"])
    text = out.getvalue()
    assert "'raise' is not a move: type hit or stick" in text and "Commands: hit" in text
    assert result.games == 1


def test_end_of_input_and_quit_stop_the_session():
    game, out = session()
    assert game.run(["quit"]).ended_by == "quit"
    game, out = session()
    result = game.run(["stick"])
    assert result.ended_by == "eof" and result.games == 1 and "End of input" in out.getvalue()


def test_parse_action_words():
    assert tp.parse_action(" HIT ") == tp.HIT and tp.parse_action("+") == tp.HIT and tp.parse_action("1") == tp.HIT
    assert tp.parse_action("s") == tp.STICK and tp.parse_action("stand") == tp.STICK
    assert tp.parse_action("h") is None   # help's


def test_cli_typed_on_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("hint\nstick\nstick\n"))
    assert tp.main(["--games", "2", "--seed", "9"]) == 0
    text = capsys.readouterr().out
    assert "hints from mc-on-policy (shipped ten_half agent)" in text and "Hint (" in text
    assert "Session over: 2 games" in text


@pytest.mark.parametrize("argv, message", [
    (["--games", "0"], "argument --games: must be at least 1, got 0"),
    (["--run", "runs/ten_half/x"], "argument --run: only with --agent agent"),
    (["--method", "off-policy"], "argument --method: only with --agent agent"),
    (["--agent", "optimal", "--pretrained", "optimal"], "argument --pretrained: only with --agent pretrained"),
    (["--agent", "agent"], "--agent agent needs the run folder"),
    (["--agent", "best"], "argument --agent: invalid choice"),
    (["--seed", "-1"], "argument --seed: must be in 0..4294967295"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(tp.main, argv, message)


def test_cli_unusable_agents_are_one_line(tmp_path, capsys):
    assert tp.main(["--agent", "agent", "--run", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such run folder" in err[0]
    assert tp.main(["--pretrained", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no shipped ten_half agent named 'nope'" in err[0]


def test_cli_from_a_shell(tmp_path):
    """The command as a person starts it, input piped in: the shipped agent's hint, a game."""
    done = subprocess.run([sys.executable, "-m", "jaxgames.ten_half.play", "--games", "1", "--seed", "1"],
                          input="hint\nstick\n", capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr
    assert "Hint (mc-on-policy" in done.stdout and "Session over: 1 game," in done.stdout
