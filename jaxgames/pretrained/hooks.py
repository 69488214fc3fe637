"""What each game tells ``jaxgames.pretrained``: one small module per game, named here and
imported only when an agent of that game is loaded, exported or measured (so listing the
agents compiles and imports no game).

A game's hook module defines:

- ``params_like(config, *, where) -> tree``: the shapes and dtypes (``jax.ShapeDtypeStruct``
  leaves) of the parameters of the network a run's ``config`` (its config.json, a dict)
  describes; a ``ValueError`` naming ``where`` when the config does not describe one;
- ``make_player(config, params, *, name) -> jaxgames.player.Player``: the agent that plays
  ``params`` (a tree of :func:`params_like`'s);
- ``read_run(run_dir, *, which) -> (config, params, summary, checkpoint)``: a finished training
  run's config.json and summary.json (dicts), its agent's parameters read through the game's
  own agent loader (``which``: ``"best"`` or ``"latest"``), and which checkpoint they are
  (``best/2950``); a ``ValueError`` with one line when the folder cannot be used, or when the
  summary's evaluation is of other parameters than those read;
- ``card_fields(config, summary) -> dict``: the card's ``description``, ``evaluation`` and
  any count of what it trained on (``hands_trained``, ``games_trained``), from the run's summary;
- ``measure(player, *, baselines, deals, seed) -> dict``: the ``evaluation`` measured again,
  against the ``baselines`` named, over ``deals`` deals (the card's shape);
- ``DEFAULT_DEALS``: the deals ``python -m jaxgames.pretrained --evaluate`` plays by default
  (games, in a game without deals: Hex);
- ``MAX_DEALS``, ``MAX_DEALS_WHY``: the most ``--evaluate`` plays in one run, and why in a few
  words (the memory one batch of them takes, or the hours).

Adding a game: its module here in :data:`HOOKS`, its agents under ``agents/<game>/``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["HOOKS", "hook"]

#: game -> its hook module
HOOKS = {
    "hearts": "jaxgames.pretrained.hearts",
    "hex": "jaxgames.pretrained.hex",
    "holdem": "jaxgames.pretrained.holdem",
    "ten_half": "jaxgames.pretrained.ten_half",
}


def hook(game: str) -> ModuleType:
    """The hook module of ``game``; ValueError when no game of that name has one."""
    if game not in HOOKS:
        raise ValueError(f"no game {game!r} has a hook in jaxgames.pretrained.hooks (games: "
                         f"{', '.join(sorted(HOOKS))})")
    return importlib.import_module(HOOKS[game])
