"""Sturtevant & White's evaluation of two Hearts players, as a function.

The source compares two player types by seating them in every way that mixes them: of the
2^4 = 16 ways to fill four seats with two types, the 14 that use both
(:func:`jaxgames.arena.mixed_seatings`), "100 games for each of the 14 possible arrangements",
and reports points per hand against the break-even 26 / 4 = 6.5 (equal players), the share of
hands won, and over full games to 100 points the share of games won and the points per game.

:func:`evaluate` plays ``deals`` deals in each of the 14 seatings through
:class:`jaxgames.arena.Arena` (deal d of every seating is the same cards: duplicate play, the
luck of the deal cancels) and measures, for each type:

* ``points``: points per hand (a one-hand env) or per game (a ``target_score`` env) of one
  seat of that type: minus the seat's rewards summed over the hand or game (the moon
  included), averaged over the type's seats in a game, then over the games;
* ``wins``: the share of games (hands) won: each game's win goes to the seats of lowest
  score, a tie split evenly between them, so the two shares add up to 1 and equal players
  have 0.5 (each type sits in 28 of the 56 seats of the 14 seatings);
* 95% intervals over the **deals** (each deal's mean over its 14 seatings is one
  independent sample), not over games, which share their deals. ``difference`` is
  ``points[0] - points[1]`` per deal with its interval: negative means type 0 is better.
  Points take 1.96 standard errors (:func:`jaxgames.arena.ci95`); the share of wins takes a
  Wilson interval (:func:`jaxgames.arena.wilson`; ties count as the split shares), which
  stays in [0, 1] and holds near 0% and 100%, over the effective number of games that the
  deals' spread implies, ``p(1 - p) / var(deal mean)`` (at most the games played; Korn &
  Graubard 1998's effective sample size): ``wins_low`` to ``wins_high``.

``table_points`` is the mean over every seat: 6.5 per hand without the moon, more with it
(a moon gives 78 points, not 26). The source's two halves are two calls: ``evaluate`` on
``Hearts(variant="paper")`` (single hands) and on ``Hearts(variant="paper",
target_score=100)`` (games to 100), each with bots made for that env
(``bench/hearts_bots.py`` does both). :func:`honesty` measures each player with
:func:`jaxgames.arena.honesty_check` on states of real games: 0 for a player that reads only
its seat's view.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import arena as A
from jaxgames.core import Policy, random_policy
from jaxgames.hearts.game import Hearts
from jaxgames.player import Player
from jaxgames.rollout import rollout

__all__ = ["BREAK_EVEN", "MatchResult", "evaluate", "format_results", "honesty", "summarize", "win_interval"]

#: points per hand of each of four equal players when no moon is shot: 26 / 4
BREAK_EVEN = 6.5
NUM_SEATINGS = 14


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """T player types over the seatings that mix them all (:func:`evaluate`; the source's
    protocol: T = 2, 14 seatings)."""

    names: tuple[str, ...]        # the T player types (the source: T = 2)
    unit: str                    # "hand" or "game to T"
    deals: int                   # deals played in each seating
    games: int                   # seatings * deals (14 * deals for two types)
    points: np.ndarray           # float64 [T]  points per hand (game) of one seat of each type
    points_ci95: np.ndarray      # float64 [T]  over deals
    difference: float            # points[0] - points[1], per deal
    difference_ci95: float
    wins: np.ndarray             # float64 [T]  share of games won (ties split; sums to 1)
    wins_low: np.ndarray         # float64 [T]  its 95% Wilson interval (module docstring)
    wins_high: np.ndarray        # float64 [T]
    table_points: float          # mean points of all seats (6.5 a hand without the moon)
    seat_points: np.ndarray      # float64 [T, 4]  [type, seat]: mean points in that seat
    seat_returns: np.ndarray     # float32 [games, 4]  each seat's summed rewards
    seats: np.ndarray            # int32 [games, 4]  the type in each seat
    deal_points: np.ndarray      # float64 [deals, T]  each deal's points of each type (mean over seatings)

    def compare(self, i: int, j: int) -> tuple[float, float]:
        """``points[i] - points[j]`` per deal: (mean, 95% half-width); negative: i is better."""
        diff = self.deal_points[:, i] - self.deal_points[:, j]
        return float(diff.mean()), A.ci95(diff)

    def win_text(self, i: int = 0) -> str:
        """Type ``i``'s share of wins with its 95% interval: '54.8% (51.2–58.3%)'."""
        return f"{100 * self.wins[i]:.1f}% ({100 * self.wins_low[i]:.1f}–{100 * self.wins_high[i]:.1f}%)"

    def line(self) -> str:
        """One line: the types' points with intervals, the first two's difference, the first's
        win share."""
        a, b = self.names[:2]
        text = (f"{a} {self.points[0]:.2f} ± {self.points_ci95[0]:.2f} vs {b} {self.points[1]:.2f} ± "
                f"{self.points_ci95[1]:.2f} points per {self.unit} (difference {self.difference:+.2f} ± "
                f"{self.difference_ci95:.2f}); wins {a} {self.win_text(0)}")
        seatings = self.games // self.deals
        if len(self.names) > 2:
            text += "".join(f"; {n} {p:.2f} ± {c:.2f}" for n, p, c in
                            zip(self.names[2:], self.points[2:], self.points_ci95[2:]))
        count = f"{self.games} hands" if self.unit == "hand" else f"{self.games} {self.unit.replace('game', 'games', 1)}"
        return text + f"; {count} ({self.deals} deals x {seatings} seatings)"


