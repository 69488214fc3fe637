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
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.ratings import elo

__all__ = ["UNRATED", "League", "after_round", "best_k_mask", "elo_list", "empty", "get",
           "points_of", "promote", "rate", "recent_slots", "record", "sample", "sample_best_k"]

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
