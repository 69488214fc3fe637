"""AlphaZero-style learning for any two-player zero-sum game of the contract, as in the Hex
source (Zhang, Meng & Yang 2020, sec. 1): a policy-value network, a search that uses it, and
a league of past models (``train/algos/league.py``). Nothing here names a game.
``update(carry, key)``: games (phase 1 random, labelled by UCT; phase 2 self-play against the
pool or the anchor), a replay buffer, SGD on the source's eq. (3) loss; the pool is changed
only by the pipeline between chunks. The steps, the loss, the contracts and the devices:
docs/learners.md.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from typing import Any, Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from jaxgames import rng
from jaxgames.core import Env, random_legal_action
from jaxgames.search import keys as key_lib
from jaxgames.search.symmetry import Symmetry, reverse_cells
from train.algos import league as league_lib
from train.algos import replay as replay_lib
from train.algos.learner import Learner
from train.common.mesh import BATCH, batch_mesh, shard_batch

__all__ = ["ANCHOR_GENERATION", "AZCarry", "AZConfig", "AlphaZero", "Games", "Matchup", "Moves",
           "Parts", "Played", "Position", "loss", "make", "paired_apply", "reverse_cells", "uct_anchor",
           "uct_labeller", "update", "win_rate_distribution"]

# search(params, states [B], keys [B]) -> out with .action [B], .action_weights [B, A]
Search = Callable[[Any, Any, jax.Array], Any]
# labeller(states [B], keys [B]) -> (policy targets float32 [B, A], values float32 [B] in [-1, 1])
Labeller = Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]
# anchor(states [B], keys [B]) -> actions int32 [B]  (a fixed self-play opponent)
Anchor = Callable[[Any, jax.Array], jax.Array]

ANCHOR_GENERATION = -2   # ``opponent_generation`` of an update played against the anchor
NO_OPPONENT = -1         # ... of a phase-1 update, or of self-play before any model is pooled
VALUE_TARGETS = ("result", "uct")


@dataclasses.dataclass(frozen=True)
class AZConfig:
    """The learner's hyper-parameters (the source's choices, or Keras's, as defaults)."""

    games_per_update: int = 32
    """Games played per update, in both phases (even: half with each colour)."""
    sgd_steps: int = 32
    """Minibatch steps per update (K)."""
    batch_size: int = 128
    """Positions per minibatch."""
    buffer_size: int = 20_000
    """Positions kept in the replay buffer (the newest)."""
    learning_rate: float = 1e-3
    """RMSprop step size (Keras's default; the source gives none)."""
    final_lr_fraction: float = 0.1
    """With a decaying step size, the fraction of it left at the end of the cosine."""
    rmsprop_decay: float = 0.9
    rmsprop_eps: float = 1e-7
    alpha: float = 0.5
    """Weight of the policy loss against the value loss (eq. (3))."""
    beta: float = 1e-4
    """L2 coefficient (eq. (3))."""
    phase1_simulations: int = 200
    """Plain-UCT simulations per phase-1 label."""
    phase1_value: str = "result"
    """Value target of a phase-1 position: result (the random game's, the source's) or uct
    (the labelling UCT search's root win rate, 2 W/N - 1 over all its simulations)."""
    sample_moves: int = 1_000_000
    """Self-play moves (by ``step_count``) that play the search's sampled action; later ones
    play its most likely action (AlphaZero: 30 moves of Go). The default samples every move."""
    anchor_fraction: float = 0.0
    """Probability that a self-play update's games are the newest model against plain UCT
    (anchor_simulations) instead of a pool model: an opponent outside the lineage, whose moves
    train the value head only. A lineage that meets only its own past models can learn to beat
    them without getting stronger (docs/lab/hex.md). 0: the source's pool alone."""
    anchor_simulations: int = 200
    """Simulations of the plain-UCT anchor (anchor_fraction)."""
    average_decay: float = 0.0
    """Polyak averaging: the model that plays and is evaluated is the moving average of the SGD
    iterates with this decay per SGD step (0: the last iterate, the source)."""

    def validate(self) -> None:
        for name in ("games_per_update", "sgd_steps", "batch_size", "buffer_size",
                     "phase1_simulations", "anchor_simulations"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.games_per_update % 2:
            raise ValueError(f"games_per_update must be even (half per colour), got {self.games_per_update}")
        if self.sample_moves < 0:
            raise ValueError(f"sample_moves must be >= 0, got {self.sample_moves}")
        if self.phase1_value not in VALUE_TARGETS:
            raise ValueError(f"phase1_value must be one of {', '.join(VALUE_TARGETS)}, got {self.phase1_value!r}")
        if not 0.0 <= self.anchor_fraction <= 1.0:
            raise ValueError(f"anchor_fraction must be in [0, 1], got {self.anchor_fraction}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if not 0.0 <= self.final_lr_fraction <= 1.0:
            raise ValueError(f"final_lr_fraction must be in [0, 1], got {self.final_lr_fraction}")
        if self.beta < 0 or self.learning_rate <= 0:
            raise ValueError("beta must be >= 0 and learning_rate > 0")
        if not 0.0 <= self.average_decay < 1.0:
            raise ValueError(f"average_decay must be in [0, 1), got {self.average_decay}")
        if not 0.0 <= self.rmsprop_decay < 1.0 or self.rmsprop_eps <= 0:
            raise ValueError("rmsprop_decay must be in [0, 1) and rmsprop_eps > 0")


@chex.dataclass(frozen=True)
class Position:
    """One row of the replay buffer."""

    obs: Any               # the mover's observation (any pytree of arrays)
    policy: jax.Array      # float32 [A]  policy target; all 0: none (the row trains the value only)
    legal: jax.Array       # bool [A]  legal actions
    value: jax.Array       # float32 []  value target from the mover's view, in [-1, 1]


@chex.dataclass(frozen=True)
class AZCarry:
    params: Any            # the SGD iterate
    average: Any           # the model: the iterates' moving average (``average_decay``; 0: params)
    opt_state: Any
    league: league_lib.League
    replay: replay_lib.Replay
    step: jax.Array        # int32 []  updates done
    games: jax.Array       # int32 []  games played (both phases)
    # int32 []  the anchor ladder's rung (``make``'s ``ladder``; the pipeline raises it between
    # chunks); None without a ladder, so such a carry keeps the layout of older checkpoints
    rung: jax.Array | None = None


@dataclasses.dataclass(frozen=True)
class Parts:
    """What :func:`make` binds: the static pieces every function of an update reads."""

    cfg: AZConfig
    env: Env
    apply_fn: Callable
    search: Search          # one model's parameters: the trained policy
    paired_search: Search   # two models' parameters stacked: self-play
    labeller: Labeller | None
    anchor: Anchor | None
    symmetry: Symmetry | None
    optimizer: optax.GradientTransformation
    max_moves: int
    phase1_updates: int
    ladder: tuple[Anchor, ...] = ()   # the anchor's rungs, one picked by the carry's ``rung``


class Matchup(NamedTuple):
    """What every game of a self-play update shares (replicated over the devices)."""

    newest: Any            # the newest model's parameters (the carry's average)
    opponent: Any          # the opponent's parameters, the same tree (a pool model, else the newest)
    vs_anchor: jax.Array   # bool []  the anchor plays the opponent's moves
    itself: jax.Array      # bool []  the pool is empty: the newest plays itself, both sides' targets kept
    rung: jax.Array        # int32 []  the anchor ladder's rung (0 without a ladder)


class Games(NamedTuple):
    """An update's games as :func:`on_devices` splits them (leaves ``[G, ...]``, or one device's share)."""

    states: Any            # the games' start states
    seats: jax.Array       # int32 [G]  the newest model's seat in each (:func:`newest_seats`)
    ids: jax.Array         # int32 [G]  each game's number in the whole batch (its keys)


class Moves(NamedTuple):
    """One move of every game (``g`` of them), what ``moves(states, keys)`` returns."""

    actions: jax.Array     # int32 [g]
    policy: jax.Array      # float32 [g, A]  the rows' policy targets (all 0: none)
    value: jax.Array       # float32 [g]  the rows' value targets; NaN: the game's result
    misrouted: jax.Array   # int32 []  movers searched with the other model, or not searched


class Played(NamedTuple):
    """The games of :func:`play_batch` (``g`` games, ``T = max_moves``)."""

    rows: Position         # leaves [T, g, ...]  the position before each move, targets filled in
    valid: jax.Array       # bool [T, g]  the move was played (its game had not ended)
    returns: jax.Array     # float32 [g, 2]  each seat's return
    ended: jax.Array       # bool [g]  the game ended within max_moves
    misrouted: jax.Array   # int32 [1]  summed over the moves (one entry per device once split)


@dataclasses.dataclass(frozen=True)
class AlphaZero(Learner):
    """A :class:`Learner` with its bound pieces and the loss exposed."""

    parts: Parts = None
    loss: Callable[[Any, Position], tuple[jax.Array, dict]] = None


# -- labels, anchor, loss -------------------------------------------------------------------


def win_rate_distribution(win_rates: jax.Array, visits: jax.Array, legal: jax.Array) -> jax.Array:
    """float32 [..., A]: the source's policy label: the root children's win rates normalised
    to sum to 1; if no child won anything, the visit distribution; if none was visited, uniform
    over the legal actions."""
    def norm(x):
        x = jnp.where(legal, x, 0.0).astype(jnp.float32)
        return x / jnp.maximum(x.sum(-1, keepdims=True), 1e-30)

    w, n, u = norm(win_rates), norm(visits.astype(jnp.float32)), norm(jnp.ones_like(win_rates))
    has_w = (jnp.where(legal, win_rates, 0) > 0).any(-1, keepdims=True)
    has_n = (jnp.where(legal, visits, 0) > 0).any(-1, keepdims=True)
    return jnp.where(has_w, w, jnp.where(has_n, n, u))


def _uct_searches(env: Env, num_simulations: int):
    """``searches(states [B], keys [B]) -> UCTOutput [B]``: plain UCT from every position."""
    from jaxgames.search.uct import uct_search

    return jax.vmap(lambda s, k: uct_search(env, s, k, num_simulations=num_simulations))


def uct_labeller(env: Env, num_simulations: int) -> Labeller:
    """Phase-1 labels from plain UCT (``jaxgames.search.uct``): the win-rate distribution and
    the root mover's win rate over all simulations on the [-1, 1] scale, ``2 W/N - 1``."""
    searches = _uct_searches(env, num_simulations)

    def label(states, keys):
        out = searches(states, key_lib.game_keys(keys, states.step_count.shape[0]))
        policy = win_rate_distribution(out.win_rates, out.visit_counts, states.legal_action_mask)
        return policy, 2.0 * out.value - 1.0

    return label


def uct_anchor(env: Env, num_simulations: int) -> Anchor:
    """Plain UCT (``jaxgames.search.uct``) with ``num_simulations`` as a self-play anchor."""
    searches = _uct_searches(env, num_simulations)
    return lambda states, keys: searches(states, keys).action.astype(jnp.int32)


def loss(cfg: AZConfig, apply_fn, params, batch: Position) -> tuple[jax.Array, dict]:
    """Eq. (3) on a minibatch; ``(L, {"loss", "value_loss", "policy_loss", "l2"})``."""
    logits, v = apply_fn(params, batch.obs)
    logp = jax.nn.log_softmax(jnp.where(batch.legal, logits, -1e9), axis=-1) / math.log(2.0)
    ce = -(batch.policy * jnp.where(batch.legal, logp, 0.0)).sum(-1)
    policy_loss = ce.sum() / jnp.maximum((batch.policy.sum(-1) > 0).sum(), 1)
    value_loss = (((v + 1.0) / 2.0 - (batch.value + 1.0) / 2.0) ** 2).mean()
    l2 = sum(jnp.sum(jnp.square(p)) for p in jax.tree_util.tree_leaves(params))
    total = (1.0 - cfg.alpha) * value_loss + cfg.alpha * policy_loss + cfg.beta * l2
    return total, {"loss": total, "value_loss": value_loss, "policy_loss": policy_loss, "l2": l2}


def paired_apply(apply_fn):
    """``apply(stacked_params [2, ...], obs [B, ...])``: the first half of the batch through
    model 0, the second through model 1 (``B`` even); the network of the self-play search."""
    def apply(stacked_params, obs):
        # two calls, not a vmap over the stacked parameters: vmapped, every convolution becomes
        # a grouped one, 2.6x slower on XLA:CPU for the source's network (measured at batch 128)
        half = jax.tree_util.tree_leaves(obs)[0].shape[0] // 2
        outs = [apply_fn(jax.tree_util.tree_map(lambda p, i=i: p[i], stacked_params),
                         jax.tree_util.tree_map(lambda x, i=i: x[i * half:(i + 1) * half], obs))
                for i in (0, 1)]
        return jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), *outs)

    return apply


