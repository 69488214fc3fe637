"""Hex as a :class:`jaxgames.core.Env`.

Two players on an n x n rhombus (3 <= n <= 19, default 11). Black (player 0) moves first and
joins the top and bottom edges; White (player 1) joins the left and right edges. Action ``a <
n*n`` puts a stone on row ``a // n``, column ``a % n`` (row 0 on top); action ``n*n`` is the
swap (pie rule), legal only as White's first move and only with ``swap=True``. The first
player to connect wins (+1, the other -1); Hex has no draws. Rules as implemented, with the
exact swap convention: docs/rules/hex.md.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames import core
from jaxgames.hex import board as B

Array = jax.Array


@struct.dataclass
class State(core.State):
    current_player: Array      # int32 []  0 Black, 1 White: the player to move (after the end: the loser)
    observation: Array         # bool [n, n, 2]  mover's stones, opponent's stones
    rewards: Array             # float32 [2]  +1 / -1 on the winning move, else 0
    terminated: Array          # bool []
    truncated: Array           # bool []  always False (a game ends within n*n + 1 moves)
    legal_action_mask: Array   # bool [n*n + 1]  empty cells, then the swap
    step_count: Array          # int32 []  moves played (the swap counts as one)
    board: Array               # int8 [n*n]  row-major: 0 empty, +1 Black, -1 White
    groups: Array              # int16 [n*n]  group key 4*root + edge bits per stone, -1 empty (board.py)
    last_move: Array           # int32 []  last action played, -1 before the first


class Hex(core.Env):
    """``board_size`` n in 3..19 (default 11); ``swap`` enables the pie rule (action n*n)."""

    id = "hex"
    num_players = 2
    stochastic = False
    perfect_information = True

    def __init__(self, *, board_size: int = 11, swap: bool = False):
        self.board_size = B.check_size(board_size)
        if not isinstance(swap, (bool, np.bool_)):
            raise ValueError(f"hex swap must be True or False, got {swap!r}")
        self.swap = bool(swap)
        n = self.board_size
        self.num_cells = n * n
        # One action shape whatever the swap option, so networks and pgx users see one shape.
        self.num_actions = n * n + 1
        self.swap_action = n * n
        B.tables(n)  # build the tables now, not inside the first trace

    # -- core.Env -----------------------------------------------------------------------------

    def _init(self, key: core.PRNGKey) -> State:
        del key  # Hex has no chance
        n = self.board_size
        board = jnp.zeros(n * n, jnp.int8)
        return State(
            current_player=jnp.int32(B.BLACK),
            observation=jnp.zeros((n, n, 2), jnp.bool_),
            rewards=jnp.zeros(2, jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            legal_action_mask=B.legal_mask(board, jnp.bool_(False)),
            step_count=jnp.int32(0),
            board=board,
            groups=jnp.full(n * n, B.NO_GROUP, jnp.int16),
            last_move=jnp.int32(-1),
        )

    def _step(self, state: State, action: Array, key: core.PRNGKey) -> State:
        del key
        n = self.board_size
        mover = state.current_player
        # The swap target is clipped so a swap action never indexes off the board below; its
        # placement result is discarded by the select.
        cell = jnp.minimum(action, n * n - 1)
        board, groups, won = B.place(state.board, state.groups, cell, mover, n)
        if self.swap:  # traced only when the option is on: the default game pays nothing for it
            is_swap = action == self.swap_action
            swapped_board, swapped_groups = B.swap_pieces(jnp.maximum(state.last_move, 0), n)
            board = jnp.where(is_swap, swapped_board, board)
            groups = jnp.where(is_swap, swapped_groups, groups)
            won = won & ~is_swap
        can_swap = jnp.bool_(self.swap) & (state.step_count == 1)  # step_count counts this move
        rewards = jnp.where(won, jnp.where(jnp.arange(2) == mover, 1.0, -1.0), 0.0).astype(jnp.float32)
        return state.replace(
            current_player=1 - mover,
            rewards=rewards,
            terminated=won,
            legal_action_mask=B.legal_mask(board, can_swap),
            board=board,
            groups=groups,
            last_move=action,
        )

    def _observe(self, state: State, player_id: Array) -> Array:
        return observation(state.board, player_id, self.board_size)

    # -- playouts -----------------------------------------------------------------------------

    def playout_returns(self, state: State, key: core.PRNGKey) -> Array:
        """float32 [2]: returns of uniformly random play from ``state`` to the end.

        Same distribution as playing move by move, at the cost of one random fill and one
        winner test: the empty cells are filled in a uniformly random order, alternately by
        the player to move and the other (:func:`board.random_fill`), and whoever connects on
        the full board wins. That is the winner of random play stopped at the first
        connection, because later stones never break a connection and at most one colour
        can connect. The swap is never played in a playout (with ``swap=True``, random play
        from White's first move would swap with probability 1/(k+1); playouts ignore it).
        Zeros at a finished state.
        """
        n = self.board_size
        winner = B.random_fill_winner(state.board, state.current_player, key, n)
        returns = jnp.where(jnp.arange(2) == winner, 1.0, -1.0).astype(jnp.float32)
        return jnp.where(state.terminated | state.truncated, 0.0, returns)

    # -- positions ----------------------------------------------------------------------------

    def from_board(self, board, current_player=None, last_move: int = -1) -> State:
        """A state holding ``board`` (int8 [n*n] or [n, n]: 0 / +1 Black / -1 White).

        ``current_player`` defaults to the one the stone counts imply (Black when the counts
        are equal, White when Black has one more). The swap is never available in such a state
        (it is not White's first move of a game). A board on which a colour already connects
        gives a terminated state with zero rewards (the winning move is not known).
        Host-side helper for hand-built positions and records; not for jit.
        """
        n = self.board_size
        cells = np.asarray(board, np.int8).reshape(-1)
        if cells.shape != (n * n,) or not np.isin(cells, (B.EMPTY, B.BLACK_STONE, B.WHITE_STONE)).all():
            raise ValueError(f"a {n}x{n} hex board has {n * n} cells of 0, 1 or -1")
        blacks, whites = int((cells == 1).sum()), int((cells == -1).sum())
        if current_player is None:
            if blacks - whites not in (0, 1):
                raise ValueError(f"{blacks} black and {whites} white stones: say who is to move")
            current_player = blacks - whites
        if isinstance(current_player, (bool, np.bool_)) or current_player not in (0, 1):
            raise ValueError(f"hex from_board: current_player is a seat, 0 (Black) or 1 (White), "
                             f"got {current_player!r}")
        board_j = jnp.asarray(cells)
        groups, won = _groups_of_jit(board_j, n)
        over = bool(won.any())
        base = self.init(jax.random.key(0))
        state = base.replace(
            current_player=jnp.int32(current_player),
            terminated=jnp.bool_(over),
            legal_action_mask=jnp.where(over, True, B.legal_mask(board_j, jnp.bool_(False))),
            step_count=jnp.int32(blacks + whites),
            board=board_j,
            groups=groups,
            last_move=jnp.int32(last_move),
        )
        return state.replace(observation=self.observe(state, state.current_player))

    def cell_name(self, action: int) -> str:
        """``a1`` ... for a cell, ``swap-pieces`` for the swap action."""
        if int(action) == self.swap_action:
            return "swap-pieces"
        return B.cell_name(action, self.board_size)

    def parse_action(self, name: str) -> int:
        if name.strip().lower() == "swap-pieces":
            return self.swap_action
        return B.parse_cell(name, self.board_size)


_groups_of_jit = jax.jit(B.groups_of, static_argnums=1)


def observation(board: Array, player_id: Array, n: int) -> Array:
    """bool [n, n, 2]: plane 0 ``player_id``'s stones, plane 1 the opponent's (no transpose)."""
    stone = B.stone_of(player_id)
    cells = board.reshape(n, n)
    return jnp.stack([cells == stone, cells == -stone], axis=-1)
