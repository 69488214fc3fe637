"""The learned player of a Hearts run folder (jaxgames.hearts.agent) and the terminal game
against it (jaxgames.hearts.play --opponent agent).

One run folder of ``python -m train.hearts`` (the Q♠ predictor over the 72 single atoms) is
written once for the module by the pipeline's own RunDir and checkpointer, with hand-set
weights; each test copies it before changing anything. A combined run's folder is made from a copy (its config, a selection.npz
and a checkpoint of weights written by the training's own checkpointer), as training a real one
(two stages first) would take minutes. Nothing depends on what the barely trained value
plays: the tests check that the loaded agent is the run's (its weights, its value), that it
plays only legal cards, passing included, that it is honest, and every way a folder can be
refused.

One compile of the agent's move for the module: every test plays the play CLI's own env (the
standard variant, one hand) with PIMC over ``WORLDS`` worlds, so the policy (cached per value,
env and worlds) and its jit (``jaxgames.terminal.jitted``) are shared.
"""

from __future__ import annotations

import io
import json
import pathlib
import shutil
import sys

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import pytest

from jaxgames.hearts import evaluate, features as feat, learned
from jaxgames.hearts import play as hp
from jaxgames.hearts.agent import AgentError, default_env, load_agent
from jaxgames.hearts.cards import card_name
from jaxgames.terminal import jitted

TINY = ["--predictor", "qs", "--rounds", "1", "--updates-per-round", "1", "--games-per-update", "2",
        "--eval-deals", "2", "--final-eval-deals", "2", "--feature-sizes", "1", "--hearts-feature-sizes", "1",
        "--max-active", "4", "--imperfect-deals", "0", "--no-progress"]
WORLDS = 2
#: the play CLI's default env (standard, passing, the moon, one hand): one compile for the module
ENV = hp._env("standard", True, None)
QS_SELECTED, HEARTS_SELECTED = (2, 7, 11), (0, 40)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> pathlib.Path:
    """A run folder as ``python -m train.hearts`` leaves it after one update (config.json by
    the pipeline's RunDir, a LinearTDCarry checkpoint by its checkpointer), with hand-set
    weights: training a real one costs a minute of compiles, and the notebook test loads the
    agent of a really trained run (tests/test_notebooks.py)."""
    from train import hearts as train_hearts
    from train.algos.linear_td import LinearTDCarry
    from train.common import RunDir

    root = tmp_path_factory.mktemp("runs")
    _, cfg = train_hearts.parse(train_hearts.PRESETS, TINY + ["--runs-dir", str(root), "--run-name", "t"])
    weights = jnp.linspace(-1.0, 1.0, feat.NUM_ATOMS_QS, dtype=jnp.float32)   # the 72 single Q♠ atoms
    with RunDir(cfg.runs_dir, "hearts", cfg, resume=False) as rundir:
        saver, _ = rundir.open_checkpoints(keep=2)
        saver.save(1, LinearTDCarry(weights=weights, games=jnp.int32(2), updates=jnp.int32(1)),
                   jax.random.key(0), cfg.to_json())
        saver.close()
    return root / "hearts" / "t"


@pytest.fixture
def copy(run, tmp_path):
    """``copy()``: a fresh copy of the run to damage, under runs/hearts/ like the original."""
    def make(name="c") -> pathlib.Path:
        target = tmp_path / "hearts" / name
        shutil.copytree(run, target)
        return target
    return make


def _combined(folder: pathlib.Path) -> tuple[pathlib.Path, np.ndarray]:
    """``folder`` made a combined run's: its config, selection.npz, and a newer checkpoint
    of 5 weights (a LinearTDCarry, saved by the training's checkpointer); the weights."""
    from train.algos.linear_td import LinearTDCarry
    from train.common.checkpoint import Checkpointer

    config = {**json.loads((folder / "config.json").read_text()), "predictor": "combined"}
    (folder / "config.json").write_text(json.dumps(config))
    np.savez(folder / "selection.npz", qs_selected=np.asarray(QS_SELECTED, np.int32),
             hearts_selected=np.asarray(HEARTS_SELECTED, np.int32))
    weights = np.asarray([3.0, -1.0, 0.5, 2.0, 1.25], np.float32)
    carry = LinearTDCarry(weights=jnp.asarray(weights), games=jnp.int32(8), updates=jnp.int32(4))
    saver = Checkpointer(folder / "checkpoints", keep=5)
    saver.save(4, carry, jax.random.key(0), json.dumps(config))
    saver.close()
    return folder, weights