def _bot(player: Player | Policy, i: int) -> tuple[str, Policy]:
    if isinstance(player, Player):
        return player.name, player.policy
    if callable(player):
        return f"policy {i}", player
    raise ValueError(f"player {i} must be a Player or a policy(params, state, key), got {player!r}")


def _params(players: Sequence[Player | Policy], params: Sequence[Any] | None) -> list:
    """``params``, or each Player's own (None for a bare policy)."""
    if params is not None:
        return list(params)
    return [p.params if isinstance(p, Player) else None for p in players]


def evaluate(env: Hearts, players: Sequence[Player | Policy], key: jax.Array, *, deals: int,
             params: Sequence[Any] | None = None, names: Sequence[str] | None = None,
             max_steps: int = 10_000) -> MatchResult:
    """Play ``players`` (two :class:`~jaxgames.player.Player` or policies) against each other
    in the 14 mixed seatings, ``deals`` deals each (``14 * deals`` games of ``env``: one hand,
    or a game to ``env.target_score``); see the module docstring. ``params``: one per player,
    else each Player's own. One compile per (env, players, deals); other keys and params do
    not recompile."""
    if not isinstance(env, Hearts):
        raise ValueError(f"evaluate needs a Hearts env, got {type(env).__name__}")
    if not 2 <= len(players) <= env.num_players:
        raise ValueError(f"evaluate compares 2 to {env.num_players} player types (the source: 2), "
                         f"got {len(players)}")
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 2:
        raise ValueError(f"deals must be an integer >= 2 (the intervals are over deals), got {deals!r}")
    named = [_bot(p, i) for i, p in enumerate(players)]
    names = tuple(names) if names is not None else tuple(n for n, _ in named)
    if len(names) != len(players):
        raise ValueError(f"names must name the {len(players)} players, got {names!r}")
    if len(set(names)) < len(names):
        names = tuple(f"{n} ({i})" for i, n in enumerate(names))
    seatings = A.mixed_seatings(env.num_players, len(players))
    result = A.play(env, [p for _, p in named], key, num_games=len(seatings) * int(deals),
                    params=_params(players, params), max_steps=max_steps, seatings=seatings)
    unit = "hand" if env.target_score is None else f"game to {env.target_score}"
    return summarize(result.seat_returns, result.seats, names, unit, num_seatings=len(seatings))


