"""The trained agent of a run folder (jaxgames.hex.agent) and the CLI that plays it.

One tiny real run of ``train.hex`` (3x3, one self-play round) is trained once for the module;
each test copies it before changing anything. Nothing depends on which cell the agent picks,
except where the rules leave one answer: an immediate win found by a 32-simulation search.
"""

from __future__ import annotations

import io
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

import jaxgames
from jaxgames.hex import agent as agent_lib
from jaxgames.hex import from_sgf, from_cell_name, network, to_cell_name
from jaxgames.hex import play as hp
from jaxgames.hex.agent import AgentError, load_agent

N = 3
REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> pathlib.Path:
    """A finished ``python -m train.hex`` run on 3x3 (best/ and checkpoints/ written)."""
    from train.algos.alphazero import AZConfig
    from train.hex import Config, train

    root = tmp_path_factory.mktemp("runs")
    config = Config(board_size=N, phase1="none", rounds=1, updates_per_round=1, simulations=2,
                    uct_simulations=2, eval_games=2, final_eval_games=2, elo_games=0, sgf_games=0,
                    runs_dir=str(root), run_name="t", progress=False,
                    learner=AZConfig(games_per_update=2, sgd_steps=1, batch_size=4, buffer_size=64))
    config.validate()
    assert train(config)
    return root / "hex" / "t"


@pytest.fixture
def copy(run, tmp_path):
    """``copy()``: a fresh copy of the run to damage, under runs/hex/ like the original."""
    def make(name="c") -> pathlib.Path:
        target = tmp_path / "hex" / name
        shutil.copytree(run, target)
        return target
    return make


def leaves_equal(a, b) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert len(la) == len(lb) > 0
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def step_dir(folder: pathlib.Path) -> pathlib.Path:
    return folder / str(max(int(p.name) for p in folder.iterdir() if p.name.isdigit()))


def position(moves: str):
    """The 3x3 state after ``moves`` (cell names separated by spaces, Black first)."""
    env = jaxgames.make("hex", board_size=N)
    state = env.init(jax.random.key(0))
    for cell in moves.split():
        state = env.step(state, jnp.int32(from_cell_name(cell, N)))
    assert not bool(state.terminated)
    return env, state


def winning_moves(env, state) -> set[int]:
    """The moves that end the game at once with the mover's win (by the rules, not the agent)."""
    mover = int(state.current_player)
    wins = set()
    for a in np.flatnonzero(np.asarray(state.legal_action_mask)):
        after = env.step(state, jnp.int32(int(a)))
        if bool(after.terminated) and float(after.rewards[mover]) > 0:
            wins.add(int(a))
    return wins


# -- loading ------------------------------------------------------------------------------------


def test_loads_the_best_parameters_of_the_run(run):
    from train.common.checkpoint import Checkpointer  # the training's own reader

    agent = load_agent(run)
    env, policy, params = agent
    assert env.board_size == N and not env.swap
    assert agent.board_size == N and agent.network_kind == "source" and agent.search == "muzero"
    assert agent.simulations == 2          # eval_simulations 0: as in self-play
    assert agent.checkpoint == step_dir(run / "best")
    net = network.make(N)
    reader = Checkpointer(run / "best", keep=1)
    _, saved, _, _ = reader.restore(net.init(jax.random.key(1)), jax.random.key(0))
    reader.close()
    leaves_equal(params, saved)
    assert all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(params))
    assert callable(policy) and agent.name.startswith("agent t (update ")


def test_simulations_from_the_config_or_the_caller(copy):
    folder = copy()
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "eval_simulations": 5}))
    assert load_agent(folder).simulations == 5
    assert load_agent(folder, simulations=7).simulations == 7
    with pytest.raises(ValueError, match="simulations must be an int >= 1"):
        load_agent(folder, simulations=0)


@pytest.mark.filterwarnings("ignore:Sharding info not provided")  # orbax, on the raw read below
def test_without_best_the_newest_checkpoint_is_read(copy):
    folder = copy()
    shutil.rmtree(folder / "best")
    (folder / "checkpoints" / "7.orbax-checkpoint-tmp-123").mkdir()  # a save cut short
    agent = load_agent(folder)
    latest = step_dir(folder / "checkpoints")
    assert agent.checkpoint == latest and agent.step == int(latest.name)
    # the learner's model inside the whole training carry, read without any target
    raw = ocp.PyTreeCheckpointer().restore(latest / "state")
    leaves_equal(agent.params, raw["carry"]["average"])


# -- the policy ---------------------------------------------------------------------------------


