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
import pathlib
import sys
from typing import Sequence

from train.common import RunConfig, check_divisible, exit_on_user_error, init_distributed, is_primary, parse
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

    @property
    def num_updates(self) -> int:
        return self.episodes // self.episodes_per_update


PRESETS = {
    "quick": Config(),
    "full": Config(episodes=5_000_000, updates_per_chunk=50),
}


#: train, evaluate and write the run folder (the run lives in train/games/ten_half.py)
train = lib.train


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    init_distributed()  # first: the config's checks count every host's devices
    _, config = parse(PRESETS, argv, prog=PROG)
    summary = train(config)
    if is_primary():
        print(f"optimal {summary['optimal_value']:+.4f} | on-policy {summary['on_policy_value']:+.4f} "
              f"({summary['on_policy_agreement']:.1%} agree) | off-policy "
              f"{summary['off_policy_value']:+.4f} ({summary['off_policy_agreement']:.1%} agree) | "
              f"{summary['seconds']:.1f} s -> {pathlib.Path(config.runs_dir) / GAME / config.run_name}")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
