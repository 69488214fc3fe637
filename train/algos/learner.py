"""The one shape every learner in ``train/algos`` has.

``make(cfg, env, ...)`` returns a :class:`Learner`: ``init(key) -> carry`` and a pure,
jittable ``update(carry, key) -> (carry, metrics)`` for the chunked driver, and the policy it
trains as an arena policy ``policy(params, state, key) -> action`` with ``params(carry)``
picking what that policy needs out of the carry (also what ``best/`` checkpoints keep).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax

from jaxgames.core import Policy


@dataclasses.dataclass(frozen=True)
class Learner:
    init: Callable[[jax.Array], Any]
    update: Callable[[Any, jax.Array], tuple[Any, Any]]
    policy: Policy
    params: Callable[[Any], Any]
