"""Text and SVG pictures of a Hex position (host-side, for terminals, notebooks and logs).

Both take a :class:`jaxgames.hex.State` or a board (int8 [n*n] or [n, n]: 0 empty, +1 Black,
-1 White) with an optional ``last_move`` (an action; the swap marks the swapped stone).
"""

from __future__ import annotations

import math

import numpy as np

from jaxgames.hex.board import COLUMN_LETTERS

_SYMBOL = {0: ".", 1: "X", -1: "O"}


def _position(position, last_move):
    """``(cells int8 [n, n], n, marked cell or -1)`` from a State or a board."""
    if hasattr(position, "board"):
        board = np.asarray(position.board)
        if last_move is None:
            last_move = int(np.asarray(position.last_move))
    else:
        board = np.asarray(position)
    board = board.astype(np.int8).reshape(-1)
    n = math.isqrt(board.size)
    if n * n != board.size:
        raise ValueError(f"a hex board has n*n cells, got {board.size}")
    marked = -1 if last_move is None else int(last_move)
    if marked == n * n:  # the swap: mark White's swapped stone
        marked = int(np.flatnonzero(board)[0]) if board.any() else -1
    return board.reshape(n, n), n, marked


def render_text(position, last_move: int | None = None) -> str:
    """The board as the usual slanted rhombus: ``X`` Black, ``O`` White, ``.`` empty.

    Column letters above and below, row numbers on both sides, each row shifted half a cell
    right of the one above (so a cell touches the two cells below-left and below it); the
    last move is bracketed, ``(X)``. Black joins the top and bottom rows, White the a-column
    to the last column.
    """
    cells, n, marked = _position(position, last_move)
    letters = " ".join(COLUMN_LETTERS[:n])
    lines = [" " * 4 + letters]
    for r in range(n):
        row = list(" " * r + f"{r + 1:>2}" + "  " + " ".join(_SYMBOL[int(v)] for v in cells[r]) + "  ")
        if marked >= 0 and marked // n == r:
            at = r + 4 + 2 * (marked % n)
            row[at - 1], row[at + 1] = "(", ")"
        lines.append("".join(row) + f"{r + 1}")
    lines.append(" " * (n - 1 + 4) + letters)
    lines.append("X = Black (top-bottom), O = White (left-right)")
    return "\n".join(lines)


# Vertex k of a pointy-top hexagon sits at angle -90 + 60k degrees: 0 top, 1 upper right,
# 2 lower right, 3 bottom, 4 lower left, 5 upper left. Side k joins vertex k and k+1.
_SIDES_ON_EDGE = {
    "top": (5, 0),       # upper-left and upper-right sides of row 0
    "bottom": (2, 3),    # lower-right and lower-left sides of row n-1
    "left": (3, 4),      # lower-left and left sides of column 0
    "right": (0, 1),     # upper-right and right sides of column n-1
}


def render_svg(position, last_move: int | None = None, cell: int = 28) -> str:
    """A standalone SVG of the position: hexagonal cells, Black's edges dark, White's light."""
    cells, n, marked = _position(position, last_move)
    radius = cell / math.sqrt(3)          # centre to vertex; ``cell`` is the width across flats
    margin = 1.6 * cell
    width = 2 * margin + cell * (n - 1) * 1.5 + cell
    height = 2 * margin + 1.5 * radius * (n - 1) + 2 * radius

    def centre(r, c):
        return margin + cell / 2 + cell * (c + r / 2), margin + radius + 1.5 * radius * r

    def vertex(x, y, k, scale=1.0):
        angle = math.radians(-90 + 60 * k)
        return x + scale * radius * math.cos(angle), y + scale * radius * math.sin(angle)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="Helvetica, Arial, sans-serif">',
        f'<rect width="{width:.1f}" height="{height:.1f}" fill="#f4ecd8"/>',
    ]
    for r in range(n):
        for c in range(n):
            x, y = centre(r, c)
            points = " ".join(f"{px:.1f},{py:.1f}" for px, py in (vertex(x, y, k) for k in range(6)))
            parts.append(f'<polygon points="{points}" fill="#e3c58d" stroke="#8a6d3b" stroke-width="1"/>')
    # The edges: thick dark lines on Black's (top, bottom), light with a dark rim on White's.
    for side, cells_on in (("top", [(0, c) for c in range(n)]), ("bottom", [(n - 1, c) for c in range(n)]),
                           ("left", [(r, 0) for r in range(n)]), ("right", [(r, n - 1) for r in range(n)])):
        colour = "#222222" if side in ("top", "bottom") else "#fafafa"
        for r, c in cells_on:
            x, y = centre(r, c)
            for k in _SIDES_ON_EDGE[side]:
                (x1, y1), (x2, y2) = vertex(x, y, k), vertex(x, y, k + 1)
                if colour == "#fafafa":
                    parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                                 f'stroke="#555555" stroke-width="6" stroke-linecap="round"/>')
                parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                             f'stroke="{colour}" stroke-width="4" stroke-linecap="round"/>')
    for r in range(n):
        for c in range(n):
            v = int(cells[r, c])
            x, y = centre(r, c)
            if v:
                fill, rim = ("#1a1a1a", "#000000") if v == 1 else ("#fdfdfd", "#444444")
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{0.72 * radius:.1f}" fill="{fill}" '
                             f'stroke="{rim}" stroke-width="1.2"/>')
            if r * n + c == marked:
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{0.22 * radius:.1f}" fill="#d62728"/>')
    font = 0.45 * cell
    for c in range(n):
        x, y = centre(0, c)
        parts.append(f'<text x="{x:.1f}" y="{y - 1.6 * radius:.1f}" font-size="{font:.0f}" '
                     f'text-anchor="middle" fill="#333">{COLUMN_LETTERS[c]}</text>')
    for r in range(n):
        x, y = centre(r, 0)
        parts.append(f'<text x="{x - 1.1 * cell:.1f}" y="{y:.1f}" font-size="{font:.0f}" '
                     f'text-anchor="middle" dominant-baseline="central" fill="#333">{r + 1}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
