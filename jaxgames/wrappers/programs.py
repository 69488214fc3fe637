"""The jitted programs a wrapper runs, built once per game configuration and shared.

``programs(game, **options)`` makes the env and jits its reset, step and observe, so every
wrapper of one configuration (two PettingZoo envs in a seed test, N single Gymnasium envs
beside a vector env) traces and compiles them once. Each program consumes the wrapper's key
stream the same way, batched or not, which is what makes a vector env's game ``i`` the same
game as a single env seeded with ``seed + i``:

    reset(key)               -> (state, key)   key -> (key, init key); init
    step(state, action, key) -> (state, key, info)   key -> (key, step key); step
    observe(state, seat)     -> the game's own observe(state, seat)

``info`` is what a wrapper reads after every step without fetching the whole state:
``(current_player, rewards, terminated, truncated, legal_action_mask, illegal)``, where
``illegal`` says the action was illegal (the game then ended with its penalty).
Chance: ``init`` and ``step`` resolve every chance event of a game inside themselves (the core
contract: neither returns a chance turn), drawing on the key the wrapper passes in, so no
agent ever sees a chance player.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

import jaxgames
from jaxgames import rng
from jaxgames.core import CHANCE_PLAYER, Env


class StepInfo(NamedTuple):
    current_player: jax.Array     # int32 []
    rewards: jax.Array            # float32 [num_players]
    terminated: jax.Array         # bool []
    truncated: jax.Array          # bool []
    legal_action_mask: jax.Array  # bool [num_actions]
    illegal: jax.Array            # bool []  the action just played was illegal


class Programs(NamedTuple):
    env: Env
    reset: Any    # key -> (state, key)
    step: Any     # (state, action int32 [], key) -> (state, key, StepInfo)
    observe: Any  # (state, seat int32 []) -> observation
    info: Any     # state -> StepInfo of a fresh state (illegal False)


def _reset(env: Env, key):
    key, init_key = rng.split(key, 2)
    return env.init(init_key), key


def _info(state, illegal) -> StepInfo:
    return StepInfo(state.current_player, state.rewards, state.terminated, state.truncated,
                    state.legal_action_mask, illegal)


def _step(env: Env, state, action, key):
    key, step_key = rng.split(key, 2)
    live = ~(state.terminated | state.truncated)
    safe = jnp.clip(action, 0, env.num_actions - 1)
    illegal = live & ((safe != action) | ~state.legal_action_mask[safe])
    new = env.step(state, action, step_key)
    return new, key, _info(new, illegal)


def build(game: str, **options) -> Programs:
    """Fresh programs for ``jaxgames.make(game, **options)`` (not shared)."""
    env = jaxgames.make(game, **options)
    return Programs(
        env=env,
        reset=jax.jit(functools.partial(_reset, env)),
        step=jax.jit(functools.partial(_step, env)),
        observe=jax.jit(env.observe),
        info=jax.jit(lambda state: _info(state, jnp.bool_(False))),
    )


@functools.lru_cache(maxsize=32)
def _cached(game: str, options: tuple) -> Programs:
    return build(game, **dict(options))


def programs(game: str, **options) -> Programs:
    """The shared programs of one configuration (options with unhashable values: fresh ones)."""
    key = tuple(sorted(options.items()))
    try:
        hash(key)
    except TypeError:
        return build(game, **options)
    return _cached(game, key)


def check_no_chance_turn(current_player: int, game: str) -> int:
    """``current_player`` as a seat; a chance turn here would break the core contract."""
    if current_player == CHANCE_PLAYER:
        raise RuntimeError(f"{game}: init/step returned a chance turn, which the core contract "
                           f"forbids (chance is resolved inside step)")
    return current_player
