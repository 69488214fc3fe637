"""``render_text(env, state)``: the ``"ansi"`` picture of a state, from each game's own renderer
(jaxgames/<game>/render.py). Host side: ``state`` is one unbatched state."""

from __future__ import annotations

from typing import Any

import jax

from jaxgames.core import Env


def render_text(env: Env, state: Any) -> str:
    """The whole position as text, every hidden card shown (a spectator's view)."""
    state = jax.device_get(state)
    if env.id == "hex":
        from jaxgames.hex.render import render_text as hex_text
        return hex_text(state)
    if env.id == "holdem":
        from jaxgames.holdem.render import render_text as holdem_text
        return holdem_text(state)
    if env.id == "hearts":
        from jaxgames.hearts.render import render_text as hearts_text
        return hearts_text(state)
    if env.id == "ten_half":
        from jaxgames.ten_half.render import render as ten_half_text
        return ten_half_text(state)
    if env.id == "2048":
        from jaxgames.game2048.render import render_text as board_text
        return board_text(state.board, env.variant)
    raise ValueError(f"no text renderer for game {env.id!r}")
