"""The generic TD(λ) learner (train.algos.linear_td.make) on a tiny made-up game: the learned
value approaches the true expectation of the outcome."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from train.algos import linear_td


@struct.dataclass
class CoinState:
    current_player: jnp.ndarray   # int32 []
    coin: jnp.ndarray             # int32 [] 0 or 1, drawn at the deal
    winner: jnp.ndarray           # int32 [] drawn at the deal: seat 0 with prob 0.8 (coin 1) or 0.2
    t: jnp.ndarray                # int32 []
    terminated: jnp.ndarray
    truncated: jnp.ndarray


class CoinGame:
    """Two seats take turns for 4 moves (the moves change nothing); the coin seen at every
    state says who will probably win; the winner's outcome is 10, the loser's 0."""

    num_players = 2

    def init(self, key):
        k1, k2 = jax.random.split(key)
        coin = jax.random.bernoulli(k1).astype(jnp.int32)
        p0 = jnp.where(coin == 1, 0.8, 0.2)
        winner = jnp.where(jax.random.uniform(k2) < p0, 0, 1).astype(jnp.int32)
        return CoinState(current_player=jnp.int32(0), coin=coin, winner=winner, t=jnp.int32(0),
                         terminated=jnp.bool_(False), truncated=jnp.bool_(False))

    def step(self, state, action):
        t = state.t + 1
        return state.replace(t=t, current_player=t % 2, terminated=t >= 4)


def features(state, seat):   # one active feature: (seat, coin)
    return (2 * seat + state.coin)[None].astype(jnp.int32), jnp.ones(1, jnp.bool_)


def make(games=64, seats=None, opponent=None, lam=0.75):
    cfg = linear_td.LinearTDConfig(value_low=0.0, value_high=10.0, lam=lam, lr_scale=13.0 * games)
    return linear_td.make(
        cfg, CoinGame(), num_features=4, num_slots=1, max_records=3, features=features,
        record=lambda s: s.t < 3, outcome=lambda s, seat: jnp.where(s.winner == seat, 10.0, 0.0),
        policy=lambda w, s, k: jnp.int32(0), games_per_update=games, max_steps=6,
        learning_seats=seats, opponent_policy=opponent)


@pytest.mark.parametrize("lam", [0.75, 1.0])
def test_values_approach_the_expected_outcome(lam):
    learner = make(lam=lam)
    chunk = jax.jit(lambda c, k: jax.lax.scan(lambda c, k: learner.update(c, k), c, jax.random.split(k, 300)))
    carry, metrics = chunk(learner.init(jax.random.key(0)), jax.random.key(1))
    w = np.asarray(learner.params(carry))
    # seat 0: coin 0 -> 2, coin 1 -> 8; seat 1: coin 0 -> 8, coin 1 -> 2
    np.testing.assert_allclose(w, [2.0, 8.0, 8.0, 2.0], atol=0.6)
    assert int(carry.games) == 300 * 64 and int(metrics["games"][-1]) == 300 * 64
    assert float(metrics["records"][-1]) == 3.0 and float(metrics["overflow"].max()) == 0.0
    assert float(metrics["ended"].min()) == 1.0
    assert abs(float(metrics["outcome"].mean()) - 5.0) < 0.5
    assert float(metrics["abs_td_error"][-20:].mean()) < float(metrics["abs_td_error"][:3].mean())


def test_one_learning_seat_needs_an_opponent_and_learns_alone():
    with pytest.raises(ValueError, match="opponent_policy"):
        make(seats=(0,))
    learner = make(seats=(0,), opponent=lambda w, s, k: jnp.int32(1))
    chunk = jax.jit(lambda c, k: jax.lax.scan(lambda c, k: learner.update(c, k), c, jax.random.split(k, 300)))
    carry, _ = chunk(learner.init(jax.random.key(0)), jax.random.key(1))
    w = np.asarray(learner.params(carry))
    np.testing.assert_allclose(w[:2], [2.0, 8.0], atol=0.6)
    assert np.all(np.abs(w[2:]) <= 0.25)   # seat 1's features never learn (initial ±1/4)


def test_records_past_the_cap_are_dropped_and_counted():
    cfg = linear_td.LinearTDConfig(value_low=0.0, value_high=10.0)
    learner = linear_td.make(
        cfg, CoinGame(), num_features=4, num_slots=1, max_records=2, features=features,
        record=lambda s: s.t < 3, outcome=lambda s, seat: jnp.float32(0.0),
        policy=lambda w, s, k: jnp.int32(0), games_per_update=4, max_steps=6)
    _, m = jax.jit(learner.update)(learner.init(jax.random.key(0)), jax.random.key(1))
    assert float(m["overflow"]) == 1.0 and float(m["records"]) == 2.0
