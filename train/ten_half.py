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
import time
from typing import Sequence

import jax
import numpy as np

from jaxgames.ten_half import dp
from train.common import (Checkpointing, Display, RunConfig, RunDir, Schedule, check_divisible,
                          exit_on_user_error, init_distributed, is_primary, parse, run)
from train.games import ten_half as lib
from train.games.ten_half_plots import write_plots

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


def train(config: Config, *, stop_after_chunks: int | None = None) -> dict:
    """Train both methods, evaluate exactly, write the run directory; returns the summary (the
    same on every process of a multi-host run)."""
    start = time.time()
    init_distributed()
    learners = lib.learners(episodes_per_update=config.episodes_per_update,
                            epsilon=config.epsilon, discount=config.discount)
    init, update = lib.joint(learners)
    train_key = jax.random.key(config.seed)  # the updates' keys, as in the published numbers
    init_key, eval_key = jax.random.split(jax.random.fold_in(train_key, 2**31 - 1))
    with RunDir(config.runs_dir, GAME, config, resume=config.resume) as rundir:
        checkpointer, _ = rundir.open_checkpoints(keep=config.keep_checkpoints)

        def on_chunk(step, carry, metrics, seconds):
            if not bool(np.all(np.asarray(metrics["on_policy"]["ended_fraction"]) == 1.0)):
                raise RuntimeError("an episode ran past max_episode_steps")
            first = step - len(np.asarray(metrics["on_policy"]["episode_return"])) + 1
            for i, u in enumerate(range(first, step + 1)):
                row = {"episodes": u * config.episodes_per_update}
                for m in lib.METHODS:
                    policy = np.asarray(metrics[m]["greedy_policy"][i]).reshape(dp.SHAPE)
                    row[f"{m}_value"] = dp.policy_value(policy)
                    row[f"{m}_return"] = float(metrics[m]["episode_return"][i])
                rundir.log(u, row)
            return {"on": row["on_policy_value"], "off": row["off_policy_value"],
                    "opt": dp.optimal_value()}

        result = run(
            update, init(init_key), train_key,
            Schedule(num_updates=config.num_updates, chunk_size=config.updates_per_chunk,
                     stop_after_chunks=stop_after_chunks),
            on_chunk=on_chunk,
            checkpointing=Checkpointing(latest=checkpointer, config_json=config.to_json(),
                                        resume=config.resume),
            display=Display(enabled=config.progress, desc="ten_half episodes",
                            units_per_update=config.episodes_per_update,
                            show=lambda m: f"value on={m['on']:+.4f} off={m['off']:+.4f} "
                                           f"optimum={m['opt']:+.4f}"))
        checkpointer.close()
        if result.step < config.num_updates:  # stopped early on purpose (tests of --resume)
            return {}

        q, policies = lib.greedy_policies(learners, result.carry)
        summary = {"optimal_value": dp.optimal_value()}
        for m in lib.METHODS:
            summary[f"{m}_value"] = dp.policy_value(policies[m])
            summary[f"{m}_agreement"] = lib.agreement(policies[m])
        summary.update(lib.arena_values(learners, result.carry, eval_key, config.arena_games))
        summary["arena_games"] = config.arena_games
        summary["episodes"] = config.episodes
        if rundir.writes:
            write_plots(rundir, q, policies, rundir.metrics())
        summary["seconds"] = time.time() - start
        rundir.write_summary(summary)
        rundir.write_report(lib.report(config, summary))
    return summary


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
