"""The C++ peer of the 2048 n-tuple TD benchmark (bench/ntuple_cpp/td2048.cpp) against the JAX
rules and learner, on hand-made boards: its afterstates and rewards equal
``jaxgames.game2048``'s, its 32 feature indices ``NTupleNetwork``'s, and one learning step
(greedy choice, TD(0) update of the previous afterstate) ``train.algos.ntuple_td``'s. Its
spawns follow the rules' distribution, and a short run learns (averages well above random
play's ~1,100).

The peer answers probe commands on stdin (``td2048 --check``); nothing here depends on the
bits its generator yields.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bench import game2048_train
from jaxgames.game2048.board import BoardModel
from jaxgames.game2048.ntuple import NTupleNetwork
from train.algos import ntuple_td as td

pytestmark = pytest.mark.skipif(shutil.which("g++") is None,
                                reason="g++ not found on PATH: cannot compile the C++ peer")

MODEL = BoardModel("2048")
NET = NTupleNetwork()  # the peer's network: the 4 standard 6-tuples, base 16
CFG = td.TDConfig(network=NET, num_games=1)  # the source's defaults: alpha 0.1, TD(0)

# compiled once for the module (the 256 MiB weight table makes eager calls slow)
_expand = jax.jit(jax.vmap(MODEL.expand))
_indices = jax.jit(NET.indices)
_greedy = jax.jit(lambda table, board: td.greedy_move(NET, table, board, MODEL))
_update = jax.jit(td.make_update(CFG, MODEL), donate_argnums=0)  # the table updated in place


def bd(rows) -> np.ndarray:
    return np.asarray(rows, np.int64).reshape(16)


BOARDS = {
    "pairs": bd([[1, 1, 2, 2], [0, 3, 3, 0], [4, 0, 4, 5], [1, 2, 3, 4]]),
    "runs": bd([[1, 1, 1, 1], [2, 2, 2, 0], [0, 0, 0, 1], [5, 6, 7, 8]]),
    "columns_only": bd([[1, 2, 3, 4], [1, 2, 3, 4], [2, 3, 4, 5], [2, 3, 4, 5]]),
    "one_tile": bd([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]),
    "big_tiles": bd([[11, 11, 10, 9], [12, 0, 0, 0], [13, 0, 1, 0], [14, 14, 0, 2]]),
    "distinct": bd([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 0, 1]]),
    "dead": bd([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]]),
}


def to_hex(board16) -> str:
    """The peer's board: nibble i holds cell i."""
    return f"{sum(int(e) << (4 * i) for i, e in enumerate(board16)):016x}"


def from_hex(word: str) -> np.ndarray:
    x = int(word, 16)
    return np.asarray([(x >> (4 * i)) & 0xF for i in range(16)], np.int64)


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    exe = game2048_train.build_peer(tmp_path_factory.mktemp("td2048"))

    def ask(commands: list[str]) -> list[list[str]]:
        out = subprocess.run([str(exe), "--check"], input="\n".join(commands) + "\n",
                             capture_output=True, text=True, check=True, timeout=60)
        lines = out.stdout.splitlines()
        assert len(lines) == len(commands), out.stderr
        return [ln.split() for ln in lines]

    ask.exe = exe
    return ask


def test_afterstates_and_rewards_equal_the_jax_rules(peer):
    answers = peer([f"expand {to_hex(b)}" for b in BOARDS.values()])
    afters, rewards, legals = (np.asarray(x) for x in
                               _expand(jnp.asarray(np.stack(list(BOARDS.values())), jnp.int8)))
    for k, ((name, board), ans) in enumerate(zip(BOARDS.items(), answers)):
        after, reward, legal = afters[k], rewards[k], legals[k]
        for a in range(4):
            cpp_after, cpp_reward = from_hex(ans[2 * a]), int(ans[2 * a + 1])
            cpp_legal = not np.array_equal(cpp_after, board)
            assert cpp_legal == bool(legal[a]), (name, a)
            if cpp_legal:
                np.testing.assert_array_equal(cpp_after, after[a], err_msg=f"{name} action {a}")
                assert cpp_reward == int(reward[a]), (name, a)


def test_feature_indices_equal_the_jax_network(peer):
    answers = peer([f"features {to_hex(b)}" for b in BOARDS.values()])
    for (name, board), ans in zip(BOARDS.items(), answers):
        jax_idx = np.asarray(_indices(jnp.asarray(board, jnp.int8)))
        # the same 32 weights; the order of the symmetries within a pattern is free
        assert sorted(int(i) for i in ans) == sorted(jax_idx.tolist()), name


