"""The 2048 pipeline behind ``python -m train.game2048``: training, evaluation through the
arena, plots and the report."""

from __future__ import annotations

import functools
import sys

import jax
import numpy as np

import jaxgames
from jaxgames.arena import wilson
from jaxgames.core import random_policy
from jaxgames.game2048 import players
from jaxgames.game2048.board import BoardModel
from jaxgames.game2048.tables import export_tables, load_tables
from train.algos import ntuple_td as td
from train.common import Display, UserError, init_distributed
from train.common.plots import line_plot, plt
from train.common.rundir import markdown_table
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, run_pipeline

GAME = "game2048"

TILES = (2048, 4096, 8192, 16384, 32768)


def td_config(config) -> td.TDConfig:
    return td.TDConfig(network=config.network(), num_games=config.num_games,
                       learning_rate=config.learning_rate, lam=config.lam,
                       trace_length=config.trace_length, optimistic_init=config.optimistic_init,
                       tc=config.tc, shared_step=config.shared_step)


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train, evaluate at every depth of ``config.final_depths`` and against the baselines, write
    the run directory; returns the summary. ``config`` is ``train.game2048.Config``."""
    init_distributed()   # before JAX is used (the tables' check below), as every pipeline
    tdc = td_config(config)
    learner = td.make(tdc, jaxgames.make("2048", variant=config.variant))
    keys = Keys.of(config.seed)
    carry = learner.init(keys.init)
    if config.init_tables:  # checked before the run folder exists: a refusal leaves nothing
        try:
            weights = load_tables(config.init_tables, tdc.network, config.variant)
        except ValueError as e:
            raise UserError(f"--init-tables: {e}") from None
        carry = carry.replace(table=td.make_table(weights, config.tc, count_column=tdc.counts_games))
    if config.num_updates * config.num_games != config.train_moves:
        print(f"--train-moves {config.train_moves:,} rounded to {config.num_updates * config.num_games:,}: "
              f"every update moves all {config.num_games} games once", file=sys.stderr)
    value_player = players.value_policy(tdc.network, 1, config.variant)
    return run_pipeline(Pipeline(
        game=GAME, keys=keys, init=lambda key: carry, update=learner.update, params=learner.params,
        num_updates=config.num_updates, chunk_size=min(config.updates_per_chunk, config.num_updates),
        checkpoint_every=config.checkpoint_every,
        evaluate=functools.partial(evaluate_round, config, learner, value_player),
        final=functools.partial(final_evaluation, config, learner, tdc.network), best_metric="eval",
        display=Display(enabled=config.progress, desc="2048 moves", units_per_update=config.num_games,
                        show=lambda s: f"{s['moves/s'] / 1e6:.2f}M moves/s  train avg {s['avg']:,.0f}  "
                                       f"eval 1-ply {s['eval']:,.0f}")), config, stop_after_chunks=stop_after_chunks)


def evaluate_round(config, learner, value_player, c: Chunk) -> Round:
    """The chunk's training figures (the totals go on from the row before it) and a 1-ply
    evaluation."""
    m = c.metrics
    before = c.last_row or {"train_games": 0, "train_moves": 0, "train_seconds": 0.0}
    ended = int(np.asarray(m["games_ended"]).sum())
    moves = int(np.asarray(m["moves"], np.int64).sum())
    reached, _ = tile_rate(np.asarray(m["ended_max_tile_hist"]).sum(0), config.variant)
    ev = players.evaluate(value_player, learner.params(c.carry), c.keys.round(c.step),
                          num_games=config.eval_games, variant=config.variant)
    row = {"train_games": before["train_games"] + ended, "train_moves": before["train_moves"] + moves,
           "train_seconds": before["train_seconds"] + c.seconds,
           "moves_per_second": moves / max(c.seconds, 1e-9),
           "train_avg_score": float(np.asarray(m["ended_score_sum"]).sum()) / max(ended, 1),
           "train_rate_2048": reached / max(ended, 1),
           **ev.summary("eval_")}
    return Round(row, {"moves/s": row["moves_per_second"], "avg": row["train_avg_score"],
                       "eval": row["eval_avg_score"]})


def final_evaluation(config, learner, net, end: End) -> Final:
    """The learned tables at every depth of ``final_depths`` (one end key per depth) and the
    baselines; the tables exported for ``jaxgames.game2048``."""
    weights = learner.params(end.carry)
    summary, per_depth = {}, {}
    for depth in config.final_depths:
        games = config.final_games if depth == 1 else config.final_games_deep
        stats = players.evaluate(players.value_policy(net, depth, config.variant), weights, end.keys.end(depth),
                                 num_games=games, variant=config.variant)
        per_depth[depth] = stats.summary()
        summary.update({f"depth{depth}_{k}": v for k, v in per_depth[depth].items()})
    for name, player in (("random", random_policy),
                         ("greedy_reward", players.greedy_reward_policy(config.variant))):
        stats = players.evaluate(player, None, end.keys.baselines, num_games=config.final_games,
                                 variant=config.variant)
        summary[f"{name}_avg_score"] = float(stats.score.mean())
    headline = per_depth[min(config.final_depths)]
    for k in ("avg_score", "max_score", "rate_2048", "rate_4096", "rate_8192", "rate_16384", "rate_32768"):
        summary[k] = headline[k]
    last = end.rows[-1]   # the training totals
    summary.update(train_games=last["train_games"], train_moves=last["train_moves"],
                   moves_per_second=last["train_moves"] / max(last["train_seconds"], 1e-9),
                   train_seconds=last["train_seconds"])

    def files(rundir, summary):
        export_tables(rundir.path / "tables.npz", net, weights, config.variant)
        write_plots(rundir, end.rows, per_depth)

    return Final(summary, report=lambda s: report(config, s, per_depth), files=files)


def tile_rate(hist: np.ndarray, variant: str, tile: int = 2048) -> tuple[float, int]:
    """(games whose largest tile is worth at least ``tile``, games) from an exponent histogram
    ``hist`` [32]; in 2584 the first tile worth 2048 or more is 2584 itself."""
    values = BoardModel(variant).tile_values()
    return float(hist[values >= tile].sum()), int(hist.sum())


def rate_interval(s: dict, tile: int) -> tuple[float, float, float]:
    """(rate, low, high): the share of an evaluation's games ``s`` (``GameStats.summary()``)
    reaching ``tile``, with its 95% Wilson interval."""
    rate, games = s[f"rate_{tile}"], s["games"]
    return (rate, *wilson(round(rate * games), games))


def write_plots(rundir, rows, per_depth) -> None:
    games = [r["train_games"] for r in rows]
    line_plot(rundir.plots / "learning_curve.png",
              {"training games (finished)": (games, [r["train_avg_score"] for r in rows]),
               "1-ply evaluation": (games, [r["eval_avg_score"] for r in rows])},
              title="2048 n-tuple TD learning", xlabel="training games", ylabel="average score")
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(len(per_depth), 1)
    for i, (depth, s) in enumerate(sorted(per_depth.items())):
        rate, low, high = np.array([rate_interval(s, t) for t in TILES]).T
        ax.bar(np.arange(len(TILES)) + i * width, rate, width, label=f"depth {depth} ({s['games']} games)",
               yerr=np.maximum([rate - low, high - rate], 0.0), capsize=2)
    ax.set_xticks(np.arange(len(TILES)) + width * (len(per_depth) - 1) / 2, [str(t) for t in TILES])
    ax.set(title="Share of games reaching each tile (95% Wilson intervals)", xlabel="tile", ylabel="rate",
           ylim=(0, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(rundir.plots / "tile_rates.png", dpi=110)
    plt.close(fig)


def report(config, summary: dict, per_depth: dict) -> str:
    def rate(s, tile):
        r, low, high = rate_interval(s, tile)
        return f"{r:.1%} ({low:.1%}–{high:.1%})"

    rows = [[f"{d}-ply" if d == 1 else f"{d}-ply expectimax", s["games"], round(s["avg_score"]), s["max_score"],
             rate(s, 2048), rate(s, 8192), rate(s, 16384)]
            for d, s in sorted(per_depth.items())]
    rows += [[f"{name} (baseline)", config.final_games, round(summary[f"{name.replace('-', '_')}_avg_score"]),
              "", "", "", ""] for name in ("random", "greedy-reward")]
    return (f"# 2048: n-tuple TD learning\n\n"
            f"{summary['train_moves']:,} training moves ({summary['train_games']:,} games) at "
            f"{summary['moves_per_second']:,.0f} moves/s; α = {config.learning_rate}, λ = {config.lam}, "
            f"TC = {config.tc}, optimistic init = {config.optimistic_init}, patterns {config.patterns}, "
            f"{config.num_games} games in parallel; {summary['seconds']:.0f} s in all. Evaluation "
            f"games are played in the arena; the tile columns give the share of games reaching the tile "
            f"with its 95% Wilson interval.\n\n"
            + markdown_table(["player", "games", "avg score", "max score", "2048", "8192", "16384"], rows)
            + "\n![learning curve](plots/learning_curve.png)\n\n![tile rates](plots/tile_rates.png)\n")
