"""The Hearts Q♠-predictor pipeline (python -m train.hearts): a tiny run end to end (the run
folder, exact --resume), the value the search sees, CLI refusals in one line."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.hearts import features as feat
from jaxgames.hearts.cards import QUEEN_OF_SPADES
from one_line import assert_refused_in_one_line
from train import hearts as hearts_train
from train.games import hearts as lib
from train.hearts import PRESETS, Config

TINY = ["--rounds", "2", "--updates-per-round", "1", "--games-per-update", "4", "--eval-deals", "2",
        "--final-eval-deals", "2", "--feature-sizes", "1", "2", "--max-active", "8", "--no-progress"]


def read_rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_run_writes_everything_and_resumes_exactly(tmp_path):
    base = TINY + ["--runs-dir", str(tmp_path)]
    whole = hearts_train.main(base + ["--run-name", "whole"])
    run = tmp_path / "hearts" / "whole"
    saved = json.loads((run / "summary.json").read_text())
    for k in ("points_per_hand_learned", "points_per_hand_expert", "points_per_hand_learned_vs_rule",
              "points_per_hand_expert_rule", "points_per_hand_learned_vs_pie"):
        assert set(saved[k]) == {"mean", "ci95"}, k
    assert saved["train_games"] == 2 * 1 * 4 and saved["features"] == 60 + 60 * 59 // 2
    for name in lib.EXPERTS:   # the moon is off: 0 to 26 points a hand
        assert 0.0 <= saved[f"points_per_hand_learned_vs_{name}"]["mean"] <= 26.0
        assert 0.0 <= saved[f"points_per_hand_expert_{name}"]["mean"] <= 26.0
    rows = read_rows(run)
    assert [r["round"] for r in rows] == [1, 2] and [r["games"] for r in rows] == [4, 8]
    assert all(r["ended"] == 1.0 for r in rows)
    report = (run / "report.md").read_text()
    assert "features of largest weight" in report and report.count(" AND ") + report.count("| 1") > 0
    assert len([l for l in report.splitlines() if l.startswith("| ") and "|" in l[2:]]) >= 20
    assert (run / "plots" / "learning_curve.png").stat().st_size > 5_000
    # killed after round 1: the resumed run ends as the unbroken one
    _, cfg = hearts_train.parse(PRESETS, base + ["--run-name", "killed"])
    assert hearts_train.train(cfg, stop_after_chunks=1) == {}
    resumed = hearts_train.main(base + ["--run-name", "killed", "--resume"])
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    assert read_rows(tmp_path / "hearts" / "killed") == rows


def test_the_search_value_and_the_recorded_states():
    cfg = Config(feature_sizes=(1, 2), max_active=8)
    env, spec, td = lib.env_of(cfg), lib.spec_of(cfg), lib.td_config(cfg)
    state = env.init(jax.random.key(3))
    value_fn = lib.make_value_fn(spec, td)
    weights = jnp.full(spec.num_features, 100.0)     # every prediction clipped to 13-
    v = np.asarray(value_fn(weights, state))
    np.testing.assert_allclose(v, -(13.0 - td.clip_margin), rtol=1e-6)
    assert bool(lib.record(state))                   # the first lead: between tricks, Q♠ out
    after = env.step(state, jnp.argmax(state.legal_action_mask))
    assert not bool(lib.record(after))               # a card on the table
    gone = state.replace(owner=state.owner.at[QUEEN_OF_SPADES].set(-1),
                         taken_by=state.taken_by.at[QUEEN_OF_SPADES].set(2))
    assert not bool(lib.record(gone))
    np.testing.assert_array_equal(np.asarray(value_fn(weights, gone)), 0.0)   # taken: nothing to come
    assert [float(lib.outcome(gone, s)) for s in range(4)] == [0.0, 0.0, 13.0, 0.0]
    idx, valid = lib.make_features(spec)(state, 0)
    assert idx.shape == (spec.num_slots,) and int(valid.sum()) <= spec.num_slots
    atoms = feat.atoms_qs(state, 0)
    want = feat.active_indices(atoms, include=spec)
    np.testing.assert_array_equal(np.asarray(idx), np.asarray(want[0]))


@pytest.mark.parametrize("argv, line", [
    (["--gamez-per-update", "5"], "unknown flag --gamez-per-update"),
    (["--games-per-update", "many"], "--games-per-update needs an integer, got 'many'"),
    (["--opponent", "iie"], "opponent must be one of self, pie"),
    (["--eval-deals", "1"], "eval_deals must be >= 2"),
    (["--max-active", "61"], "max_active must be from 1 to 24"),
    (["--feature-sizes", "5"], "feature_sizes must be sizes from 1 to 4"),
])
def test_bad_flags_are_one_line(argv, line, tmp_path, capsys):
    assert_refused_in_one_line(hearts_train.main, argv, line, tmp_path, capsys, game="hearts",
                               start="python -m train.hearts: error: ")


def test_presets_are_valid():
    for name, c in PRESETS.items():
        c.validate()
    assert PRESETS["full"].rounds * PRESETS["full"].updates_per_round > PRESETS["quick"].rounds * PRESETS["quick"].updates_per_round
