"""2048 / 2584 rules: contract, hand-worked merges, chance step, and a differential test
against pgx's independent 2048 implementation."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.game2048 import board as B
from jaxgames.game2048 import render_svg, render_text

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3

# Jitted once per module: every test below reuses these (no per-test recompiles).
# jitted once per module; chex raises if any of them is traced a second time
# (one footprint for both variants' lambdas: chex counts them together)
_slide_jit = {v: jax.jit(chex.assert_max_traces(lambda b, a, v=v: B.slide(b, a, v), n=len(B.VARIANTS)))
              for v in B.VARIANTS}
_step = jax.jit(chex.assert_max_traces(jaxgames.make("2048").step, n=1))
_step_batch = jax.jit(jax.vmap(jaxgames.make("2048").step))


def slide1(board, action, variant="2048"):
    return _slide_jit[variant](board, jnp.int32(action))
_slide_all_batch = {v: jax.jit(jax.vmap(lambda b, v=v: B.slide_all(b, v))) for v in B.VARIANTS}
_legal_batch = {v: jax.jit(jax.vmap(lambda b, v=v: B.legal_moves(b, v))) for v in B.VARIANTS}
_slide_batch_v = {v: jax.jit(jax.vmap(lambda b, a, v=v: B.slide(b, a, v))) for v in B.VARIANTS}
_slide_batch = _slide_batch_v["2048"]


def board_of(rows) -> jnp.ndarray:
    return jnp.asarray(np.asarray(rows, np.int8).reshape(16))


def slide_line(line, variant="2048"):
    """Slide one line (given wall-first) to the left in row 0 of an otherwise empty board."""
    after, reward, changed = slide1(board_of([line, [0] * 4, [0] * 4, [0] * 4]), LEFT, variant)
    return np.asarray(after)[:4].tolist(), int(reward), bool(changed)


# -- contract ---------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", B.VARIANTS)
def test_api(variant):
    jaxgames.api_test(jaxgames.make("2048", variant=variant), num_games=8)


def test_bad_variant():
    with pytest.raises(ValueError, match="valid variants: 2048, 2584"):
        jaxgames.make("2048", variant="4096")
    with pytest.raises(ValueError, match="valid options: variant"):
        jaxgames.make("2048", size=5)


def test_state_fields():
    env = jaxgames.make("2048")
    s = jax.jit(env.init)(jax.random.PRNGKey(0))   # jitted: op by op each primitive compiles alone
    chex.assert_shape(s.board, (16,))
    chex.assert_type(s.board, jnp.int8)
    chex.assert_shape(s.observation, (4, 4, 32))
    chex.assert_type(s.observation, jnp.bool_)
    assert int((s.board > 0).sum()) == 2 and int(s.score) == 0
    np.testing.assert_array_equal(s.observation.reshape(16, 32).argmax(-1), s.board)


# -- every merge case by hand (2048) ---------------------------------------------------------


@pytest.mark.parametrize("line, out, reward", [
    ([1, 1, 1, 1], [2, 2, 0, 0], 8),      # 2 2 2 2 -> 4 4
    ([1, 1, 2, 2], [2, 3, 0, 0], 12),     # 2 2 4 4 -> 4 8
    ([2, 2, 2, 0], [3, 2, 0, 0], 8),      # 4 4 4 -> 8 4 (the wall-side pair merges)
    ([1, 0, 0, 1], [2, 0, 0, 0], 4),      # 2 . . 2 -> 4
    ([2, 1, 1, 0], [2, 2, 0, 0], 4),      # 4 2 2 -> 4 4, not 8: no double merge
    ([1, 1, 2, 0], [2, 2, 0, 0], 4),      # 2 2 4 -> 4 4, the new 4 does not merge again
    ([0, 0, 0, 1], [1, 0, 0, 0], 0),      # slide without merge
    ([0, 1, 0, 1], [2, 0, 0, 0], 4),
    ([1, 2, 1, 2], [1, 2, 1, 2], 0),      # nothing moves
    ([3, 0, 3, 3], [4, 3, 0, 0], 16),     # 8 . 8 8 -> 16 8
    ([15, 15, 0, 0], [16, 0, 0, 0], 65536),   # two 32768 make 65536
    ([16, 16, 0, 0], [17, 0, 0, 0], 131072),  # the largest tile a 4x4 board can hold
])
def test_merge_cases(line, out, reward):
    got, r, changed = slide_line(line)
    assert got == out
    assert r == reward
    assert changed == (line != out)


def test_all_directions_on_hand_board():
    # 2 2 2 2 / 2 2 4 4 / 4 4 4 . / 2 . . 2
    b = board_of([[1, 1, 1, 1], [1, 1, 2, 2], [2, 2, 2, 0], [1, 0, 0, 1]])
    expected = {
        UP: ([[2, 2, 1, 1], [2, 2, 3, 2], [1, 0, 0, 1], [0, 0, 0, 0]], 4 + 4 + 8 + 0),
        RIGHT: ([[0, 0, 2, 2], [0, 0, 2, 3], [0, 0, 2, 3], [0, 0, 0, 2]], 8 + 12 + 8 + 4),
        DOWN: ([[0, 0, 0, 0], [2, 0, 0, 1], [2, 2, 1, 2], [1, 2, 3, 1]], 4 + 4 + 8 + 0),
        LEFT: ([[2, 2, 0, 0], [2, 3, 0, 0], [3, 2, 0, 0], [2, 0, 0, 0]], 8 + 12 + 8 + 4),
    }
    afters, rewards, changed = jax.jit(B.slide_all)(b)
    for a, (rows, reward) in expected.items():
        after, r, c = slide1(b, a)
        np.testing.assert_array_equal(np.asarray(after).reshape(4, 4), rows, err_msg=B.ACTION_NAMES[a])
        assert int(r) == reward and bool(c)
        np.testing.assert_array_equal(afters[a], after)
        assert int(rewards[a]) == reward and bool(changed[a])


def test_move_that_changes_nothing_is_illegal():
    # Everything is packed to the left and no neighbours match: left and up change nothing.
    b = board_of([[1, 2, 0, 0], [3, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(B.legal_moves(b), [False, True, True, False])
    after, r, c = slide1(b, LEFT)
    assert not bool(c) and int(r) == 0
    np.testing.assert_array_equal(after, b)
    env = jaxgames.make("2048")
    s = env.init(jax.random.PRNGKey(0))
    s = s.replace(board=b, legal_action_mask=B.legal_moves(b))
    bad = _step(s, jnp.int32(LEFT), jax.random.PRNGKey(1))
    assert bool(bad.terminated) and float(bad.rewards[0]) == -1.0
    ok = _step(s, jnp.int32(RIGHT), jax.random.PRNGKey(1))
    assert not bool(ok.terminated) and int((ok.board > 0).sum()) == 5  # 4 tiles + 1 spawned


def test_game_over():
    full = board_of([[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]])
    assert not bool(B.legal_moves(full).any())
    # One empty cell; whatever spawns there, no move is left: the game ends on the spawn.
    env = jaxgames.make("2048")
    s = env.init(jax.random.PRNGKey(0))
    nearly = board_of([[3, 4, 3, 4], [4, 3, 4, 3], [3, 4, 3, 4], [4, 3, 4, 0]])
    s = s.replace(board=nearly, legal_action_mask=B.legal_moves(nearly))
    for outcome in (30, 31):  # cell 15, tile 2 or 4
        end = env.apply_chance(s.replace(current_player=jnp.int32(-1)), jnp.int32(outcome))
        assert bool(end.terminated) and bool(end.legal_action_mask.all())
    # But a full board with a merge left is not over.
    merge_left = board_of([[1, 1, 2, 3], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]])
    np.testing.assert_array_equal(B.legal_moves(merge_left), [False, True, False, True])


def test_reward_and_score_are_merge_sums():
    env = jaxgames.make("2048")
    s = env.init(jax.random.PRNGKey(0))
    b = board_of([[1, 1, 2, 2], [3, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    s = s.replace(board=b, legal_action_mask=B.legal_moves(b), score=jnp.int32(100))
    s = _step(s, jnp.int32(LEFT), jax.random.PRNGKey(3))
    assert float(s.rewards[0]) == 4 + 8 + 16
    assert int(s.score) == 100 + 28


# -- 2584 (Fibonacci) -----------------------------------------------------------------------


def test_fibonacci_values():
    vals = B.rules("2584").values
    assert vals[:10].tolist() == [0, 1, 2, 3, 5, 8, 13, 21, 34, 55]
    assert 75025 in vals.tolist()
    assert B.rules("2048").values[16] == 65536 and B.rules("2048").base == 18


@pytest.mark.parametrize("line, out, reward", [
    ([1, 1, 0, 0], [2, 0, 0, 0], 2),      # 1 + 1 -> 2
    ([1, 2, 0, 0], [3, 0, 0, 0], 3),      # 1 + 2 -> 3
    ([2, 1, 0, 0], [3, 0, 0, 0], 3),      # 2 + 1 -> 3 (either order)
    ([2, 3, 0, 0], [4, 0, 0, 0], 5),      # 2 + 3 -> 5
    ([3, 3, 0, 0], [3, 3, 0, 0], 0),      # 3 + 3: not adjacent Fibonacci numbers
    ([2, 2, 0, 0], [2, 2, 0, 0], 0),      # 2 + 2: likewise
    ([1, 3, 0, 0], [1, 3, 0, 0], 0),      # 1 + 3: likewise
    ([1, 1, 1, 1], [2, 2, 0, 0], 4),      # 1 1 1 1 -> 2 2, no double merge
    ([1, 1, 2, 3], [2, 4, 0, 0], 7),      # 1 1 2 3 -> 2 5
    ([1, 2, 2, 2], [3, 2, 2, 0], 3),      # 1 2 2 2 -> 3 2 2
    ([0, 4, 0, 5], [6, 0, 0, 0], 13),     # 5 . 8 -> 13
    ([23, 24, 0, 0], [25, 0, 0, 0], 121393),  # 46368 + 75025
])
def test_fibonacci_merges(line, out, reward):
    got, r, changed = slide_line(line, "2584")
    assert got == out and r == reward and changed == (line != out)


# -- chance ----------------------------------------------------------------------------------


def test_random_words_are_jax_bits():
    for key in (jax.random.PRNGKey(7), jax.random.key(11)):
        np.testing.assert_array_equal(B.random_words(key, 4), jax.random.bits(key, (4,), jnp.uint32))


def test_spawn_statistics():
    n = 40_000
    b = board_of([[1, 0, 2, 0], [3, 3, 0, 1], [1, 2, 3, 4], [0, 5, 6, 0]])  # 5 empty cells
    empties = np.flatnonzero(np.asarray(b) == 0)
    out = np.asarray(jax.jit(jax.vmap(lambda k: B.spawn(b, k)))(jax.random.split(jax.random.PRNGKey(0), n)))
    changed = out != np.asarray(b)[None]
    assert (changed.sum(1) == 1).all(), "exactly one new tile"
    cells = changed.argmax(1)
    assert set(cells.tolist()) <= set(empties.tolist())
    freq = np.bincount(cells, minlength=16)[empties] / n
    np.testing.assert_allclose(freq, 0.2, atol=0.01)  # ~5 sigma
    tiles = out[np.arange(n), cells]
    assert set(tiles.tolist()) == {1, 2}
    assert abs((tiles == 2).mean() - 0.1) < 0.008
    # A full board is left alone.
    full = board_of([[1, 2, 1, 2]] * 4)
    np.testing.assert_array_equal(B.spawn(full, jax.random.PRNGKey(0)), full)


def test_spawn_from_words_puts_the_tile_in_the_kth_empty_cell():
    """Differential against NumPy: the word picks empty cell k = floor(u * n) in reading order
    (u its top 28 bits over 2**28, n the empty cells), the other word the tile; boards of
    every fill, full ones included, and words at both ends of the range."""
    rng = np.random.default_rng(3)
    n = 5_000
    boards = (rng.integers(1, 12, (n, 16)) * (rng.random((n, 16)) < rng.random((n, 1)))).astype(np.int8)
    boards[:50] = rng.integers(1, 12, (50, 16))          # full
    boards[50:100] = 0                                   # empty
    words = rng.integers(0, 2**32, (n, 2), dtype=np.uint64).astype(np.uint32)
    words[::7, 0] = 2**32 - 1                           # the last empty cell
    words[::11, 0] = 0                                  # the first
    out = np.asarray(jax.jit(jax.vmap(B.spawn_from_words))(jnp.asarray(boards), jnp.asarray(words[:, 0]),
                                                           jnp.asarray(words[:, 1])))
    for board, (w_cell, w_tile), got in zip(boards, words, out):
        want = board.copy()
        empties = np.flatnonzero(board == 0)
        if len(empties):
            k = (int(w_cell) >> 4) * len(empties) >> 28
            want[empties[k]] = 2 if w_tile < 0.1 * 2**32 else 1   # the big tile w.p. 0.1
        np.testing.assert_array_equal(got, want)


def test_initial_board_statistics():
    n = 20_000
    boards = np.asarray(jax.jit(jax.vmap(B.initial_board))(jax.random.split(jax.random.PRNGKey(1), n)))
    assert ((boards > 0).sum(1) == 2).all()
    np.testing.assert_allclose((boards > 0).mean(0), 2 / 16, atol=0.01)
    tiles = boards[boards > 0]
    assert set(tiles.tolist()) == {1, 2}
    assert abs((tiles == 2).mean() - 0.1) < 0.01


def test_chance_outcomes_and_apply_chance():
    b = board_of([[1, 0, 2, 0], [3, 3, 0, 1], [1, 2, 3, 4], [0, 5, 6, 0]])
    outcomes, probs = B.chance_outcomes(b)
    chex.assert_shape((outcomes, probs), (32,))
    assert abs(float(probs.sum()) - 1.0) < 1e-6
    empty = np.asarray(b) == 0
    np.testing.assert_allclose(np.asarray(probs)[0::2], np.where(empty, 0.9 / 5, 0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(probs)[1::2], np.where(empty, 0.1 / 5, 0), rtol=1e-6)
    for o in np.asarray(outcomes)[np.asarray(probs) > 0]:
        placed = np.asarray(B.apply_chance(b, jnp.int32(o)))
        diff = np.flatnonzero(placed != np.asarray(b))
        assert diff.tolist() == [o // 2] and placed[o // 2] == 1 + o % 2


def test_afterstate_then_chance_equals_step():
    env = jaxgames.make("2048")
    afterstate, apply_chance = jax.jit(env.afterstate), jax.jit(env.apply_chance)
    s = env.init(jax.random.PRNGKey(2))
    key = jax.random.PRNGKey(5)
    for t in range(20):
        a = jnp.int32(np.flatnonzero(np.asarray(s.legal_action_mask))[t % int(s.legal_action_mask.sum())])
        stepped = _step(s, a, key)
        after, reward = afterstate(s, a)
        assert int(after.current_player) == jaxgames.CHANCE_PLAYER
        assert float(reward) == float(stepped.rewards[0])
        cell = int(np.flatnonzero(np.asarray(stepped.board) != np.asarray(after.board))[0])
        outcome = jnp.int32(2 * cell + int(stepped.board[cell]) - 1)
        assert float(env.chance_outcomes(after)[1][outcome]) > 0
        chex.assert_trees_all_equal(apply_chance(after, outcome), stepped)
        s, key = stepped, jax.random.split(key)[0]


# -- consistency and the differential test against pgx --------------------------------------


def random_boards(n: int, seed: int, max_exp: int = 16) -> np.ndarray:
    """Boards with many empty cells and many equal neighbours, exponents up to ``max_exp``."""
    rng = np.random.default_rng(seed)
    p_empty = rng.uniform(0.0, 0.7, size=(n, 1))
    top = rng.integers(2, max_exp + 1, size=(n, 1))
    exps = np.floor(rng.uniform(1, top + 1, size=(n, 16))).astype(np.int8)
    return np.where(rng.uniform(size=(n, 16)) < p_empty, 0, exps).astype(np.int8)


@pytest.mark.parametrize("variant", B.VARIANTS)
def test_slide_legal_and_slide_all_agree(variant):
    boards = jnp.asarray(random_boards(2000, 1, max_exp=B.rules(variant).base - 1))
    afters, rewards, changed = _slide_all_batch[variant](boards)
    np.testing.assert_array_equal(_legal_batch[variant](boards), changed)
    np.testing.assert_array_equal(changed, (afters != boards[:, None]).any(-1))
    if variant == "2048":
        for a in range(4):
            after, r, c = _slide_batch(boards, jnp.full(len(boards), a, jnp.int32))
            np.testing.assert_array_equal(after, afters[:, a])
            np.testing.assert_array_equal(r, rewards[:, a])
            np.testing.assert_array_equal(c, changed[:, a])
    # Tiles are conserved by value in 2048 and 2584 alike: every merge adds its two parts.
    vals = B.rules(variant).values
    np.testing.assert_array_equal(vals[np.asarray(afters)].sum(-1),
                                  np.repeat(vals[np.asarray(boards)].sum(-1, keepdims=True), 4, 1))


_step_words_batch = {v: jax.jit(jax.vmap(lambda b, a, wc, wt, v=v: B.step_from_words(b, a, wc, wt, v)))
                     for v in B.VARIANTS}


def _hand_boards(variant: str) -> np.ndarray:
    """Corner cases: empty, full with and without a move, one tile, top exponents."""
    top = B.rules(variant).base - 1
    rows = [
        [[0] * 4] * 4,
        [[1, 2, 1, 2], [2, 1, 2, 1], [1, 2, 1, 2], [2, 1, 2, 1]],   # full, no move in 2048
        [[1, 1, 2, 3], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]],   # full, one merge
        [[0, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
        [[top, top, 0, 0], [top - 1, top - 1, 0, 0], [0] * 4, [0, 0, 0, 1]],
        [[1, 1, 1, 1], [1, 1, 2, 2], [2, 2, 2, 0], [1, 0, 0, 1]],
    ]
    return np.asarray(rows, np.int8).reshape(-1, 16)


@pytest.mark.parametrize("variant", B.VARIANTS)
def test_step_from_words_equals_slide_spawn_legal(variant):
    """The Env's fused move against the separate primitives: same afterstate up to one new
    tile on an empty cell (exactly when the move changes the board), same reward and
    "changed", and the legal mask of the new board as slide_all computes it."""
    top = B.rules(variant).base - 1
    boards = np.concatenate([_hand_boards(variant), random_boards(1500, 3, max_exp=top)])
    n = len(boards)
    words = np.array(jax.random.bits(jax.random.PRNGKey(9), (4, n, 2), jnp.uint32))
    words[0, :, 1] = 0  # every spawn of action 0 is the big tile
    words[1, :, 1] = 0xFFFFFFFF  # and of action 1 the small one
    for a in range(4):
        acts = jnp.full(n, a, jnp.int32)
        new, reward, changed, legal = _step_words_batch[variant](
            jnp.asarray(boards), acts, jnp.asarray(words[a, :, 0]), jnp.asarray(words[a, :, 1]))
        after, r0, c0 = (np.asarray(x) for x in _slide_batch_v[variant](jnp.asarray(boards), acts))
        new = np.asarray(new)
        np.testing.assert_array_equal(np.asarray(reward), r0)
        np.testing.assert_array_equal(np.asarray(changed), c0)
        spawned = new != after
        np.testing.assert_array_equal(spawned.sum(1), c0.astype(int))
        assert (after[spawned] == 0).all()
        tiles = new[spawned]
        assert set(tiles.tolist()) <= {1, 2}
        if a < 2:
            assert (tiles == (2 if a == 0 else 1)).all()
        np.testing.assert_array_equal(np.asarray(legal), np.asarray(_slide_all_batch[variant](jnp.asarray(new))[2]))
    assert 0.3 < c0.mean() < 1.0  # both kinds of move were exercised


def test_env_step_fields_against_primitives():
    """Every field of the Env's step on many positions, against slide / slide_all: board
    (the afterstate plus one new tile on an empty cell), reward, score, step count, legal
    mask and termination (all-True mask once over)."""
    env = jaxgames.make("2048")
    boards = np.concatenate([_hand_boards("2048"), random_boards(1500, 4, max_exp=12)])
    n = len(boards)  # the batch shape of the test above: its compiled functions are reused
    legal0 = np.asarray(_slide_all_batch["2048"](jnp.asarray(boards))[2])
    live = np.flatnonzero(legal0.any(1))
    boards, legal0 = boards[live[np.arange(n) % len(live)]], legal0[live[np.arange(n) % len(live)]]
    actions = np.array([np.flatnonzero(m)[i % m.sum()] for i, m in enumerate(legal0)], np.int32)
    proto = env.init(jax.random.PRNGKey(0))
    states = jax.vmap(lambda b, m: proto.replace(board=b, legal_action_mask=m, score=jnp.int32(7)))(
        jnp.asarray(boards), jnp.asarray(legal0))
    new = _step_batch(states, jnp.asarray(actions), jax.random.split(jax.random.PRNGKey(1), n))
    after, reward, changed = (np.asarray(x) for x in _slide_batch(jnp.asarray(boards), jnp.asarray(actions)))
    assert changed.all()
    board = np.asarray(new.board)
    spawned = board != after
    assert (spawned.sum(1) == 1).all() and (after[spawned] == 0).all()
    assert set(board[spawned].tolist()) <= {1, 2}
    np.testing.assert_array_equal(np.asarray(new.rewards)[:, 0], reward)
    np.testing.assert_array_equal(np.asarray(new.score), 7 + reward)
    np.testing.assert_array_equal(np.asarray(new.step_count), 1)
    legal = np.asarray(_slide_all_batch["2048"](jnp.asarray(board))[2])
    over = ~legal.any(1)
    np.testing.assert_array_equal(np.asarray(new.terminated), over)
    np.testing.assert_array_equal(np.asarray(new.legal_action_mask), legal | over[:, None])
    assert over.any() and not over.all()


def test_step_from_words_spawn_reaches_every_empty_cell_once():
    """Word k of n (k = 0 .. n-1, built by hand) puts the tile on n different empty cells:
    the spawn is a bijection onto the empty cells, so a uniform word gives a uniform cell."""
    for rows, a in [([[1, 0, 2, 0], [3, 3, 0, 1], [1, 2, 3, 4], [0, 5, 6, 0]], LEFT),
                    ([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]], DOWN),
                    ([[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 0]], RIGHT)]:
        board = board_of(rows)
        after = np.asarray(slide1(board, a)[0])
        empties = np.flatnonzero(after == 0)
        n = len(empties)
        k = np.arange(16, dtype=np.uint64) % n  # one batch shape for every board: one compile
        w_cell = jnp.asarray((((k << 28) + n - 1) // n) << 4, jnp.uint32)
        new = np.asarray(_step_words_batch["2048"](
            jnp.tile(board, (16, 1)), jnp.full(16, a, jnp.int32), w_cell, jnp.full(16, 0xFFFFFFFF, jnp.uint32))[0])
        cells = (new != after).argmax(1)[:n]
        assert sorted(cells.tolist()) == empties.tolist()


def _numpy_slide_all(boards: np.ndarray, variant: str):
    """slide_all in NumPy straight from the rule table (lines read from their wall, table
    entries decoded field by field): the reference for the JAX paths' index arithmetic."""
    r = B.rules(variant)
    b = boards.astype(np.int64).reshape(-1, 4, 4)
    lines = {0: b.transpose(0, 2, 1), 1: b[:, :, ::-1], 2: b.transpose(0, 2, 1)[:, :, ::-1], 3: b}
    afters, rewards, changed = [], [], []
    for a in range(4):
        e = r.table.astype(np.int64)[(lines[a] * r.base ** np.arange(4)).sum(-1)]  # [N, 4]
        f = np.stack([(e >> (5 * p)) & 31 for p in range(4)], -1)                 # [N, 4, 4]
        flags = np.stack([(e >> (20 + p)) & 1 for p in range(4)], -1)
        rewards.append((r.values[f] * flags).sum((1, 2)))
        changed.append(((e >> 24) & 1).any(1))
        back = {0: f.transpose(0, 2, 1), 1: f[:, :, ::-1], 2: f[:, :, ::-1].transpose(0, 2, 1), 3: f}[a]
        afters.append(back.reshape(-1, 16))
    return np.stack(afters, 1), np.stack(rewards, 1), np.stack(changed, 1)


