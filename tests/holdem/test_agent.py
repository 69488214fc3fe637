"""The trained agent of a run folder (jaxgames.holdem.agent) and the terminal game against it.

One tiny real run of ``python -m train.holdem`` (two rounds of two updates, 16 games x 4
decisions: tests/conftest.py's ``tiny_holdem_run``, which the pipeline's test reads too) is
trained once; each test copies it before changing anything.
Nothing depends on what the barely trained network plays: the tests check that the loaded
agent is the run's (its parameters, the trainer's own probabilities), that it only plays legal
actions, and every way a folder can be refused.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import pathlib
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import pytest

from jaxgames.holdem import bots
from jaxgames.holdem import network as net_lib
from jaxgames.holdem import play as hp
from jaxgames.holdem.agent import AgentError, load_agent, network_policy, network_probs
from jaxgames.player import Player

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tiny_holdem_run) -> pathlib.Path:
    """A finished ``python -m train.holdem`` run named "whole" (best/ and checkpoints/ written)."""
    return tiny_holdem_run.folder


@pytest.fixture
def copy(run, tmp_path):
    """``copy()``: a fresh copy of the run to damage, under runs/holdem/ like the original."""
    def make(name="c") -> pathlib.Path:
        target = tmp_path / "holdem" / name
        shutil.copytree(run, target)
        return target
    return make


@pytest.fixture(scope="module")
def trainer(run):
    """The trainer's own ``(env, net, learner, agent)`` for the run's config."""
    from train.games.holdem import build
    from train.holdem import Config

    config = json.loads((run / "config.json").read_text())
    return build(Config(network=config["network"], tower=config["tower"]))


def leaves_equal(a, b) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert len(la) == len(lb) > 0
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def step_dir(folder: pathlib.Path) -> pathlib.Path:
    return folder / str(max(int(p.name) for p in folder.iterdir() if p.name.isdigit()))


def some_states(env, count: int = 12, seed: int = 0) -> list:
    """``count`` unfinished states of random hands (random legal actions), both seats to act,
    every street that comes up."""
    rng = np.random.default_rng(seed)
    step = jax.jit(env.step)
    states = []
    for hand in itertools.count():
        state = env.init(jax.random.key(hand))
        while not bool(state.terminated) and len(states) < count:
            states.append(state)
            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            # all-in and fold (which end hands at once) rarely, so later streets come up
            weights = np.where(np.isin(legal, [0, 8]), 0.05, 1.0)
            state = step(state, jnp.int32(rng.choice(legal, p=weights / weights.sum())))
        if len(states) >= count:
            return states


# -- loading ------------------------------------------------------------------------------------


def test_best_reads_the_best_parameters_of_the_run(run):
    from train.common.checkpoint import Checkpointer  # the training's own reader

    agent = load_agent(run, which="best")
    env, policy, params = agent
    assert agent.network_size == "small" and agent.tower == "dense" and agent.which == "best"
    best_step = step_dir(run / "best")   # the end of round 1 or of round 2 (two updates each)
    assert agent.checkpoint == best_step and agent.step == int(best_step.name) and agent.step in (2, 4)
    assert agent.name == f"agent whole (update {agent.step}, best parameters)"
    net = net_lib.make_network("small")
    reader = Checkpointer(run / "best", keep=1)
    _, saved, _, _ = reader.restore(net_lib.init_params(net, jax.random.key(1)), jax.random.key(0))
    reader.close()
    leaves_equal(params, saved)
    assert set(params) == {"params"}        # the flax variables, as net.apply takes them
    assert all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(params))
    assert callable(policy) and callable(agent.probs) and env.num_players == 2
    assert load_agent(run, which="best").policy is policy  # one policy per network in a process: one compile


def test_a_relative_path_loads_as_the_absolute_one(run, monkeypatch):
    # orbax read a relative step folder's metadata as missing: "damaged or incomplete"
    monkeypatch.chdir(run.parent)
    for which in ("latest", "best"):
        agent = load_agent(run.name, which=which)
        leaves_equal(agent.params, load_agent(run, which=which).params)
        assert str(agent.checkpoint).startswith(run.name)          # the path as given


@pytest.mark.filterwarnings("ignore:Sharding info not provided")  # orbax, on the raw read below
def test_the_default_reads_the_newest_checkpoint(copy):
    folder = copy()
    (folder / "checkpoints" / "7.orbax-checkpoint-tmp-123").mkdir()  # a save cut short
    latest = step_dir(folder / "checkpoints")
    agent = load_agent(folder)
    assert agent.checkpoint == latest and agent.which == "latest"
    assert agent.name == f"agent c (update {latest.name}, latest parameters)"
    # the learner's network inside the whole training carry (a PPOCarry), read without a target
    raw = ocp.PyTreeCheckpointer().restore(latest / "state")
    leaves_equal(agent.params, raw["carry"]["params"])
    # without best/, "best" reads the newest checkpoint too
    shutil.rmtree(folder / "best")
    fallback = load_agent(folder, which="best")
    assert fallback.checkpoint == latest and fallback.name.endswith("latest parameters)")
    leaves_equal(fallback.params, agent.params)
    with pytest.raises(ValueError, match="which must be one of latest, best, got 'newest'"):
        load_agent(folder, which="newest")


# -- the policy ---------------------------------------------------------------------------------


def test_probs_and_policy_are_the_trainers(run, trainer):
    """The agent's probabilities are the trainer's ``learner.probs`` for the same parameters,
    and with the same key it samples the same action."""
    agent = load_agent(run)
    _, _, learner, _ = trainer
    theirs_probs, theirs_policy = jax.jit(learner.probs), jax.jit(learner.policy)
    states = some_states(agent.env)
    assert {int(s.current_player) for s in states} == {0, 1} and len({int(s.street) for s in states}) > 1
    for i, state in enumerate(states):
        key = jax.random.key(i)
        mine = agent.action_probs(state)
        np.testing.assert_allclose(mine, np.asarray(theirs_probs(agent.params, state, key)), rtol=1e-6, atol=1e-8)
        legal = np.asarray(state.legal_action_mask)
        assert np.all(mine[~legal] == 0) and abs(mine.sum() - 1) < 1e-5
        assert int(agent.jitted_policy(agent.params, state, key)) == int(theirs_policy(agent.params, state, key))
    # the functions rebuilt on the trainer's own env and network give the same numbers
    env, net = trainer[0], trainer[1]
    np.testing.assert_allclose(np.asarray(network_probs(env, net)(agent.params, states[-1], None)),
                               agent.action_probs(states[-1]), rtol=1e-6, atol=1e-8)
    assert int(network_policy(env, net)(agent.params, states[-1], jax.random.key(5))) in \
        np.flatnonzero(np.asarray(states[-1].legal_action_mask))


def test_it_plays_legal_actions_against_the_call_bot(run):
    """A duplicate match against the call bot: every action the agent takes is legal (checked
    inside the jitted match), and the match is the zero-sum game's."""
    agent = load_agent(run)
    seen = []

    def record(legal, action):  # one decision, or a batch of them (the match is vmapped)
        legal, action = np.asarray(legal).reshape(-1, legal.shape[-1]), np.asarray(action).reshape(-1)
        seen.append(legal[np.arange(action.size), action])

    def checked(params, state, key):
        action = agent.policy(params, state, key)
        jax.debug.callback(record, state.legal_action_mask, action)
        return action

    watched = Player("watched agent", checked, agent.params, probs=agent.probs)
    env = agent.env
    result = bots.head_to_head(env, watched, bots.make_bot(env, "call"), jax.random.key(0), num_deals=4)
    assert result.num_hands == 8 and np.all(np.abs(result.deal_returns) <= 2 * env.stack)
    taken = np.concatenate(seen)
    assert taken.size > 0 and taken.all()


