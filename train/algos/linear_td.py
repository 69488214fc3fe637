"""TD(λ) on a linear value over sparse binary features, updated backwards after each game
(Sturtevant & White, "Feature construction for reinforcement learning in Hearts"). Knows
nothing of any game: a state is its active features (``indices int32 [M]``, ``valid bool
[M]``), its value the sum of their weights plus a known ``offset``, cut to ``(value_low,
value_high)``; the games of an update are played in parallel and learned one after another
(:func:`sequential_update`). The source's choices and how the backward pass is computed:
docs/learners.md.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable, Sequence

import chex
import jax
import jax.numpy as jnp

from train.algos.learner import Learner

Array = jax.Array

__all__ = ["BackwardPass", "LinearTDCarry", "LinearTDConfig", "Parts", "backward_pass", "backward_update",
           "init", "init_weights", "make", "play_and_record", "raw_value", "sequential_update", "update", "value"]


@dataclasses.dataclass(frozen=True)
class LinearTDConfig:
    """The learner's numbers. ``value_low`` / ``value_high``: the range of the value (the Q♠
    predictor: 0 and 13; ``±inf`` for none); the output is clipped to
    ``[value_low + clip_margin, value_high - clip_margin]``."""

    value_low: float
    value_high: float
    lam: float = 0.75            # λ of the λ-return
    lr_scale: float = 13.0       # learning rate 1 / (lr_scale × active features of the state)
    clip_margin: float = 1e-3    # the "+" of the source's 0+ and the "−" of its 13−

    def __post_init__(self):
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1], got {self.lam}")
        if not self.lr_scale > 0:
            raise ValueError(f"lr_scale must be > 0, got {self.lr_scale}")
        if not self.clip_margin >= 0:
            raise ValueError(f"clip_margin must be >= 0, got {self.clip_margin}")
        if not self.value_high - self.value_low > 2 * self.clip_margin:
            raise ValueError(f"the value range ({self.value_low}, {self.value_high}) must be wider "
                             f"than twice clip_margin ({self.clip_margin})")

    @property
    def low(self) -> float:
        return self.value_low + self.clip_margin

    @property
    def high(self) -> float:
        return self.value_high - self.clip_margin


@chex.dataclass(frozen=True)
class BackwardPass:
    """One game's backward pass, per recorded state (0 where not ``present``)."""

    coef: chex.Array      # float32 [T]  step added to each active weight: lr_t (G_t - V_t)
    values: chex.Array    # float32 [T]  V_t (clipped) when the pass reached t
    targets: chex.Array   # float32 [T]  G_t, the λ-return
    errors: chex.Array    # float32 [T]  G_t - V_t


def init_weights(key: jax.Array, num_features: int) -> Array:
    """float32 [num_features]: uniform in ``[-1/num_features, 1/num_features)`` (the source's)."""
    if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
        raise ValueError(f"num_features must be an integer >= 1, got {num_features!r}")
    bound = 1.0 / num_features
    return jax.random.uniform(key, (num_features,), jnp.float32, -bound, bound)


def raw_value(weights: Array, indices: Array, valid: Array) -> Array:
    """float32 [...]: the sum of the active weights, unclipped. ``indices`` int [..., M],
    ``valid`` bool [..., M]; any leading axes (or vmap)."""
    return jnp.where(valid, weights[indices], 0.0).sum(axis=-1)


def value(weights: Array, indices: Array, valid: Array, *, cfg: LinearTDConfig) -> Array:
    """float32 [...]: the value, the active weights' sum clipped to the config's open range."""
    return jnp.clip(raw_value(weights, indices, valid), cfg.low, cfg.high)


