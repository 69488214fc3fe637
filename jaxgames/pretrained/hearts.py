"""Hearts' hook for ``jaxgames.pretrained`` (the interface: :mod:`jaxgames.pretrained.hooks`).

The agent is :class:`jaxgames.hearts.agent.Agent`, built by ``make_agent`` from the run's
config and the parameters ``{"weights", "qs_selected", "hearts_selected"}`` (the last two for
a combined value): by default the learned trick search inside PIMC over the config's worlds,
honest, on the paper variant (one hand, the moon on).

Its evaluation is the pipeline's final one (``train/games/hearts.py``, rebuilt here from
``jaxgames.hearts`` alone: the library does not import the training code), the source's
protocol (:func:`jaxgames.hearts.evaluate.evaluate`: every deal in the 14 seatings that mix
the agent and a bot, duplicate cards, intervals over deals). ``baselines``: the learned value's
trick search reading every hand (as training evaluates it, the moon off) against PIE, the
rule-based bot and random over ``deals`` deals; ``imperfect_information``: the shipped player
itself, PIMC and honest, against IIE (as many worlds) and the rule-based bot, the moon on,
over its own ``deals``. Each result is the points per hand the agent takes *fewer* than the
bot (the bot's minus the agent's: positive, the agent is better; 26 points a hand in all),
with the two sides' points per hand and the agent's share of hands won beside it.
"""

from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts import bots
from jaxgames.hearts import evaluate as eval_lib
from jaxgames.hearts.agent import Agent, AgentError, default_env, load_agent, make_agent
from jaxgames.hearts.agent import params_like as _params_like
from jaxgames.hearts.game import Hearts
from jaxgames.player import one_of
from jaxgames.run_folder import read_summary_json

__all__ = ["DEFAULT_DEALS", "MAX_DEALS", "MAX_DEALS_WHY", "card_fields", "make_player", "measure",
           "params_like", "read_run"]

#: deals of a re-measure (each played in 14 seatings, per bot; the card's came from 100): a
#: perfect-information hand plays at 15-20 a second on a 2-core CPU, a PIMC one at about 0.8
DEFAULT_DEALS = 10
MAX_DEALS = 1_000
MAX_DEALS_WHY = "14 seatings a deal: 14,000 searched hands, hours on a CPU"
#: the bots of each evaluation (train.games.hearts' EXPERTS and IMPERFECT)
PERFECT_BOTS = ("pie", "rule", "random")
IMPERFECT_BOTS = ("iie", "rule")
UNIT = "points/hand fewer than the bot"
METHOD = ("the learned value's max^n over the trick reading every hand (perfect information, as training "
          "evaluates it), paper variant, one hand, the moon off: every deal in the 14 seatings that mix the "
          "agent and the bot (duplicate cards); the bot's points per hand minus the agent's, 95% interval "
          "over deals")
IMPERFECT_METHOD = ("the shipped player, PIMC over {worlds} worlds (honest), against IIE over as many worlds "
                    "and the rule-based bot, paper variant, one hand, the moon on, in the same 14 seatings")


def params_like(config: dict, *, where: Any) -> Any:
    return _params_like(config, where=where)


def make_player(config: dict, params: Any, *, name: str) -> Agent:
    return make_agent(config, params, name=name)


