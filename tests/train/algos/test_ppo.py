"""PPO with the Trinal-Clip loss: each pure piece against a hand computation, and the learner
end to end on BitGuess (tests/toy_games.py), where naming one's own private bit is optimal,
against a random opponent."""

import dataclasses
import pathlib
import sys

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.core import random_legal_action
from train.algos import ppo
from train.algos.opponents import BIG, VsOpponents
from train.common import make_chunk

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/: the toy games
from toy_games import BitGuess  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]

# -- the pure pieces --------------------------------------------------------------------------


def test_gae_by_hand():
    # gamma 0.9, lambda 0.8; env 0's game ends after step 1, so nothing crosses it
    rewards = jnp.array([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    values = jnp.array([[0.5, 1.0], [0.2, 0.0], [1.0, 0.5]])
    dones = jnp.array([[False, False], [True, False], [False, False]])
    last = jnp.array([2.0, -1.0])
    adv, ret = ppo.gae(rewards, values, dones, last, gamma=0.9, lam=0.8)
    # env 0: t=2: 3 + 0.9 * 2 - 1 = 3.8; t=1 (done): 0 - 0.2 = -0.2;
    #        t=0: (1 + 0.9 * 0.2 - 0.5) + 0.72 * -0.2 = 0.68 - 0.144 = 0.536
    # env 1: t=2: 1 + 0.9 * -1 - 0.5 = -0.4; t=1: (2 + 0.9 * 0.5 - 0) + 0.72 * -0.4 = 2.162;
    #        t=0: (0 + 0.9 * 0 - 1) + 0.72 * 2.162 = 0.55664
    expected = np.array([[0.536, 0.55664], [-0.2, 2.162], [3.8, -0.4]])
    np.testing.assert_allclose(adv, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ret, expected + np.asarray(values), rtol=1e-6, atol=1e-6)
    # gamma = lambda = 1: the advantage is the sum of the rewards to the game's end minus V
    adv, ret = ppo.gae(rewards, values, dones, last, gamma=1.0, lam=1.0)
    np.testing.assert_allclose(ret[:, 0], [1.0, 0.0, 3.0 + 2.0], rtol=1e-6)
    np.testing.assert_allclose(ret[:, 1], [0 + 2 + 1 - 1.0, 2 + 1 - 1.0, 1 - 1.0], rtol=1e-6)


def test_fill_bounds_gives_each_step_its_games_bounds():
    junk = 99.0   # bounds at steps without done are never read
    bounds = jnp.array([[[junk, junk], [-1.0, 1.0]],
                        [[-3.0, 5.0], [junk, junk]],
                        [[junk, junk], [junk, junk]],
                        [[junk, junk], [-2.0, 7.0]]])
    dones = jnp.array([[False, True], [True, False], [False, False], [False, True]])
    got = np.asarray(ppo.fill_bounds(bounds, dones))
    none = [-BIG, BIG]
    np.testing.assert_array_equal(got[:, 0], [[-3, 5], [-3, 5], none, none])   # the last game unfinished
    np.testing.assert_array_equal(got[:, 1], [[-1, 1], [-2, 7], [-2, 7], [-2, 7]])


EPS, DELTA1 = 0.2, 3.0


@pytest.mark.parametrize("ratio, adv, trinal, plain", [
    # A >= 0: both are PPO's min(r A, clip(r) A)
    (0.5, 1.0, -0.5, -0.5), (1.1, 1.0, -1.1, -1.1), (1.2, 1.0, -1.2, -1.2), (1.5, 1.0, -1.2, -1.2),
    (5.0, 2.0, -2.4, -2.4), (1.5, 0.0, 0.0, 0.0),
    # A < 0: max(r, 1 - eps) A, and Trinal-Clip caps r at delta1
    (0.5, -1.0, 0.8, 0.8), (0.8, -1.0, 0.8, 0.8), (1.1, -1.0, 1.1, 1.1), (2.0, -1.0, 2.0, 2.0),
    (3.0, -1.0, 3.0, 3.0), (5.0, -1.0, 3.0, 5.0), (10.0, -2.0, 6.0, 20.0),
])
def test_policy_losses_at_and_beyond_the_clips(ratio, adv, trinal, plain):
    r, a = jnp.array([ratio]), jnp.array([adv])
    np.testing.assert_allclose(ppo.trinal_clip_policy_loss(r, a, eps=EPS, delta1=DELTA1), trinal, rtol=1e-6)
    np.testing.assert_allclose(ppo.ppo_policy_loss(r, a, eps=EPS), plain, rtol=1e-6)


def test_trinal_clip_stops_the_gradient_beyond_delta1():
    grad = lambda f: jax.grad(lambda r: f(r[None], jnp.array([-1.0])))(jnp.float32(5.0))  # noqa: E731
    assert float(grad(lambda r, a: ppo.trinal_clip_policy_loss(r, a, eps=EPS, delta1=DELTA1))) == 0.0
    assert float(grad(lambda r, a: ppo.ppo_policy_loss(r, a, eps=EPS))) == 1.0
    # below delta1 it pulls the probability down as PPO does
    g = jax.grad(lambda r: ppo.trinal_clip_policy_loss(r[None], jnp.array([-1.0]), eps=EPS, delta1=DELTA1))
    assert float(g(jnp.float32(2.0))) == 1.0
    # the mean over samples of mixed signs
    r, a = jnp.array([1.5, 5.0, 0.5]), jnp.array([1.0, -1.0, -2.0])
    np.testing.assert_allclose(ppo.trinal_clip_policy_loss(r, a, eps=EPS, delta1=DELTA1),
                               -(1.2 - 3.0 - 1.6) / 3, rtol=1e-6)


def test_value_losses():
    values = jnp.array([0.0, 1.0, 2.0, 0.5])
    returns = jnp.array([5.0, -3.0, 1.5, 3.0])
    low = jnp.array([-1.0, -2.0, -BIG, -3.0])
    high = jnp.array([2.0, 3.0, BIG, 3.0])
    # clipped targets 2, -2, 1.5 and 3 (exactly at the bound: unchanged)
    np.testing.assert_allclose(ppo.trinal_value_loss(values, returns, low, high),
                               (4.0 + 9.0 + 0.25 + 6.25) / 4, rtol=1e-6)
    np.testing.assert_allclose(ppo.squared_value_loss(values, returns), (25.0 + 16.0 + 0.25 + 6.25) / 4,
                               rtol=1e-6)


@pytest.mark.parametrize("changes, message", [
    ({"num_envs": 0}, "num_envs"), ({"epochs": 1.5}, "epochs"),
    ({"num_envs": 6, "num_steps": 1, "minibatches": 4}, "must divide"),
    ({"delta1": 1.2}, "delta1"), ({"clip_eps": 0.0}, "clip_eps"), ({"loss": "ppo2"}, "loss"),
    ({"gamma": 1.5}, "gamma"), ({"gae_lambda": -0.1}, "gae_lambda"), ({"learning_rate": 0.0}, "learning_rate"),
    ({"entropy_coef": -1.0}, "entropy_coef"), ({"max_grad_norm": 0.0}, "max_grad_norm"),
    ({"num_envs": 32, "opponent_groups": 5}, "opponent_groups"),
])
def test_config_refusals(changes, message):
    with pytest.raises(ValueError, match=message):
        ppo.PPOConfig(**changes).validate()


# -- the learner ------------------------------------------------------------------------------

ENV = BitGuess()


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x, legal):
        h = jnp.tanh(nn.Dense(16)(x))
        logits = nn.Dense(ENV.num_actions)(h)
        return jnp.where(legal, logits, -jnp.inf), nn.Dense(1)(h)[..., 0]


def features(state, seat):
    return (ENV.observe(state, seat),)


WRAPPER = VsOpponents(ENV, opponent_policy=lambda table, opponent, state, key: random_legal_action(state, key),
                      draw_opponent=lambda table, key: jnp.int32(0),
                      value_bounds=lambda final, seat: jnp.array([-1.0, 1.0]))
CFG = ppo.PPOConfig(num_envs=32, num_steps=4, epochs=4, minibatches=2, learning_rate=1e-2)
TRACES = []


def counted(update):
    def traced(carry, key):
        TRACES.append(1)
        return update(carry, key)
    return traced


LEARNER = ppo.make(CFG, WRAPPER, MLP(), features=features, pool=jnp.zeros(()),
                   choose_opponent=lambda pool, params, key: pool)
CHUNK = make_chunk(counted(LEARNER.update), 10)


@jax.jit
def play(params, key):
    """The learner's policy against the random opponent, 1024 games: (win rate, mean return).
    Each game of BitGuess is one learner decision."""
    keys = jax.random.split(key, (2, 1024))
    s = jax.vmap(WRAPPER.reset, in_axes=(None, 0))(jnp.zeros(()), keys[0])
    actions = jax.vmap(LEARNER.policy, in_axes=(None, 0, 0))(params, s.state, keys[1])
    s = jax.vmap(WRAPPER.step, in_axes=(None, 0, 0, 0))(jnp.zeros(()), s, actions, keys[1])
    return (s.reward > 0).mean(), s.reward.mean(), s.done.all()


def test_learner_learns_to_name_its_bit():
    carry = LEARNER.init(jax.random.key(0))
    win0, ret0, _ = play(LEARNER.params(carry), jax.random.key(1))
    # random play wins a quarter of the games, gets 0 on average
    assert float(win0) < 0.35 and abs(float(ret0)) < 0.15
    history = []
    for c in range(3):
        carry, m = CHUNK(carry, jax.random.key(10), c * 10)
        history.append(jax.tree_util.tree_map(np.asarray, m))
    assert len(TRACES) == 1   # one compile of update for every chunk
    m = {k: np.concatenate([h[k] for h in history]) for k in history[0]}
    for k in ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "episode_return"):
        assert np.all(np.isfinite(m[k])), k
    # every decision of BitGuess ends its game
    np.testing.assert_array_equal(m["games_finished"], CFG.num_envs * CFG.num_steps)
    assert int(carry.step) == 30 and int(carry.decisions) == 30 * CFG.num_envs * CFG.num_steps
    assert m["decisions"][-1] == int(carry.decisions)
    assert m["episode_return"][-5:].mean() > 0.35 > m["episode_return"][:2].mean()
    win, ret, done = play(LEARNER.params(carry), jax.random.key(2))
    # the optimum wins half the games and gets +1/2 a game
    assert float(win) > 0.42 and float(ret) > 0.38 and bool(done)
    state = jax.vmap(ENV.init)(jax.random.split(jax.random.key(3), 64))
    p = jax.vmap(LEARNER.probs, in_axes=(None, 0, None))(LEARNER.params(carry), state, jax.random.key(0))
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)
    own = np.asarray(p)[np.arange(64), np.asarray(state.bits[:, 0])]   # seat 0 to move
    assert own.min() > 0.8
    # a second run from init: the chunk donated the first carry, table included, and the
    # table make() was given must have survived it
    carry, m = CHUNK(LEARNER.init(jax.random.key(4)), jax.random.key(5), 0)
    assert int(carry.step) == 10 and len(TRACES) == 1


