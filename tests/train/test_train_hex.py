"""The Hex pipeline end to end on a 3x3 board: phase 1 + a self-play round, the run folder,
exact --resume, CLI errors."""

import json

import jax
import numpy as np
import pytest

from jaxgames import arena
from jaxgames.hex import network as hex_network
from jaxgames.hex.sgf import from_sgf
from one_line import assert_refused_in_one_line
from train import hex as hex_train
from train.algos import alphazero as az
from train.games.hex import build, decay_rounds, num_models, score_against, write_plots
from train.hex import PRESETS, Config

TINY = ["--board-size", "3", "--phase1", "uct", "--rounds", "1", "--updates-per-round", "1", "--games-per-update", "4",
        "--simulations", "4", "--eval-simulations", "4", "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64",
        "--uct-simulations", "8", "--eval-games", "4", "--final-eval-games", "6", "--elo-games", "2", "--sgf-games", "2",
        "--phase1-simulations", "8", "--no-progress"]


def read_rows(run):
    return [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]


def test_run_writes_everything_and_resumes_exactly(tmp_path):
    base = TINY + ["--runs-dir", str(tmp_path)]
    whole = hex_train.main(base + ["--run-name", "whole"])
    run = tmp_path / "hex" / "whole"
    saved = json.loads((run / "summary.json").read_text())
    for k in ("board_size", "win_rate_vs_uct", "win_rate_vs_uct_ci95", "uct_simulations",
              "agent_simulations", "eval_games", "rounds", "self_play_games", "seconds", "final_elo"):
        assert k in saved, k
    assert saved["board_size"] == 3 and saved["rounds"] == 2 and saved["self_play_games"] == 4
    # the summary's win rate is the final evaluation's (6 games), the rounds' are over 4
    assert 0.0 <= saved["win_rate_vs_uct"] <= 1.0 and saved["eval_games"] == 6
    assert saved["round_eval_games"] == 4 and saved["win_rate_vs_uct"] * 6 == pytest.approx(round(saved["win_rate_vs_uct"] * 6))
    assert 0.5 * (saved["win_rate_as_black"] + saved["win_rate_as_white"]) == pytest.approx(saved["win_rate_vs_uct"])
    # win rates carry the Wilson interval of their games (asymmetric; _ci95 is half its width)
    low, high = arena.wilson(round(saved["win_rate_vs_uct"] * 6), 6)
    assert (saved["win_rate_vs_uct_low"], saved["win_rate_vs_uct_high"]) == pytest.approx((low, high))
    assert saved["win_rate_vs_uct_ci95"] == pytest.approx((high - low) / 2)
    best = arena.wilson(round(saved["best_model_win_rate_vs_uct"] * 6), 6)
    assert (saved["best_model_win_rate_vs_uct_low"], saved["best_model_win_rate_vs_uct_high"]) == pytest.approx(best)
    report = (run / "report.md").read_text()
    assert (f"**{saved['win_rate_vs_uct']:.0%}** (95% Wilson interval {low:.0%} to {high:.0%};" in report
            and f"(95% interval {best[0]:.0%} to {best[1]:.0%})" in report and "±" not in report)
    rows = read_rows(run)
    for r in rows:   # each round's evaluation: 4 games
        assert (r["win_rate_vs_uct_low"], r["win_rate_vs_uct_high"]) == pytest.approx(
            arena.wilson(round(r["win_rate_vs_uct"] * 4), 4))
        cell = f"{r['win_rate_vs_uct']:.0%} ({r['win_rate_vs_uct_low']:.0%}–{r['win_rate_vs_uct_high']:.0%})"
        assert f"| {cell} |" in report
    assert [(r["round"], r["phase"]) for r in rows] == [(0, 1), (1, 2)]
    # no UCT ladder: every round against --uct-simulations, and the summary has no ladder fields
    assert [r["uct_simulations"] for r in rows] == [8, 8] and saved["uct_simulations"] == 8
    assert "uct_ladder" not in saved and "uct_rung" not in saved and "UCT simulations" not in report
    assert all(r["misrouted"] == 0 for r in rows)
    # the best model (best/, the one load_agent takes) is the last round at the highest rate;
    # it gets the final evaluation too, over the same games as the last model when it is that one
    rates = [r["win_rate_vs_uct"] for r in rows]
    assert saved["best_model_round"] == max(r["round"] for r in rows if r["win_rate_vs_uct"] == max(rates))
    assert 0.0 <= saved["best_model_win_rate_vs_uct"] <= 1.0
    assert saved["best_model_win_rate_vs_uct"] * 6 == pytest.approx(round(saved["best_model_win_rate_vs_uct"] * 6))
    if saved["best_model_round"] == rows[-1]["round"]:
        assert saved["best_model_win_rate_vs_uct"] == saved["win_rate_vs_uct"]
    assert "best model (round" in (run / "report.md").read_text()
    assert [r["generation"] for r in rows] == [0, 1]
    for png in ("win_rate.png", "losses.png", "elo.png"):
        assert (run / "plots" / png).stat().st_size > 5_000
    assert "vs UCT" in (run / "report.md").read_text()
    sgfs = sorted((run / "sgf").glob("*.sgf"))
    assert len(sgfs) == 2
    record = from_sgf(sgfs[0].read_text())
    assert record.board_size == 3 and len(record.actions) >= 3

    _, cfg = hex_train.parse(hex_train.PRESETS, base + ["--run-name", "killed"])
    assert hex_train.train(cfg, stop_after_chunks=1) == {}  # "killed" after phase 1
    resumed = hex_train.main(base + ["--run-name", "killed", "--resume"])
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    strip = lambda rs: [{k: v for k, v in r.items() if "second" not in k} for r in rs]  # noqa: E731
    assert strip(read_rows(tmp_path / "hex" / "killed")) == strip(rows)


