"""Exact solver for ten-and-a-half (NumPy, run once; not jitted).

Index convention shared with the learners (``train/ten_half``):

* state tables are shaped ``[22, 6, 6]`` and indexed ``(player_sum_halves 0..21,
  num_cards 0..5, num_faces 0..5)`` -- exactly the env's observation;
* Q tables are shaped ``[22, 6, 6, 2]`` with action 0 = stick, 1 = hit.

Only the live decision states (a plain hand of 1..4 cards, see ``reachable_states``) have
values; every other entry of a returned table is NaN (Q) or 0 (policy).

The stick value of a hand depends only on ``(player_sum, num_cards)``; it is the exact
expectation over the dealer's draws, computed by backward induction over the dealer's hand
``(sum, cards, faces)``, vectorised over every player hand at once. The hit value is the
average over the 13 ranks of the terminal reward or the next state's value. Everything is a
few dozen NumPy operations (a few ms); results are cached.
"""

from __future__ import annotations

import functools

import numpy as np

from jaxgames.ten_half.game import MAX_CARDS, NUM_RANKS, TEN_HALF

NUM_SUMS = TEN_HALF + 1          # player sums 0..21 (half-points)
NUM_COUNTS = MAX_CARDS + 1       # 0..5 cards / faces
SHAPE = (NUM_SUMS, NUM_COUNTS, NUM_COUNTS)

# Per rank 0..12 (A, 2..10, J, Q, K): value in half-points, face flag.
_VALUES = np.array([2 * (r + 1) for r in range(10)] + [1, 1, 1], np.int64)
_FACES = np.array([0] * 10 + [1] * 3, np.int64)


