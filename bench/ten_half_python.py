"""The peer for ``bench.ten_half``: the source's methods as plain Python with dictionaries,
one episode at a time (the textbook implementation style). Same rules as jaxgames.ten_half."""

from __future__ import annotations

import random
from collections import defaultdict

TEN_HALF = 21  # half-points


def draw(rng: random.Random) -> tuple[int, int]:
    """(value in half-points, is_face) of one card from an infinite deck."""
    rank = rng.randrange(13)
    return (1, 1) if rank >= 10 else (2 * (rank + 1), 0)


def payout(total: int, cards: int, faces: int) -> int:
    """-1 bust, 1 plain, 2 ten-and-a-half, 3 five small, 4 heavenly king, 5 five faces."""
    if total > TEN_HALF:
        return -1
    if cards == 5:
        return 5 if faces == 5 else 4 if total == TEN_HALF else 3
    return 2 if total == TEN_HALF else 1


def dealer(player_total: int, player_cards: int, rng: random.Random) -> int:
    total = cards = faces = 0
    while True:
        v, f = draw(rng)
        total, cards, faces = total + v, cards + 1, faces + f
        p = payout(total, cards, faces)
        if p == -1:
            return 1
        if p >= 2:
            return -p
        if total > player_total or (total == player_total and cards <= player_cards):
            return -1


def episode(policy, rng: random.Random) -> list[tuple[tuple[int, int, int], int, int]]:
    v, f = draw(rng)
    state = (v, 1, f)
    steps = []
    while True:
        action = policy(state)
        if action == 0:
            steps.append((state, 0, dealer(state[0], state[1], rng)))
            return steps
        v, f = draw(rng)
        total, cards, faces = state[0] + v, state[1] + 1, state[2] + f
        p = payout(total, cards, faces)
        if p != 1:
            steps.append((state, 1, p))
            return steps
        steps.append((state, 1, 0))
        state = (total, cards, faces)


def on_policy(num_episodes: int, epsilon: float = 0.1, seed: int = 0) -> dict:
    rng = random.Random(seed)
    q = defaultdict(lambda: [0.0, 0.0])
    returns_sum = defaultdict(float)
    returns_count = defaultdict(float)

    def policy(s):
        if rng.random() < epsilon:
            return rng.randrange(2)
        a = q[s]
        return 0 if a[0] >= a[1] else 1

    for _ in range(num_episodes):
        steps = episode(policy, rng)
        seen = set()
        g_from = [0.0] * len(steps)
        g = 0.0
        for t in range(len(steps) - 1, -1, -1):
            g = g + steps[t][2]
            g_from[t] = g
        for t, (s, a, _) in enumerate(steps):
            if (s, a) in seen:
                continue
            seen.add((s, a))
            returns_sum[(s, a)] += g_from[t]
            returns_count[(s, a)] += 1.0
            q[s][a] = returns_sum[(s, a)] / returns_count[(s, a)]
    return dict(q)


def off_policy(num_episodes: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    q = defaultdict(lambda: [0.0, 0.0])
    c = defaultdict(lambda: [0.0, 0.0])

    def behaviour(_s):
        return rng.randrange(2)

    for _ in range(num_episodes):
        steps = episode(behaviour, rng)
        g, w = 0.0, 1.0
        for s, a, r in reversed(steps):
            g = g + r
            c[s][a] += w
            q[s][a] += (w / c[s][a]) * (g - q[s][a])
            if a != (0 if q[s][0] >= q[s][1] else 1):
                break
            w = w * 2.0
    return dict(q)


def to_policy(q: dict):
    """The greedy policy as the solver's [22, 6, 6] table (unvisited states: stick)."""
    import numpy as np

    policy = np.zeros((22, 6, 6), np.int64)
    for (s, n, f), (q0, q1) in q.items():
        policy[s, n, f] = 0 if q0 >= q1 else 1
    return policy
