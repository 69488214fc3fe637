"""Evaluations per second of the Hex network (the source's by default), jitted, on this device.

    python -m bench.hex_network [--size 11] [--kind source] [--batches 1,32,128,512]
                                [--repeats 10] [--calls 20]

For each batch size B, two timings, best of ``repeats`` after a warm-up (compilation):

* ``scan``: ``calls`` evaluations of B positions inside one jitted ``lax.scan`` (different
  random positions each time, outputs summed so nothing is dropped): the network's own rate,
  with no dispatch from Python;
* ``call``: one jitted ``apply`` call per batch from Python (what a host loop would see;
  at small batches dispatch dominates).

Printed next to it: the parameter count and the FLOPs of one evaluation (multiply-adds x 2,
counted by hand, and XLA's own cost analysis), and the FLOP rate they imply. The issue
quotes about 8,000 evaluations/s for the source's network at batch 128 on a 2-core CPU.
No peer is timed: the figure is absolute (device and versions are printed).
"""

from __future__ import annotations

import argparse
import os

import jax
import jax.numpy as jnp
import numpy as np

from bench.timing import best_seconds
from jaxgames.hex import network as N


def _positions(n: int, shape: tuple, seed: int = 0) -> np.ndarray:
    """bool [*shape, n, n, 2]: random half-filled boards from the mover's view."""
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 3, size=shape + (n, n))
    return np.stack([cells == 1, cells == 2], axis=-1)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--kind", default="source", choices=["source", "resnet"])
    parser.add_argument("--batches", default="1,32,128,512")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20, help="evaluations per scan")
    args = parser.parse_args(argv)
    n = args.size
    batches = [int(b) for b in args.batches.split(",")]

    net = N.make(n, kind=args.kind)
    params = net.init(jax.random.key(0))
    num_params = N.num_params(params)

    @jax.jit
    def scanned(params, obs):          # obs [calls, B, n, n, 2]
        def body(acc, o):
            logits, value = net.apply(params, o)
            return acc + logits.sum() + value.sum(), None
        return jax.lax.scan(body, jnp.float32(0), obs)[0]

    call = jax.jit(net.apply)

    xla_flops = None
    try:
        cost = jax.jit(net.apply).lower(params, _positions(n, (1,))).compile().cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        xla_flops = float(cost.get("flops", float("nan")))
    except Exception:  # cost analysis is backend-dependent; the hand count is printed anyway
        pass
    hand_flops = N.flops_per_eval(n) if args.kind == "source" else None

    rows = {}
    for b in batches:
        obs = _positions(n, (args.calls, b), seed=b)
        t_scan = best_seconds(scanned, params, obs, repeats=args.repeats) / args.calls
        t_call = best_seconds(call, params, obs[0], repeats=args.repeats)
        rows[b] = {"scan_evals_per_s": b / t_scan, "call_evals_per_s": b / t_call}

    dev = jax.devices()[0]
    import flax
    import jaxlib
    print(f"device: {dev.device_kind} ({jax.default_backend()}, {jax.device_count()} device(s), "
          f"{os.cpu_count()} CPU cores), jax {jax.__version__}, jaxlib {jaxlib.__version__}, flax {flax.__version__}")
    print(f"hex {n}x{n} network '{args.kind}': {num_params:,} parameters; FLOPs per evaluation: "
          + (f"{hand_flops / 1e6:.2f} M (hand count)" if hand_flops else "")
          + (f", {xla_flops / 1e6:.2f} M (XLA cost analysis)" if xla_flops else ""))
    flops = hand_flops or xla_flops
    print(f"best of {args.repeats}; scan: {args.calls} batches per jitted call; call: one jitted apply per batch")
    print(f"{'batch':>6} {'evals/s (scan)':>16} {'evals/s (call)':>16} {'GFLOP/s (scan)':>15}")
    for b, r in rows.items():
        gf = f"{r['scan_evals_per_s'] * flops / 1e9:>15.1f}" if flops else f"{'':>15}"
        print(f"{b:>6} {r['scan_evals_per_s']:>16,.0f} {r['call_evals_per_s']:>16,.0f} {gf}")
    return {"num_params": num_params, "flops_per_eval": flops, "rows": rows}


if __name__ == "__main__":
    main()
