"""PettingZoo AEC env of any jaxgames game: ``env(game, render_mode=None, **options)``.

    from jaxgames.wrappers.pettingzoo import env
    aec = env("hex", board_size=5)       # options as jaxgames.make takes them

Agents ``player_0 .. player_{n-1}`` are the game's seats. Observation: a dict with
``"observation"``, the game's own ``observe(state, seat)`` as NumPy (an array, or a dict of
the fields of the game's Observation dataclass), and ``"action_mask"``, int8 [num_actions],
the legal actions of that agent (all zeros for an agent not to move and once the game is
over). Spaces are built once per agent. Rewards: the game's rewards of each step, accumulated
per agent until it acts (``last()``), as PettingZoo expects. An episode is one game as the
game defines it (a hand of hold'em, a hand or a game to ``target_score`` of Hearts).

Illegal actions raise ValueError naming the agent's legal actions, and change nothing (the
game itself would end the game with a penalty: through this wrapper a mistake is a bug to see,
not a lost game). ``reset(seed=s)`` starts a JAX key stream at ``jax.random.key(s)``; every
step draws from it, so a seed fixes the whole episode; ``reset()`` continues the stream.
``reset(options={"state": s})`` starts from a given state of the game (a hand-made position);
other options keys are ignored. ``render_mode="ansi"``: ``render()`` returns the game's text
picture. Step and observe are jitted once per game configuration (:mod:`programs`).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxgames.core import as_key
from jaxgames.wrappers import programs as P
from jaxgames.wrappers.actions import as_action
from jaxgames.wrappers.requires import require
from jaxgames.wrappers.spaces import action_mask_space, observation_space, to_numpy
from jaxgames.wrappers.text import render_text

_pz = require("pettingzoo")
gym_spaces = require("gymnasium").spaces

__all__ = ["JaxgamesAEC", "env"]


def env(game: str, render_mode: str | None = None, **options) -> "JaxgamesAEC":
    """The AEC env of ``jaxgames.make(game, **options)``."""
    return JaxgamesAEC(game, render_mode=render_mode, **options)


class JaxgamesAEC(_pz.AECEnv):
    metadata = {"render_modes": ["ansi"], "name": "jaxgames_v0", "is_parallelizable": False}

    def __init__(self, game: str, render_mode: str | None = None, **options):
        super().__init__()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self._programs = P.programs(game, **options)
        self.game = self._programs.env
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "name": f"jaxgames_{self.game.id}_v0"}
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self._seats = {a: i for i, a in enumerate(self.possible_agents)}
        spec = self.game.observation_spec
        # one space object per agent, built once: PettingZoo seeds each agent's space apart
        self.observation_spaces = {a: gym_spaces.Dict({"observation": observation_space(spec),
                                                       "action_mask": action_mask_space(self.game.num_actions)})
                                   for a in self.possible_agents}
        self.action_spaces = {a: gym_spaces.Discrete(self.game.num_actions) for a in self.possible_agents}
        self._key = None
        self._state = None

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    @property
    def state_of_game(self) -> Any:
        """The game's current state (a jaxgames State), for users who want the whole position."""
        return self._state

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._key = as_key(seed, f"{self.game.id} reset(seed=...)")
        elif self._key is None:  # unseeded: fresh entropy, as Gymnasium does
            self._key = jax.random.key(int(np.random.default_rng().integers(2**32)))
        state = (options or {}).get("state")
        if state is None:
            state, self._key = self._programs.reset(self._key)
        else:
            state = self._check_state(state)
        self._state = state
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._read(jax.device_get(self._programs.info(state)))
        if self._over:  # a finished state was given: every agent is done at once
            self.terminations = {a: bool(self._last.terminated) for a in self.agents}
            self.truncations = {a: bool(self._last.truncated) for a in self.agents}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = as_action(action, f"{self.game.id} ({agent})")
        mask = self._last.legal_action_mask
        if not (0 <= action < self.game.num_actions and mask[action]):
            legal = np.flatnonzero(mask).tolist()
            raise ValueError(f"{self.game.id}: action {int(action)} is illegal for {agent}; "
                             f"its legal actions are {legal}")
        self._cumulative_rewards[agent] = 0.0
        self._state, self._key, info = self._programs.step(self._state, action, self._key)
        self._read(jax.device_get(info))
        self.rewards = {a: float(self._last.rewards[self._seats[a]]) for a in self.agents}
        if self._over:
            self.terminations = {a: bool(self._last.terminated) for a in self.agents}
            self.truncations = {a: bool(self._last.truncated) for a in self.agents}
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict:
        seat = self._seats[agent]
        obs = jax.device_get(self._programs.observe(self._state, np.int32(seat)))
        to_move = not self._over and seat == int(self._last.current_player)
        mask = self._last.legal_action_mask if to_move else np.zeros(self.game.num_actions, bool)
        return {"observation": to_numpy(obs), "action_mask": mask.astype(np.int8)}

    def render(self) -> str | None:
        if self.render_mode is None:
            require("gymnasium").logger.warn("render() called without render_mode='ansi'")
            return None
        return render_text(self.game, self._state)

    def close(self) -> None:
        pass

    # -- internals ------------------------------------------------------------------------------

    def _read(self, info: P.StepInfo) -> None:
        """Keep the step's host-side summary; the next agent is the game's player to move."""
        self._last = info
        self._over = bool(info.terminated | info.truncated)
        seat = P.check_no_chance_turn(int(info.current_player), self.game.id)
        self.agent_selection = self.possible_agents[seat]

    def _check_state(self, state: Any) -> Any:
        expected = jax.tree_util.tree_structure(self.game._abstract_state)
        if jax.tree_util.tree_structure(state) != expected:
            raise ValueError(f"reset(options={{'state': ...}}) takes one state of {self.game.id} "
                             f"(from its init, step or position builders)")
        if any(np.shape(a) != s.shape for a, s in zip(jax.tree_util.tree_leaves(state),
                                                     jax.tree_util.tree_leaves(self.game._abstract_state))):
            raise ValueError(f"reset(options={{'state': ...}}): the state's shapes are not one "
                             f"unbatched state of {self.game.id} with these options")
        return jax.tree_util.tree_map(jax.numpy.asarray, state)