def _overlaps(indices: Array, valid: Array) -> Array:
    """float32 [T, T]: ``[t, u]`` = the number of pairs of slots (one of t, one of u) holding
    the same valid index: what one unit added to each of u's active weights adds to V_t.

    One sort of the game's T × M indices (rows as payload); runs of one index are numbered,
    ``C [runs, T]`` counts each run's slots per row (a segment sum), and ``O = Cᵀ C``.
    """
    num, slots = indices.shape
    keys = jnp.where(valid, indices, -1).reshape(-1)                      # [T * M]
    rows = jnp.broadcast_to(jnp.arange(num, dtype=jnp.int32)[:, None], (num, slots)).reshape(-1)
    keys, rows = jax.lax.sort((keys, rows), num_keys=1)
    run = jnp.cumsum(jnp.concatenate([jnp.zeros(1, jnp.int32),
                                      (keys[1:] != keys[:-1]).astype(jnp.int32)]))
    onehot = ((rows[:, None] == jnp.arange(num)) & (keys >= 0)[:, None]).astype(jnp.float32)
    counts = jax.ops.segment_sum(onehot, run, num_segments=num * slots, indices_are_sorted=True)
    return counts.T @ counts


def backward_pass(weights: Array, indices: Array, valid: Array, present: Array, final_return: Array,
                  *, cfg: LinearTDConfig, overlap: Array | None = None, offset: Array | None = None) -> BackwardPass:
    """One game's backward TD(λ) pass from ``weights`` (the module's docstring).

    Args:
      weights:  float32 [F].
      indices:  int32 [T, M]  each recorded state's active features (in recording order).
      valid:    bool [T, M]   which slots are active.
      present:  bool [T]      the real rows (padding: False).
      final_return: float32 []  the game's outcome, the last present state's target.
      overlap:  float32 [T, T] or None: the states' shared features (``_overlaps``), when the
        caller knows them more cheaply (AND-combinations of atoms: from the atoms); computed
        from ``indices`` when None. Wrong overlaps give wrong values: the caller's to get right.
      offset:   float32 [T] or None: each state's known part of the value (module docstring).

    Returns a :class:`BackwardPass` (coefficients, values, targets, errors, each [T]).
    """
    chex.assert_rank(indices, 2)
    chex.assert_equal_shape([indices, valid])
    chex.assert_shape(present, indices.shape[:1])
    valid = valid & present[:, None]
    start = raw_value(weights, indices, valid)                            # [T] at the pass's start
    if offset is not None:
        chex.assert_shape(offset, present.shape)
        start = start + jnp.asarray(offset, jnp.float32)
    overlap = _overlaps(indices, valid) if overlap is None else jnp.asarray(overlap, jnp.float32)
    chex.assert_shape(overlap, (indices.shape[0], indices.shape[0]))   # [T, T]
    active = valid.sum(axis=-1).astype(jnp.float32)
    lr = jnp.where(active > 0, 1.0 / (cfg.lr_scale * jnp.maximum(active, 1.0)), 0.0)
    num = indices.shape[0]
    final_return = jnp.asarray(final_return, jnp.float32)

    def step(carry, t):
        coef, g_next, v_next, seen = carry
        v = jnp.clip(start[t] + overlap[t] @ coef, cfg.low, cfg.high)    # later steps included
        g = jnp.where(seen, (1.0 - cfg.lam) * v_next + cfg.lam * g_next, final_return)
        here = present[t]
        c = jnp.where(here, lr[t] * (g - v), 0.0)
        coef = coef.at[t].set(c)
        carry = (coef, jnp.where(here, g, g_next), jnp.where(here, v, v_next), seen | here)
        return carry, (jnp.where(here, v, 0.0), jnp.where(here, g, 0.0))

    init = (jnp.zeros(num, jnp.float32), final_return, jnp.float32(0.0), jnp.bool_(False))
    (coef, _, _, _), (values, targets) = jax.lax.scan(step, init, jnp.arange(num), reverse=True)
    return BackwardPass(coef=coef, values=values, targets=targets,
                        errors=jnp.where(present, targets - values, 0.0))


