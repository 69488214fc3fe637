"""The Hearts pipeline (python -m train.hearts): a tiny combined run end to end (its two stages,
the run folder, what the stages', the combined player's and the PIMC evaluations are handed and
what the run writes of them, exact --resume in the combined phase), CLI refusals in one line. The
values themselves: tests/hearts/test_learned.py.

Every evaluation is a stand-in (below) that notes what the run hands it: the test's cost is then
the training chunks' traces and compiles. The real evaluations are other tests': a single
predictor's run evaluated against PIE, the rule bot and random end to end in
tests/test_notebooks.py (the Hearts notebook trains the Q♠ predictor alone); the combined value's
trick search (``learned.perfect_policy``, what ``lib.evaluate_against`` plays) in a match in
tests/pretrained/test_hearts.py (the shipped combined agent against random); PIMC with the
learned search against IIE in tests/hearts/test_agent.py and test_bots.py. The real combined
evaluation here cost this test about 46 s of its 65 on a 2-core Zen 4 (29 s of it compiling)."""

import json

import jax
import numpy as np
import pytest

from jaxgames import arena
from jaxgames.hearts import evaluate as eval_lib
from one_line import assert_refused_in_one_line
from train import hearts as hearts_train
from train.games import hearts as lib
from train.hearts import PRESETS

TINY = ["--rounds", "2", "--updates-per-round", "1", "--games-per-update", "2", "--eval-deals", "2",
        "--final-eval-deals", "2", "--feature-sizes", "1", "--hearts-feature-sizes", "1", "--max-active", "4",
        "--stage-rounds", "1", "--top-qs", "30", "--top-hearts", "20", "--imperfect-deals", "0", "--no-progress"]


def read_rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def hand_made(deals, learned_points, player, experts):
    """``{expert: summary}`` of hand-made games over ``deals`` deals in every mixed seating, the
    learned seats taking ``learned_points`` a hand and the expert's 7."""
    seats = np.repeat(arena.mixed_seatings(4, 2), deals, axis=0)            # [14 x deals, 4]
    points = np.where(seats == 0, learned_points, 7.0)
    return {name: eval_lib.summarize(-points, seats, (player, name), "hand") for name in experts}


def pimc_results(calls):
    """A stand-in for the PIMC evaluation (``lib.evaluate_imperfect``): it notes what the run
    hands it and returns the results of hand-made games, the expert's seats taking 2 points a hand
    more than the learned player's. The evaluation itself (PIMC with the learned search against IIE)
    is tests/hearts/test_agent.py's and test_bots.py's; its compile and play, on 2 cores, cost
    this test 20-30 s."""
    def evaluate_imperfect(spec, weights, key, deals, worlds):
        calls.append((spec.predictor, np.asarray(weights), deals, worlds))
        return hand_made(deals, 5.0, "learned (PIMC)", lib.IMPERFECT)
    return evaluate_imperfect


def evaluations(eval_calls):
    """A stand-in for ``lib.evaluate_against``: it notes what the run hands it and returns
    hand-made games whose points are a figure of the weights and the key, so that an evaluation
    re-read or run again on --resume must give its figures again."""
    def evaluate_against(spec, weights, key, deals, experts=lib.EXPERTS):
        weights = np.asarray(weights)
        eval_calls.append((spec.predictor, weights.shape, deals, tuple(experts)))
        return hand_made(deals, stand_in_points(weights, key), "learned", experts)
    return evaluate_against


def stand_in_points(weights, key) -> float:
    """The stand-in learned seats' points a hand: 4 to 9, a figure of ``weights`` and ``key``."""
    figure = float(np.abs(np.asarray(weights)).sum() + np.asarray(jax.random.key_data(key)).sum() % 97)
    return 4.0 + figure % 5.0


