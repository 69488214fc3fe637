"""Tabular Monte Carlo control, batched and jitted (Sutton & Barto ch. 5; the source's §4.6).

* On-policy first-visit ε-greedy MC control: episodes follow ε-greedy(Q); Q(s, a) is the average
  of the first-visit returns of (s, a).
* Off-policy MC control with weighted importance sampling: episodes follow a uniformly random
  behaviour policy; the target policy is greedy(Q); each episode is walked backwards,
  ``G ← γG + r``, ``C(s,a) += W``, ``Q(s,a) += W/C(s,a) · (G − Q(s,a))``, stopping at the first
  step whose action differs from the target's, else ``W ← W / b(a|s)``.

Each ``update`` plays ``episodes_per_update`` episodes in parallel (``vmap`` over a fixed-length
``lax.scan``) with the policy of the start of the update, then folds them all in with one
scatter-add. Averages are kept as sums (returns, weights), so one batched fold equals the
source's episode-by-episode incremental updates applied in sequence, except that the
behaviour/target policy is refreshed once per update rather than after every episode.
In the off-policy backward pass the "action differs from the target's" test uses Q with the
episode's own update applied, as the source's loop does.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import chex
import jax
import jax.numpy as jnp

from jaxgames import rng
from jaxgames.core import Env, State
from train.algos.learner import Learner
from train.common.mesh import shard_batch


@chex.dataclass(frozen=True)
class MCCarry:
    """Sufficient statistics of the action values; Q = total / weight (0 where weight is 0)."""

    total: chex.Array   # float32 [num_states, num_actions]  Σ return (on-policy) or Σ W·G (off-policy)
    weight: chex.Array  # float32 [num_states, num_actions]  visit count (on-policy) or C = Σ W
    episodes: chex.Array  # int32 []


@chex.dataclass(frozen=True)
class Episode:
    state: chex.Array   # int32 [T]  state index at each decision
    action: chex.Array  # int32 [T]
    reward: chex.Array  # float32 [T]  reward that followed the action
    alive: chex.Array   # bool [T]  the decision happened (the game had not ended before it)


@dataclasses.dataclass(frozen=True)
class MCConfig:
    num_states: int
    num_actions: int
    max_episode_steps: int
    episodes_per_update: int = 1000
    epsilon: float = 0.1
    discount: float = 1.0


def q_values(carry: MCCarry) -> jax.Array:
    """Q [num_states, num_actions]: float32."""
    return jnp.where(carry.weight > 0, carry.total / jnp.maximum(carry.weight, 1e-30), 0.0)


def greedy(q: jax.Array) -> jax.Array:
    """argmax with ties to the lowest action, as ``np.argmax`` in the source."""
    return jnp.argmax(q, axis=-1).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class Parts:
    """What :func:`make` binds: the static pieces of an update."""

    cfg: MCConfig
    env: Env
    state_index: Callable[[State], jax.Array]   # int32 [] in [0, num_states)


def init(cfg: MCConfig, key: jax.Array | None = None) -> MCCarry:
    """The empty statistics (``key`` unused: the learner's ``init(key)``)."""
    del key
    shape = (cfg.num_states, cfg.num_actions)
    return MCCarry(total=jnp.zeros(shape, jnp.float32), weight=jnp.zeros(shape, jnp.float32),
                   episodes=jnp.int32(0))


def rollout(env: Env, state_index: Callable[[State], jax.Array], q: jax.Array, epsilon: float,
            key: jax.Array, max_steps: int) -> tuple[Episode, jax.Array]:
    """One episode with ε-greedy(q) (ε = 1: uniform random): (Episode [max_steps], ended [])."""
    # One split serves the whole episode: random bits are most of the cost of a step on a CPU.
    keys = rng.split(key, max_steps + 2)
    init_key, policy_key, step_keys = keys[0], keys[1], keys[2:]
    state = env.init(init_key)
    num_actions = q.shape[-1]
    # One word per step serves the exploration coin (w // A) and the random action (w % A):
    # for a uniform 32-bit w the two are independent up to a bias below A / 2**32.
    explore_below = jnp.uint32(min(int(epsilon * (2**32 // num_actions)), 2**32 - 1))
    always_explore = epsilon >= 1.0
    policy_bits = rng.random_words(policy_key, max_steps)

    def step(state, xs):
        bits, step_key = xs
        s = state_index(state)
        explore = jnp.bool_(True) if always_explore else bits // jnp.uint32(num_actions) < explore_below
        random_action = (bits % jnp.uint32(num_actions)).astype(jnp.int32)
        action = jnp.where(explore, random_action, greedy(q[s])).astype(jnp.int32)
        alive = ~(state.terminated | state.truncated)
        nxt = env.step(state, action, step_key)
        return nxt, Episode(state=s, action=action, reward=nxt.rewards[0], alive=alive)

    final, episode = jax.lax.scan(step, state, (policy_bits, step_keys))
    # The second value lets the caller check that no game was cut at max_steps.
    return episode, final.terminated | final.truncated


def returns_to_go(reward: jax.Array, alive: jax.Array, discount: float) -> jax.Array:
    """G_t = r_{t+1} + γ G_{t+1}, zero past the end: float32 [T]."""
    def back(g, x):
        r, a = x
        g = jnp.where(a, r + discount * g, 0.0)
        return g, g
    _, g = jax.lax.scan(back, jnp.float32(0), (reward, alive), reverse=True)
    return g


def first_visit(state: jax.Array, action: jax.Array, alive: jax.Array) -> jax.Array:
    """bool [T]: step t is the first occurrence of its (s, a) pair in the episode."""
    t = state.shape[0]
    same = (state[:, None] == state[None, :]) & (action[:, None] == action[None, :])
    earlier = jnp.tril(jnp.ones((t, t), bool), k=-1)  # [t, t'] with t' < t
    seen_before = (same & earlier & alive[None, :]).any(axis=1)
    return alive & ~seen_before


def on_policy_update(parts: Parts, carry: MCCarry, key: jax.Array):
    """``(carry, metrics)`` after one batch of first-visit ε-greedy MC control."""
    cfg = parts.cfg
    q = q_values(carry)
    keys = shard_batch(rng.split(key, cfg.episodes_per_update))
    episodes, ended = jax.vmap(
        lambda k: rollout(parts.env, parts.state_index, q, cfg.epsilon, k, cfg.max_episode_steps))(keys)
    g = jax.vmap(returns_to_go, in_axes=(0, 0, None))(episodes.reward, episodes.alive, cfg.discount)
    first = jax.vmap(first_visit)(episodes.state, episodes.action, episodes.alive)
    s, a = episodes.state.ravel(), episodes.action.ravel()
    w = first.ravel().astype(jnp.float32)
    carry = carry.replace(
        total=carry.total.at[s, a].add(w * g.ravel()),
        weight=carry.weight.at[s, a].add(w),
        episodes=carry.episodes + cfg.episodes_per_update,
    )
    return carry, _metrics(carry, episodes, ended)


def _importance_weights(behaviour_prob: float, q, total, weight, episode: Episode, g):
    """Backward pass of one episode: the W that each step adds (0 after the stop)."""
    def back(carry, x):
        w, going = carry
        s, a, alive, g_t = x
        use = going & alive
        # Q(s, ·) after this step's own update, as the source tests argmax after updating.
        q_sa = (total[s, a] + w * g_t) / (weight[s, a] + w)
        q_s = q[s].at[a].set(jnp.where(use, q_sa, q[s, a]))
        contributed = jnp.where(use, w, 0.0)
        keep_going = going & (~alive | (a == greedy(q_s)))
        w = jnp.where(use, w / behaviour_prob, w)
        return (w, keep_going), contributed

    xs = (episode.state, episode.action, episode.alive, g)
    _, contributed = jax.lax.scan(back, (jnp.float32(1), jnp.bool_(True)), xs, reverse=True)
    return contributed


def off_policy_update(parts: Parts, carry: MCCarry, key: jax.Array):
    """``(carry, metrics)`` after one batch of weighted-importance-sampling MC control."""
    cfg = parts.cfg
    weights = functools.partial(_importance_weights, 1.0 / cfg.num_actions)   # b(a|s), uniform behaviour
    q = q_values(carry)
    keys = shard_batch(rng.split(key, cfg.episodes_per_update))
    episodes, ended = jax.vmap(
        lambda k: rollout(parts.env, parts.state_index, q, 1.0, k, cfg.max_episode_steps))(keys)
    g = jax.vmap(returns_to_go, in_axes=(0, 0, None))(episodes.reward, episodes.alive, cfg.discount)
    w = jax.vmap(weights, in_axes=(None, None, None, 0, 0))(q, carry.total, carry.weight, episodes, g)
    s, a = episodes.state.ravel(), episodes.action.ravel()
    carry = carry.replace(
        total=carry.total.at[s, a].add(w.ravel() * g.ravel()),
        weight=carry.weight.at[s, a].add(w.ravel()),
        episodes=carry.episodes + cfg.episodes_per_update,
    )
    return carry, _metrics(carry, episodes, ended)


def make_on_policy_update(cfg: MCConfig, env: Env, state_index: Callable[[State], jax.Array]):
    """``update(carry, key) -> (carry, metrics)``: :func:`on_policy_update` bound."""
    return functools.partial(on_policy_update, Parts(cfg=cfg, env=env, state_index=state_index))


def make_off_policy_update(cfg: MCConfig, env: Env, state_index: Callable[[State], jax.Array]):
    """``update(carry, key) -> (carry, metrics)``: :func:`off_policy_update` bound."""
    return functools.partial(off_policy_update, Parts(cfg=cfg, env=env, state_index=state_index))


def _metrics(carry: MCCarry, episodes: Episode, ended: jax.Array) -> dict:
    q = q_values(carry)
    return {
        "episode_return": episodes.reward.sum(axis=1).mean(),
        # every game must end within max_episode_steps; the driver checks this stays 1
        "ended_fraction": ended.mean(),
        "greedy_policy": greedy(q).astype(jnp.int8),
    }


METHODS = ("on_policy", "off_policy")
UPDATES = {"on_policy": on_policy_update, "off_policy": off_policy_update}


def policy(parts: Parts, q: jax.Array, state: State, key: jax.Array) -> jax.Array:
    """Greedy on ``q`` [num_states, num_actions]; ``key`` unused."""
    return greedy(q[parts.state_index(state)])


def make(cfg: MCConfig, env: Env, state_index: Callable[[State], jax.Array], *,
         method: str = "on_policy") -> Learner:
    """The learner of ``method`` ("on_policy" ε-greedy first-visit, or "off_policy" weighted
    importance sampling); its policy is greedy on the learned Q table (``params`` = Q)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    parts = Parts(cfg=cfg, env=env, state_index=state_index)
    return Learner(init=functools.partial(init, cfg), update=functools.partial(UPDATES[method], parts),
                   policy=functools.partial(policy, parts), params=q_values)
