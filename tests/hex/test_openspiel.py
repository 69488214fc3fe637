"""Differential test against OpenSpiel's independent Hex (``pyspiel``, a test-only dependency).

Conventions verified empirically and relied on here: OpenSpiel's action ``r * n + c`` is row r
(``a1`` = 0, ``b1`` = 1: the letter is the column), player 0 plays ``x`` and joins top and
bottom, each row is drawn shifted right of the one above (so (r, c) touches (r+1, c-1)), and
its swap (``swap=True``) is action ``n*n`` on White's first move, leaving a White stone on the
transposed cell with Black to move. The same move sequences, generated in batch by our env,
must give the same legal moves at every step and the same winner.
"""

from __future__ import annotations

import numpy as np
import pytest

from hex_helpers import games, random_games

pyspiel = pytest.importorskip("pyspiel")


def _replay(n: int, actions, masks, returns, swap: bool = False) -> int:
    game = pyspiel.load_game(f"hex(board_size={n},swap={'true' if swap else 'false'})")
    assert game.num_distinct_actions() == n * n + (1 if swap else 0)
    for g in range(actions.shape[0]):
        state = game.new_initial_state()
        for t, action in enumerate(actions[g]):
            if action < 0:
                break
            ours = np.flatnonzero(masks[g, t][: game.num_distinct_actions()]).tolist()
            assert ours == state.legal_actions(), f"game {g} move {t}: {ours} != {state.legal_actions()}"
            state.apply_action(int(action))
        assert state.is_terminal(), f"game {g}: OpenSpiel's game is not over"
        assert state.returns() == returns[g].tolist(), f"game {g}: {state.returns()} != {returns[g]}"
    return actions.shape[0]


@pytest.mark.parametrize("n", [5, 6, 7, 11])
def test_same_legal_moves_and_winner_as_openspiel(n):
    _, actions, masks, returns, terminated = games(n)
    assert terminated.all()
    assert _replay(n, actions, masks, returns) >= 300


def test_swap_matches_openspiel():
    # Half the games swap at White's first move, the rest play it randomly (swap included).
    for force in (True, False):
        _, actions, masks, returns, _ = random_games(5, 300, seed=11, swap=True, force_swap=force)
        if force:
            assert (actions[:, 1] == 25).all()
        _replay(5, actions, masks, returns, swap=True)
