"""A player: the one type for whoever takes a seat, a baseline bot, a trained agent, the
computer across from a person in ``python -m jaxgames.<game>.play``.

What every game needs of a player is a name to show and an arena policy with its parameters:
``policy(params, state, key) -> action`` (:data:`jaxgames.core.Policy`). The parameters stay
an argument of the policy, not closed over, so one compiled arena evaluates every checkpoint
of a run; a parameter-free bot has ``params=None``. ``policy`` is the plain function: whoever
calls it on the host (a terminal game) jits it, and ``jaxgames.arena`` compiles it inside its
own program.

Two fields only some players have, optional so the others leave them out:

* ``probs(params, state, key) -> float [num_actions]``: the action probabilities ``policy``
  samples, where a player exposes them (hold'em's local best response tracks the player's
  range from them by Bayes' rule);
* ``honest``: False for a player that reads what its seat may not see by design (Hearts' PIE
  searches the real cards); the arena's honesty check measures whether the others do.

Frozen and, with hashable ``params`` (None, say), hashable: arenas cached per player compile
once, and two players built from the same arguments are equal.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxgames.core import Policy

__all__ = ["Player"]


@dataclasses.dataclass(frozen=True)
class Player:
    """A player: its name, its arena policy and the parameters the policy is called with."""

    name: str                          # how the player is shown (tables, the terminal, records)
    policy: Policy                     # policy(params, state, key) -> int32 []
    params: Any = None                 # the policy's first argument (None: a parameter-free bot)
    probs: Callable[..., Any] | None = None  # probs(params, state, key) -> float32 [A], if any
    honest: bool = True                # False: reads cards its seat may not see, by design
