"""Plain UCT (jaxgames.search.uct): hand-worked trees, tactics, invariants, batching, strength.

Nothing here hinges on particular random bits: trees are checked on a position whose every
playout is forced, tactics and strength are asserted over many keys with margins far from
what chance gives, and the rest are invariants.
"""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.search import uct
from toy_tictactoe import TicTacToe

X, O = 1, 2
TTT = TicTacToe()
HEX5 = jaxgames.make("hex", board_size=5)


@functools.lru_cache(maxsize=None)
def _search_fn(env, num_simulations):
    """Jitted one-state search, compiled once per (env, num_simulations) for the module."""
    return jax.jit(lambda s, k: uct.uct_search(env, s, k, num_simulations=num_simulations))


@functools.lru_cache(maxsize=None)
def _actions_fn(env, num_simulations):
    """Jitted ``(state, keys [K]) -> actions [K]``: one position searched with many keys."""
    search = lambda s, k: uct.uct_search(env, s, k, num_simulations=num_simulations).action  # noqa: E731
    return jax.jit(jax.vmap(search, in_axes=(None, 0)))


def _actions_over_keys(env, state, num_simulations, num_keys=16, seed=0):
    return np.asarray(_actions_fn(env, num_simulations)(state, jax.random.split(jax.random.key(seed), num_keys)))


# -- the exact tree ------------------------------------------------------------------------------


def test_exact_tree_after_four_simulations():
    # O to move with two empty cells: O at 6 draws (X then fills 8), O at 8 loses (X fills 6
    # and completes column 0). Every playout is forced, so the tree is known exactly.
    state = TTT.from_board([X, O, X, X, O, O, 0, X, 0])
    assert int(state.current_player) == 1
    out = jax.tree_util.tree_map(np.asarray, _search_fn(TTT, 4)(state, jax.random.key(3)))
    tree = out.tree
    # Simulations 1 and 2 expand the two root children in a random order (the source's rule).
    first, second = int(tree.children_index[0, 6]), int(tree.children_index[0, 8])
    assert {first, second} == {1, 2}
    # Simulation 3: both children seen once, N' = 2; eq. (4) gives 6 (W/N 1/2) over 8 (W/N 0);
    # node 3 = X's forced reply 8 below 6, a finished draw. Simulation 4: eq. (4) picks 6
    # again (0.5 + sqrt(2 ln 3 / 2) > 0 + sqrt(2 ln 3)), walks into the finished node 3 and
    # backs its exact result up without adding a node: slot 4 stays unused.
    np.testing.assert_array_equal(tree.parents, [-1, 0, 0, first, -1])
    np.testing.assert_array_equal(tree.action_from_parent[[first, second, 3]], [6, 8, 8])
    np.testing.assert_array_equal(tree.children_index[first], [-1] * 8 + [3])
    visits = np.zeros(5, np.int32)
    visits[[0, first, second, 3]] = [4, 3, 1, 2]
    np.testing.assert_array_equal(tree.node_visits, visits)
    # W of each node for the player who moved into it (O for the root's children, X below);
    # the root's own W is the root mover's: draws count 1/2.
    wins = np.zeros(5, np.float32)
    wins[[0, first, second, 3]] = [1.5, 1.5, 0.0, 1.0]
    np.testing.assert_allclose(tree.node_wins, wins)
    assert bool(tree.node_states.terminated[3]) and not bool(tree.node_states.terminated[first])
    np.testing.assert_array_equal(out.visit_counts, [0] * 6 + [3, 0, 1])
    np.testing.assert_allclose(out.win_rates, [0] * 6 + [0.5, 0, 0])
    assert int(out.action) == 6
    np.testing.assert_allclose(out.value, 1.5 / 4)
    # the selection caches: W/N and 1/sqrt(N) of each explored child, -inf for illegal ones
    np.testing.assert_allclose(tree.children_win_rates[0, [6, 8]], [0.5, 0.0])
    np.testing.assert_allclose(tree.children_scale[0, [6, 8]], [1 / np.sqrt(3), 1.0], rtol=1e-6)
    assert np.isneginf(np.asarray(tree.children_win_rates[0, :6])).all()


