"""Head-to-head evaluation: many games in one jitted batch, seats rotated, chance shared.

A policy is ``policy(params, state, key) -> action`` (int32 []) on one unbatched state
(:data:`jaxgames.core.Policy`); its parameters are an argument, so one compiled arena
evaluates every checkpoint of a run. Policies of imperfect-information games must read only
what their seat may see (``env.observe(state, state.current_player)``, the legal mask, and
``env.sample_world``); :func:`honesty_check` verifies it.

With P players and P policies, the games are split into P equal rotations: in rotation r,
seat s is played by policy ``(s + r) % P``, so every policy sits in every seat equally often.
``seatings`` replaces the rotations by any list of seatings (which policy sits in which seat),
for instance :func:`mixed_seatings`: two player types over Hearts' four seats in the 14
seatings that mix them, as Sturtevant & White evaluate. A policy in several seats of a game
scores the mean of its seats' returns. Duplicate play: game d of every seating is dealt from
the same key and draws the same chance at every step (``rollout(chance_key=...)``), so luck
cancels between the policies.

    arena = Arena(env, [agent, baseline], num_games=200)     # compiles once
    result = arena([params_a, None], key)                     # any checkpoint, no recompile
    result.mean, result.ci95, result.seat_mean
    result.win_rate(0)                                        # (rate, low, high): a Wilson interval

Intervals: :func:`ci95` (1.96 standard errors) for means of returns, which are unbounded
(chips, points); :func:`wilson` for shares of games won, which the normal approximation gets
wrong at few games or near 0 and 1 ("100% ± 0%" after two wins).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.core import Env, Policy, State
from jaxgames.ratings import elo
from jaxgames.rollout import rollout_seated

__all__ = ["Arena", "ArenaResult", "Policy", "ci95", "elo", "honesty_check", "mixed_seatings", "play",
           "rotations", "summarize", "wilson"]


@dataclasses.dataclass(frozen=True)
class ArenaResult:
    mean: np.ndarray        # float64 [P]  mean return per game of each policy
    ci95: np.ndarray        # float64 [P]  half-width of the 95% confidence interval
    seat_mean: np.ndarray   # float64 [P, P]  [policy, seat]: mean return of the policy in that seat
    seat_ci95: np.ndarray   # float64 [P, P]
    returns: np.ndarray     # float32 [G, P]  each game's return per policy (mean over its seats)
    seats: np.ndarray       # int32 [G, S]  [game, seat]: the policy in that seat
    num_games: int
    stats: Any = None       # pytree of [G, ...] arrays: ``stats(final_state)`` per game
    seat_returns: np.ndarray | None = None  # float32 [G, S]  each game's return per seat

    def __str__(self) -> str:
        return ", ".join(f"policy {i}: {m:+.4f} ± {c:.4f}" for i, (m, c) in enumerate(zip(self.mean, self.ci95)))

    def win_rate(self, policy: int = 0) -> tuple[float, float, float]:
        """``(rate, low, high)``: the share of games ``policy`` won and its 95% :func:`wilson`
        interval (two-player). A game counts 1 when the policy's return is positive, 0 when
        negative, and a half when it is 0 (a tie, in games that can tie), so the two policies'
        rates add up to 1."""
        score = np.sign(self.returns[:, policy].astype(np.float64)) / 2 + 0.5
        low, high = wilson(score.sum(), len(score))
        return float(score.mean()), low, high


class Arena:
    """``arena(params, key) -> ArenaResult``, compiled once per (env, policies, num_games).

    ``params[i]`` are policy ``i``'s parameters (``None`` for a parameter-free policy);
    changing them, their values or the key never recompiles. ``stats(final_state)`` may add
    per-game figures (a 2048 game's largest tile, say).
    """

    def __init__(self, env: Env, policies: Sequence[Policy], *, num_games: int,
                 max_steps: int = 10_000, stats: Callable[[State], Any] | None = None,
                 seatings: Sequence[Sequence[int]] | np.ndarray | None = None):
        num_players = env.num_players
        if seatings is None:
            if len(policies) != num_players:
                raise ValueError(f"{env.id} has {num_players} seats, got {len(policies)} policies "
                                 f"(give seatings= to seat fewer policies)")
            seatings = rotations(num_players)
        seatings = _check_seatings(seatings, num_players, len(policies))
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        if num_games % len(seatings):
            raise ValueError(f"num_games ({num_games}) must be a multiple of the {len(seatings)} seatings")
        self.env, self.policies, self.num_games = env, tuple(policies), int(num_games)
        self.seatings = seatings
        deals = self.num_games // len(seatings)
        # seats[g, s]: which policy plays seat s in game g; the games of a seating are consecutive
        self.seats = np.repeat(seatings, deals, axis=0)
        deal_of_game = np.tile(np.arange(deals), len(seatings))

        @jax.jit
        def run(params, key):
            deal_key, policy_key = rng.split(key, 2)
            deal_keys = rng.split(deal_key, deals)[deal_of_game]
            init_keys, chance_keys = jax.vmap(lambda k: rng.split(k, 2), out_axes=1)(deal_keys)
            # each policy decides only in the games where it is to move (rollout_seated)
            out = rollout_seated(env, jax.vmap(env.init)(init_keys), self.policies, jnp.asarray(self.seats),
                                 rng.split(policy_key, self.num_games), params=params,
                                 max_steps=max_steps, chance_keys=chance_keys)
            return out.returns, (jax.vmap(stats)(out.state) if stats is not None else None)

        self._run = run

    def __call__(self, params: Sequence[Any] | None, key: jax.Array) -> ArenaResult:
        params = [None] * len(self.policies) if params is None else list(params)
        if len(params) != len(self.policies):
            raise ValueError(f"got {len(params)} parameter sets for {len(self.policies)} policies")
        seat_returns, stats = self._run(params, key)
        stats = None if stats is None else jax.tree_util.tree_map(np.asarray, stats)
        return summarize_seats(np.asarray(seat_returns), self.seats, len(self.policies), stats)


def rotations(num_players: int) -> np.ndarray:
    """int32 [P, P]: seating r puts policy ``(s + r) % P`` in seat s (the default)."""
    seats = np.arange(num_players)
    return ((seats[None, :] + seats[:, None]) % num_players).astype(np.int32)


def mixed_seatings(num_players: int = 4, num_policies: int = 2) -> np.ndarray:
    """int32 [R, P]: every way to seat ``num_policies`` player types in ``num_players`` seats
    that uses every type; for 2 types in 4 seats the 2^4 - 2 = 14 seatings of Sturtevant &
    White's Hearts evaluation (each type in every seat equally often)."""
    every = itertools.product(range(num_policies), repeat=num_players)
    return np.array([s for s in every if len(set(s)) == num_policies], np.int32)


def _check_seatings(seatings: Any, num_players: int, num_policies: int) -> np.ndarray:
    seatings = np.asarray(seatings)
    if seatings.ndim != 2 or seatings.shape[1] != num_players or not np.issubdtype(seatings.dtype, np.integer):
        raise ValueError(f"seatings must be integers of shape [R, {num_players}], got {seatings.dtype} "
                         f"{seatings.shape}")
    if seatings.min() < 0 or seatings.max() >= num_policies:
        raise ValueError(f"seatings name policies 0..{num_policies - 1} only")
    for row in seatings:
        if len(set(row.tolist())) != num_policies:
            raise ValueError(f"seating {row.tolist()} leaves a policy out: every seating must seat "
                             f"every policy")
    return seatings.astype(np.int32)


def summarize_seats(seat_returns: np.ndarray, seats: np.ndarray, num_policies: int,
                    stats: Any = None) -> ArenaResult:
    """:func:`summarize` from each seat's return: ``seat_returns [G, S]``, ``seats [G, S]``
    the policy in each seat; a policy in several seats of a game scores their mean."""
    seat_returns = np.asarray(seat_returns, np.float64)
    onehot = (seats[:, :, None] == np.arange(num_policies)).astype(np.float64)  # [G, S, P]
    returns = (seat_returns[:, :, None] * onehot).sum(1) / onehot.sum(1)
    return summarize(returns, seats, stats, seat_returns=seat_returns)


@functools.lru_cache(maxsize=32)
def _cached_arena(env, policies, num_games, max_steps, stats, seatings) -> Arena:
    return Arena(env, policies, num_games=num_games, max_steps=max_steps, stats=stats,
                 seatings=None if seatings is None else np.array(seatings, np.int32))


def play(env: Env, policies: Sequence[Policy], key: jax.Array, *, num_games: int,
         params: Sequence[Any] | None = None, max_steps: int = 10_000,
         stats: Callable[[State], Any] | None = None,
         seatings: Sequence[Sequence[int]] | np.ndarray | None = None) -> ArenaResult:
    """Play ``num_games`` games (a multiple of the player count) and score each policy.

    The compiled arena is cached per (env, policy functions, num_games, max_steps, stats):
    calling ``play`` again with other ``params`` or another key does not recompile (pass the
    same function objects, not fresh lambdas)."""
    seatings = None if seatings is None else tuple(map(tuple, np.asarray(seatings).tolist()))
    return _cached_arena(env, tuple(policies), num_games, max_steps, stats, seatings)(params, key)


def summarize(returns: np.ndarray, seats: np.ndarray | None = None, stats: Any = None,
              seat_returns: np.ndarray | None = None) -> ArenaResult:
    """Means and 95% intervals per policy and per (policy, seat) from ``returns [G, P]``
    (and each seat's own return ``seat_returns [G, S]`` when a policy may hold several seats)."""
    returns = np.asarray(returns, np.float64)
    n, num_policies = returns.shape
    if seats is None:
        seats = np.tile(np.arange(num_policies, dtype=np.int32), (n, 1))
    seat_mean = np.full((num_policies, seats.shape[1]), np.nan)
    seat_ci = np.full_like(seat_mean, np.nan)
    for s in range(seats.shape[1]):
        for p in range(num_policies):
            games = seats[:, s] == p
            mine = returns[games, p] if seat_returns is None else seat_returns[games, s]
            if len(mine):
                seat_mean[p, s], seat_ci[p, s] = mine.mean(), ci95(mine)
    return ArenaResult(mean=returns.mean(0), ci95=np.array([ci95(r) for r in returns.T]),
                       seat_mean=seat_mean, seat_ci95=seat_ci, returns=returns.astype(np.float32),
                       seats=np.asarray(seats, np.int32), num_games=n, stats=stats,
                       seat_returns=None if seat_returns is None else np.asarray(seat_returns, np.float32))


def ci95(x: np.ndarray) -> Any:
    """Half-width of the 95% interval of the mean of ``x`` over its first axis: 1.96 standard
    errors (the normal approximation), 0 from fewer than two samples. A float for ``x [n]``,
    an array ``[...]`` for ``x [n, ...]``. The project's interval for means of returns (chips,
    points, scores); shares of games won take :func:`wilson`."""
    x = np.asarray(x)
    if len(x) < 2:
        return 0.0 if x.ndim == 1 else np.zeros(x.shape[1:])
    half = 1.96 * x.std(0, ddof=1) / math.sqrt(len(x))
    return float(half) if x.ndim == 1 else half


def wilson(successes: Any, n: Any, z: float = 1.96) -> tuple[Any, Any]:
    """``(low, high)``: the Wilson score interval of a proportion, ``successes`` of ``n``
    trials (95% for ``z = 1.96``). Unlike rate ± 1.96 standard errors it holds at few trials
    and near 0 and 1: it is asymmetric about the rate, lies in [0, 1], and 2 wins of 2 give
    [0.34, 1], not [1, 1]. A tie counts as half a success (``successes`` may be fractional);
    ``n = 0`` gives [0, 1]. Floats for scalars, arrays for arrays (broadcast)::

        center = (p + z²/2n) / (1 + z²/n),   half = z / (1 + z²/n) · sqrt(p(1 - p)/n + z²/4n²)

    with ``p = successes / n``; the bounds are exactly 0 at no successes and 1 at all.
    """
    s, n = np.asarray(successes, np.float64), np.asarray(n, np.float64)
    if (n < 0).any() or (s < 0).any() or (s > n).any():
        raise ValueError(f"wilson needs 0 <= successes <= n, got {successes!r} of {n!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = s / n
        z2n = z * z / n
        center = (p + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(p * (1 - p) / n + z2n / (4 * n))
    low = np.where(s == 0, 0.0, np.clip(center - half, 0.0, 1.0))
    high = np.where(s == n, 1.0, np.clip(center + half, 0.0, 1.0))
    low, high = np.where(n == 0, 0.0, low), np.where(n == 0, 1.0, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def honesty_check(env: Env, policy: Policy, params: Any, states: State, key: jax.Array, *,
                  num_worlds: int = 8, num_keys: int = 4) -> float:
    """Share of decisions that change when the hidden cards are resampled: 0 for an honest
    player of an imperfect-information game.

    For every state of the batch ``states`` (leaves ``[B, ...]``), the mover's view is kept and
    the rest redealt ``num_worlds`` times with ``env.sample_world``; the policy is asked with
    the same ``num_keys`` keys in the real state and in each world. A policy that reads only
    the mover's observation (and samples worlds itself through ``sample_world``, which reads
    only what the mover knows) answers identically, so any difference is cheating.
    """
    if env.perfect_information:
        raise ValueError(f"{env.id} is a perfect-information game: nothing is hidden")

    def one(state, key):
        world_key, policy_key = jax.random.split(key)
        mover = state.current_player
        worlds = jax.vmap(lambda k: env.sample_world(state, mover, k))(jax.random.split(world_key, num_worlds))
        keys = jax.random.split(policy_key, num_keys)
        real = jax.vmap(lambda k: policy(params, state, k))(keys)                      # [K]
        imagined = jax.vmap(lambda w: jax.vmap(lambda k: policy(params, w, k))(keys))(worlds)  # [W, K]
        return (imagined != real[None]).mean()

    batch = jax.tree_util.tree_leaves(states)[0].shape[0]
    return float(jax.jit(jax.vmap(one))(states, jax.random.split(key, batch)).mean())