def read_run(run_dir: str | pathlib.Path, *, which: str = "latest") -> tuple[dict, Any, dict, str]:
    """The run's config, its newest checkpoint's parameters (the weights, and a combined
    run's two selections), its summary and the checkpoint read; refused when the summary's
    evaluation is of another value or of other weights than those read (a run that stopped
    early, or resumed after its summary)."""
    run = pathlib.Path(run_dir)
    agent = load_agent(run, which=which)   # refuses a bad folder with AgentError, one line
    config = json.loads((run / "config.json").read_text())   # as it was (load_agent read it)
    summary_path = run / "summary.json"
    summary = read_summary_json(run, error=AgentError)
    spec = agent.spec
    if (summary.get("predictor"), summary.get("features")) != (spec.predictor, spec.num_features):
        raise AgentError(f"{summary_path} describes a {summary.get('predictor')} value of {summary.get('features')} "
                         f"features, but the run's checkpoint holds a {spec.predictor} value of "
                         f"{spec.num_features}: the card would not describe the agent shipped")
    evaluated = int(config.get("rounds", 0)) * int(config.get("updates_per_round", 0))
    if evaluated != agent.step:
        raise AgentError(f"{summary_path}: its final evaluation is of the weights of update {evaluated}, but the "
                         f"newest checkpoint is {agent.checkpoint} (update {agent.step}): the card would not "
                         f"describe the agent shipped")
    params = {"weights": np.asarray(agent.params, np.float32)}
    if spec.predictor == "combined":
        params["qs_selected"] = np.asarray(spec.qs_selected, np.int32)
        params["hearts_selected"] = np.asarray(spec.hearts_selected, np.int32)
    return config, params, summary, f"checkpoints/{agent.step}"


def card_fields(config: dict, summary: dict) -> dict:
    """``description``, ``evaluation`` and ``hands_trained`` from a finished run's summary
    (``points_per_hand_learned_vs_<bot>``, ``points_per_hand_expert_<bot>``,
    ``difference_vs_<bot>``, ``games_won_rate_vs_<bot>``, ``final_eval_deals``; the same with
    ``pimc`` / ``imperfect`` for the PIMC player, ``imperfect_deals``; ``train_games``,
    ``features``)."""
    baselines = {bot: _side(summary, bot, "learned_vs", "expert", "difference_vs", "games_won_rate_vs")
                 for bot in PERFECT_BOTS if f"difference_vs_{bot}" in summary}
    if not baselines or "final_eval_deals" not in summary:
        raise AgentError("summary.json has no final evaluation (difference_vs_<bot>, final_eval_deals)")
    deals = int(summary["final_eval_deals"])
    evaluation = {"unit": UNIT, "deals": deals, "hands": eval_lib.NUM_SEATINGS * deals, "method": METHOD,
                  "baselines": baselines}
    imperfect = {bot: _side(summary, bot, "pimc_vs", "expert_imperfect", "difference_imperfect_vs",
                            "games_won_rate_imperfect_vs")
                 for bot in IMPERFECT_BOTS if f"difference_imperfect_vs_{bot}" in summary}
    worlds = int(config.get("worlds", bots.DEFAULT_WORLDS))
    if imperfect:
        pimc_deals = int(summary.get("imperfect_deals", 0))
        evaluation["imperfect_information"] = {
            "unit": UNIT, "deals": pimc_deals, "hands": eval_lib.NUM_SEATINGS * pimc_deals, "worlds": worlds,
            "method": IMPERFECT_METHOD.format(worlds=worlds), "baselines": imperfect}
    features = summary.get("features")
    predictor = config.get("predictor", summary.get("predictor"))
    size = f" {features:,}" if isinstance(features, int) else ""
    description = (f"Sturtevant & White's learned Hearts player: a linear value ({predictor} predictor) over{size} "
                   f"AND-combinations of Q♠ and hearts atoms, trained by TD(λ) in self-play, at the leaves of "
                   f"max^n over the trick inside PIMC ({worlds} worlds, honest); the paper variant")
    out = {"description": description, "evaluation": evaluation}
    if "train_games" in summary:
        out["hands_trained"] = int(summary["train_games"])
    return out