def test_each_group_of_games_faces_the_opponent_drawn_for_it():
    """One opponent per group and update: every game of group g is dealt with table g."""
    wrapper = VsOpponents(ENV, opponent_policy=lambda table, opponent, state, key: random_legal_action(state, key),
                          draw_opponent=lambda table, key: table)
    learner = ppo.make(CFG, wrapper, MLP(), features=features, pool=jnp.zeros(()),
                       choose_opponent=lambda pool, params, key: jax.random.randint(key, (), 0, 10**6))
    carry = learner.init(jax.random.key(0))
    tables, games = jax.jit(lambda c: ppo.deal(learner.parts, c, jax.random.key(1), jax.random.key(2)))(carry)
    G = CFG.opponent_groups
    assert tables.shape == (G,) and games.opponent.shape == (G, CFG.num_envs // G)
    np.testing.assert_array_equal(games.opponent, np.repeat(np.asarray(tables)[:, None], CFG.num_envs // G, 1))
    assert len(set(np.asarray(tables).tolist())) > 1     # the groups draw apart


def test_plain_ppo_loss_runs():
    learner = ppo.make(dataclasses.replace(CFG, loss="ppo", epochs=1), WRAPPER, MLP(), features=features,
                       pool=jnp.zeros(()), choose_opponent=lambda pool, params, key: pool)
    carry = learner.init(jax.random.key(0))
    carry, m = jax.jit(learner.update)(carry, jax.random.key(1))
    assert all(np.isfinite(np.asarray(v)) for v in m.values())
    assert int(carry.step) == 1


_SHARDED = """
import json, sys, jax, numpy as np
sys.path.insert(0, "tests/train/algos")
import test_ppo as t
carry, m = t.CHUNK(t.LEARNER.init(jax.random.key(0)), jax.random.key(1), 0)
_, games = jax.jit(lambda c, k: t.ppo.deal(t.LEARNER.parts, c, k, k))(carry, jax.random.key(2))
print(json.dumps({"devices": jax.device_count(), "loss": np.asarray(m["loss"]).tolist(),
                  "sharded": len(games.reward.sharding.device_set),
                  "params": [np.asarray(x).ravel().tolist() for x in jax.tree_util.tree_leaves(carry.params)]}))
"""


def test_four_devices_match_one(on_one_and_four_devices):
    """The games' batch axis split over 4 devices gives the run of 1 device."""
    one, four = on_one_and_four_devices(_SHARDED)
    assert (one["devices"], one["sharded"]) == (1, 1) and (four["devices"], four["sharded"]) == (4, 4)
    np.testing.assert_allclose(four["loss"], one["loss"], rtol=1e-4, atol=1e-6)
    for a, b in zip(four["params"], one["params"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
