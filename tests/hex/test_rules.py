"""Hex rules: the contract at several sizes, hand-made winning chains, the swap, observations,
no draws, and the bitboard winner test against an independent breadth-first search."""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from hex_helpers import batched, env, games, reference_winner
from jaxgames import hex as H
from jaxgames.hex import board as B

# Jitted once per module (compiled on first use).
_winner = {n: jax.jit(jax.vmap(lambda b, n=n: H.winner(b, n))) for n in (3, 5, 6, 11, 19)}
_both = {n: jax.jit(jax.vmap(lambda b, n=n: B.connects(B.colour_words(b, n), n))) for n in (3, 5, 11, 19)}


@functools.lru_cache(maxsize=None)
def jstep(n, swap=False):
    return jax.jit(env(n, swap).step)


def winner(board, n):
    return int(_winner[n](jnp.asarray(np.asarray(board, np.int8).reshape(1, n * n)))[0])


# -- contract and options ---------------------------------------------------------------------


@pytest.mark.parametrize("n, swap", [(3, False), (5, True), (11, False)])
def test_contract(n, swap):
    e = jaxgames.make("hex", board_size=n, swap=swap)
    assert (e.num_actions, e.num_players, e.stochastic, e.perfect_information) == (n * n + 1, 2, False, True)
    jaxgames.api_test(e, num_games=4, num_probes=1)


def test_default_is_11_without_swap():
    e = jaxgames.make("hex")
    assert (e.board_size, e.swap, e.num_actions) == (11, False, 122)
    s = e.init(jax.random.key(0))
    chex.assert_shape(s.board, (121,))
    chex.assert_type(s.board, jnp.int8)
    chex.assert_type(s.groups, jnp.int16)
    chex.assert_shape(s.observation, (11, 11, 2))
    assert int(s.current_player) == H.BLACK and not bool(s.legal_action_mask[121])
    assert bool(s.legal_action_mask[:121].all())


@pytest.mark.parametrize("bad", [2, 20, 0, -5, 11.0, "11", True, None])
def test_bad_board_size(bad):
    with pytest.raises(ValueError, match="board_size must be an integer from 3 to 19"):
        jaxgames.make("hex", board_size=bad)


def test_bad_swap_and_unknown_option():
    with pytest.raises(ValueError, match="swap must be True or False"):
        jaxgames.make("hex", swap="yes")
    with pytest.raises(ValueError, match="valid options: board_size, swap"):
        jaxgames.make("hex", size=11)


def test_action_layout_and_cell_names():
    n = 11
    assert H.cell_name(0, n) == "a1" and H.cell_name(1, n) == "b1" and H.cell_name(11, n) == "a2"
    assert H.cell_name(120, n) == "k11" and H.cell_name(5 * 11 + 6, n) == "g6"
    for a in range(n * n):
        assert H.parse_cell(H.cell_name(a, n), n) == a
    assert H.parse_cell("S19", 19) == 360
    for bad in ("l1", "a12", "a0", "1a", "", "a01", "aa"):
        with pytest.raises(ValueError):
            H.parse_cell(bad, n)
    e = env(n)
    assert e.cell_name(121) == "swap-pieces" and e.parse_action("swap-pieces") == 121
    # Action a is row a // n, column a % n: a stone on action 13 is at row 1, column 2.
    s = jstep(n)(e.init(jax.random.key(0)), 13)
    assert int(s.board.reshape(n, n)[1, 2]) == H.BLACK_STONE


# -- hand-made chains -------------------------------------------------------------------------