def _scatter(weights: Array, indices: Array, valid: Array, coef: Array) -> Array:
    """``weights`` plus ``coef[..., t]`` at every valid slot of ``indices [..., T, M]``."""
    add = jnp.where(valid, coef[..., None], 0.0)
    return weights.at[indices.reshape(-1)].add(add.reshape(-1))


def backward_update(weights: Array, indices: Array, valid: Array, present: Array, final_return: Array,
                    *, cfg: LinearTDConfig, overlap: Array | None = None, offset: Array | None = None) -> Array:
    """float32 [F]: ``weights`` after one game's backward TD(λ) pass (:func:`backward_pass`;
    shapes there)."""
    bp = backward_pass(weights, indices, valid, present, final_return, cfg=cfg, overlap=overlap, offset=offset)
    return _scatter(weights, indices, valid & present[:, None], bp.coef)


def sequential_update(weights: Array, indices: Array, valid: Array, present: Array, final_return: Array,
                      *, cfg: LinearTDConfig, offset: Array | None = None) -> tuple[Array, BackwardPass]:
    """``(weights float32 [F], the passes)``: a batch of sequences (``indices`` int32 [B, T, M],
    ``valid`` bool [B, T, M], ``present`` bool [B, T], ``final_return`` float32 [B], ``offset``
    float32 [B, T] or None; passes of [B, T] arrays) learned one after another, as the source learns one game at a time:
    sequence b's backward pass starts from the weights after sequences 0..b-1 (a ``lax.scan``
    over the batch, the weights updated in place). The games may be *played* in parallel with
    one set of weights; only their learning is sequential."""
    if offset is None:
        offset = jnp.zeros(present.shape, jnp.float32)

    def one(w, seq):
        i, v, p, r, c = seq
        bp = backward_pass(w, i, v, p, r, cfg=cfg, offset=c)
        return _scatter(w, i, v & p[:, None], bp.coef), bp

    return jax.lax.scan(one, weights, (indices, valid, present, final_return, offset))


# -- the learner for the chunked driver (train/algos/learner.py) ---------------------------------


@chex.dataclass(frozen=True)
class LinearTDCarry:
    weights: chex.Array   # float32 [F]
    games: chex.Array     # int32 []  games played so far
    updates: chex.Array   # int32 []


@chex.dataclass(frozen=True)
class Recorded:
    """One batch of games' records, per game and learning seat."""

    indices: chex.Array   # int32 [B, P, T, M]
    valid: chex.Array     # bool [B, P, T, M]
    present: chex.Array   # bool [B, P, T]
    offset: chex.Array    # float32 [B, P, T]  each state's known part of the value
    outcome: chex.Array   # float32 [B, P]
    overflow: chex.Array  # bool [B]  more than T states were marked (the later ones dropped)
    ended: chex.Array     # bool [B]  the game ended within max_steps
    actions: chex.Array   # int32 [B, max_steps]  the game's moves in order (-1 once it ended)


