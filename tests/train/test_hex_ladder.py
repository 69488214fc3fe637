"""The rising UCT ladder of the Hex pipeline (issue 65): the rule on hand-built win counts, its
flags, the anchor's rung in the learner, and a tiny 3x3 run whose round evaluation is rigged so
the rung moves at known rounds, killed and resumed on the same rung."""

import dataclasses
import json
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import pytest

from one_line import assert_refused_in_one_line
from train import hex as hex_train
from train.algos import alphazero as az
from train.games import hex as lib
from train.games.hex import build, climb
from train.hex import PRESETS, Config

LADDER = (4, 6, 8)
TINY = ["--board-size", "3", "--phase1", "uct", "--rounds", "2", "--updates-per-round", "1", "--games-per-update", "4",
        "--simulations", "4", "--eval-simulations", "4", "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64",
        "--eval-games", "4", "--final-eval-games", "0", "--elo-games", "0", "--sgf-games", "0",
        "--phase1-simulations", "8", "--anchor-fraction", "1", "--uct-ladder", *map(str, LADDER), "--no-progress"]


def read_rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


# -- the rule --------------------------------------------------------------------------------


@pytest.mark.parametrize("rung, wins, games, rungs, threshold, want", [
    (0, 15, 20, 4, 0.5, 1),    # 75%: the interval's lower end, 53%, clears 50%
    (0, 14, 20, 4, 0.5, 0),    # 70%, above 50%, but its interval reaches down to 48%
    (1, 4, 4, 4, 0.5, 2),      # 4 of 4: lower end 51%
    (1, 3, 4, 4, 0.5, 1),      # 3 of 4: 75%, lower end 30%
    (3, 20, 20, 4, 0.5, 3),    # the top rung: stays
    (2, 0, 20, 4, 0.5, 2),     # lost every game: never down
    (0, 20, 20, 1, 0.5, 0),    # a one-rung ladder never moves
    (0, 18, 20, 4, 0.6, 1),    # 90%: lower end 70% clears a 60% threshold
    (0, 15, 20, 4, 0.6, 0),    # ... 75% (lower end 53%) does not
    (0, 0, 0, 4, 0.5, 0),      # no games: no evidence
])
def test_the_ladder_climbs_one_rung_when_the_intervals_lower_end_clears_the_threshold(
        rung, wins, games, rungs, threshold, want):
    assert climb(rung, wins, games, rungs=rungs, threshold=threshold) == want


def test_the_ladder_only_ever_climbs_one_rung_at_a_time():
    rung, path = 0, []
    for wins in (20, 20, 0, 20, 20, 20, 0, 10):     # of 20 games a round, on a four-rung ladder
        rung = climb(rung, wins, 20, rungs=4, threshold=0.5)
        path.append(rung)
    assert path == [1, 2, 2, 3, 3, 3, 3, 3]


# -- flags -----------------------------------------------------------------------------------


def test_the_ladder_is_off_by_default_and_a_flag():
    for name in ("quick", "full"):   # the 9x9 preset climbs one (tests/train/test_hex_extend.py)
        assert hex_train.parse(PRESETS, ["--preset", name])[1].uct_ladder == ()
    assert Config().uct_ladder == ()
    _, cfg = hex_train.parse(PRESETS, ["--preset", "full", "--uct-ladder", "1000", "2000", "5000", "10000",
                                       "--ladder-threshold", "0.6"])
    assert (cfg.uct_ladder, cfg.ladder_threshold) == ((1000, 2000, 5000, 10000), 0.6)
    assert Config().ladder_threshold == 0.5
    assert lib.rung_simulations(cfg, 2) == 5000
    assert lib.rung_simulations(PRESETS["full"], 0) == 1000   # off: uct_simulations


@pytest.mark.parametrize("argv, message", [
    (["--uct-ladder", "2000", "1000"], "uct_ladder must be ascending simulation counts >= 1, got 2000 1000"),
    (["--uct-ladder", "1000", "1000"], "uct_ladder must be ascending"),
    (["--uct-ladder", "0", "1000"], "uct_ladder must be ascending simulation counts >= 1"),
    (["--uct-ladder", "-5"], "uct_ladder must be ascending"),
    (["--ladder-threshold", "1"], "ladder_threshold must be in (0, 1), got 1.0"),
    (["--ladder-threshold", "0"], "ladder_threshold must be in (0, 1)"),
    (["--ladder-threshold", "-0.5"], "ladder_threshold must be in (0, 1)"),
])
def test_bad_ladders_are_refused_in_one_line(argv, message, tmp_path, capsys):
    assert_refused_in_one_line(hex_train.main, argv, message, tmp_path, capsys, game="hex",
                               start="python -m train.hex: error: ")


