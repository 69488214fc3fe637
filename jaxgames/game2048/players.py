"""2048 players as arena policies, and their evaluation through the arena.

A policy is ``policy(params, state, key) -> action`` (:data:`jaxgames.core.Policy`): the
value players take the n-tuple weights as ``params``, so one compiled evaluation serves every
checkpoint. :func:`evaluate` plays many games to the end in the arena and returns each game's
score, largest tile and moves.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import arena
from jaxgames.core import Policy
from jaxgames.game2048 import board as B
from jaxgames.game2048.game import Game2048
from jaxgames.game2048.ntuple import NTupleNetwork
from jaxgames.search import expectimax

#: longest evaluation game; a 32768 tile takes about 16,000 moves
MAX_MOVES = 200_000


def search_game(variant: str = "2048") -> expectimax.ExpectimaxGame:
    """Expectimax on raw boards: the same search as ``expectimax.for_env`` (tested equal),
    without building a State per node."""
    def expand(board):
        after, reward, legal = B.slide_all(board, variant)
        return after, reward.astype(jnp.float32), legal
    return expectimax.ExpectimaxGame(expand=expand, chance=B.chance_outcomes, apply=B.apply_chance)


@functools.lru_cache(maxsize=None)
def greedy_reward_policy(variant: str = "2048") -> Policy:
    """The source's greedy player: the move that scores most now (ties broken at random)."""
    def policy(params, state, key):
        _, reward, legal = B.slide_all(state.board, variant)
        noise = jax.random.uniform(key, (4,))  # < 1: only breaks ties
        return jnp.argmax(jnp.where(legal, reward + noise, -jnp.inf)).astype(jnp.int32)
    return policy


@functools.lru_cache(maxsize=None)
def value_policy(net: NTupleNetwork, depth: int = 1, variant: str = "2048") -> Policy:
    """Expectimax to ``depth`` on ``reward + V(afterstate)`` (depth 1 = greedy 1-ply);
    ``params`` are the network's flat weights. Cached: the same arguments give the same
    function, so the arena compiles it once."""
    game = search_game(variant)

    def policy(weights, state, key):
        return expectimax.best_action(game, lambda b: net.value(weights, b), state.board, depth)
    return policy


@dataclasses.dataclass(frozen=True)
class GameStats:
    score: np.ndarray     # int64 [N]
    max_tile: np.ndarray  # int64 [N]  tile value
    moves: np.ndarray     # int64 [N]

    def summary(self, prefix: str = "") -> dict:
        out = {f"{prefix}avg_score": float(self.score.mean()), f"{prefix}max_score": int(self.score.max()),
               f"{prefix}games": int(len(self.score)), f"{prefix}avg_moves": float(self.moves.mean())}
        for tile in (2048, 4096, 8192, 16384, 32768):
            out[f"{prefix}rate_{tile}"] = float((self.max_tile >= tile).mean())
        return out


@functools.lru_cache(maxsize=None)
def _final_stats(variant: str) -> Callable:
    def stats(state):
        return state.score, B.max_tile(state.board, variant), state.step_count
    return stats


@functools.lru_cache(maxsize=None)
def _env(variant: str) -> Game2048:
    return Game2048(variant=variant)


def evaluate(policy: Policy, params, key: jax.Array, *, num_games: int,
             variant: str = "2048") -> GameStats:
    """Play ``num_games`` games of ``policy`` to the end in the arena (compiled once per
    policy and game count)."""
    result = arena.play(_env(variant), [policy], key, num_games=num_games, params=[params],
                        max_steps=MAX_MOVES, stats=_final_stats(variant))
    score, tile, moves = result.stats
    return GameStats(np.asarray(score, np.int64), np.asarray(tile, np.int64), np.asarray(moves, np.int64))

