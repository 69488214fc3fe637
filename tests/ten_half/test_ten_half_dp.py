"""The exact solver against independent computations: exhaustive enumeration of the dealer
through ``game.dealer_result``, the Bellman equation through ``game.hit_result``, and Monte
Carlo play of the JAX env."""

import itertools
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.ten_half import dp
from jaxgames.ten_half import game as th

ENV = jaxgames.make("ten_half")
N_GAMES = 100_000
ALL_DEALER = jnp.asarray(np.indices((13,) * 5).reshape(5, -1).T, jnp.int32)   # [13**5, 5]


@jax.jit
def _exact_stick(player_sums, player_cards, all_dealer):
    """[K] exact stick values by enumerating all 13**5 equally likely dealer sequences."""
    def one(ps_pc):
        rewards = jax.vmap(th.dealer_result, in_axes=(None, None, 0))(ps_pc[0], ps_pc[1],
                                                                       all_dealer)
        return rewards.mean(dtype=jnp.float32)
    return jax.lax.map(one, jnp.stack([player_sums, player_cards], 1))


def _play(policy, state, first_action, key):
    """Total reward of one game from ``state``: ``first_action`` (if >= 0), then ``policy``."""
    def body(t, carry):
        state, total, key = carry
        key, sub = jax.random.split(key)
        obs = state.observation
        a = policy[jnp.clip(obs[0], 0, 21), jnp.clip(obs[1], 0, 5), jnp.clip(obs[2], 0, 5)]
        a = jnp.where((t == 0) & (first_action >= 0), first_action, a)
        state = ENV.step(state, a, sub)
        return state, total + state.rewards[0], key
    _, total, _ = jax.lax.fori_loop(0, 5, body, (state, jnp.float32(0), key))
    return total   # at most 4 hits and a stick: every game is over after 5 steps


PLAY = jax.jit(jax.vmap(_play, in_axes=(None, 0, None, 0)))
BATCH_INIT = jax.jit(jax.vmap(ENV.init))


def _keys(seed, n=N_GAMES):
    return jax.random.split(jax.random.PRNGKey(seed), n)


def mc_from_deal(policy, seed):
    states = BATCH_INIT(_keys(seed))
    r = np.asarray(PLAY(jnp.asarray(policy, jnp.int32), states, jnp.int32(-1),
                        _keys(seed + 1000)), np.float64)
    return r.mean(), r.std() / np.sqrt(len(r))


def mc_from_state(policy, s, n, f, action, seed):
    one = ENV.init(jax.random.PRNGKey(0)).replace(
        player_sum=jnp.int32(s), num_cards=jnp.int32(n), num_faces=jnp.int32(f))
    one = one.replace(observation=ENV.observe(one))
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (N_GAMES,) + x.shape), one)
    r = np.asarray(PLAY(jnp.asarray(policy, jnp.int32), states, jnp.int32(action),
                        _keys(seed)), np.float64)
    return r.mean(), r.std() / np.sqrt(len(r))


def brute_force_reachable():
    """Every (sum, cards, faces) of a plain hand of 1..4 cards, by listing the hands."""
    reach = np.zeros((22, 6, 6), bool)
    values = np.asarray(th.card_value_halves(jnp.arange(13)))
    for n in range(1, 5):
        for ranks in itertools.product(range(13), repeat=n):
            s = sum(values[r] for r in ranks)
            if s < 21:
                reach[s, n, sum(r >= 10 for r in ranks)] = True
    return reach


def test_reachable_states():
    reach = dp.reachable_states()
    assert reach.shape == (22, 6, 6) and reach.dtype == bool
    np.testing.assert_array_equal(reach, brute_force_reachable())
    # the deal: one card of 11 possible values; 1-card hands with a face are worth ½
    assert reach[:, 1, :].sum() == 11 and reach[1, 1, 1] and not reach[1, 1, 0]
    assert not reach[21].any() and not reach[:, 0].any() and not reach[:, 5].any()


def test_shapes_and_nans():
    q, pol, reach = dp.optimal_q(), dp.optimal_policy(), dp.reachable_states()
    assert q.shape == (22, 6, 6, 2) and q.dtype == np.float64
    assert pol.shape == (22, 6, 6) and np.issubdtype(pol.dtype, np.integer)
    assert np.isfinite(q[reach]).all() and np.isnan(q[~reach]).all()
    assert set(np.unique(pol)) <= {0, 1} and (pol[~reach] == 0).all()
    np.testing.assert_array_equal(pol[reach], (q[reach][:, 1] > q[reach][:, 0]).astype(int))
    # the cached tables cannot be corrupted through a returned copy
    q[...] = 0
    assert np.isnan(dp.optimal_q()[0, 0, 0, 0])


def test_stick_values_match_dealer_enumeration():
    reach = dp.reachable_states()
    pairs = sorted({(s, n) for s, n, _ in zip(*np.nonzero(reach))})
    ps, pc = (jnp.array(x, jnp.int32) for x in zip(*pairs))
    exact = np.asarray(_exact_stick(ps, pc, ALL_DEALER), np.float64)
    q = dp.optimal_q()
    for (s, n), e in zip(pairs, exact):
        f = np.nonzero(reach[s, n])[0][0]
        assert abs(q[s, n, f, 0] - e) < 1e-5, (s, n, q[s, n, f, 0], e)
        # the stick value does not depend on the faces
        np.testing.assert_allclose(q[s, n, reach[s, n], 0], q[s, n, f, 0], atol=1e-12)


