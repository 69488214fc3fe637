"""The trick search with a learned value: positions per second at a lead, against maxn.py.

    python -m bench.hearts_trick_search [--values features,standin] [--batch 64] [--maxn-batch 4]
                                        [--max-active 16] [--partners 20] [--chunk 512]
                                        [--max-leaves 4096] [--seed 0]

The search of the Hearts learner (``jaxgames.hearts.trick_maxn``: max^n to the end of the
trick, any value at the leaves, only the legal leaves evaluated), the value of all four seats
at every leaf (the learned value stands for the opponents), with two linear values over sparse
features:

* ``features``: the learner's own, the Q♠ predictor's (``jaxgames.hearts.features``): the 60
  atoms of the state from each seat, every AND of 1 to 4 of the first ``--max-active`` active
  ones (16: 2,516 slots per seat; about 14 atoms are active on average) indexed into the
  523,685 weights, summed;
* ``standin``: the stand-in written before the features existed: ``52 x --partners`` (1,040)
  indices per seat from each card's relation to the seat AND-ed with ``--partners`` other
  cards', into 2^19 weights;
* ``keyed``: the learner's value itself (``jaxgames.hearts.learned.value_fn``, the Q♠
  predictor over ANDs of 1 to 4 atoms), read through its key (the weights summed once per
  distinct atom vector of a chunk) against the same value per leaf: the ratio, same results.

The weights are multiples of 2^-10, so the sums are exact and the two searches' values can be
compared exactly. For each value:

* **At a lead** (the hardest case: the most leaves): ``--batch`` positions of random games of
  the paper variant, each at the lead of one of the first six tricks, searched as one vmapped
  batch: positions/s, leaves/s, leaves per position.
* **maxn.py** (``maxn_search(depth=4, max_branching=13, stop=trick over)``, the same value) on
  the first ``--maxn-batch`` of those positions, and the trick search on the same ones: the
  ratio, and whether they agree (moves and values, exactly).
* **A hand**: positions of every trick at each place (lead, 2nd, 3rd, 4th card): positions/s
  per place, and the seconds of a hand's 52 searches (every seat searching), 13 of each place.

Then **PIE's evaluation**: the trick search with ``jaxgames.hearts.bots.value_fn`` against
PIE's own search, which hard-codes that evaluation on a 13^4 grid, at a lead.

Prints the command, CPU model, versions and the load average before and after: the machine's
load moves the timings, not the ratios measured in one run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from bench.timing import best_seconds, cpu_model
from jaxgames import core
from jaxgames.hearts import bots as B
from jaxgames.hearts import features as F
from jaxgames.hearts import learned
from jaxgames.hearts import trick_maxn as T
from jaxgames.hearts.game import Hearts
from jaxgames.rollout import rollout
from jaxgames.search import maxn

NUM_WEIGHTS = 1 << 19




def _versions() -> str:
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in ("jax", "jaxlib", "numpy"))


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def standin_value(partners: int):
    """(``value_fn(weights, state) -> float32 [4]``, number of weights): the stand-in value (module
    docstring), ``52 * partners`` weights read per seat."""
    gen = np.random.default_rng(0)
    partner = (np.arange(52)[:, None] + 1 + 2 * np.arange(partners)[None, :]) % 52            # [52, P]
    base = (gen.integers(0, NUM_WEIGHTS, (52, partners)) & ~63).astype(np.int32)             # [52, P]

    def seat_value(weights, state, seat):
        relation = (state.owner.astype(jnp.int32) - seat) & 3                    # 0 its own, 1..3 the next seats
        code = jnp.where(state.owner >= 0, relation, jnp.where(state.taken_by == seat, 4, 5))   # [52] 0..5
        index = base + code[:, None] * 8 + code[partner]                          # [52, P] < 2^19
        return -weights[index].sum()

    return T.per_seat(seat_value), NUM_WEIGHTS


def features_value(max_active: int):
    """(``value_fn(weights, state) -> float32 [4]``, number of weights): minus the Q♠ predictor's linear
    value, every AND of 1 to 4 of the first ``max_active`` active atoms."""
    spec = F.FeatureSpec.of(F.NUM_ATOMS_QS, 4, max_active=max_active)

    def seat_value(weights, state, seat):
        index, valid = F.active_indices(F.atoms_qs(state, seat), include=spec)
        return -jnp.where(valid, weights[index], 0.0).sum()

    return T.per_seat(seat_value), spec.num_features


def positions(env: Hearts, batch: int, moves: np.ndarray, seed: int):
    """``batch`` states of random games, game i after ``moves[i]`` random moves."""
    keys = jax.random.split(jax.random.key(seed), batch)
    play = jax.jit(jax.vmap(lambda k, n: rollout(env, env.init(k), core.random_policy, k, max_steps=n).state))
    return play(keys, jnp.asarray(moves, jnp.int32))


def measure(env: Hearts, value, num_weights: int, args) -> None:
    """The three measurements of one value (module docstring)."""
    gen = np.random.default_rng(args.seed)
    weights = jnp.asarray(gen.integers(-1024, 1025, num_weights) / 1024.0, jnp.float32)
    search = jax.jit(jax.vmap(lambda s, w: T.trick_search(env, value, s, w, max_leaves=args.max_leaves,
                                                          chunk=args.chunk), (0, None)))
    by_maxn = jax.jit(jax.vmap(lambda s, w: maxn.maxn_search(env, s, w, depth=4, max_branching=13, value_fn=value,
                                                             stop=B.trick_over), (0, None)))
    n = args.batch

    # At a lead.
    leads = positions(env, n, 4 * (np.arange(n) % 6), args.seed)
    out = jax.block_until_ready(search(leads, weights))
    t = best_seconds(search, leads, weights)
    leaves = np.asarray(out.num_leaves)
    print(f"  at a lead (tricks 1-6 of random games), batch {n}, best of 3: {n / t:.1f} positions/s, "
          f"{leaves.sum() / t:.0f} leaves/s; leaves per position mean {leaves.mean():.0f}, max {leaves.max()}; "
          f"past the cap: {int(np.asarray(out.overflow).sum())}", flush=True)

    # maxn.py on the same positions and value.
    m = args.maxn_batch
    few = jax.tree_util.tree_map(lambda x: x[:m], leads)
    ref = jax.block_until_ready(by_maxn(few, weights))
    t_maxn = best_seconds(by_maxn, few, weights, repeats=1)
    mine = jax.block_until_ready(search(few, weights))
    t_few = best_seconds(search, few, weights)
    same = all(np.array_equal(np.asarray(getattr(mine, f)), np.asarray(getattr(ref, f)), equal_nan=True)
               for f in ("action", "own_values", "action_values"))
    print(f"  maxn.py on the first {m}: {m / t_maxn:.2f} positions/s, the trick search on them {m / t_few:.1f}/s: "
          f"ratio {t_maxn / t_few:.0f}x; same moves and values: {same}", flush=True)
    if not same:
        raise SystemExit("the trick search and maxn.py disagree: a bug")

    # A hand: every trick, each place.
    seconds = 0.0
    rates = []
    for place in range(4):
        states = positions(env, n, 4 * (np.arange(n) % 13) + place, args.seed + 1 + place)
        out = jax.block_until_ready(search(states, weights))
        t = best_seconds(search, states, weights)
        seconds += 13 * t / n
        rates.append(f"{n / t:.0f} ({np.asarray(out.num_leaves).mean():.0f} leaves)")
    print(f"  a hand (tricks 1-13), positions/s by card of the trick: {', '.join(rates)}; a hand's 52 "
          f"searches (every seat searching) {seconds:.2f} s, {1 / seconds:.1f} hands/s", flush=True)


def measure_keyed(env: Hearts, args) -> None:
    """The learner's own value (``jaxgames.hearts.learned.value_fn``, the Q♠ predictor over ANDs
    of 1 to 4 atoms) read through its key (its weights summed once per distinct atom vector of a
    chunk's leaves and seats) against the same value per leaf, at a lead and at every card of a
    hand: positions/s of each, the ratio, the same moves and values."""
    spec = learned.ValueSpec("qs", F.FeatureSpec.of(F.NUM_ATOMS_QS, 4, max_active=args.max_active),
                             F.FeatureSpec.of(F.NUM_ATOMS_HEARTS, 3, max_active=args.max_active))
    keyed = learned.value_fn(spec)
    plain = T.per_seat(keyed.seat_value)
    gen = np.random.default_rng(args.seed)
    weights = jnp.asarray(gen.integers(-64, 257, spec.num_features) / 1024.0, jnp.float32)
    searches = {name: jax.jit(jax.vmap(lambda s, w, v=v, c=c: T.trick_search(env, v, s, w, max_leaves=args.max_leaves,
                                                                             chunk=c), (0, None)))
                for name, v, c in (("keyed", keyed, learned.LEAF_CHUNK), ("per leaf", plain, args.chunk))}
    n = args.batch
    for what, moves in (("at a lead (tricks 1-6)", 4 * (np.arange(n) % 6)),
                        ("a hand's positions (every trick and card)", np.arange(n) % 52)):
        states = positions(env, n, moves, args.seed + 7)
        outs = {k: jax.block_until_ready(f(states, weights)) for k, f in searches.items()}
        times = {k: best_seconds(f, states, weights) for k, f in searches.items()}
        same = all(np.array_equal(np.asarray(getattr(outs["keyed"], f)), np.asarray(getattr(outs["per leaf"], f)),
                                  equal_nan=True) for f in ("action", "own_values", "action_values"))
        leaves = int(np.asarray(outs["keyed"].num_leaves).sum())
        print(f"  {what}, batch {n}: keyed (chunk {learned.LEAF_CHUNK}) {n / times['keyed']:.1f} positions/s "
              f"({leaves / times['keyed']:.0f} leaves/s), per leaf (chunk {args.chunk}) "
              f"{n / times['per leaf']:.1f} ({leaves / times['per leaf']:.0f} leaves/s): ratio "
              f"{times['per leaf'] / times['keyed']:.2f}x; same moves and values: {same}", flush=True)
        if not same:
            raise SystemExit("the keyed and the per-leaf value disagree: a bug")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.hearts_trick_search", description=__doc__.split("\n\n")[0])
    p.add_argument("--values", default="features,standin,keyed",
                   help="comma-separated: features, standin, keyed (default all)")
    p.add_argument("--batch", type=int, default=64, help="positions per search call (default 64)")
    p.add_argument("--maxn-batch", type=int, default=4, help="positions for the maxn.py comparison (default 4)")
    p.add_argument("--max-active", type=int, default=16, help="features: atoms combined at most (default 16)")
    p.add_argument("--partners", type=int, default=20, help="standin: 52 x this indices per seat (default 20)")
    p.add_argument("--chunk", type=int, default=T.DEFAULT_CHUNK, help="leaves per loop iteration")
    p.add_argument("--max-leaves", type=int, default=T.DEFAULT_MAX_LEAVES, help="leaves kept per position")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    names = args.values.split(",")
    for name in names:
        if name not in ("features", "standin", "keyed"):
            p.error(f"argument --values: unknown value {name!r} (choose from features, standin, keyed)")
    if not 1 <= args.maxn_batch <= args.batch:
        p.error("--maxn-batch must be from 1 to --batch")

    print("command: python -m bench.hearts_trick_search " + " ".join(sys.argv[1:] if argv is None else argv))
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, device {jax.devices()[0]}; {_versions()}")
    print(f"start: {_load()}", flush=True)
    started = time.perf_counter()
    env = Hearts(variant="paper")
    print(f"trick search: max_leaves {args.max_leaves}, chunk {args.chunk}; the value of the 4 seats at each leaf")
    for name in names:
        if name == "features":
            spec = F.FeatureSpec.of(F.NUM_ATOMS_QS, 4, max_active=args.max_active)
            print(f"\nvalue 'features': the Q♠ predictor, {spec.num_features:,} weights, {spec.num_slots:,} "
                  f"slots per seat (ANDs of 1-4 of the first {args.max_active} active atoms)")
            value, num_weights = features_value(args.max_active)
        elif name == "standin":
            print(f"\nvalue 'standin': {52 * args.partners:,} indices per seat into {NUM_WEIGHTS:,} weights")
            value, num_weights = standin_value(args.partners)
        else:
            print("\nvalue 'keyed': the learner's Q♠ value (ANDs of 1-4 atoms) through its key, against per leaf")
            measure_keyed(env, args)
            continue
        measure(env, value, num_weights, args)

    # PIE's evaluation: the generic search against PIE's hard-coded one.
    n = args.batch
    leads = positions(env, n, 4 * (np.arange(n) % 6), args.seed)
    pie_generic = jax.jit(jax.vmap(lambda s: T.trick_search(env, B.value_fn, s, max_leaves=args.max_leaves,
                                                            chunk=args.chunk).action))
    pie_grid = jax.jit(jax.vmap(lambda s: B.trick_search(env, s).action))
    a, b = np.asarray(pie_generic(leads)), np.asarray(pie_grid(leads))
    t_generic, t_grid = best_seconds(pie_generic, leads), best_seconds(pie_grid, leads)
    print(f"\nPIE's evaluation at a lead, batch {n}: trick search {n / t_generic:.0f} positions/s, PIE's own "
          f"13^4-grid search {n / t_grid:.0f} positions/s (ratio {t_grid / t_generic:.2f}x); same moves: "
          f"{np.array_equal(a, b)}")
    print(f"\nend: {_load()}; {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
