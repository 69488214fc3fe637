"""The 2048 pipeline end to end at a tiny scale: files, resume, tables, CLI errors."""

import json

import jax
import numpy as np
import pytest

from jaxgames.game2048 import players
from jaxgames.game2048.tables import export_tables, load_tables
from train import game2048
from train.games import game2048 as lib
from one_line import assert_refused_in_one_line

TINY = ["--patterns", "0,1,2,3 4,5,6,7", "--num-games", "16", "--train-moves", "32000",
        "--updates-per-chunk", "500", "--checkpoint-every", "1", "--eval-games", "8",
        "--final-games", "16", "--final-games-deep", "2", "--no-progress"]


def test_run_writes_everything_and_exports_loadable_tables(tmp_path):
    summary = game2048.main(TINY + ["--runs-dir", str(tmp_path), "--run-name", "t"])
    run = tmp_path / "game2048" / "t"
    saved = json.loads((run / "summary.json").read_text())
    for k in ("avg_score", "max_score", "rate_2048", "rate_4096", "rate_8192", "rate_16384",
              "rate_32768", "depth1_avg_score", "depth2_avg_score", "train_games", "train_moves",
              "moves_per_second", "seconds"):
        assert k in saved, k
    assert 0 < saved["train_moves"] <= 32000 and saved["train_games"] > 0
    assert saved["avg_score"] == pytest.approx(summary["avg_score"])
    for png in ("learning_curve.png", "tile_rates.png"):
        assert (run / "plots" / png).stat().st_size > 5_000
    assert "2-ply expectimax" in (run / "report.md").read_text()
    rows = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [500, 1000, 1500, 2000]

    # the exported tables load back into the same network, and refuse another one
    cfg = game2048.Config(patterns="0,1,2,3 4,5,6,7")
    weights = load_tables(run / "tables.npz", cfg.network(), "2048")
    assert weights.shape == (2 * 16**4,) and float(np.abs(np.asarray(weights)).sum()) > 0
    with pytest.raises(ValueError, match="patterns"):
        load_tables(run / "tables.npz", game2048.Config().network(), "2048")
    # ... and a run can start from them
    again = game2048.main(TINY + ["--runs-dir", str(tmp_path), "--run-name", "u",
                                  "--init-tables", str(run / "tables.npz")])
    assert again["train_moves"] > 0


def test_each_batch_size_compiles_its_chunk_once_and_large_ones_take_the_sqrt_step():
    """The batch size is fixed within a run: the pipeline's learner at 16 games and at 256
    compiles its training chunk once each over several chunks; auto picks the sum at 16 games
    and the square-root rule (with its count column, zero between updates) at 256."""
    import jax.numpy as jnp
    import jaxgames
    from train.algos import ntuple_td as td
    from train.common import make_chunk

    for games, rule in ((16, "sum"), (256, "sqrt")):
        config = game2048.Config(num_games=games, patterns="0,1,2,3 4,5,6,7")
        assert lib.td_config(config).step_rule == rule
        learner = td.make(lib.td_config(config), jaxgames.make("2048"))
        chunk = make_chunk(learner.update, 20)
        carry = learner.init(jax.random.key(0))
        for start in (0, 20, 40):
            carry, m = chunk(carry, jax.random.key(1), jnp.int32(start))
        assert chunk._cache_size() == 1 and int(np.asarray(m["moves"]).sum()) > 0
        assert carry.table.shape[1] == (2 if rule == "sqrt" else 1)
        if rule == "sqrt":
            np.testing.assert_array_equal(np.asarray(carry.table[:, -1]), 0.0)


def test_corrupt_tables_file_is_refused(tmp_path):
    bad = tmp_path / "tables.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable tables file"):
        load_tables(bad, game2048.Config().network(), "2048")


