"""2048 and its Fibonacci variant 2584: rules, table-driven board primitives, rendering."""

from jaxgames.game2048.board import (
    ACTION_NAMES,
    NUM_CHANCE_OUTCOMES,
    VARIANTS,
    Rules,
    apply_chance,
    chance_outcomes,
    initial_board,
    legal_moves,
    max_tile,
    rules,
    slide,
    slide_all,
    spawn,
    tile_values,
)
from jaxgames.game2048.game import NUM_PLANES, Game2048, State, observation
from jaxgames.game2048.ntuple import DEFAULT_PATTERNS, NTupleNetwork
from jaxgames.game2048.render import render_svg, render_text

__all__ = [
    "ACTION_NAMES",
    "DEFAULT_PATTERNS",
    "NUM_CHANCE_OUTCOMES",
    "NUM_PLANES",
    "VARIANTS",
    "Game2048",
    "NTupleNetwork",
    "Rules",
    "State",
    "apply_chance",
    "chance_outcomes",
    "initial_board",
    "legal_moves",
    "max_tile",
    "observation",
    "render_svg",
    "render_text",
    "rules",
    "slide",
    "slide_all",
    "spawn",
    "tile_values",
]
