"""The shared contract test catches what it promises to catch."""

import jax.numpy as jnp
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
