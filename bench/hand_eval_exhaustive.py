"""Every 5-, 6- and 7-card hand through ``jaxgames.holdem.hand_eval.evaluate``: exact category counts.

    python -m bench.hand_eval_exhaustive [--no-peer]

Prints the count of each category over all C(52, n) hands and asserts the published counts
(7 cards: straight flush 41,584 ... high card 23,294,460 of 133,784,560), the number of
distinct values (hand classes: 7,462 for five cards, 6,075 for six, 4,824 for seven), and, unless
``--no-peer``, that all 2,598,960 five-card hands are ordered exactly as phevaluator orders
them (its Python API, one hand at a time: about ten seconds).

How the hands are enumerated: the deck is cut into two halves of 26 cards, and a hand of n
cards is k cards of the first half with n - k of the second, so the hands of one k are the
Cartesian product of two small lists of combinations (Vandermonde's identity, summed over
k). A jitted broadcast of the two lists feeds the evaluator and a fused reduction counts the
categories, so nothing of size C(52, 7) is ever materialized.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import hand_eval as H

HALF = 26


@functools.lru_cache(maxsize=None)
def _combinations(k: int) -> np.ndarray:
    """int8 [C(26, k), k]: every k-subset of the cards 0..25, one per row."""
    if k == 0:
        return np.zeros((1, 0), np.int8)
    return np.array(list(itertools.combinations(range(HALF), k)), np.int8)


def _product_hands(low: jax.Array, high: jax.Array) -> jax.Array:
    """int8 [A, B, k + m]: each row of ``low`` [A, k] with each of ``high`` [B, m] + 26."""
    a, b = low.shape[0], high.shape[0]
    return jnp.concatenate([jnp.broadcast_to(low[:, None, :], (a, b, low.shape[1])),
                            jnp.broadcast_to(high[None, :, :] + HALF, (a, b, high.shape[1]))], -1)


@jax.jit
def _count_block(low: jax.Array, high: jax.Array) -> jax.Array:
    """int32 [9]: category counts of the hands ``_product_hands(low, high)``."""
    cat = H.category(H.evaluate(_product_hands(low, high)))
    # One variadic reduction of nine indicators: the evaluator runs once per hand (a sum of
    # a one-hot [..., 9] made XLA evaluate each hand once per category).
    ones = tuple((cat == j).astype(jnp.int32) for j in range(9))
    sums = jax.lax.reduce(ones, (jnp.int32(0),) * 9,
                          lambda x, y: tuple(u + v for u, v in zip(x, y)), (0, 1))
    return jnp.stack(sums)


def _blocks(num_cards: int):
    for k in range(num_cards + 1):
        yield _combinations(k), _combinations(num_cards - k)


def category_counts(num_cards: int) -> np.ndarray:
    """int64 [9]: how many of the C(52, num_cards) hands fall in each category (5..7 cards)."""
    if num_cards not in (5, 6, 7):
        raise ValueError(f"num_cards must be 5, 6 or 7, got {num_cards!r}")
    total = np.zeros(9, np.int64)
    for low, high in _blocks(num_cards):
        total += np.asarray(_count_block(low, high), np.int64)
    return total


@jax.jit
def _values_block(low: jax.Array, high: jax.Array) -> jax.Array:
    return H.evaluate(_product_hands(low, high)).reshape(-1)


def distinct_values(num_cards: int) -> np.ndarray:
    """int32 [classes]: the sorted distinct values over all hands of ``num_cards`` cards."""
    seen = np.zeros(0, np.int32)
    for low, high in _blocks(num_cards):
        seen = np.union1d(seen, np.unique(np.asarray(_values_block(low, high))))
    return seen


def all_hands(num_cards: int) -> np.ndarray:
    """int8 [C(52, num_cards), num_cards]: every hand once (cards in no particular order).

    Materialized: meant for five cards (13 MB); six take 122 MB, seven 936 MB.
    """
    out = []
    for low, high in _blocks(num_cards):  # the blocks of _count_block, built in NumPy
        a, b = len(low), len(high)
        out.append(np.concatenate([np.broadcast_to(low[:, None, :], (a, b, low.shape[1])),
                                   np.broadcast_to(high[None, :, :] + HALF, (a, b, high.shape[1]))],
                                  -1).reshape(-1, num_cards))
    return np.concatenate(out)


def _check_five_against_phevaluator() -> int:
    """Every five-card hand: our order equals phevaluator's; returns the number of hands."""
    from phevaluator import evaluate_cards

    hands = all_hands(5)
    ours = np.asarray(jax.jit(H.evaluate)(hands))
    theirs = -np.fromiter((evaluate_cards(*h) for h in hands.tolist()), np.int64, len(hands))
    dense = lambda v: np.unique(v, return_inverse=True)[1]  # noqa: E731
    np.testing.assert_array_equal(dense(ours), dense(theirs))
    return len(hands)


KNOWN = {5: H.FIVE_CARD_COUNTS, 6: H.SIX_CARD_COUNTS, 7: H.SEVEN_CARD_COUNTS}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peer", action="store_true", help="skip the 5-card phevaluator check")
    args = parser.parse_args(argv)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}, {os.cpu_count()} cores), "
          f"jax {jax.__version__}; load average {os.getloadavg()[0]:.2f}")
    result = {}
    for n in (5, 6, 7):
        t = time.perf_counter()
        counts = category_counts(n)
        seconds = time.perf_counter() - t
        t = time.perf_counter()
        again = category_counts(n)  # compiled, combinations cached: the evaluation's own speed
        warm = time.perf_counter() - t
        assert (again == counts).all()
        t = time.perf_counter()
        classes = len(distinct_values(n))
        class_seconds = time.perf_counter() - t
        print(f"\n{n} cards: {counts.sum():,} hands, counted in {seconds:.2f} s with compilation, "
              f"{warm:.2f} s warm ({counts.sum() / warm / 1e6:.0f} M hands/s); "
              f"{classes:,} distinct values ({class_seconds:.1f} s)")
        for name, c in zip(H.CATEGORY_NAMES, counts):
            print(f"  {name:<16} {c:>12,}")
        assert tuple(counts.tolist()) == KNOWN[n], f"{n}-card counts differ from the known ones"
        assert classes == H.NUM_CLASSES[n], f"{classes} classes, expected {H.NUM_CLASSES[n]}"
        print(f"  = the published counts and {H.NUM_CLASSES[n]:,} classes")
        result[n] = {"counts": counts.tolist(), "seconds": seconds, "warm_seconds": warm,
                     "classes": classes}
    if not args.no_peer:
        t = time.perf_counter()
        hands = _check_five_against_phevaluator()
        print(f"\nall {hands:,} five-card hands in phevaluator's order ({time.perf_counter() - t:.1f} s)")
    return result


if __name__ == "__main__":
    main()
