"""Ten-and-a-half learners wired for the pipeline and the benchmark, evaluation and report."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import arena
from jaxgames.ten_half import dp
from jaxgames.ten_half.game import MAX_CARDS
from train.algos import mc_control
from train.algos.learner import Learner
from train.common.distributed import to_host
from train.common.rundir import markdown_table

GAME = "ten_half"
METHODS = mc_control.METHODS
# decisions at 1, 2, 3 and 4 cards: a fifth card always ends the game
MAX_DECISIONS = MAX_CARDS - 1


def learners(*, episodes_per_update: int, epsilon: float, discount: float) -> dict[str, Learner]:
    """Both Monte Carlo control learners of the source, by method name."""
    env = jaxgames.make(GAME)
    cfg = mc_control.MCConfig(
        num_states=dp.NUM_STATES, num_actions=env.num_actions, max_episode_steps=MAX_DECISIONS,
        episodes_per_update=episodes_per_update, epsilon=epsilon, discount=discount)
    return {m: mc_control.make(cfg, env, dp.state_index, method=m) for m in METHODS}


def joint(learners: dict[str, Learner]):
    """``(init(key), update(carry, key))`` advancing every learner by one batch each."""

    def init(key):
        return {m: l.init(k) for (m, l), k in zip(learners.items(), jax.random.split(key, len(learners)))}

    def update(carry, key):
        out = {m: l.update(carry[m], k)
               for (m, l), k in zip(learners.items(), jax.random.split(key, len(learners)))}
        return {m: c for m, (c, _) in out.items()}, {m: x for m, (_, x) in out.items()}

    return init, update


def agreement(policy: np.ndarray) -> float:
    """Share of reachable decision states where ``policy`` [22,6,6] plays an optimal action."""
    q = dp.optimal_q()
    reach = dp.reachable_states()
    best = q.max(-1)
    chosen = np.take_along_axis(q, policy[..., None].astype(np.int64), -1)[..., 0]
    return float((np.isclose(chosen, best, rtol=0, atol=1e-12) & reach).sum() / reach.sum())


def arena_values(learners: dict[str, Learner], carry: dict, key: jax.Array, num_games: int) -> dict:
    """Each learned greedy policy played in the arena: mean reward per game and 95% interval
    (sampled; the exact values come from the solver)."""
    env = jaxgames.make(GAME)
    # every method's policy is the same rule, greedy on the Q table it is given
    # (mc_control.make): one policy function, so one compiled arena plays every method's table
    greedy = next(iter(learners.values())).policy
    out = {}
    for i, (m, l) in enumerate(learners.items()):
        # the parameters as NumPy: the arena runs on this process's first device (fed arrays
        # spread over the mesh it would run whole on every device of it)
        result = arena.play(env, [greedy], jax.random.fold_in(key, i), num_games=num_games,
                            params=[to_host(l.params(carry[m]))])
        out[f"{m}_arena_mean"], out[f"{m}_arena_ci95"] = float(result.mean[0]), float(result.ci95[0])
    return out


def greedy_policies(learners: dict[str, Learner], carry: dict) -> tuple[dict, dict]:
    """(Q tables [22,6,6,2], greedy policies [22,6,6]) per method."""
    q = {m: to_host(l.params(carry[m])).reshape(*dp.SHAPE, 2) for m, l in learners.items()}
    return q, {m: np.asarray(mc_control.greedy(jnp.asarray(q[m]))) for m in q}


def report(config, summary: dict) -> str:
    rows = [["optimal (exact solver)", summary["optimal_value"], 0.0, 1.0, ""]]
    for m in METHODS:
        v = summary[f"{m}_value"]
        rows.append([m.replace("_", "-") + " MC control", v, summary["optimal_value"] - v,
                     summary[f"{m}_agreement"],
                     f"{summary[f'{m}_arena_mean']:+.4f} ± {summary[f'{m}_arena_ci95']:.4f}"])
    return (
        f"# Ten-and-a-half: Monte Carlo control\n\n"
        f"{config.episodes:,} episodes per method, {config.episodes_per_update:,} per update, "
        f"ε = {config.epsilon}, γ = {config.discount}, seed {config.seed}; "
        f"{summary['seconds']:.1f} s in all.\n\n"
        "Expected rewards are exact (the solver); the arena column plays each greedy policy "
        f"{summary['arena_games']:,} times (mean ± 95% interval).\n\n"
        + markdown_table(["policy", "expected reward", "gap to optimum", "agreement with optimum",
                          "arena"], rows)
        + "\n![policies](plots/policy.png)\n\n![learning curves](plots/learning_curve.png)\n\n"
        "![max Q](plots/max_q.png)\n"
    )
