"""The game-agnostic AlphaZero learner on tiny Hex boards with stand-in network and search
(a linear net; a one-ply "search" returning the softmax of the logits), so these tests hinge
on the learner alone."""

import dataclasses
import pathlib
import sys

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from train.algos import alphazero as az
from train.algos import league as league_lib
from train.algos import replay as replay_lib
from train.common import make_chunk

REPO = pathlib.Path(__file__).resolve().parents[3]
N = 3
ENV = jaxgames.make("hex", board_size=N)
A = ENV.num_actions


def linear_net(num_actions, obs_size):
    def init_fn(key):
        k1, k2 = jax.random.split(key)
        return {"wp": 0.1 * jax.random.normal(k1, (obs_size, num_actions)),
                "wv": 0.1 * jax.random.normal(k2, (obs_size,)), "b": jnp.zeros(())}

    def apply_fn(params, obs):
        x = obs.reshape(obs.shape[0], -1).astype(jnp.float32)
        return x @ params["wp"], jnp.tanh(x @ params["wv"] + params["b"])

    return init_fn, apply_fn


INIT, APPLY = linear_net(A, N * N * 2)


class Out:  # the fields of mctx.PolicyOutput the learner reads
    def __init__(self, action, action_weights):
        self.action, self.action_weights = action, action_weights


def one_ply(apply_fn):
    """A stand-in search: the softmax of the logits, an action sampled from it."""
    def search(params, states, key):
        logits, _ = apply_fn(params, states.observation)
        logits = jnp.where(states.legal_action_mask, logits, -jnp.inf)
        # the learner hands a search one key per game
        return Out(jax.vmap(jax.random.categorical)(key, logits).astype(jnp.int32), jax.nn.softmax(logits))
    return search


CFG = az.AZConfig(games_per_update=8, sgd_steps=4, batch_size=16, buffer_size=256, phase1_simulations=16)


def make(cfg=CFG, *, search=one_ply, phase1_updates=0, **kwargs):
    return az.make(cfg, ENV, (INIT, APPLY), search, max_moves=N * N,
                   **{"pool_capacity": 4, "phase1_updates": phase1_updates, **kwargs})


def promote(carry):
    return carry.replace(league=league_lib.promote(carry.league, carry.average))


LEARNER = make(phase1_updates=1, symmetry=az.reverse_cells(N * N))
CHUNK = make_chunk(LEARNER.update, 2)
SELF_PLAY_ONLY = make(dataclasses.replace(CFG, sgd_steps=20, learning_rate=1e-2))
SELF_PLAY_CHUNK = make_chunk(SELF_PLAY_ONLY.update, 2)
PROMOTE = jax.jit(promote)


def test_phase1_then_self_play_round_trip():
    carry = LEARNER.init(jax.random.key(0))
    assert int(carry.league.size) == 0  # phase 1 first: the pool starts with its model
    carry, m = CHUNK(carry, jax.random.key(1), 0)  # update 0: phase 1, update 1: self-play
    m = jax.tree_util.tree_map(np.asarray, m)
    assert m["phase"].tolist() == [1, 2]
    assert np.all(m["ended"] == 1.0) and np.all(m["misrouted"] == 0)
    # every game of 3x3 Hex lasts 3 to 9 moves; each position is one row
    assert np.all((m["positions"] >= 3 * 8) & (m["positions"] <= 9 * 8))
    assert int(carry.replay.size) == int(m["positions"].sum())
    assert int(carry.step) == 2 and int(carry.games) == 16
    for k in ("loss", "value_loss", "policy_loss", "l2"):
        assert np.all(np.isfinite(m[k])), k
    rows = jax.tree_util.tree_map(lambda x: np.asarray(x)[:int(carry.replay.size)], carry.replay.data)
    np.testing.assert_allclose(rows.policy.sum(-1), 1.0, atol=1e-5)
    assert np.all(rows.policy[~rows.legal] == 0)
    assert set(np.unique(rows.value).tolist()) <= {-1.0, 1.0}
    # Hex has no draws: in every game the winner's positions say +1, the loser's -1,
    # so the movers' labels of a game alternate: the first position is +1 iff Black won
    assert np.all(np.abs(rows.value) == 1.0)
    carry = PROMOTE(carry)
    assert int(carry.league.size) == 1 and carry.league.ids.tolist()[0] == 0
    assert m["opponent_generation"].tolist() == [-1, -1]  # the pool was empty: newest vs itself
    carry, m = CHUNK(carry, jax.random.key(2), 2)
    assert np.asarray(m["opponent_generation"]).tolist() == [0, 0]


