"""Ship the agent of a finished training run: write ``agents/<game>/<name>/`` (``params.npz``
and ``card.json``) from the run folder.

    python -m jaxgames.pretrained.export --game holdem --run runs/holdem/full-ppo-s0 \\
        --name alphaholdem-small --command "python -m train.holdem --preset full --seed 0 --loss ppo" \\
        [--commit SHA] [--cpu "2-core AMD EPYC ..."] [--training-seconds S] [--notes "..."]

The run's config.json and summary.json and its agent's parameters (``--which``: its best or
its newest checkpoint's; by default those the game's pipeline evaluates at the end, hold'em's
the newest) are read through the game's hook; the card takes the evaluation from the summary,
so what it says is what the run measured, and the hook refuses parameters other than those the
summary's evaluation played. ``--measure BASELINE`` adds a baseline the run did not play,
measured at export over as many deals (each such result says so). ``--commit`` defaults
to this checkout's HEAD and ``--cpu`` to this machine's CPU: right when exporting where the run
trained, else give them. ``--training-seconds`` defaults to the summary's ``seconds`` (which
counts only the last session of a resumed run). The folder is written to a temporary name
and renamed, then loaded back as a check; an existing agent is replaced only with
``--overwrite``. A bad flag or a run folder that cannot be used: one line, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

from jaxgames.pretrained import hooks, store
from jaxgames.pretrained.card import CARD, PARAMS, PretrainedError, check_card, sha256

PROG = "python -m jaxgames.pretrained.export"

__all__ = ["export", "main"]


def export(*, game: str, run: str | pathlib.Path, name: str, command: str, commit: str, cpu: str,
           which: str | None = None, training_seconds: float | None = None, notes: str | None = None,
           root: str | pathlib.Path | None = None, overwrite: bool = False, measure: tuple[str, ...] = (),
           measure_seed: int = 1) -> pathlib.Path:
    """Write the agent folder ``root/<game>/<name>/`` from the run folder ``run``; its path.
    ``measure``: baselines the run's summary did not measure, played now by the game's hook
    over as many deals as the summary's evaluation (key ``measure_seed``) and added to the
    card's evaluation, each marked as measured at export."""
    from jaxgames import checkpoints

    hook = hooks.hook(game)
    base = pathlib.Path(root) if root is not None else store.AGENTS
    target = base / game / name
    if target.exists() and not overwrite:
        raise PretrainedError(f"{target} exists: give --overwrite to replace it, or another --name")
    config, params, summary, checkpoint = (hook.read_run(run) if which is None
                                           else hook.read_run(run, which=which))
    fields = hook.card_fields(config, summary)
    if measure:
        fields["evaluation"] = _measured_too(hook, game, config, params, fields["evaluation"], measure, measure_seed)
    seconds = summary.get("seconds") if training_seconds is None else training_seconds
    if seconds is None:
        raise PretrainedError(f"{pathlib.Path(run) / 'summary.json'} has no 'seconds': give --training-seconds")
    staging = base / game / f".{name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    params_file = checkpoints.write_npz(staging / PARAMS, params)
    card = {"game": game, "name": name, "description": fields["description"], "config": config,
            "command": command, "commit": commit, "cpu": cpu, "training_seconds": float(seconds),
            **{k: fields[k] for k in ("hands_trained", "games_trained") if k in fields},
            "checkpoint": checkpoint, "evaluation": fields["evaluation"],
            **({"notes": notes} if notes else {}),
            "params_sha256": sha256(params_file), "bytes": params_file.stat().st_size}
    check_card(card, staging / CARD, game=game, name=name)
    (staging / CARD).write_text(json.dumps(card, indent=2) + "\n")
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    store.load(game, name, root=base)      # it loads back, or the error says why
    return target


def _measured_too(hook, game: str, config: dict, params, evaluation: dict, baselines: tuple[str, ...],
                  seed: int) -> dict:
    """``evaluation`` with ``baselines`` measured now over its own count of deals, each result
    marked ``"measured": "at export, seed S"`` (the others are the run's own)."""
    known = [b for b in baselines if b in evaluation["baselines"]]
    if known:
        raise PretrainedError(f"--measure {known[0]}: the run's summary measured it already")
    player = hook.make_player(config, params, name="the agent exported")
    now = hook.measure(player, baselines=list(baselines), deals=evaluation["deals"], seed=seed)
    added = {b: {**r, "measured": f"at export, seed {seed}"} for b, r in now["baselines"].items()}
    return {**evaluation, "baselines": {**evaluation["baselines"], **added}}


def head_commit() -> str:
    """This checkout's ``git rev-parse --short HEAD``, or ``unknown``."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=pathlib.Path(__file__).resolve().parent, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def this_cpu() -> str:
    """``<n>-core <model name>`` of this machine (Linux's /proc/cpuinfo), or ``unknown``."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{os.cpu_count()}-core {line.split(':', 1)[1].strip()}"
    except OSError:
        pass
    return "unknown"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Ship the agent of a finished training run "
                                                       "as jaxgames.pretrained package data.")
    p.add_argument("--game", required=True, choices=sorted(hooks.HOOKS))
    p.add_argument("--run", required=True, help="the finished run folder, runs/<game>/<run>")
    p.add_argument("--name", required=True, help="the agent's name, its folder (letters, digits, - and _)")
    p.add_argument("--command", required=True, help="the command that trained the run")
    p.add_argument("--commit", default=None, help="the git commit it trained at (default: this checkout's HEAD)")
    p.add_argument("--cpu", default=None, help="the CPU it trained on (default: this machine's)")
    p.add_argument("--which", choices=("best", "latest"), default=None,
                   help="the run's best parameters or its newest checkpoint's (default: those the game's "
                        "final evaluation plays, hold'em's newest; the exporter refuses the other)")
    p.add_argument("--training-seconds", type=float, default=None, metavar="S",
                   help="how long it trained (default: summary.json's seconds)")
    p.add_argument("--notes", default=None, help="one line a reader of the card should know")
    p.add_argument("--measure", action="append", default=[], metavar="BASELINE",
                   help="a baseline the run did not measure, played now over the summary's count of deals "
                        "and added to the card, marked as measured at export (repeatable; Hex: uct-1000)")
    p.add_argument("--measure-seed", type=int, default=1, metavar="S",
                   help="with --measure: the key of those games (default 1; the run's own used others)")
    p.add_argument("--root", default=None, help="the agents folder (default: the package's own)")
    p.add_argument("--overwrite", action="store_true", help="replace an agent of that name")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.name or not all(c.isalnum() or c in "-_" for c in args.name) or args.name[0] in "-_":
        parser.error(f"argument --name: letters, digits, - and _ only, starting with a letter or digit, got {args.name!r}")
    for flag in ("command", "notes"):
        if "\n" in (getattr(args, flag) or ""):
            parser.error(f"argument --{flag}: must be one line")
    if args.training_seconds is not None and not args.training_seconds > 0:
        parser.error(f"argument --training-seconds: must be positive, got {args.training_seconds}")
    try:
        target = export(game=args.game, run=args.run, name=args.name, command=args.command,
                        commit=args.commit or head_commit(), cpu=args.cpu or this_cpu(), which=args.which,
                        training_seconds=args.training_seconds, notes=args.notes, root=args.root,
                        overwrite=args.overwrite, measure=tuple(args.measure), measure_seed=args.measure_seed)
    except ValueError as e:   # PretrainedError, the game's loader errors, CheckpointError: one line each
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    card = json.loads((target / CARD).read_text())
    print(f"wrote {target}: {PARAMS} {card['bytes']:,} bytes, sha256 {card['params_sha256'][:12]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