def play_and_record(env, weights, key, *, policy, opponent_policy, features, record, outcome,
                    learning_seats: tuple[int, ...], max_records: int, max_steps: int,
                    num_slots: int, offset=None) -> Recorded:
    """One game from ``env.init``: every seat in ``learning_seats`` moves by ``policy(weights,
    state, key)``, the others by ``opponent_policy(weights, state, key)`` (the same weights:
    self-play when it is ``policy``); at each state where ``record(state)`` is true (before the
    move), each learning seat's ``features(state, seat) -> (indices [M], valid [M])`` goes into
    the next of ``max_records`` rows, with ``offset(state, seat)`` (float32 [], 0 when None).
    ``outcome(final_state, seat)`` is each learning seat's return; ``actions`` the moves played
    (to check a game's seats on a replay). A ``lax.scan`` of ``max_steps`` steps (a finished
    game stays as it is)."""
    init_key, play_key = jax.random.split(key)
    state = env.init(init_key)
    seats = jnp.asarray(learning_seats, jnp.int32)
    num_seats = len(learning_seats)
    learning = jnp.zeros(env.num_players, jnp.bool_).at[seats].set(True)
    rows = (jnp.zeros((num_seats, max_records, num_slots), jnp.int32),
            jnp.zeros((num_seats, max_records, num_slots), jnp.bool_),
            jnp.zeros((num_seats, max_records), jnp.bool_),
            jnp.zeros((num_seats, max_records), jnp.float32))

    def step(carry, k):
        state, (idx, val, pres, off), count, over = carry
        live = ~(state.terminated | state.truncated)
        mark = live & record(state)
        fi, fv = jax.vmap(lambda s: features(state, s))(seats)            # [P, M]
        slot = jnp.minimum(count, max_records - 1)
        write = mark & (count < max_records)
        idx = jnp.where(write, idx.at[:, slot].set(fi.astype(jnp.int32)), idx)
        val = jnp.where(write, val.at[:, slot].set(fv), val)
        pres = jnp.where(write, pres.at[:, slot].set(True), pres)
        if offset is not None:
            known = jax.vmap(lambda s: jnp.asarray(offset(state, s), jnp.float32))(seats)   # [P]
            off = jnp.where(write, off.at[:, slot].set(known), off)
        over = over | (mark & (count >= max_records))
        count = count + mark.astype(jnp.int32)
        if opponent_policy is None:
            action = policy(weights, state, k)
        else:
            mine = learning[state.current_player]
            action = jnp.where(mine, policy(weights, state, k), opponent_policy(weights, state, k))
        nxt = env.step(state, action.astype(jnp.int32))
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(live, a, b), nxt, state)
        return (state, (idx, val, pres, off), count, over), jnp.where(live, action, -1).astype(jnp.int32)

    carry = (state, rows, jnp.int32(0), jnp.bool_(False))
    (state, (idx, val, pres, off), _, over), actions = jax.lax.scan(step, carry,
                                                                    jax.random.split(play_key, max_steps))
    out = jax.vmap(lambda s: jnp.asarray(outcome(state, s), jnp.float32))(seats)
    return Recorded(indices=idx, valid=val, present=pres, offset=off, outcome=out, overflow=over,
                    ended=state.terminated | state.truncated, actions=actions)


@dataclasses.dataclass(frozen=True)
class Parts:
    """What :func:`make` binds: the static pieces of an update (``make``'s arguments, checked)."""

    cfg: LinearTDConfig
    env: Any
    num_features: int
    num_slots: int
    max_records: int
    features: Callable[[Any, Any], tuple[Array, Array]]
    record: Callable[[Any], Array]
    outcome: Callable[[Any, Any], Array]
    policy: Callable[[Array, Any, Array], Array]
    games_per_update: int
    max_steps: int
    learning_seats: tuple[int, ...]
    opponent_policy: Callable[[Array, Any, Array], Array] | None   # None: every seat learns
    offset: Callable[[Any, Any], Array] | None


def init(parts: Parts, key: jax.Array) -> LinearTDCarry:
    return LinearTDCarry(weights=init_weights(key, parts.num_features), games=jnp.int32(0),
                         updates=jnp.int32(0))


def _play(parts: Parts, weights: Array, key: jax.Array) -> Recorded:
    return play_and_record(parts.env, weights, key, policy=parts.policy,
                           opponent_policy=parts.opponent_policy, features=parts.features,
                           record=parts.record, outcome=parts.outcome,
                           learning_seats=parts.learning_seats, max_records=parts.max_records,
                           max_steps=parts.max_steps, num_slots=parts.num_slots, offset=parts.offset)


