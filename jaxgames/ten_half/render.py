"""One-line text rendering of a ten-and-a-half state (host side, not jittable)."""

from __future__ import annotations

import numpy as np

from jaxgames.ten_half.game import HAND_TYPE_NAMES, hand_type


def points_text(halves: int) -> str:
    """Half-points as a person reads them: ``7``, ``½``, ``5½``."""
    whole, half = divmod(int(halves), 2)
    return f"{whole}½" if half and whole else ("½" if half else str(whole))


def render(state) -> str:
    """E.g. ``"player 5½ (2 cards, 1 face), plain | live | step 1"`` or
    ``"player 10½ (2 cards, 1 face), ten-and-a-half | over, reward +2 | step 1"``."""
    s, n, f = int(state.player_sum), int(state.num_cards), int(state.num_faces)
    kind = HAND_TYPE_NAMES[int(hand_type(s, n, f)[0])]
    hand = (f"player {points_text(s)} ({n} card{'s' * (n != 1)}, "
            f"{f} face{'s' * (f != 1)}), {kind}")
    if bool(state.terminated | state.truncated):
        reward = float(np.asarray(state.rewards)[0])
        status = f"over, reward {reward:+g}"
    else:
        status = "live"
    return f"{hand} | {status} | step {int(state.step_count)}"