def _chains(n):
    """name -> (colour, cells) of chains that join that colour's edges, minimal (no cell spare)."""
    col0 = [(r, 0) for r in range(n)]                           # left column, acute to obtuse corner
    # acute corner (0, 0) to acute corner (n-1, n-1), stepping down and right
    stair = [(0, 0)] + [(r, c) for r in range(1, n - 1) for c in (r - 1, r)]
    stair += [(n - 2, n - 1), (n - 1, n - 1)]
    anti = [(r, n - 1 - r) for r in range(n)]                   # short diagonal, obtuse to obtuse
    top_row = [(0, c) for c in range(n)]                        # top edge, acute to obtuse corner
    stair_w = [(c, r) for r, c in stair]                        # the staircase transposed
    return {
        "black left column": (0, col0),
        "black right column": (0, [(r, n - 1) for r in range(n)]),
        "black acute-corner staircase": (0, stair),
        "black obtuse-corner diagonal": (0, anti),
        "white top row": (1, top_row),
        "white bottom row": (1, [(n - 1, c) for c in range(n)]),
        "white acute-corner staircase": (1, stair_w),
        "white obtuse-corner diagonal": (1, anti),
    }


def _board(n, stones):
    b = np.zeros(n * n, np.int8)
    for colour, cells in stones:
        for r, c in cells:
            b[r * n + c] = 1 if colour == 0 else -1
    return b


@pytest.mark.parametrize("n", [3, 5, 6, 11, 19])
def test_chains_win_and_every_cell_matters(n):
    for name, (colour, cells) in _chains(n).items():
        assert winner(_board(n, [(colour, cells)]), n) == colour, name
        assert reference_winner(_board(n, [(colour, cells)]), n) == colour, name
        for i in range(len(cells)):  # the chains are minimal: drop any stone and nobody wins
            assert winner(_board(n, [(colour, cells[:i] + cells[i + 1:])]), n) == H.NO_WINNER, (name, i)


@pytest.mark.parametrize("n", [5, 11])
def test_non_adjacent_diagonals_do_not_connect(n):
    # (r, c) and (r+1, c+1) are not neighbours: the long diagonal joins nothing, for either colour.
    long_diagonal = [(r, r) for r in range(n)]
    for colour in (0, 1):
        assert winner(_board(n, [(colour, long_diagonal)]), n) == H.NO_WINNER
    # A Black column does not join White's edges, nor a White row Black's.
    assert winner(_board(n, [(1, [(r, 2) for r in range(n)])]), n) == H.NO_WINNER
    assert winner(_board(n, [(0, [(2, c) for c in range(n)])]), n) == H.NO_WINNER


def _sequence(n, colour, cells):
    """Actions in which ``colour`` plays ``cells`` in order and the other side fills elsewhere
    without ever connecting (checked with the reference)."""
    chain = [r * n + c for r, c in cells]
    others = [a for a in range(n * n) if a not in chain][::-1]
    board = np.zeros(n * n, np.int8)
    actions, mover = [], 0
    while chain:
        if mover == colour:
            a = chain.pop(0)
        else:
            a = next(x for x in others if board[x] == 0 and reference_winner(
                np.where(np.arange(n * n) == x, 1 - 2 * mover, board), n) == -1)
        board[a] = 1 - 2 * mover
        actions.append(a)
        mover = 1 - mover
    return actions


@pytest.mark.parametrize("n", [5, 11])
def test_chains_played_through_the_env(n):
    e = env(n)
    _, step = batched(n)
    for name, (colour, cells) in _chains(n).items():
        actions = _sequence(n, colour, cells)
        s = jax.tree_util.tree_map(lambda x: x[None], e.init(jax.random.key(0)))
        for i, a in enumerate(actions):
            assert not bool(s.terminated[0]), (name, i)
            s = step(s, jnp.asarray([a], jnp.int32))
        assert bool(s.terminated[0]), name
        expected = [1.0, -1.0] if colour == 0 else [-1.0, 1.0]
        np.testing.assert_array_equal(s.rewards[0], expected, err_msg=name)
        assert int(s.last_move[0]) == actions[-1] and bool(s.legal_action_mask[0].all())
        assert int(s.current_player[0]) == 1 - colour  # the loser would be next
        after = step(s, jnp.asarray([0], jnp.int32))  # finished: a no-op with zero rewards
        assert float(jnp.abs(after.rewards).sum()) == 0.0


