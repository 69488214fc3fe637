"""The league of a self-play run: an opponent pool of past models, the results table between
its members and fixed players, their Elo, Best-K opponents and promotion. No game is named
here: Hex's pool of past models uses it, and so will hold'em's Best-K self-play and Hearts.

A :class:`League` lives in the learner's carry, so it goes through ``jit`` and ``lax.scan``
and is checkpointed with everything else (``--resume`` stays exact). It holds:

- the **pool**: up to ``capacity`` parameter sets of one network, every leaf ``[capacity, ...]``;
  when full, promotion overwrites the oldest model (a ring buffer). Each slot remembers the
  generation of its model (``ids``: 0 for the first model ever promoted), so results and
  ratings follow a model whatever slot it sits in.
- the **results table** ``points`` / ``played`` ``[F + capacity, F + capacity]``: rows 0..F-1
  are the fixed players outside the lineage (a baseline bot, plain search: the evaluation's
  opponent, a self-play anchor), row ``F + s`` the model in pool slot ``s``. Results of any game
  become points for Elo: a win 1, a tie 1/2, a loss 0, per game (or per duplicate deal).
  Promotion into a slot clears its row and column: the model that sat there is gone.
- the **ratings** of the pool's slots, Elo with fixed player 0 at 0 (:func:`rate`), which
  Best-K sampling (:func:`sample_best_k`, AlphaHoldem's) draws from.

In jit (the learner's update): :func:`sample`, :func:`sample_best_k`, :func:`get`. Between
chunks (the driver's hook, in Python on host arrays): :func:`after_round`, which records the
newest model's results, plays it against the most recent pool models, promotes it and rates
every member; one call per round, the same for every game.

    league = league_lib.empty(params, capacity=16, num_fixed=1)
    slot = league_lib.sample(league, key)                   # int32 [] (in jit)
    opponent = league_lib.get(league, slot)                 # params of that model
    league, info = league_lib.after_round(league, params, fixed_returns={0: returns},
                                          play=pool_games, opponents=4, key=key)

Exploiters (AlphaStar's main exploiters; the section below): :class:`Exploiters` in the carry,
:func:`train_exploiter` in jit, :func:`exploiter_round` between chunks.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.ratings import elo

__all__ = ["UNRATED", "Exploiters", "League", "WithExploiters", "after_round", "best_k_mask", "elo_list", "empty",
           "exploiter_margin", "exploiter_round", "get", "league_of", "points_of", "promote", "rate",
           "recent_slots", "record", "sample", "sample_best_k", "sample_exploiter", "start_exploiters",
           "train_exploiter"]

#: the rating of a model not rated yet: below any Elo, and finite, since a training carry
#: with a non-finite value is taken for a diverged run
UNRATED = -1e9

# play(newest_params, other_params, key) -> returns float [G] of the newest model, one per game
PoolGames = Callable[[Any, Any, jax.Array], Any]


@chex.dataclass(frozen=True)
class League:
    params: Any          # pytree, every leaf [capacity, ...]  the pool's models
    size: jax.Array      # int32 []  filled slots (0 .. capacity)
    next: jax.Array      # int32 []  the slot the next promotion writes (the oldest when full)
    ids: jax.Array       # int32 [capacity]  generation of each slot's model, -1 empty
    added: jax.Array     # int32 []  models ever promoted (the next model's generation)
    points: jax.Array    # float32 [F + capacity, F + capacity]  points of row against column
    played: jax.Array    # float32 [F + capacity, F + capacity]  games of row against column
    ratings: jax.Array   # float32 [capacity]  Elo of each slot's model, UNRATED until rated

    @property
    def capacity(self) -> int:
        return self.ids.shape[-1]

    @property
    def num_fixed(self) -> int:
        return self.points.shape[-1] - self.capacity


def empty(params_like: Any, *, capacity: int, num_fixed: int = 1) -> League:
    """An empty league for parameters shaped like ``params_like``, with ``capacity`` pool
    slots and ``num_fixed`` fixed players in the results table."""
    if int(capacity) < 1:
        raise ValueError(f"pool capacity must be >= 1, got {capacity}")
    if int(num_fixed) < 1:
        raise ValueError(f"num_fixed must be >= 1 (player 0 anchors the Elo scale), got {num_fixed}")
    c, m = int(capacity), int(capacity) + int(num_fixed)
    stacked = jax.tree_util.tree_map(
        lambda x: jnp.zeros((c,) + jnp.shape(x), jnp.asarray(x).dtype), params_like)
    return League(params=stacked, size=jnp.int32(0), next=jnp.int32(0),
                  ids=jnp.full((c,), -1, jnp.int32), added=jnp.int32(0),
                  points=jnp.zeros((m, m), jnp.float32), played=jnp.zeros((m, m), jnp.float32),
                  ratings=jnp.full((c,), UNRATED, jnp.float32))


def promote(league: League, params: Any) -> League:
    """``league`` with ``params`` in slot ``next`` (a free slot, or the oldest model's when
    full), that slot's results cleared and its rating unset. Jittable."""
    i = league.next
    stacked = jax.tree_util.tree_map(
        lambda s, x: jax.lax.dynamic_update_index_in_dim(s, jnp.asarray(x, s.dtype), i, 0),
        league.params, params)
    row = league.num_fixed + i
    keep = (jnp.arange(league.points.shape[0]) != row).astype(jnp.float32)
    mask = keep[:, None] * keep[None, :]
    return league.replace(params=stacked, size=jnp.minimum(league.size + 1, league.capacity),
                          next=(i + 1) % league.capacity, ids=league.ids.at[i].set(league.added),
                          added=league.added + 1, points=league.points * mask,
                          played=league.played * mask, ratings=league.ratings.at[i].set(UNRATED))