def measure(player: Agent, *, baselines: list[str], deals: int, seed: int = 0, imperfect: tuple[str, ...] = (),
            imperfect_deals: int = 0) -> dict:
    """The card's ``evaluation`` measured again: the agent's trick search reading every hand
    against each of ``baselines`` (of :data:`PERFECT_BOTS`) over ``deals`` deals, and, with
    ``imperfect_deals``, the agent in PIMC against each of ``imperfect`` (of
    :data:`IMPERFECT_BOTS`; default both) over that many (slow: about 0.8 hands a second)."""
    unknown = sorted(set(baselines) - set(PERFECT_BOTS)) + sorted(set(imperfect) - set(IMPERFECT_BOTS))
    if unknown:
        raise ValueError(f"no Hearts evaluation against {', '.join(unknown)}: the card's are "
                         f"{', '.join(PERFECT_BOTS)} (perfect information) and {', '.join(IMPERFECT_BOTS)} (PIMC)")
    key = jax.random.key(seed)
    env = _env(moon=False)
    searcher = player.playing(env, perfect=True)
    results = _matches(env, searcher, [bots.make_bot(env, bot) for bot in baselines], key, deals)
    out = {"unit": UNIT, "deals": deals, "hands": eval_lib.NUM_SEATINGS * deals, "method": METHOD,
           "baselines": results}
    if imperfect_deals:
        env = _env(moon=True)
        pimc = player.playing(env)
        worlds = pimc.num_worlds
        table = [bots.make_bot(env, bot, **({"num_worlds": worlds} if bot == "iie" else {}))
                 for bot in imperfect or IMPERFECT_BOTS]
        results = _matches(env, pimc, table, key, imperfect_deals, first=100)
        out["imperfect_information"] = {
            "unit": UNIT, "deals": imperfect_deals, "hands": eval_lib.NUM_SEATINGS * imperfect_deals,
            "worlds": worlds, "method": IMPERFECT_METHOD.format(worlds=worlds), "baselines": results}
    return out


@functools.lru_cache(maxsize=None)
def _env(moon: bool) -> Hearts:
    """The evaluations' envs, one object each (the policies built on it compile once): the
    agent's own default env when the moon is on."""
    return default_env() if moon else Hearts(variant="paper", moon=False)


def _matches(env: Hearts, agent: Agent, table: list, key: jax.Array, deals: int, first: int = 0) -> dict:
    """The agent against each bot of ``table``, the i-th with ``fold_in(key, first + i)``,
    through one compiled arena (the bots as one player, ``one_of``)."""
    bot = one_of(table)
    return {b.name: _match(env, agent, bot, b.name, jax.random.fold_in(key, first + i), deals, index=i)
            for i, b in enumerate(table)}


def _match(env: Hearts, agent: Agent, bot, name: str, key: jax.Array, deals: int, index: int) -> dict:
    r = eval_lib.evaluate(env, [agent, bot], key, deals=deals, names=["agent", name],
                          params=[agent.params, jnp.int32(index)])
    return {"mean": -float(r.difference), "ci95": float(r.difference_ci95),
            "agent_points": {"mean": float(r.points[0]), "ci95": float(r.points_ci95[0])},
            "bot_points": {"mean": float(r.points[1]), "ci95": float(r.points_ci95[1])},
            "hands_won": float(r.wins[0])}


def _side(summary: dict, bot: str, agent_key: str, bot_key: str, difference_key: str, won_key: str) -> dict:
    """One bot's result from the summary, in :func:`_match`'s shape."""
    diff = _result(summary.get(f"{difference_key}_{bot}"))
    out = {"mean": -diff["mean"], "ci95": diff["ci95"],
           "agent_points": _result(summary.get(f"points_per_hand_{agent_key}_{bot}")),
           "bot_points": _result(summary.get(f"points_per_hand_{bot_key}_{bot}"))}
    if f"{won_key}_{bot}" in summary:
        out["hands_won"] = float(summary[f"{won_key}_{bot}"])
    return out


def _result(value: Any) -> dict:
    if not (isinstance(value, dict) and {"mean", "ci95"} <= value.keys()):
        raise AgentError(f"summary.json: an evaluation entry is not {{mean, ci95}}: {value!r:.60}")
    return {"mean": float(value["mean"]), "ci95": float(value["ci95"])}