def test_resume_gives_exactly_the_unbroken_result(tmp_path):
    base = TINY + ["--runs-dir", str(tmp_path)]
    _, whole_cfg = game2048.parse(game2048.PRESETS, base + ["--run-name", "whole"])
    whole = game2048.train(whole_cfg)
    _, cfg = game2048.parse(game2048.PRESETS, base + ["--run-name", "killed"])
    assert game2048.train(cfg, stop_after_chunks=2) == {}
    resumed = game2048.main(base + ["--run-name", "killed", "--resume"])
    for k in ("avg_score", "max_score", "train_games", "train_moves", "depth2_avg_score"):
        assert resumed[k] == whole[k], k
    strip = lambda rows: [{k: v for k, v in r.items() if "second" not in k} for r in rows]  # noqa: E731
    read = lambda n: [json.loads(l) for l in (tmp_path / "game2048" / n / "metrics.jsonl").read_text().splitlines()]  # noqa: E731
    assert strip(read("whole")) == strip(read("killed"))


@pytest.mark.parametrize("argv, message", [
    (["--variant", "4096"], "variant"),
    (["--patterns", "0,1,99"], "pattern"),
    (["--patterns", "a,b"], "patterns must look like"),
    (["--lam", "2"], "lam"),
    (["--final-depths", "0"], "final_depths"),
    (["--init-tables", "/nonexistent/tables.npz"], "no file"),
    (["--num-gamez", "4"], "num-gamez"),
    (["--shared-step", "mean"], "shared_step must be auto, sum or sqrt"),
])
def test_cli_rejects_bad_input(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        game2048.main(argv + ["--runs-dir", str(tmp_path)])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "game2048").exists()


def test_expectimax_depth_2_beats_depth_1_with_a_trained_tiny_network(optimised_compiles):
    # statistic, not bits: with the same (weak) network, looking one chance layer deeper scores
    # more on average over 64 games
    net = game2048.Config(patterns="0,1,2,3 4,5,6,7").network()
    from jaxgames.game2048.board import BoardModel
    from train.algos import ntuple_td as td
    MODEL = BoardModel("2048")
    from train.common import make_chunk
    cfg = td.TDConfig(network=net, num_games=64)
    with optimised_compiles():   # 3,000 updates and 128 whole games: far more running than compiling
        carry, _ = make_chunk(td.make_update(cfg, MODEL), 3000)(td.init(cfg, MODEL, jax.random.key(0)), jax.random.key(1), 0)
        one = players.evaluate(players.value_policy(net, 1), carry.weights, jax.random.key(2), num_games=64)
        two = players.evaluate(players.value_policy(net, 2), carry.weights, jax.random.key(2), num_games=64)
    assert two.score.mean() > 1.2 * one.score.mean()


def test_best_checkpoint_is_kept_apart(tmp_path):
    game2048.main(TINY + ["--runs-dir", str(tmp_path), "--run-name", "b", "--keep-checkpoints", "1"])
    run = tmp_path / "game2048" / "b"
    from train.common import Checkpointer
    best = Checkpointer(run / "best")
    rows = [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]
    top = max(reversed(rows), key=lambda r: r["eval_avg_score"])
    # the best step is the last with the highest evaluation, kept even when it is not the last step
    assert best.latest_step() == top["step"]
    assert best.best_value() == top["eval_avg_score"]
    # best/ holds the parameters only (the n-tuple weights), not the training carry
    like = np.zeros(2 * 16**4, np.float32)
    step, weights, _, _ = best.restore(like, jax.random.key(0))
    assert step == top["step"] and np.asarray(weights).shape == like.shape
    assert Checkpointer(run / "checkpoints").latest_step() == rows[-1]["step"]


def test_fibonacci_variant_trains_and_scores(tmp_path):
    # 1-ply only: the 2-ply search of 2584 would be one more program to compile, for nothing
    # this test checks (depth 2 is tested on 2048 above)
    s = game2048.main(TINY + ["--runs-dir", str(tmp_path), "--variant", "2584", "--final-depths", "1"])
    # 2584 rewards are Fibonacci merges: a run of a few thousand moves scores
    assert s["train_moves"] > 0 and s["avg_score"] > 0 and s["random_avg_score"] > 0
    cfg = json.loads((tmp_path / "game2048" / "quick-seed0" / "config.json").read_text())
    assert cfg["variant"] == "2584"