#: promote as one program, for the host hook: run op by op it compiled every primitive of every
#: parameter shape alone (about 40 small programs, 2-5 s of a tiny run's start)
_promote_compiled = jax.jit(promote)


def get(league: League, slot: jax.Array | int) -> Any:
    """The parameters in ``slot`` (int, may be traced)."""
    return jax.tree_util.tree_map(lambda s: jax.lax.dynamic_index_in_dim(s, slot, 0, keepdims=False),
                                  league.params)


def _filled(league: League) -> jax.Array:
    return jnp.arange(league.capacity) < league.size


def _pick(mask: jax.Array, key: jax.Array) -> jax.Array:
    """Uniform index among the True entries of ``mask`` [C] (0 when none)."""
    count = mask.sum(dtype=jnp.int32)
    k = jax.random.randint(key, (), 0, jnp.maximum(count, 1))
    return jnp.argmax(jnp.cumsum(mask, dtype=jnp.int32) > k).astype(jnp.int32)


def sample(league: League, key: jax.Array) -> jax.Array:
    """int32 []: a slot drawn uniformly among the filled ones (0 in an empty pool): the Hex
    source's opponent."""
    return _pick(_filled(league), key)


def best_k_mask(league: League, k: jax.Array | int) -> jax.Array:
    """bool [capacity]: the ``k`` filled slots of highest rating (all filled slots when fewer
    than ``k``). Ties go to the newer model (higher generation)."""
    full = _filled(league)
    r = jnp.where(full, league.ratings.astype(jnp.float32), -jnp.inf)
    gen = league.ids
    # rank of slot i = filled slots that come before it: higher rating, or equal and newer
    before = (r[None, :] > r[:, None]) | ((r[None, :] == r[:, None]) & (gen[None, :] > gen[:, None]))
    rank = (before & full[None, :]).sum(1)
    return full & (rank < k)


def sample_best_k(league: League, k: jax.Array | int, key: jax.Array) -> jax.Array:
    """int32 []: a slot drawn uniformly among the ``k`` best rated (AlphaHoldem's Best-K)."""
    return _pick(best_k_mask(league, k), key)


# -- between chunks, on the host ------------------------------------------------------------


def points_of(returns: Any) -> np.ndarray:
    """float [G]: a player's points per game from its returns: win 1, tie 1/2, loss 0 (the
    sign of the return: chips in hold'em, +-1 in Hex, per game or per duplicate deal)."""
    r = np.asarray(returns, np.float64)
    return (r > 0) + 0.5 * (r == 0)


def record(league: League, a: int, b: int, returns: Any) -> League:
    """``league`` with the games of table row ``a`` against row ``b`` added, ``returns`` [G]
    from ``a``'s view."""
    pts = points_of(returns)
    points, played = np.array(league.points), np.array(league.played)
    points[a, b] += pts.sum()
    points[b, a] += len(pts) - pts.sum()
    played[a, b] += len(pts)
    played[b, a] += len(pts)
    return league.replace(points=points, played=played)


def elo_list(league: League) -> dict[int, float]:
    """{generation: Elo} of the pool models that played, and {-1 - i: Elo} of fixed player i;
    fixed player 0 at 0. Empty until player 0 and another have met."""
    played, points = np.asarray(league.played), np.asarray(league.points)
    met = np.nonzero(played.sum(1) > 0)[0]
    if len(met) < 2 or 0 not in met:
        return {}
    sub = np.ix_(met, met)
    r = elo(points[sub], played[sub], prior_games=1.0, anchor=0)
    f, ids = league.num_fixed, np.asarray(league.ids)
    return {(-1 - int(i) if i < f else int(ids[i - f])): float(x) for i, x in zip(met, r)}


