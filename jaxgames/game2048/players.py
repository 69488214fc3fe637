"""2048 players and the batched evaluation loop.

A player is ``player(board int8 [16], key) -> action int32 []``; :func:`play` runs many games
to the end in one jitted ``while_loop`` and returns each game's score, largest tile and moves.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.game2048 import board as B
from jaxgames.search import expectimax

Player = Callable[[jax.Array, jax.Array], jax.Array]


def search_game(variant: str = "2048") -> expectimax.ExpectimaxGame:
    def expand(board):
        after, reward, legal = B.slide_all(board, variant)
        return after, reward.astype(jnp.float32), legal
    return expectimax.ExpectimaxGame(expand=expand, chance=B.chance_outcomes, apply=B.apply_chance)


def random_player(variant: str = "2048") -> Player:
    def player(board, key):
        legal = B.legal_moves(board, variant)
        return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf)).astype(jnp.int32)
    return player


def greedy_reward_player(variant: str = "2048") -> Player:
    """The source's greedy player: the move that scores most now (ties broken at random)."""
    def player(board, key):
        _, reward, legal = B.slide_all(board, variant)
        noise = jax.random.uniform(key, (4,))  # < 1: only breaks ties
        return jnp.argmax(jnp.where(legal, reward + noise, -jnp.inf)).astype(jnp.int32)
    return player


def value_player(value: Callable[[jax.Array], jax.Array], depth: int = 1,
                 variant: str = "2048") -> Player:
    """Expectimax to ``depth`` on ``reward + value(afterstate)`` (depth 1 = greedy 1-ply)."""
    game = search_game(variant)

    def player(board, key):
        return expectimax.best_action(game, value, board, depth)
    return player


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


def play_games(player: Player, key: jax.Array, *, num_games: int, variant: str = "2048",
               max_moves: int = 200_000):
    """Play ``num_games`` games to the end (traceable): (score, max_tile, moves) int32 [N] each."""

    def one(key):
        init_key, play_key = jax.random.split(key)
        board = B.initial_board(init_key, variant)

        def cond(c):
            board, _, _, moves, done = c
            return ~done & (moves < max_moves)

        def body(c):
            board, k, score, moves, _ = c
            k, k_act, k_spawn = jax.random.split(k, 3)
            legal = B.legal_moves(board, variant)
            a = player(board, k_act)
            after, reward, changed = B.slide(board, a, variant)
            ok = legal.any() & changed
            board = jnp.where(ok, B.spawn(after, k_spawn, variant), board)
            return board, k, score + jnp.where(ok, reward, 0), moves + ok.astype(jnp.int32), ~ok

        board, _, score, moves, _ = jax.lax.while_loop(
            cond, body, (board, play_key, jnp.int32(0), jnp.int32(0), jnp.bool_(False)))
        return score, B.max_tile(board, variant), moves

    return jax.vmap(one)(jax.random.split(key, num_games))


def make_play(player: Player, *, num_games: int, variant: str = "2048", max_moves: int = 200_000):
    """Jitted ``key -> (score, max_tile, moves)`` each int32 [num_games]."""
    return jax.jit(lambda key: play_games(player, key, num_games=num_games, variant=variant,
                                          max_moves=max_moves))


def play(player: Player, key: jax.Array, *, num_games: int, variant: str = "2048") -> GameStats:
    score, tile, moves = make_play(player, num_games=num_games, variant=variant)(key)
    return GameStats(np.asarray(score, np.int64), np.asarray(tile, np.int64), np.asarray(moves, np.int64))
