"""A training run's folder as an agent loader meets it: the checks every game's
``load_agent`` makes, each an :class:`AgentError` of one line naming the path, and the one
checkpoint read they share (:func:`read_agent_params`).

orbax (``jaxgames.checkpoints``) is imported only by that read, so that a loader can refuse a
bad folder before importing it."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["AgentError", "listable", "one_line", "read_agent_params", "read_config_json", "read_summary_json"]


class AgentError(ValueError):
    """A run folder whose agent cannot be loaded; the message names the path and the problem.
    Every game's loader raises this one (``jaxgames.<game>.agent.AgentError`` is it)."""


def read_agent_params(run: pathlib.Path, like: Any, *, trainer: str, fits: str,
                      which: Sequence[str] = ("latest",), until: str = "round",
                      check_saved: Callable[[dict, pathlib.Path], None] | None = None) -> tuple[pathlib.Path, Any]:
    """The step folder an agent is read from (the newest of the first of ``which`` that holds
    one: ``"best"``, ``"latest"``) and the parameters in it, in the tree of ``like``
    (``jax.ShapeDtypeStruct`` leaves; ``fits`` says what they are, for the error). Every failure
    is an :class:`AgentError` of one line: no checkpoint yet (how to train on: ``trainer``'s
    ``--resume``; ``until`` names what ends before the first one), a checkpoint of another
    format or damaged, or parameters of other shapes. ``check_saved(config, step_dir)``: the
    game's check of the config the checkpoint was saved with (a dict) against config.json's,
    raising :class:`AgentError` when they do not belong together."""
    from jaxgames import checkpoints  # imported here (orbax): only loading an agent needs it

    try:
        step_dir = checkpoints.find_step(run, tuple(which))
    except checkpoints.CheckpointError as e:
        raise AgentError(f"{e} (the run stopped before its first {until} ended); train it further "
                         f"({trainer} --resume --run-name {run.name}) or give another run") from None
    try:
        saved = checkpoints.read_meta(step_dir).get("config") if check_saved is not None else None
        if isinstance(saved, dict):
            check_saved(saved, step_dir)
        return step_dir, checkpoints.read_params(step_dir, like, fits=fits)
    except checkpoints.OtherFormatError as e:
        raise AgentError(f"{e}: load it with the jaxgames version that wrote it") from None
    except checkpoints.CheckpointError as e:
        raise AgentError(str(e)) from None


def read_config_json(run: str | pathlib.Path, *, game: str, error: type[Exception],
                     fields: Sequence[str] = (), title: str | None = None) -> dict:
    """The JSON object in ``run/config.json`` of a ``python -m train.<game>`` run; ``error``
    (the loader's own class) with one line when there is no such folder, it is a file, it has
    no ``config.json`` (the runs it holds are listed, for a ``runs/<game>`` given instead of a
    run), the file is unreadable or not an object, it names another game (its ``game`` key), or
    it lacks one of ``fields`` (the settings the loader needs). ``title``: the game's name in
    the messages (default ``game``)."""
    run = pathlib.Path(run)
    trainer = f"python -m train.{game}"
    if not run.exists():
        raise error(f"{run}: no such run folder (give the folder of a {trainer} run, e.g. "
                    f"runs/{game}/quick-seed0)")
    if not run.is_dir():
        raise error(f"{run} is a file, not a run folder (give runs/{game}/<run>)")
    path = run / "config.json"
    if not path.is_file():
        runs = sorted(p.name for p in run.iterdir() if (p / "config.json").is_file()) if listable(run) else []
        hint = (f"; it holds the runs {', '.join(runs[:5])}{' ...' if len(runs) > 5 else ''}: "
                f"give one of them, e.g. {run / runs[0]}" if runs
                else f": not the folder of a {trainer} run")
        raise error(f"{run} has no config.json{hint}")
    try:
        config = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"{path} is unreadable ({one_line(e)})") from None
    if not isinstance(config, dict):
        raise error(f"{path} is not a JSON object: not the config of a {trainer} run")
    title = title or game
    other = config.get("game")
    if other is not None and other != game:
        raise error(f"{path} is the config of a {other} run, not a {title} run; give a folder "
                    f"written by {trainer}")
    missing = [k for k in fields if k not in config]
    if missing:
        parent = run.parent.name
        where = f" (it sits in {parent}/: a {parent} run?)" if parent and parent != game else ""
        raise error(f"{path} is not the config of a {title} run: it has no {', '.join(missing)}{where}; "
                    f"give a folder written by {trainer}")
    return config


def read_summary_json(run: str | pathlib.Path, *, error: type[Exception]) -> dict:
    """The JSON object in ``run/summary.json``, which a run writes when it has finished;
    ``error`` with one line naming the file when it is missing, unreadable or not an object."""
    path = pathlib.Path(run) / "summary.json"
    try:
        summary = json.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"{path} is missing: the run has not finished (its final evaluation writes it)") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"{path} is unreadable ({one_line(e)})") from None
    if not isinstance(summary, dict):
        raise error(f"{path} is not a JSON object")
    return summary


def listable(folder: pathlib.Path) -> bool:
    """Whether ``folder``'s entries can be listed."""
    try:
        next(iter(folder.iterdir()), None)
        return True
    except OSError:
        return False


def one_line(e: BaseException, limit: int = 200) -> str:
    """An exception's text on one line, cut at ``limit`` characters."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit] + " ..."