@pytest.mark.parametrize("variant", B.VARIANTS)
def test_slide_all_against_numpy_table_reference(variant):
    boards = np.concatenate([_hand_boards(variant), random_boards(1500, 5, max_exp=B.rules(variant).base - 1)])
    ref = _numpy_slide_all(boards, variant)
    got = _slide_all_batch[variant](jnp.asarray(boards))
    for want, have in zip(ref, got):
        np.testing.assert_array_equal(np.asarray(have), want)
    np.testing.assert_array_equal(np.asarray(_legal_batch[variant](jnp.asarray(boards))), ref[2])


def _pgx_move(board, pgx_action):
    """pgx's deterministic move (its _step without the spawn): afterstate, reward."""
    from pgx import play2048 as P

    b = board.reshape(4, 4)
    rot = jax.lax.switch(pgx_action, [lambda k=k: jnp.rot90(b, k) for k in range(4)])
    rot, reward = jax.vmap(P._slide_and_merge)(rot)
    back = jax.lax.switch(pgx_action, [lambda k=k: jnp.rot90(rot, -k) for k in range(4)])
    return back.ravel(), reward.sum(), P._legal_action_mask(b)


def test_against_pgx():
    pytest.importorskip("pgx")
    n = 3000
    boards = random_boards(n, 2, max_exp=16)  # pgx merges past 131072; stay where both can
    pgx_fn = jax.jit(jax.vmap(jax.vmap(_pgx_move, (None, 0)), (0, None)))
    # pgx numbers actions 0 left, 1 up, 2 right, 3 down: ours a is pgx (a + 1) % 4.
    p_after, p_reward, p_legal = pgx_fn(jnp.asarray(boards, jnp.int32), jnp.array([1, 2, 3, 0]))
    afters, rewards, changed = _slide_all_batch["2048"](jnp.asarray(boards))
    np.testing.assert_array_equal(np.asarray(afters), np.asarray(p_after))
    np.testing.assert_array_equal(np.asarray(rewards), np.asarray(p_reward))
    np.testing.assert_array_equal(np.asarray(changed), np.asarray(p_legal)[:, 0][:, [1, 2, 3, 0]])
    assert np.asarray(changed).mean() > 0.5 and not np.asarray(changed).all()
    assert (np.asarray(rewards) > 0).mean() > 0.3