def test_a_run_from_before_the_ranked_atoms_reads_the_sources_60(copy):
    """A config.json without ``rank_atoms`` (runs and the shipped agent from before 2026-12-02):
    the 60 and 88 atoms, its 60 weights, every move the unranked value's."""
    from train.algos.linear_td import LinearTDCarry
    from train.common.checkpoint import Checkpointer

    folder = copy("old")
    config = json.loads((folder / "config.json").read_text())
    assert config.pop("rank_atoms") is True
    (folder / "config.json").write_text(json.dumps(config))
    weights = np.linspace(-1.0, 1.0, 60, dtype=np.float32)
    saver = Checkpointer(folder / "checkpoints", keep=5)
    saver.save(3, LinearTDCarry(weights=jnp.asarray(weights), games=jnp.int32(4), updates=jnp.int32(3)),
               jax.random.key(0), json.dumps(config))
    saver.close()
    agent = load_agent(folder, perfect=True)
    assert agent.step == 3 and not agent.spec.ranks
    assert agent.spec == learned.ValueSpec("qs", feat.FeatureSpec(60, (1,), 4), feat.FeatureSpec(88, (1,), 4))
    # the largest weight is the last of the 60 atoms, named from the unranked set
    assert agent.top_features(1)[0][0::2] == (59, feat.atom_names("qs", 60)[59]) == (59, "right is void in spades")
    np.testing.assert_array_equal(np.asarray(agent.params), weights)


def step_dir(folder: pathlib.Path) -> pathlib.Path:
    return folder / str(max(int(p.name) for p in folder.iterdir() if p.name.isdigit()))


# -- loading ------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Sharding info not provided")  # orbax, on the raw read below
def test_loads_the_newest_checkpoints_weights(copy):
    folder = copy()
    (folder / "checkpoints" / "7.orbax-checkpoint-tmp-123").mkdir()  # a save cut short
    latest = step_dir(folder / "checkpoints")
    agent = load_agent(folder, env=ENV, num_worlds=WORLDS)
    env, policy, params = agent
    assert env is ENV and agent.checkpoint == latest and agent.step == int(latest.name) == 1
    assert agent.name == "agent c (qs predictor, update 1, PIMC 2 worlds)"
    assert agent.honest and not agent.perfect and agent.num_worlds == WORLDS and agent.predictor == "qs"
    assert agent.spec == learned.ValueSpec("qs", feat.FeatureSpec(72, (1,), 4), feat.FeatureSpec(100, (1,), 4))
    # the learner's weights inside the whole training carry (a LinearTDCarry), read without a target
    raw = ocp.PyTreeCheckpointer().restore(latest / "state")
    assert isinstance(params, jax.Array) and params.dtype == jnp.float32 and params.shape == (72,)
    np.testing.assert_array_equal(np.asarray(params), raw["carry"]["weights"])
    assert policy is learned.imperfect_policy(agent.spec, ENV, WORLDS)   # one policy: one compile
    assert load_agent(folder, env=ENV, num_worlds=WORLDS).policy is policy
    assert [w for _, w, _ in agent.top_features(3)] == sorted(np.asarray(params).tolist(), reverse=True)[:3]

    # the defaults: the paper variant, the config's worlds (else 20); the perfect-information search
    config = json.loads((folder / "config.json").read_text())
    plain = load_agent(folder)
    assert plain.env is default_env() and plain.env.variant == "paper"
    assert plain.num_worlds == config.get("worlds", 20) and plain.which == "latest"
    perfect = load_agent(folder, perfect=True)
    assert perfect.perfect and not perfect.honest and perfect.num_worlds is None
    assert perfect.policy is learned.perfect_policy(perfect.spec, default_env())
    assert perfect.name == "agent c (qs predictor, update 1, perfect information)"
    np.testing.assert_array_equal(np.asarray(perfect.params), np.asarray(params))
    with pytest.raises(ValueError, match="which must be one of latest .* got 'best'"):
        load_agent(folder, which="best")
    with pytest.raises(ValueError, match="num_worlds is for the PIMC player"):
        load_agent(folder, perfect=True, num_worlds=3)
    with pytest.raises(ValueError, match="num_worlds must be an integer >= 1, got 0"):
        load_agent(folder, num_worlds=0)
    with pytest.raises(ValueError, match="env must be a jaxgames.hearts Hearts env"):
        load_agent(folder, env="hearts")


