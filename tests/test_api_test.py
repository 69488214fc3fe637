"""The shared contract test catches what it promises to catch."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from toy_games import HighCard


def test_hidden_card_game_keeps_the_contract_with_sample_world():
    jaxgames.api_test(HighCard(), num_games=8, max_steps=4)


def test_api_test_catches_a_sample_world_that_reads_hidden_cards():
    class Leaky(HighCard):
        def sample_world(self, state, player_id, key):  # the real cards: a PIMC player would cheat
            return state

    class Peeking(HighCard):
        def sample_world(self, state, player_id, key):  # redeals, but reads the real card to do it
            world = super().sample_world(state, player_id, key)
            opponent = 1 - player_id
            return world.replace(cards=world.cards.at[opponent].set(
                jnp.where(state.cards[opponent] == 2, 2, world.cards[opponent])))

    for env in (Leaky(), Peeking()):
        with pytest.raises(AssertionError):
            jaxgames.api_test(env, num_games=4, max_steps=4)


def test_api_test_catches_unchecked_seats_and_actions():
    class NoSeatCheck(HighCard):  # reads whichever card a wrong seat index lands on
        def observe(self, state, player_id=None):
            return self._observe(state, jnp.asarray(player_id, jnp.int32))

    class BoolActions(HighCard):  # True quietly plays action 1
        def _check_step_inputs(self, state, action):
            return jnp.asarray(action, jnp.int32)

    class RawKeysDiffer(HighCard):  # a raw key or a seed starts another game than the typed key
        def init(self, key):
            state = super().init(key)
            typed = jnp.issubdtype(getattr(key, "dtype", jnp.int32), jax.dtypes.prng_key)
            return state if typed else state.replace(bet=jnp.bool_(True))

    for env, message in ((NoSeatCheck(), "observe with the seat"),
                         (BoolActions(), "step with the action"),
                         (RawKeysDiffer(), None)):
        with pytest.raises(AssertionError, match=message):
            jaxgames.api_test(env, num_games=4, max_steps=4)


def test_a_seat_check_wraps_every_sample_world_a_game_writes():
    env = HighCard()
    state = env.init(0)
    with pytest.raises(ValueError, match="high_card.sample_world: player 2 is out of range"):
        env.sample_world(state, 2, jax.random.key(0))
    world = jax.jit(env.sample_world)(state, jnp.int32(-1), jax.random.key(0))
    np.testing.assert_array_equal(world.cards, env.blank_world.cards)
