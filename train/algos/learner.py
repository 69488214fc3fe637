"""The one shape every learner in ``train/algos`` has.

``make(cfg, env, ...)`` returns a :class:`Learner`: ``init(key) -> carry`` and a pure,
jittable ``update(carry, key) -> (carry, metrics)`` for the chunked driver, and the policy it
trains as an arena policy ``policy(params, state, key) -> action`` with ``params(carry)``
picking what that policy needs out of the carry (also what ``best/`` checkpoints keep).

One style for every learner: its functions (``init``, ``update``, ``policy`` and what they
call) are module-level and pure, their first argument a frozen dataclass of the learner's
static pieces (config, env, the network's functions, optimizer: its ``Parts``), and ``make``
returns them bound with ``functools.partial(fn, parts)``. Module-level functions can be
imported and tested alone, without ``make``; the static pieces are one frozen, hashable
object rather than a closure's free variables, so what a jitted update depends on is in plain
sight and jit caches per learner; and it is the shape of mctx's policies (pure functions,
their static arguments bound).
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