def rate(league: League) -> League:
    """``league`` with every slot's rating set from :func:`elo_list` (UNRATED if unmet)."""
    ratings = elo_list(league)
    slots = np.array([ratings.get(int(g), UNRATED) if g >= 0 else UNRATED
                      for g in np.asarray(league.ids)], np.float32)
    return league.replace(ratings=slots)


def recent_slots(league: League, cap: int, *, skip: int | None = None) -> list[int]:
    """The filled slots, newest model first, the ``cap`` most recent (all when ``cap`` is 0),
    leaving out slot ``skip``."""
    ids = np.asarray(league.ids)
    slots = sorted((s for s in range(int(league.size)) if s != skip), key=lambda s: -int(ids[s]))
    return slots[:cap or None]


def after_round(league: League, newest: Any, *, fixed_returns: Mapping[int, Any] | None = None,
                play: PoolGames | None = None, opponents: int = 0,
                key: jax.Array) -> tuple[League, dict]:
    """The league's between-chunk hook: promote ``newest`` (its parameters) into the pool,
    record its results against fixed players (``fixed_returns``: {fixed index: returns [G]}
    from its view, e.g. the round's evaluation), play it against the ``opponents`` most
    recent other pool models (0: all) with ``play(newest, other, key) -> returns [G]``, and
    rate every member. Works on host arrays; deterministic in its inputs, so a resumed run
    decides the same. Returns the league and ``{"generation", "elo"}`` of the newest model."""
    slot = int(league.next)
    league = jax.tree_util.tree_map(np.asarray, _promote_compiled(league, newest))
    me = league.num_fixed + slot
    for fixed, returns in (fixed_returns or {}).items():
        league = record(league, me, int(fixed), returns)
    if play is not None:
        for other in recent_slots(league, opponents, skip=slot):
            row = league.num_fixed + other
            other_params = jax.tree_util.tree_map(lambda stacked: stacked[other], league.params)   # host arrays
            returns = play(newest, other_params, jax.random.fold_in(key, row))
            league = record(league, me, row, returns)
    league = rate(league)
    generation = int(league.ids[slot])
    return league, {"generation": generation, "elo": elo_list(league).get(generation)}


# -- exploiters (AlphaStar's main exploiters) -------------------------------------------------
#
# A second learner, the exploiter, trains only against a frozen copy of the newest main model
# (its ``target``, set again after every round). When its training returns against the target
# over a round clear ``margin`` (the lower end of their 95% interval above it), or after
# ``budget`` rounds whatever it reached, it is frozen into a pool of its own (a League, the
# same ring buffer) that the main learner draws a configured share of its opponents from, and
# the exploiter starts again from the newest main model's parameters (a fresh optimizer state).
#
# Its own pool, not the main league's: Best-K draws the main's opponents by Elo against the
# anchors and the lineage, and an exploiter's strength is against one model only (its Elo
# there says little), so mixed in it would be drawn by a rating that does not measure it; apart,
# the main agent meets exploiters at exactly the configured share.
#
# The restart from the main model rather than from scratch: in a game as large as hold'em a
# fresh network needs about the main agent's whole training to play at its level at all, so
# within a budget of a few rounds it would only ever be frozen as a weak player; started from
# the main model it already plays as well as its target (margin 0) and its training moves it
# straight towards a best response to it, the holes the league should show the main agent.
# (AlphaStar restarts its main exploiters from the supervised agent: its "fresh" is a player of
# the game, which a run here does not have.)
#
# Everything that changes is in the training carry (``Exploiters``), so ``--resume`` is exact;
# the decision (freeze or go on) is taken between chunks on host arrays, deterministic in them.


@chex.dataclass(frozen=True)
class Exploiters:
    learner: Any         # the exploiter in training: its learner's carry (params, optimizer state ...)
    target: Any          # pytree  parameters of the frozen main model it trains against
    pool: League         # the frozen exploiters the main learner faces (a ring buffer of its own)
    rounds: jax.Array    # int32 []  rounds trained since its (re)start
    updates: jax.Array   # float32 []  updates this round that finished a game (the samples below)
    total: jax.Array     # float32 []  sum of those updates' mean returns against the target
    squares: jax.Array   # float32 []  sum of their squares


@chex.dataclass(frozen=True)
class WithExploiters:
    """A main learner's pool when exploiters hunt it: the league of its own lineage and the
    exploiters."""

    league: League
    exploiters: Exploiters


