"""2048 pipeline parts: the learner's configuration, evaluation rows, plots and the report."""

from __future__ import annotations

import numpy as np

from jaxgames.game2048.board import BoardModel
from train.common.plots import line_plot, plt
from train.common.rundir import markdown_table

TILES = (2048, 4096, 8192, 16384, 32768)


def tile_rate(hist: np.ndarray, variant: str, tile: int = 2048) -> tuple[float, int]:
    """(games whose largest tile is worth at least ``tile``, games) from an exponent histogram
    ``hist`` [32]; in 2584 the first tile worth 2048 or more is 2584 itself."""
    values = BoardModel(variant).tile_values()
    return float(hist[values >= tile].sum()), int(hist.sum())


def write_plots(rundir, rows, per_depth) -> None:
    games = [r["train_games"] for r in rows]
    line_plot(rundir.plots / "learning_curve.png",
              {"training games (finished)": (games, [r["train_avg_score"] for r in rows]),
               "1-ply evaluation": (games, [r["eval_avg_score"] for r in rows])},
              title="2048 n-tuple TD learning", xlabel="training games", ylabel="average score")
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(len(per_depth), 1)
    for i, (depth, s) in enumerate(sorted(per_depth.items())):
        ax.bar(np.arange(len(TILES)) + i * width, [s[f"rate_{t}"] for t in TILES], width,
               label=f"depth {depth} ({s['games']} games)")
    ax.set_xticks(np.arange(len(TILES)) + width * (len(per_depth) - 1) / 2, [str(t) for t in TILES])
    ax.set(title="Share of games reaching each tile", xlabel="tile", ylabel="rate", ylim=(0, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(rundir.plots / "tile_rates.png", dpi=110)
    plt.close(fig)


def report(config, summary: dict, per_depth: dict) -> str:
    rows = [[f"{d}-ply" if d == 1 else f"{d}-ply expectimax", s["games"], round(s["avg_score"]), s["max_score"],
             f"{s['rate_2048']:.1%}", f"{s['rate_8192']:.1%}", f"{s['rate_16384']:.1%}"]
            for d, s in sorted(per_depth.items())]
    rows += [[f"{name} (baseline)", config.final_games, round(summary[f"{name.replace('-', '_')}_avg_score"]),
              "", "", "", ""] for name in ("random", "greedy-reward")]
    return (f"# 2048: n-tuple TD learning\n\n"
            f"{summary['train_moves']:,} training moves ({summary['train_games']:,} games) at "
            f"{summary['moves_per_second']:,.0f} moves/s; α = {config.learning_rate}, λ = {config.lam}, "
            f"TC = {config.tc}, optimistic init = {config.optimistic_init}, patterns {config.patterns}, "
            f"{config.num_games} games in parallel; {summary['seconds']:.0f} s in all. Evaluation "
            f"games are played in the arena.\n\n"
            + markdown_table(["player", "games", "avg score", "max score", "2048", "8192", "16384"], rows)
            + "\n![learning curve](plots/learning_curve.png)\n\n![tile rates](plots/tile_rates.png)\n")
