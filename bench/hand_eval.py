"""Hands per second of ``jaxgames.holdem.hand_eval.evaluate`` against eval7 and phevaluator, same process.

    python -m bench.hand_eval [--log2-batch 20] [--repeats 21] [--peer-hands 200000]

Ours: one jitted call on a batch of 2**20 random 7-card hands (int8, drawn in NumPy before
timing), after a warm-up call (compilation), waiting on ``block_until_ready``; the median and
the best of ``repeats`` calls. Also timed in the same rounds, as a floor: a jitted per-hand
sum of the same cards (int8 [B, 7] -> int32 [B]: the evaluator's reads and writes, no work).
The 5- and 6-card evaluators are timed the same way.

Peers: eval7 (``eval7.evaluate`` on a list of ``eval7.Card``) and phevaluator
(``evaluate_cards`` on seven ints), through their Python APIs, one hand per call, on
``peer-hands`` of the same hands, with the card objects and lists built before timing; the
median of three passes. Their results are checked against ours on the way (same order).

The ratio is hands per second of ours over the peer's. Calls take turns within each round,
so a burst of load from other processes hits every side alike; the 1-minute load average is
printed beside the numbers.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import hand_eval as H


def _random_hands(num: int, n: int, seed: int = 0) -> np.ndarray:
    """int8 [num, n]: uniformly random hands of n distinct cards."""
    rng = np.random.default_rng(seed)
    out = np.empty((num, n), np.int8)
    for start in range(0, num, 1 << 16):  # argsort of 52 keys per hand, in blocks
        stop = min(num, start + (1 << 16))
        out[start:stop] = np.argsort(rng.random((stop - start, 52)), axis=1)[:, :n]
    return out


def _time_jitted(fns: list, args: list, repeats: int) -> list[np.ndarray]:
    """Seconds of each ``fns[i](args[i])`` over ``repeats`` rounds (taking turns), after a
    warm-up call each."""
    for fn, a in zip(fns, args):
        jax.block_until_ready(fn(a))
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, (fn, a) in enumerate(zip(fns, args)):
            t = time.perf_counter()
            jax.block_until_ready(fn(a))
            times[i].append(time.perf_counter() - t)
    return [np.array(t) for t in times]


def _entry_ops(fn, arg) -> list[str]:
    """The instructions of the compiled program's entry computation (one fused loop is one)."""
    text = fn.lower(arg).compile().as_text()
    entry = text[text.index("ENTRY"):].split("\n}")[0].splitlines()[1:]
    return [line.split("=")[1].split("(")[0].split()[-1] for line in entry if "=" in line
            and "parameter(" not in line]


def _time_python(fn, passes: int = 3) -> tuple[float, object]:
    """Median seconds of ``passes`` calls of ``fn()`` and its last result."""
    times, out = [], None
    for _ in range(passes):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2-batch", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--peer-hands", type=int, default=200_000)
    args = parser.parse_args(argv)

    import eval7  # bench/test-only peers
    from phevaluator import evaluate_cards

    batch = 1 << args.log2_batch
    hands = {n: jnp.asarray(_random_hands(batch, n, seed=n)) for n in (7, 6, 5)}
    evaluate = jax.jit(H.evaluate)
    read_floor = jax.jit(lambda c: jnp.sum(c, axis=-1, dtype=jnp.int32))
    load_before = os.getloadavg()[0]
    t7, t6, t5, t_read = _time_jitted([evaluate, evaluate, evaluate, read_floor],
                                      [hands[7], hands[6], hands[5], hands[7]], args.repeats)

    # Peers on a subsample of the same 7-card hands, inputs prepared before timing.
    sub = np.asarray(hands[7][:args.peer_hands])
    rows = sub.tolist()
    deck7 = [eval7.Card(H.card_name(i)) for i in range(52)]
    e7_hands = [[deck7[c] for c in h] for h in rows]
    s_e7, e7 = _time_python(lambda: [eval7.evaluate(h) for h in e7_hands])
    s_ph, ph = _time_python(lambda: [evaluate_cards(*h) for h in rows])
    load_after = os.getloadavg()[0]

    ours_sub = np.asarray(evaluate(sub))
    dense = lambda v: np.unique(np.asarray(v), return_inverse=True)[1]  # noqa: E731
    same = bool((dense(ours_sub) == dense(e7)).all() and (dense(ours_sub) == dense(-np.array(ph))).all())

    rate = lambda t: batch / t  # noqa: E731
    ours7 = rate(np.median(t7))
    result = {
        "batch": batch,
        "ours_hands_per_s": ours7,
        "ours_best_hands_per_s": rate(t7.min()),
        "ours6_hands_per_s": rate(np.median(t6)),
        "ours5_hands_per_s": rate(np.median(t5)),
        "read_floor_hands_per_s": rate(np.median(t_read)),
        "eval7_hands_per_s": len(rows) / s_e7,
        "phevaluator_hands_per_s": len(rows) / s_ph,
        "same_order_as_peers": same,
        "load": (load_before, load_after),
    }
    result["ratio_eval7"] = ours7 / result["eval7_hands_per_s"]
    result["ratio_phevaluator"] = ours7 / result["phevaluator_hands_per_s"]

    result["entry_ops"] = _entry_ops(evaluate, hands[7])
    v = importlib.metadata.version
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}, {os.cpu_count()} cores), "
          f"jax {jax.__version__}, eval7 {v('eval7')}, phevaluator {v('phevaluator')}")
    print(f"batch {batch:,} random hands (int8), median of {args.repeats} calls; "
          f"peers: {len(rows):,} of the same 7-card hands, one Python call per hand, median of 3 passes; "
          f"load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"jaxgames evaluate, 7 cards: {ours7 / 1e6:>9.1f} M hands/s  "
          f"(best call {result['ours_best_hands_per_s'] / 1e6:.1f} M/s, "
          f"{np.median(t7) * 1e3:.2f} ms per batch)")
    print(f"jaxgames evaluate, 6 cards: {result['ours6_hands_per_s'] / 1e6:>9.1f} M hands/s")
    print(f"jaxgames evaluate, 5 cards: {result['ours5_hands_per_s'] / 1e6:>9.1f} M hands/s")
    print(f"compiled 7-card evaluator: {len(result['entry_ops'])} top-level op(s): "
          f"{', '.join(result['entry_ops'])}")
    print(f"floor: per-hand sum of the cards {result['read_floor_hands_per_s'] / 1e6:>6.1f} M hands/s "
          f"({np.median(t_read) * 1e3:.2f} ms)")
    print(f"eval7 (Python API):         {result['eval7_hands_per_s'] / 1e6:>9.2f} M hands/s   "
          f"ratio ours / eval7: {result['ratio_eval7']:,.0f}x")
    print(f"phevaluator (Python API):   {result['phevaluator_hands_per_s'] / 1e6:>9.2f} M hands/s   "
          f"ratio ours / phevaluator: {result['ratio_phevaluator']:,.0f}x")
    print(f"same order as eval7 and phevaluator on the {len(rows):,} hands: {same}")
    if not same:
        raise SystemExit("the evaluators disagree")
    return result


if __name__ == "__main__":
    main()
