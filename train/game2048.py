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
from typing import Sequence

from jaxgames.game2048 import board as B
from jaxgames.game2048.ntuple import DEFAULT_PATTERNS, NTupleNetwork
from train.algos import ntuple_td as td
from train.common import RunConfig, exit_on_user_error, run_main, parse
from train.common.config import check_int32, check_memory
from train.common import cpu_layout
from train.games import game2048 as lib

GAME = lib.GAME
PROG = "python -m train.game2048"


def _patterns_str(patterns) -> str:
    return " ".join(",".join(str(c) for c in p) for p in patterns)


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """2048 n-tuple TD learning (afterstates, 8 symmetries) with expectimax evaluation."""

    RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"checkpoint_every", "cpu_layout"}
    # bounded by its updates, train_moves / num_games, the driver's int32 count (validate)
    WIDE_INT_FIELDS = RunConfig.WIDE_INT_FIELDS | {"train_moves"}

    variant: str = "2048"
    """Game variant: 2048 or 2584 (Fibonacci)."""
    patterns: str = _patterns_str(DEFAULT_PATTERNS)
    """Tuple patterns: cells 0..15 row-major, comma-separated, patterns space-separated."""
    base: int = 0
    """Exponent range of a table index; 0 = per variant: 16 for 2048 (tiles up to 32768 told
    apart), 18 for 2584 (up to 2584, the variant's namesake, at index 17)."""
    num_games: int = 128
    """Games played in parallel; each update moves every one of them once. On a GPU use
    thousands: with the sqrt shared step 1,024-16,384 learn per move about as 128 do."""
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
    shared_step: str = "auto"
    """How the steps of one update's games on a shared weight combine: sum, sqrt (the summed
    step divided by the square root of the games that stepped it), or auto: sqrt from 256 games
    per update, where the sum overshoots (docs/benchmarks.md), sum below (as learned online,
    and faster on a CPU)."""
    train_moves: int = 200_000_000
    """Training budget in moves (all games together). The quick preset's 200 M keeps its run,
    evaluations included, within 10 minutes on the slowest 2-core machine we measured (0.62 M
    moves/s there, docs/benchmarks.md)."""
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
    cpu_layout: str = "auto"
    """CPU threads (CPU backend only): auto = one pinned core (the rule, docs/benchmarks.md; the
    JAXGAMES_CPU_LAYOUT environment variable first), one, all (XLA's default)."""

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
        if self.shared_step not in ("auto", *td.SHARED_STEPS):
            raise ValueError(f"shared_step must be auto, {' or '.join(td.SHARED_STEPS)}, got {self.shared_step!r}")
        if not self.final_depths or any(d < 1 or d > 3 for d in self.final_depths):
            raise ValueError(f"final_depths must be in 1..3, got {self.final_depths}")
        if self.init_tables and not pathlib.Path(self.init_tables).is_file():
            raise ValueError(f"init_tables: no file {self.init_tables}")
        cpu_layout.check_request(self.cpu_layout)
        check_int32("train_moves / num_games (the updates)", self.train_moves // self.num_games,
                    "the driver numbers the updates in an int32")
        check_memory(*self.memory())

    def memory(self) -> tuple[dict[str, int], dict[str, int]]:
        """``(held, passing)`` bytes for :func:`train.common.config.check_memory`: the n-tuple
        tables and the games' traces all along; a chunk's stacked metrics, an update's
        afterstates, or an evaluation's games (expectimax to depth d reads 4 (32 * 4)^(d - 1)
        afterstates per move of each game) for a while. The largest arrays only: a lower bound."""
        net = self.network()
        features = net.num_features
        slots = self.trace_length if self.lam > 0 else 1
        held = {
            "the n-tuple tables (patterns, base, tc, shared_step)":
                len(net.patterns) * net.table_size * (1 + 2 * self.tc + lib.td_config(self).counts_games) * 4,
            "the games' afterstate traces (num_games, trace_length)":
                self.num_games * (16 + slots * (4 * features + 4) + 12),
        }
        per_afterstate = 16 + 8 * features   # a board, its feature indices and their weights
        deep = max(self.final_depths)
        passing = {
            "a chunk's metrics (updates_per_chunk)": min(self.updates_per_chunk, self.num_updates) * 144,
            "an update's afterstates (num_games)": self.num_games * 4 * per_afterstate,
            "the evaluation games (eval_games, final_games)":
                max(self.eval_games, self.final_games) * 4 * per_afterstate,
            "the deep evaluation games (final_games_deep, final_depths)":
                (self.final_games_deep * 4 * 128 ** (deep - 1) * per_afterstate if deep > 1 else 0),
        }
        return held, passing


def parse_patterns(text: str) -> tuple[tuple[int, ...], ...]:
    try:
        return tuple(tuple(int(c) for c in p.split(",")) for p in text.split())
    except ValueError:
        raise ValueError(f"patterns must look like '0,1,2,3 4,5,6,7', got {text!r}") from None


PRESETS = {
    # TD(0) as in the source and the reference C++ (alpha 0.1, 4x6-tuples, 8 symmetries)
    "quick": Config(),
    # the source's TD(0) for 13.5x longer. Optimistic initialisation (--optimistic-init 160000)
    # and TC (--tc) are options; in our batched form both learned more slowly than plain TD(0)
    # over the budgets we could measure (docs/benchmarks.md), so they are not the default.
    "full": Config(train_moves=2_700_000_000, updates_per_chunk=400_000, checkpoint_every=4,
                   final_games=2000, final_games_deep=200),
}


#: train, evaluate and write the run folder (the run lives in train/games/game2048.py)
train = lib.train


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    return run_main(PRESETS, argv, prog=PROG, game=GAME, train=train,
                    prepare=lambda config: cpu_layout.select(config.cpu_layout),
                    shown=("avg_score", "max_score", "rate_2048", "rate_8192", "train_games", "moves_per_second",
                           "seconds"))


if __name__ == "__main__":
    main(sys.argv[1:])
