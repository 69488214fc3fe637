"""PPO for any game of the contract, one seat against opponents, in the PureJaxRL style, with
AlphaHoldem's Trinal-Clip loss (Zhao et al. 2022) beside plain clipped PPO. Nothing here names
a game: the game reaches the learner through the opponent wrapper (``train/algos/opponents.py``)
and ``features(state, seat)``. ``update(carry, key)``: opponents per group, a rollout, GAE
targets, SGD epochs over minibatches; the pool in the carry is changed only by the pipeline's
league hook. The steps, the losses, the contracts and the devices: docs/learners.md.

:func:`make_with_exploiter`: the same learner with an exploiter beside it (AlphaStar's main
exploiter, ``train/algos/league.py``): each update trains the main learner, then a second PPO
learner of the same network against the frozen main model in its carry's pool
(``league.WithExploiters``); the pipeline's hook freezes and restarts it between chunks.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from train.algos import league as league_lib
from train.algos.learner import Learner
from train.algos.opponents import BIG, Seat, VsOpponents
from train.common.mesh import BATCH, batch_mesh, check_divisible, shard_batch

__all__ = ["LOSSES", "PPO", "init_with_exploiter", "make_with_exploiter", "start_exploiter",
           "update_with_exploiter", "PPOCarry", "PPOConfig", "Parts", "Transition", "deal", "fill_bounds", "gae", "init",
           "loss", "make", "policy", "ppo_policy_loss", "probs", "rollout", "squared_value_loss",
           "trinal_clip_policy_loss", "trinal_value_loss", "update"]

LOSSES = ("trinal", "ppo")
#: the logit of an illegal action: finite, so that 0 * log p stays 0 and nothing turns NaN
MASKED_LOGIT = -1e9


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """The learner's hyper-parameters. The source (AlphaHoldem) fixes only ``clip_eps`` = 0.2
    and ``delta1`` = 3; the rest are PureJaxRL's PPO defaults (its CartPole/MinAtar settings),
    chosen where a game gives no reason to differ, as each field says."""

    num_envs: int = 256
    """Games side by side (a multiple of the device count). 256 gives 8 192 decisions per
    update with ``num_steps`` = 32: minibatches of 2 048, large enough for a low-variance
    gradient in a game as noisy as poker, small enough to update often on a CPU."""
    num_steps: int = 32
    """Learner decisions per game per update. Games run on across updates (auto-reset), so
    this only sets how far GAE looks before bootstrapping; 32 covers several short games
    (a hand of hold'em is a handful of decisions)."""
    gamma: float = 1.0
    """Discount. 1: the games are episodic and what counts is the final result (chips, a win);
    discounting would make an early decision care less about the same result."""
    gae_lambda: float = 0.95
    """GAE lambda (PureJaxRL's and the PPO paper's)."""
    learning_rate: float = 3e-4
    """Adam step size (the PPO paper's, PureJaxRL's)."""
    epochs: int = 4
    """Passes over one update's decisions (PureJaxRL's CartPole: 4)."""
    minibatches: int = 4
    """Minibatches per pass (PureJaxRL's CartPole: 4); must divide num_envs * num_steps."""
    clip_eps: float = 0.2
    """epsilon of the clipped ratio (the source's, and PPO's)."""
    delta1: float = 3.0
    """Trinal-Clip: the cap of the ratio where the advantage is negative (the source's 3;
    must exceed 1 + clip_eps)."""
    loss: str = "trinal"
    """trinal (AlphaHoldem's Trinal-Clip policy and value losses) or ppo (plain clipped PPO and
    an unclipped value loss, for comparison)."""
    value_coef: float = 0.5
    """Weight of the value loss (PureJaxRL's vf_coef)."""
    entropy_coef: float = 0.01
    """Weight of the entropy bonus (PureJaxRL's ent_coef)."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip (PureJaxRL's)."""
    opponent_groups: int = 8
    """Groups of games, each facing one opponent for a whole update (must divide num_envs,
    and be a multiple of the device count: the groups are split over the devices)."""

    def validate(self) -> None:
        for name in ("num_envs", "num_steps", "epochs", "minibatches"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if (self.num_envs * self.num_steps) % self.minibatches:
            raise ValueError(f"minibatches ({self.minibatches}) must divide num_envs * num_steps "
                             f"({self.num_envs} * {self.num_steps} = {self.num_envs * self.num_steps})")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")
        if not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError(f"gae_lambda must be in [0, 1], got {self.gae_lambda}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if not 0.0 < self.clip_eps < 1.0:
            raise ValueError(f"clip_eps must be in (0, 1), got {self.clip_eps}")
        if not self.delta1 > 1.0 + self.clip_eps:
            raise ValueError(f"delta1 must exceed 1 + clip_eps = {1.0 + self.clip_eps}, got {self.delta1}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        for name in ("value_coef", "entropy_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be > 0, got {self.max_grad_norm}")
        if not isinstance(self.opponent_groups, int) or self.opponent_groups < 1 or self.num_envs % self.opponent_groups:
            raise ValueError(f"opponent_groups must be an integer >= 1 dividing num_envs ({self.num_envs}), "
                             f"got {self.opponent_groups!r}")


@chex.dataclass(frozen=True)
class PPOCarry:
    params: Any
    opt_state: Any
    pool: Any              # the opponents' pool (e.g. a League); the pipeline changes it between chunks
    step: jax.Array        # int32 []  updates done
    decisions: jax.Array   # int32 []  learner decisions trained on so far (E * T per update)
    episodes: jax.Array    # int32 []  games the learner finished so far


@chex.dataclass(frozen=True)
class Transition:
    """One learner decision of the rollout (leaves ``[T, E, ...]`` once scanned)."""

    features: Any          # tuple of the network's inputs
    legal: jax.Array       # bool [A]
    action: jax.Array      # int32 []
    log_prob: jax.Array    # float32 []  of the action under the rollout's policy
    value: jax.Array       # float32 []
    reward: jax.Array      # float32 []  credited to this decision (the wrapper's)
    done: jax.Array        # bool []  this decision's game ended before the next decision
    bounds: jax.Array      # float32 [2]  value bounds of that game when done, else (-BIG, BIG)


@dataclasses.dataclass(frozen=True)
class Parts:
    """What :func:`make` binds: the static pieces every function of an update reads."""

    cfg: PPOConfig
    wrapper: VsOpponents
    apply_fn: Callable
    features: Callable
    choose_opponent: Callable   # (pool, params, key) -> one group's table for the wrapper
    optimizer: optax.GradientTransformation


@dataclasses.dataclass(frozen=True)
class PPO(Learner):
    """A :class:`Learner` with its bound pieces and the mover's action probabilities."""

    parts: Parts = None
    probs: Callable[[Any, Any, jax.Array], jax.Array] = None
    exploiter: Parts | None = None   # the exploiter's pieces (make_with_exploiter), else None


# -- the pure pieces ------------------------------------------------------------------------


def gae(rewards: jax.Array, values: jax.Array, dones: jax.Array, last_value: jax.Array, *,
        gamma: float, lam: float) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimation: ``(advantages [T, E], returns [T, E])``.

    ``rewards``, ``values``, ``dones`` ``[T, E]``; ``last_value`` ``[E]``, the value of the
    state after step ``T - 1``. ``dones[t]``: the game ended after step ``t``, so neither the
    next value nor the next advantage reaches back across it:

        delta_t = r_t + gamma * V_{t+1} * (1 - d_t) - V_t
        A_t     = delta_t + gamma * lam * (1 - d_t) * A_{t+1}        (A_T = 0, V_T = last_value)
        R_t     = A_t + V_t

    (a backward ``lax.scan``)."""
    chex.assert_equal_shape([rewards, values, dones])
    chex.assert_shape(last_value, values.shape[1:])

    def back(carry, step):
        advantage, next_value = carry
        reward, value, done = step
        alive = 1.0 - done.astype(jnp.float32)
        delta = reward + gamma * next_value * alive - value
        advantage = delta + gamma * lam * alive * advantage
        return (advantage, value), advantage

    _, advantages = jax.lax.scan(
        back, (jnp.zeros_like(last_value, jnp.float32), last_value.astype(jnp.float32)),
        (rewards.astype(jnp.float32), values.astype(jnp.float32), dones), reverse=True)
    return advantages, advantages + values


def fill_bounds(bounds: jax.Array, dones: jax.Array) -> jax.Array:
    """float32 [T, E, 2]: each step's value bounds are those of the game it belongs to.

    ``bounds[t]`` is meaningful where ``dones[t]`` (the wrapper records a game's bounds at the
    decision after which it ended); a backward scan carries them to every earlier step of the
    same game. The steps of a game still unfinished at the end of the rollout get
    ``(-BIG, BIG)``: no clip."""
    chex.assert_shape(bounds, dones.shape + (2,))

    def back(following, step):
        b, done = step
        here = jnp.where(done[..., None], b.astype(jnp.float32), following)
        return here, here

    none = jnp.broadcast_to(jnp.array([-BIG, BIG], jnp.float32), bounds.shape[1:])
    _, filled = jax.lax.scan(back, none, (bounds, dones), reverse=True)
    return filled


def ppo_policy_loss(ratio: jax.Array, adv: jax.Array, *, eps: float) -> jax.Array:
    """Plain clipped PPO: ``-mean(min(r A, clip(r, 1 - eps, 1 + eps) A))``."""
    clipped = jnp.clip(ratio, 1.0 - eps, 1.0 + eps)
    return -jnp.mean(jnp.minimum(ratio * adv, clipped * adv))


def trinal_clip_policy_loss(ratio: jax.Array, adv: jax.Array, *, eps: float, delta1: float) -> jax.Array:
    """AlphaHoldem's Trinal-Clip policy loss ``L^tcp``, negated for minimising, mean.

    For ``A >= 0`` the PPO objective ``min(r A, clip(r, 1 - eps, 1 + eps) A)``. For ``A < 0``
    the source's

        clip(r, clip(r, 1 - eps, 1 + eps), delta1) * A

    that is ``r`` clipped from below at ``clip(r, 1 - eps, 1 + eps)`` and from above at
    ``delta1``: ``min(max(r, 1 - eps), delta1) * A`` (``max(r, clip(r, 1 - eps, 1 + eps))`` is
    ``max(r, 1 - eps)``). Below ``delta1`` this is PPO's objective for ``A < 0`` (``A max(r,
    1 - eps)``); above it the ratio is capped, so a sample whose probability grew more than
    ``delta1``-fold stops pulling (PPO's objective there grows without bound, the variance the
    source blames). ``delta1 > 1 + eps`` (the source: eps = 0.2, delta1 = 3)."""
    positive = jnp.minimum(ratio * adv, jnp.clip(ratio, 1.0 - eps, 1.0 + eps) * adv)
    lower = jnp.clip(ratio, 1.0 - eps, 1.0 + eps)
    negative = jnp.minimum(jnp.maximum(ratio, lower), delta1) * adv
    return -jnp.mean(jnp.where(adv >= 0, positive, negative))


def trinal_value_loss(values: jax.Array, returns: jax.Array, low: jax.Array, high: jax.Array) -> jax.Array:
    """AlphaHoldem's Trinal-Clip value loss ``L^tcv = mean((clip(R, -delta2, delta3) - V)^2)``,
    the bounds ``(low, high) = (-delta2, delta3)`` per sample (the game's, from the wrapper;
    in hold'em what the learner and its opponent put in)."""
    return jnp.mean(jnp.square(jnp.clip(returns, low, high) - values))


def squared_value_loss(values: jax.Array, returns: jax.Array) -> jax.Array:
    """Plain PPO's value loss here: ``mean((R - V)^2)``, no bounds."""
    return jnp.mean(jnp.square(returns - values))


# -- the network ------------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _heads(parts: Parts, params, features: tuple, legal: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(log_probs [B, A], value [B])``: the log masked softmax and the value."""
    logits, value = parts.apply_fn(params, *features, legal)
    logits = jnp.where(legal, logits.astype(jnp.float32), MASKED_LOGIT)
    return jax.nn.log_softmax(logits, axis=-1), value.astype(jnp.float32)


def _mover_features(parts: Parts, state) -> tuple:
    return tuple(x[None] for x in _as_tuple(parts.features(state, state.current_player)))


def probs(parts: Parts, params, state, key) -> jax.Array:
    """float32 [A]: the policy's action probabilities for the player to move in ``state``
    (from ``features(state, state.current_player)``; 0 on illegal actions). ``key`` unused."""
    del key
    log_probs, _ = _heads(parts, params, _mover_features(parts, state), state.legal_action_mask[None])
    return jnp.exp(log_probs[0])


def policy(parts: Parts, params, state, key) -> jax.Array:
    """The trained policy for the arena: an action sampled from :func:`probs`. int32 []."""
    log_probs, _ = _heads(parts, params, _mover_features(parts, state), state.legal_action_mask[None])
    return jax.random.categorical(key, log_probs[0]).astype(jnp.int32)


# -- one update -----------------------------------------------------------------------------


def init(parts: Parts, net, pool: Any, key: jax.Array) -> PPOCarry:
    """Parameters from ``net.init`` on one game's features, Adam's state, the pool."""
    env = parts.wrapper.env
    example = env.init(jax.random.key(0))
    features = tuple(x[None] for x in _as_tuple(parts.features(example, jnp.int32(0))))
    params = net.init(key, *features, example.legal_action_mask[None])
    # the pool a copy: the chunked driver donates the carry, and the caller's pool (bound by
    # make) must outlive it, for the next init
    return PPOCarry(params=params, opt_state=parts.optimizer.init(params),
                    pool=jax.tree_util.tree_map(jnp.copy, pool), step=jnp.int32(0), decisions=jnp.int32(0),
                    episodes=jnp.int32(0))


def _grouped(parts: Parts, x):
    """``[E, ...] -> [G, E / G, ...]``."""
    g = parts.cfg.opponent_groups
    return jax.tree_util.tree_map(lambda a: a.reshape((g, a.shape[0] // g) + a.shape[1:]), x)


def _flat(x):
    """``[G, M, ...] -> [G * M, ...]``."""
    return jax.tree_util.tree_map(lambda a: a.reshape((-1,) + a.shape[2:]), x)


def _per_group(fn):
    """``fn(table, *per_game)`` for one group (its table unbatched, each ``per_game`` leaf
    ``[E / G, ...]``), applied to every group (``[G]``, ``[G, E / G, ...]``): a ``lax.map`` over
    the groups of each device, the devices side by side (``shard_map``). A group's table then
    stays unbatched inside it, so an opponent policy that branches on it (hold'em's
    ``lax.switch`` between a network and the anchor bots) runs its one branch; a ``vmap`` over
    the groups turned that switch into a select that ran every branch for every group, the
    equity bot's Monte Carlo included, whatever the group's opponent."""
    def local(*args):
        return jax.lax.map(lambda a: fn(*a), args)

    mesh = batch_mesh()
    if mesh.size == 1:
        return local
    return jax.shard_map(local, mesh=mesh, in_specs=P(BATCH), out_specs=P(BATCH), check_vma=False)


def deal(parts: Parts, carry: PPOCarry, k_opponents, k_games) -> tuple[Any, Seat]:
    """``(tables [G], games [G, E / G])``: each group's opponent for this update and its
    games, dealt to the learner's first decision."""
    G, E = parts.cfg.opponent_groups, parts.cfg.num_envs
    tables = shard_batch(jax.vmap(lambda k: parts.choose_opponent(carry.pool, carry.params, k))(
        jax.random.split(k_opponents, G)))
    reset = _per_group(jax.vmap(parts.wrapper.reset, in_axes=(None, 0)))
    games = reset(tables, _grouped(parts, jax.random.split(k_games, E)))
    return tables, shard_batch(games)


def _decision_features(parts: Parts, games: Seat) -> tuple:
    """The learner's features in every game, ``[E, ...]`` each."""
    per_game = jax.vmap(jax.vmap(lambda s, p: _as_tuple(parts.features(s, p))))
    return tuple(_flat(per_game(games.state, games.seat)))


def rollout(parts: Parts, params, tables, games: Seat, key: jax.Array) -> tuple[Transition, Seat, jax.Array]:
    """``num_steps`` decisions in every game: ``(transitions [T, E], games [G, E / G],
    finished [T, E])``; ``finished[t]`` is the learner's whole return of the game that ended
    at step ``t`` (0 elsewhere)."""
    step_many = _per_group(jax.vmap(parts.wrapper.step, in_axes=(None, 0, 0, 0)))
    E = parts.cfg.num_envs

    def body(c, k):
        games, running = c
        k_act, k_env = jax.random.split(k)
        features = _decision_features(parts, games)
        legal = _flat(games.state.legal_action_mask)
        log_probs, value = _heads(parts, params, features, legal)
        action = jax.random.categorical(k_act, log_probs).astype(jnp.int32)
        log_prob = jnp.take_along_axis(log_probs, action[:, None], axis=1)[:, 0]
        games = shard_batch(step_many(tables, games, _grouped(parts, action),
                                      _grouped(parts, jax.random.split(k_env, E))))
        reward, done = _flat(games.reward), _flat(games.done)
        total = running + reward
        t = Transition(features=features, legal=legal, action=action, log_prob=log_prob, value=value,
                       reward=reward, done=done, bounds=_flat(games.bounds))
        return (games, jnp.where(done, 0.0, total)), (t, jnp.where(done, total, 0.0))

    (games, _), (transitions, finished) = jax.lax.scan(
        body, (games, jnp.zeros(E, jnp.float32)), jax.random.split(key, parts.cfg.num_steps))
    return transitions, games, finished


@chex.dataclass(frozen=True)
class _Batch:
    features: Any
    legal: jax.Array
    action: jax.Array
    log_prob: jax.Array
    advantage: jax.Array
    target: jax.Array      # float32  the GAE return (clipped to [low, high] by the trinal value loss)
    low: jax.Array         # float32  the bounds of the decision's game
    high: jax.Array


def loss(parts: Parts, params, batch: _Batch) -> tuple[jax.Array, dict]:
    """The loss of one minibatch (module doc) and its statistics."""
    cfg = parts.cfg
    log_probs, value = _heads(parts, params, batch.features, batch.legal)
    log_prob = jnp.take_along_axis(log_probs, batch.action[:, None], axis=1)[:, 0]
    log_ratio = log_prob - batch.log_prob
    ratio = jnp.exp(log_ratio)
    adv = batch.advantage
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    if cfg.loss == "trinal":
        policy_loss = trinal_clip_policy_loss(ratio, adv, eps=cfg.clip_eps, delta1=cfg.delta1)
        value_loss = trinal_value_loss(value, batch.target, batch.low, batch.high)
    else:
        policy_loss = ppo_policy_loss(ratio, adv, eps=cfg.clip_eps)
        value_loss = squared_value_loss(value, batch.target)
    p = jnp.exp(log_probs)
    entropy = -jnp.sum(jnp.where(batch.legal, p * log_probs, 0.0), axis=-1).mean()
    total = policy_loss + cfg.value_coef * value_loss - cfg.entropy_coef * entropy
    stats = {"loss": total, "policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy,
             # the k3 estimator of KL(old || new) (Schulman), as PureJaxRL's successors log it
             "approx_kl": jnp.mean((ratio - 1.0) - log_ratio),
             "clip_fraction": jnp.mean((jnp.abs(ratio - 1.0) > cfg.clip_eps).astype(jnp.float32))}
    return total, stats


def sgd_epoch(parts: Parts, batch: _Batch, state, key):
    """One pass: a permutation of the decisions cut into minibatches, one Adam step each."""
    cfg = parts.cfg
    n = batch.action.shape[0]
    order = jax.random.permutation(key, n)
    shuffled = jax.tree_util.tree_map(
        lambda x: x[order].reshape((cfg.minibatches, n // cfg.minibatches) + x.shape[1:]), batch)

    def step(state, minibatch):
        params, opt_state = state
        minibatch = shard_batch(minibatch)
        grads, stats = jax.grad(lambda p: loss(parts, p, minibatch), has_aux=True)(params)
        updates, opt_state = parts.optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), stats

    return jax.lax.scan(step, state, shuffled)


def update(parts: Parts, carry: PPOCarry, key: jax.Array) -> tuple[PPOCarry, dict]:
    """One update: a rollout of ``num_steps`` decisions per game, GAE, ``epochs`` x
    ``minibatches`` Adam steps. Metrics (scalars): the losses, entropy, approx_kl and
    clip_fraction averaged over the steps; ``episode_return``, the learner's mean return over
    the games that ended in this rollout (0 when none did) and ``games_finished``, their count;
    ``reward``, the mean reward per decision; ``decisions`` trained on so far."""
    cfg = parts.cfg
    k_opponents, k_games, k_rollout, k_sgd = jax.random.split(key, 4)
    tables, games = deal(parts, carry, k_opponents, k_games)
    transitions, games, finished = rollout(parts, carry.params, tables, games, k_rollout)
    _, last_value = _heads(parts, carry.params, _decision_features(parts, games),
                           _flat(games.state.legal_action_mask))
    advantages, returns = gae(transitions.reward, transitions.value, transitions.done, last_value,
                              gamma=cfg.gamma, lam=cfg.gae_lambda)
    bounds = fill_bounds(transitions.bounds, transitions.done)
    flat = lambda x: x.reshape((-1,) + x.shape[2:])  # noqa: E731  [T, E, ...] -> [T * E, ...]
    batch = _Batch(features=jax.tree_util.tree_map(flat, transitions.features), legal=flat(transitions.legal),
                   action=flat(transitions.action), log_prob=flat(transitions.log_prob),
                   advantage=flat(advantages), target=flat(returns), low=flat(bounds[..., 0]),
                   high=flat(bounds[..., 1]))
    (params, opt_state), stats = jax.lax.scan(
        lambda state, k: sgd_epoch(parts, batch, state, k), (carry.params, carry.opt_state),
        jax.random.split(k_sgd, cfg.epochs))
    decisions = cfg.num_envs * cfg.num_steps
    count = transitions.done.sum(dtype=jnp.int32)
    carry = carry.replace(params=params, opt_state=opt_state, step=carry.step + 1,
                          decisions=carry.decisions + decisions, episodes=carry.episodes + count)
    metrics = {k: v.mean() for k, v in stats.items()}
    metrics.update(episode_return=finished.sum() / jnp.maximum(count, 1).astype(jnp.float32),
                   games_finished=count, reward=transitions.reward.mean(), decisions=carry.decisions)
    return carry, metrics


def make(cfg: PPOConfig, wrapper: VsOpponents, net, *, features: Callable, pool: Any,
         choose_opponent: Callable[[Any, Any, jax.Array], Any]) -> PPO:
    """The PPO learner of ``wrapper``'s game, one seat against the wrapper's opponents.

    Args:
      cfg: the hyper-parameters.
      wrapper: the game from the learner's seat (:class:`~train.algos.opponents.VsOpponents`).
      net: a flax module (module doc: ``apply(params, *features, legal) -> (logits, value)``).
      features: ``features(state, seat) -> tuple`` of arrays, the network's encoding of what
        ``seat`` may see in one unbatched ``state``.
      pool: the opponents' pool the run starts with (``PPOCarry.pool``; e.g. an empty League).
      choose_opponent: ``choose_opponent(pool, params, key) -> table``, one group's opponent
        for one update (jittable): the ``table`` its games' wrapper is handed. ``params`` are
        the learner's own (self-play while a pool is empty).

    Returns a :class:`PPO`: ``init(key) -> PPOCarry``, ``update(carry, key) -> (carry,
    metrics)``, ``policy(params, state, key) -> action`` and ``probs(params, state, key) ->
    float32 [A]`` (both for the player to move), ``params(carry)``.
    """
    if not isinstance(cfg, PPOConfig):
        raise TypeError(f"cfg must be a PPOConfig, got {type(cfg).__name__}")
    if not isinstance(wrapper, VsOpponents):
        raise TypeError(f"wrapper must be a VsOpponents, got {type(wrapper).__name__}")
    cfg.validate()
    check_divisible(cfg.opponent_groups)
    check_divisible(cfg.num_envs * cfg.num_steps // cfg.minibatches)
    optimizer = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm),
                            optax.adam(cfg.learning_rate, eps=1e-5))  # PureJaxRL's eps
    parts = Parts(cfg=cfg, wrapper=wrapper, apply_fn=net.apply, features=features,
                  choose_opponent=choose_opponent, optimizer=optimizer)
    return PPO(init=functools.partial(init, parts, net, pool), update=functools.partial(update, parts),
               policy=functools.partial(policy, parts), params=operator.attrgetter("params"), parts=parts,
               probs=functools.partial(probs, parts))


# -- an exploiter beside the main learner -------------------------------------------------------


def start_exploiter(parts: Parts, params) -> PPOCarry:
    """The exploiter's carry, (re)started from ``params`` (the main model's, copied): a fresh
    Adam state, its counters at 0, its pool a placeholder (its target comes with each update)."""
    params = jax.tree_util.tree_map(jnp.array, params)
    return PPOCarry(params=params, opt_state=parts.optimizer.init(params), pool=jnp.zeros((), jnp.float32),
                    step=jnp.int32(0), decisions=jnp.int32(0), episodes=jnp.int32(0))


def _exploiter_step(parts: Parts, learner: PPOCarry, target, key) -> tuple[PPOCarry, dict]:
    """One PPO update of the exploiter, every group of its games against ``target``."""
    learner, metrics = update(parts, learner.replace(pool=target), key)
    return learner.replace(pool=jnp.zeros((), jnp.float32)), metrics


def _returns(metrics: dict) -> tuple[jax.Array, jax.Array]:
    return metrics["episode_return"], metrics["games_finished"]


def _against_target(exploiter_opponent: Callable, target, params, key):
    del params   # the exploiter plays its target only, never itself
    return exploiter_opponent(target, key)


def init_with_exploiter(parts: Parts, exploiter: Parts, net, pool: Any, capacity: int, key: jax.Array) -> PPOCarry:
    """:func:`init`, its pool a ``league.WithExploiters``: ``pool`` and an exploiter started
    from the main learner's first parameters, training against them."""
    carry = init(parts, net, pool, key)
    exploiters = league_lib.start_exploiters(start_exploiter(exploiter, carry.params), carry.params,
                                             capacity=capacity)
    return carry.replace(pool=league_lib.WithExploiters(league=carry.pool, exploiters=exploiters))


def update_with_exploiter(parts: Parts, exploiter: Parts, carry: PPOCarry, key: jax.Array) -> tuple[PPOCarry, dict]:
    """:func:`update` of the main learner, then one of the exploiter in ``carry.pool`` against
    its target (``league.train_exploiter``). Metrics: the main learner's, and
    ``exploiter_episode_return``, ``exploiter_games_finished`` of the exploiter's games."""
    k_main, k_exploiter = jax.random.split(key)
    carry, metrics = update(parts, carry, k_main)
    exploiters, xm = league_lib.train_exploiter(functools.partial(_exploiter_step, exploiter),
                                                carry.pool.exploiters, k_exploiter, returns=_returns)
    metrics.update(exploiter_episode_return=xm["episode_return"], exploiter_games_finished=xm["games_finished"])
    return carry.replace(pool=carry.pool.replace(exploiters=exploiters)), metrics


def make_with_exploiter(cfg: PPOConfig, wrapper: VsOpponents, net, *, features: Callable, pool: Any,
                        choose_opponent: Callable[[Any, Any, jax.Array], Any],
                        exploiter_opponent: Callable[[Any, jax.Array], Any], capacity: int) -> PPO:
    """:func:`make` with an exploiter (module doc): the same arguments, and

      choose_opponent: ``choose_opponent(pool, params, key) -> table`` of the main learner, its
        ``pool`` a ``league.WithExploiters`` (``pool`` here and the exploiters, whose frozen
        models it may draw).
      exploiter_opponent: ``exploiter_opponent(target, key) -> table``, how the exploiter's
        games face ``target``, the frozen main model's parameters (jittable).
      capacity: frozen exploiters kept (a ring buffer, the oldest leaves).

    The exploiter has the main learner's hyper-parameters and network. ``exploiter`` of the
    result holds its pieces, for ``start_exploiter`` in the pipeline's hook."""
    main = make(cfg, wrapper, net, features=features, pool=pool, choose_opponent=choose_opponent)
    exploiter = dataclasses.replace(main.parts, choose_opponent=functools.partial(_against_target, exploiter_opponent))
    return dataclasses.replace(
        main, init=functools.partial(init_with_exploiter, main.parts, exploiter, net, pool, int(capacity)),
        update=functools.partial(update_with_exploiter, main.parts, exploiter), exploiter=exploiter)
