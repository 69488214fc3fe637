"""Tic-tac-toe as a ``core.Env``: a second, tiny game for the game-agnostic searches.

Cells 0..8 row by row; player 0 plays X (board value 1) and moves first, player 1 plays O (2).
Three in a row wins (+1 / -1); a full board without a line is a draw (0 / 0).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core

LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8],
                  [0, 4, 8], [2, 4, 6]], np.int32)


@struct.dataclass
class TicTacToeState(core.State):
    current_player: jnp.ndarray     # int32 []
    observation: jnp.ndarray        # int8 [9]   the board
    rewards: jnp.ndarray            # float32 [2]
    terminated: jnp.ndarray         # bool []
    truncated: jnp.ndarray          # bool []
    legal_action_mask: jnp.ndarray  # bool [9]
    step_count: jnp.ndarray         # int32 []
    board: jnp.ndarray              # int8 [9]   0 empty, 1 X (player 0), 2 O (player 1)


class TicTacToe(core.Env):
    id = "tictactoe"
    num_players = 2
    num_actions = 9
    stochastic = False
    perfect_information = True

    def _init(self, key):
        return self.from_board(np.zeros(9, np.int8))

    def from_board(self, board, current_player=None) -> TicTacToeState:
        """A live state with ``board`` (9 cells: 0 / 1 X / 2 O); X moves when counts are even."""
        board = jnp.asarray(board, jnp.int8).reshape(9)
        if current_player is None:
            current_player = (board != 0).sum() % 2
        return TicTacToeState(
            current_player=jnp.asarray(current_player, jnp.int32), observation=board,
            rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
            truncated=jnp.bool_(False), legal_action_mask=board == 0,
            step_count=(board != 0).sum().astype(jnp.int32), board=board)

    def _step(self, state, action, key):
        mover = state.current_player
        board = state.board.at[action].set((mover + 1).astype(jnp.int8))
        won = (board[LINES] == (mover + 1)).all(-1).any()
        full = (board != 0).all()
        sign = jnp.where(mover == 0, 1.0, -1.0)
        rewards = jnp.where(won, jnp.array([1.0, -1.0]) * sign, jnp.zeros(2))
        return state.replace(board=board, current_player=1 - mover, rewards=rewards,
                             terminated=won | full, legal_action_mask=board == 0)

    def _observe(self, state, player_id):
        return state.board
