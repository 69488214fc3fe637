import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.ten_half import dp
from toy_games import Duel


def test_make_unknown_game_names_the_choices():
    with pytest.raises(ValueError, match="unknown game 'chess'.*ten_half"):
        jaxgames.make("chess")


def test_make_unknown_option_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown option.*board_size"):
        jaxgames.make("ten_half", board_size=3)


def test_two_player_contract_and_illegal_penalty_split():
    env = Duel()
    jaxgames.api_test(env, num_games=4, max_steps=5)
    state = env.init(jax.random.PRNGKey(0))
    punished = env.step(state, jnp.int32(2))
    np.testing.assert_array_equal(punished.rewards, [-1.0, 1.0])
    assert bool(punished.terminated) and bool(punished.legal_action_mask.all())


def test_auto_reset_starts_a_new_game_and_keeps_the_final_reward():
    env = Duel()
    step = jaxgames.auto_reset(env)
    state = env.init(jax.random.PRNGKey(0))
    after = step(state, jnp.int32(1), jax.random.PRNGKey(1))
    assert int(after.step_count) == 0 and not bool(after.terminated)
    np.testing.assert_array_equal(after.rewards, [1.0, -1.0])


def test_arena_rotates_seats():
    # policy 0 always wins when seated first, policy 1 always loses: each sits first half the time
    winner = lambda state, key: jnp.int32(1)  # noqa: E731
    loser = lambda state, key: jnp.int32(0)  # noqa: E731
    result = arena.play(Duel(), [winner, loser], jax.random.PRNGKey(0), num_games=8)
    # winner seated first: +1 for it; loser seated first: it plays 0 and loses, winner +1
    np.testing.assert_allclose(result.mean, [1.0, -1.0])
    np.testing.assert_allclose(result.ci95, [0.0, 0.0])


def test_arena_rejects_wrong_policy_count_and_uneven_games():
    with pytest.raises(ValueError, match="2 seats"):
        arena.play(Duel(), [lambda s, k: 0], jax.random.PRNGKey(0), num_games=2)
    with pytest.raises(ValueError, match="multiple of 2"):
        arena.play(Duel(), [lambda s, k: 0] * 2, jax.random.PRNGKey(0), num_games=3)


def test_arena_confidence_interval_covers_the_exact_value():
    env = jaxgames.make("ten_half")
    table = jnp.asarray(dp.optimal_policy())

    def optimal(state, key):
        return table[state.player_sum, state.num_cards, state.num_faces]

    result = arena.play(env, [optimal], jax.random.PRNGKey(3), num_games=40_000)
    assert abs(result.mean[0] - dp.optimal_value()) < 1.5 * result.ci95[0] + 1e-9
    assert 0.005 < result.ci95[0] < 0.03


def test_unrolled_threefry_gives_jax_own_keys_and_words():
    from jaxgames import rng
    for seed in (0, 7, 2**31 - 1):
        key = jax.random.key(seed)
        np.testing.assert_array_equal(jax.random.key_data(rng.split(key, 5)),
                                      jax.random.key_data(jax.random.split(key, 5)))
        np.testing.assert_array_equal(jax.jit(lambda k: rng.random_words(k, 7))(key),
                                      jax.random.bits(key, (7,), jnp.uint32))