def summarize(seat_returns: np.ndarray, seats: np.ndarray, names: Sequence[str], unit: str, *,
              num_seatings: int = NUM_SEATINGS) -> MatchResult:
    """:class:`MatchResult` from each game's seat returns ``[G, 4]`` and seating ``[G, 4]``
    (the games of a seating consecutive, ``G = num_seatings * deals``, deal d of every
    seating alike), for ``len(names)`` player types."""
    seat_returns = np.asarray(seat_returns, np.float64)
    seats = np.asarray(seats)
    games, types = seat_returns.shape[0], len(names)
    if games % num_seatings:
        raise ValueError(f"{games} games is not a multiple of the {num_seatings} seatings")
    deals = games // num_seatings
    points = -seat_returns                                             # [G, 4]
    mine = seats[:, :, None] == np.arange(types)                       # [G, 4, T]
    per_type = (points[:, :, None] * mine).sum(1) / mine.sum(1)        # [G, T]
    best = points == points.min(1, keepdims=True)                      # lowest score wins
    wins = (best[:, :, None] & mine).sum(1) / best.sum(1, keepdims=True)  # [G, T], ties split

    def by_deal(x):   # [G, ...] -> [deals, ...]: each deal's mean over its seatings
        return x.reshape((num_seatings, deals) + x.shape[1:]).mean(0)

    deal_points, deal_wins = by_deal(per_type), by_deal(wins)
    diff = deal_points[:, 0] - deal_points[:, 1]
    seat_points = np.array([[points[seats[:, s] == t, s].mean() for s in range(4)] for t in range(types)])
    return MatchResult(
        names=tuple(names), unit=unit, deals=deals, games=games,
        points=deal_points.mean(0), points_ci95=A.ci95(deal_points),
        difference=float(diff.mean()), difference_ci95=A.ci95(diff),
        wins=deal_wins.mean(0), **dict(zip(("wins_low", "wins_high"), win_interval(deal_wins, games))),
        table_points=float(points.mean()), seat_points=seat_points,
        seat_returns=seat_returns.astype(np.float32), seats=seats.astype(np.int32), deal_points=deal_points)


def win_interval(deal_wins: np.ndarray, games: int) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` [T]: the 95% Wilson interval of each type's share of wins from each
    deal's share ``deal_wins [deals, T]`` (mean over its seatings), over the effective number
    of games ``p(1 - p) / var(mean over deals)``, capped at ``games``; ``games`` itself where
    the deals do not vary or ``p`` is 0 or 1."""
    deals = deal_wins.shape[0]
    p = deal_wins.mean(0)
    var = deal_wins.var(0, ddof=1) / deals
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(var > 0, np.minimum(games, p * (1 - p) / var), games)
    n = np.where((p > 0) & (p < 1), n, games)
    return A.wilson(p * n, n)


def honesty(env: Hearts, players: Sequence[Player | Policy], key: jax.Array, *, num_states: int = 16,
            num_worlds: int = 4, num_keys: int = 2, params: Sequence[Any] | None = None) -> tuple[float, ...]:
    """Each player's :func:`jaxgames.arena.honesty_check` on ``num_states`` states of real
    games (random play from fresh deals, stopped at points spread over the hand, the passing
    phase included when the variant passes): the share of its decisions that change when the
    cards its seat cannot see are redealt. 0 for an honest player."""
    k_states, k_check = jax.random.split(key)
    lengths = jnp.asarray(np.linspace(0, 50 + 12 * env.standard, num_states).astype(np.int32))

    def one(k, n):
        return rollout(env, env.init(k), random_policy, k, max_steps=n).state

    states = jax.jit(jax.vmap(one))(jax.random.split(k_states, num_states), lengths)
    params = _params(players, params)
    return tuple(A.honesty_check(env, _bot(p, i)[1], params[i], states, jax.random.fold_in(k_check, i),
                                 num_worlds=num_worlds, num_keys=num_keys)
                 for i, p in enumerate(players))


def format_results(results: Sequence[MatchResult]) -> str:
    """A Markdown table, one row per match: both types' points per hand (game) with their
    intervals, the difference, and type 0's share of wins with its interval."""
    head = ("| player A | player B | unit | A points | B points | A - B | A wins | games |\n"
            "|---|---|---|---|---|---|---|---|")
    rows = [f"| {r.names[0]} | {r.names[1]} | {r.unit} | {r.points[0]:.2f} ± {r.points_ci95[0]:.2f} | "
            f"{r.points[1]:.2f} ± {r.points_ci95[1]:.2f} | {r.difference:+.2f} ± {r.difference_ci95:.2f} | "
            f"{r.win_text(0)} | {r.games} |" for r in results]
    return "\n".join([head] + rows)