def test_occupied_cell_is_illegal():
    e = env(5)
    s = jstep(e.board_size, e.swap)(e.init(jax.random.key(0)), 7)
    assert not bool(s.legal_action_mask[7])
    punished = jstep(e.board_size, e.swap)(s, 7)
    assert bool(punished.terminated)
    np.testing.assert_array_equal(punished.rewards, [1.0, -1.0])  # White played it: White's penalty


# -- the swap ---------------------------------------------------------------------------------


def test_swap_mirrors_the_stone_and_gives_black_the_move():
    n = 5
    e = env(n, swap=True)
    s0 = e.init(jax.random.key(0))
    assert not bool(s0.legal_action_mask[n * n])            # not on Black's first move
    s1 = jstep(e.board_size, e.swap)(s0, 1 * n + 3)                               # Black d2: row 1, column 3
    assert bool(s1.legal_action_mask[n * n])                 # White may swap ...
    s2 = jstep(e.board_size, e.swap)(s1, n * n)
    expected = np.zeros((n, n), np.int8)
    expected[3, 1] = H.WHITE_STONE                           # ... to b4: row 3, column 1
    np.testing.assert_array_equal(np.asarray(s2.board).reshape(n, n), expected)
    assert int(s2.current_player) == H.BLACK and int(s2.step_count) == 2 and int(s2.last_move) == n * n
    assert not bool(s2.legal_action_mask[n * n]) and bool(s2.legal_action_mask[1 * n + 3])
    assert not bool(s2.legal_action_mask[3 * n + 1])
    # Black's observation: its own plane empty, White's stone on the opponent plane.
    assert not bool(s2.observation[..., 0].any()) and bool(s2.observation[3, 1, 1])
    # Later, swapping is illegal: the game ends with the mover's penalty.
    s3 = jstep(e.board_size, e.swap)(s2, 0)
    s4 = jstep(e.board_size, e.swap)(s3, n * n)
    assert bool(s4.terminated)
    np.testing.assert_array_equal(s4.rewards, [1.0, -1.0])


def test_swapped_stone_joins_white_groups():
    # A stone on the diagonal is mirrored onto itself: Black's a1 becomes White's a1, and
    # White then joins left and right along row 0 from it.
    n = 3
    e = env(n, swap=True)
    s = jstep(e.board_size, e.swap)(e.init(jax.random.key(0)), 0)     # Black a1
    s = jstep(e.board_size, e.swap)(s, n * n)                          # White swaps: White a1, Black to move
    for a in (3, 1, 4, 2):                        # Black a2, White b1, Black b2, White c1
        assert not bool(s.terminated)
        s = jstep(e.board_size, e.swap)(s, a)
    assert bool(s.terminated)
    np.testing.assert_array_equal(s.rewards, [-1.0, 1.0])


def test_swap_masked_out_when_off():
    e = env(5)
    s = jstep(e.board_size, e.swap)(e.init(jax.random.key(0)), 3)
    assert not bool(s.legal_action_mask[25])
    assert bool(jstep(e.board_size, e.swap)(s, 25).terminated)  # illegal: ends the game


# -- observation ------------------------------------------------------------------------------


def test_observation_is_from_the_movers_view():
    n = 5
    e = env(n)
    step = jstep(n)
    s = step(step(e.init(jax.random.key(0)), 0), 24)   # Black a1, White e5; Black to move
    assert int(s.current_player) == H.BLACK
    obs_black, obs_white = np.asarray(e.observe(s, 0)), np.asarray(e.observe(s, 1))
    np.testing.assert_array_equal(s.observation, obs_black)
    assert obs_black[0, 0, 0] and obs_black[4, 4, 1] and obs_black.sum() == 2
    np.testing.assert_array_equal(obs_white, obs_black[..., ::-1])