def test_a_finished_leaf_reached_first_is_backed_up_exactly():
    # X to move, one empty cell: the only move wins. Each simulation after the first walks
    # into that finished node; the tree never grows past one child.
    state = TTT.from_board([X, O, X, X, O, O, O, X, 0])
    assert int(state.current_player) == 0
    out = jax.tree_util.tree_map(np.asarray, _search_fn(TTT, 4)(state, jax.random.key(0)))
    np.testing.assert_array_equal(out.tree.node_visits, [4, 4, 0, 0, 0])
    np.testing.assert_array_equal(out.visit_counts, [0] * 8 + [4])
    np.testing.assert_allclose(out.win_rates[8], 0.5)  # X's 8 fills the board: a draw
    assert int(out.action) == 8


# -- tactics ---------------------------------------------------------------------------------------


def test_tictactoe_takes_the_win_and_blocks_the_loss():
    # X to move: 2 wins at once; anything else lets O win at 5.
    win = TTT.from_board([X, X, 0, O, O, 0, 0, 0, 0])
    assert (_actions_over_keys(TTT, win, 1000) == 2).all()
    # O to move: only 2 stops X's row.
    block = TTT.from_board([X, X, 0, O, 0, 0, 0, 0, 0])
    assert (_actions_over_keys(TTT, block, 1000) == 2).all()


def _hex5(cells):
    board = np.zeros((5, 5), np.int8)
    for (r, c), v in cells.items():
        board[r, c] = v
    return HEX5.from_board(board)


def test_hex_takes_the_win_and_blocks_the_loss():
    # Black joins top and bottom, White left and right; cell (4, 0) = action 20.
    column = {(r, 0): 1 for r in range(4)}           # Black's column 0, one stone short
    # Black to move; White's bottom row also needs (4, 0): Black must take it now.
    mutual = _hex5({**column, **{(4, c): -1 for c in range(1, 5)}})
    assert int(mutual.current_player) == 0
    assert (_actions_over_keys(HEX5, mutual, 3000) == 20).all()
    # White to move, with no threat of its own: only (4, 0) stops Black.
    threat = _hex5({**column, (0, 4): -1, (1, 4): -1, (2, 4): -1})
    assert int(threat.current_player) == 1
    assert (_actions_over_keys(HEX5, threat, 3000) == 20).all()


# -- invariants ------------------------------------------------------------------------------------


def _random_positions(env, key, num, max_moves):
    """``num`` live positions after a random number of random moves (leaves [num, ...])."""

    def one(k):
        k_len, k_play = jax.random.split(k)
        moves = jax.random.randint(k_len, (), 0, max_moves)
        state = env.init(k)

        def body(i, c):
            s, kk = c
            kk, ka = jax.random.split(kk)
            nxt = env.step(s, jaxgames.random_legal_action(s, ka))
            keep = (i >= moves) | nxt.terminated
            return jax.tree_util.tree_map(lambda a, b: jnp.where(keep, a, b), s, nxt), kk

        return jax.lax.fori_loop(0, max_moves, body, (state, k_play))[0]

    return jax.jit(jax.vmap(one))(jax.random.split(key, num))


@pytest.mark.parametrize("env,max_moves", [(TTT, 8), (HEX5, 20)], ids=["tictactoe", "hex5"])
def test_invariants_on_random_positions(env, max_moves):
    sims = 64
    states = _random_positions(env, jax.random.key(1), 24, max_moves)
    out = jax.jit(jax.vmap(lambda s, k: uct.uct_search(env, s, k, num_simulations=sims)))(
        states, jax.random.split(jax.random.key(2), 24))
    tree = jax.tree_util.tree_map(np.asarray, out.tree)
    legal = np.asarray(states.legal_action_mask)
    visits = np.asarray(out.visit_counts)
    rates = np.asarray(out.win_rates)
    np.testing.assert_array_equal(visits.sum(-1), sims)           # every simulation, one root child
    np.testing.assert_array_equal(tree.node_visits[:, 0], sims)
    assert ((visits == 0) | legal).all()                           # only legal moves are tried
    assert (visits[legal] >= 1).all()        # unexplored children first: sims > legal moves
    assert ((rates >= 0) & (rates <= 1)).all()
    assert legal[np.arange(24), np.asarray(out.action)].all()
    assert (visits[np.arange(24), np.asarray(out.action)] == visits.max(-1)).all()
    assert ((0 <= out.value) & (out.value <= 1)).all()
    for g in range(24):
        used = tree.parents[g] >= 0
        used[0] = True
        n = tree.node_visits[g]
        finished = tree.node_states.terminated[g]
        # a node's visits: the one that created it, plus one per simulation through a child
        # (finished nodes are scored, never descended from)
        through = np.zeros_like(n)
        np.add.at(through, tree.parents[g][used & (np.arange(len(n)) > 0)],
                  n[used & (np.arange(len(n)) > 0)])
        live = used & ~finished
        np.testing.assert_array_equal(n[live], through[live] + (np.arange(len(n))[live] > 0))
        assert (n[~used] == 0).all() and (n[used] >= 1).all()
        assert (tree.node_wins[g][used] <= n[used]).all() and (tree.node_wins[g] >= 0).all()
        # every child a node links to points back to it
        kids = tree.children_index[g]
        for node, action in zip(*np.nonzero(kids >= 0)):
            child = kids[node, action]
            assert tree.parents[g][child] == node and tree.action_from_parent[g][child] == action