def test_phase1_labels_are_uct_win_rates():
    labeller = jax.jit(az.uct_labeller(ENV, 64))
    # Black (to move) has b1 and b2; White a2 and b3. Black wins at once only at a3 (cell 6):
    # that child is a finished game won, its win rate exactly 1, so its label is the largest
    board = np.array([[0, 1, 0], [-1, 1, 0], [0, -1, 0]])
    state = ENV.from_board(board)
    pi, value = labeller(jax.tree_util.tree_map(lambda x: x[None], state), jax.random.key(0))
    pi = np.asarray(pi)[0]
    legal = np.asarray(state.legal_action_mask)
    assert abs(pi.sum() - 1) < 1e-5 and np.all(pi[~legal] == 0) and np.all(pi[legal] > 0)
    assert pi[6] == pi.max()
    # the root's value: Black's win rate from the root on a scale of [-1, 1]. Black wins at
    # once at a3 and UCT finds it: well above even
    assert value.shape == (1,) and 0.3 < float(value[0]) <= 1.0


def test_phase1_value_uct_takes_the_labellers_values():
    """With ``phase1_value="uct"`` every phase-1 row's value target is the labeller's (a
    stand-in: +0.25 for Black to move, -0.25 for White), not the game's result (+-1)."""
    def stand_in(states, keys):
        legal = states.legal_action_mask
        return (legal / legal.sum(-1, keepdims=True),
                jnp.where(states.current_player == 0, 0.25, -0.25))

    learner = make(dataclasses.replace(CFG, sgd_steps=1, phase1_value="uct"), phase1_updates=1,
                   labeller=stand_in)
    carry, m = make_chunk(learner.update, 1)(learner.init(jax.random.key(0)), jax.random.key(1), 0)
    assert int(np.asarray(m["phase"])[0]) == 1
    rows = jax.tree_util.tree_map(lambda x: np.asarray(x[:int(carry.replay.size)]), carry.replay.data)
    black = rows.obs[..., 0].sum((1, 2)) == rows.obs[..., 1].sum((1, 2))   # Black to move: equal stones
    assert black.any() and (~black).any()
    np.testing.assert_allclose(rows.value, np.where(black, 0.25, -0.25))
    with pytest.raises(ValueError, match="phase1_value"):
        make(az.AZConfig(phase1_value="mean"))


def test_win_rate_distribution_fallbacks():
    legal = jnp.array([True, True, False, True])
    got = az.win_rate_distribution(jnp.array([[0.5, 0.25, 0.9, 0.25], [0, 0, 0.0, 0],
                                              [0, 0, 0, 0]]),
                                   jnp.array([[2, 4, 0, 4], [1, 3, 0, 0], [0, 0, 0, 0]]), legal)
    np.testing.assert_allclose(got, [[0.5, 0.25, 0, 0.25], [0.25, 0.75, 0, 0], [1 / 3, 1 / 3, 0, 1 / 3]],
                               atol=1e-6)