def test_an_invalid_seat_is_refused_or_blank():
    # Issue 38: observe(state, 7) gave all-zero planes without complaint.
    e = env(5)
    s = jstep(5)(e.init(jax.random.key(0)), 12)
    for bad in (7, -1, 2):
        with pytest.raises(ValueError, match=f"hex.observe: player {bad} is out of range: .* 0 to 1"):
            e.observe(s, bad)
    with pytest.raises(TypeError, match="seat"):
        e.observe(s, True)
    assert not np.asarray(jax.jit(e.observe)(s, jnp.int32(7))).any()
    with pytest.raises(ValueError, match="current_player"):
        e.from_board(np.zeros(25, np.int8), current_player=2)


# -- no draws ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 11])
def test_every_random_game_has_exactly_one_winner(n):
    boards, actions, _, returns, terminated = games(n)
    assert terminated.all()
    assert (np.sort(returns, axis=1) == [-1.0, 1.0]).all()
    winners = np.asarray(_winner[n](jnp.asarray(boards)))
    np.testing.assert_array_equal(winners, returns.argmax(1))


@pytest.mark.parametrize("n", [3, 5, 11, 19])
def test_a_full_board_has_exactly_one_winner(n):
    # Any full board, with any stone counts: exactly one colour connects (no draws in Hex).
    rng = np.random.default_rng(n)
    p = rng.random((2000, 1))
    boards = np.where(rng.random((2000, n * n)) < p, 1, -1).astype(np.int8)
    joined = np.asarray(_both[n](jnp.asarray(boards)))
    assert (joined.sum(1) == 1).all()
    for b, j in zip(boards[:200], joined[:200]):
        assert reference_winner(b, n) == int(j.argmax())


@pytest.mark.parametrize("n", [3, 5, 11, 19])
def test_winner_matches_reference_on_partial_boards(n):
    rng = np.random.default_rng(7 * n)
    fill = rng.random((500, 1))
    u = rng.random((500, n * n))
    boards = np.where(u < fill / 2, 1, np.where(u < fill, -1, 0)).astype(np.int8)
    got = np.asarray(_winner[n](jnp.asarray(boards)))
    want = np.array([reference_winner(b, n) for b in boards])
    np.testing.assert_array_equal(got, want)
    assert (want == -1).any() and (want == 0).any() and (want == 1).any()


def test_groups_agree_with_winner():
    # The incremental group keys flag a win exactly when the from-scratch test finds one.
    n = 6
    e = env(n)
    rng = np.random.default_rng(3)
    for _ in range(30):
        u = rng.random(n * n)
        b = np.where(u < 0.3, 1, np.where(u < 0.6, -1, 0)).astype(np.int8)
        s = e.from_board(b, current_player=0)
        assert bool(s.terminated) == (reference_winner(b, n) != -1)


def test_from_board():
    n = 5
    e = env(n)
    s = e.from_board(_board(n, [(0, [(0, 0), (1, 1)]), (1, [(2, 2)])]))
    assert int(s.current_player) == H.WHITE and int(s.step_count) == 3 and not bool(s.terminated)
    assert not bool(s.legal_action_mask[0]) and bool(s.legal_action_mask[1])
    s = jstep(e.board_size, e.swap)(s, 1 * n + 0)   # White a2
    assert int(s.current_player) == H.BLACK
    won = e.from_board(_board(n, [(1, [(1, c) for c in range(n)]), (0, [(0, c) for c in range(n)])]))
    assert bool(won.terminated) and bool(won.legal_action_mask.all())
    with pytest.raises(ValueError, match="say who is to move"):
        e.from_board(_board(n, [(1, [(0, 0), (0, 1)])]))
    with pytest.raises(ValueError, match="cells of 0, 1 or -1"):
        e.from_board(np.full(n * n, 2))
