"""The source's figures for ten-and-a-half: learned best action over (sum, cards) per number of
face cards, learning curves of the exact policy value, and the two methods' max-Q."""

from __future__ import annotations

import numpy as np

from jaxgames.ten_half import dp
from train.common.plots import line_plot, plt

FACES_SHOWN = 5  # 0..4 face cards, as the source's figures 4-4 .. 4-8


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