def league_of(pool: Any) -> League:
    """The main lineage's :class:`League` of a pool, with or without exploiters."""
    return pool.league if isinstance(pool, WithExploiters) else pool


def start_exploiters(learner: Any, target: Any, *, capacity: int) -> Exploiters:
    """The exploiters of a run's start: ``learner`` (the exploiter's carry) training against
    ``target`` (the main model's parameters), an empty pool of ``capacity`` frozen ones."""
    pool = empty(target, capacity=capacity, num_fixed=1)
    zero = jnp.float32(0.0)
    return Exploiters(learner=learner, target=jax.tree_util.tree_map(jnp.array, target), pool=pool,
                      rounds=jnp.int32(0), updates=zero, total=zero, squares=zero)


def train_exploiter(update: Callable[[Any, Any, jax.Array], tuple[Any, dict]], exploiters: Exploiters,
                    key: jax.Array, *, returns: Callable[[dict], tuple[jax.Array, jax.Array]]
                    ) -> tuple[Exploiters, dict]:
    """One update of the exploiter against its target (jittable): ``update(learner, target,
    key) -> (learner, metrics)``; ``returns(metrics) -> (mean return float32 [], games int32
    [])`` of that update's finished games, from the exploiter's side, which the round's
    decision reads (an update that finished none adds nothing)."""
    learner, metrics = update(exploiters.learner, exploiters.target, key)
    mean, games = returns(metrics)
    counted = (games > 0).astype(jnp.float32)
    mean = jnp.asarray(mean, jnp.float32) * counted
    return exploiters.replace(learner=learner, updates=exploiters.updates + counted,
                              total=exploiters.total + mean, squares=exploiters.squares + mean * mean), metrics


def exploiter_margin(exploiters: Exploiters) -> tuple[float, float]:
    """``(mean, lower)``: the exploiter's mean return per update this round against its target
    and the lower end of its 95% interval (over the updates; ``-inf`` with fewer than two)."""
    n, total, squares = (float(np.asarray(x)) for x in (exploiters.updates, exploiters.total, exploiters.squares))
    if n < 1:
        return float("nan"), -np.inf
    mean = total / n
    if n < 2:
        return mean, -np.inf
    var = max(squares - n * mean * mean, 0.0) / (n - 1)
    return mean, mean - 1.96 * np.sqrt(var / n)


def exploiter_round(exploiters: Exploiters, newest: Any, *, margin: float, budget: int,
                    params: Callable[[Any], Any], restart: Callable[[Any], Any]) -> tuple[Exploiters, dict]:
    """The exploiter's between-chunk hook: after its ``rounds``-th round, freeze it into the
    pool if it beat its target by ``margin`` (the lower end of the round's interval above it)
    or has trained ``budget`` rounds, and then restart it from ``newest`` (``restart(newest) ->
    learner carry``); in every case its target becomes ``newest`` and the round's returns are
    cleared. ``params(learner)`` are the exploiter's parameters. Host arrays in and out,
    deterministic in them (a resumed run decides the same). Returns the exploiters and
    ``{"exploiter_return", "exploiter_return_low", "exploiter_rounds", "exploiter_frozen",
    "exploiters"}`` (the round's mean and lower bound, its rounds, whether it was frozen now,
    exploiters frozen so far)."""
    if int(budget) < 1:
        raise ValueError(f"the exploiter's budget must be >= 1 round, got {budget}")
    mean, low = exploiter_margin(exploiters)
    rounds = int(np.asarray(exploiters.rounds)) + 1
    frozen = bool(low > margin) or rounds >= int(budget)
    pool, learner = exploiters.pool, exploiters.learner
    if frozen:
        pool = jax.tree_util.tree_map(np.asarray, _promote_compiled(pool, params(learner)))
        learner = jax.tree_util.tree_map(np.asarray, restart(newest))
        rounds = 0
    zero = np.float32(0.0)
    exploiters = exploiters.replace(learner=learner, target=jax.tree_util.tree_map(np.asarray, newest), pool=pool,
                                    rounds=np.int32(rounds), updates=zero, total=zero, squares=zero)
    return exploiters, {"exploiter_return": mean, "exploiter_return_low": float(low),
                        "exploiter_rounds": rounds, "exploiter_frozen": frozen,
                        "exploiters": int(np.asarray(pool.added))}


def sample_exploiter(exploiters: Exploiters, key: jax.Array) -> jax.Array:
    """int32 []: a frozen exploiter's slot, uniform among the filled ones (0 when none)."""
    return sample(exploiters.pool, key)
