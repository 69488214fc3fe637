"""Shared helpers for the Hex tests: batched random games and an independent reference winner."""

from __future__ import annotations

import functools

import jax
import numpy as np

import jaxgames


@functools.lru_cache(maxsize=None)
def env(n: int, swap: bool = False):
    return jaxgames.make("hex", board_size=n, swap=swap)


@functools.lru_cache(maxsize=None)
def batched(n: int, swap: bool = False):
    """``(init, step)`` jitted over a batch of games; one compile per size."""
    e = env(n, swap)
    return jax.jit(jax.vmap(e.init)), jax.jit(jax.vmap(e.step))


def random_games(n: int, num_games: int, seed: int = 0, swap: bool = False, force_swap: bool = False):
    """``num_games`` uniformly random games, stepped together by the env (one batched call per
    move); the random choices are NumPy's, uniform over each game's ``legal_action_mask``.

    Returns NumPy arrays: final board int8 [G, n*n], actions int32 [G, n*n+1] (-1 after the
    end), masks bool [G, n*n+1, n*n+1] (the legal mask before each move, False after the end),
    returns float32 [G, 2] (summed over the game), terminated bool [G].
    """
    init, step = batched(n, swap)
    rng = np.random.default_rng(seed)
    length = n * n + 1
    state = init(jax.random.split(jax.random.key(seed), num_games))
    actions = np.full((num_games, length), -1, np.int32)
    masks = np.zeros((num_games, length, length), bool)
    returns = np.zeros((num_games, 2), np.float32)
    for t in range(length):
        live = ~np.asarray(state.terminated)
        if not live.any():
            break
        mask = np.asarray(state.legal_action_mask)
        priority = np.where(mask, rng.random(mask.shape), -1.0)
        action = priority.argmax(1).astype(np.int32)
        if force_swap and t == 1:
            action[:] = n * n
        actions[live, t] = action[live]
        masks[live, t] = mask[live]
        state = step(state, action)
        returns += np.asarray(state.rewards)
    return np.asarray(state.board), actions, masks, returns, np.asarray(state.terminated)


@functools.lru_cache(maxsize=None)
def games(n: int):
    """The shared batch of random games of size n (generated once per test session)."""
    return random_games(n, {5: 1000, 6: 600, 7: 600, 11: 300}.get(n, 300), seed=n)


def reference_winner(board, n: int) -> int:
    """0 Black, 1 White, -1 none: breadth-first search, written apart from jaxgames.hex.board."""
    cells = np.asarray(board).reshape(n, n)
    steps = ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0))
    for player, stone in ((0, 1), (1, -1)):
        if player == 0:
            frontier = [(0, c) for c in range(n) if cells[0, c] == stone]
        else:
            frontier = [(r, 0) for r in range(n) if cells[r, 0] == stone]
        seen = set(frontier)
        while frontier:
            r, c = frontier.pop()
            if (player == 0 and r == n - 1) or (player == 1 and c == n - 1):
                return player
            for dr, dc in steps:
                q = (r + dr, c + dc)
                if 0 <= q[0] < n and 0 <= q[1] < n and q not in seen and cells[q] == stone:
                    seen.add(q)
                    frontier.append(q)
    return -1