def on_devices(play):
    """``play(shared, games, key) -> Played`` (``games``: :class:`Games`, leaves ``[G, ...]``;
    ``shared``: a :class:`Matchup` or None) with the games split over the mesh's devices, each
    playing its share on its own (``shard_map``): a search's many small operations then run on
    every core at once. XLA's automatic partitioning of the batched
    search ran them one device at a time (one full-preset Hex update: 33 s on 2 CPU devices
    that way, 21.5 s on one device, 15 s split here). One device: ``play`` itself."""
    mesh = batch_mesh()
    if mesh.size == 1:
        return play
    games = P(BATCH)
    return jax.shard_map(play, mesh=mesh, in_specs=(P(), games, P()),
                         out_specs=Played(rows=P(None, BATCH), valid=P(None, BATCH), returns=games,
                                          ended=games, misrouted=games),
                         check_vma=False)


def _take(tree, idx):
    return jax.tree_util.tree_map(lambda x: x[idx], tree)


# -- one update -----------------------------------------------------------------------------


def init(parts: Parts, init_fn, key: jax.Array, *, pool_capacity: int, num_fixed: int) -> AZCarry:
    params = init_fn(key)
    league = league_lib.empty(params, capacity=pool_capacity, num_fixed=num_fixed)
    if parts.phase1_updates == 0:   # from scratch: the first opponent is the initial network
        league = league_lib.promote(league, params)
    state = parts.env.init(jax.random.key(0))
    row = Position(obs=state.observation, policy=jnp.zeros(parts.env.num_actions, jnp.float32),
                   legal=jnp.zeros(parts.env.num_actions, bool), value=jnp.float32(0))
    # a copy: the same array in two leaves of a carry that a chunk donates is donated twice
    return AZCarry(params=params, average=jax.tree_util.tree_map(jnp.copy, params),
                   opt_state=parts.optimizer.init(params), league=league,
                   replay=replay_lib.empty(row, parts.cfg.buffer_size),
                   step=jnp.int32(0), games=jnp.int32(0), rung=jnp.int32(0) if parts.ladder else None)


