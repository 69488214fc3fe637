"""The hold'em pipeline: a tiny run end to end (the run folder, exact --resume with the pool
changing between rounds), the opponents each group of games faces, AlphaHoldem's value bounds
on a hand-made hand, the agent's honesty, CLI errors."""

import dataclasses
import json
import shutil
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.holdem import betting, bots as bots_lib, cards
from one_line import assert_refused_in_one_line
from train import holdem as holdem_train
from train.algos import league as league_lib
from train.common.rundir import RunDir, RunDirError
from train.common.skeleton import Chunk, Keys
from train.games import holdem as lib
from train.holdem import PRESETS, Config

ENV = jaxgames.make("holdem")


def read_rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_run_writes_everything_and_resumes_exactly(tiny_holdem_run, tmp_path):
    # the run (tests/conftest.py: its flags, shared with tests/holdem/test_agent.py), copied:
    # it is resumed at the end
    whole, run = tiny_holdem_run.summary, tmp_path / "holdem" / "whole"
    shutil.copytree(tiny_holdem_run.folder, run)
    base = tiny_holdem_run.argv + ["--runs-dir", str(tmp_path)]
    saved = json.loads((run / "summary.json").read_text())
    for name in lib.BASELINES:
        assert set(saved[f"mbb_vs_{name}"]) == {"mean", "ci95"}
    for k in ("lbr_mbb", "lbr_mbb_equity_bot", "lbr_mbb_random_bot"):   # the yardsticks: the same run's
        assert set(saved[k]) == {"mean", "ci95"}, k
        adjusted = k.replace("lbr_mbb", "lbr_mbb_allin_adjusted")          # and the same hands all-in adjusted
        assert set(saved[adjusted]) == {"mean", "ci95"}, adjusted
    # always-fold loses its blinds: the agent wins between 0 and 1,000 mbb/hand against it
    assert 0 < saved["mbb_vs_fold"]["mean"] <= 1000
    assert saved["hands_trained"] > 0 and saved["decisions_trained"] == 2 * 2 * 16 * 4
    rows = read_rows(run)
    assert [r["round"] for r in rows] == [1, 2] and [r["generation"] for r in rows] == [0, 1]
    assert rows[-1]["hands"] == saved["hands_trained"]
    report = (run / "report.md").read_text()
    assert "Local best response" in report and "against the equity bot" in report and "all-in adjusted" in report
    assert "the plain clipped PPO loss" in report   # the presets' loss (docs/lab/holdem.md)
    assert "## The first decision of a hand" in report and "| opens in the small blind |" in report
    curve = {"lbr_mbb", "lbr_mbb_ci95", "lbr_mbb_allin_adjusted", "lbr_mbb_allin_adjusted_ci95"}
    assert not curve & set(rows[0]) and curve <= set(rows[1])   # every 2nd round
    assert "| LBR, adjusted (4 hands) |" in report
    for png in ("mbb.png", "elo.png", "losses.png", "lbr.png"):
        assert (run / "plots" / png).stat().st_size > 5_000
    # killed after round 1, with the pool holding round 1's model: the resumed run ends as one
    _, cfg = holdem_train.parse(PRESETS, base + ["--run-name", "killed"])
    assert holdem_train.train(cfg, stop_after_chunks=1) == {}
    resumed = holdem_train.main(base + ["--run-name", "killed", "--resume"])
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    strip = lambda rs: [{k: v for k, v in r.items() if "second" not in k} for r in rs]  # noqa: E731
    assert strip(read_rows(tmp_path / "holdem" / "killed")) == strip(rows)
    # a finished run resumed: nothing trained again, its agent evaluated again to the same match
    # figures; without LBR this time (an evaluation-only field; the resumed run above showed
    # LBR's figures come back exact), so the summary has none
    again = holdem_train.main(base + ["--run-name", "whole", "--resume", "--lbr-hands", "0"])
    lbr_keys = {k for k in whole if k.startswith("lbr_mbb")}
    assert len(lbr_keys) == 6 and not lbr_keys & set(again) and again["lbr_hands"] == 0
    assert ({k: v for k, v in again.items() if k not in ("seconds", "lbr_hands")}
            == {k: v for k, v in whole.items() if k not in lbr_keys | {"seconds", "lbr_hands"}})
    assert strip(read_rows(run)) == strip(rows)
    assert {"final_eval_deals", "lbr_hands"} <= Config.RUN_ONLY_FIELDS   # may change there: evaluation only


