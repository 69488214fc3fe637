"""Elo ratings from head-to-head results: the Bradley–Terry maximum-likelihood fit.

Bradley–Terry: player i beats j with probability p_i / (p_i + p_j). On the Elo scale,
``rating_i = 400 log10 p_i``, so a 75% score means a 191-point gap. The maximum-likelihood
strengths are found with Hunter's (2004) minorise-maximise iteration, which converges for
any connected results matrix where every player has won and lost something; a small prior
(``prior_games`` virtual draws against every opponent met) keeps undefeated or winless
players finite, as rating lists of checkpoint pools need.
"""

from __future__ import annotations

import numpy as np

ELO_PER_NATURAL_LOG = 400.0 / np.log(10.0)


def elo(points: np.ndarray, games: np.ndarray, *, prior_games: float = 0.0, anchor: int | None = None,
        max_iterations: int = 100_000, tolerance: float = 1e-10) -> np.ndarray:
    """float64 [N] Elo ratings (mean 0, or 0 at ``anchor``).

    Args:
      points: [N, N]: points player i scored against player j (a win 1, a draw 0.5).
      games:  [N, N]: games played between i and j (symmetric).
      prior_games: virtual draws added to every pair that met (0 = plain maximum likelihood).
    """
    points = np.asarray(points, np.float64)
    games = np.asarray(games, np.float64)
    n = points.shape[0]
    if points.shape != (n, n) or games.shape != (n, n):
        raise ValueError(f"points and games must be square and of one shape, got {points.shape}, {games.shape}")
    if not np.allclose(games, games.T):
        raise ValueError("games must be symmetric: games[i, j] == games[j, i]")
    if (points < 0).any() or (points > games + 1e-9).any() or \
            not np.allclose(points + points.T, games, atol=1e-9):
        raise ValueError("points[i, j] + points[j, i] must equal games[i, j], each in [0, games]")
    met = games > 0
    points = points + 0.5 * prior_games * met
    games = games + prior_games * met
    wins = points.sum(1)
    if ((wins <= 0) | (wins >= games.sum(1))).any() and prior_games == 0:
        raise ValueError("a player won or lost every game: its maximum-likelihood rating is "
                         "infinite; pass prior_games > 0")
    strength = np.ones(n)
    for _ in range(max_iterations):
        denom = (games / (strength[:, None] + strength[None, :])).sum(1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        if np.abs(np.log(new) - np.log(strength)).max() < tolerance:
            strength = new
            break
        strength = new
    ratings = ELO_PER_NATURAL_LOG * np.log(strength)
    return ratings - (ratings[anchor] if anchor is not None else ratings.mean())


def expected_score(rating_a: float, rating_b: float) -> float:
    """Expected score of a against b under the Elo (logistic, base 10, 400) model."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))
