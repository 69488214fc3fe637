"""Hex's hook for ``jaxgames.pretrained`` (the interface: :mod:`jaxgames.pretrained.hooks`).

The agent is :class:`jaxgames.hex.agent.Agent`, built by ``make_agent`` from the run's config
(board size, network, search, the simulations and symmetry its evaluation used) and the
network's parameters. Which parameters ship: the run's ``best/`` (those ``load_agent`` and
``python -m jaxgames.hex.play --run`` read); the run's final evaluation plays them too (the
summary's ``best_model_*``), over the same games as the last round's model.

Its evaluation is the pipeline's final one (``train/games/hex.py``, rebuilt here from
``jaxgames`` alone: the library does not import the training code): the agent against plain
UCT over ``eval_games`` games, half as Black, the share of games won with its 95% Wilson
interval (``jaxgames.arena.wilson``). The card computes the interval from the count of wins
(Hex has no draws), so runs whose summary wrote the older normal interval get the same kind
of interval as the newer ones. Each baseline is named ``uct-<simulations>`` or ``random``.
"""

from __future__ import annotations

import functools
import json
import pathlib
import re
from typing import Any

import jax
import numpy as np

from jaxgames import arena as arena_lib
from jaxgames.core import random_policy
from jaxgames.hex.agent import Agent, AgentError, load_agent, make_agent
from jaxgames.hex.agent import params_like as _params_like
from jaxgames.pretrained.card import PretrainedError
from jaxgames.run_folder import read_summary_json
from jaxgames.search.uct import uct_policy

__all__ = ["DEFAULT_DEALS", "MAX_DEALS", "MAX_DEALS_WHY", "UNIT", "card_fields", "make_player", "measure",
           "params_like", "read_run"]

#: games per baseline of a re-measure (the cards' came from 200, which --deals 200 plays again):
#: the 11x11 agent's 200 games against UCT-1,000 took 100 s on a shared 2-core AMD EPYC Zen 5
DEFAULT_DEALS = 50
MAX_DEALS = 2_000
MAX_DEALS_WHY = "ten times the card's 200 games: hours of search on a CPU"
UNIT = "win rate"
METHOD = ("the agent ({search}) against each baseline, half the games as Black, no swap rule; the share of "
          "games it won, 95% Wilson interval over games")
_UCT = re.compile(r"uct-([1-9]\d*)")


def params_like(config: dict, *, where: Any) -> Any:
    return _params_like(config, where=where)


def make_player(config: dict, params: Any, *, name: str) -> Agent:
    return make_agent(config, params, name=name)


def read_run(run_dir: str | pathlib.Path, *, which: str = "best") -> tuple[dict, Any, dict, str]:
    """The run's config, the parameters ``load_agent`` reads (``best/``), its summary and the
    checkpoint read; refused when the summary's final evaluation of ``best/`` is of another
    round than the one read (a run resumed after its summary, or ``best/`` unreadable then)."""
    if which != "best":
        raise AgentError(f"--which {which}: a Hex run ships its best/ parameters (those its final "
                         f"evaluation and python -m jaxgames.hex.play --run play); leave out --which")
    run = pathlib.Path(run_dir)
    agent = load_agent(run)   # refuses a bad folder with AgentError, one line
    config = json.loads((run / "config.json").read_text())   # as it was (load_agent read it)
    summary_path = run / "summary.json"
    summary = read_summary_json(run, error=AgentError)
    if summary.get("board_size") != agent.board_size:
        raise AgentError(f"{summary_path} is of a {summary.get('board_size')}x{summary.get('board_size')} board, "
                         f"but the run's config of {agent.board_size}x{agent.board_size}: not this run's summary")
    evaluated = evaluated_step(config, summary)
    if evaluated != agent.step:
        raise AgentError(f"{summary_path}: its final evaluation of best/ is of the parameters of update {evaluated}, "
                         f"but best/ holds update {agent.step}: the card would not describe the agent shipped")
    return config, agent.params, summary, f"{agent.checkpoint.parent.name}/{agent.checkpoint.name}"


def phase1_rounds(config: dict) -> int:
    """The rounds before self-play: one of UCT-labelled random games, or none."""
    return 1 if config.get("phase1", "uct") == "uct" else 0


def evaluated_step(config: dict, summary: dict) -> int | None:
    """The update of the parameters the summary's ``best_model_*`` figures are of (round r of
    self-play ends at update (r + phase-1 rounds) x updates_per_round); None when the summary
    has none (``best/`` was unreadable at the end)."""
    best_round = summary.get("best_model_round")
    if best_round is None:
        return None
    return (int(best_round) + phase1_rounds(config)) * int(config.get("updates_per_round", 1))