def test_win_rate_plot_draws_asymmetric_wilson_bars(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from matplotlib.axes import Axes
    drawn = {"errorbar": [], "axhline": [], "xlabel": []}
    errorbar, axhline, set_ = Axes.errorbar, Axes.axhline, Axes.set

    def spy_errorbar(self, x, y, yerr=None, **kw):
        drawn["errorbar"].append((np.asarray(yerr), kw.get("label")))
        return errorbar(self, x, y, yerr=yerr, **kw)

    def spy_axhline(self, y=0, *a, **kw):
        drawn["axhline"].append((y, kw.get("label")))
        return axhline(self, y, *a, **kw)

    def spy_set(self, **kw):
        if "xlabel" in kw:
            drawn["xlabel"].append(kw["xlabel"])
        return set_(self, **kw)

    monkeypatch.setattr(Axes, "errorbar", spy_errorbar)
    monkeypatch.setattr(Axes, "axhline", spy_axhline)
    monkeypatch.setattr(Axes, "set", spy_set)
    (low2, high2), (low0, high0) = arena.wilson(2, 2), arena.wilson(0, 2)
    rows = [{"round": 0, "win_rate_vs_uct": 1.0, "win_rate_vs_uct_low": low2, "win_rate_vs_uct_high": high2,
             "loss": 1.0, "value_loss": 0.5, "policy_loss": 0.5},
            {"round": 1, "win_rate_vs_uct": 0.0, "win_rate_vs_uct_low": low0, "win_rate_vs_uct_high": high0,
             "loss": 0.9, "value_loss": 0.4, "policy_loss": 0.5}]
    write_plots(SimpleNamespace(plots=tmp_path), rows, {-1: 0.0, 0: 10.0, 1: -20.0})
    (yerr, label), = drawn["errorbar"]
    # 2 of 2 games: a bar down to 34%, none up; 0 of 2: none down, up to 66% (not zero-width)
    np.testing.assert_allclose(yerr, [[1.0 - low2, 0.0], [0.0, high0]])
    assert "Wilson" in label
    assert (0.5, "even (50%)") in drawn["axhline"]
    assert drawn["xlabel"] == ["round"] * 3           # win rate, losses and Elo: one x-axis
    for png in ("win_rate.png", "losses.png", "elo.png"):
        assert (tmp_path / png).stat().st_size > 5_000


@pytest.mark.parametrize("argv, message", [
    (["--board-size", "2"], "board_size"),
    (["--phase1", "supervised"], "phase1"),
    (["--search", "alphabeta"], "search"),
    (["--eval-games", "5"], "eval_games"),
    (["--alpha", "1.5"], "alpha"),
    (["--games-per-update", "3"], "games_per_update"),
    (["--learning-rate", "nan"], "learning_rate"),
    (["--simulationz", "4"], "python -m train.hex: error: unknown flag --simulationz (did you mean --simulations?)\n"),
    (["--elo-opponents", "-1"], "elo_opponents"),
    (["--anchor-fraction", "1.5"], "anchor_fraction"),
    (["--phase1-value", "mean"], "phase1_value"),
    (["--anchor-simulations", "0"], "anchor_simulations"),
    (["--lr-decay-rounds", "-1"], "lr_decay_rounds"),
    (["--network", "resnet", "--resnet-blocks", "-1"], "resnet_blocks must be an integer >= 0"),
    (["--network", "resnet", "--resnet-channels", "0"], "resnet_channels must be an integer >= 1"),
    (["--resnet-blocks", "2"], "give --network resnet"),
])
def test_cli_rejects_bad_input(argv, message, tmp_path, capsys):
    assert_refused_in_one_line(hex_train.main, argv, message, tmp_path, capsys, game="hex",
                               start="python -m train.hex: error: ")


def test_both_presets_anchor_self_play_and_the_full_labels_phase1_values_by_uct():
    from train.common.config import parse
    full = parse(PRESETS, ["--preset", "full"])[1].learner
    assert (full.anchor_fraction, full.anchor_simulations, full.phase1_value) == (0.25, 1000, "uct")
    assert parse(PRESETS, ["--preset", "full", "--anchor-fraction", "0"])[1].learner.anchor_fraction == 0
    quick = parse(PRESETS, [])[1].learner
    assert (quick.anchor_fraction, quick.anchor_simulations, quick.phase1_value, quick.average_decay) == (
        0.25, 200, "result", 0.999)


def test_eval_symmetry_is_the_full_presets_and_a_flag():
    from train.common.config import parse

    assert parse(PRESETS, ["--preset", "full"])[1].eval_symmetry
    assert not parse(PRESETS, ["--preset", "full", "--no-eval-symmetry"])[1].eval_symmetry
    assert not parse(PRESETS, [])[1].eval_symmetry and parse(PRESETS, ["--eval-symmetry"])[1].eval_symmetry
    assert '"eval_symmetry": true' in parse(PRESETS, ["--preset", "full"])[1].to_json()


def test_the_resnet_is_built_at_the_configured_size():
    cfg = Config(board_size=5, network="resnet", resnet_blocks=1, resnet_channels=8)
    cfg.validate()
    shapes = lambda net: jax.eval_shape(net.init, jax.random.key(0))  # noqa: E731
    built = shapes(build(cfg)[1])
    want = shapes(hex_network.make(5, kind="resnet", blocks=1, channels=8))
    assert jax.tree_util.tree_map(lambda a: a.shape, built) == jax.tree_util.tree_map(lambda a: a.shape, want)
    assert hex_network.num_params(built) < hex_network.num_params(shapes(hex_network.make(5, kind="resnet")))


def test_the_cosine_spans_phase1_and_the_decay_rounds():
    assert decay_rounds(Config(phase1="uct", rounds=12)) == 13
    assert decay_rounds(Config(phase1="uct", rounds=12, lr_decay_rounds=18)) == 19
    assert decay_rounds(Config(phase1="none", rounds=12, lr_decay_rounds=18)) == 18
    assert decay_rounds(Config(phase1="none", rounds=5)) == 5


def test_resume_without_a_run_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        hex_train.main(TINY + ["--runs-dir", str(tmp_path), "--resume"])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and "no run" in err and len(err.splitlines()) == 1


def test_self_play_score_counts_the_games_against_pool_models_only():
    m = {"phase": np.array([1, 2, 2, 2, 2]), "opponent_generation": np.array([-1, -1, 0, 3, az.ANCHOR_GENERATION]),
         "newest_score": np.array([0.9, 0.0, 0.25, 0.75, -1.0])}
    assert score_against(m, lambda g: g >= 0) == pytest.approx(0.5)   # phase 1, none and the anchor left out
    assert score_against(m, lambda g: g == az.ANCHOR_GENERATION) == pytest.approx(-1.0)
    m["opponent_generation"][2:] = -1
    assert score_against(m, lambda g: g >= 0) is None


def test_the_pool_keeps_every_model_of_the_run():
    _, cfg = hex_train.parse(hex_train.PRESETS, ["--rounds", "6", "--phase1", "uct"])
    assert num_models(cfg) == 7    # phase 1's model and six rounds'
    _, every = hex_train.parse(hex_train.PRESETS, ["--rounds", "6", "--phase1", "none"])
    assert num_models(every) == 7    # the first network and six rounds


def test_the_learners_flags_have_no_prefix_and_land_in_its_config():
    _, cfg = hex_train.parse(hex_train.PRESETS, ["--games-per-update", "64", "--anchor-fraction", "0.5",
                                                 "--average-decay", "0.9", "--sample-moves", "3"])
    assert (cfg.learner.games_per_update, cfg.learner.anchor_fraction, cfg.learner.average_decay,
            cfg.learner.sample_moves) == (64, 0.5, 0.9, 3)
    assert cfg.updates_per_round == PRESETS["quick"].updates_per_round


@pytest.mark.parametrize("argv, message", [
    (["--rounds", str(10**30)], "rounds must be at most 2,147,483,647 (2**31 - 1): the run's counters"),
    (["--rounds", "100000000", "--board-size", "3"],
     "the games ((phase 1 +) rounds x updates_per_round x games_per_update) = 204,800,000,000 is past "
     "2,147,483,647 (2**31 - 1): the learner counts its games in an int32"),
    (["--rounds", "20000", "--board-size", "3"],
     "8 GiB memory cap (MEMORY_CAP in train/common/config.py); its largest part is the league's pool of "
     "past models and their results table (rounds, network size)"),
    (["--network", "resnet", "--resnet-channels", "4096"], "(rounds, network size)"),
    (["--simulations", "100000"], "its largest part is an update's self-play games and searches "
                                  "(games_per_update, simulations)"),
    (["--buffer-size", "1000000000"], "its largest part is the replay buffer (buffer_size)"),
    (["--batch-size", "10000000"], "its largest part is an SGD minibatch's activations (batch_size)"),
    (["--final-eval-games", "100000"], "its largest part is the games against UCT (eval_games, final_eval_games"),
    (["--elo-games", "100000"], "its largest part is the Elo games (elo_games, eval_simulations)"),
    (["--phase1", "uct", "--phase1-simulations", "1000000"], "phase 1's UCT labels"),
    (["--anchor-fraction", "0.5", "--anchor-simulations", "1000000"], "the UCT anchor's searches"),
])
def test_huge_budgets_are_refused_in_one_line_before_the_run_folder(argv, message, tmp_path, capsys):
    assert_refused_in_one_line(hex_train.main, argv, message, tmp_path, capsys, game="hex",
                               start="python -m train.hex: error: invalid configuration: ")


def test_budgets_under_the_bounds_are_accepted():
    from train.common.config import MEMORY_CAP, memory_estimate, parse
    _, c = parse(PRESETS, ["--preset", "full", "--rounds", "2000"])   # 2001 models of 11x11: ~2 GiB
    assert memory_estimate(*hex_train.lib.memory(c))[0] < MEMORY_CAP
    for preset in PRESETS.values():   # the largest, 9x9's: 200 final games against UCT-5,000, 1.6 GiB
        assert memory_estimate(*hex_train.lib.memory(preset))[0] < MEMORY_CAP / 4
