"""Ten-and-a-half's hook for ``jaxgames.pretrained`` (the interface: :mod:`jaxgames.pretrained.hooks`),
and the command that ships its three agents from one ``python -m train.ten_half`` run.

    python -m jaxgames.pretrained.ten_half --run runs/ten_half/pretrained-quick-seed0 \\
        --command "python -m train.ten_half --run-name pretrained-quick-seed0" [--overwrite]

writes ``agents/ten_half/``: ``mc-on-policy`` and ``mc-wis-off-policy``, the greedy policies
the run's two learners (first-visit ε-greedy MC control; weighted importance sampling) ended
with, and ``optimal``, the exact optimum of :mod:`jaxgames.ten_half.dp` (no training). The
names sort the on-policy learner first: the game's default agent. A player is two tables
(:mod:`jaxgames.ten_half.agent`: ``policy`` int8 [22, 6, 6] and ``q`` float32 [22, 6, 6, 2]),
about 2 kB.

The evaluation (a card's and :func:`measure`'s, the pipeline's own figures): against the
dealer, the mean reward per game in the arena with its 95% interval (``baselines.dealer``),
and the exact figures of the solver (``exact``: the policy's expected return, the optimum's,
the gap and the share of states where it plays an optimal action), and the sampled gap to the
optimum (the optimum's exact value minus the arena mean, the arena's interval). A learned
agent's card takes them from the run's summary.json; the optimum's are measured when shipped.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pathlib
import shutil
import sys
import time
from typing import Any

import jax
import numpy as np

import jaxgames
from jaxgames import arena
from jaxgames.pretrained import export as exporter
from jaxgames.pretrained import store
from jaxgames.pretrained.card import CARD, PARAMS, PretrainedError, check_card, sha256
from jaxgames.run_folder import read_config_json, read_summary_json
from jaxgames.ten_half import dp
from jaxgames.ten_half.agent import CONFIG_FIELDS, METHODS, AgentError, optimal_params, params_from_q, read_q
from jaxgames.ten_half.agent import make_player as _make_player
from jaxgames.ten_half.agent import params_like as _params_like
from jaxgames.ten_half.game import MAX_CARDS

__all__ = ["DEFAULT_DEALS", "MAX_DEALS", "MAX_DEALS_WHY", "NAMES", "card_fields", "evaluation", "main",
           "make_player", "measure", "params_like", "read_run", "ship"]

GAME = "ten_half"
PROG = "python -m jaxgames.pretrained.ten_half"
#: games of a re-measure: the run's own arena played 100,000 (a second of jitted play)
DEFAULT_DEALS = 100_000
MAX_DEALS = 10_000_000
MAX_DEALS_WHY = "all in one batch, about 0.2 KB a deal: 1.7 GB"
#: the shipped agents: a run's learner by its method, and the solver's optimum
NAMES = {"on_policy": "mc-on-policy", "off_policy": "mc-wis-off-policy", "optimal": "optimal"}
_TITLES = {"on_policy": "on-policy first-visit ε-greedy Monte Carlo control",
           "off_policy": "off-policy weighted-importance-sampling Monte Carlo control"}
METHOD = ("games against the dealer in the arena (jitted, vmapped), mean reward per game with a 95% "
          "interval over games; exact: jaxgames.ten_half.dp on the policy")


def params_like(config: dict, *, where: Any) -> Any:
    if not isinstance(config, dict):
        raise ValueError(f"{where} is not a JSON object")
    return _params_like()


def make_player(config: dict, params: Any, *, name: str):
    return _make_player(params, name=name)


def read_run(run_dir: str | pathlib.Path, *, which: str = "latest",
             method: str = "on_policy") -> tuple[dict, Any, dict, str]:
    """The run's config, the greedy policy and Q of its learner ``method`` from its newest
    checkpoint (a run has no ``best/``: ``which`` must be ``latest``), its summary and the
    checkpoint read; refused when the summary is not of that checkpoint's update."""
    if which != "latest":
        raise AgentError(f"a ten-and-a-half run keeps no best/ parameters: its final evaluation is of "
                         f"its newest checkpoint (which=latest), not {which!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    run = pathlib.Path(run_dir)
    config = read_config_json(run, game=GAME, error=AgentError, fields=CONFIG_FIELDS, title="ten-and-a-half")
    step_dir, q = read_q(run, method)
    summary = read_summary_json(run, error=AgentError)
    step = int(step_dir.name)
    last = int(config["episodes"]) // int(config["episodes_per_update"])
    if step != last or int(summary.get("episodes", -1)) != int(config["episodes"]):
        raise AgentError(f"{run}: its newest checkpoint is of update {step}, its final evaluation of update "
                         f"{last}: the card would not describe the agent shipped")
    return config, params_from_q(q), summary, f"checkpoints/{step}"


def card_fields(config: dict, summary: dict, *, method: str = "on_policy") -> dict:
    """``description`` and ``evaluation`` of learner ``method`` from a finished run's summary
    (``<method>_value``, ``<method>_agreement``, ``<method>_arena_mean``/``_ci95``,
    ``optimal_value``, ``arena_games``)."""
    keys = [f"{method}_value", f"{method}_agreement", f"{method}_arena_mean", f"{method}_arena_ci95",
            "optimal_value", "arena_games"]
    missing = [k for k in keys if k not in summary]
    if missing:
        raise AgentError(f"summary.json has no final evaluation of {method} ({', '.join(missing)})")
    ev = evaluation(value=summary[f"{method}_value"], optimum=summary["optimal_value"],
                    agreement=summary[f"{method}_agreement"], mean=summary[f"{method}_arena_mean"],
                    ci95=summary[f"{method}_arena_ci95"], games=summary["arena_games"])
    description = (f"the greedy policy of {_TITLES[method]} after {int(config['episodes']):,} episodes "
                   f"(ε = {config['epsilon']}), a table over (sum, cards, face cards); ten-and-a-half "
                   f"against the dealer")
    return {"description": description, "evaluation": ev}


def evaluation(*, value: float, optimum: float, agreement: float, mean: float, ci95: float,
               games: int) -> dict:
    """A card's ``evaluation``: the exact figures and the arena's sample (see the module docstring)."""
    return {"unit": "reward/game", "deals": int(games), "method": METHOD,
            "baselines": {"dealer": {"mean": float(mean), "ci95": float(ci95)}},
            "exact": {"expected_return": float(value), "optimal_value": float(optimum),
                      "gap_to_optimum": float(optimum - value), "agreement_with_optimum": float(agreement)},
            "gap_to_optimum": {"mean": float(optimum - mean), "ci95": float(ci95)}}


def measure(player, *, baselines: list[str], deals: int, seed: int = 0) -> dict:
    """The agent's ``deals`` games against the dealer (the only baseline) and its exact
    figures: the card's ``evaluation`` shape."""
    unknown = [b for b in baselines if b != "dealer"]
    if unknown:
        raise PretrainedError(f"ten-and-a-half has one baseline, the dealer; not {', '.join(unknown)}")
    result = arena.play(_env(), [player.policy], jax.random.key(seed), num_games=int(deals),
                        params=[player.params], max_steps=MAX_CARDS)
    policy = np.asarray(player.params["policy"])
    return evaluation(value=dp.policy_value(policy), optimum=dp.optimal_value(), agreement=agreement(policy),
                      mean=float(result.mean[0]), ci95=float(result.ci95[0]), games=deals)


@functools.lru_cache(maxsize=None)
def _env():
    """The game, one object per process: ``arena.play`` caches its compiled arena per env."""
    return jaxgames.make(GAME)


def agreement(policy: np.ndarray) -> float:
    """Share of the reachable decision states where ``policy`` [22, 6, 6] plays an optimal
    action (as the pipeline's summary counts it)."""
    q = dp.optimal_q()
    reach = dp.reachable_states()
    chosen = np.take_along_axis(q, np.asarray(policy, np.int64)[..., None], -1)[..., 0]
    return float((np.isclose(chosen, q.max(-1), rtol=0, atol=1e-12) & reach).sum() / reach.sum())


# -- shipping ------------------------------------------------------------------------------------


def ship(*, run: str | pathlib.Path, command: str, commit: str, cpu: str, notes: str | None = None,
         root: str | pathlib.Path | None = None, overwrite: bool = False) -> list[pathlib.Path]:
    """Write the three agent folders (:data:`NAMES`) from the finished run ``run``; their paths."""
    base = pathlib.Path(root) if root is not None else store.AGENTS
    targets = [base / GAME / name for name in NAMES.values()]
    existing = [t for t in targets if t.exists()]
    if existing and not overwrite:
        raise PretrainedError(f"{existing[0]} exists: give --overwrite to replace the shipped agents")
    summary_seconds = None
    written = []
    for method in ("on_policy", "off_policy"):
        config, params, summary, checkpoint = read_run(run, method=method)
        summary_seconds = summary.get("seconds")
        if summary_seconds is None:
            raise PretrainedError(f"{pathlib.Path(run) / 'summary.json'} has no 'seconds'")
        card = {"game": GAME, "name": NAMES[method], **card_fields(config, summary, method=method),
                "config": config, "command": command, "commit": commit, "cpu": cpu,
                "training_seconds": float(summary_seconds), "hands_trained": int(config["episodes"]),
                "checkpoint": checkpoint,
                "notes": (f"hands_trained counts this learner's episodes; the run trained both learners in "
                          f"the {float(summary_seconds):.1f} s" + (f"; {notes}" if notes else ""))}
        written.append(_write(base, card, params))
    seconds = solver_seconds()
    params = optimal_params()
    player = _make_player(params, name="optimal")
    card = {"game": GAME, "name": NAMES["optimal"],
            "description": ("the exact optimal policy, solved by backward induction over the infinite deck "
                            "(jaxgames.ten_half.dp), a table over (sum, cards, face cards); ten-and-a-half "
                            "against the dealer"),
            "config": {"game": GAME, "solver": "jaxgames.ten_half.dp.optimal_policy"},
            "command": command, "commit": commit, "cpu": cpu, "training_seconds": seconds,
            "evaluation": measure(player, baselines=["dealer"], deals=DEFAULT_DEALS, seed=0),
            "notes": (f"not trained: the exact optimum, which the run computes as its reference (its summary's "
                      f"optimal_value), by jaxgames.ten_half.dp; training_seconds is the solver's time; the "
                      f"arena figure was measured when shipped (seed 0) by {PROG}")}
    written.append(_write(base, card, params))
    return written


def solver_seconds() -> float:
    """Seconds the exact solver takes from nothing: the dealer's stick values and the
    optimal Q, each computed anew (past ``dp``'s caches)."""
    start = time.perf_counter()
    dp._stick_values.__wrapped__()   # noqa: SLF001 (the uncached solver: its cost, not a cache hit)
    dp._solve(None)                  # noqa: SLF001
    return time.perf_counter() - start


def _write(base: pathlib.Path, card: dict, params: Any) -> pathlib.Path:
    """Write ``base/ten_half/<name>/`` (``params.npz``, ``card.json`` with its hash) through a
    temporary folder, then load it back as a check."""
    from jaxgames import checkpoints

    name = card["name"]
    target, staging = base / GAME / name, base / GAME / f".{name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    params_file = checkpoints.write_npz(staging / PARAMS, params)
    card = {**card, "params_sha256": sha256(params_file), "bytes": params_file.stat().st_size}
    check_card(card, staging / CARD, game=GAME, name=name)
    (staging / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    store.load(GAME, name, root=base)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description="Ship ten-and-a-half's learned and optimal policies "
                                                       "from a finished python -m train.ten_half run.")
    p.add_argument("--run", required=True, help="the finished run folder, runs/ten_half/<run>")
    p.add_argument("--command", required=True, help="the command that trained the run")
    p.add_argument("--commit", default=None, help="the git commit it trained at (default: this checkout's HEAD)")
    p.add_argument("--cpu", default=None, help="the CPU it trained on (default: this machine's)")
    p.add_argument("--notes", default=None, help="one line the learned agents' cards add")
    p.add_argument("--root", default=None, help="the agents folder (default: the package's own)")
    p.add_argument("--overwrite", action="store_true", help="replace the shipped ten-and-a-half agents")
    args = p.parse_args(argv)
    for flag in ("command", "notes", "cpu"):
        if "\n" in (getattr(args, flag) or ""):
            p.error(f"argument --{flag}: must be one line")
    try:
        paths = ship(run=args.run, command=args.command, commit=args.commit or exporter.head_commit(),
                     cpu=args.cpu or exporter.this_cpu(), notes=args.notes, root=args.root,
                     overwrite=args.overwrite)
    except ValueError as e:   # AgentError, PretrainedError, CheckpointError: one line each
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
