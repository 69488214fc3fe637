"""The one game loop: play policies from a state to the end of the game.

Every loop of the project that plays games (the arena, evaluation, benchmarks, UCT's default
playout through :meth:`jaxgames.core.Env.playout_returns`) is :func:`rollout`, or its batched
form for several policies in the seats, :func:`rollout_seated`; keeping one loop keeps one
meaning of "a game's returns" and of how chance keys are drawn, which duplicate play relies on.
"""

from __future__ import annotations

from typing import Any, Sequence

import chex
import jax
import jax.numpy as jnp

from jaxgames import rng
from jaxgames.core import Array, Env, Policy, PRNGKey, State, _select

__all__ = ["Rollout", "rollout", "rollout_seated"]


@chex.dataclass(frozen=True)
class Rollout:
    state: State        # the final state
    returns: Array      # float32 [num_players]  rewards summed from the start state on
    steps: Array        # int32 []  moves played


def rollout(env: Env, state: State, policy: Policy, key: PRNGKey, *, params: Any = None,
            max_steps: int | None = None, chance_key: PRNGKey | None = None) -> Rollout:
    """Play ``policy`` from ``state`` to the end of the game, or ``max_steps`` moves.

    One unbatched game (vmap it); a ``lax.while_loop``, so games of any length cost only the
    moves they play. ``policy(params, state, key)`` moves for whoever is to play (a policy
    that seats several players reads ``state.current_player``). With ``chance_key`` the chance
    of the move at ``step_count`` t is ``fold_in(chance_key, t)`` whatever the players do (the
    arena shares it across seat rotations: duplicate play); otherwise it comes from ``key``.
    The start state's own rewards are not counted. Every game loop of the project is this one
    (:func:`rollout_seated` is its batched form for several policies in the seats).
    """
    limit = max_steps if max_steps is not None else (env.max_steps or 100_000)

    def cond(carry):
        state, _, t, _ = carry
        return ~(state.terminated | state.truncated) & (t < limit)

    def body(carry):
        state, k, t, ret = carry
        k, k_act, k_chance = rng.split(k, 3)
        if chance_key is not None:
            k_chance = jax.random.fold_in(chance_key, state.step_count)
        action = policy(params, state, k_act)
        state = env.step(state, action, k_chance)
        return state, k, t + 1, ret + state.rewards

    ret = jnp.zeros(env.num_players, jnp.float32)
    state, _, steps, ret = jax.lax.while_loop(cond, body, (state, key, jnp.int32(0), ret))
    return Rollout(state=state, returns=ret, steps=steps)


def rollout_seated(env: Env, states: State, policies: Sequence[Policy], seats: Array, keys: PRNGKey, *,
                   params: Sequence[Any], max_steps: int | None = None,
                   chance_keys: PRNGKey | None = None) -> Rollout:
    """:func:`rollout` of a batch of games whose seats several policies hold, each policy
    evaluated only on the games where it is to move.

    ``states`` [G] (batched), ``seats`` int32 [G, num_players] (the policy in each seat of
    each game), ``keys`` [G] and ``chance_keys`` [G] (or None) as :func:`rollout`'s, one per game;
    ``params[i]`` are policy ``i``'s. Every game gets what ``vmap`` of :func:`rollout` with the
    policy ``policies[seats[g, state.current_player]]`` gives it: the same moves from the same
    keys, the same chance, the same returns and step counts (tested). What differs is the work:
    under ``vmap`` every policy would decide for every game at every step and a select keep
    the mover's, so a match of two searches paid for both at each move. Here the games where
    policy ``i`` moves are gathered, in chunks of ``ceil(G / len(policies))``, as many chunks
    as it has movers that step; with two policies rotated over the seats of a game whose
    players alternate (Hex), each policy searches exactly half the batch.
    """
    num_games = seats.shape[0]
    limit = max_steps if max_steps is not None else (env.max_steps or 100_000)
    chunk = -(-num_games // len(policies))
    chunks = -(-num_games // chunk)

    def decide(states, act_keys, live):
        if len(policies) == 1:
            return jax.vmap(policies[0], in_axes=(None, 0, 0))(params[0], states, act_keys)
        mover = jnp.take_along_axis(seats, (states.current_player % seats.shape[1])[:, None], axis=1)[:, 0]
        actions = jnp.zeros(num_games, jnp.int32)
        for i, policy in enumerate(policies):
            moves = live & (mover == i)
            count = moves.sum(dtype=jnp.int32)
            # the movers first, then the rest: chunk j takes places j*chunk .. (j+1)*chunk - 1
            order = jnp.argsort(~moves, stable=True)
            order = jnp.concatenate([order, order[: chunks * chunk - num_games]])

            def one_chunk(j, actions, i=i, policy=policy, order=order, count=count):
                idx = jax.lax.dynamic_slice(order, (j * chunk,), (chunk,))
                picked = jax.tree_util.tree_map(lambda x: x[idx], (states, act_keys))
                a = jax.vmap(policy, in_axes=(None, 0, 0))(params[i], *picked)
                if not jnp.issubdtype(a.dtype, jnp.integer):   # the contract env.step enforces
                    raise TypeError(f"{env.id}: actions are integers, got an array of {a.dtype} "
                                    f"from policy {i}")
                keep = j * chunk + jnp.arange(chunk) < count
                return actions.at[jnp.where(keep, idx, num_games)].set(a, mode="drop")

            actions = jax.lax.fori_loop(0, (count + chunk - 1) // chunk, one_chunk, actions)
        return actions

    def cond(carry):
        states, _, t, _, _ = carry
        return jnp.any(~(states.terminated | states.truncated)) & (t < limit)

    def body(carry):
        states, k, t, ret, steps = carry
        live = ~(states.terminated | states.truncated)
        k, k_act, k_chance = jax.vmap(lambda key: rng.split(key, 3), out_axes=1)(k)
        if chance_keys is not None:
            k_chance = jax.vmap(jax.random.fold_in)(chance_keys, states.step_count)
        actions = decide(states, k_act, live)
        stepped = jax.vmap(env.step)(states, actions, k_chance)
        states = jax.vmap(_select)(live, stepped, states)
        ret = ret + jnp.where(live[:, None], stepped.rewards, 0.0)
        return states, k, t + 1, ret, steps + live

    ret = jnp.zeros((num_games, env.num_players), jnp.float32)
    steps = jnp.zeros(num_games, jnp.int32)
    states, _, _, ret, steps = jax.lax.while_loop(cond, body, (states, keys, jnp.int32(0), ret, steps))
    return Rollout(state=states, returns=ret, steps=steps)