def test_hit_values_satisfy_bellman_through_game_rules():
    q, reach = dp.optimal_q(), dp.reachable_states()
    v = np.fmax(q[..., 0], q[..., 1])
    s, n, f = (jnp.asarray(x, jnp.int32) for x in np.nonzero(reach))
    ranks = jnp.arange(13, dtype=jnp.int32)
    new_s, new_n, new_f, reward, done = jax.vmap(
        lambda r: th.hit_result(s, n, f, r))(ranks)                  # [13, K] each
    new_s, new_n, new_f = (np.asarray(x) for x in (new_s, new_n, new_f))
    done = np.asarray(done)
    cont = v[np.minimum(new_s, 21), np.minimum(new_n, 5), np.minimum(new_f, 5)]
    target = np.where(done, np.asarray(reward, np.float64), cont).mean(0)
    assert np.isfinite(target).all()                # every non-terminal next state is reachable
    np.testing.assert_allclose(q[np.asarray(s), np.asarray(n), np.asarray(f), 1], target,
                               atol=1e-12)


def test_hand_worked_values():
    q = dp.optimal_q()
    # 10 in one card: hit busts on 10 of 13 ranks and makes 10½ (+2) on the 3 faces
    assert abs(q[20, 1, 0, 1] - (-10 + 2 * 3) / 13) < 1e-12
    # 9½ in four cards: a face gives five small (+3), an A heavenly king (+4), else bust
    assert abs(q[19, 4, 1, 1] - (3 * 3 + 4 - 9) / 13) < 1e-12
    # four faces (2 points): a face gives five faces (+5), A..8 five small (+3), 9, 10 bust
    assert abs(q[4, 4, 4, 1] - (3 * 5 + 8 * 3 - 2) / 13) < 1e-12
    assert dp.optimal_policy()[4, 4, 4] == 1


def test_policy_value_of_optimal_policy():
    assert abs(dp.policy_value(dp.optimal_policy()) - dp.optimal_value()) < 1e-12
    np.testing.assert_allclose(dp.policy_q(dp.optimal_policy()), dp.optimal_q(), atol=1e-12)


def test_always_stick_closed_form():
    # sticking on the deal: average over the 13 ranks of the exact stick value of one card
    values = np.asarray(th.card_value_halves(jnp.arange(13)))
    exact = np.asarray(_exact_stick(jnp.asarray(values, jnp.int32),
                                    jnp.ones(13, jnp.int32), ALL_DEALER), np.float64)
    stick = np.zeros((22, 6, 6), int)
    assert abs(dp.policy_value(stick) - exact.mean()) < 1e-5
    mean, se = mc_from_deal(stick, seed=1)
    assert abs(mean - dp.policy_value(stick)) < 4 * se


def test_optimal_beats_other_policies():
    reach = dp.reachable_states()
    best = dp.optimal_value()
    q_opt = dp.optimal_q()
    rng = np.random.default_rng(0)
    policies = [np.zeros((22, 6, 6), int), np.ones((22, 6, 6), int)]
    for threshold in range(2, 21, 3):            # hit below a sum
        policies.append(np.broadcast_to((np.arange(22) < threshold)[:, None, None],
                                        (22, 6, 6)).astype(int))
    policies += [rng.integers(0, 2, (22, 6, 6)) for _ in range(10)]
    flipped = dp.optimal_policy()
    flipped[reach] ^= 1
    policies.append(flipped)
    for pol in policies:
        value = dp.policy_value(pol)
        assert value <= best + 1e-12
        q = dp.policy_q(pol)
        assert (q[reach] <= q_opt[reach] + 1e-12).all()
    assert dp.policy_value(flipped) < best - 0.1


def test_optimal_value_by_monte_carlo_from_deal():
    mean, se = mc_from_deal(dp.optimal_policy(), seed=2)
    assert abs(mean - dp.optimal_value()) < 4 * se, (mean, se, dp.optimal_value())


def test_always_hit_by_monte_carlo():
    hit = np.ones((22, 6, 6), int)
    mean, se = mc_from_deal(hit, seed=3)
    assert abs(mean - dp.policy_value(hit)) < 4 * se


def test_optimal_q_by_monte_carlo_from_states():
    q, pol = dp.optimal_q(), dp.optimal_policy()
    for seed, (s, n, f, a) in enumerate([(10, 2, 0, 0), (10, 2, 0, 1), (1, 1, 1, 1),
                                         (13, 3, 1, 1), (16, 1, 0, 0), (16, 1, 0, 1)]):
        mean, se = mc_from_state(pol, s, n, f, a, seed=10 + seed)
        assert abs(mean - q[s, n, f, a]) < 4 * se, (s, n, f, a, mean, se, q[s, n, f, a])


def test_speed():
    t = time.perf_counter()
    dp._solve(None)                              # uncached full solve (stick + hit values)
    dp._stick_values.__wrapped__()
    assert time.perf_counter() - t < 1.0
    pol = dp.optimal_policy()
    pol[10, 2, 0] ^= 1
    t = time.perf_counter()
    dp.policy_value(pol)                         # a policy not seen before
    assert time.perf_counter() - t < 0.05