def test_combined_run_writes_everything_and_resumes_exactly(tmp_path, monkeypatch):
    base = TINY + ["--runs-dir", str(tmp_path)]
    calls, eval_calls = [], []
    monkeypatch.setattr(lib, "evaluate_imperfect", pimc_results(calls))
    monkeypatch.setattr(lib, "evaluate_against", evaluations(eval_calls))
    whole = hearts_train.main(base + ["--run-name", "whole", "--imperfect-deals", "2", "--worlds", "3"])
    # the combined player's final weights, once, with the run's deals and worlds
    [(predictor, weights, deals, worlds)] = calls
    assert predictor == "combined" and weights.shape == (30 + 20,) and (deals, worlds) == (2, 3)
    # each stage: its round's evaluation and its own final one, against PIE alone over the
    # round's deals, with the weights of its 72 Q♠ or 100 hearts features; then the combined
    # player's 30 + 20 after each of its 2 rounds against PIE, and at the end against every expert
    assert eval_calls == ([("qs", (72,), 2, ("pie",))] * 2 + [("hearts", (100,), 2, ("pie",))] * 2
                          + [("combined", (50,), 2, ("pie",))] * 2 + [("combined", (50,), 2, tuple(lib.EXPERTS))])
    # killed after the combined phase's round 1: the resumed run ends as the unbroken one
    _, cfg = hearts_train.parse(PRESETS, base + ["--run-name", "killed"])
    assert hearts_train.train(cfg, stop_after_chunks=1) == {}
    resumed = hearts_train.main(base + ["--run-name", "killed", "--resume"])
    run = tmp_path / "hearts" / "whole"
    saved = json.loads((run / "summary.json").read_text())
    keys = ["points_per_hand_learned", "points_per_hand_expert"] + [
        f"points_per_hand_{who}_{name}" for who in ("learned_vs", "expert") for name in lib.EXPERTS]
    for k in keys:
        assert set(saved[k]) == {"mean", "ci95"}, k
    for name in lib.EXPERTS:  # the stand-in's final games: the experts' seats 7 a hand, the learned 4 to 9
        assert saved[f"points_per_hand_expert_{name}"] == {"mean": 7.0, "ci95": 0.0}
        learned_points = saved[f"points_per_hand_learned_vs_{name}"]["mean"]
        assert 4.0 <= learned_points < 9.0 and saved[f"difference_vs_{name}"]["mean"] == learned_points - 7.0
    assert saved["points_per_hand_learned"] == saved["points_per_hand_learned_vs_pie"]
    assert saved["games_won_rate"] == saved["games_won_rate_vs_pie"]
    for name in lib.IMPERFECT:   # the stand-in's games: the expert's seats 2 points a hand more
        assert saved[f"points_per_hand_pimc_vs_{name}"] == {"mean": 5.0, "ci95": 0.0}
        assert saved[f"points_per_hand_expert_imperfect_{name}"]["mean"] == 7.0
        assert saved[f"difference_imperfect_vs_{name}"]["mean"] == -2.0
    # the stages: 2 games each, then the combined phase's 2 x 2; the top 30 of the 72 Q♠ atoms
    # and the top 20 of the 100 hearts atoms
    assert saved["train_games"] == 2 + 2 + 2 * 2 and saved["features"] == 30 + 20
    assert saved["stage_qs"]["features"] == 72 and saved["stage_hearts"]["features"] == 100
    selection = np.load(run / "selection.npz", allow_pickle=False)
    assert len(selection["qs_selected"]) == 30 and len(selection["hearts_selected"]) == 20
    assert np.all(np.diff(selection["qs_selected"]) > 0) and selection["hearts_selected"].max() < 100
    for stage in lib.STAGES:
        stage_run = run / "stages" / "hearts" / stage
        assert json.loads((stage_run / "summary.json").read_text())["predictor"] == stage
        assert [r["round"] for r in read_rows(stage_run)] == [1]
    rows = read_rows(run)
    assert [r["round"] for r in rows] == [1, 2] and [r["games"] for r in rows] == [2, 4]
    assert all(r["ended"] == 1.0 for r in rows)
    report = (run / "report.md").read_text()
    assert "[Q♠] " in report and "[hearts] " in report and "## Imperfect information" in report
    assert "stage qs" in report and "stage hearts" in report
    assert (run / "plots" / "learning_curve.png").stat().st_size > 5_000
    assert resumed["imperfect_deals"] == 0 and not any("pimc" in k for k in resumed)
    _assert_same_but_times(resumed, whole, skip=lambda k: k == "imperfect_deals" or "imperfect" in k or "pimc" in k)
    assert read_rows(tmp_path / "hearts" / "killed") == rows
    # a finished run of the combined phase's first round carried on to two (--resume may raise
    # --rounds): it ends as the unbroken run, its stages untouched
    assert hearts_train.main(base + ["--rounds", "1", "--run-name", "short"])["train_games"] == 2 + 2 + 2
    carried = hearts_train.main(base + ["--run-name", "short", "--resume"])
    _assert_same_but_times(carried, resumed)
    assert read_rows(tmp_path / "hearts" / "short") == rows


