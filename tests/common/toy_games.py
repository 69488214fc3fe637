"""Tiny hand-made games for testing the shared machinery (not registered)."""

import jax.numpy as jnp
from flax import struct

from jaxgames import core


@struct.dataclass
class DuelState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int32 [1]  moves made so far
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [3]
    step_count: jnp.ndarray         # int32 []


class Duel(core.Env):
    """Two players. Seat 0 moves once: action 1 wins (+1/-1), action 0 loses; action 2 is
    never legal. Lets a test know exactly who should win each game."""

    id = "duel"
    num_players = 2
    num_actions = 3

    def _init(self, key):
        return DuelState(current_player=jnp.int32(0), observation=jnp.zeros(1, jnp.int32),
                         rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                         truncated=jnp.bool_(False),
                         legal_action_mask=jnp.array([True, True, False]), step_count=jnp.int32(0))

    def _step(self, state, action, key):
        sign = jnp.where(action == 1, 1.0, -1.0)
        return state.replace(rewards=jnp.array([1.0, -1.0]) * sign, terminated=jnp.bool_(True),
                             current_player=jnp.int32(1))

    def _observe(self, state, player_id):
        return state.step_count.reshape(1)