def _hand_type(s: np.ndarray, n: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of ``game.hand_type`` (written independently of it).

    Returns ``(bust, special, payout)`` broadcast over the inputs: bool, bool, float64, with
    payout -1 bust, 1 plain, 2 ten-and-a-half, 3 five small, 4 heavenly king, 5 five faces.
    """
    five = n >= MAX_CARDS
    bust = s > TEN_HALF
    five_faces = ~bust & five & (f >= MAX_CARDS)
    heavenly = ~bust & five & ~five_faces & (s == TEN_HALF)
    five_small = ~bust & five & ~five_faces & ~heavenly
    ten_half = ~bust & ~five & (s == TEN_HALF)
    payout = np.select([bust, five_faces, heavenly, five_small, ten_half],
                       [-1.0, 5.0, 4.0, 3.0, 2.0], 1.0)
    special = five_faces | heavenly | five_small | ten_half
    return bust, special, payout


@functools.lru_cache(maxsize=None)
def _stick_values() -> np.ndarray:
    """float64 [22, 6]: the player's expected reward for sticking with ``(sum, cards)``."""
    p = np.arange(NUM_SUMS)[:, None, None, None]
    pc = np.arange(NUM_COUNTS)[None, :, None, None]
    ds = np.arange(NUM_SUMS)[None, None, :, None]
    df = np.arange(NUM_COUNTS)[None, None, None, :]
    full = (NUM_SUMS, NUM_COUNTS, NUM_SUMS, NUM_COUNTS)
    # w[p, pc, ds, df]: value to the player when the dealer holds (ds, dn, df) and draws.
    w_next = np.zeros(full)
    for dn in range(MAX_CARDS - 1, -1, -1):
        w = np.zeros(full)
        for r in range(NUM_RANKS):
            s2 = ds + _VALUES[r]
            f2 = np.minimum(df + _FACES[r], MAX_CARDS)
            n2 = dn + 1
            bust, special, payout = _hand_type(s2, np.int64(n2), f2)
            stop = bust | special | (s2 > p) | ((s2 == p) & (n2 <= pc))
            reward = np.where(bust, 1.0, np.where(special, -payout, -1.0))
            cont = w_next[p, pc, np.minimum(s2, TEN_HALF), f2]
            w += np.where(stop, reward, cont)
        w_next = w / NUM_RANKS
    return w_next[:, :, 0, 0]


def _live_mask() -> np.ndarray:
    """bool [22, 6, 6]: every well-formed plain hand with 1..4 cards (reachable or not)."""
    s = np.arange(NUM_SUMS)[:, None, None]
    n = np.arange(NUM_COUNTS)[None, :, None]
    f = np.arange(NUM_COUNTS)[None, None, :]
    return (s < TEN_HALF) & (n >= 1) & (n <= MAX_CARDS - 1) & (f <= n)


@functools.lru_cache(maxsize=None)
def _reachable() -> np.ndarray:
    reach = np.zeros(SHAPE, bool)
    for r in range(NUM_RANKS):
        reach[_VALUES[r], 1, _FACES[r]] = True
    for n in range(1, MAX_CARDS - 1):
        for s, f in zip(*np.nonzero(reach[:, n, :])):
            for r in range(NUM_RANKS):
                s2, f2 = s + _VALUES[r], f + _FACES[r]
                if s2 < TEN_HALF:
                    reach[s2, n + 1, f2] = True
    reach.setflags(write=False)
    return reach


def reachable_states() -> np.ndarray:
    """bool [22, 6, 6]: the live decision states reachable from the deal under some policy."""
    return _reachable().copy()


def _solve(policy: np.ndarray | None) -> np.ndarray:
    """Q [22, 6, 6, 2] for ``policy`` (int [22,6,6]), or the optimal Q when ``policy`` is None.
    Entries outside the live hands are NaN."""
    stick = _stick_values()
    q = np.full(SHAPE + (2,), np.nan)
    v = np.zeros(SHAPE)            # value of each state under the policy / optimally
    s = np.arange(NUM_SUMS)[:, None]
    f = np.arange(NUM_COUNTS)[None, :]
    live = _live_mask()
    for n in range(MAX_CARDS - 1, 0, -1):
        hit = np.zeros((NUM_SUMS, NUM_COUNTS))
        for r in range(NUM_RANKS):
            s2 = s + _VALUES[r]
            f2 = np.minimum(f + _FACES[r], MAX_CARDS)
            bust, special, payout = _hand_type(s2, np.int64(n + 1), f2)
            terminal = bust | special
            cont = v[np.minimum(s2, TEN_HALF), min(n + 1, MAX_CARDS), f2]
            hit += np.where(terminal, payout, cont)
        hit /= NUM_RANKS
        q[:, n, :, 0] = stick[:, n][:, None]
        q[:, n, :, 1] = hit
        if policy is None:
            v[:, n, :] = np.where(q[:, n, :, 1] > q[:, n, :, 0] + 1e-12,
                                  q[:, n, :, 1], q[:, n, :, 0])
        else:
            v[:, n, :] = np.where(policy[:, n, :] == 1, q[:, n, :, 1], q[:, n, :, 0])
        # unreachable-but-well-formed hands still need a value if they can be hit into
        v[:, n, :] = np.where(live[:, n, :], v[:, n, :], 0.0)
    q[~live] = np.nan
    return q


def _deal_value(v: np.ndarray) -> float:
    return float(np.mean([v[_VALUES[r], 1, _FACES[r]] for r in range(NUM_RANKS)]))


@functools.lru_cache(maxsize=None)
def _optimal_q() -> np.ndarray:
    q = _solve(None)
    q[~_reachable()] = np.nan
    q.setflags(write=False)
    return q


def optimal_q() -> np.ndarray:
    """float64 [22, 6, 6, 2]: exact optimal action values (NaN outside reachable states)."""
    return _optimal_q().copy()


@functools.lru_cache(maxsize=None)
def _optimal_policy() -> np.ndarray:
    q = _optimal_q()
    pol = np.where(np.nan_to_num(q[..., 1], nan=-np.inf) > np.nan_to_num(q[..., 0], nan=0.0)
                   + 1e-12, 1, 0).astype(np.int32)
    pol.setflags(write=False)
    return pol


def optimal_policy() -> np.ndarray:
    """int32 [22, 6, 6]: 1 = hit, 0 = stick (ties and non-reachable entries: 0)."""
    return _optimal_policy().copy()


@functools.lru_cache(maxsize=None)
def optimal_value() -> float:
    """Expected reward from the deal under optimal play."""
    q = _optimal_q()
    v = np.nan_to_num(np.fmax(q[..., 0], q[..., 1]), nan=0.0)
    return _deal_value(v)


def _as_policy(policy) -> np.ndarray:
    policy = np.asarray(policy)
    if policy.shape != SHAPE:
        raise ValueError(f"policy must have shape {SHAPE}, got {policy.shape}")
    policy = (np.where(_reachable(), policy, 0)).astype(np.int8)
    if not np.isin(policy, (0, 1)).all():
        raise ValueError("policy entries at reachable states must be 0 (stick) or 1 (hit)")
    return policy


@functools.lru_cache(maxsize=256)
def _policy_q_cached(key: bytes) -> np.ndarray:
    policy = np.frombuffer(key, np.int8).reshape(SHAPE)
    q = _solve(policy)
    q[~_reachable()] = np.nan
    q.setflags(write=False)
    return q


def policy_q(policy) -> np.ndarray:
    """float64 [22, 6, 6, 2]: exact action values of a deterministic ``policy``
    (int [22, 6, 6], 0 = stick, 1 = hit; only reachable entries are read). NaN elsewhere."""
    return _policy_q_cached(_as_policy(policy).tobytes()).copy()


def policy_value(policy) -> float:
    """Exact expected reward from the deal of a deterministic ``policy`` (int [22, 6, 6])."""
    pol = _as_policy(policy)
    q = _policy_q_cached(pol.tobytes())
    v = np.where(pol == 1, q[..., 1], q[..., 0])
    return _deal_value(np.nan_to_num(v, nan=0.0))


def stick_values() -> np.ndarray:
    """float64 [22, 6]: exact expected reward of sticking with ``(player_sum, num_cards)``
    (meaningful for sums < 21 and 1..4 cards)."""
    return _stick_values().copy()


#: flat tabular index space of a player's decision states (the solver's layout)
NUM_STATES = int(np.prod(SHAPE))


def state_index(state) -> "jax.Array":
    """Flat index of a ten-and-a-half state in the ``SHAPE`` layout: int32 [] (traceable)."""
    s, n, f = state.player_sum, state.num_cards, state.num_faces
    return (s * SHAPE[1] + n) * SHAPE[2] + f
