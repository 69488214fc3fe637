"""Hold'em's hook for ``jaxgames.pretrained`` (the interface: :mod:`jaxgames.pretrained.hooks`).

The agent is :class:`jaxgames.holdem.agent.Agent`, built by ``make_agent`` from the run's
config and the parameters. Its evaluation is the pipeline's final one (``train/games/
holdem.py``'s ``evaluate``, rebuilt here from ``jaxgames.holdem.bots`` alone: the library does
not import the training code): a duplicate match against each baseline bot, every deal
played twice with the seats swapped, mbb/hand from the agent's side with a 95% interval over
deals; and, from the summary, local best response's winnings against the agent.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jax

from jaxgames.holdem import bots
from jaxgames.holdem.agent import AgentError, load_agent, make_agent, network_settings
from jaxgames.holdem.agent import params_like as _params_like
from jaxgames.run_folder import read_summary_json

__all__ = ["DEFAULT_DEALS", "MAX_DEALS", "MAX_DEALS_WHY", "card_fields", "make_player", "measure",
           "params_like", "read_run"]

#: deals of a re-measure (the card's came from 50,000): the equity bot's Monte Carlo makes its
#: match the slow one
DEFAULT_DEALS = 2_000
MAX_DEALS = 100_000
MAX_DEALS_WHY = "all in one batch, about 16 KB a deal: 1.6 GB"
METHOD = ("duplicate deals (each played twice, seats swapped) at stacks 20,000, blinds 50/100; "
          "mbb/hand from the agent's side, 95% interval over deals")


def params_like(config: dict, *, where: Any) -> Any:
    network_settings(config, where=where)
    return _params_like(config)


def make_player(config: dict, params: Any, *, name: str):
    return make_agent(config, params, name=name)


def read_run(run_dir: str | pathlib.Path, *, which: str = "latest") -> tuple[dict, Any, dict, str]:
    """The run's config, the parameters ``load_agent(run, which=which)`` reads, its summary
    and the checkpoint read; refused when the summary's final evaluation is of other
    parameters (:func:`evaluated_step`): the card would describe an agent it does not ship."""
    run = pathlib.Path(run_dir)
    agent = load_agent(run, which=which)   # refuses a bad folder with AgentError, one line
    config = json.loads((run / "config.json").read_text())   # as it was (load_agent read it)
    summary_path = run / "summary.json"
    summary = read_summary_json(run, error=AgentError)
    checkpoint = f"{agent.checkpoint.parent.name}/{agent.checkpoint.name}"
    evaluated = evaluated_step(config, summary)
    if evaluated != agent.step:
        other = "latest" if which == "best" else "best"
        raise AgentError(f"{summary_path}: its final evaluation is of the parameters of update {evaluated}, "
                         f"but which={which} reads {checkpoint} (update {agent.step}): the card would not "
                         f"describe the agent shipped (try --which {other})")
    return config, agent.params, summary, checkpoint


def evaluated_step(config: dict, summary: dict) -> int:
    """The update whose parameters the summary's final evaluation played: the last round's
    (``train.games.holdem`` evaluates and ships its last round)."""
    per_round = int(config.get("updates_per_round", 1))
    rounds = summary.get("rounds", config.get("rounds"))
    return int(rounds) * per_round


def card_fields(config: dict, summary: dict) -> dict:
    """``description``, ``evaluation`` and ``hands_trained`` from a finished run's summary
    (``mbb_vs_<bot>``: ``{"mean", "ci95"}``; ``final_eval_deals``; ``lbr_mbb``, ``lbr_hands``, and
    where the run measured them LBR's all-in adjusted figure and its winnings against the
    equity and the random bot over the same deals)."""
    baselines = {k[len("mbb_vs_"):]: _result(v) for k, v in summary.items() if k.startswith("mbb_vs_")}
    if not baselines or "final_eval_deals" not in summary:
        raise AgentError("summary.json has no final evaluation (mbb_vs_<bot>, final_eval_deals)")
    deals = int(summary["final_eval_deals"])
    evaluation = {"unit": "mbb/hand", "deals": deals, "hands": 2 * deals, "method": METHOD,
                  "baselines": baselines}
    if "lbr_mbb" in summary:
        evaluation["local_best_response"] = {
            **_result(summary["lbr_mbb"]), "hands": int(summary.get("lbr_hands", 0)),
            "method": "local best response's winnings against the agent; lower is less exploitable"}
        lbr = evaluation["local_best_response"]
        if "lbr_mbb_allin_adjusted" in summary:   # the same hands, less the luck of the cards to come
            lbr["allin_adjusted"] = _result(summary["lbr_mbb_allin_adjusted"])
        # the yardsticks LBR played over the same deals: its winnings against each reference bot
        bots_lbr = {}
        for key in summary:
            if key.startswith("lbr_mbb_") and key.endswith("_bot") and not key.startswith("lbr_mbb_allin_adjusted_"):
                name = key[len("lbr_mbb_"):-len("_bot")]
                bots_lbr[name] = _result(summary[key])
                if f"lbr_mbb_allin_adjusted_{name}_bot" in summary:
                    bots_lbr[name]["allin_adjusted"] = _result(summary[f"lbr_mbb_allin_adjusted_{name}_bot"])
        if bots_lbr:
            lbr["against_bots"] = bots_lbr
    settings = network_settings(config)
    size = f"{summary['parameters']:,}-parameter " if "parameters" in summary else ""
    description = (f"AlphaHoldem-style agent ({config.get('loss', 'ppo')}, Best-K self-play), the {size}"
                   f"{settings['network']} {settings['tower']} network; heads-up no-limit hold'em at "
                   f"stacks 20,000, blinds 50/100")
    out = {"description": description, "evaluation": evaluation}
    if "hands_trained" in summary:
        out["hands_trained"] = int(summary["hands_trained"])
    return out


def measure(player, *, baselines: list[str], deals: int, seed: int = 0) -> dict:
    """The agent's duplicate match against each of ``baselines`` (names of
    ``bots.BOT_NAMES``), ``deals`` deals each: the card's ``evaluation`` shape."""
    played = bots.against_baselines(player.env, player, player.params, jax.random.key(seed), names=baselines,
                                    num_deals=deals)
    results = {name: {"mean": r.mean, "ci95": r.ci95} for name, r in played.items()}
    return {"unit": "mbb/hand", "deals": deals, "hands": 2 * deals, "method": METHOD, "baselines": results}


def _result(value: Any) -> dict:
    if not (isinstance(value, dict) and {"mean", "ci95"} <= value.keys()):
        raise AgentError(f"summary.json: an evaluation entry is not {{mean, ci95}}: {value!r:.60}")
    return {"mean": float(value["mean"]), "ci95": float(value["ci95"])}

