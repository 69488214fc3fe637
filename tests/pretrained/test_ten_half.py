"""Ten-and-a-half's shipped agents (jaxgames.pretrained): the three load with their hash checked
(every card's fields: tests/pretrained/test_agents.py); the optimum shipped is the one
jaxgames.ten_half.dp computes now; each learned policy is its own table's greedy policy, its
card's exact figures are the solver's on it today, it is within a stated margin of the optimum,
and a fresh small arena measurement agrees with its card; a damaged file is refused; a run
folder ships all three and loads back.

The exact checks are exact (the solver); the sampled ones compare intervals generously (four
standard errors of the difference), so no test depends on exact PRNG bits. One arena compile
(the hook's env and the table policy are shared by every measure here).
"""

from __future__ import annotations

import json
import math
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.pretrained import ten_half as hook
from jaxgames.ten_half import dp
from jaxgames.ten_half.agent import params_from_q

GAME = "ten_half"
LEARNED = ("mc-on-policy", "mc-wis-off-policy")
#: how far below the optimum a shipped learned policy may play (exact expected reward per
#: game); the quick preset's learners end 0.0001 and 0.002 below it
MARGIN = 0.005
#: games of the fresh measurement: its 95% interval is about ±0.019
FRESH_GAMES = 20_000


def reachable_policy(params) -> np.ndarray:
    return np.where(dp.reachable_states(), np.asarray(params["policy"]), 0)


def test_the_three_agents_ship_the_on_policy_learner_first():
    assert pretrained.names(GAME) == ["mc-on-policy", "mc-wis-off-policy", "optimal"]
    assert pretrained.card(GAME)["name"] == "mc-on-policy"


def test_the_shipped_optimum_is_the_solvers_now():
    params = pretrained.load(GAME, "optimal").params
    np.testing.assert_array_equal(np.asarray(params["policy"]), dp.optimal_policy())
    q = np.nan_to_num(dp.optimal_q(), nan=0.0)
    np.testing.assert_allclose(np.asarray(params["q"]), q, rtol=0, atol=1e-6)
    exact = pretrained.card(GAME, "optimal")["evaluation"]["exact"]
    assert exact["expected_return"] == pytest.approx(dp.optimal_value(), abs=1e-12)


@pytest.mark.parametrize("name", LEARNED)
def test_a_learned_policy_is_greedy_on_its_table_and_near_the_optimum(name):
    params = pretrained.load(GAME, name).params
    q = np.asarray(params["q"])
    np.testing.assert_array_equal(np.asarray(params["policy"]), np.argmax(q, axis=-1))   # ties: stick
    value = dp.policy_value(reachable_policy(params))
    exact = pretrained.card(GAME, name)["evaluation"]["exact"]
    # the card's figures are the solver's on the shipped table under today's rules
    assert exact["expected_return"] == pytest.approx(value, abs=1e-9)
    assert exact["optimal_value"] == pytest.approx(dp.optimal_value(), abs=1e-12)
    assert exact["agreement_with_optimum"] == pytest.approx(hook.agreement(reachable_policy(params)), abs=1e-12)
    assert value >= dp.optimal_value() - MARGIN, f"{name} plays {dp.optimal_value() - value:.4f} below the optimum"


@pytest.mark.parametrize("name", LEARNED + ("optimal",))
def test_a_fresh_measurement_agrees_with_the_card(name):
    card = pretrained.card(GAME, name)["evaluation"]
    fresh = hook.measure(pretrained.load(GAME, name), baselines=["dealer"], deals=FRESH_GAMES, seed=7)
    was, now = card["baselines"]["dealer"], fresh["baselines"]["dealer"]
    assert abs(now["mean"] - was["mean"]) <= 2 * math.hypot(now["ci95"], was["ci95"]), (was, now)
    # sampled, the agent still plays near the optimum against the dealer
    assert now["mean"] + 2 * now["ci95"] >= dp.optimal_value() - MARGIN, now
    assert fresh["exact"] == pytest.approx(card["exact"], abs=1e-9)