def test_a_combined_run_reads_its_selection(copy):
    folder, weights = _combined(copy())
    agent = load_agent(folder, env=ENV, num_worlds=WORLDS)
    assert agent.step == 4 and agent.name == "agent c (combined predictor, update 4, PIMC 2 worlds)"
    assert agent.spec.qs_selected == QS_SELECTED and agent.spec.hearts_selected == HEARTS_SELECTED
    np.testing.assert_array_equal(np.asarray(agent.params), weights)
    top = agent.top_features(2)
    assert [i for i, _, _ in top] == [0, 3] and top[0][2].startswith("[Q♠] ") and top[1][2].startswith("[hearts] ")


# -- playing ------------------------------------------------------------------------------------


def test_it_plays_a_whole_hand_with_passing_legally(run):
    """The agent in all four seats of a standard hand: 12 passes and 52 cards, each legal."""
    agent = load_agent(run, env=ENV, num_worlds=WORLDS)
    step = jitted(ENV.step)
    state, moves = ENV.init(jax.random.key(3)), 0
    while not bool(state.terminated):
        action = agent.act(state, jax.random.key(moves))
        assert bool(state.legal_action_mask[action]), (moves, action)
        state = step(state, jnp.int32(action))
        moves += 1
    assert moves == 64 and int(np.asarray(state.points).sum()) in (26, 78)


def test_it_is_honest(run):
    """Redealing the cards the mover cannot see never changes its move (passing included)."""
    agent = load_agent(run, env=ENV, num_worlds=WORLDS)
    assert evaluate.honesty(ENV, [agent], jax.random.key(0), num_states=6, num_worlds=2, num_keys=1) == (0.0,)


# -- errors -------------------------------------------------------------------------------------


def _holdem_run(folder: pathlib.Path) -> pathlib.Path:
    """The config.json of a hold'em run (as train/common writes it: the game first)."""
    from train.holdem import Config as HoldemConfig

    run = folder.parent.parent / "holdem" / "x"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"game": "holdem", **json.loads(HoldemConfig().to_json())}))
    return run


def _holdem_run_without_game(folder: pathlib.Path) -> pathlib.Path:
    run = _holdem_run(folder)
    config = json.loads((run / "config.json").read_text())
    del config["game"]
    (run / "config.json").write_text(json.dumps(config))
    return run


def _edit_config(**changes):
    def edit(folder: pathlib.Path) -> pathlib.Path:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, **changes}))
        return folder
    return edit


def _no_checkpoint(folder: pathlib.Path) -> pathlib.Path:
    shutil.rmtree(folder / "checkpoints")
    (folder / "checkpoints" / "1.orbax-checkpoint-tmp-5").mkdir(parents=True)
    return folder


def _damage_data(folder: pathlib.Path) -> pathlib.Path:
    for f in (step_dir(folder / "checkpoints") / "state").rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    return folder


def _selection(**arrays):
    def make(folder: pathlib.Path) -> pathlib.Path:
        folder, _ = _combined(folder)
        np.savez(folder / "selection.npz", **arrays)
        return folder
    return make


def _corrupt_selection(folder: pathlib.Path) -> pathlib.Path:
    folder, _ = _combined(folder)
    (folder / "selection.npz").write_bytes(b"PK\x03\x04 not a zip file")
    return folder


def _no_selection(folder: pathlib.Path) -> pathlib.Path:
    folder, _ = _combined(folder)
    (folder / "selection.npz").unlink()
    return folder