def test_the_memory_bound_counts_the_ladders_top_rung():
    _, low = hex_train.parse(PRESETS, ["--preset", "full", "--uct-ladder", "1000"])
    _, high = hex_train.parse(PRESETS, ["--preset", "full", "--uct-ladder", "1000", "10000"])
    (_, p_low), (_, p_high) = lib.memory(low), lib.memory(high)
    key = "the UCT anchor's searches (games_per_update, anchor_simulations)"
    assert p_high[key] > 8 * p_low[key]


# -- the learner's anchor on the rung --------------------------------------------------------


def test_the_anchor_plays_the_carrys_rung():
    # stand-in rungs, each playing its own number
    ladder = tuple((lambda states, keys, i=i: jnp.full(keys.shape[0], i, jnp.int32)) for i in range(3))
    parts = SimpleNamespace(ladder=ladder, anchor=None)
    keys = jax.random.split(jax.random.key(0), 5)
    pick = jax.jit(lambda rung: az.anchor_moves(parts, rung, None, keys))
    assert [pick(jnp.int32(r)).tolist() for r in range(3)] == [[0] * 5, [1] * 5, [2] * 5]
    # no ladder: the one anchor, whatever the rung
    one = SimpleNamespace(ladder=(), anchor=lambda states, keys: jnp.full(keys.shape[0], 7, jnp.int32))
    assert az.anchor_moves(one, jnp.int32(0), None, keys).tolist() == [7] * 5


def test_the_carry_holds_a_rung_with_a_ladder_only():
    _, cfg = hex_train.parse(PRESETS, TINY)
    learner = build(cfg)[2]
    carry = jax.eval_shape(learner.init, jax.random.key(0))
    assert carry.rung.shape == () and carry.rung.dtype == jnp.int32
    assert len(learner.parts.ladder) == len(LADDER) and learner.parts.anchor is None
    off = build(dataclasses.replace(cfg, uct_ladder=()))[2]
    assert jax.eval_shape(off.init, jax.random.key(0)).rung is None and off.parts.anchor is not None
    with pytest.raises(ValueError, match="ladder must be ascending"):
        az.make(cfg.learner, *build(cfg)[:1], (lambda k: None, None), lambda apply: None, max_moves=9,
                pool_capacity=2, ladder=(8, 4))


# -- a run on the ladder, rigged -------------------------------------------------------------

BEATEN = {0, 2}   # the rounds whose evaluation is rigged to 4 wins of 4 (the others: 0 of 4)


@pytest.fixture
def rigged(monkeypatch):
    """The round evaluation as it is, its win rate then set by the round: the ladder's rule
    sees 4 of 4 (lower end 51%: climb) in the BEATEN rounds, 0 of 4 in the others."""
    real = lib.evaluate_round

    def evaluate(config, learner, versus, chunk):
        rnd = real(config, learner, versus, chunk)
        rate = 1.0 if rnd.row["round"] in BEATEN else 0.0
        return dataclasses.replace(rnd, row={**rnd.row, "win_rate_vs_uct": rate})

    monkeypatch.setattr(lib, "evaluate_round", evaluate)


# Three whole runs (one killed and resumed), each compiling a UCT search per rung: about three
# minutes on the 2-core CPU, so `make test-slow`; the rule itself is tested above in `make test`.
@pytest.mark.slow
def test_a_ladder_run_climbs_at_the_beaten_rounds_and_resumes_on_its_rung(tmp_path, rigged):
    base = TINY + ["--runs-dir", str(tmp_path)]
    whole = hex_train.main(base + ["--run-name", "whole"])
    run = tmp_path / "hex" / "whole"
    rows = read_rows(run)
    # round 0 (phase 1) beats rung 0, round 1 loses on rung 1, round 2 beats rung 1
    assert [(r["round"], r["uct_simulations"]) for r in rows] == [(0, 4), (1, 6), (2, 6)]
    assert whole["uct_ladder"] == list(LADDER) and whole["uct_rung"] == 2 and whole["uct_simulations"] == 8
    assert json.loads((run / "summary.json").read_text())["uct_rung"] == 2
    # best/ ranks a higher rung first: round 0's model (rung 0) is never the best, whatever its rate
    assert whole["best_model_round"] in (1, 2)
    report = (run / "report.md").read_text()
    assert "the run ends on 8 (rung 3 of 3)" in report and "| UCT simulations |" in report
    # the anchor played a share of the self-play updates (anchor_fraction 1: all of them)
    assert all(r["anchor_score"] is not None for r in rows if r["phase"] == 2)

    # killed after round 1 (standing on rung 1), resumed: the same rows and summary
    _, cfg = hex_train.parse(PRESETS, base + ["--run-name", "killed"])
    assert hex_train.train(cfg, stop_after_chunks=2) == {}
    assert [r["uct_simulations"] for r in read_rows(tmp_path / "hex" / "killed")] == [4, 6]
    resumed = hex_train.main(base + ["--run-name", "killed", "--resume"])
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    strip = lambda rs: [{k: v for k, v in r.items() if "second" not in k} for r in rs]  # noqa: E731
    assert strip(read_rows(tmp_path / "hex" / "killed")) == strip(rows)
