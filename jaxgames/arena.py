"""Head-to-head evaluation: many games in one jitted batch, seats rotated.

A policy is ``policy(state, key) -> action`` (int32 []), called on one unbatched state; the arena
vmaps it. Policies of imperfect-information games must read only
``env.observe(state, state.current_player)`` (and ``legal_action_mask``).

With P players and P policies, the batch is split into P equal rotations: in rotation r, seat s
is played by policy ``(s + r) % P``, so every policy sits in every seat equally often.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, State

Policy = Callable[[State, jax.Array], jax.Array]


@dataclasses.dataclass(frozen=True)
class ArenaResult:
    mean: np.ndarray          # float64 [num_policies]  mean reward per game
    ci95: np.ndarray          # float64 [num_policies]  half-width of the 95% confidence interval
    returns: np.ndarray       # float32 [num_games, num_policies]  each game's return per policy
    num_games: int

    def __str__(self) -> str:
        return ", ".join(f"policy {i}: {m:+.4f} ± {c:.4f}" for i, (m, c) in enumerate(zip(self.mean, self.ci95)))


def play(env: Env, policies: Sequence[Policy], key: jax.Array, *, num_games: int,
         max_steps: int = 10_000) -> ArenaResult:
    """Play ``num_games`` games (a multiple of the player count) and score each policy."""
    fn = make_play(env, policies, num_games=num_games, max_steps=max_steps)
    returns = np.asarray(fn(key))
    return summarize(returns)


def make_play(env: Env, policies: Sequence[Policy], *, num_games: int, max_steps: int = 10_000):
    """The jitted ``key -> returns [num_games, num_policies]`` behind :func:`play`."""
    num_players = env.num_players
    if len(policies) != num_players:
        raise ValueError(f"{env.id} has {num_players} seats, got {len(policies)} policies")
    if num_games % num_players:
        raise ValueError(f"num_games ({num_games}) must be a multiple of {num_players} seats")
    # seat_policy[g, s]: which policy plays seat s in game g
    rotation = np.repeat(np.arange(num_players), num_games // num_players)
    seat_policy = (np.arange(num_players)[None, :] + rotation[:, None]) % num_players

    def one_game(key, seats):
        init_key, play_key = jax.random.split(key)
        state = env.init(init_key)

        def cond(c):
            state, _, t, _ = c
            return ~(state.terminated | state.truncated) & (t < max_steps)

        def body(c):
            state, k, t, ret = c
            k, k_act, k_step = jax.random.split(k, 3)
            actions = jnp.stack([p(state, k_act) for p in policies])
            mover = jnp.maximum(state.current_player, 0)
            action = actions[seats[mover]]
            state = env.step(state, action, k_step)
            return state, k, t + 1, ret + state.rewards

        ret = jnp.zeros(num_players, jnp.float32)
        state, _, _, ret = jax.lax.while_loop(cond, body, (state, play_key, 0, ret + state.rewards))
        # returns per policy: policy seats[s] collected seat s's return
        return jnp.zeros(num_players, jnp.float32).at[seats].set(ret)

    seats = jnp.asarray(seat_policy, jnp.int32)
    batched = jax.vmap(one_game)

    @jax.jit
    def run(key):
        return batched(jax.random.split(key, num_games), seats)

    return run


def summarize(returns: np.ndarray) -> ArenaResult:
    returns = np.asarray(returns, np.float64)
    n = returns.shape[0]
    mean = returns.mean(0)
    std = returns.std(0, ddof=1) if n > 1 else np.zeros_like(mean)
    return ArenaResult(mean=mean, ci95=1.96 * std / math.sqrt(max(n, 1)),
                       returns=returns.astype(np.float32), num_games=n)
