"""Text and SVG pictures of a 2048 / 2584 board (host-side, for notebooks and logs)."""

from __future__ import annotations

import html

import numpy as np

from jaxgames.game2048.board import rules

# Background / text colours of the original game, by exponent; larger tiles reuse the last.
_TILE_COLORS = [
    ("#cdc1b4", "#776e65"),  # empty
    ("#eee4da", "#776e65"), ("#ede0c8", "#776e65"), ("#f2b179", "#f9f6f2"),
    ("#f59563", "#f9f6f2"), ("#f67c5f", "#f9f6f2"), ("#f65e3b", "#f9f6f2"),
    ("#edcf72", "#f9f6f2"), ("#edcc61", "#f9f6f2"), ("#edc850", "#f9f6f2"),
    ("#edc53f", "#f9f6f2"), ("#edc22e", "#f9f6f2"), ("#3c3a32", "#f9f6f2"),
]


def _values(board, variant: str) -> np.ndarray:
    exps = np.asarray(board).astype(np.int64).reshape(4, 4)
    return rules(variant).values[exps]


def render_text(board, variant: str = "2048") -> str:
    """The board as 4 lines of right-aligned tile values, '.' for empty cells."""
    vals = _values(board, variant)
    width = max(4, max(len(str(v)) for v in vals.ravel()))
    return "\n".join(
        " ".join(("." if v == 0 else str(v)).rjust(width) for v in row) for row in vals)


def render_svg(board, variant: str = "2048", cell: int = 64) -> str:
    """A standalone SVG of the board, coloured like the original game."""
    vals = _values(board, variant)
    exps = np.asarray(board).astype(np.int64).reshape(4, 4)
    gap = cell // 8
    size = 4 * cell + 5 * gap
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" font-family="Helvetica, Arial, sans-serif">',
        f'<rect width="{size}" height="{size}" rx="{gap}" fill="#bbada0"/>',
    ]
    for r in range(4):
        for c in range(4):
            bg, fg = _TILE_COLORS[min(int(exps[r, c]), len(_TILE_COLORS) - 1)]
            x, y = gap + c * (cell + gap), gap + r * (cell + gap)
            parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
                         f'rx="{gap // 2}" fill="{bg}"/>')
            if vals[r, c]:
                text = html.escape(str(vals[r, c]))
                font = int(cell * (0.45 if len(text) <= 2 else 0.9 / len(text) + 0.05))
                parts.append(
                    f'<text x="{x + cell / 2}" y="{y + cell / 2}" fill="{fg}" '
                    f'font-size="{font}" font-weight="bold" text-anchor="middle" '
                    f'dominant-baseline="central">{text}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
