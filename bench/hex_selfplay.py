"""Self-play search throughput against the network's own bound, measured in the same run.

    python -m bench.hex_selfplay [--size 11] [--batch 128] [--simulations 32 200]
    python -m bench.hex_selfplay --run runs/hex/<run>      # a trained network (its board size)

The network is compute-bound on a CPU, so a search of S simulations can label at most
(network evaluations/s) / S positions per second. This prints that bound (the network at
``--batch``, jitted, best of several) next to what ``jaxgames.search.mcts.search`` (mctx's
algorithm on ``jaxgames.search.batched_mctx``, the env as the model) reaches on ``--batch``
positions taken from random games, and the ratio: the share of the bound that search, rules
and data movement leave to the network.

Each simulation walks from the root to a leaf and backs up along the same path, so its cost
beside the network grows with the depth of the tree; the deepest path (mean over the batch)
is printed too. An untrained network's value is almost the same everywhere (about -0.37 for
the source's, Keras initialisation), which makes every searched child look better than the
unsearched ones and grows a single line as deep as the simulations: the worst case. ``--run``
measures a trained network's trees instead.
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

import jaxgames
from bench.timing import best_seconds
from jaxgames.hex import network
from jaxgames.search import mcts


def deepest_path(tree) -> float:
    """Mean over the batch of the deepest node's depth (the root has depth 0)."""
    parents = np.asarray(tree.parents)
    depth = np.zeros_like(parents)
    rows = np.arange(parents.shape[0])
    for node in range(1, parents.shape[1]):  # a node's parent was expanded before it
        depth[:, node] = depth[rows, np.maximum(parents[:, node], 0)] + 1
    return float(depth.max(axis=1).mean())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--simulations", type=int, nargs="+", default=[32, 200])
    parser.add_argument("--run", help="a train.hex run folder: use its trained network (and board size)")
    args = parser.parse_args(argv)
    if args.run:
        from jaxgames.hex.agent import load_agent
        agent = load_agent(args.run)
        args.size, params, label = agent.env.board_size, agent.params, f"trained ({args.run})"
    net = network.make(args.size)
    if not args.run:
        params, label = net.init(jax.random.key(0)), "untrained"
    env = jaxgames.make("hex", board_size=args.size)
    # positions from random games, a few moves in (every one still live)
    play = jax.jit(jax.vmap(lambda k: jaxgames.rollout(env, env.init(k), jaxgames.random_policy, k,
                                                       max_steps=args.size).state))
    states = play(jax.random.split(jax.random.key(1), args.batch))
    evaluate = jax.jit(net.apply)
    evals_per_second = args.batch / best_seconds(evaluate, params, states.observation, repeats=10)
    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()}, jax {jax.__version__}, "
          f"hex {args.size}x{args.size}, batch {args.batch}, {label} network")
    print(f"network (source, {network.num_params(params):,} parameters): {evals_per_second:,.0f} evaluations/s")
    for sims in args.simulations:
        search = jax.jit(lambda p, s, k, sims=sims: mcts.search(env, net.apply, p, s, k, num_simulations=sims))
        seconds = best_seconds(search, params, states, jax.random.key(2))
        depth = deepest_path(search(params, states, jax.random.key(2)).search_tree)
        reached = args.batch / seconds
        bound = evals_per_second / sims
        print(f"search, {sims:4d} simulations: {reached:9,.1f} positions/s  bound {bound:9,.1f}  "
              f"-> {reached / bound:.0%} of the network's bound  (deepest path {depth:.1f})")


if __name__ == "__main__":
    main()