def test_refused_inputs_create_nothing_and_the_fixed_command_runs(tmp_path, capsys):
    net = game2048.Config(patterns="0,1,2,3 4,5,6,7").network()
    nan = tmp_path / "nan.npz"
    export_tables(nan, net, np.full(2 * 16**4, np.nan, np.float32), "2048")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(np.random.default_rng(0).bytes(1000))
    other = tmp_path / "other.npz"
    export_tables(other, game2048.Config(patterns="0,1,2,3 4,5,6,7", variant="2584").network(),
                  np.zeros(2 * 18**4, np.float32), "2584")
    runs = tmp_path / "runs"
    for path, message in ((nan, "non-finite"), (garbage, "not a readable"), (other, "variant 2584")):
        with pytest.raises(SystemExit) as e:
            game2048.main(TINY + ["--runs-dir", str(runs), "--init-tables", str(path)])
        assert e.value.code == 2 and message in capsys.readouterr().err
        assert not (runs / "game2048").exists()
    for argv, message in ((["--learning-rate", "nan"], "learning_rate"), (["--seed", "99999999999999999999"], "seed")):
        with pytest.raises(SystemExit) as e:
            game2048.main(TINY + ["--runs-dir", str(runs)] + argv)
        assert e.value.code == 2 and message in capsys.readouterr().err
        assert not runs.exists()


def test_budget_rounding_is_announced(tmp_path, capsys):
    argv = [a for a in TINY if a not in ("32000",)]
    argv[argv.index("--train-moves") + 1:argv.index("--train-moves") + 1] = ["1000"]
    s = game2048.main(argv + ["--runs-dir", str(tmp_path), "--updates-per-chunk", "62"])
    assert "rounded to 992" in capsys.readouterr().err
    assert s["train_moves"] <= 992


def test_tile_rates_read_tile_values_in_both_variants():
    hist = np.zeros(32, np.int64)
    hist[[10, 11, 12, 17]] = [1, 2, 3, 4]     # largest-tile exponents of 10 ended games
    # 2048: exponent 11 is the 2048 tile; 17 is 131072, the largest tile of the game
    assert lib.tile_rate(hist, "2048") == (9.0, 10)
    hist = np.zeros(32, np.int64)
    hist[[11, 12, 17, 18]] = [1, 2, 3, 4]
    # 2584: exponents 11 and 12 are 144 and 233; 17 is 2584 (the first worth >= 2048), 18 4181
    assert lib.tile_rate(hist, "2584") == (7.0, 10)
    assert lib.tile_rate(hist, "2584", tile=4096) == (4.0, 10)


@pytest.mark.parametrize("argv, line", [
    (["--num-gamez", "4"], "unknown flag --num-gamez (did you mean --num-games?)"),
    (["--final-depths", "1", "deep"], "--final-depths needs an integer, got 'deep'"),
    (["--train-moves", str(10**30)],
     "invalid configuration: train_moves / num_games (the updates) = 7,812,500,000,000,000,000,000,000,000 "
     "is past 2,147,483,647 (2**31 - 1): the driver numbers the updates in an int32"),
    (["--num-games", str(2**31)], "num_games must be at most 2,147,483,647 (2**31 - 1)"),
    (["--patterns", " ".join(["0,1,2,3,4,5,6"] * 9)],
     "its largest part is the n-tuple tables (patterns, base, tc, shared_step), 9 GiB"),
    (["--final-depths", "1", "3", "--final-games-deep", "1000"],
     "its largest part is the deep evaluation games (final_games_deep, final_depths)"),
    (["--num-games", "100000000"], "its largest part is an update's afterstates (num_games)"),
])
def test_unknown_flags_and_huge_budgets_are_one_line_before_anything_is_made(argv, line, tmp_path, capsys):
    assert_refused_in_one_line(game2048.main, argv, line, tmp_path, capsys, game="game2048",
                               start="python -m train.game2048: error: ")


def test_the_largest_budget_within_the_bounds_is_accepted():
    from train.common.config import INT32_MAX, parse
    moves = INT32_MAX * 128
    _, c = parse(game2048.PRESETS, ["--train-moves", str(moves)])
    assert c.num_updates == INT32_MAX
    # the full preset's tables with TC (three columns), and 8 patterns of 6: 1.5 GiB
    parse(game2048.PRESETS, ["--preset", "full", "--tc", "--patterns", " ".join(["0,1,2,3,4,5"] * 8)])
