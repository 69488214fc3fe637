"""Perfect-information Monte Carlo (PIMC) for imperfect-information games, batched and jitted.

The Monte Carlo player of the Hearts source (Sturtevant & White; GIB's method in bridge): the
player to move deals the cards it cannot see ``num_worlds`` times, consistently with all it has
observed (``env.sample_world(state, mover, key)``), searches each of these perfect-information
worlds, averages its own value of every move over the worlds and plays the best. The source's
imperfect-information expert (IIE) is PIMC over 20 worlds with a max^n search of the current
trick in each:

    search_fn = maxn_action_values(env, depth=4, max_branching=13, value_fn=v, stop=trick_done)
    iie = pimc_policy(env, search_fn, num_worlds=20)

Any search plugs in: ``search_fn(params, world) -> float32 [num_actions]`` gives the mover's
value of each action in one world, -inf for actions it did not search. The mover's legal moves
depend only on what it sees, so they are the same in every world and the average is taken
action by action; an action is -inf when any world left it unsearched.

World w is ``sample_world(state, mover, keys[w])`` with ``keys = jaxgames.rng.split(key,
num_worlds)``; the worlds are searched as one ``vmap`` batch (with max^n, one batched search:
its vmap rule folds the worlds, and an arena's games around them, into a single loop; memory
is that of ``num_worlds`` searches, ``max_branching^(depth-1)`` states each). The policy reads only the mover's
seat, the legal mask and the worlds, and ``sample_world`` reads only what the mover knows, so
it is honest: two states the mover cannot tell apart get the same worlds for a key, hence the
same move (``jaxgames.arena.honesty_check`` measures this; the tests use it).

PIMC's known limits (Frank & Basin 1998, "strategy fusion" and "non-locality": each world's
search assumes it will know the cards from then on) are the method's, not this code's.
"""

from __future__ import annotations

from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.core import Env, Policy, State

Array = jax.Array
PRNGKey = jax.Array
#: ``search_fn(params, world) -> float32 [num_actions]``: the mover's value of each action
SearchFn = Callable[[Any, State], Array]


@chex.dataclass(frozen=True)
class PimcOutput:
    """What :func:`pimc_search` returns for one position (leading axes when vmapped)."""

    action: Array         # int32 []        action of highest mean value (ties: lowest id; 0 if none)
    action_values: Array  # float32 [A]     mean over worlds of the mover's value; -inf where not searched
    world_values: Array   # float32 [W, A]  the search's values in each world


#: how a search's best action is picked among equal values: the lowest action id, or the highest
TIES = ("lowest", "highest")


def check_ties(ties: str) -> str:
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
    return ties


def best_of(values: Array, ties: str = "lowest") -> Array:
    """int32 []: the index of the largest of ``values`` [A], the lowest or the highest index
    among equal ones (``ties``, static)."""
    if check_ties(ties) == "lowest":
        return jnp.argmax(values).astype(jnp.int32)
    return (values.shape[-1] - 1 - jnp.argmax(values[::-1])).astype(jnp.int32)


def pimc_search(env: Env, state: State, key: PRNGKey, search_fn: SearchFn, *, num_worlds: int,
                params: Any = None, ties: str = "lowest") -> PimcOutput:
    """Search ``num_worlds`` sampled worlds of the mover's view and average its action values.

    Args:
      env: an imperfect-information env with ``sample_world``.
      state: the real position (one game; ``jax.vmap`` this function for a batch). Only what
        its mover may see is used.
      key: consumed: the worlds' deals.
      search_fn: ``(params, world) -> float32 [num_actions]``, e.g.
        :func:`jaxgames.search.maxn.maxn_action_values`.
      num_worlds: worlds sampled (static, >= 1).
      params: passed to ``search_fn``.
      ties: the action among equal averages: the ``"lowest"`` id or the ``"highest"``.
    """
    num_worlds = _check(env, num_worlds)
    mover = state.current_player
    worlds = jax.vmap(lambda k: env.sample_world(state, mover, k))(rng.split(key, num_worlds))
    values = jax.vmap(lambda w: jnp.asarray(search_fn(params, w), jnp.float32))(worlds)   # [W, A]
    chex.assert_shape(values, (num_worlds, env.num_actions))
    mean = jnp.where(state.legal_action_mask, values.mean(0), -jnp.inf)
    return PimcOutput(action=best_of(mean, ties), action_values=mean, world_values=values)


def pimc_action_values(env: Env, state: State, key: PRNGKey, search_fn: SearchFn, *, num_worlds: int,
                       params: Any = None) -> Array:
    """float32 [num_actions]: the mover's value of each action averaged over sampled worlds
    (-inf where not searched); see :func:`pimc_search`."""
    return pimc_search(env, state, key, search_fn, num_worlds=num_worlds, params=params).action_values


def pimc_policy(env: Env, search_fn: SearchFn, *, num_worlds: int, ties: str = "lowest") -> Policy:
    """An arena policy ``policy(params, state, key) -> action`` (int32 []): the PIMC move, with
    ``params`` passed to ``search_fn`` and ``key`` dealing the worlds; ``ties`` as
    :func:`pimc_search`'s."""
    _check(env, num_worlds)
    check_ties(ties)

    def policy(params, state, key):
        return pimc_search(env, state, key, search_fn, num_worlds=num_worlds, params=params, ties=ties).action

    return policy


def _check(env: Env, num_worlds: int) -> int:
    if env.perfect_information:
        raise ValueError(f"PIMC samples hidden information; {env.id!r} is a perfect-information game")
    if isinstance(num_worlds, (bool, np.bool_)) or not isinstance(num_worlds, (int, np.integer)) \
            or num_worlds < 1:
        raise ValueError(f"num_worlds must be an integer >= 1, got {num_worlds!r}")
    return int(num_worlds)
