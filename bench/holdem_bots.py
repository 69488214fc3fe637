"""Hold'em baselines: the duplicate round robin and the local best response (LBR) of each.

    python -m bench.holdem_bots [--deals 20000] [--lbr-deals 1024] [--equity-lbr-deals 256]
                                [--seed 0] [--quick]

* Round robin: every pair of the baselines of ``jaxgames.holdem.bots`` (random, call, all-in,
  fold, equity) in a duplicate match of ``deals`` deals (each played twice, seats swapped:
  2 * deals hands), through one compiled arena (``bots.one_of``), in mbb/hand for the row
  bot with a 95% interval over deals.
* LBR (``jaxgames.holdem.lbr``): LBR's winnings against each baseline, mbb/hand with a 95%
  interval over deals, both seats (each deal played with LBR on the button and in the big
  blind). ``lbr-deals`` deals per bot, ``equity-lbr-deals`` against the equity bot (its
  probabilities over 1,326 hands at every move are the costly part), run in chunks of
  ``chunk`` deals by one compiled program per bot.
* Monte Carlo equity throughput (deals per second), ours (``equity.equity`` vmapped over
  hands) against eval7's ``py_hand_vs_range_monte_carlo`` (C, one hand at a time) in the same
  process: a ratio.

Prints the device, the load average (the machine is shared: timings are noisy), versions and
the command. docs/holdem_eval.md keeps the last table.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import Holdem, bots as B, equity as E, lbr as L


def _versions() -> str:
    from importlib.metadata import version
    return (f"jax {jax.__version__}, eval7 {version('eval7')}, numpy {np.__version__}, "
            f"python {platform.python_version()}")


def round_robin(env, names, deals: int, seed: int) -> dict:
    """{(row, column): HeadToHead} for every ordered pair row < column, one compiled arena."""
    table = [B.make_bot(env, n) for n in names]
    a, b = B.one_of(table), B.one_of(table)
    out = {}
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            out[names[i], names[j]] = B.head_to_head(
                env, a, b, jax.random.key(seed * 1000 + 10 * i + j), num_deals=deals,
                params=[jnp.int32(i), jnp.int32(j)])
    return out


def lbr_value(env, bot, deals: int, chunk: int, seed: int, wp_samples: int) -> tuple[L.LBRResult, float]:
    """LBR against ``bot`` over ``deals`` deals in chunks of ``chunk`` (one compile), pooled."""
    chunk = min(chunk, deals)
    runner = L.LocalBestResponse(env, bot, num_deals=chunk, wp_samples=wp_samples)
    t = time.perf_counter()
    parts = [runner(None, jax.random.key(seed * 7919 + c)) for c in range(-(-deals // chunk))]
    seconds = time.perf_counter() - t
    return L.pooled(parts, deals, env.big_blind), seconds


def equity_throughput(num_hands: int, samples: int, repeats: int = 3) -> tuple[float, float]:
    """Monte Carlo deals per second: ours (vmapped over ``num_hands`` random preflop hands) and
    eval7's (the same hands, one call each, against the full range)."""
    import eval7

    rng = np.random.default_rng(0)
    holes = np.stack([rng.choice(52, 2, replace=False) for _ in range(num_hands)]).astype(np.int32)
    boards = np.full((num_hands, 5), -1, np.int32)
    ours = jax.jit(jax.vmap(lambda h, b, k: E.equity(h, b, k, num_samples=samples), in_axes=(0, 0, None)))
    jax.block_until_ready(ours(holes, boards, jax.random.key(0)))
    best_ours = min(_timed(lambda: jax.block_until_ready(ours(holes, boards, jax.random.key(r + 1))))
                    for r in range(repeats))
    cards = [eval7.Card(r + s) for r in "23456789TJQKA" for s in "cdhs"]
    full = eval7.HandRange(",".join(["22+"] + [f"{hi}2{k}+" for hi in "AKQJT9876543" for k in "so"]))
    peer_hands = max(1, num_hands // 16)
    best_peer = min(_timed(lambda: [eval7.py_hand_vs_range_monte_carlo(
        [cards[holes[i, 0]], cards[holes[i, 1]]], full, [], samples) for i in range(peer_hands)])
        for _ in range(repeats))
    return num_hands * samples / best_ours, peer_hands * samples / best_peer


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20_000, help="deals per round-robin pairing")
    parser.add_argument("--lbr-deals", type=int, default=1_024, help="LBR deals per simple bot")
    parser.add_argument("--equity-lbr-deals", type=int, default=256, help="LBR deals against the equity bot")
    parser.add_argument("--chunk", type=int, default=128, help="LBR deals per compiled call")
    parser.add_argument("--wp-samples", type=int, default=L.DEFAULT_WP_SAMPLES,
                        help="LBR's board completions per win-probability estimate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.deals, args.lbr_deals, args.equity_lbr_deals, args.chunk = 512, 64, 16, 16
    for name in ("deals", "lbr_deals", "equity_lbr_deals", "chunk", "wp_samples"):
        if getattr(args, name) < 2:
            parser.error(f"argument --{name.replace('_', '-')}: must be at least 2")

    env = Holdem()
    names = list(B.BOT_NAMES)
    print(f"command: python -m bench.holdem_bots {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the start; {_versions()}")
    print(f"HUNL {env.stack:,} chips, blinds {env.small_blind}/{env.big_blind}; equity bot: "
          f"{B.EquityBotConfig()}")

    t = time.perf_counter()
    rr = round_robin(env, names, args.deals, args.seed)
    rr_seconds = time.perf_counter() - t
    print(f"\nDuplicate round robin, row bot's mbb/hand ± 95% (over deals), {args.deals:,} deals = "
          f"{2 * args.deals:,} hands per pairing ({rr_seconds:.0f} s with the compile):")
    width = 18
    print(" " * 8 + "".join(f"{n:>{width}}" for n in names))
    for r in names:
        cells = []
        for c in names:
            if r == c:
                cells.append(f"{'—':>{width}}")
                continue
            h = rr[r, c] if (r, c) in rr else rr[c, r]
            sign = 1 if (r, c) in rr else -1
            cells.append(f"{sign * h.mean:>+10,.0f} ±{h.ci95:>6,.0f}")
        print(f"{r:<8}" + "".join(cells))

    print(f"\nLBR winnings, mbb/hand ± 95% over deals (both seats), wp from {args.wp_samples} board completions:")
    lbr = {}
    for n in names:
        deals = args.equity_lbr_deals if n == "equity" else args.lbr_deals
        res, seconds = lbr_value(env, B.make_bot(env, n), deals, args.chunk, args.seed, args.wp_samples)
        lbr[n] = res
        print(f"  {n:<8} {res.mean:>+10,.0f} ± {res.ci95:>6,.0f}   button {res.seat_mean[0]:>+10,.0f} ± "
              f"{res.seat_ci95[0]:>6,.0f}   big blind {res.seat_mean[1]:>+10,.0f} ± {res.seat_ci95[1]:>6,.0f}   "
              f"all-in adjusted {res.allin_mean:>+10,.0f} ± {res.allin_ci95:>6,.0f}   {res.num_hands:,} hands ({res.steps.mean():.1f} actions each), {seconds:.0f} s "
              f"({res.num_hands / seconds:,.1f} hands/s with the compile)")

    ours, peer = equity_throughput(num_hands=1024, samples=1000)
    print(f"\nMonte Carlo equity (preflop, 1,000 deals per hand): ours {ours / 1e6:,.1f} M deals/s (1,024 hands, "
          f"vmapped), eval7 {peer / 1e6:,.2f} M deals/s (64 hands, one call each); ratio {ours / peer:.1f}x")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return {"round_robin": rr, "lbr": lbr, "equity_deals_per_s": (ours, peer)}


if __name__ == "__main__":
    main()