@pytest.mark.parametrize("moves", ["", "b2", "a1 b2 c3", "a1 a2 b1 b2 c2 a3"])
def test_the_policy_plays_legal_moves(run, moves):
    agent = load_agent(run)
    _, state = position(moves)
    for seed in range(2):
        action = agent.act(state, jax.random.key(seed))
        assert bool(np.asarray(state.legal_action_mask)[action]), (moves, action)
        assert action < N * N


@pytest.mark.parametrize("moves", [
    "b1 a1 b2 c1",        # Black to move: a3 or b3 joins b1-b2 to the bottom row
    "a1 a2 b1 b2 a3",     # White to move: c1 or c2 joins a2-b2 to the right edge
])
def test_the_agent_takes_an_immediate_win(run, moves):
    agent = load_agent(run, simulations=32)
    env, state = position(moves)
    wins = winning_moves(env, state)
    assert wins and len(wins) < int(np.asarray(state.legal_action_mask).sum())
    for seed in range(3):
        action = agent.act(state, jax.random.key(seed))
        assert action in wins, (moves, to_cell_name(action, N), sorted(to_cell_name(a, N) for a in wins))


@pytest.mark.parametrize("moves", ["b1 a1 b2 c1", "a1 a2 b1 b2 a3"])
def test_a_run_with_eval_symmetry_gives_the_averaged_agent(copy, moves):
    """The run's evaluation averaged its network over the half turn: so does its agent, and
    it still takes an immediate win."""
    assert not load_agent(copy("plain")).symmetric       # a config without the field: plain
    folder = _edit_config(eval_symmetry=True)(copy())
    agent = load_agent(folder, simulations=32)
    assert agent.symmetric and agent.name.endswith("simulations, network averaged over the half turn)")
    env, state = position(moves)
    wins = winning_moves(env, state)
    for seed in range(2):
        assert agent.act(state, jax.random.key(seed)) in wins


def test_the_averaged_network_is_the_mean_over_the_half_turn(run):
    agent = load_agent(run)
    apply = agent_lib.agent_apply(agent.network.apply, N, True)
    assert agent_lib.agent_apply(agent.network.apply, N, False) is agent.network.apply
    _, state = position("a1 b2")
    obs = jnp.asarray(state.observation)[None]
    # jitted: op by op, every layer's primitives compile one at a time (35 s of the suite's time)
    net = jax.jit(agent.network.apply)
    logits, value = net(agent.params, obs)
    turned_logits, turned_value = net(agent.params, obs[:, ::-1, ::-1])
    log_probs, mean_value = jax.jit(apply)(agent.params, obs)
    np.testing.assert_allclose(mean_value, 0.5 * (value + turned_value), rtol=1e-5)
    p, q = jax.nn.softmax(logits[0]), jax.nn.softmax(turned_logits[0])
    q = jnp.concatenate([q[:N * N][::-1], q[N * N:]])
    np.testing.assert_allclose(jnp.exp(log_probs[0]), 0.5 * (p + q), rtol=1e-4, atol=1e-7)


# -- errors -------------------------------------------------------------------------------------


def _other_game(folder: pathlib.Path) -> pathlib.Path:
    from train.ten_half import Config as TenHalfConfig

    run = folder.parent.parent / "ten_half" / "x"
    run.mkdir(parents=True)
    (run / "config.json").write_text(TenHalfConfig().to_json())
    return run


def _damage_data(folder: pathlib.Path) -> pathlib.Path:
    for f in (step_dir(folder / "best") / "state").rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    return folder


def _damage_meta(folder: pathlib.Path) -> pathlib.Path:
    (step_dir(folder / "best") / "meta" / "metadata").write_text("{not json")
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


@pytest.mark.parametrize("make_bad, message", [
    (lambda f: f.parent / "missing", r"no such run folder"),
    (_file, r"is a file, not a run folder"),
    (lambda f: f.parent, r"has no config\.json; it holds the runs c: give one of them"),
    (lambda f: (f / "plots"), r"has no config\.json: not the folder of a python -m train\.hex run"),
    (_other_game, r"is not the config of a Hex run: it has no board_size, network, search, "
                  r"simulations \(it sits in ten_half/: a ten_half run\?\)"),
    (_edit_config(network="transformer"), r"network must be one of source, resnet"),
    (_edit_config(board_size=2), r"board_size must be an integer from 3 to 19"),
    (_edit_config(eval_symmetry="yes"), r"eval_symmetry must be true or false, got 'yes'"),
    (_edit_config(board_size=4), r"saved by a 3x3 run, but config\.json says board_size 4"),
    (_no_checkpoint, r"holds no checkpoint: neither best/ nor checkpoints/ has a saved step"),
    (_damage_data, r"is unreadable: its files are damaged or incomplete"),
    (_damage_meta, r"the metadata of checkpoint .* is unreadable"),
])
def test_bad_run_folders_give_a_clear_error(copy, make_bad, message):
    bad = make_bad(copy())
    with pytest.raises(AgentError, match=message) as e:
        load_agent(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)


