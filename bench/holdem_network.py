"""Evaluations per second of the hold'em pseudo-Siamese network, dense against conv towers.

    python -m bench.holdem_network [--sizes small] [--towers dense,conv] [--batch 1024]
                                   [--repeats 10] [--steps 8]

For each size and tower, three timings at one batch size, jitted, best of ``repeats`` after a
warm-up call (compilation):

* ``forward``: one jitted ``apply`` on the batch (what acting in a rollout costs);
* ``fwd+bwd``: one jitted gradient of a PPO-shaped loss (the taken action's log-probability
  and a squared value error) with respect to the parameters;
* ``fwd+bwd in scan``: ``steps`` SGD steps inside one jitted ``lax.scan``, each on its own
  batch, the parameters updated in between so nothing is hoisted out of the loop. That is
  where a learner takes its gradients, and on XLA:CPU a convolution's gradient is slower
  inside a loop than outside one (docs/lab/hex.md), so it is timed apart.

Evaluations/s = positions through the network per second (a gradient step counts its batch
once). Inputs are random 0/1 tensors of the encoding's shapes (about one entry in ten set;
dense and convolution costs do not depend on the values) with random legal masks.

The conv tower is the peer of the dense tower here: the ratio conv / dense of every timing is
printed, both measured in this process, so the default tower (``SIZES["small"].tower``) can
be checked on this machine. The CPU model, the device count and the versions are printed.
"""

from __future__ import annotations

import argparse
import os

import jax
import jax.numpy as jnp
import numpy as np

from bench.timing import best_seconds, cpu_model
from jaxgames.holdem import encode as E
from jaxgames.holdem import network as N

MODES = ("forward", "fwd+bwd", "fwd+bwd in scan")




def _inputs(shape: tuple, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cards [*shape, 6, 4, 13], actions [*shape, 24, 4, 9] int8; legal bool [*shape, 9]."""
    rng = np.random.default_rng(seed)
    cards = (rng.random(shape + E.CARD_SHAPE) < 0.1).astype(np.int8)
    actions = (rng.random(shape + E.ACTION_SHAPE) < 0.1).astype(np.int8)
    legal = rng.random(shape + (9,)) < 0.6
    legal[..., 2] = True
    return cards, actions, legal


def time_network(net: N.PseudoSiamese, batch: int, repeats: int, steps: int) -> dict:
    params = jax.jit(lambda k: N.init_params(net, k))(jax.random.key(0))

    def loss(p, cards, actions, legal):
        logits, value = net.apply(p, cards, actions, legal)
        taken = jnp.argmax(legal, axis=-1)                      # some legal action
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), taken[:, None], axis=-1)[:, 0]
        return -logp.mean() + jnp.mean((value - 0.5) ** 2)

    forward = jax.jit(net.apply)
    grad = jax.jit(jax.grad(loss))

    @jax.jit
    def sgd(p, cards, actions, legal):                          # each [steps, batch, ...]
        def body(p, xs):
            g = jax.grad(loss)(p, *xs)
            return jax.tree_util.tree_map(lambda w, d: w - 1e-3 * d, p, g), None
        return jax.lax.scan(body, p, (cards, actions, legal))[0]

    one = _inputs((batch,), seed=1)
    many = _inputs((steps, batch), seed=2)
    return {
        "params": N.param_count(params),
        "forward": batch / best_seconds(forward, params, *one, repeats=repeats),
        "fwd+bwd": batch / best_seconds(grad, params, *one, repeats=repeats),
        "fwd+bwd in scan": steps * batch / best_seconds(sgd, params, *many, repeats=repeats),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="small", help=f"comma-separated, of {','.join(N.SIZES)}")
    parser.add_argument("--towers", default="dense,conv", help="comma-separated, of dense,conv")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--steps", type=int, default=8, help="SGD steps per scan")
    args = parser.parse_args(argv)
    sizes = args.sizes.split(",")
    towers = args.towers.split(",")
    for s in sizes:
        if s not in N.SIZES:
            parser.error(f"unknown size {s!r}: choose from {', '.join(N.SIZES)}")
    for t in towers:
        if t not in N.TOWERS:
            parser.error(f"unknown tower {t!r}: choose from {', '.join(N.TOWERS)}")

    import flax
    import jaxlib
    dev = jax.devices()[0]
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); device: {dev.device_kind} "
          f"({jax.default_backend()}, {jax.device_count()} device(s)); "
          f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, flax {flax.__version__}")
    print(f"batch {args.batch}, best of {args.repeats}; scan: {args.steps} SGD steps per jitted call")
    print(f"{'size':>7} {'tower':>6} {'params':>11} " + " ".join(f"{m + ' evals/s':>24}" for m in MODES))
    rows: dict[tuple[str, str], dict] = {}
    for size in sizes:
        for tower in towers:
            r = time_network(N.make_network(size, tower), args.batch, args.repeats, args.steps)
            rows[size, tower] = r
            print(f"{size:>7} {tower:>6} {r['params']:>11,} " + " ".join(f"{r[m]:>24,.0f}" for m in MODES),
                  flush=True)
    for size in sizes:
        if (size, "dense") in rows and (size, "conv") in rows:
            d, c = rows[size, "dense"], rows[size, "conv"]
            print(f"ratio conv / dense ({size}): "
                  + ", ".join(f"{m} {c[m] / d[m]:.2f}x" for m in MODES))
    return rows


if __name__ == "__main__":
    main()
