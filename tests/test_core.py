import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from toy_games import Duel, HighCard


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
    punished = env.step(state, jnp.int32(2))  # Duel has no chance: no key needed
    np.testing.assert_array_equal(punished.rewards, [-1.0, 1.0])
    assert bool(punished.terminated) and bool(punished.legal_action_mask.all())


def test_auto_reset_starts_a_new_game_and_keeps_the_final_reward():
    env = Duel()
    step = jaxgames.auto_reset(env)
    state = env.init(jax.random.PRNGKey(0))
    after = step(state, jnp.int32(1), jax.random.PRNGKey(1))
    assert int(after.step_count) == 0 and not bool(after.terminated)
    np.testing.assert_array_equal(after.rewards, [1.0, -1.0])


def test_auto_reset_starts_the_next_game_through_reset():
    class Counting(Duel):  # a sequence that carries the finished game's step count on
        def reset(self, key, previous):
            return self.init(key).replace(observation=previous.step_count[None])

    env = Counting()
    state = env.init(jax.random.PRNGKey(0))
    after = jaxgames.auto_reset(env)(state, jnp.int32(1), jax.random.PRNGKey(1))
    assert int(after.step_count) == 0 and int(after.observation[0]) == 1


def test_unrolled_threefry_gives_jax_own_keys_and_words():
    from jaxgames import rng
    for seed in (0, 7, 2**31 - 1):
        key = jax.random.key(seed)
        np.testing.assert_array_equal(jax.random.key_data(rng.split(key, 5)),
                                      jax.random.key_data(jax.random.split(key, 5)))
        np.testing.assert_array_equal(jax.jit(lambda k: rng.random_words(k, 7))(key),
                                      jax.random.bits(key, (7,), jnp.uint32))


def test_step_refuses_non_integer_and_misshapen_actions_and_foreign_states():
    env = jaxgames.make("ten_half")
    state = jax.jit(env.init)(jax.random.key(0))   # jitted: op by op each primitive compiles alone
    key = jax.random.key(1)
    for wrong in (2.7, -0.5, "1", jnp.float32(1.6), np.array(1.0)):
        with pytest.raises(TypeError, match="integers"):
            env.step(state, wrong, key)
    with pytest.raises(ValueError, match="jax.vmap"):
        env.step(state, jnp.zeros(3, jnp.int32), key)
    batched = jax.jit(jax.vmap(env.init))(jax.random.split(key, 3))
    with pytest.raises(ValueError, match="batched state"):
        env.step(batched, jnp.int32(0), key)
    other = jax.jit(jaxgames.make("2048").init)(key)
    with pytest.raises(TypeError, match="not a state of ten_half"):
        env.step(other, jnp.int32(0), key)
    # inside jit the same checks run at trace time
    with pytest.raises(TypeError, match="integers"):
        jax.jit(env.step)(state, jnp.float32(1.0), key)
    assert int(env.step(state, np.int64(1), key).step_count) == 1  # any integer dtype is fine


def test_stochastic_step_needs_a_key():
    for env in (jaxgames.make("2048"), jaxgames.make("ten_half")):
        assert env.stochastic
        state = jax.jit(env.init)(jax.random.key(0))
        with pytest.raises(ValueError, match="needs a key"):
            env.step(state, jnp.argmax(state.legal_action_mask))
    assert not Duel().stochastic  # a deterministic game steps without one


def test_chance_player_only_on_afterstates():
    env = jaxgames.make("2048")
    assert jaxgames.CHANCE_PLAYER == -1
    # jitted: op by op, every primitive of the 2048 rules compiles on its own (12 s against 3 s)
    state = jax.jit(env.init)(jax.random.key(0))
    action = jnp.argmax(state.legal_action_mask)
    after, _ = jax.jit(env.afterstate)(state, action)
    assert int(after.current_player) == jaxgames.CHANCE_PLAYER
    chance = jax.jit(lambda a: env.apply_chance(a, jnp.argmax(env.chance_outcomes(a)[1] > 0)))
    assert int(chance(after).current_player) == 0
    assert int(jax.jit(env.step)(state, action, jax.random.key(1)).current_player) == 0


def test_observation_spec_and_observe_all():
    env = HighCard()
    spec = env.observation_spec
    assert spec.shape == (4,) and spec.dtype == jnp.float32
    state = env.init(jax.random.key(3))
    both = env.observe_all(state)
    assert both.shape == (2, 4)
    np.testing.assert_array_equal(both[:, :3].argmax(1), state.cards)


def test_playout_returns_is_random_play_to_the_end():
    env = Duel()  # random play: seat 0 picks 1 (win) or 0 (loss) with probability 1/2 each
    state = env.init(jax.random.key(0))
    returns = jax.jit(jax.vmap(lambda k: env.playout_returns(state, k)))(jax.random.split(jax.random.key(1), 4000))
    assert set(np.unique(returns[:, 0]).tolist()) == {-1.0, 1.0}
    np.testing.assert_array_equal(returns.sum(1), 0.0)
    assert abs(float(returns[:, 0].mean())) < 4 / np.sqrt(4000)
    done = env.step(state, jnp.int32(1))
    np.testing.assert_array_equal(env.playout_returns(done, jax.random.key(2)), [0.0, 0.0])


def test_variant_may_be_given_as_an_int():
    assert jaxgames.make("2048", variant=2584).variant == "2584"
    with pytest.raises(ValueError, match="valid variants: 2048, 2584"):
        jaxgames.make("2048", variant=4096)


def test_import_jaxgames_gives_the_modules_the_readme_names():
    import importlib
    fresh = importlib.reload(jaxgames)
    assert callable(fresh.arena.play) and callable(fresh.search.expectimax.for_env)
