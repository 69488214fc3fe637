"""n-tuple network, afterstate TD(0)/TD(λ) (with TC and optimistic init), and expectimax,
against independent NumPy computations on hand-built inputs.

Nothing here depends on exact PRNG bits: random keys only drive tile spawns, and the tests
assert only on what a spawn cannot change (weights, the afterstate before the spawn, scores,
counters), or on properties every spawn satisfies.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.game2048 import players
from jaxgames.game2048.board import BoardModel
from jaxgames.game2048.ntuple import DEFAULT_PATTERNS, NTupleNetwork
from jaxgames.search import expectimax
from train.algos import ntuple_td as td

MODEL = BoardModel("2048")

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3

# -- independent NumPy reference ------------------------------------------------------------


def np_transforms(board16) -> list[np.ndarray]:
    """The 8 rotations / reflections of a 4x4 board (flat [16] each), via rot90 / transpose."""
    g = np.asarray(board16).reshape(4, 4)
    return [np.rot90(m, k).reshape(16).copy() for m in (g, g.T) for k in range(4)]


def np_indices(board16, patterns, base) -> np.ndarray:
    """Flat weight indices, pattern-major, 8 per pattern: cell j of a tuple is digit j (base**j)."""
    board = np.minimum(np.asarray(board16, np.int64), base - 1)
    cell_grids = np_transforms(np.arange(16))  # grid[t][pos] = original cell at pos after t
    size = base ** len(patterns[0])
    out = []
    for pi, p in enumerate(patterns):
        for g in cell_grids:
            cells = g[list(p)]
            out.append(pi * size + sum(int(board[c]) * base**j for j, c in enumerate(cells)))
    return np.asarray(out, np.int64)


def np_value(weights, board16, patterns, base) -> float:
    return float(np.asarray(weights, np.float64)[np_indices(board16, patterns, base)].sum())


def np_slide_line(line):
    """Slide one line toward index 0 (the wall): (new line, reward)."""
    tiles = [int(x) for x in line if x]
    out, reward, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(tiles[i] + 1)
            reward += 2 ** (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (4 - len(out)), reward


def np_slide(board16, action):
    """(afterstate int [16], reward, legal) of one move, in plain NumPy/Python."""
    g = np.asarray(board16, np.int64).reshape(4, 4)
    m = {UP: g.T, RIGHT: g[:, ::-1], DOWN: g.T[:, ::-1], LEFT: g}[action]
    lines, rewards = zip(*(np_slide_line(row) for row in m))
    n = np.asarray(lines, np.int64)
    back = {UP: n.T, RIGHT: n[:, ::-1], DOWN: n[:, ::-1].T, LEFT: n}[action]
    return back.reshape(16).copy(), int(sum(rewards)), not np.array_equal(back, g)


def np_action_values(board16, depth, V):
    """Brute-force expectimax: (Q [4] (nan where illegal), legal [4])."""
    q, legal = np.full(4, np.nan), np.zeros(4, bool)
    for a in range(4):
        after, r, ok = np_slide(board16, a)
        legal[a] = ok
        if ok:
            q[a] = r + np_chance_value(after, depth - 1, V)
    return q, legal


def np_chance_value(after, depth, V):
    if depth == 0:
        return V(after)
    empty = np.flatnonzero(after == 0)
    total = 0.0
    for c in empty:
        for tile, p in ((1, 0.9), (2, 0.1)):
            child = after.copy()
            child[c] = tile
            q, legal = np_action_values(child, depth, V)
            total += p / len(empty) * (q[legal].max() if legal.any() else 0.0)
    return total


def np_greedy(board16, V):
    """1-ply greedy on reward + V(afterstate): (action, afterstate, reward, margin to 2nd best)."""
    cands = []
    for a in range(4):
        after, r, ok = np_slide(board16, a)
        if ok:
            cands.append((r + V(after), a, after, r))
    cands.sort(key=lambda t: -t[0])
    margin = cands[0][0] - cands[1][0] if len(cands) > 1 else np.inf
    return cands[0][1], cands[0][2], cands[0][3], margin


def bd(rows) -> np.ndarray:
    return np.asarray(rows, np.int64).reshape(16)


# A position with no legal move (no empty cell, no equal neighbours).
DEAD = bd([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]])

# -- module-level networks and jitted functions (compiled once) -------------------------------

TINY = NTupleNetwork(patterns=((0, 1),), base=16)        # 8 features, 256 weights
TP, TB = TINY.patterns, TINY.base
SYM_NETS = (NTupleNetwork(patterns=DEFAULT_PATTERNS, base=8),
            NTupleNetwork(patterns=((0, 1, 6), (2, 7, 11), (5, 9, 14)), base=16))

_value_jit = {net: jax.jit(lambda w, b, net=net: net.value(w, b)) for net in SYM_NETS + (TINY,)}
_indices_jit = {net: jax.jit(lambda b, net=net: net.indices(b)) for net in SYM_NETS + (TINY,)}

ALPHA = 0.5
CFG0 = td.TDConfig(network=TINY, num_games=1, learning_rate=ALPHA)
CFG_LAM = td.TDConfig(network=TINY, num_games=1, learning_rate=ALPHA, lam=0.6, trace_length=3)
CFG_TC = td.TDConfig(network=TINY, num_games=1, learning_rate=ALPHA, tc=True)
_update = {name: jax.jit(td.make_update(c, MODEL)) for name, c in
           (("td0", CFG0), ("lam", CFG_LAM), ("tc", CFG_TC))}
_CFGS = {"td0": CFG0, "lam": CFG_LAM, "tc": CFG_TC}

GAME = players.search_game()
_av_jit = {d: jax.jit(lambda w, b, d=d: expectimax.action_values(
    GAME, lambda x: TINY.value(w, x), b, d)) for d in (1, 2)}


def tiny_weights(seed, scale=1.0) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=TINY.table_size) * scale).astype(np.float32)


def tiny_V(weights):
    return lambda b: np_value(weights, b, TP, TB)


def hand_carry(name, weights, board, trace_boards, trace_reward=None, trace_len=None,
               score=0, moves=0, tc_error=None, tc_abs=None):
    """A one-game carry of the right shapes/dtypes (from ``init``) with hand-chosen contents."""
    cfg = _CFGS[name]
    base = td.init(cfg, MODEL, jax.random.key(0))
    h = base.trace.shape[1]
    trace = np.zeros((1, h, TINY.num_features), np.int32)
    for i, tb in enumerate(trace_boards):           # given oldest first, placed newest last
        trace[0, h - len(trace_boards) + i] = np_indices(tb, TP, TB)
    rew = np.zeros((1, h), np.float32)
    if trace_reward is not None:
        rew[0, h - len(trace_reward):] = trace_reward
    n = len(trace_boards) if trace_len is None else trace_len
    table = td.make_table(jnp.asarray(weights, jnp.float32), cfg.tc,
                          None if tc_error is None else jnp.asarray(tc_error, jnp.float32),
                          None if tc_abs is None else jnp.asarray(tc_abs, jnp.float32))
    return base.replace(
        table=table,
        board=jnp.asarray(np.asarray(board, np.int8).reshape(1, 16)),
        trace=jnp.asarray(trace), trace_reward=jnp.asarray(rew),
        trace_len=jnp.full(1, n, jnp.int32), score=jnp.full(1, score, jnp.int32),
        moves=jnp.full(1, moves, jnp.int32))


def check_spawned_once(new_board, after):
    """``new_board`` is ``after`` plus exactly one small/big tile in an empty cell."""
    new_board = np.asarray(new_board, np.int64)
    diff = np.flatnonzero(new_board != after)
    assert len(diff) == 1, (new_board, after)
    assert after[diff[0]] == 0 and new_board[diff[0]] in (1, 2)


# -- the network ------------------------------------------------------------------------------

SYM_BOARDS = [
    bd([[1, 2, 3, 4], [0, 0, 5, 0], [6, 0, 0, 1], [0, 7, 0, 2]]),
    bd([[11, 0, 0, 0], [3, 1, 0, 0], [2, 0, 0, 0], [1, 0, 0, 1]]),
    bd([[5, 4, 3, 2], [1, 2, 3, 4], [7, 6, 5, 9], [0, 0, 1, 0]]),
    bd([[17, 16, 15, 14], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]]),  # past the base: clipped
] + [np.random.default_rng(7 + i).integers(0, 12, 16) for i in range(4)]


@pytest.mark.parametrize("net", SYM_NETS, ids=["default-base8", "3tuples-base16"])
def test_value_invariant_under_the_8_symmetries(net):
    w = jnp.asarray(np.random.default_rng(1).normal(size=len(net.patterns) * net.table_size)
                    .astype(np.float32))
    boards = np.stack([t for b in SYM_BOARDS for t in np_transforms(b)]).astype(np.int8)
    v = np.asarray(_value_jit[net](w, jnp.asarray(boards))).reshape(len(SYM_BOARDS), 8)
    np.testing.assert_allclose(v, np.repeat(v[:, :1], 8, axis=1), rtol=1e-5, atol=1e-4)
    # the transformed boards really differ (the check is not vacuous) ...
    assert len({tuple(t) for t in np_transforms(SYM_BOARDS[0])}) == 8
    # ... and the value does react to a non-symmetric change of one cell
    changed = SYM_BOARDS[0].copy()
    changed[6] = 3
    v2 = float(_value_jit[net](w, jnp.asarray(changed.astype(np.int8))))
    assert abs(v2 - v[0, 0]) > 1e-3
    # the batched value agrees with the independent NumPy one
    for b, vb in zip(SYM_BOARDS, v[:, 0]):
        np.testing.assert_allclose(vb, np_value(np.asarray(w), b, net.patterns, net.base),
                                   rtol=1e-5, atol=1e-4)


def test_indices_of_a_pair_pattern_by_hand():
    b = bd([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 0]])
    idx = np.asarray(_indices_jit[TINY](jnp.asarray(b.astype(np.int8))))
    assert idx.shape == (8,) and idx.dtype == np.int32
    # pattern (0, 1) seen on all 8 symmetries = the 8 (corner, edge neighbour) pairs
    pairs = [(0, 1), (0, 4), (3, 2), (3, 7), (12, 13), (12, 8), (15, 14), (15, 11)]
    expected = sorted(int(b[a]) + 16 * int(b[c]) for a, c in pairs)
    assert sorted(idx.tolist()) == expected
    assert sorted(np_indices(b, TP, TB).tolist()) == expected
    # batched leading dimensions work too
    many = np.stack([b, b[::-1]]).astype(np.int8)
    idx2 = np.asarray(_indices_jit[TINY](jnp.asarray(many)))
    assert idx2.shape == (2, 8)
    assert sorted(idx2[1].tolist()) == sorted(np_indices(b[::-1], TP, TB).tolist())


def test_indices_multi_pattern_offsets_and_order():
    net = SYM_NETS[1]
    for b in SYM_BOARDS:
        idx = np.asarray(_indices_jit[net](jnp.asarray(b.astype(np.int8))))
        ref = np_indices(b, net.patterns, net.base)
        assert idx.shape == (24,)
        for p in range(3):  # 8 features per pattern, each in its own table
            assert sorted(idx[8 * p:8 * p + 8].tolist()) == sorted(ref[8 * p:8 * p + 8].tolist())
            assert (idx[8 * p:8 * p + 8] // net.table_size == p).all()


def test_default_patterns_cover_every_cell():
    net = NTupleNetwork()
    cells = net.cells()
    assert cells.shape == (32, 6)
    assert set(cells.reshape(-1).tolist()) == set(range(16))
    # each feature reads the image of its pattern under one symmetry (distinct cells)
    for row in cells:
        assert len(set(row.tolist())) == 6


def test_exponents_at_or_past_base_are_clipped():
    b15 = bd([[15, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    for big in (16, 17):
        b = b15.copy()
        b[0] = big
        np.testing.assert_array_equal(_indices_jit[TINY](jnp.asarray(b.astype(np.int8))),
                                      _indices_jit[TINY](jnp.asarray(b15.astype(np.int8))))
    idx = np.asarray(_indices_jit[TINY](jnp.asarray(b15.astype(np.int8))))
    assert idx.max() < TINY.table_size and idx.min() >= 0
    assert 15 + 16 * 3 in idx.tolist()  # the (0, 1) feature itself: 15 + 16 * 3


def test_optimistic_init_values_every_board():
    for net in SYM_NETS + (TINY,):
        w = net.init_weights(320.0)
        boards = np.stack(SYM_BOARDS + [np.zeros(16, np.int64), DEAD]).astype(np.int8)
        np.testing.assert_allclose(_value_jit[net](w, jnp.asarray(boards)), 320.0, rtol=1e-5)
    carry = td.init(td.TDConfig(network=TINY, num_games=3, optimistic_init=80.0), MODEL, jax.random.key(1))
    np.testing.assert_allclose(_value_jit[TINY](carry.weights, carry.board), 80.0, rtol=1e-5)


# -- TD(0) ------------------------------------------------------------------------------------

# Greedy has to pick between the two 1024+1024 merges (reward 2048): V decides which.
LIVE = bd([[10, 10, 3, 0], [1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 1]])
PREV = bd([[3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])   # repeated indices (0 and 3)


def test_td0_update_by_hand():
    w0 = tiny_weights(3, scale=0.3)
    V = tiny_V(w0)
    a, after, r, margin = np_greedy(LIVE, V)
    assert r == 2048 and margin > 1e-3            # precondition of the hand computation
    carry = hand_carry("td0", w0, LIVE, [PREV], score=40, moves=9)
    new, m = _update["td0"](carry, jax.random.key(11))

    delta = r + V(after) - V(PREV)
    expected = w0.astype(np.float64)
    np.add.at(expected, np_indices(PREV, TP, TB), ALPHA / 8 * delta)  # index 0 x6, index 3 x2
    np.testing.assert_allclose(np.asarray(new.weights), expected, rtol=1e-6, atol=1e-5)

    # the afterstate of the chosen move (before the spawn) is now the newest trace entry
    np.testing.assert_array_equal(sorted(np.asarray(new.trace)[0, -1].tolist()),
                                  sorted(np_indices(after, TP, TB).tolist()))
    check_spawned_once(new.board[0], after)
    assert int(new.score[0]) == 40 + r and int(new.moves[0]) == 10
    assert int(new.trace_len[0]) == 1
    assert int(m["moves"]) == 1 and int(m["games_ended"]) == 0


def test_td0_first_move_of_a_game_updates_nothing():
    w0 = tiny_weights(4, scale=0.3)
    carry = hand_carry("td0", w0, LIVE, [PREV], trace_len=0)
    new, _ = _update["td0"](carry, jax.random.key(12))
    np.testing.assert_array_equal(np.asarray(new.weights), w0)
    assert int(new.trace_len[0]) == 1


def test_td0_game_over_updates_toward_zero_and_restarts():
    w0 = tiny_weights(5, scale=0.3)
    V = tiny_V(w0)
    carry = hand_carry("td0", w0, DEAD, [PREV], score=1234, moves=57)
    new, m = _update["td0"](carry, jax.random.key(13))

    expected = w0.astype(np.float64)
    np.add.at(expected, np_indices(PREV, TP, TB), ALPHA / 8 * (0.0 - V(PREV)))
    np.testing.assert_allclose(np.asarray(new.weights), expected, rtol=1e-6, atol=1e-5)

    nb = np.asarray(new.board[0])
    assert (nb != 0).sum() == 2 and set(nb[nb != 0].tolist()) <= {1, 2}
    assert int(new.moves[0]) == 0 and int(new.score[0]) == 0 and int(new.trace_len[0]) == 0
    assert int(m["games_ended"]) == 1 and int(m["moves"]) == 0
    assert float(m["ended_score_sum"]) == 1234.0 and int(m["ended_score_max"]) == 1234
    hist = np.asarray(m["ended_max_tile_hist"])
    assert hist[2] == 1 and hist.sum() == 1            # DEAD's largest tile is 4 (exponent 2)


# -- TD(λ) ------------------------------------------------------------------------------------

A0 = bd([[1, 0, 0, 2], [0, 3, 0, 0], [0, 0, 0, 0], [4, 0, 0, 1]])
A1 = bd([[2, 1, 0, 0], [0, 0, 0, 3], [0, 5, 0, 0], [0, 0, 1, 0]])
A2 = bd([[0, 0, 0, 1], [2, 0, 6, 0], [0, 0, 0, 0], [3, 0, 0, 2]])


def lambda_return_forward(rewards, values, lam):
    """Truncated λ-return, forward view: (1-λ) Σ_{n<h} λ^(n-1) G(n) + λ^(h-1) G(h), where
    G(n) = r_1 + ... + r_n + V_n. ``values[n-1]`` = V after n moves (0 past the end)."""
    h = len(rewards)
    g = [sum(rewards[:n]) + values[n - 1] for n in range(1, h + 1)]
    return sum((1 - lam) * lam ** (n - 1) * g[n - 1] for n in range(1, h)) + lam ** (h - 1) * g[h - 1]


def test_td_lambda_full_trace_updates_oldest_slot_only():
    lam = CFG_LAM.lam
    w0 = tiny_weights(6, scale=0.3)
    V = tiny_V(w0)
    a, after, r3, margin = np_greedy(LIVE, V)
    assert margin > 1e-3
    r1, r2 = 4.0, 16.0  # rewards of the moves that followed A0 and A1
    carry = hand_carry("lam", w0, LIVE, [A0, A1, A2], trace_reward=[r1, r2, 0.0])
    new, _ = _update["lam"](carry, jax.random.key(21))

    # backward recursion by hand, and the forward view it must equal
    t2 = r3 + V(after)
    t1 = r2 + (1 - lam) * V(A2) + lam * t2
    t0 = r1 + (1 - lam) * V(A1) + lam * t1
    fwd = lambda_return_forward([r1, r2, r3], [V(A1), V(A2), V(after)], lam)
    np.testing.assert_allclose(t0, fwd, rtol=1e-12)

    expected = w0.astype(np.float64)
    np.add.at(expected, np_indices(A0, TP, TB), ALPHA / 8 * (t0 - V(A0)))
    np.testing.assert_allclose(np.asarray(new.weights), expected, rtol=1e-6, atol=1e-5)

    # the trace shifts: A1, A2, the new afterstate; rewards r2, r3 and a fresh slot
    tr = np.asarray(new.trace)[0]
    for slot, b in enumerate([A1, A2, after]):
        assert sorted(tr[slot].tolist()) == sorted(np_indices(b, TP, TB).tolist())
    np.testing.assert_allclose(np.asarray(new.trace_reward)[0], [r2, r3, 0.0])
    assert int(new.trace_len[0]) == 3
    check_spawned_once(new.board[0], after)


def test_td_lambda_partial_trace_waits():
    w0 = tiny_weights(7, scale=0.3)
    carry = hand_carry("lam", w0, LIVE, [A1, A2], trace_reward=[16.0, 0.0])
    new, _ = _update["lam"](carry, jax.random.key(22))
    np.testing.assert_array_equal(np.asarray(new.weights), w0)
    assert int(new.trace_len[0]) == 3


def test_td_lambda_game_end_flushes_every_slot_toward_zero():
    lam = CFG_LAM.lam
    w0 = tiny_weights(8, scale=0.3)
    V = tiny_V(w0)
    r2 = 8.0
    # stale data in the invalid oldest slot must be ignored
    carry = hand_carry("lam", w0, DEAD, [A0, A1, A2], trace_reward=[999.0, r2, 0.0], trace_len=2)
    new, m = _update["lam"](carry, jax.random.key(23))
    t2 = 0.0                                    # A2 was the last afterstate: nothing follows
    t1 = r2 + (1 - lam) * V(A2) + lam * t2
    expected = w0.astype(np.float64)
    np.add.at(expected, np_indices(A2, TP, TB), ALPHA / 8 * (t2 - V(A2)))
    np.add.at(expected, np_indices(A1, TP, TB), ALPHA / 8 * (t1 - V(A1)))
    np.testing.assert_allclose(np.asarray(new.weights), expected, rtol=1e-6, atol=1e-5)
    assert int(new.trace_len[0]) == 0 and int(m["games_ended"]) == 1


# -- temporal coherence -------------------------------------------------------------------------

# all 16 exponents distinct: the 8 features of PERM read 8 distinct weights
PERM = bd([[0, 5, 9, 2], [7, 1, 12, 4], [3, 11, 6, 14], [13, 8, 10, 15]])
BIG_MERGE = bd([[11, 11, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])  # reward 4096


def test_tc_rates_by_hand():
    idx = np_indices(PERM, TP, TB)
    assert len(set(idx.tolist())) == 8
    size = TINY.table_size
    w0 = tiny_weights(9, scale=0.3)
    w0[idx] = np.abs(w0[idx]) + 1.0              # V(PERM) > 0: game over gives a negative error

    # 1) game over: error e1 = -V(PERM); rate 1, identical to plain TD
    e1 = 0.0 - np_value(w0, PERM, TP, TB)
    c = hand_carry("tc", w0, DEAD, [PERM], tc_error=np.zeros(size), tc_abs=np.zeros(size))
    c1, _ = _update["tc"](c, jax.random.key(31))
    plain, _ = _update["td0"](hand_carry("td0", w0, DEAD, [PERM]), jax.random.key(31))
    np.testing.assert_allclose(np.asarray(c1.weights), np.asarray(plain.weights), rtol=1e-6, atol=1e-6)
    w1 = w0.astype(np.float64)
    w1[idx] += ALPHA / 8 * e1
    np.testing.assert_allclose(np.asarray(c1.weights), w1, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c1.tc_error)[idx], e1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(c1.tc_abs)[idx], abs(e1), rtol=1e-6)
    assert np.count_nonzero(np.asarray(c1.tc_abs)) == 8

    # 2) a 4096 merge: positive error e2; so far |E|/A = 1, so still the full rate
    w1f = np.asarray(c1.weights)
    V1 = tiny_V(w1f)
    _, after2, r2, _ = np_greedy(BIG_MERGE, V1)
    assert r2 == 4096
    e2 = r2 + V1(after2) - V1(PERM)
    assert e2 > 0 > e1
    c = hand_carry("tc", w1f, BIG_MERGE, [PERM], tc_error=c1.tc_error, tc_abs=c1.tc_abs)
    c2, _ = _update["tc"](c, jax.random.key(32))
    w2 = w1f.astype(np.float64)
    w2[idx] += ALPHA / 8 * e2
    np.testing.assert_allclose(np.asarray(c2.weights), w2, rtol=1e-5, atol=1e-3)
    E, A = np.asarray(c2.tc_error)[idx], np.asarray(c2.tc_abs)[idx]
    np.testing.assert_allclose(E, e1 + e2, rtol=1e-5)
    np.testing.assert_allclose(A, abs(e1) + abs(e2), rtol=1e-5)
    rate = np.abs(E.astype(np.float64)) / A
    assert (rate < 0.999).all()                  # opposite signs: the rate has shrunk

    # 3) game over again: the step is now scaled by |E|/A < 1
    w2f = np.asarray(c2.weights)
    e3 = 0.0 - np_value(w2f, PERM, TP, TB)
    c = hand_carry("tc", w2f, DEAD, [PERM], tc_error=c2.tc_error, tc_abs=c2.tc_abs)
    c3, _ = _update["tc"](c, jax.random.key(33))
    w3 = w2f.astype(np.float64)
    w3[idx] += ALPHA / 8 * rate * e3
    np.testing.assert_allclose(np.asarray(c3.weights), w3, rtol=1e-5, atol=1e-3)
    step = np.asarray(c3.weights, np.float64)[idx] - w2f[idx]
    assert (np.abs(step) < 0.999 * ALPHA / 8 * abs(e3)).all()


# -- expectimax ---------------------------------------------------------------------------------

EXPECTIMAX_BOARDS = {
    "open": bd([[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 1, 0], [0, 0, 0, 3]]),
    "few-empty": bd([[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 0, 6], [4, 5, 1, 0]]),
    "some-illegal": bd([[3, 0, 0, 0], [2, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]),  # up, left illegal
    "merges": bd([[2, 2, 1, 1], [0, 3, 0, 3], [1, 0, 0, 0], [0, 0, 0, 0]]),
}


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("name", list(EXPECTIMAX_BOARDS))
def test_expectimax_matches_brute_force(name, depth):
    board = EXPECTIMAX_BOARDS[name]
    w = tiny_weights(10, scale=2.0)
    q, legal = _av_jit[depth](jnp.asarray(w), jnp.asarray(board.astype(np.int8)))
    q_ref, legal_ref = np_action_values(board, depth, tiny_V(w))
    np.testing.assert_array_equal(np.asarray(legal), legal_ref)
    np.testing.assert_allclose(np.asarray(q)[legal_ref], q_ref[legal_ref], rtol=1e-5, atol=1e-4)
    if name == "some-illegal":
        assert legal_ref.tolist() == [False, True, True, False]


def test_expectimax_dead_positions_below_are_worth_zero():
    # Left turns row 3 into [2,1,2,_]: a 2 in the hole gives a dead board (worth 0, not V = 100),
    # a 4 gives [2,1,2,2] whose best move merges 4+4 (reward 8) into an afterstate worth 100.
    board = bd([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 0, 2]])
    w = TINY.init_weights(100.0)
    q, legal = _av_jit[2](w, jnp.asarray(board.astype(np.int8)))
    assert bool(legal[LEFT])
    np.testing.assert_allclose(float(q[LEFT]), 0.9 * 0.0 + 0.1 * (8 + 100.0), rtol=1e-5)
    q_ref, legal_ref = np_action_values(board, 2, lambda b: 100.0)
    np.testing.assert_array_equal(np.asarray(legal), legal_ref)
    np.testing.assert_allclose(np.asarray(q)[legal_ref], q_ref[legal_ref], rtol=1e-5)


# -- players --------------------------------------------------------------------------------------


def test_greedy_reward_player_beats_random():
    key = jax.random.key(2048)
    k1, k2 = jax.random.split(key)
    greedy = players.evaluate(players.greedy_reward_policy(), None, k1, num_games=300)
    rand = players.evaluate(jaxgames.random_policy, None, k2, num_games=300)
    assert greedy.score.shape == (300,) and (rand.moves > 0).all()
    assert greedy.score.mean() > 1.4 * rand.score.mean(), (greedy.score.mean(), rand.score.mean())


# -- compilation ----------------------------------------------------------------------------------


def test_update_compiles_once():
    cfg = td.TDConfig(network=NTupleNetwork(patterns=((0, 1, 2), (4, 5, 6)), base=8),
                      num_games=8, lam=0.5, trace_length=3, tc=True, optimistic_init=10.0)
    update = jax.jit(chex.assert_max_traces(td.make_update(cfg, MODEL), n=1))
    carry = td.init(cfg, MODEL, jax.random.key(0))
    carry, m1 = update(carry, jax.random.key(1))
    carry, m2 = update(carry, jax.random.key(2))  # chex raises on a second trace
    assert int(m1["moves"]) == 8 and int(m2["moves"]) == 8 and (np.asarray(carry.moves) == 2).all()
    assert np.isfinite(np.asarray(carry.weights)).all()


# -- feature indices, compilation, the table's pages ---------------------------------------


class GatheredIndicesNet(NTupleNetwork):
    """The network with the feature indices of before issue 12 (6 cells gathered per feature)."""

    def indices(self, board):
        return self.indices_by_gather(board)


def test_updates_with_the_index_product_equal_those_with_gathered_indices():
    patterns = ((0, 1, 2), (4, 5, 6), (0, 1, 5))
    cfgs = [td.TDConfig(network=net, num_games=32, learning_rate=0.3)
            for net in (NTupleNetwork(patterns=patterns, base=8), GatheredIndicesNet(patterns=patterns, base=8))]
    rng = np.random.default_rng(3)
    boards = rng.integers(1, 7, (32, 16))                    # crowded: games end and restart
    boards[rng.random((32, 16)) < 0.3] = 0
    boards[:4] = DEAD
    table = rng.integers(-400, 400, 3 * 8**3) / 4            # exact sums: ties break alike
    carries = [td.init(c, MODEL, jax.random.key(0)).replace(
        board=jnp.asarray(boards, jnp.int8), table=jnp.asarray(table, jnp.float32)[:, None]) for c in cfgs]
    runs = []
    for c, carry in zip(cfgs, carries):   # two moves: the second updates the first's afterstates
        update = jax.jit(td.make_update(c, MODEL))
        carry, m1 = update(carry, jax.random.key(4))
        runs.append((*update(carry, jax.random.key(5)), m1))
    (fast, mf, mf1), (slow, ms, _) = runs
    for name in ("table", "board", "trace", "trace_len", "score", "moves"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    for k in mf:
        np.testing.assert_array_equal(mf[k], ms[k], err_msg=k)
    assert int(mf1["games_ended"]) >= 4 and not np.array_equal(fast.table, carries[0].table)


@pytest.mark.parametrize("net", [NTupleNetwork(), NTupleNetwork(base=18),
                                 NTupleNetwork(patterns=((0, 1, 2, 3, 4, 5),), base=32)],
                         ids=["2048", "2584-base18", "base32"])
def test_indices_by_matrix_product_equal_the_gathered_ones(net):
    boards = np.random.default_rng(5).integers(0, 32, (64, 16)).astype(np.int8)
    boards[0] = 31                                                  # every cell clipped
    fast = np.asarray(jax.jit(net.indices)(jnp.asarray(boards)))
    np.testing.assert_array_equal(fast, np.asarray(jax.jit(net.indices_by_gather)(jnp.asarray(boards))))
    for b, row in zip(boards[:4], fast):   # the NumPy reference lists each pattern's 8 in its own order
        np.testing.assert_array_equal(np.sort(row.reshape(-1, 8)),
                                      np.sort(np_indices(b, net.patterns, net.base).reshape(-1, 8)))
    assert fast.max() == len(net.patterns) * net.table_size - 1    # the largest index is exact


def test_second_chunk_does_not_compile_and_the_table_stays_in_its_huge_page_buffer():
    from train.common import make_chunk
    cfg = td.TDConfig(network=TINY, num_games=4)
    chunk = make_chunk(chex.assert_max_traces(td.make_update(cfg, MODEL), n=1), 3)
    carry = td.init(cfg, MODEL, jax.random.key(0))
    before = np.asarray(carry.table).copy()
    td.advise_huge_pages(carry.table, min_bytes=0)
    np.testing.assert_array_equal(carry.table, before)
    # the advice lasts only if the donated chunk updates this very buffer in place
    pointer = carry.table.unsafe_buffer_pointer()
    carry, _ = chunk(carry, jax.random.key(1), jnp.int32(0))
    carry, m = chunk(carry, jax.random.key(1), jnp.int32(3))   # chex raises on a second trace
    assert chunk._cache_size() == 1
    assert carry.table.unsafe_buffer_pointer() == pointer
    assert np.asarray(m["moves"]).shape == (3,) and (np.asarray(carry.moves) >= 6).all()
    assert td.advise_huge_pages(carry.table) is False               # small tables are left alone


# -- the shared step: how the games' steps on one weight combine --------------------------------

_td_step = {(rule, tc): jax.jit(functools.partial(
    td.td_step, td.TDConfig(network=TINY, num_games=3, learning_rate=ALPHA, shared_step=rule, tc=tc)))
    for rule in td.SHARED_STEPS for tc in (False, True)}


def hand_batch(rows, slots=1):
    """Feature indices [G, H, F] of hand-made afterstates (one board per slot) of TINY."""
    return np.asarray([[np_indices(b, TP, TB) for b in game] for game in rows], np.int32).reshape(
        len(rows), slots, TINY.num_features)


def expected_step(weights, trace, delta, stepped, rule):
    """The documented step in NumPy: α/F times each game's error per feature read (a weight
    read twice by one game gets twice the step); with the sqrt rule each weight's summed step
    divided by the square root of the number of games whose stepped slots read it."""
    step = np.zeros(weights.size)
    games = np.zeros(weights.size)
    for g in range(trace.shape[0]):
        touched = set()
        for h in range(trace.shape[1]):
            if stepped[g, h]:
                for i in trace[g, h]:
                    step[i] += ALPHA / TINY.num_features * delta[g, h]
                    touched.add(int(i))
        for i in touched:
            games[i] += 1
    return weights + (step / np.sqrt(np.maximum(games, 1)) if rule == "sqrt" else step)


# afterstates whose (corner, edge) pairs read one weight under several symmetries (the empty
# corners' weight 0), and one each of their own (the corner tile's)
SHARED_A = bd([[1, 0, 0, 0], [0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
SHARED_B = bd([[0, 0, 0, 2], [0, 3, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
OTHER = bd([[5, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 7]])


def test_one_game_the_sqrt_step_equals_the_sum():
    """One game (nothing shared between games): both rules give the same table, including a
    weight the afterstate reads several times, over slots of a λ trace, and with TC."""
    w = tiny_weights(11)
    trace = hand_batch([[SHARED_A, SHARED_B, OTHER]], slots=3)
    assert len(np.unique(trace)) < trace.size                      # some weight is read twice
    delta = np.array([[3.0, -1.5, 0.5]], np.float32)
    stepped = np.array([[True, True, True]])
    for tc in (False, True):
        tables = {}
        for rule in td.SHARED_STEPS:
            table = td.make_table(jnp.asarray(w), tc, count_column=rule == "sqrt")
            tables[rule] = np.asarray(_td_step[rule, tc](table, jnp.asarray(trace), jnp.asarray(delta),
                                                         jnp.asarray(stepped)))
        np.testing.assert_allclose(tables["sqrt"][:, :-1], tables["sum"], rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(tables["sqrt"][:, -1], 0.0)       # the counts are zero again
    np.testing.assert_allclose(tables["sum"][:, 0], expected_step(w, trace, delta, stepped, "sum"), rtol=1e-6)


def test_two_games_on_one_weight_get_the_documented_step():
    """Three games, two of them reading shared weights with errors +4 and -1, the third not
    stepped (its slot is not updated): the sqrt rule divides the shared weights' summed step by
    √2 and leaves the others' steps whole; the sum rule adds them."""
    w = tiny_weights(12)
    trace = hand_batch([[SHARED_A], [SHARED_B], [OTHER]])
    delta = np.array([[4.0], [-1.0], [0.0]], np.float32)
    stepped = np.array([[True], [True], [False]])
    shared = np.intersect1d(trace[0], trace[1])
    assert shared.size and np.setdiff1d(trace[0], trace[1]).size and np.intersect1d(trace[2], trace[0]).size
    for rule in td.SHARED_STEPS:
        table = td.make_table(jnp.asarray(w), False, count_column=rule == "sqrt")
        out = np.asarray(_td_step[rule, False](table, jnp.asarray(trace), jnp.asarray(delta),
                                               jnp.asarray(stepped)))
        want = expected_step(w, trace, delta, stepped, rule)
        np.testing.assert_allclose(out[:, 0], want, rtol=1e-6, atol=1e-6)
        i = shared[0]
        m0, m1 = (trace[0, 0] == i).sum(), (trace[1, 0] == i).sum()
        summed = ALPHA / TINY.num_features * (4.0 * m0 - 1.0 * m1)
        assert out[i, 0] - w[i] == pytest.approx(summed / np.sqrt(2) if rule == "sqrt" else summed, rel=1e-5)
    np.testing.assert_array_equal(out[:, -1], 0.0)


