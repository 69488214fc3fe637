"""MCTS glue (jaxgames.search.mcts) on Hex 3x3, against an exact solution of the game.

The network is replaced by a table: the exact minimax value of every 3x3 position (solved
here by brute force) and a prior that favours the *occupied* cells, so that masking is put
to the test. Nothing hinges on particular random bits: positions are checked against the
solver's set of winning moves, and values on positions whose playouts are forced.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.hex import winner
from jaxgames.search import mcts

N = 3
HEX3 = jaxgames.make("hex", board_size=N)
B, W = 1, -1   # board values of Black's (player 0) and White's stones
_DIRS = ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0))


# -- the exact solution of 3x3 Hex --------------------------------------------------------------


def _connected(board, colour):
    """Whether ``colour`` joins its edges (Black rows 0 and n-1, White columns 0 and n-1)."""
    on_edge = (lambda r, c: r == 0) if colour == B else (lambda r, c: c == 0)
    at_goal = (lambda r, c: r == N - 1) if colour == B else (lambda r, c: c == N - 1)
    todo = [(r, c) for r in range(N) for c in range(N) if on_edge(r, c) and board[r * N + c] == colour]
    seen = set(todo)
    while todo:
        r, c = todo.pop()
        if at_goal(r, c):
            return True
        for dr, dc in _DIRS:
            q = (r + dr, c + dc)
            if 0 <= q[0] < N and 0 <= q[1] < N and q not in seen and board[q[0] * N + q[1]] == colour:
                seen.add(q)
                todo.append(q)
    return False


def _mover(board):
    return B if board.count(B) == board.count(W) else W


@functools.lru_cache(maxsize=None)
def solve(board):
    """Exact value of ``board`` (a tuple) for the player to move: +1 win, -1 loss."""
    if _connected(board, B) or _connected(board, W):
        return -1   # the player who just moved has won
    me = _mover(board)
    return max(-solve(board[:i] + (me,) + board[i + 1:]) for i in range(N * N) if board[i] == 0)


def winning_moves(board):
    me = _mover(board)
    return {i for i in range(N * N) if board[i] == 0
            and (_connected(board[:i] + (me,) + board[i + 1:], me) or solve(board[:i] + (me,) + board[i + 1:]) == -1)}


def _all_positions():
    out, todo = {}, [(0,) * (N * N)]
    while todo:
        board = todo.pop()
        if board in out:
            continue
        out[board] = solve(board)
        if not (_connected(board, B) or _connected(board, W)):
            me = _mover(board)
            todo += [board[:i] + (me,) + board[i + 1:] for i in range(N * N) if board[i] == 0]
    return out


POSITIONS = _all_positions()
# value table indexed by sum(digit_i * 3**i), digit 0 empty / 1 Black / 2 White
_TABLE = np.zeros(3 ** (N * N), np.float32)
for _board, _v in POSITIONS.items():
    _TABLE[sum((1 if x == B else 2 if x == W else 0) * 3 ** i for i, x in enumerate(_board))] = _v
TABLE = jnp.asarray(_TABLE)


def oracle(params, obs):
    """``apply_fn`` of the contract: ``params["w"]`` x the exact value, and prior logits
    ``params["bias"]`` on every occupied cell (and on the swap), 0 on the empty ones."""
    mine = obs[..., 0].reshape(obs.shape[0], -1)
    theirs = obs[..., 1].reshape(obs.shape[0], -1)
    mover_black = mine.sum(-1) == theirs.sum(-1)
    black = jnp.where(mover_black[:, None], mine, theirs)
    white = jnp.where(mover_black[:, None], theirs, mine)
    index = ((black * 1 + white * 2) * (3 ** jnp.arange(N * N))).sum(-1)
    occupied = jnp.concatenate([mine | theirs, jnp.ones((obs.shape[0], 1), bool)], axis=-1)
    return params["bias"] * occupied.astype(jnp.float32), params["w"] * TABLE[index]


def P(w=1.0, bias=5.0):
    return {"w": jnp.float32(w), "bias": jnp.float32(bias)}


def state_of(board):
    return HEX3.from_board(np.asarray(board, np.int8))


def stack(states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


BATCH = 8   # every search test searches this many positions: one compile per kind


def _test_positions(seed=0, immediate=None, num=BATCH):
    """Unfinished positions where the mover has both winning and non-winning moves."""
    rng = np.random.default_rng(seed)
    boards = sorted(b for b, v in POSITIONS.items()
                    if v == 1 and not (_connected(b, B) or _connected(b, W))
                    and 0 < len(winning_moves(b)) < b.count(0))
    if immediate is not None:
        def has_immediate(b):
            me = _mover(b)
            return any(b[i] == 0 and _connected(b[:i] + (me,) + b[i + 1:], me) for i in range(N * N))
        boards = [b for b in boards if has_immediate(b) == immediate]
    return [boards[i] for i in rng.choice(len(boards), size=num, replace=False)]


# -- root_fn / recurrent_fn ---------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _fns():
    def run(params, lam, key, states, actions):
        root_fn, recurrent_fn = mcts.make_fns(HEX3, oracle, lam=lam)
        return root_fn(params, key, states), recurrent_fn(params, key, actions, states)
    return jax.jit(run)


# Black to move; Black at b1 (cell 1) and b2 (cell 4) wins at a3 (6) or b3 (7) at once.
ONE_MOVE_WIN = (W, B, 0,
                W, B, 0,
                0, 0, 0)
# White to move with two cells left; whatever White plays, Black's forced last move connects.
FORCED = (B, W, B,
          W, B, 0,
          0, W, B)


def test_solver_sanity():
    assert solve((0,) * 9) == 1                    # the first player wins Hex
    assert 4 in winning_moves((0,) * 9)            # ... with the centre
    assert winning_moves(ONE_MOVE_WIN) >= {6, 7}
    assert solve(FORCED) == -1 and solve(FORCED[:5] + (W,) + FORCED[6:]) == 1


def test_recurrent_fn_one_move_win():
    states = stack([state_of(ONE_MOVE_WIN)] * 3)
    actions = jnp.array([7, 6, 2], jnp.int32)
    root, (out, new) = _fns()(P(), jnp.float32(0.0), jax.random.key(0), states, actions)
    # the root: exact value for Black, occupied cells and the (disabled) swap masked
    np.testing.assert_allclose(root.value, [1.0] * 3)
    legal = np.array([b == 0 for b in ONE_MOVE_WIN] + [False])
    assert (np.asarray(root.prior_logits)[:, ~legal] == mcts.MASKED_LOGIT).all()
    np.testing.assert_allclose(np.asarray(root.prior_logits)[:, legal], -5.0)   # minus the max
    # a3 and b3 win: +1 for the mover (Black), discount 0, value 0; c1 does not
    np.testing.assert_allclose(out.reward, [1.0, 1.0, 0.0])
    np.testing.assert_allclose(out.discount, [0.0, 0.0, -1.0])
    after_c1 = ONE_MOVE_WIN[:2] + (B,) + ONE_MOVE_WIN[3:]
    np.testing.assert_allclose(out.value, [0.0, 0.0, solve(after_c1)])   # White's view
    np.testing.assert_array_equal(new.terminated, [True, True, False])
    np.testing.assert_array_equal(new.current_player, [1, 1, 1])
    masked = np.asarray(out.prior_logits[2]) == mcts.MASKED_LOGIT
    np.testing.assert_array_equal(masked, ~np.asarray(new.legal_action_mask[2]))


def test_recurrent_fn_mixes_the_playout():
    # After either White move, one cell is left and Black's forced move connects, so every
    # playout gives z = +1 for Black, the new mover: value = (1 - lam) * V + lam * z exactly.
    states = stack([state_of(FORCED)] * 2)
    actions = jnp.array([5, 6], jnp.int32)
    f = _fns()
    for w, lam, expected in [(1.0, 0.5, 1.0), (0.0, 0.5, 0.5), (0.0, 1.0, 1.0), (-1.0, 0.25, -0.5)]:
        root, (out, new) = f(P(w), jnp.float32(lam), jax.random.key(1), states, actions)
        np.testing.assert_allclose(out.value, [expected] * 2, rtol=1e-6, err_msg=f"w={w}, lam={lam}")
        np.testing.assert_allclose(out.reward, [0.0, 0.0])
        np.testing.assert_allclose(out.discount, [-1.0, -1.0])
        # the root: White loses every playout
        np.testing.assert_allclose(root.value, [w * -1 * (1 - lam) - lam] * 2, rtol=1e-6)


# -- searches -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _searcher(kind):
    """Jitted ``(params, states, key, knobs) -> (most visited action, output)``; ``knobs`` (a
    dict of traced scalars: lam, unvisited_q, dirichlet_fraction, temperature) let one compile
    per kind serve every test. Gumbel's action is mctx's (gumbel_scale 0)."""
    def run(params, states, key, knobs):
        extra = dict(lam=knobs["lam"], unvisited_q=knobs["unvisited_q"]) if kind == "source" else {}
        if kind == "gumbel":
            extra["gumbel_scale"] = 0.0
        else:
            extra.update(dirichlet_fraction=knobs["dirichlet_fraction"], temperature=knobs["temperature"])
        out = mcts.search(HEX3, oracle, params, states, key, num_simulations=32, kind=kind, **extra)
        action = out.action if kind == "gumbel" else mcts.most_visited(out, states.legal_action_mask)
        return action, out
    return jax.jit(run)


def knobs(lam=0.0, unvisited_q=0.0, dirichlet_fraction=0.0, temperature=1.0):
    return {k: jnp.float32(v) for k, v in dict(lam=lam, unvisited_q=unvisited_q, temperature=temperature,
                                                 dirichlet_fraction=dirichlet_fraction).items()}


def _check_tree(out, states, actions):
    """Illegal actions never chosen at the root nor visited anywhere in the tree."""
    legal = np.asarray(states.legal_action_mask)
    assert legal[np.arange(len(actions)), actions].all()
    tree = out.search_tree
    node_legal = np.asarray(tree.embeddings.legal_action_mask)        # [B, nodes, A]
    assert not (np.asarray(tree.children_visits) * ~node_legal).any()
    weights = np.asarray(out.action_weights)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    assert not (weights * ~legal).any()


@pytest.mark.parametrize("kind", mcts.KINDS)
def test_exact_values_find_winning_moves(kind):
    boards = _test_positions(seed=1)
    states = stack([state_of(b) for b in boards])
    actions, out = _searcher(kind)(P(1.0, 5.0), states, jax.random.key(2), knobs())
    actions = np.asarray(actions)
    for b, a in zip(boards, actions):
        assert a in winning_moves(b), (b, a, winning_moves(b))
    _check_tree(out, states, actions)


def test_source_rollouts_only_find_immediate_wins():
    # lam = 1: eq. (6) with the network's value ignored (w = 0 too), Q = playout wins; every
    # child tried once first (unvisited_q = 1, the source's UCT rule): an immediate win has
    # Q = +1 exactly from then on, which no other child can keep.
    boards = _test_positions(seed=3, immediate=True)
    states = stack([state_of(b) for b in boards])
    for seed in range(2):
        actions, out = _searcher("source")(P(0.0, 5.0), states, jax.random.key(seed),
                                           knobs(lam=1.0, unvisited_q=1.0))
        actions = np.asarray(actions)
        for b, a in zip(boards, actions):
            assert a in winning_moves(b), (b, a)
        _check_tree(out, states, actions)


@pytest.mark.parametrize("kind", ["muzero", "source"])
def test_self_play_noise_and_sampling(kind):
    # root noise and sampling at temperature 1: legal actions only, the weights are the visit
    # frequencies, the sampled actions spread over the visited ones
    boards = _test_positions(seed=4)
    states = stack([state_of(b) for b in boards])
    legal = np.asarray(states.legal_action_mask)
    sampled = set()
    for seed in range(4):
        _, out = _searcher(kind)(P(), states, jax.random.key(10 + seed), knobs(dirichlet_fraction=0.5))
        actions = np.asarray(out.action)
        assert legal[np.arange(len(boards)), actions].all()
        visits = np.asarray(out.search_tree.summary().visit_counts)
        assert (visits.sum(-1) == 32).all() and (visits[np.arange(len(boards)), actions] > 0).all()
        np.testing.assert_allclose(out.action_weights, visits / 32, rtol=1e-6)
        _check_tree(out, states, actions)
        sampled |= set(zip(range(len(boards)), actions.tolist()))
    assert len(sampled) > len(boards)   # not always the same move


@pytest.mark.parametrize("kind", mcts.KINDS)
def test_per_game_keys_make_a_search_independent_of_its_batch(kind):
    """With one key per game (what the AlphaZero learner passes, so that its games play the
    same on any number of devices) each game's search, root noise, playouts and sampled action
    included, depends on its own state and key alone: reordering the batch or cutting it
    reorders or cuts the results."""
    boards = _test_positions(seed=4)
    states = stack([state_of(b) for b in boards])
    keys = jax.random.split(jax.random.key(7), len(boards))
    noisy = {"source": dict(lam=0.5, dirichlet_fraction=0.5), "muzero": dict(dirichlet_fraction=0.5),
             "gumbel": dict(gumbel_scale=1.0)}[kind]
    run = jax.jit(lambda s, k: mcts.search(HEX3, oracle, P(), s, k, num_simulations=16, kind=kind, **noisy))

    def results(order):
        take = lambda x: x[np.asarray(order)]  # noqa: E731
        out = run(jax.tree_util.tree_map(take, states), take(keys))
        return (np.asarray(out.action), np.asarray(out.action_weights),
                np.asarray(out.search_tree.summary().visit_counts))

    everything = results(range(len(boards)))
    backwards = results(range(len(boards))[::-1])
    half = results(range(0, len(boards), 2))
    for got, want in zip(backwards, everything):
        np.testing.assert_array_equal(got[::-1], want)
    for got, want in zip(half, everything):
        np.testing.assert_array_equal(got, want[::2])
    # and the keys matter: other keys give other searches somewhere in the batch
    other = run(states, jax.random.split(jax.random.key(8), len(boards)))
    assert not np.array_equal(np.asarray(other.action_weights), everything[1])


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        mcts.search(HEX3, oracle, P(), stack([state_of(FORCED)]), jax.random.key(0), num_simulations=4,
                    kind="alphago")
    with pytest.raises(ValueError, match="lam"):
        mcts.make_fns(HEX3, oracle, lam=1.5)
    with pytest.raises(ValueError, match="num_simulations"):
        mcts.search(HEX3, oracle, P(), stack([state_of(FORCED)]), jax.random.key(0), num_simulations=0)


# -- the arena policy ---------------------------------------------------------------------------


def _winner(state):
    return winner(state.board, N)


def test_arena_policy_plays_legal_winning_hex():
    # The arena vmaps the policy over its games (one folded mctx search per move). With exact
    # values the first player wins 3x3 Hex every time; every game ends on a real connection
    # (an illegal move would end it with the board unconnected).
    policy = mcts.mcts_policy(HEX3, oracle, num_simulations=32, kind="muzero")
    result = arena.play(HEX3, [policy, jaxgames.random_policy], jax.random.key(0), num_games=8,
                        params=[P(), None], stats=_winner)
    assert (np.asarray(result.stats) >= 0).all()
    assert result.seat_mean[0, 0] == 1.0    # the searcher as Black (seat 0) always wins
    assert result.mean[0] > 0