def test_parameters_that_do_not_fit_the_config_are_refused(copy):
    # the same board in the saved metadata, another network in config.json
    folder = _edit_config(network="resnet")(copy())
    with pytest.raises(AgentError, match=r"holds no parameters that fit the 3x3 resnet network"):
        load_agent(folder)


def _resnet_run(folder: pathlib.Path, *, blocks: int, channels: int) -> tuple[pathlib.Path, dict]:
    """The run's folder turned into a resnet run of that size: config.json says so and best/
    holds parameters of that network, saved as training saves them."""
    from train.common.checkpoint import Checkpointer

    _edit_config(network="resnet", resnet_blocks=blocks, resnet_channels=channels)(folder)
    params = network.make(N, kind="resnet", blocks=blocks, channels=channels).init(jax.random.key(3))
    shutil.rmtree(folder / "best")
    writer = Checkpointer(folder / "best", keep=1)
    writer.save(5, params, jax.random.key(0), (folder / "config.json").read_text(), extra={"vs_uct": 1.0})
    writer.close()
    return folder, params


def test_a_resnet_run_loads_with_its_own_size(copy):
    folder, saved = _resnet_run(copy(), blocks=1, channels=4)
    agent = load_agent(folder)
    assert agent.network_kind == "resnet" and agent.step == 5
    leaves_equal(agent.params, saved)
    # not the default tower: its size is the config's
    assert network.num_params(agent.params) < network.num_params(
        jax.eval_shape(network.make(N, kind="resnet").init, jax.random.key(0)))
    assert 0 <= agent.act(position("a1")[1]) < N * N


def test_a_resnet_size_that_does_not_fit_is_refused(copy):
    folder, _ = _resnet_run(copy(), blocks=1, channels=4)
    _edit_config(resnet_channels=8)(folder)
    with pytest.raises(AgentError, match=r"holds no parameters that fit the 3x3 resnet network "
                                         r"\(1 blocks, 8 channels\)"):
        load_agent(folder)
    _edit_config(resnet_blocks=-1)(folder)
    with pytest.raises(AgentError, match=r"config\.json: resnet_blocks must be an integer >= 0, got -1"):
        load_agent(folder)


# -- the command line ---------------------------------------------------------------------------


def test_cli_plays_a_game_against_the_agent(run, tmp_path, monkeypatch, capsys):
    """Every cell typed in order (occupied ones are refused, the next line is read) until
    someone connects; the board size comes from the run."""
    cells = [to_cell_name(a, N) for a in range(N * N)]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(c + "\n" for c in cells)))
    path = tmp_path / "agent.sgf"
    code = hp.main(["--opponent", "agent", "--checkpoint", str(run), "--seed", "1",
                    "--sgf", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    assert f"Hex {N}x{N}: you are Black" in out and "agent t (update " in out
    assert "Game over:" in out
    record = from_sgf(path.read_text())
    assert record.board_size == N and record.properties["PW"].startswith("agent t")
    env = jaxgames.make("hex", board_size=N)
    state = env.init(jax.random.key(0))
    for a in record.actions:
        state = env.step(state, jnp.int32(a))
    assert bool(state.terminated)


@pytest.mark.parametrize("argv, message", [
    (["--checkpoint", "{missing}"], "no such run folder"),
    (["--checkpoint", "{run}", "--board-size", "5"], "--board-size 5: the agent of"),
])
def test_cli_bad_checkpoint_exits_2_with_one_line(run, tmp_path, argv, message, capsys):
    argv = [a.format(missing=tmp_path / "missing", run=run) for a in argv]
    assert hp.main(["--opponent", "agent", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith(hp.PROG + ": error: ")
    assert captured.out == ""


def test_cli_damaged_checkpoint_from_a_shell(copy, tmp_path):
    """A process of its own: one line on stderr, exit 2, no traceback (nor orbax's noise)."""
    bad = _damage_data(copy())
    # the process a person starts: without the suite's persistent compilation cache
    # (tests/conftest.py), whose every read XLA:CPU logs on stderr on some CPUs (AMD Zen 4: its
    # compiled programs name the tuning flags +prefer-no-gather/scatter, which the host's
    # feature list lacks)
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "jaxgames.hex.play", "--opponent", "agent",
                           "--checkpoint", str(bad)], capture_output=True, text=True, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, timeout=120,
                          env={**env, "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", "")})
    assert done.returncode == 2, done.stderr
    lines = [l for l in done.stderr.splitlines() if not l.startswith("WARNING:")]
    assert len(lines) == 1 and "is unreadable" in lines[0] and str(bad) in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".sgf"]  # no game, no record
