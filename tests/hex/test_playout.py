"""Fast playouts (random fill + one winner test) against exact values and move-by-move play."""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hex_helpers import env, reference_winner
from jaxgames import core
from jaxgames.hex import board as B
from jaxgames.rollout import rollout

NUM = 4000


@functools.lru_cache(maxsize=None)
def _fast(n):
    e = env(n)
    return jax.jit(jax.vmap(e.playout_returns, in_axes=(None, 0)))


@functools.lru_cache(maxsize=None)
def _slow(n):
    e = env(n)
    def returns(state, key):
        return rollout(e, state, core.random_policy, key).returns

    return jax.jit(jax.vmap(returns, in_axes=(None, 0)))


@functools.lru_cache(maxsize=None)
def _fill(n):
    return jax.jit(jax.vmap(lambda b, p, k: B.random_fill(b, p, k, n), in_axes=(None, None, 0)))


def _position(n, black, white):
    b = np.zeros(n * n, np.int8)
    b[list(black)] = 1
    b[list(white)] = -1
    return b


# (n, black cells, white cells), all 4x4 (one compile): the empty board; White to move; a
# middle game, Black to move.
POSITIONS = [
    (4, [], []),
    (4, [5, 10], [6]),
    (4, [0, 9, 14], [3, 6, 12]),
]


def exact_black_win(board, n, mover):
    """Probability that Black wins uniformly random play, by enumerating every way the empty
    cells split between the players (uniformly random play = a uniformly random subset of
    ceil(k/2) empty cells for the mover, and the full board's winner is the game's)."""
    empty = np.flatnonzero(board == 0)
    mine = (len(empty) + 1) // 2
    stone = 1 - 2 * mover
    wins = total = 0
    for cells in itertools.combinations(empty, mine):
        full = np.where(board == 0, -stone, board)
        full[list(cells)] = stone
        wins += reference_winner(full, n) == 0
        total += 1
    return wins / total


@pytest.mark.parametrize("n, black, white", POSITIONS)
def test_playouts_match_exact_value_and_move_by_move_play(n, black, white):
    e = env(n)
    board = _position(n, black, white)
    state = e.from_board(board)
    mover = int(state.current_player)
    p = exact_black_win(board, n, mover)
    keys = jax.random.split(jax.random.key(n), NUM)
    fast = np.asarray(_fast(n)(state, keys))
    slow = np.asarray(_slow(n)(state, keys[: NUM // 2]))
    for returns, num in ((fast, NUM), (slow, NUM // 2)):
        assert (returns.sum(1) == 0).all() and (np.abs(returns) == 1).all()   # one winner, no draw
        p_hat = (returns[:, 0] == 1).mean()
        se = math.sqrt(p * (1 - p) / num)
        assert abs(p_hat - p) < 4 * se + 1e-9, (p_hat, p, se)


def test_random_fill_invariants():
    n = 4
    board = _position(n, *POSITIONS[2][1:])
    empty = board == 0
    k = int(empty.sum())
    for mover in (0, 1):
        stone = 1 - 2 * mover
        keys = jax.random.split(jax.random.key(mover), 3000)
        fills = np.asarray(_fill(n)(jnp.asarray(board), jnp.int32(mover), keys))
        assert (fills != 0).all()
        assert (fills[:, ~empty] == board[~empty]).all()                 # stones stay
        assert ((fills[:, empty] == stone).sum(1) == (k + 1) // 2).all()  # mover: ceil(k/2)
        # Every empty cell is the mover's with probability ceil(k/2) / k.
        freq = (fills[:, empty] == stone).mean(0)
        p = ((k + 1) // 2) / k
        assert np.abs(freq - p).max() < 4.5 * math.sqrt(p * (1 - p) / 3000)
        # ... and every pair of empty cells both are with probability m(m-1) / (k(k-1)).
        mine = (fills[:, empty] == stone).astype(np.float64)
        pairs = (mine.T @ mine / 3000)[np.triu_indices(k, 1)]
        m = (k + 1) // 2
        q = m * (m - 1) / (k * (k - 1))
        assert np.abs(pairs - q).max() < 5 * math.sqrt(q * (1 - q) / 3000)


def test_full_and_finished_states():
    n = 4
    e = env(n)
    keys = jax.random.split(jax.random.key(0), 8)
    # A full board (Black's column a joins top and bottom): finished, so zeros.
    column_a = np.tile(np.array([1, -1, -1, -1], np.int8), n)
    full = e.from_board(column_a, current_player=0)
    assert bool(full.terminated)
    np.testing.assert_array_equal(np.asarray(_fast(n)(full, keys)), 0.0)
    # One empty cell left, a4, Black to move: Black fills it and wins, every time.
    live = e.from_board(np.where(np.arange(n * n) == 12, 0, column_a), current_player=0)
    np.testing.assert_array_equal(np.asarray(_fast(n)(live, keys)), [[1.0, -1.0]] * 8)
