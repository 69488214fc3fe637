"""``jaxgames.player.one_of``: a table of players as one player, chosen by its parameter."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import arena
from jaxgames.player import Player, one_of
from toy_games import Duel


def always(action):
    def policy(params, state, key):
        return jnp.int32(action)
    return policy


@chex.assert_max_traces(n=1)
def by_params(params, state, key):
    return jnp.asarray(params, jnp.int32)


def probs_of(action):
    def probs(params, state, key):
        return jnp.zeros(2, jnp.float32).at[action].set(1.0)
    return probs


WINNER = Player("winner", always(1), probs=probs_of(1))
LOSER = Player("loser", always(0), probs=probs_of(0))
OWN_PARAMS = Player("by its params", by_params, params=1)   # wins with its own parameters (1)


def test_the_index_chooses_the_player_and_it_plays_with_its_own_parameters():
    chex.clear_trace_counter()
    table = one_of([LOSER, WINNER, OWN_PARAMS])
    # Duel: only seat 0 moves, 1 wins for it and 0 loses; the table sits in seat 0 half the games
    for i, expected in enumerate([-1.0, 1.0, 1.0]):
        result = arena.play(Duel(), [LOSER.policy, table.policy], jax.random.key(i), num_games=4,
                            params=[None, jnp.int32(i)])
        np.testing.assert_allclose(result.seat_mean[1, 0], expected)
    # one arena for the three: OWN_PARAMS' policy was traced once (assert_max_traces)


def test_probs_only_when_every_player_has_them_and_honest_only_when_all_are():
    table = one_of([LOSER, WINNER])
    state = Duel().init(jax.random.key(0))
    for i, action in enumerate([0, 1]):
        np.testing.assert_array_equal(table.probs(jnp.int32(i), state, jax.random.key(0)),
                                      np.eye(2, dtype=np.float32)[action])
    assert table.honest and table.name == "one of loser, winner"
    assert one_of([LOSER, OWN_PARAMS]).probs is None
    assert not one_of([LOSER, Player("cheat", always(1), honest=False)]).honest


def test_the_same_players_give_the_same_player_and_bad_tables_are_refused():
    assert one_of([LOSER, WINNER]) is one_of((LOSER, WINNER))   # arenas cached per player compile once
    with pytest.raises(ValueError, match="one Player or more"):
        one_of([])
    with pytest.raises(ValueError, match="one Player or more"):
        one_of([LOSER, always(1)])