def test_local_best_response_takes_the_agent(run):
    """LBR tracks the agent's range from ``agent.probs``: the loaded agent is enough."""
    from jaxgames.holdem import LocalBestResponse

    agent = load_agent(run)
    returns = np.asarray(LocalBestResponse(agent.env, agent, num_deals=2)(agent.params, jax.random.key(0)).returns)
    assert returns.shape == (2, 2) and np.all(np.isfinite(returns))
    assert np.all(np.abs(returns) <= agent.env.stack)


# -- errors -------------------------------------------------------------------------------------


def _hex_run(folder: pathlib.Path) -> pathlib.Path:
    """The config.json of a Hex run (as train/common writes it: the game first)."""
    from train.hex import Config as HexConfig

    run = folder.parent.parent / "hex" / "x"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"game": "hex", **json.loads(HexConfig().to_json())}))
    return run


def _hex_run_without_game(folder: pathlib.Path) -> pathlib.Path:
    run = _hex_run(folder)
    config = json.loads((run / "config.json").read_text())
    del config["game"]
    (run / "config.json").write_text(json.dumps(config))
    return run


def _damage_data(folder: pathlib.Path) -> pathlib.Path:
    for f in (step_dir(folder / "checkpoints") / "state").rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    return folder


def _damage_meta(folder: pathlib.Path) -> pathlib.Path:
    (step_dir(folder / "checkpoints") / "meta" / "metadata").write_text("{not json")
    return folder


