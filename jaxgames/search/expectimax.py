"""Expectimax over a game with a separate chance step (2048 and its kin), batched and jitted.

Depth counts max layers: depth 1 = greedy on ``reward + V(afterstate)``; depth 2 = max ->
chance over every outcome (2048: every empty cell x {small 0.9, big 0.1}) -> max on
``reward + V``; and so on. The tree is unrolled at trace time (depth is static), every layer a
``vmap`` over its children, so a whole search is one fused XLA program with no Python in it.

The game is given as three pure functions on one position (``ExpectimaxGame``); positions
with no legal move are worth 0 (the game is over: nothing more to earn). :func:`for_env` builds
them from any :class:`jaxgames.core.Env` with a chance step (positions are States, through
``afterstate``/``chance_outcomes``/``apply_chance``); a game may also hand in a faster
position type of its own (2048 searches raw boards: ``jaxgames.game2048.players.search_game``,
tested equal to the generic path).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class ExpectimaxGame:
    # position -> (afterstates [A, ...], rewards float32 [A], legal bool [A])
    expand: Callable[[Array], tuple[Array, Array, Array]]
    # afterstate -> (outcomes int32 [K], probs float32 [K])
    chance: Callable[[Array], tuple[Array, Array]]
    # (afterstate, outcome) -> position
    apply: Callable[[Array, Array], Array]


def for_env(env) -> ExpectimaxGame:
    """The search game of any single-agent Env with a chance step; positions are States and
    ``value`` is called on afterstates (States with ``current_player == CHANCE_PLAYER``)."""
    if not env.has_chance_step:
        raise ValueError(f"{env.id} exposes no chance step (afterstate/chance_outcomes/apply_chance)")
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)

    def expand(state):
        after, reward = jax.vmap(lambda a: env.afterstate(state, a))(actions)
        # the contract's terminal mask is all True: a finished game has no move here
        legal = state.legal_action_mask & ~(state.terminated | state.truncated)
        return after, reward, legal

    return ExpectimaxGame(expand=expand, chance=env.chance_outcomes, apply=env.apply_chance)


def action_values(game: ExpectimaxGame, value: Callable[[Array], Array], position: Array,
                  depth: int) -> tuple[Array, Array]:
    """(Q float32 [A], legal bool [A]) of one position: reward + expectimax value below."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    after, reward, legal = game.expand(position)
    below = jax.vmap(lambda a: _chance_value(game, value, a, depth - 1))(after)
    return reward.astype(jnp.float32) + below, legal


def best_action(game: ExpectimaxGame, value: Callable[[Array], Array], position: Array,
                depth: int) -> Array:
    """int32 []: the legal action of highest expectimax value (0 if none is legal)."""
    q, legal = action_values(game, value, position, depth)
    return jnp.argmax(jnp.where(legal, q, -jnp.inf)).astype(jnp.int32)


def _max_value(game, value, position, depth):
    q, legal = action_values(game, value, position, depth)
    return jnp.where(legal.any(), jnp.max(jnp.where(legal, q, -jnp.inf)), 0.0)


def _chance_value(game, value, afterstate, depth):
    if depth == 0:
        return value(afterstate)
    outcomes, probs = game.chance(afterstate)
    children = jax.vmap(lambda o: game.apply(afterstate, o))(outcomes)
    v = jax.vmap(lambda p: _max_value(game, value, p, depth))(children)
    # zero-probability outcomes (occupied cells) may hold garbage positions: mask, don't weigh
    return jnp.sum(jnp.where(probs > 0, probs * v, 0.0))