def _assert_same_but_times(summary: dict, expected: dict, skip=lambda k: False) -> None:
    """Every figure of ``expected`` (but the keys ``skip`` names) equal in ``summary``, the
    times apart: the run's own and each stage's."""
    for k in expected:
        if k != "seconds" and not skip(k):
            assert (summary[k] == expected[k]) if "stage" not in k else (
                {a: b for a, b in summary[k].items() if a != "seconds"}
                == {a: b for a, b in expected[k].items() if a != "seconds"}), k


@pytest.mark.parametrize("argv, line", [
    (["--gamez-per-update", "5"], "unknown flag --gamez-per-update"),
    (["--games-per-update", "many"], "--games-per-update needs an integer, got 'many'"),
    (["--opponent", "iie"], "opponent must be one of self, pie"),
    (["--eval-deals", "1"], "eval_deals must be >= 2"),
    (["--max-active", "61"], "max_active must be from 1 to 24"),
    (["--feature-sizes", "5"], "feature_sizes must be sizes from 1 to 4"),
    (["--predictor", "spades"], "predictor must be one of qs, hearts, combined"),
    (["--imperfect-deals", "1"], "imperfect_deals must be 0 or >= 2"),
    (["--top-qs", "0"], "top_qs must be >= 1"),
])
def test_bad_flags_are_one_line(argv, line, tmp_path, capsys):
    assert_refused_in_one_line(hearts_train.main, argv, line, tmp_path, capsys, game="hearts",
                               start="python -m train.hearts: error: ")


def test_presets_are_valid():
    for name, c in PRESETS.items():
        c.validate()
    def games(c, rounds):
        return rounds * c.updates_per_round * c.games_per_update
    assert games(PRESETS["full"], PRESETS["full"].rounds) > games(PRESETS["quick"], PRESETS["quick"].rounds)
    # the source's volume: 200,000 games for each stage and for the combined player
    source = PRESETS["source"]
    assert games(source, source.stage_rounds) == games(source, source.rounds) == 200_000


def test_training_against_pie_plays_pie_in_the_three_other_seats():
    """``--opponent pie``: on recorded training games (``linear_td.play_and_record`` as the learner
    plays them) every move of seats 1-3 is PIE's and every move of seat 0 the learned search's, on
    a replay from the same keys; only seat 0's states are recorded, its outcome its Q♠ points. The
    two players differ at some of the other seats' moves, so the check tells them apart."""
    from jaxgames.hearts import bots, features as feat, learned
    from train.algos import linear_td

    spec = learned.ValueSpec("qs", feat.FeatureSpec(feat.NUM_ATOMS_QS, (1,), 4),
                             feat.FeatureSpec(feat.NUM_ATOMS_HEARTS, (1,), 4))
    env, setup = lib.env_of(), lib.play_setup(spec, "pie")
    weights = jax.random.uniform(jax.random.key(3), (spec.num_features,), minval=-2.0, maxval=4.0)
    keys = jax.random.split(jax.random.key(4), 3)
    rec = jax.jit(jax.vmap(lambda k: linear_td.play_and_record(env, weights, k, **setup)))(keys)
    assert rec.indices.shape[1] == 1 and bool(rec.ended.all())
    pie, mine = jax.jit(bots.make_bot(env, "pie").policy), jax.jit(learned.perfect_policy(spec, env))
    init, step = jax.jit(env.init), jax.jit(env.step)
    differ = 0
    for g, key in enumerate(keys):
        init_key, play_key = jax.random.split(key)
        state, step_keys = init(init_key), jax.random.split(play_key, lib.MAX_STEPS)
        for t in range(lib.MAX_STEPS):
            seat, action = int(state.current_player), int(rec.actions[g, t])
            by_pie, by_learned = int(pie(None, state, step_keys[t])), int(mine(weights, state, step_keys[t]))
            assert action == (by_learned if seat == 0 else by_pie), (g, t, seat)
            differ += seat != 0 and by_pie != by_learned
            state = step(state, action)
        assert bool(state.terminated)
        taken = float(np.asarray(state.taken_by[feat.QUEEN_OF_SPADES] == 0) * 13.0)
        assert float(rec.outcome[g, 0]) == taken
    assert differ > 0
