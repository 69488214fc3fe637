"""The Hearts pipeline behind ``python -m train.hearts`` (the source: Sturtevant & White,
"Feature construction for reinforcement learning in Hearts"): linear values over
AND-combinations of boolean atoms trained by TD(λ) backwards after each game
(``train/algos/linear_td.py``), moves chosen by max^n over the rest of the current trick with
the learned value at the leaves; the values, the features and the players are in
``jaxgames/hearts/learned.py``.

**Predictors** (``predictor``): ``qs`` (the Q♠ points to come, from the 60 Q♠ atoms),
``hearts`` (the hearts, from the 88 hearts atoms), ``combined`` (every point, over the top
features of the two: the source's full player). A ``combined`` run first trains the two
predictors as *stages* of its own, each a run folder of its own under
``<run>/stages/hearts/{qs,hearts}`` (``stage_rounds`` rounds each, the same other settings),
takes the ``top_qs`` and ``top_hearts`` features of largest weight, starts from their learned
weights and trains on. ``--resume`` resumes whichever stage or phase was running.

**Training.** The paper variant (no passing), the moon off (the source trains with it off).
``opponent`` "self": every seat moves by the learned search and learns; "pie": seat 0 learns
and moves by the learned search, the other three are PIE. Each update plays
``games_per_update`` games under vmap; one round is one jitted chunk of ``updates_per_round``
updates; after every round the learned player is evaluated against PIE over ``eval_deals``
deals x 14 seatings (``jaxgames.hearts.evaluate``). At the end: against PIE, the rule-based
bot and random over ``final_eval_deals`` deals x 14 seatings (perfect information), then, for
the run's own predictor, the learned player inside PIMC (``worlds`` worlds, honest) against IIE and
the rule-based bot over ``imperfect_deals`` deals x 14 seatings with the moon on (the source's
imperfect-information test).

The run itself (rounds, checkpoints, ``--resume``, summary, report) is the skeleton's
(``train/common/skeleton.py``): :func:`pipeline` is made with the run folder open, so a
combined run's stages are nested runs inside it; the round's key is its number's, the final
ones ``keys.experts`` and ``keys.imperfect``.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts import bots as bots_lib
from jaxgames.hearts import evaluate as eval_lib
from jaxgames.hearts import features as feat
from jaxgames.hearts import learned
from jaxgames.hearts.game import Hearts
from jaxgames.player import one_of
from train.algos import linear_td
from train.common import Display, init_distributed, to_host
from train.common.plots import line_plot
from train.common.rundir import markdown_table
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, run_pipeline

GAME = "hearts"
OPPONENTS = ("self", "pie")
#: the experts of the perfect-information evaluation (the round's: the first)
EXPERTS = ("pie", "rule", "random")
#: the experts of the imperfect-information evaluation (the learned player inside PIMC)
IMPERFECT = ("iie", "rule")
STAGES = ("qs", "hearts")
#: states recorded per game and seat at most: one between each two tricks (13 tricks)
MAX_RECORDS = 13
#: steps of a paper-variant hand: 52 cards, no passing
MAX_STEPS = 52
TOP_FEATURES = 20


@functools.lru_cache(maxsize=None)
def env_of(moon: bool = False) -> Hearts:
    """The source's variant (no passing); the moon off in training and in the
    perfect-information evaluation, on in the imperfect-information one (as the source's). One
    object per setting, so the policies built on it compile once."""
    return Hearts(variant="paper", moon=moon)


def base_spec(config, predictor: str | None = None) -> learned.ValueSpec:
    """The Q♠ or hearts predictor of ``config`` (not ``combined``: that needs the stages' weights)."""
    qs, hearts = feat.atom_counts(config.rank_atoms)
    return learned.ValueSpec(predictor or config.predictor,
                             feat.FeatureSpec(qs, tuple(config.feature_sizes), config.max_active),
                             feat.FeatureSpec(hearts, tuple(config.hearts_feature_sizes), config.max_active))


def learner(config, spec: learned.ValueSpec, initial_weights=None):
    """The TD(λ) learner of ``spec``; from ``initial_weights`` (float32 [F]) instead of the
    source's random ones when given (the combined player's start)."""
    base = _learner(spec, config.games_per_update, config.opponent, config.lam, config.lr_scale)
    if initial_weights is None:
        return base
    weights = jax.numpy.asarray(initial_weights, jax.numpy.float32)
    if weights.shape != (spec.num_features,):
        raise ValueError(f"initial weights must have shape ({spec.num_features},), got {weights.shape}")
    return dataclasses.replace(base, init=lambda key: base.init(key).replace(weights=weights))


@functools.lru_cache(maxsize=8)
def _learner(spec: learned.ValueSpec, games_per_update: int, opponent: str, lam: float, lr_scale: float):
    """One learner per setting, so that a run's phases and a resumed run reuse its compiled
    update (the driver compiles one chunk per update function)."""
    cfg = linear_td.LinearTDConfig(value_low=0.0, value_high=spec.value_high, lam=lam, lr_scale=lr_scale,
                                   clip_margin=learned.CLIP_MARGIN)
    return linear_td.make(cfg, env_of(), num_features=spec.num_features, games_per_update=games_per_update,
                          **play_setup(spec, opponent))


def play_setup(spec: learned.ValueSpec, opponent: str) -> dict:
    """What a training game of ``spec`` against ``opponent`` is (``linear_td.play_and_record``'s
    keywords): the learned trick search in the learning seats (every seat for "self", seat 0 for
    "pie", PIE in the three others), the states recorded, their features, offsets and outcomes."""
    env = env_of()
    if opponent == "self":
        seats, opponent_policy = None, None
    else:
        pie = bots_lib.make_bot(env, "pie").policy
        seats, opponent_policy = (0,), (lambda w, s, k: pie(None, s, k))
    return dict(policy=learned.perfect_policy(spec, env), opponent_policy=opponent_policy, learning_seats=seats,
                features=learned.features_fn(spec), record=learned.record(spec.predictor),
                outcome=learned.outcome(spec.predictor), offset=learned.offset(spec.predictor),
                num_slots=spec.num_slots, max_records=MAX_RECORDS, max_steps=MAX_STEPS)


def evaluate_against(spec: learned.ValueSpec, weights, key, deals: int, experts=EXPERTS) -> dict:
    """The learned player (perfect information) against each expert of ``experts`` (of
    :data:`EXPERTS`): ``{expert: MatchResult}``."""
    env = env_of()
    return _matches(env, learned.perfect_policy(spec, env), "learned", weights, key, deals, EXPERTS, experts, {})


def evaluate_imperfect(spec: learned.ValueSpec, weights, key, deals: int, worlds: int) -> dict:
    """The learned player inside PIMC (honest, ``worlds`` worlds) against IIE (as many worlds)
    and the rule-based bot, the moon on: ``{expert: MatchResult}``."""
    env = env_of(moon=True)
    return _matches(env, learned.imperfect_policy(spec, env, worlds), "learned (PIMC)", weights, key, deals,
                    IMPERFECT, IMPERFECT, {"iie": {"num_worlds": worlds}})


def _matches(env, policy, name, weights, key, deals, table, experts, options) -> dict:
    """``policy`` (with ``weights``) against each bot of ``experts`` over ``deals`` deals x 14
    seatings, the i-th bot of ``table`` with ``fold_in(key, i)``. The table is one player
    (``one_of``), so one compiled arena plays every bot of it, in the rounds' evaluations and the
    final one alike: an arena per bot compiled the learned player's search each time."""
    player = one_of([bots_lib.make_bot(env, bot, **options.get(bot, {})) for bot in table])
    return {expert: eval_lib.evaluate(env, [policy, player], jax.random.fold_in(key, table.index(expert)),
                                      deals=deals, params=[weights, jnp.int32(table.index(expert))],
                                      names=[name, expert])
            for expert in experts}


def _stage_config(config, stage: str, root, resume: bool):
    return dataclasses.replace(config, predictor=stage, rounds=config.stage_rounds, runs_dir=str(root),
                               run_name=stage, resume=resume, final_eval_deals=config.eval_deals,
                               imperfect_deals=0)


def _stages(config, rundir) -> tuple[learned.ValueSpec, np.ndarray, dict]:
    """Train (or resume, or re-read) the Q♠ and hearts stages of a combined run; the combined
    spec, its starting weights and the stages' summaries."""
    root = rundir.path / "stages"
    weights, summaries = {}, {}
    for stage in STAGES:
        exists = (root / GAME / stage / "config.json").is_file()
        summary, w = _train(_stage_config(config, stage, root, resume=exists), stage=True)
        weights[stage], summaries[stage] = w, summary
    base = base_spec(config, "qs")
    spec, start = learned.combined_spec(base.qs, base.hearts, weights["qs"], weights["hearts"],
                                        top_qs=config.top_qs, top_hearts=config.top_hearts)
    return spec, start, summaries


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train, evaluate, write the run folder; returns the summary ({} when stopped early).
    ``config`` is ``train.hearts.Config``."""
    init_distributed()
    summary, _ = _train(config, stop_after_chunks=stop_after_chunks)
    return summary


def _train(config, *, stop_after_chunks: int | None = None, stage: bool = False) -> tuple[dict, np.ndarray | None]:
    """The run of ``config`` (the combined player's, or a stage's): its summary and its learned
    weights (None when stopped early)."""
    learned_weights = []
    summary = run_pipeline(lambda rundir: pipeline(config, rundir, stage=stage, learned_weights=learned_weights),
                           config, stop_after_chunks=stop_after_chunks, game=GAME)
    return summary, (learned_weights[-1] if learned_weights else None)


def pipeline(config, rundir, *, stage: bool = False, learned_weights: list | None = None) -> Pipeline:
    """The run of ``config`` in its open run folder: a combined run first trains (or resumes, or
    re-reads) its stages under ``<run>/stages`` and writes ``selection.npz``. The final
    evaluation appends the learned weights to ``learned_weights``."""
    if config.predictor == "combined":
        spec, initial, stage_summaries = _stages(config, rundir)
    else:
        spec, initial, stage_summaries = base_spec(config), None, {}
    if rundir.writes and spec.predictor == "combined":
        np.savez(rundir.path / "selection.npz", qs_selected=np.asarray(spec.qs_selected, np.int32),
                 hearts_selected=np.asarray(spec.hearts_selected, np.int32))
    wired = learner(config, spec, initial)
    return Pipeline(
        game=GAME, keys=Keys.of(config.seed, train_is_seed=True), init=wired.init, update=wired.update,
        num_updates=config.rounds * config.updates_per_round, chunk_size=config.updates_per_round,
        evaluate=functools.partial(evaluate_round, config, spec, wired),
        final=functools.partial(final_evaluation, config, spec, wired, stage_summaries, stage=stage,
                                learned_weights=[] if learned_weights is None else learned_weights),
        display=Display(enabled=config.progress, desc=f"hearts {spec.predictor} games",
                        units_per_update=config.games_per_update,
                        show=lambda m: f"learned vs PIE {m['pie']:.2f} points/hand |TD err| {m['err']:.2f}"))


def evaluate_round(config, spec: learned.ValueSpec, wired, c: Chunk) -> Round:
    """The round's row: the chunk's training figures and the learned player against PIE over
    ``eval_deals`` deals (the round's key by its number)."""
    rnd = c.step // config.updates_per_round
    metrics = c.metrics
    r = evaluate_against(spec, to_host(wired.params(c.carry)), c.keys.round(rnd), config.eval_deals,
                         experts=EXPERTS[:1])["pie"]
    row = {"round": rnd, "games": int(np.asarray(metrics["games"])[-1]),
           "outcome": float(np.mean(metrics["outcome"])),
           "abs_td_error": float(np.mean(metrics["abs_td_error"])),
           "overflow": float(np.mean(metrics["overflow"])),
           "ended": float(np.min(metrics["ended"])),
           "points_learned_vs_pie": float(r.points[0]), "points_pie": float(r.points[1]),
           "difference_vs_pie": float(r.difference)}
    if row["ended"] < 1.0:
        raise RuntimeError("a training game ran past its steps")
    return Round(row, {"pie": row["points_learned_vs_pie"], "err": row["abs_td_error"]})


def final_evaluation(config, spec: learned.ValueSpec, wired, stage_summaries: dict, end: End, *, stage: bool,
                     learned_weights: list) -> Final:
    """Against every expert (a stage: PIE alone, the run's player being the combined one) and,
    with ``imperfect_deals``, inside PIMC; the learned weights go to ``learned_weights``."""
    weights = to_host(wired.params(end.carry))
    learned_weights.append(weights)
    results = evaluate_against(spec, weights, end.keys.experts, config.final_eval_deals,
                               experts=EXPERTS[:1] if stage else EXPERTS)
    imperfect = (evaluate_imperfect(spec, weights, end.keys.imperfect, config.imperfect_deals, config.worlds)
                 if config.imperfect_deals else {})
    return Final(summarize(config, spec, results, imperfect, stage_summaries),
                 report=lambda s: report(config, spec, s, results, imperfect, weights),
                 files=lambda rundir, s: write_plots(rundir, end.rows, spec.predictor))


def summarize(config, spec: learned.ValueSpec, results: dict, imperfect: dict, stage_summaries: dict) -> dict:
    """The summary's figures (the skeleton adds ``seconds``)."""
    stage_games = sum(s["train_games"] for s in stage_summaries.values())
    summary = {"predictor": spec.predictor, "features": spec.num_features, "max_active": config.max_active,
               "train_games": config.rounds * config.updates_per_round * config.games_per_update + stage_games,
               "final_eval_deals": config.final_eval_deals, "imperfect_deals": config.imperfect_deals}
    for name, r in results.items():
        summary[f"points_per_hand_learned_vs_{name}"] = _mean_ci(r.points[0], r.points_ci95[0])
        summary[f"points_per_hand_expert_{name}"] = _mean_ci(r.points[1], r.points_ci95[1])
        summary[f"difference_vs_{name}"] = _mean_ci(r.difference, r.difference_ci95)
        summary[f"games_won_rate_vs_{name}"] = float(r.wins[0])
    for name, r in imperfect.items():
        summary[f"points_per_hand_pimc_vs_{name}"] = _mean_ci(r.points[0], r.points_ci95[0])
        summary[f"points_per_hand_expert_imperfect_{name}"] = _mean_ci(r.points[1], r.points_ci95[1])
        summary[f"difference_imperfect_vs_{name}"] = _mean_ci(r.difference, r.difference_ci95)
        summary[f"games_won_rate_imperfect_vs_{name}"] = float(r.wins[0])
    # the names: against PIE
    summary["points_per_hand_learned"] = summary["points_per_hand_learned_vs_pie"]
    summary["points_per_hand_expert"] = summary["points_per_hand_expert_pie"]
    summary["games_won_rate"] = summary["games_won_rate_vs_pie"]
    for stage, s in stage_summaries.items():
        summary[f"stage_{stage}"] = {k: s[k] for k in ("features", "train_games", "points_per_hand_learned",
                                                       "points_per_hand_expert", "seconds")}
    return summary


def _mean_ci(mean, ci) -> dict:
    return {"mean": float(mean), "ci95": float(ci)}


def write_plots(rundir, rows: list[dict], predictor: str) -> None:
    games = [r["games"] for r in rows]
    line_plot(rundir.plots / "learning_curve.png",
              {"learned vs PIE": (games, [r["points_learned_vs_pie"] for r in rows]),
               "PIE": (games, [r["points_pie"] for r in rows])},
              hlines={"break-even 6.5": 6.5}, title=f"Learned player ({predictor} predictor), points per hand",
              xlabel="training games (this phase)", ylabel="points per hand (lower is better)")
    line_plot(rundir.plots / "td_error.png", {"mean |TD error|": (games, [r["abs_td_error"] for r in rows])},
              title=f"{predictor} predictor: mean |G - V| per update", xlabel="training games (this phase)",
              ylabel="points")


_WHAT = {"qs": "the Q♠ predictor", "hearts": "the hearts predictor",
         "combined": "the combined predictor (the Q♠ and hearts predictors' top features)"}


def report(config, spec, summary: dict, results: dict, imperfect: dict, weights) -> str:
    def table(res):
        rows = [[name, f"{r.points[0]:.2f} ± {r.points_ci95[0]:.2f}", f"{r.points[1]:.2f} ± {r.points_ci95[1]:.2f}",
                 f"{r.difference:+.2f} ± {r.difference_ci95:.2f}", r.win_text(0)] for name, r in res.items()]
        return markdown_table(["expert", "learned", "expert", "difference", "learned's share of wins"], rows)

    def features(n):
        return markdown_table(["#", "weight", "feature"],
                              [[i + 1, f"{w:+.3f}", words] for i, (_, w, words) in
                               enumerate(learned.top_features(weights, spec, n))])

    text = (
        f"# Hearts: {_WHAT[spec.predictor]}, TD(λ) inside max^n\n\n"
        f"{summary['train_games']:,} training games in all (opponent: {config.opponent}), "
        f"{summary['features']:,} features, at most {config.max_active} active atoms per atom set, "
        f"λ = {config.lam}, seed {config.seed}; {summary['seconds']:.1f} s in all.\n\n")
    for stage in STAGES:
        s = summary.get(f"stage_{stage}")
        if s:
            text += (f"- stage {stage}: {s['train_games']:,} games, {s['features']:,} features, against PIE "
                     f"{s['points_per_hand_learned']['mean']:.2f} ± {s['points_per_hand_learned']['ci95']:.2f} "
                     f"points per hand (stages/hearts/{stage}/report.md)\n")
    text += (
        f"\n## Perfect information\n\nThe learned player (max^n to the end of the trick, the learned value at "
        f"the leaves, reading every hand) against each expert over {config.final_eval_deals} deals x 14 "
        "seatings (the paper variant, moon off); points per hand, lower is better (6.5 is break-even); "
        "mean ± 95% interval.\n\n" + table(results))
    if imperfect:
        text += (f"\n## Imperfect information\n\nThe learned player inside PIMC ({config.worlds} worlds dealt from "
                 f"what it has seen, the learned trick search in each) against each expert over "
                 f"{config.imperfect_deals} deals x 14 seatings, the moon on (the source's test).\n\n"
                 + table(imperfect))
    text += (f"\n## The {TOP_FEATURES} features that predict the most points (largest weight)\n\n"
             + features(TOP_FEATURES)
             + f"\n## The {TOP_FEATURES} features that predict the fewest points (smallest weight)\n\n"
             + features(-TOP_FEATURES)
             + "\n![learning curve](plots/learning_curve.png)\n\n![TD error](plots/td_error.png)\n")
    return text