def newest_seats(parts: Parts) -> jax.Array:
    """int32 [G]: the newest model's seat in each game, alternating, so that every device's
    contiguous share of the games has as many of each seat."""
    return jnp.arange(parts.cfg.games_per_update, dtype=jnp.int32) % 2


def play_batch(parts: Parts, moves, states0, ids: jax.Array, key: jax.Array):
    """Scan ``max_moves`` moves of the games ``states0`` [g] (all, or one device's share;
    ``ids`` [g] their numbers in the whole batch) with ``moves(states, keys [g]) -> Moves``.
    Each game draws from its own keys (the move's key folded with its number), so it plays the
    same on any number of devices. Returns :class:`Played`, the rows' value targets filled in."""
    g, A = states0.step_count.shape[0], parts.env.num_actions

    def no_moves(states, keys):
        return Moves(actions=jnp.zeros(g, jnp.int32), policy=jnp.zeros((g, A), jnp.float32),
                     value=jnp.full(g, jnp.nan, jnp.float32), misrouted=jnp.int32(0))

    def body(carry, key):
        states, returns = carry
        k_move, k_step = (jax.vmap(lambda i, k=k: jax.random.fold_in(k, i))(ids)
                          for k in rng.split(key, 2))
        done = states.terminated | states.truncated
        # once every game is over (most end well before max_moves) the search is skipped
        move = jax.lax.cond(done.all(), no_moves, moves, states, k_move)
        row = Position(obs=states.observation, policy=move.policy, legal=states.legal_action_mask,
                       value=move.value)
        nxt = jax.vmap(parts.env.step)(states, move.actions, k_step)
        return (nxt, returns + nxt.rewards), (row, states.current_player, ~done, move.misrouted)

    (final, returns), (rows, movers, valid, misrouted) = jax.lax.scan(
        body, (states0, jnp.zeros((g, 2), jnp.float32)), rng.split(key, parts.max_moves))
    result = jnp.take_along_axis(returns[None], movers[..., None], axis=-1)[..., 0]  # [T, g]
    value = jnp.where(jnp.isnan(rows.value), result, rows.value)
    rows = rows.replace(value=jnp.clip(value, -1.0, 1.0))
    return Played(rows=rows, valid=valid, returns=returns, ended=final.terminated | final.truncated,
                  misrouted=misrouted.sum()[None])