def test_sqrt_rule_updates_in_place_and_compiles_once():
    from train.common import make_chunk
    cfg = td.TDConfig(network=TINY, num_games=8, shared_step="sqrt", lam=0.5, trace_length=3)
    chunk = make_chunk(chex.assert_max_traces(td.make_update(cfg, MODEL), n=1), 4)
    carry = td.init(cfg, MODEL, jax.random.key(0))
    assert carry.table.shape == (TINY.table_size, 2)
    pointer = carry.table.unsafe_buffer_pointer()
    for start in (0, 4, 8):
        carry, m = chunk(carry, jax.random.key(1), jnp.int32(start))
    assert chunk._cache_size() == 1 and carry.table.unsafe_buffer_pointer() == pointer
    np.testing.assert_array_equal(np.asarray(carry.table)[:, 1], 0.0)
    assert np.asarray(m["moves"]).sum() > 0 and np.isfinite(np.asarray(carry.weights)).all()


def test_shared_step_is_checked():
    with pytest.raises(ValueError, match="shared_step must be auto or one of sum, sqrt"):
        td.TDConfig(network=TINY, shared_step="avg")
    assert td.default_shared_step(td.SQRT_FROM_GAMES - 1) == "sum"
    assert td.default_shared_step(td.SQRT_FROM_GAMES) == "sqrt"
    assert td.TDConfig(network=TINY, num_games=td.SQRT_FROM_GAMES).step_rule == "sqrt"
    assert td.TDConfig(network=TINY, num_games=td.SQRT_FROM_GAMES, shared_step="sum").step_rule == "sum"
