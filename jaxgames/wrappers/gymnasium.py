"""The one-player games as Gymnasium envs: ``JaxgamesEnv`` and the jitted ``JaxgamesVectorEnv``.

Importing this module registers ``jaxgames/2048-v0`` and ``jaxgames/TenHalf-v0``:

    import gymnasium as gym
    import jaxgames.wrappers.gymnasium            # registers the ids
    env = gym.make("jaxgames/2048-v0")             # options: gym.make(..., variant="2584")
    envs = gym.make_vec("jaxgames/2048-v0", num_envs=256, vectorization_mode="vector_entry_point")

(``gym.make("jaxgames.wrappers.gymnasium:jaxgames/2048-v0")`` imports it for you.)

Observation: the game's own ``observe`` as NumPy; action: ``Discrete(num_actions)``; reward:
the game's reward of the step (float). ``info["action_mask"]`` (int8 [num_actions]) gives the
legal actions, ``info["illegal_action"]`` whether the action just taken was illegal. An
illegal action gets the game's own answer: the episode ends at once with the game's
``illegal_action_penalty`` (-1), the board left as it was (the vector env runs inside one
jitted call, where raising is impossible, and the single env matches it). ``reset(seed=s)``
starts a JAX key stream at ``jax.random.key(s)``; ``reset()`` continues it.
``reset(options={"state": s})`` starts from a given state (single env).

The vector env steps N games in one jitted, vmapped call with Gymnasium's default
``NEXT_STEP`` autoreset: the step after a game ends resets that game (its action ignored,
reward 0). ``reset(seed=s)`` seeds game ``i`` with ``s + i``, as ``SyncVectorEnv`` does, so
its games are exactly those of ``SyncVectorEnv`` over single envs given the same actions.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import as_key
from jaxgames.wrappers import programs as P
from jaxgames.wrappers.actions import as_action
from jaxgames.wrappers.requires import require
from jaxgames.wrappers.spaces import observation_space, to_numpy
from jaxgames.wrappers.text import render_text

gym = require("gymnasium")

__all__ = ["IDS", "JaxgamesEnv", "JaxgamesVectorEnv"]

#: registered id -> jaxgames game
IDS = {"jaxgames/2048-v0": "2048", "jaxgames/TenHalf-v0": "ten_half"}


def _one_player(game: str, options: dict) -> P.Programs:
    programs = P.programs(game, **options)
    if programs.env.num_players != 1:
        raise ValueError(f"{game} has {programs.env.num_players} players: a Gymnasium env is one "
                         f"agent's; use jaxgames.wrappers.pettingzoo.env({game!r})")
    return programs


def _with_obs(programs: P.Programs, state, key, info=None):
    info = programs.info(state) if info is None else info
    return state, key, info, programs.env.observe(state, 0)


@functools.lru_cache(maxsize=32)
def _single(programs: P.Programs) -> tuple[Any, Any]:
    """``(reset, step)`` of one env, each one jitted call that also observes: a single env
    step is one dispatch and one transfer, not two of each (stepping and observing apart),
    and every env of one configuration shares them (N envs of a SyncVectorEnv compile once)."""
    reset = jax.jit(lambda key: _with_obs(programs, *programs.reset(key)))
    step = jax.jit(lambda state, action, key: _with_obs(programs, *programs.step(state, action, key)))
    return reset, step


def _info(mask, illegal) -> dict:
    return {"action_mask": np.asarray(mask, np.int8), "illegal_action": np.asarray(illegal, bool)}


class JaxgamesEnv(gym.Env):
    """One game of a one-player jaxgames game (``"2048"``, ``"ten_half"``) as a ``gymnasium.Env``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, game: str = "2048", render_mode: str | None = None, **options):
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self._programs = _one_player(game, options)
        self._reset, self._step = _single(self._programs)
        self.game = self._programs.env
        self.render_mode = render_mode
        self.observation_space = observation_space(self.game.observation_spec)
        self.action_space = gym.spaces.Discrete(self.game.num_actions)
        self._key = None
        self._state = None

    @property
    def state_of_game(self) -> Any:
        """The game's current state (a jaxgames State)."""
        return self._state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._key = as_key(seed, f"{self.game.id} reset(seed=...)")
        elif self._key is None:  # unseeded: from Gymnasium's own (randomly seeded) generator
            self._key = jax.random.key(int(self.np_random.integers(2**32)))
        state = (options or {}).get("state")
        if state is None:
            self._state, self._key, info, obs = self._reset(self._key)
        elif jax.tree_util.tree_structure(state) != jax.tree_util.tree_structure(self.game._abstract_state):
            raise ValueError(f"reset(options={{'state': ...}}) takes one state of {self.game.id}")
        else:
            self._state = state
            _, _, info, obs = _with_obs(self._programs, state, self._key)
        info, obs = jax.device_get((info, obs))
        return to_numpy(obs), _info(info.legal_action_mask, False)

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = as_action(action, self.game.id)
        self._state, self._key, info, obs = self._step(self._state, action, self._key)
        info, obs = jax.device_get((info, obs))
        return (to_numpy(obs), float(info.rewards[0]), bool(info.terminated), bool(info.truncated),
                _info(info.legal_action_mask, info.illegal))

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode='ansi'")
            return None
        return render_text(self.game, self._state)


