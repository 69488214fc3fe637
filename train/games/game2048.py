"""The 2048 pipeline behind ``python -m train.game2048``: training, evaluation through the
arena, plots and the report."""

from __future__ import annotations

import sys
import time

import jax
import numpy as np

import jaxgames
from jaxgames.arena import wilson
from jaxgames.core import random_policy
from jaxgames.game2048 import players
from jaxgames.game2048.board import BoardModel
from jaxgames.game2048.tables import export_tables, load_tables
from train.algos import ntuple_td as td
from train.common import Checkpointing, Display, RunDir, Schedule, UserError, run
from train.common.plots import line_plot, plt
from train.common.rundir import markdown_table

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
    start = time.time()
    tdc = td_config(config)
    net = tdc.network
    env = jaxgames.make("2048", variant=config.variant)
    learner = td.make(tdc, env)
    key = jax.random.key(config.seed)
    init_key, train_key, eval_key = jax.random.split(key, 3)
    carry = learner.init(init_key)
    if config.init_tables:  # checked before the run folder exists: a refusal leaves nothing
        try:
            weights = load_tables(config.init_tables, net, config.variant)
        except ValueError as e:
            raise UserError(f"--init-tables: {e}") from None
        carry = carry.replace(table=td.make_table(weights, config.tc, count_column=tdc.counts_games))
    if config.num_updates * config.num_games != config.train_moves:
        print(f"--train-moves {config.train_moves:,} rounded to {config.num_updates * config.num_games:,}: "
              f"every update moves all {config.num_games} games once", file=sys.stderr)
    value_player = players.value_policy(net, 1, config.variant)
    with RunDir(config.runs_dir, GAME, config, resume=config.resume) as rundir:
        checkpointer, best_checkpointer = rundir.open_checkpoints(keep=config.keep_checkpoints, best=True)
        totals = {}

        def on_chunk(step, carry, m, seconds):
            if not totals:  # this session's first chunk: go on from the row logged before it
                start = step - np.asarray(m["moves"]).shape[0]
                before = [r for r in rundir.metrics() if r["step"] <= start]
                totals.update({"games": before[-1]["train_games"], "moves": before[-1]["train_moves"],
                               "seconds": before[-1]["train_seconds"]} if before
                              else {"games": 0, "moves": 0, "seconds": 0.0})
            ended = int(np.asarray(m["games_ended"]).sum())
            moves = int(np.asarray(m["moves"], np.int64).sum())
            totals["games"] += ended
            totals["moves"] += moves
            totals["seconds"] += seconds
            reached, _ = tile_rate(np.asarray(m["ended_max_tile_hist"]).sum(0), config.variant)
            ev = players.evaluate(value_player, learner.params(carry), jax.random.fold_in(eval_key, step),
                                  num_games=config.eval_games, variant=config.variant)
            row = {"train_games": totals["games"], "train_moves": totals["moves"],
                   "train_seconds": totals["seconds"],
                   "moves_per_second": moves / max(seconds, 1e-9),
                   "train_avg_score": float(np.asarray(m["ended_score_sum"]).sum()) / max(ended, 1),
                   "train_rate_2048": reached / max(ended, 1),
                   **ev.summary("eval_")}
            rundir.log(step, row)
            return {"moves/s": row["moves_per_second"], "avg": row["train_avg_score"],
                    "eval": row["eval_avg_score"]}

        result = run(
            learner.update, carry, train_key,
            Schedule(num_updates=config.num_updates,
                     chunk_size=min(config.updates_per_chunk, config.num_updates),
                     checkpoint_every=config.checkpoint_every, stop_after_chunks=stop_after_chunks),
            on_chunk=on_chunk,
            checkpointing=Checkpointing(latest=checkpointer, config_json=config.to_json(),
                                        resume=config.resume, best=best_checkpointer,
                                        best_metric="eval", params=learner.params),
            display=Display(enabled=config.progress, desc="2048 moves", units_per_update=config.num_games,
                            show=lambda s: f"{s['moves/s'] / 1e6:.2f}M moves/s  train avg {s['avg']:,.0f}  "
                                           f"eval 1-ply {s['eval']:,.0f}"))
        checkpointer.close()
        best_checkpointer.close()
        if result.step < config.num_updates:
            return {}
        if not totals:  # resumed a run whose training had ended: nothing ran in this session
            last = rundir.metrics()[-1]
            totals.update(games=last["train_games"], moves=last["train_moves"], seconds=last["train_seconds"])
        weights = learner.params(result.carry)
        export_tables(rundir.path / "tables.npz", net, weights, config.variant)
        summary, per_depth = {}, {}
        for depth in config.final_depths:
            games = config.final_games if depth == 1 else config.final_games_deep
            stats = players.evaluate(players.value_policy(net, depth, config.variant), weights,
                                     jax.random.fold_in(eval_key, 2**31 - depth), num_games=games,
                                     variant=config.variant)
            per_depth[depth] = stats.summary()
            summary.update({f"depth{depth}_{k}": v for k, v in per_depth[depth].items()})
        baseline_key = jax.random.fold_in(eval_key, 2**31 - 100)
        for name, player in (("random", random_policy),
                             ("greedy_reward", players.greedy_reward_policy(config.variant))):
            stats = players.evaluate(player, None, baseline_key, num_games=config.final_games,
                                     variant=config.variant)
            summary[f"{name}_avg_score"] = float(stats.score.mean())
        headline = per_depth[min(config.final_depths)]
        for k in ("avg_score", "max_score", "rate_2048", "rate_4096", "rate_8192", "rate_16384", "rate_32768"):
            summary[k] = headline[k]
        rows = rundir.metrics()
        summary.update(train_games=totals["games"], train_moves=totals["moves"],
                       moves_per_second=totals["moves"] / max(totals["seconds"], 1e-9),
                       train_seconds=totals["seconds"], seconds=time.time() - start)
        write_plots(rundir, rows, per_depth)
        rundir.write_summary(summary)
        rundir.write_report(report(config, summary, per_depth))
    return summary


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