def _no_checkpoint(folder: pathlib.Path) -> pathlib.Path:
    shutil.rmtree(folder / "best")
    shutil.rmtree(folder / "checkpoints")
    (folder / "best").mkdir()
    (folder / "checkpoints" / "1.orbax-checkpoint-tmp-5").mkdir(parents=True)
    return folder


def _edit_config(**changes):
    def edit(folder: pathlib.Path) -> pathlib.Path:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, **changes}))
        return folder
    return edit


def _file(folder: pathlib.Path) -> pathlib.Path:
    (folder.parent / "afile").write_text("")
    return folder.parent / "afile"


def _not_json(folder: pathlib.Path) -> pathlib.Path:
    (folder / "config.json").write_text("{")
    return folder


@pytest.mark.parametrize("make_bad, message", [
    (lambda f: f.parent / "missing", r"no such run folder \(give the folder of a python -m train\.holdem run"),
    (_file, r"is a file, not a run folder"),
    (lambda f: f.parent, r"has no config\.json; it holds the runs c: give one of them"),
    (lambda f: (f / "plots"), r"has no config\.json: not the folder of a python -m train\.holdem run"),
    (_not_json, r"config\.json is unreadable"),
    (_hex_run, r"config\.json is the config of a hex run, not a hold'em run; give a folder written by "
               r"python -m train\.holdem"),
    (_hex_run_without_game, r"is not the config of a hold'em run: it has no tower \(it sits in hex/: a hex run\?\)"),
    (_edit_config(network="huge"), r"network must be one of small, source, got 'huge'"),
    (_edit_config(tower="wide"), r"tower must be one of dense, conv \(or empty\), got 'wide'"),
    (_edit_config(tower="conv"), r"was saved by a run of the small dense network, but config\.json says "
                                 r"small conv: the folder's files do not belong together"),
    (_no_checkpoint, r"holds no checkpoint: checkpoints/ has no saved step .*--resume --run-name c"),
    (_damage_data, r"is unreadable: its files are damaged or incomplete"),
    (_damage_meta, r"the metadata of checkpoint .* is unreadable"),
])
def test_bad_run_folders_give_a_clear_error(copy, make_bad, message):
    bad = make_bad(copy())
    with pytest.raises(AgentError, match=message) as e:
        load_agent(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)


