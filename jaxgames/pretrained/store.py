"""The shipped agents on disk: ``agents/<game>/<name>/`` (``params.npz`` + ``card.json``),
package data of jaxgames, listed, described and loaded.

Loading checks the card (:mod:`jaxgames.pretrained.card`), the parameter file's sha256
against it, then reads the parameters through ``jaxgames.checkpoints.read_npz`` into the
network the card's config describes and builds the player with the game's hook
(:mod:`jaxgames.pretrained.hooks`). Every function takes ``root``, the folder of the agents
(default: the package's own, :data:`AGENTS`), so tests can damage a copy.
"""

from __future__ import annotations

import pathlib

from jaxgames.player import Player
from jaxgames.pretrained import hooks
from jaxgames.pretrained.card import PretrainedError, check_params_file, read_card

__all__ = ["AGENTS", "agent_folder", "available", "card", "games", "load", "names"]

#: the shipped agents, ``agents/<game>/<name>/``
AGENTS = pathlib.Path(__file__).resolve().parent / "agents"


def games(*, root: str | pathlib.Path | None = None) -> list[str]:
    """The games with shipped agents, sorted."""
    return _folders(_root(root))


def names(game: str, *, root: str | pathlib.Path | None = None) -> list[str]:
    """The names of ``game``'s shipped agents, sorted; the first is the game's default."""
    base = _root(root)
    if game not in games(root=base):
        known = ", ".join(games(root=base)) or "none"
        raise PretrainedError(f"no shipped agent plays {game!r}: {base} holds agents for {known}")
    return _folders(base / game)


def agent_folder(game: str, name: str | None = None, *, root: str | pathlib.Path | None = None) -> pathlib.Path:
    """The folder of ``game``'s agent ``name`` (default: the game's first)."""
    base = _root(root)
    known = names(game, root=base)
    if not known:
        raise PretrainedError(f"{base / game} holds no agent folder")
    name = known[0] if name is None else name
    if name not in known:
        raise PretrainedError(f"no shipped {game} agent named {name!r} in {base / game}: the {game} "
                              f"agents are {', '.join(known)}")
    return base / game / name


def card(game: str, name: str | None = None, *, root: str | pathlib.Path | None = None) -> dict:
    """The checked card of ``game``'s agent ``name`` (default: the game's first)."""
    folder = agent_folder(game, name, root=root)
    return read_card(folder, game=game, name=folder.name)


def available(*, root: str | pathlib.Path | None = None) -> list[dict]:
    """The card of every shipped agent, by game then name."""
    base = _root(root)
    return [card(game, name, root=base) for game in games(root=base) for name in names(game, root=base)]


def load(game: str, name: str | None = None, *, root: str | pathlib.Path | None = None) -> Player:
    """The shipped agent ``name`` of ``game`` (default: the game's first), a
    :class:`jaxgames.player.Player` (hold'em: a ``jaxgames.holdem.agent.Agent``), its
    parameter file checked against its card's sha256."""
    from jaxgames import checkpoints  # orbax: only loading needs it

    folder = agent_folder(game, name, root=root)
    the_card = read_card(folder, game=game, name=folder.name)
    params_file = check_params_file(folder, the_card)
    try:
        hook = hooks.hook(game)
    except ValueError as e:
        raise PretrainedError(f"{folder}: {e}") from None
    try:
        like = hook.params_like(the_card["config"], where=f"the config in {folder / 'card.json'}")
    except ValueError as e:
        raise PretrainedError(str(e)) from None
    try:
        params = checkpoints.read_npz(params_file, like)
    except checkpoints.CheckpointError as e:
        raise PretrainedError(str(e)) from None
    try:
        return hook.make_player(the_card["config"], params, name=f"{folder.name} (shipped {game} agent)")
    except ValueError as e:   # arrays of the right shapes that do not fit together (a Hearts selection)
        raise PretrainedError(f"{params_file}: {e}") from None


def _root(root: str | pathlib.Path | None) -> pathlib.Path:
    return AGENTS if root is None else pathlib.Path(root)


def _folders(folder: pathlib.Path) -> list[str]:
    """The sub-folders of ``folder`` that may hold agents (not ``__pycache__``, not hidden)."""
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name[0] not in "._")
    except OSError:  # missing or unlistable: nothing ships there
        return []