# -- the vector env --------------------------------------------------------------------------------


def _vector_step(programs: P.Programs, state, action, key, autoreset):
    """One game's NEXT_STEP step: reset it if it ended last step, else play ``action``."""
    stepped, step_key, info = programs.step(state, action, key)
    fresh, reset_key, fresh_info, _ = _with_obs(programs, *programs.reset(key))
    pick = lambda a, b: jax.tree_util.tree_map(lambda x, y: jnp.where(autoreset, x, y), a, b)  # noqa: E731
    state = pick(fresh, stepped)
    return state, pick(reset_key, step_key), pick(fresh_info, info), programs.env.observe(state, 0)


class JaxgamesVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of a one-player jaxgames game stepped in one jitted, vmapped call."""

    metadata = {"render_modes": [], "autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, game: str = "2048", num_envs: int = 16, **options):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self._programs = _one_player(game, options)
        self.game = self._programs.env
        self.num_envs = int(num_envs)
        self.render_mode = None
        self.single_observation_space = observation_space(self.game.observation_spec)
        self.single_action_space = gym.spaces.Discrete(self.game.num_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        prog = self._programs
        self._vreset = jax.jit(jax.vmap(lambda k: _with_obs(prog, *prog.reset(k))))
        self._vstep = jax.jit(jax.vmap(lambda s, a, k, r: _vector_step(prog, s, a, k, r)))
        self._keys = None
        self._state = None
        self._autoreset = np.zeros(self.num_envs, bool)

    def reset(self, *, seed: int | list | None = None, options: dict | None = None):
        if options:
            raise ValueError("the vector env takes no reset options")
        if seed is None and self._keys is None:
            seed = int(np.random.default_rng().integers(2**32 - self.num_envs))
        if seed is not None:
            seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, (int, np.integer)) else list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"reset(seed=[...]) takes {self.num_envs} seeds, got {len(seeds)}")
            if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < 2**32
                       for x in seeds):
                raise ValueError(f"seeds are integers 0 .. 2**32 - 1, got {seeds}")
            self._keys = jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32))
        self._state, self._keys, info, obs = self._vreset(self._keys)
        self._autoreset = np.zeros(self.num_envs, bool)
        info, obs = jax.device_get((info, obs))
        return to_numpy(obs), self._infos(info.legal_action_mask, np.zeros(self.num_envs, bool))

    def step(self, actions):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"step takes {self.num_envs} integer actions, got an array of "
                             f"{actions.dtype} {list(actions.shape)}")
        self._state, self._keys, info, obs = self._vstep(
            self._state, actions.astype(np.int32), self._keys, self._autoreset)
        info, obs = jax.device_get((info, obs))
        terminated, truncated = np.asarray(info.terminated), np.asarray(info.truncated)
        self._autoreset = terminated | truncated
        return (to_numpy(obs), np.asarray(info.rewards[:, 0], np.float64), terminated, truncated,
                self._infos(info.legal_action_mask, info.illegal))

    def _infos(self, mask, illegal) -> dict:
        every = np.ones(self.num_envs, bool)  # every game reports both keys (Gymnasium's "_key")
        return {**_info(mask, illegal), "_action_mask": every, "_illegal_action": every.copy()}


for _id, _game in IDS.items():
    if _id not in gym.registry:  # a second import (a reload) registers nothing new
        gym.register(id=_id, entry_point=f"{__name__}:JaxgamesEnv", kwargs={"game": _game},
                     vector_entry_point=f"{__name__}:JaxgamesVectorEnv")