@pytest.mark.parametrize("make_bad, message", [
    (lambda f: f.parent / "missing", r"no such run folder \(give the folder of a python -m train\.hearts run"),
    (lambda f: f.parent, r"has no config\.json; it holds the runs c: give one of them"),
    (_holdem_run, r"config\.json is the config of a holdem run, not a Hearts run; give a folder written by "
                  r"python -m train\.hearts"),
    (_holdem_run_without_game, r"is not the config of a Hearts run: it has no predictor, feature_sizes, "
                               r"hearts_feature_sizes, max_active \(it sits in holdem/: a holdem run\?\)"),
    (_edit_config(predictor="moon"), r"predictor must be one of qs, hearts, combined, got 'moon'"),
    (_edit_config(feature_sizes=[1, 5]), r"feature_sizes must be a list of sizes from 1 to 4, got \[1, 5\]"),
    (_edit_config(hearts_feature_sizes=3), r"hearts_feature_sizes must be a list of sizes from 1 to 4, got 3"),
    (_edit_config(max_active=0), r"max_active must be an integer from 1 to 24, got 0"),
    (_edit_config(worlds=0), r"worlds must be an integer >= 1, got 0"),
    (_edit_config(feature_sizes=[1, 2]), r"was saved by a run with feature_sizes \(1,\), but config\.json says "
                                         r"otherwise: the folder's files do not belong together"),
    (_no_selection, r"selection\.npz is missing: a combined run writes the features it selected there"),
    (_corrupt_selection, r"selection\.npz is unreadable \(.*\): its file is damaged"),
    (_selection(qs_selected=np.arange(3)), r"selection\.npz is not a combined run's selection: it has no "
                                           r"hearts_selected"),
    (_selection(qs_selected=np.asarray([0.5]), hearts_selected=np.arange(2)),
     r"qs_selected must be a 1-D integer array, got float64 \(1,\)"),
    (_selection(qs_selected=np.asarray([2, 99]), hearts_selected=np.arange(2)),
     r"selection\.npz does not fit config\.json's features \(qs_selected must be distinct ascending feature "
     r"indices in \[0, 72\)\)"),
    (_selection(qs_selected=np.arange(3), hearts_selected=np.arange(4)),
     r"holds no parameters that fit the 7 weights of the combined value that .*config\.json and selection\.npz "
     r"describe"),
    (_no_checkpoint, r"holds no checkpoint: checkpoints/ has no saved step .*--resume --run-name c"),
    (_damage_data, r"is unreadable: its files are damaged or incomplete"),
])
def test_bad_run_folders_give_a_clear_error(copy, make_bad, message):
    bad = make_bad(copy())
    with pytest.raises(AgentError, match=message) as e:
        load_agent(bad)
    assert "\n" not in str(e.value) and isinstance(e.value, ValueError)
    assert str(bad) in str(e.value)


# -- the command line ---------------------------------------------------------------------------


def test_cli_plays_a_hand_against_the_agent(run, monkeypatch, capsys):
    """``--opponent agent --run``: the agent's name at the start, in the three other seats, to
    the end of the hand (every card typed in order; those not legal are refused)."""
    lines = "".join(f"{r}{su}\n" for r in "23456789TJQKA" for su in "CDHS") * 12
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code = hp.main(["--opponent", "agent", "--run", str(run), "--worlds", str(WORLDS), "--seed", "1", "--ascii"])
    out = capsys.readouterr().out
    assert code == 0
    assert "the three others are agent t (qs predictor, update 1, PIMC 2 worlds). Seed 1." in out
    assert "Seat 1 passes 3 cards." in out and "Game over. Points:" in out
    assert out.count("takes the trick") + out.count("You take the trick") == 13


@pytest.mark.parametrize("argv, message", [
    (["--run", "runs/hearts/x"], "argument --run: only with --opponent agent"),
    (["--opponent", "rule", "--run", "runs/hearts/x"], "argument --run: only with --opponent agent"),
    (["--opponent", "agent"], "argument --run: --opponent agent needs the run folder of a trained agent"),
    (["--opponent", "rule", "--worlds", "5"], "argument --worlds: only with --opponent iie or agent"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(hp.main, argv, message)


@pytest.mark.parametrize("bad, message", [
    ("{missing}", "no such run folder"),
    ("{holdem}", "is the config of a holdem run, not a Hearts run"),
    ("{corrupt}", "selection.npz is unreadable"),
])
def test_cli_bad_run_exits_2_with_one_line(copy, tmp_path, bad, message, capsys):
    folders = {"missing": tmp_path / "missing", "holdem": _holdem_run(copy()),
               "corrupt": _corrupt_selection(copy("d"))}
    assert hp.main(["--opponent", "agent", "--run", bad.format(**folders)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith(hp.PROG + ": error: ")
    assert captured.out == ""


def test_settings_are_checked():
    with pytest.raises(ValueError, match="a run folder is for the opponent 'agent', not 'rule'"):
        hp.Settings(opponent="rule", run="runs/hearts/x")
    out = io.StringIO()
    with pytest.raises(hp.OpponentUnavailable, match="--opponent agent needs the run folder"):
        hp.Session(hp.Settings(opponent="agent"), out)
    assert out.getvalue() == ""
    assert card_name(0, ascii=True) == "2C"   # the CLI test types cards this way