@pytest.mark.slow  # a second, longer run of the pipeline
def test_a_finished_run_resumed_with_more_rounds_ends_as_the_longer_run(tiny_holdem_run, tmp_path, capsys):
    """--resume --rounds N above the saved rounds carries a finished run on: one round, then
    carried to two, ends as the shared two-round run (every figure but the times, every row);
    fewer rounds than it trained is refused in one line."""
    where = ["--runs-dir", str(tmp_path), "--run-name", "short"]   # a flag given again: the last value counts
    short = holdem_train.main(tiny_holdem_run.argv + ["--rounds", "1"] + where)
    assert short["rounds"] == 1 and short["hands_trained"] < tiny_holdem_run.summary["hands_trained"]
    longer = holdem_train.main(tiny_holdem_run.argv + where + ["--resume"])
    whole = tiny_holdem_run.summary
    assert {k: v for k, v in longer.items() if k != "seconds"} == {k: v for k, v in whole.items() if k != "seconds"}
    strip = lambda rs: [{k: v for k, v in r.items() if "second" not in k} for r in rs]  # noqa: E731
    assert strip(read_rows(tmp_path / "holdem" / "short")) == strip(read_rows(tiny_holdem_run.folder))
    assert json.loads((tmp_path / "holdem" / "short" / "config.json").read_text())["rounds"] == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        holdem_train.main(tiny_holdem_run.argv + ["--rounds", "1"] + where + ["--resume"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.splitlines()) == 1
    assert "--resume: rounds may only grow (2 saved, 1 now)" in err


def _config(**changes):
    return Config(**changes)


def _pool_with(params, ratings):
    """A league whose slots hold ``params`` with each leaf plus i (slot i), rated ``ratings``."""
    pool = league_lib.empty(params, capacity=len(ratings), num_fixed=len(lib.ANCHORS))
    for i in range(len(ratings)):
        pool = league_lib.promote(pool, jax.tree_util.tree_map(lambda x: x + i, params))
    return pool.replace(ratings=jnp.asarray(ratings, jnp.float32))


def test_opponents_are_anchors_the_k_best_or_the_learner_itself():
    params = {"w": jnp.zeros(3)}
    choose = jax.jit(lambda fraction, pool, key: lib.choose_opponent(
        pool, params, key, best_k=2, anchor_fraction=fraction), static_argnums=0)
    keys = jax.random.split(jax.random.key(0), 200)
    # an empty pool, no anchors: the learner plays itself
    empty = league_lib.empty(params, capacity=4, num_fixed=3)
    kinds = [int(choose(0.0, empty, k).kind) for k in keys[:20]]
    assert set(kinds) == {lib.NETWORK}
    assert np.all(np.asarray(choose(0.0, empty, keys[0]).params["w"]) == 0)
    # a rated pool: only its 2 best (slots 1 and 3, params + 1 and + 3) are drawn, both of them
    pool = _pool_with(params, [5.0, 50.0, -10.0, 20.0])
    drawn = {float(choose(0.0, pool, k).params["w"][0]) for k in keys[:60]}
    assert drawn == {1.0, 3.0}
    # all anchors: each of call, all-in and random, never a network
    kinds = np.array([int(choose(1.0, pool, k).kind) for k in keys])
    assert set(kinds.tolist()) == {1, 2, 3}
    # a share: about anchor_fraction of the draws are anchors
    share = np.mean([int(choose(0.25, pool, k).kind) != lib.NETWORK for k in keys])
    assert 0.12 < share < 0.38


def test_anchor_opponents_play_as_their_bots():
    net = lib.network(_config())
    policy = jax.jit(lib.opponent_policy(ENV, net))   # jitted: op by op each primitive compiles alone
    params = jax.jit(net.init)(jax.random.key(0), *lib.net_lib.example_inputs())
    state = jax.jit(ENV.init)(jax.random.key(3))      # preflop: the button faces the big blind
    for kind, expected in ((1, betting.CALL), (2, betting.ALL_IN)):
        opponent = lib.Opponent(kind=jnp.int32(kind), params=params)
        assert int(policy(opponent, jnp.int32(0), state, jax.random.key(1))) == expected


def test_anchors_flag_adds_the_equity_bot_as_the_last_kind():
    cfg = _config(anchors="call,allin,random,equity")
    assert lib.anchor_names(cfg.anchors) == ("call", "allin", "random", "equity")
    net = lib.network(cfg)
    policy = jax.jit(lib.opponent_policy(ENV, net, lib.anchor_names(cfg.anchors)))
    params = jax.jit(net.init)(jax.random.key(0), *lib.net_lib.example_inputs())
    equity_kind = lib.Opponent(kind=jnp.int32(4), params=params)
    # the button to act preflop, 50 to call into 150 (pot odds 0.25): with two aces (equity
    # about 0.85 against a random hand) the equity bot raises the pot; with seven-deuce
    # offsuit (about 0.35) it calls, where the call bot would too and the all-in bot shoves
    deal = lambda text: ENV.deal(cards.deck_from(cards.parse_cards(text), cards.parse_cards("Kc Qd")), 0)  # noqa: E731
    aces, junk = deal("As Ah"), deal("7c 2d")
    assert int(policy(equity_kind, jnp.int32(0), aces, jax.random.key(1))) == betting.RAISE_POT
    assert int(policy(equity_kind, jnp.int32(0), junk, jax.random.key(1))) == betting.CALL
    # drawn as anchors, the four kinds all come up, never a network
    pool = _pool_with({"w": jnp.zeros(3)}, [1.0, 2.0])
    choose = jax.jit(lambda key: lib.choose_opponent(pool, {"w": jnp.zeros(3)}, key, best_k=2, anchor_fraction=1.0,
                                                     num_anchors=4).kind)
    assert {int(choose(k)) for k in jax.random.split(jax.random.key(0), 200)} == {1, 2, 3, 4}


def test_value_bounds_are_the_chips_each_side_put_in():
    # button (seat 0) raises a pot, big blind calls, then on the flop seat 1 checks and seat 0
    # folds? it cannot fold facing nothing: it bets half the pot and seat 1 folds
    state = ENV.deal(jnp.arange(52, dtype=jnp.int8), 0)
    for a in (betting.RAISE_POT, betting.CALL, betting.CHECK, betting.RAISE_HALF, betting.FOLD):
        state = ENV.step(state, a)
    assert bool(state.terminated)
    committed = np.asarray(state.committed)
    unit = lib.REWARD_UNIT_BB * ENV.big_blind
    bounds = lib.value_bounds(ENV)
    np.testing.assert_allclose(bounds(state, jnp.int32(0)), [-committed[0] / unit, committed[1] / unit])
    np.testing.assert_allclose(bounds(state, jnp.int32(1)), [-committed[1] / unit, committed[0] / unit])
    # the folder's loss is exactly its lower bound: the clip never cuts a true outcome
    assert state.rewards[1] / unit == pytest.approx(float(bounds(state, jnp.int32(1))[0]))


def test_the_agent_reads_only_what_its_seat_sees():
    _, _, learner, agent = lib.build(_config())
    # jitted: op by op, each primitive of the init compiles on its own
    params = jax.jit(learner.init)(jax.random.key(0)).params
    states = jax.jit(jax.vmap(ENV.init))(jax.random.split(jax.random.key(1), 64))
    changed = arena.honesty_check(ENV, agent.policy, params, states, jax.random.key(2))
    assert changed == 0.0


@pytest.mark.parametrize("argv, message", [
    (["--network", "huge"], "network"),
    (["--tower", "lstm"], "tower"),
    (["--anchor-fraction", "1.5"], "anchor_fraction"),
    (["--best-k", "0"], "best_k"),
    (["--lbr-hands", "3"], "lbr_hands"),
    (["--round-lbr-hands", "5"], "round_lbr_hands"),
    (["--lbr-every", "-1"], "lbr_every"),
    (["--eval-deals", "1"], "eval_deals"),
    (["--loss", "ppo2"], "loss"),
    (["--delta1", "1.1"], "delta1"),
    (["--num-envs", "24", "--opponent-groups", "5"], "opponent_groups"),
    (["--anchors", "call,equity,nobody"], "anchors"),
    (["--anchors", "call,call"], "anchors"),
    (["--anchors", ""], "anchors"),
    (["--no-such-flag"], "--no-such-flag"),
])
def test_cli_rejects_bad_input(argv, message, tmp_path, capsys):
    assert_refused_in_one_line(holdem_train.main, argv, message, tmp_path, capsys, game="holdem",
                               start="python -m train.holdem: error: ")


def test_the_learners_flags_have_no_prefix_and_land_in_its_config():
    _, cfg = holdem_train.parse(PRESETS, ["--loss", "ppo", "--num-envs", "64", "--delta1", "4"])
    assert (cfg.learner.loss, cfg.learner.num_envs, cfg.learner.delta1) == ("ppo", 64, 4.0)
    _, quick = holdem_train.parse(PRESETS, [])
    assert (quick.learner.clip_eps, quick.learner.delta1, quick.best_k) == (0.2, 3.0, 5)   # the source's
    # the full preset trains against the equity bot too (docs/lab/holdem.md); the quick one does not
    _, full = holdem_train.parse(PRESETS, ["--preset", "full"])
    assert lib.anchor_names(full.anchors) == ("call", "allin", "random", "equity")
    assert "equity" not in lib.anchor_names(quick.anchors)
    _, mine = holdem_train.parse(PRESETS, ["--preset", "full", "--anchors", "call,fold"])
    assert lib.anchor_names(mine.anchors) == ("call", "fold")


def test_a_run_folder_from_an_older_version_is_refused_in_one_line(tmp_path):
    """A config.json with a field since removed (--anneal-lr) or without one added since
    (--anchors): --resume refuses it, saying so, and changes nothing in the folder."""
    _, cfg = holdem_train.parse(PRESETS, ["--runs-dir", str(tmp_path), "--run-name", "old"])
    RunDir(tmp_path, "holdem", cfg, resume=False).close()
    saved = tmp_path / "holdem" / "old" / "config.json"
    today = json.loads(saved.read_text())
    resumed = dataclasses.replace(cfg, resume=True)
    for old, message in (({**today, "anneal_lr": False}, "it has anneal_lr, a setting since removed"),
                         ({k: v for k, v in today.items() if k != "anchors"}, "it has no anchors, a setting added since")):
        saved.write_text(json.dumps(old))
        with pytest.raises(RunDirError) as refused:
            RunDir(tmp_path, "holdem", resumed, resume=True)
        line = str(refused.value)
        assert "\n" not in line and "was written by an older version of this pipeline" in line and message in line
        assert json.loads(saved.read_text()) == old
    saved.write_text(json.dumps(today))
    RunDir(tmp_path, "holdem", resumed, resume=True).close()


def test_the_lbr_curve_plays_the_same_deals_every_round_and_records_the_adjusted_figure(monkeypatch):
    """Each round's LBR uses one key (common random numbers: the curve's changes are the
    models'), while the matches against the baselines draw new deals each round; the row has
    the all-in adjusted figure beside the one as played."""
    lbr_keys, match_keys = [], []

    def fake_lbr(env, agent, params, key, *, hands):
        lbr_keys.append(np.asarray(jax.random.key_data(key)).tolist())
        return {"mean": 9.0, "ci95": 2.0, "allin": {"mean": 7.0, "ci95": 1.0}}

    def fake_evaluate(env, agent, params, key, *, num_deals):
        match_keys.append(np.asarray(jax.random.key_data(key)).tolist())
        pair = np.ones(2)
        return {name: bots_lib.HeadToHead(mean=1.0, ci95=0.5, seat_mean=pair, seat_ci95=pair, deal_returns=pair,
                                          num_deals=2, num_hands=4) for name in lib.BASELINES}

    monkeypatch.setattr(lib, "local_best_response", fake_lbr)
    monkeypatch.setattr(lib, "evaluate", fake_evaluate)
    config = _config(updates_per_round=2, lbr_every=1)
    learner = types.SimpleNamespace(params=lambda carry: {"w": np.zeros(2, np.float32)})
    ones = np.ones(2, np.float32)
    metrics = {k: ones for k in ("games_finished", "episode_return", "policy_loss", "value_loss", "entropy",
                                 "approx_kl", "clip_fraction")}
    carry = types.SimpleNamespace(episodes=np.int32(4), decisions=np.int32(8))
    rows = [lib.evaluate_round(config, None, learner, None, Chunk(step=step, carry=carry, metrics=metrics,
                                                                   seconds=1.0, keys=Keys.of(0), last_row=None)).row
            for step in (2, 4, 6)]
    assert len(lbr_keys) == 3 and lbr_keys[0] == lbr_keys[1] == lbr_keys[2]
    assert len({str(k) for k in match_keys}) == 3
    assert [r["round"] for r in rows] == [1, 2, 3]
    assert all(r["lbr_mbb_allin_adjusted"] == 7.0 and r["lbr_mbb_allin_adjusted_ci95"] == 1.0
               and r["lbr_mbb"] == 9.0 for r in rows)
