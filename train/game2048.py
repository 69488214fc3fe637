"""2048: n-tuple network TD learning on afterstates, evaluated with expectimax.

    python -m train.game2048                          # quick preset (<= 10 min on a 2-core CPU)
    python -m train.game2048 --preset full            # TD(0) for 2.7 G moves
    python -m train.game2048 --lam 0.5 --tc --run-name tdl-tc

Writes runs/game2048/<run-name>/: config.json, metrics.jsonl, checkpoints/, tables.npz (the
network, loadable with --init-tables), plots/*.png, report.md and summary.json.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys
import time
from typing import Sequence

import jax
import numpy as np

import jaxgames
from jaxgames.core import random_policy
from jaxgames.game2048 import board as B
from jaxgames.game2048 import players
from jaxgames.game2048.ntuple import DEFAULT_PATTERNS, NTupleNetwork
from jaxgames.game2048.tables import export_tables, load_tables
from train.algos import ntuple_td as td
from train.common import (Checkpointing, Display, RunConfig, RunDir, Schedule, UserError,
                          exit_on_user_error, parse, run)
from train.games import game2048 as lib

GAME = "game2048"
PROG = "python -m train.game2048"


def _patterns_str(patterns) -> str:
    return " ".join(",".join(str(c) for c in p) for p in patterns)


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """2048 n-tuple TD learning (afterstates, 8 symmetries) with expectimax evaluation."""

    RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"checkpoint_every"}

    variant: str = "2048"
    """Game variant: 2048 or 2584 (Fibonacci)."""
    patterns: str = _patterns_str(DEFAULT_PATTERNS)
    """Tuple patterns: cells 0..15 row-major, comma-separated, patterns space-separated."""
    base: int = 0
    """Exponent range of a table index; 0 = per variant: 16 for 2048 (tiles up to 32768 told
    apart), 18 for 2584 (up to 2584, the variant's namesake, at index 17)."""
    num_games: int = 128
    """Games played in parallel; each update moves every one of them once."""
    learning_rate: float = 0.1
    """α, split evenly over the features an afterstate reads (the source: 0.1)."""
    lam: float = 0.0
    """λ of TD(λ); 0 is TD(0)."""
    trace_length: int = 5
    """Afterstates in the truncated λ-return (used when lam > 0)."""
    optimistic_init: float = 0.0
    """Initial value of every board (optimistic initialisation when > 0)."""
    tc: bool = False
    """Temporal-coherence adaptive learning rates."""
    train_moves: int = 340_000_000
    """Training budget in moves (all games together)."""
    updates_per_chunk: int = 100_000
    """Updates per jitted chunk; evaluation and progress between chunks."""
    checkpoint_every: int = 5
    """Chunks between checkpoints (the tables are large)."""
    eval_games: int = 128
    """Games of 1-ply evaluation after every chunk."""
    final_games: int = 1000
    """Games of the final 1-ply evaluation."""
    final_depths: tuple[int, ...] = (1, 2)
    """Search depths evaluated at the end (1 = greedy, 2 = max-chance-max expectimax)."""
    final_games_deep: int = 50
    """Games of the final evaluation at each depth > 1."""
    init_tables: str = ""
    """Start from exported tables (a tables.npz of an earlier run)."""

    def network(self) -> NTupleNetwork:
        base = self.base or {"2048": 16, "2584": 18}[self.variant]
        return NTupleNetwork(patterns=parse_patterns(self.patterns), base=base)

    @property
    def num_updates(self) -> int:
        return max(1, self.train_moves // self.num_games)

    def validate(self) -> None:
        super().validate()
        if self.variant not in B.VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(B.VARIANTS)}, got {self.variant!r}")
        if self.base < 0:
            raise ValueError(f"base must be 0 (per variant) or 2..32, got {self.base}")
        self.network()  # raises ValueError on bad patterns / base
        for name in ("num_games", "train_moves", "updates_per_chunk", "checkpoint_every",
                     "eval_games", "final_games", "final_games_deep", "trace_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if not 0 <= self.lam <= 1:
            raise ValueError(f"lam must be in [0, 1], got {self.lam}")
        if self.learning_rate <= 0:
            raise ValueError("learning_rate must be > 0")
        if not self.final_depths or any(d < 1 or d > 3 for d in self.final_depths):
            raise ValueError(f"final_depths must be in 1..3, got {self.final_depths}")
        if self.init_tables and not pathlib.Path(self.init_tables).is_file():
            raise ValueError(f"init_tables: no file {self.init_tables}")


def parse_patterns(text: str) -> tuple[tuple[int, ...], ...]:
    try:
        return tuple(tuple(int(c) for c in p.split(",")) for p in text.split())
    except ValueError:
        raise ValueError(f"patterns must look like '0,1,2,3 4,5,6,7', got {text!r}") from None


PRESETS = {
    # TD(0) as in the source and the reference C++ (alpha 0.1, 4x6-tuples, 8 symmetries)
    "quick": Config(),
    # the source's TD(0) for 8x longer. Optimistic initialisation (--optimistic-init 160000)
    # and TC (--tc) are options; in our batched form both learned more slowly than plain TD(0)
    # over the budgets we could measure (docs/benchmarks.md), so they are not the default.
    "full": Config(train_moves=2_700_000_000, updates_per_chunk=400_000, checkpoint_every=4,
                   final_games=2000, final_games_deep=200),
}


def td_config(config: Config) -> td.TDConfig:
    return td.TDConfig(network=config.network(), num_games=config.num_games,
                       learning_rate=config.learning_rate, lam=config.lam,
                       trace_length=config.trace_length, optimistic_init=config.optimistic_init,
                       tc=config.tc)


def train(config: Config, *, stop_after_chunks: int | None = None) -> dict:
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
        carry = carry.replace(table=td.make_table(weights, config.tc))
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
            reached, _ = lib.tile_rate(np.asarray(m["ended_max_tile_hist"]).sum(0), config.variant)
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
        lib.write_plots(rundir, rows, per_depth)
        rundir.write_summary(summary)
        rundir.write_report(lib.report(config, summary, per_depth))
    return summary


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    _, config = parse(PRESETS, argv, prog=PROG)
    summary = train(config)
    print(json.dumps({k: summary[k] for k in ("avg_score", "max_score", "rate_2048", "rate_8192",
                                              "train_games", "moves_per_second", "seconds")}))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