def phase1_moves(parts: Parts, states, keys) -> Moves:
    """Uniformly random moves, every position labelled by the labeller (the source's sec. 1.2)."""
    k_act, k_label = key_lib.split(keys)
    actions = jax.vmap(random_legal_action)(states, k_act)
    policy, value = parts.labeller(states, k_label)
    if parts.cfg.phase1_value == "result":
        value = jnp.full(actions.shape, jnp.nan, jnp.float32)
    return Moves(actions=actions, policy=policy, value=value.astype(jnp.float32), misrouted=jnp.int32(0))


def searched_moves(parts: Parts, both, states, keys, wants_new, wants_old):
    """``(actions [g], policy [g, A], misrouted int32 [])`` of one paired search over the
    movers: the newest model's in the search's first half, the opponent's in the second; a
    half-size search once each side's movers fit in a quarter of the batch. ``misrouted``: the
    movers searched with the other model's parameters, or not searched."""
    g = states.step_count.shape[0]
    done = states.terminated | states.truncated
    i = jnp.arange(g)

    def first(wants, tie, n):   # the movers, then finished games, then the rest
        return jnp.argsort(jnp.where(wants, 0, jnp.where(done, 1, 2)) * g + tie)[:n]

    def searched(idx):
        out = parts.paired_search(both, _take(states, idx), keys[idx])
        h = idx.shape[0] // 2
        in_new, in_old = jnp.zeros(g, bool).at[idx[:h]].set(True), jnp.zeros(g, bool).at[idx[h:]].set(True)
        misrouted = (wants_new & ~in_new).sum() + (wants_old & ~in_old).sum()
        actions = jnp.zeros(g, jnp.int32).at[idx].set(out.action.astype(jnp.int32))
        policy = jnp.zeros((g, parts.env.num_actions), jnp.float32).at[idx].set(out.action_weights)
        return actions, policy, misrouted.astype(jnp.int32)

    whole = first(wants_new, i, g)   # the newest's movers, then the rest in order
    q = g // 4
    if q == 0:
        return searched(whole)
    # each model's movers, then finished games, to fill its quarter (taken from opposite
    # ends, so no game is searched twice)
    half = jnp.concatenate([first(wants_new, i, q), first(wants_old, g - 1 - i, q)])
    fits = (wants_new.sum() <= q) & (wants_old.sum() <= q)
    return jax.lax.cond(fits, searched, lambda _: searched(whole), half)


