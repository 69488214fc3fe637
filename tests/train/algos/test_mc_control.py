"""Monte Carlo control pieces against hand computations."""

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from train.games import ten_half as lib
from train.algos import mc_control as mc


def test_returns_to_go_by_hand():
    reward = jnp.array([0.0, 2.0, 0.0, 1.0])
    alive = jnp.array([True, True, True, False])
    g = mc.returns_to_go(reward, alive, 0.5)
    # G2 = 0, G1 = 2 + 0.5*0 = 2, G0 = 0 + 0.5*2 = 1; step 3 is past the end
    np.testing.assert_allclose(g, [1.0, 2.0, 0.0, 0.0])


def test_first_visit_marks_repeats():
    s = jnp.array([3, 4, 3, 3])
    a = jnp.array([1, 1, 1, 0])
    alive = jnp.array([True, True, True, True])
    np.testing.assert_array_equal(mc.first_visit(s, a, alive), [True, True, False, True])


def _one_episode_update(make, episode: mc.Episode, ended=True):
    """Run an update whose rollout is replaced by a hand-built episode."""
    cfg = mc.MCConfig(num_states=10, num_actions=2, max_episode_steps=3, episodes_per_update=1)
    orig = mc.rollout
    mc.rollout = lambda *a, **k: (episode, jnp.bool_(ended))
    try:
        update = make(cfg, None, None)
        carry, _ = update(mc.init(cfg), jax.random.key(0))
    finally:
        mc.rollout = orig
    return carry


def test_off_policy_weighted_importance_sampling_by_hand():
    # Q starts at 0 (greedy = stick 0). Episode: s1 hit, s2 hit, s3 stick, final reward +2.
    ep = mc.Episode(state=jnp.array([1, 2, 3]), action=jnp.array([1, 1, 0]),
                    reward=jnp.array([0.0, 0.0, 2.0]), alive=jnp.array([True, True, True]))
    carry = _one_episode_update(mc.make_off_policy_update, ep)
    q = np.asarray(mc.q_values(carry))
    w = np.asarray(carry.weight)
    # t=2: C(3,0) += 1, Q(3,0) = 2; target action at s3 is 0 = taken -> continue, W = 2
    # t=1: C(2,1) += 2, Q(2,1) = 2; argmax Q(2,.) after the update = 1 = taken -> W = 4
    # t=0: C(1,1) += 4, Q(1,1) = 2; stop at the end
    assert w[3, 0] == 1 and w[2, 1] == 2 and w[1, 1] == 4
    np.testing.assert_allclose(q[[3, 2, 1], [0, 1, 1]], [2.0, 2.0, 2.0])

    # With a losing return the target (argmax after the update) differs at t=1: stop there.
    ep_lose = ep.replace(reward=jnp.array([0.0, 0.0, -1.0]))
    carry = _one_episode_update(mc.make_off_policy_update, ep_lose)
    w = np.asarray(carry.weight)
    # t=2: stick at s3, Q(3,0) = -1 -> argmax is now 1 (hit, Q=0) != 0 -> stop after updating
    assert w[3, 0] == 1 and w[2, 1] == 0 and w[1, 1] == 0


def test_on_policy_first_visit_average_by_hand():
    ep = mc.Episode(state=jnp.array([1, 2, 0]), action=jnp.array([1, 0, 0]),
                    reward=jnp.array([0.0, -1.0, 0.0]), alive=jnp.array([True, True, False]))
    carry = _one_episode_update(mc.make_on_policy_update, ep)
    q = np.asarray(mc.q_values(carry))
    assert q[1, 1] == -1 and q[2, 0] == -1 and np.asarray(carry.weight).sum() == 2


def test_learners_converge_on_a_small_budget():
    # 200,000 episodes per method (the source uses 500,000): both within 0.01 of the optimum
    from jaxgames.ten_half import dp
    from train.common import make_chunk

    learners = lib.learners(episodes_per_update=5_000, epsilon=0.1, discount=1.0)
    init, update = lib.joint(learners)
    carry, _ = make_chunk(update, 40)(init(jax.random.key(0)), jax.random.key(1), 0)
    for m, learner in learners.items():
        policy = np.asarray(mc.greedy(learner.params(carry[m]))).reshape(dp.SHAPE)
        gap = dp.optimal_value() - dp.policy_value(policy)
        assert 0 <= gap < 0.01, (m, gap)
        assert lib.agreement(policy) > 0.85, m
        # the learner's policy is the greedy policy of its Q table, state by state
        env = jaxgames.make("ten_half")
        states = jax.vmap(env.init)(jax.random.split(jax.random.key(2), 64))
        acts = jax.vmap(lambda s: learner.policy(learner.params(carry[m]), s, jax.random.key(0)))(states)
        np.testing.assert_array_equal(acts, policy[states.player_sum, states.num_cards, states.num_faces])
    assert jaxgames.make("ten_half").num_actions == 2
