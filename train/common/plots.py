"""PNG plots (matplotlib, Agg backend: no screen needed)."""

from __future__ import annotations

import pathlib
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def line_plot(path: str | pathlib.Path, curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
              *, title: str, xlabel: str, ylabel: str, hlines: Mapping[str, float] | None = None,
              logx: bool = False) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, (x, y) in curves.items():
        ax.plot(x, y, label=label, marker="o", markersize=3)
    for label, y in (hlines or {}).items():
        ax.axhline(y, linestyle="--", color="k", linewidth=1, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    save(fig, ax, path)


def save(fig, ax, path: str | pathlib.Path, *, legend_fontsize: float | None = None) -> None:
    """The end of every plot: a light grid, the legend, a tight layout, the PNG at 110 dpi, the
    figure closed."""
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
