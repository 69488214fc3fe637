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

:func:`one_of` makes one player of several: its parameter is the index of the one that plays,
so one compiled arena plays a player against each of a table of baselines in turn (compiling an
arena per baseline compiles the player's own policy, a search or a network, each time).
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp

from jaxgames.core import Policy

__all__ = ["Player", "RunAgent", "jitted", "one_of"]


@dataclasses.dataclass(frozen=True)
class Player:
    """A player: its name, its arena policy and the parameters the policy is called with."""

    name: str                          # how the player is shown (tables, the terminal, records)
    policy: Policy                     # policy(params, state, key) -> int32 []
    params: Any = None                 # the policy's first argument (None: a parameter-free bot)
    probs: Callable[..., Any] | None = None  # probs(params, state, key) -> float32 [A], if any
    honest: bool = True                # False: reads cards its seat may not see, by design


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunAgent(Player):
    """A trained agent: a :class:`Player` with the game it plays and the run folder it was read
    from (``run_dir``; ``checkpoint`` the step folder read, ``step`` its update: all three None
    for an agent not read from a run folder, a shipped one). Unpacks as
    ``env, policy, params = agent``; :meth:`act` plays one move. Each game's ``agent.Agent``."""

    env: Any
    run_dir: pathlib.Path | None = None
    checkpoint: pathlib.Path | None = None
    step: int | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.env, self.policy, self.params))

    def compiled_policy(self) -> Callable[..., Any]:
        """``jax.jit(policy)``, one per policy in a process (a game may keep its own)."""
        return jitted(self.policy)

    def act(self, state, key: jax.Array | None = None) -> int:
        """The agent's move in ``state`` (a state of ``env``, the agent to move), a Python int."""
        key = jax.random.key(0) if key is None else key
        return int(self.compiled_policy()(self.params, state, key))


@functools.lru_cache(maxsize=None)
def jitted(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``jax.jit(fn)``, one per function in a process: an agent's policy and a play session's
    step compile once for every game the process plays (each compile is seconds of a wait)."""
    return jax.jit(fn)


def one_of(players: Sequence[Player]) -> Player:
    """One player that plays ``players[params]`` (``params``: an int32 index), each with its own
    parameters: ``play(env, [agent, one_of(table)], params=[agent_params, jnp.int32(i)])`` is
    the agent against ``table[i]``, one compiled arena for every ``i`` (an unbatched index under
    ``vmap`` keeps ``lax.switch`` a real branch: only the chosen player is computed). It has
    ``probs`` when every player has them, and is honest when every player is. The same players
    give the same (cached) player, so an arena cached per player compiles once."""
    players = tuple(players)
    if not players or not all(isinstance(p, Player) for p in players):
        raise ValueError(f"one_of needs one Player or more, got {players!r}")
    return _one_of(players)


@functools.lru_cache(maxsize=None)
def _one_of(players: tuple[Player, ...]) -> Player:
    def switch(fns, params, state, key):
        return jax.lax.switch(jnp.asarray(params, jnp.int32), fns, state, key)

    policy = functools.partial(switch, tuple(functools.partial(p.policy, p.params) for p in players))
    probs = None
    if all(p.probs is not None for p in players):
        probs = functools.partial(switch, tuple(functools.partial(p.probs, p.params) for p in players))
    return Player(name="one of " + ", ".join(p.name for p in players), policy=policy, probs=probs,
                  honest=all(p.honest for p in players))