def test_loss_is_eq3():
    params = INIT(jax.random.key(3))
    states = jax.jit(jax.vmap(ENV.init))(jax.random.split(jax.random.key(0), 2))
    batch = az.Position(obs=states.observation, policy=jnp.full((2, A), 0.0).at[:, :9].set(1 / 9),
                        legal=states.legal_action_mask, value=jnp.array([1.0, -1.0]))
    # jitted: op by op, each primitive of the network and the loss compiles on its own
    total, aux = jax.jit(lambda p, b: az.loss(CFG, APPLY, p, b))(params, batch)
    logits, v = APPLY(params, batch.obs)
    p = np.asarray(jax.nn.softmax(jnp.where(batch.legal, logits, -1e9)))
    lp = -(np.asarray(batch.policy) * np.log2(np.maximum(p, 1e-30))).sum(-1).mean()
    lv = (((np.asarray(v) + 1) / 2 - np.array([1.0, 0.0])) ** 2).mean()
    l2 = sum(float((np.asarray(x) ** 2).sum()) for x in jax.tree_util.tree_leaves(params))
    np.testing.assert_allclose(float(aux["policy_loss"]), lp, rtol=1e-5)
    np.testing.assert_allclose(float(aux["value_loss"]), lv, rtol=1e-5)
    np.testing.assert_allclose(float(total), 0.5 * lv + 0.5 * lp + 1e-4 * l2, rtol=1e-5)


def test_reverse_cells_is_the_half_turn():
    board = np.array([[1, 0, -1], [0, 1, 0], [0, 0, -1]])
    s = ENV.from_board(board)
    sym = az.reverse_cells(N * N)
    obs, pol = sym(s.observation, jnp.arange(A))
    rotated = ENV.from_board(board[::-1, ::-1])
    np.testing.assert_array_equal(obs, rotated.observation)
    assert np.asarray(pol).tolist() == [8, 7, 6, 5, 4, 3, 2, 1, 0, 9]  # the swap action stays
    _, legal = sym(s.observation, s.legal_action_mask)
    np.testing.assert_array_equal(legal, rotated.legal_action_mask)


def test_replay_ring_keeps_the_newest_valid_rows():
    buf = replay_lib.empty({"x": jnp.int32(0)}, 5)
    buf = replay_lib.write(buf, {"x": jnp.arange(4)}, jnp.array([True, False, True, True]))
    assert int(buf.size) == 3 and np.asarray(buf.data["x"])[:3].tolist() == [0, 2, 3]
    buf = replay_lib.write(buf, {"x": jnp.arange(10, 14)}, jnp.ones(4, bool))
    assert int(buf.size) == 5 and int(buf.next) == 2
    assert sorted(np.asarray(buf.data["x"]).tolist()) == [3, 10, 11, 12, 13]
    buf = replay_lib.write(buf, {"x": jnp.arange(20, 28)}, jnp.ones(8, bool))  # more than fits
    assert sorted(np.asarray(buf.data["x"]).tolist()) == [23, 24, 25, 26, 27]


def test_training_fits_its_data():
    """SGD steps lower the loss on the buffer they train on (the learner learns)."""
    carry = SELF_PLAY_ONLY.init(jax.random.key(4))
    assert int(carry.league.size) == 1  # no phase 1: the initial network is the first opponent
    start = jax.tree_util.tree_map(jnp.copy, carry.params)  # the chunk donates the carry
    carry, m = SELF_PLAY_CHUNK(carry, jax.random.key(5), 0)
    assert np.all(np.asarray(m["opponent_generation"]) == 0)
    data = jax.tree_util.tree_map(lambda x: x[:int(carry.replay.size)], carry.replay.data)
    assert float(SELF_PLAY_ONLY.loss(carry.params, data)[0]) < float(SELF_PLAY_ONLY.loss(start, data)[0])


def test_anchor_fraction_plays_plain_uct_in_a_share_of_the_updates():
    """With ``anchor_fraction`` 1/2 about half the updates play the newest model against the
    anchor (plain UCT, generation ``ANCHOR_GENERATION``), the others a pool model. UCT with 64
    simulations beats the untrained one-ply net on 3x3 Hex (the pool model is the same net,
    so the newest scores about 0 against it); the anchor's moves keep no policy target."""
    learner = make(dataclasses.replace(CFG, sgd_steps=1, anchor_fraction=0.5, anchor_simulations=64))
    carry = learner.init(jax.random.key(0))
    carry, m = make_chunk(learner.update, 16)(carry, jax.random.key(1), 0)
    generations = np.asarray(m["opponent_generation"])
    assert set(np.unique(generations).tolist()) == {az.ANCHOR_GENERATION, 0}
    anchored = generations == az.ANCHOR_GENERATION
    # 16 fair coins: outside 3..13 by chance with probability < 0.5%
    assert 3 <= int(anchored.sum()) <= 13
    score = np.asarray(m["newest_score"])
    assert score[anchored].mean() < -0.5 < score[~anchored].mean()
    # the last update's rows are the replay's newest (a ring buffer: they end at ``next``)
    last = int(np.asarray(m["positions"])[-1])
    rows = np.arange(int(carry.replay.next) - last, int(carry.replay.next)) % carry.replay.capacity
    targeted = (np.asarray(carry.replay.data.policy)[rows].sum(-1) > 0).sum()
    # the anchor's moves, as a pool model's, keep no policy target: each of the 8 games
    # gives the newest model floor or ceil of half its moves
    assert (last - 8) / 2 <= targeted <= (last + 8) / 2
    with pytest.raises(ValueError, match="anchor_fraction"):
        make(az.AZConfig(anchor_fraction=-0.1))