def _set_weights(table: np.ndarray, idx, values) -> list[str]:
    cmds = []
    for i, v in zip(np.asarray(idx).tolist(), values):
        table[i] = np.float32(v)
        cmds.append(f"set {i} {float(np.float32(v))!r}")
    return cmds


@pytest.mark.parametrize("case", ["move", "game_over"])
def test_one_td_step_equals_ntuple_td(peer, case):
    prev = BOARDS["runs"] if case == "move" else BOARDS["distinct"]
    board = BOARDS["pairs"] if case == "move" else BOARDS["dead"]
    table = np.zeros(len(NET.patterns) * NET.table_size, np.float32)
    prev_idx = np.asarray(_indices(jnp.asarray(prev, jnp.int8)))
    cmds = _set_weights(table, prev_idx, 0.25 + 0.125 * np.arange(32))
    after, reward, legal = (np.asarray(x[0]) for x in _expand(jnp.asarray(board, jnp.int8)[None]))
    if legal.any():
        # make the lowest-reward legal move the greedy one, so values (not rewards) decide
        low = min(np.flatnonzero(legal), key=lambda a: reward[a])
        low_idx = np.asarray(_indices(jnp.asarray(after[low])))
        cmds += _set_weights(table, low_idx, np.full(32, 4.0))
    cmds.append(f"step {to_hex(prev)} {to_hex(board)}")
    cmds += [f"weight {i}" for i in prev_idx.tolist()]
    ans = peer(cmds)
    step, cpp_weights = ans[len(cmds) - 33], np.asarray([float(a[0]) for a in ans[-32:]])

    jtable = td.make_table(jnp.asarray(table), CFG.tc)
    a, j_after, j_reward, _, j_value, alive = _greedy(jtable, jnp.asarray(board, jnp.int8))
    # a one-game carry (the shapes td.init gives) holding P as the previous afterstate
    carry = td.TDCarry(table=jtable, board=jnp.asarray(board, jnp.int8)[None],
                       trace=jnp.asarray(prev_idx, jnp.int32)[None, None],
                       trace_reward=jnp.zeros((1, 1), jnp.float32), trace_len=jnp.ones(1, jnp.int32),
                       score=jnp.zeros(1, jnp.int32), moves=jnp.zeros(1, jnp.int32))
    new_carry, _ = _update(carry, jax.random.key(1))
    jax_weights = np.asarray(new_carry.table[jnp.asarray(prev_idx), 0])

    if case == "move":
        assert bool(alive)
        assert int(step[0]) == int(a) == low
        assert int(step[1]) == int(j_reward)
        np.testing.assert_allclose(float(step[2]), float(j_value), rtol=1e-6)
        np.testing.assert_array_equal(from_hex(step[3]), np.asarray(j_after))
    else:
        assert not bool(alive) and int(step[0]) == -1
    # the update moved P's weights, by the same amounts in both
    assert not np.allclose(cpp_weights, table[prev_idx])
    np.testing.assert_allclose(cpp_weights, jax_weights, rtol=1e-5, atol=1e-6)


def test_spawns_follow_the_rules(peer):
    board = BOARDS["runs"]                      # empty cells 7, 8, 9, 10
    n = 20_000
    (ans,) = peer([f"spawn {to_hex(board)} {n} 7"])
    counts, fours = np.asarray([int(x) for x in ans[:16]]), int(ans[16])
    empty = board == 0
    assert counts[~empty].sum() == 0 and counts.sum() == n
    expected = n / empty.sum()
    sd = np.sqrt(n * (1 / empty.sum()) * (1 - 1 / empty.sum()))
    assert np.all(np.abs(counts[empty] - expected) < 6 * sd), counts
    assert abs(fours / n - 0.1) < 6 * np.sqrt(0.09 / n), fours


def test_cpp_peer_learns(peer):
    # the bench's interface (SECONDS SEED) gives its JSON line
    out = game2048_train.run_peer(peer.exe, seconds=0.5, seed=1)
    assert out["moves"] > 0 and out["games"] > 0 and 0.5 <= out["seconds"] < 5, out
    # 1,500 games (~0.3 s): the last 1,000 average well above random play (~1,100)
    proc = subprocess.run([str(peer.exe), "60", "1", "1500"], capture_output=True, text=True,
                          check=True, timeout=120)
    out = json.loads(proc.stdout)
    assert out["games"] == 1500
    assert out["avg_score_last_1000"] > 3000, out


def test_bad_arguments_get_one_line_errors(peer):
    for args in (["x", "1"], ["1", "1", "0"], ["1"]):
        proc = subprocess.run([str(peer.exe), *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