def update(parts: Parts, carry: LinearTDCarry, key: jax.Array) -> tuple[LinearTDCarry, dict]:
    """One update: ``games_per_update`` games played, their sequences learned in turn (:func:`make`)."""
    games_per_update = parts.games_per_update
    rec = jax.vmap(lambda k: _play(parts, carry.weights, k))(jax.random.split(key, games_per_update))
    seq = lambda x: x.reshape(-1, *x.shape[2:])                       # noqa: E731  [B * P, ...]
    weights, bp = sequential_update(carry.weights, seq(rec.indices), seq(rec.valid), seq(rec.present),
                                    seq(rec.outcome), cfg=parts.cfg, offset=seq(rec.offset))
    present = seq(rec.present)
    metrics = {
        "outcome": rec.outcome.mean(),
        "abs_td_error": jnp.abs(bp.errors).sum() / jnp.maximum(present.sum(), 1),
        "records": present.sum(-1).astype(jnp.float32).mean(),
        "overflow": rec.overflow.astype(jnp.float32).mean(),
        "ended": rec.ended.astype(jnp.float32).mean(),
        "games": carry.games + games_per_update,
    }
    return LinearTDCarry(weights=weights, games=carry.games + games_per_update,
                         updates=carry.updates + 1), metrics


def make(cfg: LinearTDConfig, env, *, num_features: int, num_slots: int, max_records: int,
         features: Callable[[Any, Any], tuple[Array, Array]], record: Callable[[Any], Array],
         outcome: Callable[[Any, Any], Array], policy: Callable[[Array, Any, Array], Array],
         games_per_update: int, max_steps: int, learning_seats: Sequence[int] | None = None,
         opponent_policy: Callable[[Array, Any, Array], Array] | None = None,
         offset: Callable[[Any, Any], Array] | None = None) -> Learner:
    """A :class:`train.algos.learner.Learner` of TD(λ) on a linear value over sparse features,
    knowing nothing of the game.

    One update plays ``games_per_update`` games under ``vmap`` (:func:`play_and_record`): the
    seats in ``learning_seats`` (default: all, self-play) move by ``policy(weights, state,
    key)`` (the caller's: e.g. a search with :func:`value` at its leaves), the others by
    ``opponent_policy`` (required when some seat does not learn). Each learning seat's recorded
    states (at most ``max_records`` per game, static; more are dropped and counted in
    ``overflow``) and its ``outcome`` make one sequence; :func:`sequential_update` learns the
    batch's sequences one after another (backwards, TD(λ)).

    ``num_slots``: M, the length of ``features``' arrays. ``offset(state, seat) -> float32 []``:
    the known part of a recorded state's value (module docstring; None: 0). The carry is a
    :class:`LinearTDCarry`; ``params(carry)`` is the weights; the learner's policy is ``policy``.
    Metrics per update: ``outcome`` (mean over learning seats and games), ``abs_td_error``
    (mean |G_t - V_t| over recorded states), ``records`` (mean per sequence), ``overflow``
    (share of games), ``ended`` (share of games finished within ``max_steps``), ``games``.
    """
    for name, v in (("num_features", num_features), ("num_slots", num_slots), ("max_records", max_records),
                    ("games_per_update", games_per_update), ("max_steps", max_steps)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    seats = tuple(range(env.num_players)) if learning_seats is None else tuple(int(s) for s in learning_seats)
    if not seats or len(set(seats)) != len(seats) or not all(0 <= s < env.num_players for s in seats):
        raise ValueError(f"learning_seats must be distinct seats of 0..{env.num_players - 1}, got {learning_seats!r}")
    if len(seats) < env.num_players and opponent_policy is None:
        raise ValueError("opponent_policy is needed when some seat does not learn")
    if len(seats) == env.num_players:
        opponent_policy = None

    parts = Parts(cfg=cfg, env=env, num_features=num_features, num_slots=num_slots, max_records=max_records,
                  features=features, record=record, outcome=outcome, policy=policy,
                  games_per_update=games_per_update, max_steps=max_steps, learning_seats=seats,
                  opponent_policy=opponent_policy, offset=offset)
    return Learner(init=functools.partial(init, parts), update=functools.partial(update, parts),
                   policy=policy, params=operator.attrgetter("weights"))