def test_only_the_newest_models_moves_keep_policy_targets():
    """The positions where the pool opponent moved keep no policy target. The newest model's
    weights are zeroed, so its one-ply policy is uniform over the legal moves while the pool
    model's is not: every kept target must be uniform, the others all zero, about half of each
    (Hex alternates its movers). Only the model that plays (``average``) is zeroed, not the SGD
    iterate: self-play must read the former."""
    learner = make(dataclasses.replace(CFG, sgd_steps=1))
    carry = PROMOTE(learner.init(jax.random.key(0)))
    carry = carry.replace(average=jax.tree_util.tree_map(jnp.zeros_like, carry.average))
    carry, _ = make_chunk(learner.update, 1)(carry, jax.random.key(1), 0)
    size = int(carry.replay.size)
    policy = np.asarray(carry.replay.data.policy[:size])
    legal = np.asarray(carry.replay.data.legal[:size])
    targeted = policy.sum(-1) > 0
    uniform = legal / legal.sum(-1, keepdims=True)
    np.testing.assert_allclose(policy[targeted], uniform[targeted], atol=1e-6)
    assert np.all(policy[~targeted] == 0)
    # each of the 8 games gives the newest model floor or ceil of half its moves
    assert (size - 8) / 2 <= targeted.sum() <= (size + 8) / 2


@pytest.mark.parametrize("decay", [0.0, 0.75])
def test_the_model_is_the_moving_average_of_the_sgd_iterates(decay):
    """One SGD step from ``p0`` to ``p1``: the model becomes ``d * p0 + (1 - d) * p1`` (with
    ``d = 0`` the iterate itself), and it is the model that ``params`` gives and ``promote``
    puts into the pool."""
    learner = make(dataclasses.replace(CFG, sgd_steps=1, learning_rate=1e-2, average_decay=decay))
    carry0 = learner.init(jax.random.key(0))
    p0 = jax.tree_util.tree_map(np.asarray, carry0.params)     # the chunk donates carry0
    carry, _ = make_chunk(learner.update, 1)(carry0, jax.random.key(1), 0)
    p1 = carry.params
    assert not np.allclose(p0["wp"], p1["wp"])     # the step moved the iterate
    expected = jax.tree_util.tree_map(lambda a, b: decay * a + (1 - decay) * b, p0, p1)
    chex.assert_trees_all_close(carry.average, expected, rtol=1e-5, atol=1e-7)
    chex.assert_trees_all_equal(learner.params(carry), carry.average)
    promoted = PROMOTE(carry)
    chex.assert_trees_all_equal(league_lib.get(promoted.league, promoted.league.size - 1), carry.average)
    with pytest.raises(ValueError, match="average_decay"):
        make(az.AZConfig(average_decay=1.0))