def self_play_moves(parts: Parts, shared: Matchup, seats, states, keys) -> Moves:
    """One move of every self-play game: the newest model's and the pool opponent's movers by
    the paired search, the anchor's by the anchor; targets as the module doc says."""
    g = states.step_count.shape[0]
    k_search, k_anchor = key_lib.split(keys)
    done = states.terminated | states.truncated
    wants_new = (states.current_player == seats) & ~done
    wants_old = (states.current_player != seats) & ~done
    both = jax.tree_util.tree_map(lambda p, q: jnp.stack([p, q]), shared.newest, shared.opponent)
    actions, policy, misrouted = searched_moves(parts, both, states, k_search, wants_new, wants_old)
    best = jnp.argmax(jnp.where(states.legal_action_mask, policy, -jnp.inf), axis=-1).astype(jnp.int32)
    actions = jnp.where(states.step_count < parts.cfg.sample_moves, actions, best)
    if parts.anchor is not None or (parts.ladder and parts.cfg.anchor_fraction > 0):
        # the anchor replaces the opponent's moves (its half of the search ran on the newest
        # model's network: a second compiled search would cost more than it saves); it
        # searches half the batch, the opponent's movers first
        def anchored(actions):
            idx = jnp.argsort(jnp.where(wants_old, 0, 1), stable=True)[:g // 2]
            moves = jnp.zeros(g, jnp.int32).at[idx].set(anchor_moves(parts, shared.rung, _take(states, idx),
                                                                     k_anchor[idx]))
            return jnp.where(wants_old, moves, actions)
        actions = jax.lax.cond(shared.vs_anchor, anchored, lambda a: a, actions)
    # the newest model's targets only (both sides' while the pool is empty and it plays itself)
    policy = jnp.where((wants_new | shared.itself)[:, None], policy, 0.0)
    return Moves(actions=actions, policy=policy, value=jnp.full(g, jnp.nan, jnp.float32), misrouted=misrouted)


def anchor_moves(parts: Parts, rung: jax.Array, states, keys) -> jax.Array:
    """int32 [b]: the anchor's moves, on the ladder's ``rung`` where there is a ladder. Each
    rung is its own search (a plain-UCT search's simulation count is static: its tree's size and
    its loop's length), so the update holds one branch per rung, all compiled once with it."""
    if not parts.ladder:
        return parts.anchor(states, keys)
    return jax.lax.switch(rung, parts.ladder, states, keys)


def pick_opponent(parts: Parts, carry: AZCarry, k_opponent, k_anchor) -> tuple[Matchup, jax.Array]:
    """``(matchup, opponent generation int32 [])``: a pool model drawn uniformly (the source),
    or the anchor with probability ``anchor_fraction``; the newest model itself while the pool
    is empty (a phase-1-free run's first update)."""
    slot = league_lib.sample(carry.league, k_opponent)
    has = carry.league.size > 0
    vs_anchor = jnp.bool_(False)
    if parts.cfg.anchor_fraction > 0:
        vs_anchor = jax.random.bernoulli(k_anchor, parts.cfg.anchor_fraction)
    opponent = jax.tree_util.tree_map(lambda p, q: jnp.where(has & ~vs_anchor, p, q),
                                      league_lib.get(carry.league, slot), carry.average)
    generation = jnp.where(vs_anchor, ANCHOR_GENERATION,
                           jnp.where(has, carry.league.ids[slot], NO_OPPONENT))
    matchup = Matchup(newest=carry.average, opponent=opponent, vs_anchor=vs_anchor, itself=~has & ~vs_anchor,
                      rung=jnp.int32(0) if carry.rung is None else carry.rung)
    return matchup, generation


def games_data(parts: Parts, carry: AZCarry, k_opponent, k_anchor, k_start, k_play, *, phase1: bool):
    """One update's games: ``(rows [T * G], valid [T * G], stats)``."""
    G = parts.cfg.games_per_update
    states0 = shard_batch(jax.vmap(parts.env.init)(rng.split(k_start, G)))
    seats, ids = newest_seats(parts), jnp.arange(G, dtype=jnp.int32)
    if phase1:
        shared, generation = None, jnp.int32(NO_OPPONENT)
    else:
        shared, generation = pick_opponent(parts, carry, k_opponent, k_anchor)

    def play(shared: Matchup | None, games: Games, key) -> Played:   # one device's share
        moves = (functools.partial(phase1_moves, parts) if phase1
                 else functools.partial(self_play_moves, parts, shared, games.seats))
        return play_batch(parts, moves, games.states, games.ids, key)

    played = on_devices(play)(shared, Games(states=states0, seats=seats, ids=ids), k_play)
    rows = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), played.rows)
    newest_return = jnp.take_along_axis(played.returns, seats[:, None], axis=1)[:, 0]
    stats = {"newest_score": jnp.float32(0) if phase1 else newest_return.mean(),
             "misrouted": played.misrouted.sum(), "ended": played.ended.mean(),
             "opponent_generation": generation}
    return rows, played.valid.reshape(-1), stats


