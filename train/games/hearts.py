"""The Hearts pipeline behind ``python -m train.hearts`` (the source: Sturtevant & White,
"Feature construction for reinforcement learning in Hearts"): the Q♠ predictor, a linear value
over AND-combinations of the 60 Q♠ atoms (``jaxgames/hearts/features.py``) trained by TD(λ)
backwards after each game (``train/algos/linear_td.py``), moves chosen by max^n over the rest
of the current trick with the learned value at the leaves (``jaxgames/hearts/trick_maxn.py``),
perfect information.

**What is learned.** The value of a seat at a state between tricks where the Q♠ is still in a
hand is the Q♠ points it will take (13 or 0), clipped to (0, 13). The states recorded are those
(at most 13 a game: one per trick); the outcome is 13 if the seat took the Q♠. The search's
leaf value of a seat is minus that prediction while the Q♠ is still out, 0 once it is taken
(the trick's own rewards, minus the points taken, already count it), so every seat minimises
the points of the trick plus its predicted Q♠ points to come.

**Training.** The paper variant (no passing), the moon off (the source trains with it off).
``opponent`` "self": every seat moves by the learned search and learns; "pie": seat 0 learns
and moves by the learned search, the other three are PIE (the deal is random, so seat 0 is no
special seat). Each update plays ``games_per_update`` games under vmap; one round is one jitted
chunk of ``updates_per_round`` updates; after every round the learned player is evaluated
against PIE and the rule-based bot over ``eval_deals`` deals x 14 seatings
(``jaxgames.hearts.evaluate``).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts import bots as bots_lib
from jaxgames.hearts import evaluate as eval_lib
from jaxgames.hearts import features as feat
from jaxgames.hearts import trick_maxn
from jaxgames.hearts.cards import QUEEN_OF_SPADES
from jaxgames.hearts.game import Hearts
from train.algos import linear_td
from train.common import Checkpointing, Display, RunDir, Schedule, init_distributed, run, to_host
from train.common.plots import line_plot
from train.common.rundir import markdown_table

GAME = "hearts"
OPPONENTS = ("self", "pie")
EXPERTS = ("pie", "rule")
#: states recorded per game and seat at most: one between each two tricks (13 tricks)
MAX_RECORDS = 13
#: steps of a paper-variant hand: 52 cards, no passing
MAX_STEPS = 52
QS_POINTS = 13.0
TOP_FEATURES = 20


def env_of(config=None) -> Hearts:
    """The source's variant: no passing, the moon off."""
    return Hearts(variant="paper", moon=False)


def spec_of(config) -> feat.FeatureSpec:
    return feat.FeatureSpec(feat.NUM_ATOMS_QS, tuple(config.feature_sizes), config.max_active)


def td_config(config) -> linear_td.LinearTDConfig:
    return linear_td.LinearTDConfig(value_low=0.0, value_high=QS_POINTS, lam=config.lam,
                                    lr_scale=config.lr_scale)


def qs_out(state) -> jax.Array:
    """bool []: the Q♠ is still in a hand."""
    return state.owner[QUEEN_OF_SPADES] >= 0


def record(state) -> jax.Array:
    """bool []: a state the value is learned at: between tricks (no card on the table), in
    play, the Q♠ still in a hand."""
    return (state.leader >= 0) & jnp.all(state.trick < 0) & qs_out(state) & ~state.terminated


def outcome(state, seat) -> jax.Array:
    """float32 []: 13 if ``seat`` took the Q♠, else 0."""
    return jnp.where(state.taken_by[QUEEN_OF_SPADES] == seat, QS_POINTS, 0.0)


def make_features(spec: feat.FeatureSpec):
    def features(state, seat):
        return feat.active_indices(feat.atoms_qs(state, seat), include=spec)
    return features


def make_value_fn(spec: feat.FeatureSpec, cfg: linear_td.LinearTDConfig):
    """``value_fn(weights, state) -> float32 [4]`` for the trick search: minus each seat's
    predicted Q♠ points to come (0 once the Q♠ is taken)."""
    features = make_features(spec)

    def seat_value(weights, state, seat):
        idx, valid = features(state, seat)
        return -jnp.where(qs_out(state), linear_td.value(weights, idx, valid, cfg=cfg), 0.0)

    return trick_maxn.per_seat(seat_value)