def win_result(rate: float, games: int, *, as_black: float | None = None, as_white: float | None = None) -> dict:
    """``{"mean", "ci95", "low", "high", "wins", "games"}`` (and per colour where known): a
    share of ``games`` won, its Wilson interval, ``ci95`` half its width (it is asymmetric)."""
    wins = int(round(rate * games))
    low, high = arena_lib.wilson(wins, games)
    out = {"mean": wins / games, "ci95": (high - low) / 2, "low": low, "high": high, "wins": wins, "games": games}
    if as_black is not None and as_white is not None:
        out.update(as_black=float(as_black), as_white=float(as_white))
    return out


def card_fields(config: dict, summary: dict) -> dict:
    """``description``, ``evaluation`` and ``games_trained`` from a finished run's summary
    (``best_model_win_rate_vs_uct``, ``best_model_round``, ``eval_games``, ``uct_simulations``,
    ``agent_simulations``; ``win_rate_as_black`` / ``_white`` when the best model is the last
    round's; ``self_play_games``, ``phase1_games``)."""
    rate, games = summary.get("best_model_win_rate_vs_uct"), summary.get("eval_games")
    if not isinstance(rate, (int, float)) or not isinstance(games, int) or games < 2 or "uct_simulations" not in summary:
        raise AgentError("summary.json has no final evaluation of best/ (best_model_win_rate_vs_uct, eval_games, "
                         "uct_simulations)")
    last_round = int(summary.get("rounds", 0)) - phase1_rounds(config)
    colours = ({"as_black": summary.get("win_rate_as_black"), "as_white": summary.get("win_rate_as_white")}
               if summary.get("best_model_round") == last_round else {})
    player = make_agent(config, None, name="")
    search = _search_text(player)
    evaluation = {"unit": UNIT, "deals": games, "games": games, "method": METHOD.format(search=search),
                  "baselines": {f"uct-{int(summary['uct_simulations'])}": win_result(float(rate), games, **colours)}}
    n = player.board_size
    count = sum(int(np.prod(leaf.shape)) for leaf in jax.tree_util.tree_leaves(params_like(config, where="")))
    network = "the source's CNN" if player.network_kind == "source" else "a residual tower"
    phase1 = " after a phase of random games labelled by UCT" if phase1_rounds(config) else ""
    description = (f"AlphaZero-style Hex agent on {n}x{n}: {network} ({count:,} parameters) searching {search}, "
                   f"trained by self-play against a pool of its past models{phase1}; no swap rule")
    out = {"description": description, "evaluation": evaluation}
    trained = [summary.get(k) for k in ("self_play_games", "phase1_games")]
    if all(isinstance(x, int) for x in trained):
        out["games_trained"] = sum(trained)
    return out


def _search_text(player: Agent) -> str:
    average = ", its network averaged over the half turn" if player.symmetric else ""
    return f"{player.simulations} {player.search} simulations a move{average}"


def measure(player: Agent, *, baselines: list[str], deals: int, seed: int = 0) -> dict:
    """The agent against each of ``baselines`` (``uct-<simulations>`` or ``random``) over
    ``deals`` games each (even: half as Black): the card's ``evaluation`` shape."""
    if deals < 2 or deals % 2:
        raise PretrainedError(f"a Hex evaluation plays half its games as Black: give an even number of games "
                              f"(--deals), got {deals}")
    opponents = {name: _opponent(player.env, name) for name in baselines}
    key = jax.random.key(seed)
    results = {}
    for i, (name, policy) in enumerate(opponents.items()):
        res = arena_lib.play(player.env, [player.policy, policy], jax.random.fold_in(key, i), num_games=deals,
                             params=[player.params, None])
        rate = res.win_rate(0)[0]
        results[name] = win_result(rate, deals, as_black=(res.seat_mean[0, 0] + 1) / 2,
                                   as_white=(res.seat_mean[0, 1] + 1) / 2)
    return {"unit": UNIT, "deals": deals, "games": deals, "method": METHOD.format(search=_search_text(player)),
            "baselines": results}


def _opponent(env: Any, name: str):
    if name == "random":
        return random_policy
    m = _UCT.fullmatch(name)
    if not m:
        raise PretrainedError(f"no Hex baseline named {name!r}: give uct-<simulations> (uct-1000) or random")
    return _uct(env, int(m.group(1)))


@functools.lru_cache(maxsize=None)
def _uct(env: Any, simulations: int):
    return uct_policy(env, num_simulations=simulations)   # one function per setting: one compile