def augment(parts: Parts, batch: Position, key) -> Position:
    """Each row replaced by its image under ``symmetry`` with probability 1/2."""
    if parts.symmetry is None:
        return batch
    flip = jax.random.bernoulli(key, 0.5, (batch.value.shape[0],))

    def one(obs, policy, legal, f):
        o2, p2 = parts.symmetry(obs, policy)
        _, l2 = parts.symmetry(obs, legal)
        pick = lambda a, b: jnp.where(f, b, a)  # noqa: E731
        return jax.tree_util.tree_map(pick, obs, o2), pick(policy, p2), pick(legal, l2)

    obs, policy, legal = jax.vmap(one)(batch.obs, batch.policy, batch.legal, flip)
    return batch.replace(obs=obs, policy=policy, legal=legal)


def sgd_step(parts: Parts, replay, state, key):
    """One RMSprop step on a minibatch from ``replay``; ``state``: (params, opt_state, average)."""
    params, opt_state, average = state
    k_sample, k_augment = jax.random.split(key)
    batch = augment(parts, shard_batch(replay_lib.sample(replay, k_sample, parts.cfg.batch_size)), k_augment)
    grads, aux = jax.grad(lambda p: loss(parts.cfg, parts.apply_fn, p, batch), has_aux=True)(params)
    updates, opt_state = parts.optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    if parts.cfg.average_decay:
        average = optax.incremental_update(params, average, 1.0 - parts.cfg.average_decay)
    else:
        average = params
    return (params, opt_state, average), aux