def test_the_policy_loss_averages_over_the_rows_with_a_target():
    """A row whose policy target is all zero (a pool opponent's or the anchor's move) adds
    nothing to the policy loss, nor to its count."""
    params = INIT(jax.random.key(0))
    state = ENV.init(jax.random.key(1))
    legal = state.legal_action_mask
    target = legal / legal.sum()
    one = az.Position(obs=state.observation[None], policy=target[None], legal=legal[None],
                      value=jnp.zeros(1))
    two = az.Position(obs=jnp.stack([state.observation] * 2), policy=jnp.stack([target, 0 * target]),
                      legal=jnp.stack([legal] * 2), value=jnp.zeros(2))
    cfg = az.AZConfig()
    np.testing.assert_allclose(az.loss(cfg, APPLY, params, two)[1]["policy_loss"],
                               az.loss(cfg, APPLY, params, one)[1]["policy_loss"], rtol=1e-6)
    assert float(az.loss(cfg, APPLY, params, one)[1]["policy_loss"]) > 0


def test_config_is_checked():
    with pytest.raises(ValueError, match="even"):
        make(az.AZConfig(games_per_update=3))
    with pytest.raises(ValueError, match="alpha"):
        make(az.AZConfig(alpha=2.0))
    with pytest.raises(ValueError, match="pool_capacity"):
        make(pool_capacity=0)
    with pytest.raises(ValueError, match="max_moves"):
        az.make(CFG, ENV, (INIT, APPLY), one_ply, max_moves=0, pool_capacity=4)
    with pytest.raises(ValueError, match="two-player"):
        az.make(CFG, jaxgames.make("hearts"), (INIT, APPLY), one_ply, max_moves=9, pool_capacity=4)


_SHARDED = """
import json, sys, jax, numpy as np
sys.path.insert(0, "tests/train/algos")
import test_alphazero as t
from train.common import make_chunk
carry, m = t.SELF_PLAY_CHUNK(t.SELF_PLAY_ONLY.init(jax.random.key(0)), jax.random.key(1), 0)
print(json.dumps({"devices": jax.device_count(), "loss": np.asarray(m["loss"]).tolist(),
                  "wp": np.asarray(carry.params["wp"]).ravel().tolist()}))
"""


def test_four_devices_match_one(on_one_and_four_devices):
    one, four = on_one_and_four_devices(_SHARDED)
    assert one["devices"] == 1 and four["devices"] == 4
    np.testing.assert_allclose(four["loss"], one["loss"], rtol=1e-4)
    np.testing.assert_allclose(four["wp"], one["wp"], rtol=1e-4, atol=1e-5)


def test_sample_moves_zero_plays_the_search_policy_greedily():
    """After ``sample_moves`` moves the search's most likely action is played: with 0, and the
    newest model against itself (the pool holds only it), every game is the same game."""
    def unique_positions(sample_moves):
        learner = make(dataclasses.replace(CFG, sample_moves=sample_moves))
        carry, m = jax.jit(learner.update)(learner.init(jax.random.key(0)), jax.random.key(1))
        obs = np.asarray(carry.replay.data.obs)[:int(carry.replay.size)]
        return int(m["positions"]), len(np.unique(obs.reshape(len(obs), -1), axis=0))

    positions, unique = unique_positions(0)
    assert positions % CFG.games_per_update == 0 and unique == positions // CFG.games_per_update
    positions, unique = unique_positions(1000)
    assert unique > positions // CFG.games_per_update


def greedy(apply_fn):
    """A stand-in search without randomness: the most likely legal action of the network."""
    def search(params, states, key):
        logits, _ = apply_fn(params, states.observation)
        logits = jnp.where(states.legal_action_mask, logits, -jnp.inf)
        return Out(jnp.argmax(logits, -1).astype(jnp.int32), jax.nn.softmax(logits))
    return search


