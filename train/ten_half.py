"""Ten-and-a-half: on-policy and off-policy Monte Carlo control against the exact optimum.

    python -m train.ten_half                       # the source's 500,000 episodes per method
    python -m train.ten_half --preset full         # 10x longer
    python -m train.ten_half --episodes 100000 --epsilon 0.05 --run-name eps05

Writes runs/ten_half/<run-name>/: config.json, metrics.jsonl, checkpoints/, plots/*.png,
report.md and summary.json. Runs on several hosts as it is (docs/training.md):

    python -m train.launch --processes 2 --devices-per-process 2 -- python -m train.ten_half
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from typing import Sequence

import jax

import jaxgames
from jaxgames.ten_half import dp
from train.common import RunConfig, check_divisible, exit_on_user_error, run_main, parse
from train.common.config import check_memory
from train.games import ten_half as lib

GAME = lib.GAME
PROG = "python -m train.ten_half"


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """Ten-and-a-half, on-policy first-visit ε-greedy MC control and off-policy weighted
    importance-sampling MC control (both trained, same episode budget)."""

    episodes: int = 500_000
    """Episodes per method (the source: 500,000)."""
    episodes_per_update: int = 10_000
    """Episodes played in parallel with one policy; one scatter-add folds them in (the source
    updates after every episode; 50 policy refreshes per 500,000 episodes already reach the
    optimum within 0.001, see docs/benchmarks.md)."""
    epsilon: float = 0.1
    """Exploration of the on-policy ε-greedy policy."""
    discount: float = 1.0
    """γ (the source: 1)."""
    updates_per_chunk: int = 5
    """Updates per jitted chunk; metrics, evaluation and a checkpoint between chunks."""
    arena_games: int = 100_000
    """Games each final greedy policy plays in the arena (a sampled check of the exact value)."""

    def validate(self) -> None:
        super().validate()
        if self.episodes_per_update < 1:
            raise ValueError("episodes_per_update must be >= 1")
        if self.episodes < self.episodes_per_update or self.episodes % self.episodes_per_update:
            raise ValueError(
                f"episodes ({self.episodes}) must be a positive multiple of episodes_per_update "
                f"({self.episodes_per_update})")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {self.discount}")
        if self.updates_per_chunk < 1:
            raise ValueError("updates_per_chunk must be >= 1")
        if self.arena_games < 1:
            raise ValueError("arena_games must be >= 1")
        check_divisible(self.episodes_per_update)
        check_memory(*self.memory())

    def memory(self) -> tuple[dict[str, int], dict[str, int]]:
        """``(held, passing)`` bytes for :func:`train.common.config.check_memory`: the Q tables
        all along (tiny); for a while an update's episodes (each decision's keys, random word,
        record, return and weight, about 64 bytes, and the game's state), a chunk's metrics
        (each method's greedy policy per update) or the arena's games. A lower bound.
        (The counts themselves, ``episodes`` above all, the learners keep in int32: the bound
        of every integer field, RunConfig.validate.)"""
        state = _state_bytes()
        methods = len(lib.METHODS)
        held = {"the Q tables": methods * 2 * dp.NUM_STATES * 2 * 4}
        passing = {
            "an update's episodes (episodes_per_update)":
                methods * self.episodes_per_update * (64 * lib.MAX_DECISIONS + 2 * state),
            "a chunk's metrics (updates_per_chunk)":
                min(self.updates_per_chunk, self.num_updates) * methods * (dp.NUM_STATES + 8),
            "the arena's games (arena_games)": self.arena_games * (2 * state + 64),
        }
        return held, passing

    @property
    def num_updates(self) -> int:
        return self.episodes // self.episodes_per_update


@functools.lru_cache(maxsize=None)
def _state_bytes() -> int:
    """Bytes of one game's state."""
    state = jax.eval_shape(lambda: jaxgames.make(GAME).init(jax.random.key(0)))
    return sum(math.prod(x.shape) * x.dtype.itemsize for x in jax.tree_util.tree_leaves(state))


PRESETS = {
    "quick": Config(),
    "full": Config(episodes=5_000_000, updates_per_chunk=50),
}


#: train, evaluate and write the run folder (the run lives in train/games/ten_half.py)
train = lib.train


def _line(summary: dict) -> str:
    return (f"optimal {summary['optimal_value']:+.4f} | on-policy {summary['on_policy_value']:+.4f} "
            f"({summary['on_policy_agreement']:.1%} agree) | off-policy "
            f"{summary['off_policy_value']:+.4f} ({summary['off_policy_agreement']:.1%} agree) | "
            f"{summary['seconds']:.1f} s")


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    return run_main(PRESETS, argv, prog=PROG, game=GAME, train=train, shown=_line)


if __name__ == "__main__":
    main(sys.argv[1:])