# -- no recompiles, determinism, rendering ---------------------------------------------------


def test_no_recompiles():
    env = jaxgames.make("2048")

    @jax.jit
    @chex.assert_max_traces(n=1)
    def play(state, key):
        ka, ks = jax.random.split(key)
        return jaxgames.auto_reset(env)(state, jaxgames.random_legal_action(state, ka), ks)

    s = env.init(jax.random.PRNGKey(0))
    for i in range(5):
        s = play(s, jax.random.PRNGKey(i))
    for v in B.VARIANTS:  # module-level jits already used by earlier tests: no new trace
        slide1(board_of([[1, 1, 0, 0]] + [[0] * 4] * 3), LEFT, v)
        slide1(board_of([[2, 0, 0, 2]] + [[0] * 4] * 3), UP, v)
    _step(s, jnp.int32(0), jax.random.PRNGKey(0))
    _step(s, jnp.int32(1), jax.random.PRNGKey(1))


def test_render():
    b = board_of([[1, 0, 2, 0], [3, 11, 0, 1], [1, 2, 3, 4], [0, 5, 17, 0]])
    text = render_text(b)
    assert text.splitlines()[1].split() == ["8", "2048", ".", "2"] and "131072" in text
    assert render_text(b, "2584").splitlines()[0].split() == ["1", ".", "2", "."]
    svg = render_svg(b)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and ">2048<" in svg
