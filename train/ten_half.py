"""Ten-and-a-half: on-policy and off-policy Monte Carlo control against the exact optimum.

    python -m train.ten_half                       # the source's 500,000 episodes per method
    python -m train.ten_half --preset full         # 10x longer
    python -m train.ten_half --episodes 100000 --epsilon 0.05 --run-name eps05

Writes runs/ten_half/<run-name>/: config.json, metrics.jsonl, checkpoints/, plots/*.png,
report.md and summary.json.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.ten_half import dp
from jaxgames.ten_half.game import MAX_CARDS
from train.algos import mc_control
from train.common import RunConfig, RunDir, check_divisible, parse, run
from train.common.rundir import markdown_table
from train.ten_half_plots import write_plots

GAME = "ten_half"


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
        check_divisible(self.episodes_per_update)

    @property
    def num_updates(self) -> int:
        return self.episodes // self.episodes_per_update


PRESETS = {
    "quick": Config(),
    "full": Config(episodes=5_000_000, updates_per_chunk=50),
}

# (player_sum_halves, num_cards, num_faces) -> one flat index in the solver's layout
SHAPE = dp.SHAPE
NUM_STATES = int(np.prod(SHAPE))
METHODS = ("on_policy", "off_policy")
# decisions at 1, 2, 3 and 4 cards: a fifth card always ends the game
MAX_DECISIONS = MAX_CARDS - 1


def state_index(state) -> jax.Array:
    s, n, f = state.observation[0], state.observation[1], state.observation[2]
    return (s * SHAPE[1] + n) * SHAPE[2] + f


def make_update(config: Config):
    """``update(carry, key)`` advancing both learners by one batch of episodes each."""
    env = jaxgames.make(GAME)
    mc = mc_control.MCConfig(
        num_states=NUM_STATES, num_actions=env.num_actions, max_episode_steps=MAX_DECISIONS,
        episodes_per_update=config.episodes_per_update, epsilon=config.epsilon,
        discount=config.discount)
    on = mc_control.make_on_policy_update(mc, env, state_index)
    off = mc_control.make_off_policy_update(mc, env, state_index)

    def init():
        return {"on_policy": mc_control.init(mc), "off_policy": mc_control.init(mc)}

    def update(carry, key):
        k_on, k_off = jax.random.split(key)
        on_carry, on_m = on(carry["on_policy"], k_on)
        off_carry, off_m = off(carry["off_policy"], k_off)
        return {"on_policy": on_carry, "off_policy": off_carry}, {"on_policy": on_m, "off_policy": off_m}

    return init, update


def agreement(policy: np.ndarray) -> float:
    """Share of reachable decision states where ``policy`` [22,6,6] plays an optimal action."""
    q = dp.optimal_q()
    reach = dp.reachable_states()
    best = q.max(-1)
    chosen = np.take_along_axis(q, policy[..., None].astype(np.int64), -1)[..., 0]
    return float((np.isclose(chosen, best, rtol=0, atol=1e-12) & reach).sum() / reach.sum())


def train(config: Config, *, stop_after_chunks: int | None = None) -> dict:
    """Train both methods, evaluate exactly, write the run directory; returns the summary."""
    start = time.time()
    rundir = RunDir(config.runs_dir, GAME, config, resume=config.resume)
    checkpointer, _ = rundir.open_checkpoints(keep=config.keep_checkpoints)
    init, update = make_update(config)
    key = jax.random.key(config.seed)

    def on_chunk(step, carry, metrics, seconds):
        if not bool(np.all(np.asarray(metrics["on_policy"]["ended_fraction"]) == 1.0)):
            raise RuntimeError("an episode ran past max_episode_steps")
        first = step - len(np.asarray(metrics["on_policy"]["episode_return"])) + 1
        for i, u in enumerate(range(first, step + 1)):
            row = {"episodes": u * config.episodes_per_update}
            for m in METHODS:
                policy = np.asarray(metrics[m]["greedy_policy"][i]).reshape(SHAPE)
                row[f"{m}_value"] = dp.policy_value(policy)
                row[f"{m}_return"] = float(metrics[m]["episode_return"][i])
            rundir.log(u, row)
        return {"on": row["on_policy_value"], "off": row["off_policy_value"],
                "opt": dp.optimal_value()}

    result = run(
        update, init(), key, num_updates=config.num_updates, chunk_size=config.updates_per_chunk,
        on_chunk=on_chunk, checkpointer=checkpointer, config_json=config.to_json(),
        resume=config.resume, progress=config.progress, desc="ten_half episodes",
        units_per_update=config.episodes_per_update, stop_after_chunks=stop_after_chunks,
        show=lambda m: f"value on={m['on']:+.4f} off={m['off']:+.4f} optimum={m['opt']:+.4f}")
    checkpointer.close()
    if result.step < config.num_updates:  # stopped early on purpose (tests of --resume)
        return {}

    q = {m: np.asarray(mc_control.q_values(result.carry[m])).reshape(*SHAPE, 2) for m in METHODS}
    policies = {m: np.asarray(mc_control.greedy(jnp.asarray(q[m]))) for m in METHODS}
    summary = {"optimal_value": dp.optimal_value()}
    for m in METHODS:
        summary[f"{m}_value"] = dp.policy_value(policies[m])
        summary[f"{m}_agreement"] = agreement(policies[m])
    summary["episodes"] = config.episodes
    write_plots(rundir, q, policies, rundir.metrics())
    summary["seconds"] = time.time() - start
    rundir.write_summary(summary)
    rundir.write_report(report(config, summary))
    return summary


def report(config: Config, summary: dict) -> str:
    rows = [["optimal (exact solver)", summary["optimal_value"], 0.0, 1.0]]
    for m in METHODS:
        v = summary[f"{m}_value"]
        rows.append([m.replace("_", "-") + " MC control", v, summary["optimal_value"] - v,
                     summary[f"{m}_agreement"]])
    return (
        f"# Ten-and-a-half: Monte Carlo control\n\n"
        f"{config.episodes:,} episodes per method, {config.episodes_per_update:,} per update, "
        f"ε = {config.epsilon}, γ = {config.discount}, seed {config.seed}; "
        f"{summary['seconds']:.1f} s in all.\n\n"
        "Values are exact expected rewards per game of each greedy policy (exact solver, "
        "not sampled).\n\n"
        + markdown_table(["policy", "expected reward", "gap to optimum", "agreement with optimum"], rows)
        + "\n![policies](plots/policy.png)\n\n![learning curves](plots/learning_curve.png)\n\n"
        "![max Q](plots/max_q.png)\n"
    )


def main(argv: Sequence[str] | None = None) -> dict:
    _, config = parse(PRESETS, argv, prog="python -m train.ten_half")
    summary = train(config)
    print(f"optimal {summary['optimal_value']:+.4f} | on-policy {summary['on_policy_value']:+.4f} "
          f"({summary['on_policy_agreement']:.1%} agree) | off-policy "
          f"{summary['off_policy_value']:+.4f} ({summary['off_policy_agreement']:.1%} agree) | "
          f"{summary['seconds']:.1f} s -> {config.runs_dir}/{GAME}/{config.run_name}")
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
