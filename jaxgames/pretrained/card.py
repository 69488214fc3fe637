"""The card of a shipped agent: ``card.json`` beside its ``params.npz``, what it is, where it
comes from and how strong it measured, and the hash its parameter file is checked against.

Fields (all required but ``hands_trained``, ``games_trained``, ``checkpoint`` and ``notes``):

- ``game``, ``name``: the folder it sits in, ``agents/<game>/<name>/``;
- ``description``: one line;
- ``config``: the training run's ``config.json``, as it was (the game's hook rebuilds the
  network from it);
- ``command``, ``commit``, ``cpu``, ``training_seconds``: the command that trained it, the git
  commit it ran at, the CPU it ran on and how long it took; ``hands_trained`` (card games) or
  ``games_trained`` (board games) where the run's summary has it; ``checkpoint``: which of the
  run's checkpoints was exported (``best/2950``); ``notes``: anything else a reader should know;
- ``evaluation``: ``unit`` (``"mbb/hand"``, ...), ``deals`` (what the 95% intervals are over:
  deals, or games where a game has none), ``method`` (one line) and ``baselines``:
  ``{bot: {"mean", "ci95"}}``, the agent's result against each baseline (a share of games won
  adds its Wilson ``low``/``high``; a result measured at export rather than by the run says so
  in ``measured``); a game may add more (hold'em: ``hands``, ``local_best_response``);
- ``params_sha256``, ``bytes``: the sha256 and size of ``params.npz``.

Every problem is a :class:`PretrainedError` (a ``ValueError``): one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import pathlib
from typing import Any

from jaxgames.run_folder import one_line

__all__ = ["CARD", "PARAMS", "PretrainedError", "check_card", "check_params_file", "read_card", "sha256"]

CARD = "card.json"
PARAMS = "params.npz"

_TEXT = (str,)
_NUMBER = (numbers.Real,)
#: the required fields and their types (bool is not a number here: it is a mistake in a card)
REQUIRED = {"game": _TEXT, "name": _TEXT, "description": _TEXT, "config": (dict,), "command": _TEXT,
            "commit": _TEXT, "cpu": _TEXT, "training_seconds": _NUMBER, "evaluation": (dict,),
            "params_sha256": _TEXT, "bytes": (numbers.Integral,)}
OPTIONAL = {"hands_trained": (numbers.Integral,), "games_trained": (numbers.Integral,), "checkpoint": _TEXT,
            "notes": _TEXT}


class PretrainedError(ValueError):
    """A shipped agent that cannot be used (unknown, missing or damaged files, a bad card);
    the message is one line naming the file or folder."""


def sha256(path: pathlib.Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_card(folder: pathlib.Path, *, game: str, name: str) -> dict:
    """The checked card of the agent folder ``folder`` (``agents/<game>/<name>/``)."""
    path = pathlib.Path(folder) / CARD
    if not path.is_file():
        raise PretrainedError(f"{path} is missing: {folder} is not a complete shipped agent (reinstall "
                              f"jaxgames, or export the agent again)")
    try:
        card = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise PretrainedError(f"{path} is unreadable ({one_line(e)})") from None
    return check_card(card, path, game=game, name=name)


def check_card(card: Any, path: Any, *, game: str, name: str) -> dict:
    """``card`` if it has every field of the right type and belongs in the folder of
    ``game``/``name``; ``path`` names it in the error."""
    if not isinstance(card, dict):
        raise PretrainedError(f"{path} is not a JSON object: not an agent's card")
    for fields, required in ((REQUIRED, True), (OPTIONAL, False)):
        for field, types in fields.items():
            if field not in card:
                if required:
                    raise PretrainedError(f"{path} has no {field!r}: not a complete agent card")
                continue
            value = card[field]
            if isinstance(value, bool) or not isinstance(value, types):
                raise PretrainedError(f"{path}: {field!r} must be {_kind(types)}, got {value!r:.60}")
    for field, want in (("game", game), ("name", name)):
        if card[field] != want:
            raise PretrainedError(f"{path} says {field} {card[field]!r}, but it sits in the folder of "
                                  f"{want!r}: the card belongs to another agent")
    if "\n" in card["description"]:
        raise PretrainedError(f"{path}: 'description' must be one line")
    other = card["config"].get("game")
    if other is not None and other != game:
        raise PretrainedError(f"{path}: its config is of a {other} run, not a {game} run")
    _check_evaluation(card["evaluation"], path)
    return card


def check_params_file(folder: pathlib.Path, card: dict) -> pathlib.Path:
    """``folder/params.npz`` if it is there and its sha256 is the card's, else the error
    that says it is missing or damaged."""
    path = pathlib.Path(folder) / PARAMS
    if not path.is_file():
        raise PretrainedError(f"{path} is missing (reinstall jaxgames, or export the agent again)")
    digest = sha256(path)
    if digest != card["params_sha256"]:
        raise PretrainedError(f"{path} is damaged: its sha256 is {digest[:12]}..., its card says "
                              f"{card['params_sha256'][:12]}... (reinstall jaxgames)")
    return path


def _check_evaluation(evaluation: dict, path: Any) -> None:
    for field, types in (("unit", _TEXT), ("method", _TEXT), ("deals", (numbers.Integral,)),
                         ("baselines", (dict,))):
        value = evaluation.get(field)
        if isinstance(value, bool) or not isinstance(value, types):
            raise PretrainedError(f"{path}: evaluation {field!r} must be {_kind(types)}, got {value!r:.60}")
    if not evaluation["baselines"]:
        raise PretrainedError(f"{path}: evaluation 'baselines' is empty: the card must say what the agent beats")
    for bot, result in evaluation["baselines"].items():
        ok = isinstance(result, dict) and all(
            isinstance(result.get(k), numbers.Real) and not isinstance(result.get(k), bool) for k in ("mean", "ci95"))
        if not ok:
            raise PretrainedError(f"{path}: evaluation against {bot!r} must be {{\"mean\": number, "
                                  f"\"ci95\": number}}, got {result!r:.60}")


def _kind(types: tuple) -> str:
    return {_TEXT: "a string", _NUMBER: "a number", (dict,): "a JSON object",
            (numbers.Integral,): "an integer"}.get(types, "/".join(t.__name__ for t in types))