_POLICIES: dict = {}


def learned_policy(config):
    """The learned player: ``policy(weights, state, key)``, the trick search with the learned
    value (one object per feature spec and learner numbers, so arenas compile once)."""
    spec, cfg = spec_of(config), td_config(config)
    key = (spec, cfg)
    if key not in _POLICIES:
        _POLICIES[key] = trick_maxn.trick_search_policy(env_of(config), make_value_fn(spec, cfg))
    return _POLICIES[key]


def learner(config):
    env, spec, cfg = env_of(config), spec_of(config), td_config(config)
    policy = learned_policy(config)
    if config.opponent == "self":
        seats, opponent = None, None
    else:
        pie = bots_lib.make_bot(env, "pie").policy
        seats, opponent = (0,), (lambda w, s, k: pie(None, s, k))
    return linear_td.make(cfg, env, num_features=spec.num_features, num_slots=spec.num_slots,
                          max_records=MAX_RECORDS, features=make_features(spec), record=record,
                          outcome=outcome, policy=policy, games_per_update=config.games_per_update,
                          max_steps=MAX_STEPS, learning_seats=seats, opponent_policy=opponent)


def evaluate_against(config, weights, key, deals: int) -> dict:
    """The learned player against each expert: ``{expert: MatchResult}``."""
    env = env_of(config)
    policy = learned_policy(config)
    out = {}
    for i, name in enumerate(EXPERTS):
        expert = bots_lib.make_bot(env, name)
        out[name] = eval_lib.evaluate(env, [policy, expert.policy], jax.random.fold_in(key, i), deals=deals,
                                      params=[weights, None], names=["learned", name])
    return out


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train, evaluate, write the run folder; returns the summary. ``config`` is
    ``train.hearts.Config``."""
    start = time.time()
    init_distributed()
    spec = spec_of(config)
    wired = learner(config)
    train_key = jax.random.key(config.seed)
    init_key, eval_key = jax.random.split(jax.random.fold_in(train_key, 2**31 - 1))
    num_updates = config.rounds * config.updates_per_round
    with RunDir(config.runs_dir, GAME, config, resume=config.resume) as rundir:
        checkpointer, _ = rundir.open_checkpoints(keep=config.keep_checkpoints)

        def on_chunk(step, carry, metrics, seconds):
            rnd = step // config.updates_per_round
            weights = to_host(wired.params(carry))
            results = evaluate_against(config, weights, jax.random.fold_in(eval_key, rnd), config.eval_deals)
            row = {"round": rnd, "games": int(np.asarray(metrics["games"])[-1]),
                   "outcome": float(np.mean(metrics["outcome"])),
                   "abs_td_error": float(np.mean(metrics["abs_td_error"])),
                   "overflow": float(np.mean(metrics["overflow"])),
                   "ended": float(np.min(metrics["ended"]))}
            if row["ended"] < 1.0:
                raise RuntimeError("a training game ran past its steps")
            for name, r in results.items():
                row[f"points_learned_vs_{name}"] = float(r.points[0])
                row[f"points_{name}"] = float(r.points[1])
                row[f"difference_vs_{name}"] = float(r.difference)
            rundir.log(step, row)
            return {"pie": row["points_learned_vs_pie"], "rule": row["points_learned_vs_rule"],
                    "err": row["abs_td_error"]}

        result = run(
            wired.update, wired.init(init_key), train_key,
            Schedule(num_updates=num_updates, chunk_size=config.updates_per_round,
                     stop_after_chunks=stop_after_chunks),
            on_chunk=on_chunk,
            checkpointing=Checkpointing(latest=checkpointer, config_json=config.to_json(), resume=config.resume),
            display=Display(enabled=config.progress, desc="hearts games", units_per_update=config.games_per_update,
                            show=lambda m: f"learned vs PIE {m['pie']:.2f} vs rule {m['rule']:.2f} points/hand "
                                           f"|TD err| {m['err']:.2f}"))
        checkpointer.close()
        if result.step < num_updates:   # stopped early on purpose (tests of --resume)
            return {}

        weights = to_host(wired.params(result.carry))
        results = evaluate_against(config, weights, jax.random.fold_in(eval_key, 2**30), config.final_eval_deals)
        summary = {"features": spec.num_features, "feature_sizes": list(spec.sizes), "max_active": spec.max_active,
                   "train_games": num_updates * config.games_per_update,
                   "final_eval_deals": config.final_eval_deals}
        for name, r in results.items():
            summary[f"points_per_hand_learned_vs_{name}"] = {"mean": float(r.points[0]), "ci95": float(r.points_ci95[0])}
            summary[f"points_per_hand_expert_{name}"] = {"mean": float(r.points[1]), "ci95": float(r.points_ci95[1])}
            summary[f"difference_vs_{name}"] = {"mean": float(r.difference), "ci95": float(r.difference_ci95)}
            summary[f"games_won_rate_vs_{name}"] = float(r.wins[0])
        # the names: against PIE
        summary["points_per_hand_learned"] = summary["points_per_hand_learned_vs_pie"]
        summary["points_per_hand_expert"] = summary["points_per_hand_expert_pie"]
        top = top_features(weights, spec)
        if rundir.writes:
            write_plots(rundir, rundir.metrics())
        summary["seconds"] = time.time() - start
        rundir.write_summary(summary)
        rundir.write_report(report(config, summary, results, top))
    return summary


def top_features(weights, spec: feat.FeatureSpec, n: int = TOP_FEATURES) -> list[tuple[int, float, str]]:
    """The ``n`` features of largest weight (most Q♠ points predicted), in words."""
    w = np.asarray(weights)
    order = np.argsort(-w, kind="stable")[:n]
    return [(int(i), float(w[i]), feat.combination_names(int(i), feat.ATOM_NAMES_QS, include=spec.sizes))
            for i in order]


def write_plots(rundir, rows: list[dict]) -> None:
    games = [r["games"] for r in rows]
    line_plot(rundir.plots / "learning_curve.png",
              {f"learned vs {name}": (games, [r[f"points_learned_vs_{name}"] for r in rows]) for name in EXPERTS},
              hlines={"break-even 6.5": 6.5}, title="Learned Q♠ player (trick search), points per hand",
              xlabel="training games", ylabel="points per hand (lower is better)")
    line_plot(rundir.plots / "td_error.png", {"mean |TD error|": (games, [r["abs_td_error"] for r in rows])},
              title="Q♠ predictor: mean |G - V| per update", xlabel="training games", ylabel="Q♠ points")


def report(config, summary: dict, results: dict, top) -> str:
    rows = []
    for name, r in results.items():
        rows.append([name, f"{r.points[0]:.2f} ± {r.points_ci95[0]:.2f}", f"{r.points[1]:.2f} ± {r.points_ci95[1]:.2f}",
                     f"{r.difference:+.2f} ± {r.difference_ci95:.2f}", r.win_text(0)])
    feats = [[i + 1, f"{w:+.3f}", words] for i, (_, w, words) in enumerate(top)]
    return (
        "# Hearts: the Q♠ predictor (TD(λ), perfect information)\n\n"
        f"{summary['train_games']:,} training games (opponent: {config.opponent}), "
        f"{summary['features']:,} features (AND-combinations of sizes {tuple(config.feature_sizes)} of the 60 "
        f"Q♠ atoms, at most {config.max_active} active atoms), λ = {config.lam}, seed {config.seed}; "
        f"{summary['seconds']:.1f} s in all.\n\n"
        f"The learned player (max^n to the end of the trick, the learned value at the leaves, reading every hand) "
        f"against each expert over {config.final_eval_deals} deals x 14 seatings (the paper variant, moon off); "
        "points per hand, lower is better (6.5 is break-even); mean ± 95% interval.\n\n"
        + markdown_table(["expert", "learned", "expert", "difference", "learned's share of wins"], rows)
        + f"\n## The {len(top)} features of largest weight (predicting the Q♠ points)\n\n"
        + markdown_table(["#", "weight", "feature"], feats)
        + "\n![learning curve](plots/learning_curve.png)\n\n![TD error](plots/td_error.png)\n"
    )
