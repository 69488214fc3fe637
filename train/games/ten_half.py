"""The ten-and-a-half pipeline behind ``python -m train.ten_half``: both Monte Carlo control
learners wired for the run and the benchmark, training, exact and arena evaluation, the
source's figures (learned best action over (sum, cards) per number of face cards, learning
curves of the exact policy value, the two methods' max-Q) and the report."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import arena
from jaxgames.ten_half import dp
from jaxgames.ten_half.game import MAX_CARDS
from train.algos import mc_control
from train.algos.learner import Learner
from train.common import Display, init_distributed, to_host
from train.common.plots import line_plot, plt
from train.common.rundir import markdown_table
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, run_pipeline

GAME = "ten_half"
METHODS = mc_control.METHODS
# decisions at 1, 2, 3 and 4 cards: a fifth card always ends the game
MAX_DECISIONS = MAX_CARDS - 1
FACES_SHOWN = 5  # 0..4 face cards, as the source's figures 4-4 .. 4-8


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train both methods, evaluate exactly, write the run directory; returns the summary (the
    same on every process of a multi-host run). ``config`` is ``train.ten_half.Config``."""
    init_distributed()
    wired = learners(episodes_per_update=config.episodes_per_update,
                     epsilon=config.epsilon, discount=config.discount)
    init, update = joint(wired)
    return run_pipeline(Pipeline(
        # the seed's key trains, as in the published numbers
        game=GAME, keys=Keys.of(config.seed, train_is_seed=True), init=init, update=update,
        num_updates=config.num_updates, chunk_size=config.updates_per_chunk,
        evaluate=functools.partial(evaluate_updates, config),
        final=functools.partial(final_evaluation, config, wired),
        display=Display(enabled=config.progress, desc="ten_half episodes", units_per_update=config.episodes_per_update,
                        show=lambda m: f"value on={m['on']:+.4f} off={m['off']:+.4f} optimum={m['opt']:+.4f}")),
        config, stop_after_chunks=stop_after_chunks)


def evaluate_updates(config, c: Chunk) -> Round:
    """A row per update of the chunk: each method's greedy policy valued exactly (the solver)."""
    metrics = c.metrics
    if not bool(np.all(np.asarray(metrics["on_policy"]["ended_fraction"]) == 1.0)):
        raise RuntimeError("an episode ran past max_episode_steps")
    first = c.step - len(np.asarray(metrics["on_policy"]["episode_return"])) + 1
    rows = []
    for i, u in enumerate(range(first, c.step + 1)):
        row = {"episodes": u * config.episodes_per_update}
        for m in METHODS:
            policy = np.asarray(metrics[m]["greedy_policy"][i]).reshape(dp.SHAPE)
            row[f"{m}_value"] = dp.policy_value(policy)
            row[f"{m}_return"] = float(metrics[m]["episode_return"][i])
        rows.append((u, row))
    return Round(row, {"on": row["on_policy_value"], "off": row["off_policy_value"], "opt": dp.optimal_value()},
                 earlier=tuple(rows[:-1]))


def final_evaluation(config, wired: dict[str, Learner], end: End) -> Final:
    """Each method's greedy policy: its exact value, its agreement with the optimum, its arena
    games."""
    q, policies = greedy_policies(wired, end.carry)
    summary = {"optimal_value": dp.optimal_value()}
    for m in METHODS:
        summary[f"{m}_value"] = dp.policy_value(policies[m])
        summary[f"{m}_agreement"] = agreement(policies[m])
    summary.update(arena_values(wired, end.carry, end.keys.eval, config.arena_games))
    summary["arena_games"] = config.arena_games
    summary["episodes"] = config.episodes
    return Final(summary, report=lambda s: report(config, s),
                 files=lambda rundir, s: write_plots(rundir, q, policies, end.rows))


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


def write_plots(rundir, q: dict, policies: dict, metrics: list[dict]) -> None:
    reach = dp.reachable_states()
    _policy_maps(rundir.plots / "policy.png", {**policies, "optimal": dp.optimal_policy()}, reach)
    episodes = [r["episodes"] for r in metrics]
    line_plot(
        rundir.plots / "learning_curve.png",
        {m.replace("_", "-"): (episodes, [r[f"{m}_value"] for r in metrics]) for m in policies},
        hlines={"optimum": dp.optimal_value()}, logx=True,
        title="Exact value of the greedy policy", xlabel="episodes", ylabel="expected reward")
    _max_q(rundir.plots / "max_q.png", {**q, "optimal": dp.optimal_q()}, reach)


def _policy_maps(path, policies: dict, reach: np.ndarray) -> None:
    fig, axes = plt.subplots(len(policies), FACES_SHOWN, figsize=(3.0 * FACES_SHOWN, 2.6 * len(policies)),
                             squeeze=False)
    cmap = plt.get_cmap("coolwarm", 2)
    for row, (name, policy) in enumerate(policies.items()):
        for faces in range(FACES_SHOWN):
            ax = axes[row, faces]
            grid = np.where(reach[:, :, faces], policy[:, :, faces], np.nan)[:, 1:5]  # cards 1..4
            ax.imshow(grid.T, origin="lower", aspect="auto", cmap=cmap, vmin=0, vmax=1,
                      extent=(-0.25, 21 / 2 + 0.25, 0.5, 4.5))
            ax.set_title(f"{name.replace('_', '-')}: {faces} face card(s)", fontsize=9)
            ax.set_xlabel("player sum")
            ax.set_ylabel("cards")
    fig.suptitle("Best action (red = hit, blue = stick, blank = unreachable)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _max_q(path, q: dict, reach: np.ndarray, faces: int = 0) -> None:
    fig, axes = plt.subplots(1, len(q), figsize=(4.2 * len(q), 3.4), squeeze=False)
    for ax, (name, values) in zip(axes[0], q.items()):
        grid = np.where(reach[:, :, faces], np.asarray(values).max(-1)[:, :, faces], np.nan)[:, 1:5]
        im = ax.imshow(grid.T, origin="lower", aspect="auto", cmap="viridis", vmin=-1, vmax=1.5,
                       extent=(-0.25, 21 / 2 + 0.25, 0.5, 4.5))
        ax.set(title=f"max Q, {name.replace('_', '-')} ({faces} faces)", xlabel="player sum", ylabel="cards")
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
