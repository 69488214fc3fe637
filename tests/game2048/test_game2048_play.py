"""Terminal play of 2048 (jaxgames.game2048.play), driven by typed lines: moves and the board,
a move that moves nothing refused, hints that are the search's best legal move (expectimax on
the empty-cell evaluation, or a run's exported n-tuple tables), the flags.

What is checked holds for any tiles: nothing depends on exact PRNG bits. The search compiles
once per setting for the module (depth 1 keeps it small).
"""

from __future__ import annotations

import io
import itertools
import re
import sys

import jax
import numpy as np
import pytest

from jaxgames.game2048 import board as B
from jaxgames.game2048 import play as gp
from jaxgames.game2048.ntuple import NTupleNetwork
from jaxgames.game2048.tables import export_tables

HINT = re.compile(r"Hint \((.*)\): (\w+)\. Values: (.*)\.")


def session(**settings):
    out = io.StringIO()
    return gp.Session(gp.Settings(**{"seed": 0, "depth": 1, **settings}), out, echo=True), out


def test_moves_until_the_input_ends_and_the_score_adds_up():
    game, out = session()
    result = game.run(itertools.islice(itertools.cycle(["left", "down", "right", "up"]), 40))
    text = out.getvalue()
    assert result.ended_by in ("eof", "end") and result.moves >= 10
    gained = sum(int(x.replace(",", "")) for x in re.findall(r"You: \w+ \(\+([\d,]+)\)", text))
    assert gained == result.score
    assert "Score " in text and f"largest tile {result.max_tile:,}" in text


def test_a_hint_is_the_searchs_best_legal_move():
    game, out = session(seed=3)
    game.run(["hint"])
    name, move, values = HINT.search(out.getvalue()).groups()
    assert "expectimax, depth 1" in name
    shown = {m: float(v.replace(",", "")) for m, v in (x.rsplit(" ", 1) for x in values.split(", "))}
    legal = [B.ACTION_NAMES[a] for a in np.flatnonzero(np.asarray(game.state.legal_action_mask))]
    assert sorted(shown) == sorted(legal) and max(shown.values()) == shown[move]
    # depth 1 on the empty-cell evaluation: a move's value is its merge reward + 16 x empty cells after it
    after, reward, ok = B.slide_all(game.state.board)
    for a in np.flatnonzero(np.asarray(ok)):
        want = float(reward[a]) + gp.EMPTY_CELL_VALUE * int((np.asarray(after[a]) == 0).sum())
        assert shown[B.ACTION_NAMES[a]] == pytest.approx(want, abs=0.05)


def test_a_move_that_moves_nothing_is_refused():
    game, out = session(seed=1)
    game.run(["up", "up", "up", "sideways"])
    text = out.getvalue()
    assert "'sideways' is not a move" in text
    assert "up moves nothing: try" in text   # the third up at the latest has nothing left to move


def test_hints_from_a_runs_tables(tmp_path):
    net = NTupleNetwork(patterns=((0, 1, 2, 3), (4, 5, 6, 7)), base=16)
    weights = np.zeros(len(net.patterns) * net.table_size, np.float32)
    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text('{"game": "game2048"}')   # a run's folder, as train.game2048 writes
    export_tables(run / "tables.npz", net, weights, "2048")
    game, out = session(run=str(run))
    game.run(["hint", "quit"])
    name, move, values = HINT.search(out.getvalue()).groups()
    assert name == "the n-tuple network of r, depth 1"
    # zero weights: a move's value is its merge reward alone
    _, reward, ok = B.slide_all(game.state.board)
    assert float(values.split(", ")[0].rsplit(" ", 1)[1].replace(",", "")) == float(reward[np.flatnonzero(np.asarray(ok))[0]])


def test_cli_typed_on_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("hint\nleft\nright\n"))
    assert gp.main(["--seed", "2", "--depth", "1"]) == 0
    text = capsys.readouterr().out
    assert "hints from expectimax, depth 1" in text and "Hint (" in text and "Score " in text


@pytest.mark.parametrize("argv, message", [
    (["--depth", "0"], "argument --depth: must be 1..3, got 0"),
    (["--variant", "1024"], "argument --variant: invalid choice"),
    (["--seed", "-2"], "argument --seed: must be in 0..4294967295"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(gp.main, argv, message)


def test_cli_another_game_or_no_run_is_named(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "th").mkdir()
    (tmp_path / "th" / "config.json").write_text('{"game": "ten_half", "seed": 0}')
    (tmp_path / "th" / "tables.npz").write_bytes(b"")   # a file of that name says nothing of the game
    for run, message in (("empty", "has no config.json: not the folder of a python -m train.game2048 run"),
                         ("th", "is the config of a ten_half run, not a 2048 run")):
        assert gp.main(["--run", str(tmp_path / run)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0] and "has not finished" not in err[0]


def test_cli_unusable_run_is_one_line(tmp_path, capsys):
    assert gp.main(["--run", str(tmp_path / "nope")]) == 2
    assert "no such run folder" in capsys.readouterr().err
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "config.json").write_text('{"game": "game2048"}')
    (tmp_path / "r" / "tables.npz").write_bytes(b"not a zip")
    assert gp.main(["--run", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a readable tables file" in err[0]
