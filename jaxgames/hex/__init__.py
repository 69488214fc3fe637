"""Hex: the game (any size from 3 to 19, optional swap rule), fast playouts, SGF, rendering."""

from jaxgames.hex.board import (
    BLACK,
    BLACK_STONE,
    COLUMN_LETTERS,
    EMPTY,
    MAX_SIZE,
    MIN_SIZE,
    NO_WINNER,
    WHITE,
    WHITE_STONE,
    cell_name,
    connects,
    legal_mask,
    parse_cell,
    place,
    random_fill,
    swap_pieces,
    winner,
)
from jaxgames.hex.game import Hex, State, observation
from jaxgames.hex.render import render_svg, render_text
from jaxgames.hex.sgf import SWAP_NAME, GameRecord, from_sgf, replay, to_sgf

__all__ = [
    "BLACK",
    "BLACK_STONE",
    "COLUMN_LETTERS",
    "EMPTY",
    "GameRecord",
    "Hex",
    "MAX_SIZE",
    "MIN_SIZE",
    "NO_WINNER",
    "SWAP_NAME",
    "State",
    "WHITE",
    "WHITE_STONE",
    "cell_name",
    "connects",
    "from_sgf",
    "legal_mask",
    "observation",
    "parse_cell",
    "place",
    "random_fill",
    "render_svg",
    "render_text",
    "replay",
    "swap_pieces",
    "to_sgf",
    "winner",
]