def test_paired_search_plays_each_mover_with_its_own_model():
    """One search over both models' games (stacked params, ``paired_apply``) plays and labels
    exactly as a reference written here that moves each game with the mover's own network:
    the newest model (negated weights) in seat 0 of the even games and seat 1 of the odd ones,
    the pool's (the initial network) in the other; policy targets on the newest model's moves
    only; values the final results from the mover's view."""
    learner = make(search=greedy)
    carry = learner.init(jax.random.key(0))
    pool = jax.tree_util.tree_map(np.asarray, carry.params)
    newest = jax.tree_util.tree_map(lambda p: -p, pool)
    carry = carry.replace(average=jax.tree_util.tree_map(jnp.asarray, newest))
    carry, m = jax.jit(learner.update)(carry, jax.random.key(1))
    assert int(m["misrouted"]) == 0

    G = CFG.games_per_update
    seats = np.arange(G) % 2
    states = [ENV.init(jax.random.key(g)) for g in range(G)]   # Hex starts from the empty board
    rows, movers = [], []
    for _ in range(N * N):
        for g, state in enumerate(states):
            if bool(state.terminated):
                continue
            mover = int(state.current_player)
            params = newest if mover == seats[g] else pool
            logits, _ = APPLY(params, state.observation[None])
            logits = np.where(np.asarray(state.legal_action_mask), np.asarray(logits)[0], -np.inf)
            policy = np.asarray(jax.nn.softmax(logits)) if mover == seats[g] else np.zeros(A)
            rows.append((np.asarray(state.observation), policy, g))
            movers.append(mover)
            states[g] = ENV.step(state, int(np.argmax(logits)))
    size = int(carry.replay.size)
    assert size == len(rows)
    data = jax.tree_util.tree_map(lambda x: np.asarray(x)[:size], carry.replay.data)
    for i, ((obs, policy, g), mover) in enumerate(zip(rows, movers)):
        np.testing.assert_array_equal(data.obs[i], obs)
        np.testing.assert_allclose(data.policy[i], policy, rtol=1e-5, atol=1e-7)
        assert data.value[i] == float(states[g].rewards[mover])


def test_the_half_size_search_runs_once_the_movers_fit():
    """Once each model's unfinished games fit in a quarter of the batch, self-play searches
    only them in a half-size search: both sizes run, no mover goes to the other model, and
    every stored policy target is a distribution over legal moves or empty."""
    sizes = []

    def recorded(apply_fn):
        search = one_ply(apply_fn)

        def wrapped(params, states, key):
            n = states.step_count.shape[0]
            jax.debug.callback(lambda: sizes.append(n))
            return search(params, states, key)
        return wrapped

    # on 3x3 Hex most random games fill most of the board: in about half the updates some
    # move finds half the games over, so 16 updates all miss it with probability ~2^-16
    learner = make(dataclasses.replace(CFG, sgd_steps=1), search=recorded)
    carry = PROMOTE(learner.init(jax.random.key(0)))
    carry = carry.replace(average=jax.tree_util.tree_map(lambda p: -p, carry.average))
    carry, m = make_chunk(learner.update, 16)(carry, jax.random.key(1), 0)
    jax.effects_barrier()
    assert np.all(np.asarray(m["misrouted"]) == 0)
    assert sorted(set(sizes)) == [CFG.games_per_update // 2, CFG.games_per_update]
    size = int(carry.replay.size)   # the newest rows: the buffer holds 256
    policy, legal = (np.asarray(x)[:size] for x in (carry.replay.data.policy, carry.replay.data.legal))
    assert np.all(policy[~legal] == 0)
    total = policy.sum(-1)
    assert np.all((np.abs(total - 1) < 1e-5) | (total == 0)) and (total == 0).any()


def test_step_size_decays_to_its_final_fraction():
    """With ``decay_updates`` the step size falls along a cosine: to 0 here, after which an
    update no longer moves the parameters (it still plays and stores its games)."""
    cfg = dataclasses.replace(CFG, final_lr_fraction=0.0)
    learner = make(cfg, decay_updates=2)
    update = jax.jit(learner.update)
    carry = learner.init(jax.random.key(0))
    before = carry.params
    for i in range(2):
        carry, _ = update(carry, jax.random.key(i + 1))
    moved = carry.params
    assert any(not np.allclose(a, b) for a, b in zip(jax.tree_util.tree_leaves(before),
                                                     jax.tree_util.tree_leaves(moved)))
    size = int(carry.replay.size)
    carry, _ = update(carry, jax.random.key(9))
    assert int(carry.replay.size) > size
    for a, b in zip(jax.tree_util.tree_leaves(moved), jax.tree_util.tree_leaves(carry.params)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="final_lr_fraction"):
        dataclasses.replace(cfg, final_lr_fraction=1.5).validate()
