"""A small Hex as a ``core.Env`` for the search tests (independent of ``jaxgames.hex``).

Cell ``r * n + c``. Player 0 (board value 1) connects the top row to the bottom row, player 1
(value 2) the left column to the right column; player 0 moves first; no swap rule. Neighbours
of (r, c): (r-1, c), (r-1, c+1), (r, c-1), (r, c+1), (r+1, c-1), (r+1, c).
``playout_returns`` fills the empty cells at random (the mover gets the extra one when their
number is odd) and tests the winner once: the same distribution as random play to the end,
since a filled Hex board has exactly one winner and stones placed after the win change
nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core, rng


@struct.dataclass
class HexState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int8 [n * n]
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [n * n]
    step_count: jnp.ndarray         # int32 []
    board: jnp.ndarray              # int8 [n * n]  0 empty, 1 player 0, 2 player 1


def connects(stones: jnp.ndarray, player) -> jnp.ndarray:
    """bool []: whether ``stones`` (bool [n, n]) join player 0's rows / player 1's columns."""
    n = stones.shape[-1]
    # Player 1 seen transposed runs top to bottom; transposing keeps Hex's neighbour set.
    grid = jnp.where(player == 0, stones, stones.T)

    def spread(reach):
        p = jnp.pad(reach, 1)
        near = (p[:-2, 1:-1] | p[:-2, 2:] | p[1:-1, :-2] | p[1:-1, 2:] | p[2:, :-2] | p[2:, 1:-1])
        return (reach | near) & grid

    start = grid & (jnp.arange(n)[:, None] == 0)

    def cond(c):
        reach, prev = c
        return (reach != prev).any()

    def body(c):
        reach, _ = c
        return spread(reach), reach

    reach, _ = jax.lax.while_loop(cond, body, (spread(start), start))
    return reach[n - 1].any()


class ToyHex(core.Env):
    num_players = 2
    stochastic = False
    perfect_information = True

    def __init__(self, *, board_size: int = 7):
        self.n = board_size
        self.id = f"toy_hex_{board_size}"
        self.num_actions = board_size * board_size

    def _init(self, key):
        return self.from_board(np.zeros(self.num_actions, np.int8))

    def from_board(self, board, current_player=None) -> HexState:
        board = jnp.asarray(board, jnp.int8).reshape(self.num_actions)
        if current_player is None:
            current_player = (board != 0).sum() % 2
        return HexState(current_player=jnp.asarray(current_player, jnp.int32), observation=board,
                        rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
                        truncated=jnp.bool_(False), legal_action_mask=board == 0,
                        step_count=(board != 0).sum().astype(jnp.int32), board=board)

    def _step(self, state, action, key):
        mover = state.current_player
        board = state.board.at[action].set((mover + 1).astype(jnp.int8))
        won = connects((board == mover + 1).reshape(self.n, self.n), mover)
        sign = jnp.where(mover == 0, 1.0, -1.0)
        return state.replace(board=board, current_player=1 - mover,
                             rewards=jnp.where(won, jnp.array([1.0, -1.0]) * sign, jnp.zeros(2)),
                             terminated=won, legal_action_mask=board == 0)

    def _observe(self, state, player_id):
        return state.board

    def playout_returns(self, state, key):
        empty = state.board == 0
        words = rng.random_words(key, self.num_actions)
        words = jnp.where(empty, words >> 1, jnp.uint32(0xFFFFFFFF))  # empties sort first
        mine = (empty.sum() + 1) // 2
        threshold = jnp.sort(words)[jnp.maximum(mine - 1, 0)]
        mover = state.current_player
        full = jnp.where(empty, jnp.where(words <= threshold, mover + 1, 2 - mover), state.board)
        zero_wins = connects((full == 1).reshape(self.n, self.n), 0)
        returns = jnp.where(zero_wins, jnp.array([1.0, -1.0]), jnp.array([-1.0, 1.0]))
        return jnp.where(state.terminated | state.truncated, 0.0, returns)