# -- batching and the API --------------------------------------------------------------------------


def test_vmapped_search_equals_one_search_per_state():
    states = _random_positions(TTT, jax.random.key(5), 6, 6)
    keys = jax.random.split(jax.random.key(6), 6)
    search = lambda s, k: uct.uct_search(TTT, s, k, num_simulations=40)  # noqa: E731
    batched = jax.jit(jax.vmap(search))(states, keys)
    single = _search_fn(TTT, 40)
    for g in range(6):
        one = single(jax.tree_util.tree_map(lambda x: x[g], states), keys[g])
        chex.assert_trees_all_equal(one, jax.tree_util.tree_map(lambda x: x[g], batched))
    # A vmap of a vmap folds into one batch, and an unbatched argument is broadcast: the
    # same answers, with [3, 2] batch axes.
    two = jax.tree_util.tree_map(lambda x: x[:2], states)
    nested = jax.jit(jax.vmap(jax.vmap(search), in_axes=(None, 0)))(two, keys.reshape(3, 2))
    for i in range(3):
        for j in range(2):
            one = single(jax.tree_util.tree_map(lambda x: x[j], two), keys.reshape(3, 2)[i, j])
            chex.assert_trees_all_equal(one, jax.tree_util.tree_map(lambda x: x[i, j], nested))


def test_policy_is_an_arena_policy_deterministic_per_key_and_compiled_once():
    policy = uct.uct_policy(TTT, num_simulations=30)
    traced = chex.assert_max_traces(policy, n=1)
    fn = jax.jit(jax.vmap(traced, in_axes=(None, 0, 0)))
    states = _random_positions(TTT, jax.random.key(7), 8, 6)
    keys = jax.random.split(jax.random.key(8), 8)
    a = fn(jnp.zeros(3), states, keys)
    b = fn(jnp.ones(3), states, keys)  # parameters are ignored
    np.testing.assert_array_equal(a, b)
    fn(jnp.ones(3), states, jax.random.split(jax.random.key(9), 8))  # new keys: no retrace
    chex.assert_type(a, jnp.int32)
    assert np.asarray(states.legal_action_mask)[np.arange(8), np.asarray(a)].all()
    chex.clear_trace_counter()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_simulations"):
        uct.uct_policy(TTT, num_simulations=0)
    with pytest.raises(ValueError, match="exploration"):
        uct.uct_policy(TTT, num_simulations=10, exploration=-1.0)
    with pytest.raises(ValueError, match="deterministic perfect-information"):
        uct.uct_policy(jaxgames.make("2048"), num_simulations=10)


# -- strength --------------------------------------------------------------------------------------


def test_more_simulations_win_on_7x7_hex_with_both_colours(optimised_compiles):
    env = jaxgames.make("hex", board_size=7)
    strong = uct.uct_policy(env, num_simulations=1000)
    weak = uct.uct_policy(env, num_simulations=100)
    with optimised_compiles():   # 20 games of 1,100 simulations a move: far more running than compiling
        result = arena.play(env, [strong, weak], jax.random.key(0), num_games=20)
    won = result.returns[:, 0] > 0
    as_black = won[result.seats[:, 0] == 0]
    as_white = won[result.seats[:, 1] == 0]
    # Measured: 39 of 40. Equal players would reach 15 of 20 with probability 2%; a player
    # who wins 90% falls below 6 of 10 in a colour with probability 0.2%.
    assert won.sum() >= 15, result
    assert as_black.sum() >= 6 and as_white.sum() >= 6, (as_black.sum(), as_white.sum())