def test_a_baseline_other_than_the_dealer_is_refused():
    with pytest.raises(pretrained.PretrainedError, match="one baseline, the dealer"):
        hook.measure(pretrained.load(GAME), baselines=["random"], deals=10)


def test_a_damaged_parameter_file_is_refused(tmp_path):
    root = tmp_path / "agents"
    shutil.copytree(pretrained.AGENTS / GAME, root / GAME)
    path = root / GAME / "optimal" / "params.npz"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(pretrained.PretrainedError, match="is damaged: its sha256"):
        pretrained.load(GAME, "optimal", root=root)


def test_a_run_folder_ships_all_three_and_they_load_back(tmp_path):
    """A run folder as the pipeline leaves it (config.json, summary.json, the last update's
    checkpoint of both learners' tables, written by the training's checkpoint manager):
    shipped, each learner's table is its Q's greedy policy, the cards carry the summary's
    figures; a summary of another update is refused."""
    from train.common.checkpoint import Checkpointer

    config = dict(pretrained.card(GAME)["config"])
    config.update(episodes=20_000, episodes_per_update=10_000)
    rng = np.random.default_rng(0)
    carry = {m: {"total": rng.normal(size=(dp.NUM_STATES, 2)).astype(np.float32),
                 "weight": rng.integers(0, 3, size=(dp.NUM_STATES, 2)).astype(np.float32),
                 "episodes": np.int32(20_000)} for m in ("on_policy", "off_policy")}
    run = tmp_path / "runs" / GAME / "r"
    ck = Checkpointer(run / "checkpoints", keep=1)
    ck.save(2, jax.tree_util.tree_map(jnp.asarray, carry), jax.random.key(0), json.dumps(config))
    ck.close()
    (run / "config.json").write_text(json.dumps(config))
    summary = {"optimal_value": dp.optimal_value(), "arena_games": 1000, "episodes": 20_000, "seconds": 1.5}
    for m, v in (("on_policy", -0.2), ("off_policy", -0.3)):
        summary.update({f"{m}_value": v, f"{m}_agreement": 0.5, f"{m}_arena_mean": v + 0.01,
                        f"{m}_arena_ci95": 0.05})
    (run / "summary.json").write_text(json.dumps(summary))
    root = tmp_path / "agents"
    hook.ship(run=run, command="python -m train.ten_half", commit="abc", cpu="a CPU", root=root)
    for m, name in (("on_policy", "mc-on-policy"), ("off_policy", "mc-wis-off-policy")):
        c = carry[m]
        q = np.where(c["weight"] > 0, c["total"] / np.maximum(c["weight"], 1e-30), 0.0)
        want = params_from_q(q)
        got = pretrained.load(GAME, name, root=root).params
        np.testing.assert_array_equal(np.asarray(got["policy"]), np.asarray(want["policy"]))
        np.testing.assert_allclose(np.asarray(got["q"]), np.asarray(want["q"]), rtol=1e-6)
        card = pretrained.card(GAME, name, root=root)
        assert card["evaluation"]["baselines"]["dealer"] == {"mean": summary[f"{m}_arena_mean"], "ci95": 0.05}
        assert card["evaluation"]["exact"]["expected_return"] == summary[f"{m}_value"]
        assert card["checkpoint"] == "checkpoints/2" and card["training_seconds"] == 1.5
    np.testing.assert_array_equal(np.asarray(pretrained.load(GAME, "optimal", root=root).params["policy"]),
                                  dp.optimal_policy())
    with pytest.raises(pretrained.PretrainedError, match="exists: give --overwrite"):
        hook.ship(run=run, command="c", commit="c", cpu="c", root=root)
    (run / "config.json").write_text(json.dumps({**config, "episodes": 30_000}))   # stopped early
    with pytest.raises(ValueError, match="the card would not describe the agent shipped"):
        hook.ship(run=run, command="c", commit="c", cpu="c", root=root, overwrite=True)
