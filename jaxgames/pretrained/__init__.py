"""Trained agents shipped with jaxgames as package data: play against one from a fresh clone.

    from jaxgames import pretrained
    pretrained.available()                  # the cards: what each agent is and what it beats
    agent = pretrained.load("holdem")       # a jaxgames.player.Player (the game's default agent)
    pretrained.card("holdem", "alphaholdem-small")["evaluation"]

    python -m jaxgames.pretrained                                   # list, with their strength
    python -m jaxgames.pretrained --evaluate holdem alphaholdem-small --deals 2000
    python -m jaxgames.pretrained.export --game holdem --run runs/holdem/<run> --name NAME \\
        --command "python -m train.holdem ..."                    # ship a finished run's agent

Each agent is ``agents/<game>/<name>/``: ``params.npz`` (the parameters, no pickle; written and
read by ``jaxgames.checkpoints``) and ``card.json`` (:mod:`jaxgames.pretrained.card`: the run's
config, command, commit, CPU, training time, evaluation against the baselines with 95%
intervals, and the parameter file's sha256, checked at every load). Every expected failure is
a :class:`PretrainedError` (a ``ValueError``), one line naming the file. docs/pretrained.md
lists the agents.
"""

from jaxgames.pretrained.card import PretrainedError
from jaxgames.pretrained.store import AGENTS, available, card, games, load, names

__all__ = ["AGENTS", "PretrainedError", "available", "card", "games", "load", "names"]
