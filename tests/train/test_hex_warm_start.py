"""``--init-from``: a Hex run whose network starts from a shipped agent or from another run's
best model (issue 65's 11x11 legs start from the shipped az-11x11), and the refusals."""

import jax
import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.hex.agent import load_agent
from one_line import assert_refused_in_one_line
from train import hex as hex_train
from train.games.hex import build
from train.hex import PRESETS

TINY = ["--board-size", "3", "--phase1", "none", "--rounds", "1", "--updates-per-round", "1", "--games-per-update", "4",
        "--simulations", "4", "--eval-simulations", "4", "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64",
        "--uct-simulations", "8", "--eval-games", "2", "--final-eval-games", "2", "--elo-games", "0", "--sgf-games", "0",
        "--no-progress"]


def same(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


def test_the_network_the_pool_and_the_average_start_from_the_shipped_agent():
    cfg = hex_train.parse(PRESETS, ["--board-size", "7", "--init-from", "az-7x7", "--games-per-update", "4"])[1]
    carry = jax.jit(build(cfg)[2].init)(jax.random.key(3))
    shipped = pretrained.load("hex", "az-7x7").params
    assert same(carry.params, shipped) and same(carry.average, shipped)
    # no phase 1: the pool's first model, the first opponent, is the shipped network
    assert int(carry.league.size) == 1
    assert same(jax.tree_util.tree_map(lambda x: x[0], carry.league.params), shipped)
    # every seed starts from it; without --init-from the start is random and differs
    other = jax.jit(build(cfg)[2].init)(jax.random.key(4))
    assert same(other.params, shipped)
    cold = hex_train.parse(PRESETS, ["--board-size", "7", "--games-per-update", "4"])[1]
    assert not same(jax.jit(build(cold)[2].init)(jax.random.key(3)).params, shipped)


def test_a_run_starts_from_another_runs_best_model(tmp_path):
    hex_train.main(TINY + ["--runs-dir", str(tmp_path), "--run-name", "first"])
    first = tmp_path / "hex" / "first"
    cfg = hex_train.parse(PRESETS, TINY + ["--init-from", str(first)])[1]
    assert same(jax.jit(build(cfg)[2].init)(jax.random.key(0)).params, load_agent(first).params)


@pytest.mark.parametrize("argv, message", [
    (["--init-from", "az-7x7"], "init_from 'az-7x7' is a 7x7 source network"),          # the board is 3x3
    (["--board-size", "7", "--init-from", "az-7x7", "--network", "resnet"], "this run trains a 7x7 resnet"),
    (["--init-from", "no-such-agent"], "(a shipped agent: az-11x11, az-7x7, az-9x9; or a run folder)"),
])
def test_a_network_that_does_not_fit_is_refused_in_one_line(argv, message, tmp_path, capsys):
    assert_refused_in_one_line(hex_train.main, TINY + argv, message, tmp_path, capsys, game="hex",
                               start="python -m train.hex: error: ")
