"""A Hex run carried on to more rounds (issue 65's legs): with the pool's size set and a step
size that does not decay over the run's own rounds, ``--resume --rounds N`` trains on and ends
as the unbroken N-round run; without them the longer resume is refused in one line."""

import json

import pytest

from train import hex as hex_train
from train.games import hex as lib
from train.hex import PRESETS

TINY = ["--board-size", "3", "--phase1", "none", "--updates-per-round", "1", "--games-per-update", "4",
        "--simulations", "4", "--eval-simulations", "4", "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64",
        "--uct-simulations", "8", "--eval-games", "4", "--final-eval-games", "4", "--elo-games", "2", "--sgf-games", "0",
        "--pool-size", "4", "--lr-decay", "--lr-decay-rounds", "3", "--no-progress"]


def strip(run):
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if "second" not in k} for r in rows]


@pytest.mark.parametrize("argv, extendable", [
    (["--preset", "9x9"], True),                                   # pool 64, cosine over 30 rounds
    (["--preset", "quick"], False),                                # the pool holds the run's models
    (["--preset", "quick", "--pool-size", "32"], False),           # ... and the cosine spans the run
    (["--preset", "quick", "--pool-size", "32", "--lr-decay-rounds", "24"], True),
    (["--pool-size", "8", "--no-lr-decay"], True),                 # a constant step size
    (["--preset", "full"], False),
])
def test_rounds_may_grow_only_where_nothing_computed_depends_on_them(argv, extendable):
    cfg = hex_train.parse(PRESETS, argv)[1]
    assert ("rounds" in cfg.EXTENDABLE_FIELDS) == extendable
    # the pool's capacity: the size set, or one slot per model of the run
    assert lib.pool_capacity(cfg) == (cfg.pool_size or lib.num_models(cfg))


def test_the_9x9_preset_climbs_a_ladder_to_5000_and_can_be_carried_on():
    cfg = hex_train.parse(PRESETS, ["--preset", "9x9"])[1]
    assert cfg.board_size == 9 and cfg.uct_ladder == (200, 1000, 2000, 5000)
    assert lib.rung_simulations(cfg, len(cfg.uct_ladder) - 1) == 5000 and lib.eval_simulations(cfg) == 200
    longer = hex_train.parse(PRESETS, ["--preset", "9x9", "--rounds", "60"])[1]
    assert lib.decay_rounds(longer) == lib.decay_rounds(cfg) == 30   # the cosine does not stretch
    assert lib.pool_capacity(longer) == lib.pool_capacity(cfg) == 64


def test_a_run_resumed_with_more_rounds_ends_as_the_unbroken_run(tmp_path):
    base = TINY + ["--runs-dir", str(tmp_path)]
    whole = hex_train.main(base + ["--rounds", "2", "--run-name", "whole"])
    short = hex_train.main(base + ["--rounds", "1", "--run-name", "legs"])
    assert short["self_play_rounds"] == 1
    longer = hex_train.main(base + ["--rounds", "2", "--run-name", "legs", "--resume"])
    for k in whole:
        if k != "seconds":
            assert longer[k] == whole[k], k
    assert strip(tmp_path / "hex" / "legs") == strip(tmp_path / "hex" / "whole")
    assert [r["round"] for r in strip(tmp_path / "hex" / "legs")] == [1, 2]


def refused(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        hex_train.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("python -m train.hex: error: ") and message in err, err


def test_more_rounds_without_a_set_pool_is_refused_and_the_run_kept(tmp_path, capsys):
    at = TINY.index("--pool-size")
    base = TINY[:at] + TINY[at + 2:] + ["--runs-dir", str(tmp_path), "--run-name", "r"]
    hex_train.main(base + ["--rounds", "1"])
    before = strip(tmp_path / "hex" / "r")
    capsys.readouterr()
    refused(base + ["--rounds", "2", "--resume"], "rounds differs from the saved run (1 saved, 2 now)", capsys)
    assert strip(tmp_path / "hex" / "r") == before
    # with the pool set, a shorter resume is refused all the same
    legs = TINY + ["--runs-dir", str(tmp_path), "--run-name", "legs"]
    hex_train.main(legs + ["--rounds", "2"])
    capsys.readouterr()
    refused(legs + ["--rounds", "1", "--resume"], "rounds may only grow (2 saved, 1 now)", capsys)
