"""The generic expectimax (any Env with a chance step) equals the fast 2048 board path."""

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames.game2048 import players
from jaxgames.game2048.ntuple import NTupleNetwork
from jaxgames.search import expectimax

NET = NTupleNetwork(patterns=((0, 1, 2, 3), (0, 4, 5, 6)), base=16)


@pytest.mark.parametrize("depth", [1, 2])
def test_generic_expectimax_equals_the_board_path(depth):
    env = jaxgames.make("2048")
    weights = jax.random.normal(jax.random.key(0), (2 * 16**4,)) * 50.0
    value = lambda b: NET.value(weights, b)  # noqa: E731
    generic = expectimax.for_env(env)
    fast = players.search_game("2048")

    @jax.jit
    def both(state):
        q_env, legal_env = expectimax.action_values(generic, lambda s: value(s.board), state, depth)
        q_fast, legal_fast = expectimax.action_values(fast, value, state.board, depth)
        return q_env, legal_env, q_fast, legal_fast

    # positions along a random game, including a terminal one
    play = jax.jit(jax.vmap(lambda k: jaxgames.rollout(env, env.init(k), jaxgames.random_policy, k,
                                                        max_steps=60).state))
    states = play(jax.random.split(jax.random.key(1), 6))
    final = jaxgames.rollout(env, env.init(jax.random.key(2)), jaxgames.random_policy, jax.random.key(3)).state
    for state in [jax.tree_util.tree_map(lambda x: x[i], states) for i in range(6)] + [final]:
        q_env, legal_env, q_fast, legal_fast = both(state)
        done = bool(state.terminated)
        np.testing.assert_array_equal(legal_env, np.asarray(legal_fast) & ~done)
        mask = np.asarray(legal_env)
        np.testing.assert_allclose(np.asarray(q_env)[mask], np.asarray(q_fast)[mask], rtol=1e-5, atol=1e-3)


def test_generic_expectimax_needs_a_chance_step():
    with pytest.raises(ValueError, match="no chance step"):
        expectimax.for_env(jaxgames.make("ten_half"))