def update(parts: Parts, carry: AZCarry, key: jax.Array) -> tuple[AZCarry, dict]:
    """One update: an update's games (phase 1 or self-play), the replay write, SGD."""
    k_opponent, k_anchor, k_start, k_play, k_sgd = jax.random.split(key, 5)
    data = lambda phase1: lambda c: games_data(parts, c, k_opponent, k_anchor, k_start, k_play,  # noqa: E731
                                               phase1=phase1)
    if parts.phase1_updates > 0:
        rows, valid, stats = jax.lax.cond(carry.step < parts.phase1_updates, data(True), data(False), carry)
    else:
        rows, valid, stats = data(False)(carry)
    replay = replay_lib.write(carry.replay, rows, valid)
    (params, opt_state, average), aux = jax.lax.scan(
        lambda state, k: sgd_step(parts, replay, state, k),
        (carry.params, carry.opt_state, carry.average), jax.random.split(k_sgd, parts.cfg.sgd_steps))
    carry = carry.replace(params=params, average=average, opt_state=opt_state, replay=replay,
                          step=carry.step + 1, games=carry.games + parts.cfg.games_per_update)
    metrics = {k: v.mean() for k, v in aux.items()}
    metrics.update(stats, positions=valid.sum(dtype=jnp.int32), buffer_size=replay.size,
                   phase=jnp.where(carry.step <= parts.phase1_updates, 1, 2).astype(jnp.int32),
                   games=carry.games)
    return carry, metrics


