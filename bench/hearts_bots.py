"""The Hearts players against each other, as Sturtevant & White evaluate: the table.

    python -m bench.hearts_bots [--deals 32] [--iie-deals 8] [--game-deals 4] [--worlds 20]
                                [--bots pie,iie,rule,random] [--variant paper] [--no-moon]
                                [--no-hands] [--iie-games] [--no-honesty] [--speed-batch 64]
                                [--seed 0]

* **Hands**: every pair of ``--bots`` over the 14 seatings that mix two types
  (:func:`jaxgames.hearts.evaluate.evaluate`), ``--deals`` deals per seating (``--iie-deals``
  for pairs with IIE, whose 20-world search costs about twenty PIE searches a move): points
  per hand of each type with 95% intervals over deals (break-even 6.5 without the moon), the
  difference, the share of hands won.
* **Games to 100**: the same pairs (IIE's only with ``--iie-games``), ``--game-deals`` deals per
  seating: points per game and the share of games won (ties split).
* **Honesty**: the arena's honesty check on every bot (states of real games): 0 for IIE,
  rule-based and random; PIE, which plays on the real cards by design, is flagged.
* **Speed**: the PIE's trick search against the same max^n through ``jaxgames.search.maxn``
  (identical moves, checked) on ``--speed-batch`` positions at each place of a trick, in the
  same process: positions per second and the ratio.

The variant defaults to the source's (``paper``: no passing, any lead); the moon is on (the
source had it off while training, on for the IIE games). Prints the command, versions,
device, CPU count and the load average before and after: timings vary with the machine's
load, the strength figures do not (the deals come from ``--seed``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import os
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.hearts import bots as B
from jaxgames.hearts import evaluate as E
from jaxgames.hearts.game import Hearts
from jaxgames.rollout import rollout
from jaxgames.search import maxn


def _versions() -> str:
    names = ("jax", "jaxlib", "numpy")
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in names)


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def speed(env: Hearts, batch: int, seed: int) -> list[str]:
    """Positions per second of trick_search and of maxn.py's search, per place in a trick."""
    lines = []
    keys = jax.random.split(jax.random.key(seed), batch)

    @jax.jit
    def positions(keys, moves):
        return jax.vmap(lambda k, n: rollout(env, env.init(k), core.random_policy, k, max_steps=n).state)(
            keys, moves)

    trick = jax.jit(jax.vmap(lambda s: B.trick_search(env, s).action))
    by_maxn = jax.jit(jax.vmap(lambda s: maxn.maxn_search(env, s, None, depth=4, max_branching=13,
                                                         value_fn=B.value_fn, stop=B.trick_over).action))
    passes = 12 if env.standard else 0
    for place in range(4):
        states = positions(keys, jnp.full(batch, passes + 20 + place, jnp.int32))   # trick 6
        times = {}
        for name, fn in (("trick_search", trick), ("maxn.py", by_maxn)):
            out = jax.block_until_ready(fn(states))        # compile + warm-up
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                jax.block_until_ready(fn(states))
                best = min(best, time.perf_counter() - start)
            times[name] = (best, np.asarray(out))
        same = np.array_equal(times["trick_search"][1], times["maxn.py"][1])
        t_trick, t_maxn = times["trick_search"][0], times["maxn.py"][0]
        lines.append(f"  place {place} in the trick: trick_search {batch / t_trick:10.0f} positions/s, "
                     f"maxn.py {batch / t_maxn:8.0f} positions/s, ratio {t_maxn / t_trick:6.1f}x, "
                     f"same moves: {same}")
        if not same:
            raise SystemExit("trick_search and maxn.py disagree: a bug")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.hearts_bots", description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=32, help="deals per seating, pairs without IIE (default 32)")
    p.add_argument("--iie-deals", type=int, default=8, help="deals per seating, pairs with IIE (default 8)")
    p.add_argument("--no-hands", dest="hands", action="store_false", help="skip the single hands")
    p.add_argument("--game-deals", type=int, default=4,
                   help="deals per seating of games to 100 (default 4; 0 skips them)")
    p.add_argument("--iie-games", action="store_true", help="also play IIE's pairs in games to 100 (slow)")
    p.add_argument("--worlds", type=int, default=B.DEFAULT_WORLDS, help="IIE's sampled worlds (default 20)")
    p.add_argument("--bots", default=",".join(B.BOT_NAMES), help="comma-separated bots (default all four)")
    p.add_argument("--variant", choices=("paper", "standard"), default="paper")
    p.add_argument("--no-moon", dest="moon", action="store_false")
    p.add_argument("--target-score", type=int, default=100)
    p.add_argument("--no-honesty", dest="honesty", action="store_false")
    p.add_argument("--speed-batch", type=int, default=64, help="positions per speed measurement (0 skips it)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    names = args.bots.split(",")
    for n in names:
        if n not in B.BOT_NAMES:
            p.error(f"argument --bots: unknown bot {n!r} (choose from {', '.join(B.BOT_NAMES)})")
    if min(args.deals, args.iie_deals) < 2 or args.game_deals == 1:
        p.error("--deals, --iie-deals and --game-deals must be at least 2 (intervals are over deals)")

    print("command: python -m bench.hearts_bots " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, device {jax.devices()[0]}; {_versions()}")
    print(f"start: {_load()}")
    started = time.perf_counter()
    hand_env = Hearts(variant=args.variant, moon=args.moon)
    game_env = Hearts(variant=args.variant, moon=args.moon, target_score=args.target_score)
    options = {"iie": {"num_worlds": args.worlds}}
    key = jax.random.key(args.seed)

    if args.speed_batch:
        print(f"\nspeed: the PIE's search, trick_search vs maxn.py (depth 4, 13 branches, stop at the "
              f"trick's end), batch {args.speed_batch}, best of 3")
        for line in speed(hand_env, args.speed_batch, args.seed):
            print(line, flush=True)

    results = []
    if args.hands:
        print(f"\nsingle hands ({args.variant} variant, moon {'on' if args.moon else 'off'}), 14 seatings per pair:")
    for i, (a, b) in enumerate(itertools.combinations(names, 2) if args.hands else ()):
        deals = args.iie_deals if "iie" in (a, b) else args.deals
        bots = [B.make_bot(hand_env, n, **options.get(n, {})) for n in (a, b)]
        start = time.perf_counter()
        r = E.evaluate(hand_env, bots, jax.random.fold_in(key, i), deals=deals)
        results.append(r)
        print(f"  {r.line()}  [{time.perf_counter() - start:.0f} s]", flush=True)

    if args.game_deals:
        print(f"\ngames to {args.target_score}, 14 seatings per pair:")
        for i, (a, b) in enumerate(itertools.combinations(names, 2)):
            if "iie" in (a, b) and not args.iie_games:
                continue
            bots = [B.make_bot(game_env, n, **options.get(n, {})) for n in (a, b)]
            start = time.perf_counter()
            r = E.evaluate(game_env, bots, jax.random.fold_in(key, 100 + i), deals=args.game_deals)
            results.append(r)
            print(f"  {r.line()}  [{time.perf_counter() - start:.0f} s]", flush=True)

    if args.honesty:
        print("\nhonesty (the arena's check: share of moves that change when the unseen cards are redealt, "
              "16 states of real games, 4 redeals x 2 keys):")
        for n in names:
            bot = B.make_bot(hand_env, n, **options.get(n, {}))
            share = E.honesty(hand_env, [bot], jax.random.fold_in(key, 200))[0]
            verdict = "honest" if share == 0 else ("reads hidden cards (by design)" if not bot.honest else "CHEATS")
            print(f"  {n:7s} {share:.3f}  {verdict}", flush=True)

    print("\n" + E.format_results(results))
    print(f"\nend: {_load()}; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