def test_best_without_checkpoints_reads_best(copy):
    folder = copy()
    shutil.rmtree(folder / "checkpoints")
    assert load_agent(folder, which="best").which == "best"          # best/ is still there
    with pytest.raises(AgentError, match=r"holds no checkpoint: checkpoints/ has no saved step"):
        load_agent(folder)


# -- the command line ---------------------------------------------------------------------------


def test_cli_plays_hands_against_the_agent(run, monkeypatch, capsys):
    """``--opponent agent --run``: the agent's name at the start, its actions signed
    "agent"; ``--checkpoint`` is the same flag (as in jaxgames.hex.play)."""
    for flag in ("--run", "--checkpoint"):
        monkeypatch.setattr(sys, "stdin", io.StringIO("check\ncall\n" * 60))
        code = hp.main(["--opponent", "agent", flag, str(run), "--hands", "2", "--seed", "1"])
        out = capsys.readouterr().out
        assert code == 0
        assert "Heads-up no-limit hold'em against agent whole (update 4, latest parameters) (seed 1)" in out
        assert "Computer (agent): " in out and "Session over: 2 hands" in out


@pytest.mark.parametrize("argv, message", [
    (["--run", "{missing}"], "no such run folder"),
    (["--run", "{hex}"], "is the config of a hex run, not a hold'em run"),
])
def test_cli_bad_run_exits_2_with_one_line(copy, tmp_path, argv, message, capsys):
    hex_run = _hex_run(copy())
    argv = [a.format(missing=tmp_path / "missing", hex=hex_run) for a in argv]
    assert hp.main(["--opponent", "agent", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith(hp.PROG + ": error: ")
    assert captured.out == ""


def test_profile_cli_reads_the_runs_agent(run, tmp_path, capsys):
    """python -m jaxgames.holdem.profile on a run: a table headed by the agent's name; a folder
    that is not a hold'em run: one line, exit status 2."""
    from jaxgames.holdem import profile as pf
    assert pf.main([str(run), "--deals", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"## {load_agent(run).name}"
    assert sum(line.startswith("| ") for line in out) == 2 + len(pf.SITUATIONS)
    with pytest.raises(SystemExit) as e:
        pf.main([str(tmp_path / "missing")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m jaxgames.holdem.profile: error: ") and "no such run folder" in err[-1]


def test_cli_damaged_checkpoint_from_a_shell(copy, tmp_path):
    """A process of its own: one line on stderr, exit 2, no traceback (nor orbax's noise)."""
    bad = _damage_data(copy())
    # without the suite's persistent compilation cache (see tests/hex/test_agent.py)
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "jaxgames.holdem.play", "--opponent", "agent",
                           "--run", str(bad)], capture_output=True, text=True, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, timeout=120,
                          env={**env, "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", "")})
    assert done.returncode == 2, done.stderr
    lines = [l for l in done.stderr.splitlines() if not l.startswith("WARNING:")]
    assert len(lines) == 1 and "is unreadable" in lines[0] and str(bad) in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_agent_from_a_config_and_parameters_is_the_run_folders(run):
    """make_agent (what jaxgames.pretrained builds a shipped agent with) on the run's config
    and parameters plays as load_agent's agent; a config without a good network is refused."""
    from jaxgames.holdem.agent import make_agent, network_settings, params_like

    loaded = load_agent(run)
    config = json.loads((run / "config.json").read_text())
    made = make_agent(config, loaded.params, name="made")
    assert made.run_dir is None and made.step is None and made.name == "made"
    assert made.policy is loaded.policy and made.network_size == loaded.network_size
    assert jax.tree_util.tree_structure(params_like(config)) == jax.tree_util.tree_structure(loaded.params)
    for bad, message in (({"tower": ""}, "card.json is not the config of a hold'em run: it has no network"),
                         ({"network": "huge", "tower": ""}, "card.json: network must be one of"),
                         ({"network": "small", "tower": ["dense"]}, "card.json: tower must be one of")):
        with pytest.raises(AgentError, match=message):
            network_settings(bad, where="card.json")