def policy(parts: Parts, params, state, key) -> jax.Array:
    """The trained policy for the arena: one position, the search's action."""
    one = jax.tree_util.tree_map(lambda x: x[None], state)
    return parts.search(params, one, key).action[0].astype(jnp.int32)


def make(cfg: AZConfig, env: Env, net, make_search: Callable[[Callable], Search], *, max_moves: int,
         pool_capacity: int, num_fixed: int = 1, phase1_updates: int = 0, decay_updates: int = 0,
         symmetry: Symmetry | None = None, labeller: Labeller | None = None,
         anchor: Anchor | None = None, ladder: tuple[int, ...] = ()) -> AlphaZero:
    """The AlphaZero learner of ``env`` (two players, zero-sum, deterministic).

    Args:
      net: ``(init_fn, apply_fn)`` (e.g. ``network.make(n)[1:]``).
      make_search: ``make_search(apply_fn) -> search`` (module doc): built on ``apply_fn`` for
        the trained policy and on :func:`paired_apply` of it for self-play.
      max_moves: the game's longest (Hex: n * n); a game is cut there.
      pool_capacity: models the league's pool keeps (the oldest replaced when full);
        ``num_fixed``: fixed players in its results table (index 0 anchors the Elo scale).
      phase1_updates: updates of phase 1 before self-play (0: from scratch, the initial
        network the first pool model); ``decay_updates``: updates over which the step size
        falls along a cosine to ``cfg.final_lr_fraction`` of itself (0: constant).
      symmetry: ``symmetry(obs, action_vector) -> (obs, action_vector)`` for augmentation
        (e.g. :func:`reverse_cells`); None: none.
      labeller: phase-1 labels (default plain UCT with ``cfg.phase1_simulations``).
      anchor: the ``anchor_fraction`` opponent (default plain UCT with ``cfg.anchor_simulations``).
      ladder: plain-UCT simulations of a rising anchor's rungs, ascending (empty: the one
        ``anchor``): the carry's ``rung`` (0 at first) says which plays; the pipeline raises it
        between chunks (``carry.replace(rung=...)``).
    """
    cfg.validate()
    if env.num_players != 2:
        raise ValueError(f"AlphaZero here is for two-player games; {env.id} has {env.num_players}")
    for name, value in (("max_moves", max_moves), ("pool_capacity", pool_capacity)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if phase1_updates < 0 or decay_updates < 0:
        raise ValueError("phase1_updates and decay_updates must be >= 0")
    init_fn, apply_fn = net[0], net[1]
    step_size = cfg.learning_rate
    if decay_updates:
        step_size = optax.cosine_decay_schedule(cfg.learning_rate, decay_updates * cfg.sgd_steps,
                                                alpha=cfg.final_lr_fraction)
    if labeller is None and phase1_updates > 0:
        labeller = uct_labeller(env, cfg.phase1_simulations)
    if anchor is None and cfg.anchor_fraction > 0 and not ladder:
        anchor = uct_anchor(env, cfg.anchor_simulations)
    if any(s < 1 for s in ladder) or any(b <= a for a, b in zip(ladder, ladder[1:])):
        raise ValueError(f"ladder must be ascending simulation counts >= 1, got {tuple(ladder)}")
    rungs = tuple(uct_anchor(env, s) for s in ladder)
    parts = Parts(cfg=cfg, env=env, apply_fn=apply_fn, search=make_search(apply_fn),
                  paired_search=make_search(paired_apply(apply_fn)), labeller=labeller,
                  anchor=anchor if cfg.anchor_fraction > 0 else None, symmetry=symmetry,
                  optimizer=optax.rmsprop(step_size, decay=cfg.rmsprop_decay, eps=cfg.rmsprop_eps),
                  max_moves=max_moves, phase1_updates=phase1_updates, ladder=rungs)
    return AlphaZero(
        init=functools.partial(init, parts, init_fn, pool_capacity=pool_capacity, num_fixed=num_fixed),
        update=functools.partial(update, parts), policy=functools.partial(policy, parts),
        params=operator.attrgetter("average"), parts=parts, loss=functools.partial(loss, cfg, apply_fn))
