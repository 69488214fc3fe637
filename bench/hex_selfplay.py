"""Self-play search throughput against the network's own bound, measured in the same run.

    python -m bench.hex_selfplay [--size 11] [--batch 128] [--simulations 32 200]

The network is compute-bound on a CPU, so a search of S simulations can label at most
(network evaluations/s) / S positions per second. This prints that bound (the source network
at ``--batch``, jitted, best of several) next to what ``jaxgames.search.mcts.search`` (mctx,
the env as the model) reaches on ``--batch`` positions taken from random games, and the
ratio: the share of the bound that search, rules and data movement leave to the network.
"""

from __future__ import annotations

import argparse

import jax

import jaxgames
from bench.timing import best_seconds
from jaxgames.hex import network
from jaxgames.search import mcts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--simulations", type=int, nargs="+", default=[32, 200])
    args = parser.parse_args(argv)
    env = jaxgames.make("hex", board_size=args.size)
    net = network.make(args.size)
    params = net.init(jax.random.key(0))
    # positions from random games, a few moves in (every one still live)
    play = jax.jit(jax.vmap(lambda k: jaxgames.rollout(env, env.init(k), jaxgames.random_policy, k,
                                                       max_steps=args.size).state))
    states = play(jax.random.split(jax.random.key(1), args.batch))
    evaluate = jax.jit(net.apply)
    evals_per_second = args.batch / best_seconds(evaluate, params, states.observation, repeats=10)
    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()}, jax {jax.__version__}, "
          f"hex {args.size}x{args.size}, batch {args.batch}")
    print(f"network (source, {network.num_params(params):,} parameters): {evals_per_second:,.0f} evaluations/s")
    for sims in args.simulations:
        search = jax.jit(lambda p, s, k, sims=sims: mcts.search(env, net.apply, p, s, k, num_simulations=sims))
        seconds = best_seconds(search, params, states, jax.random.key(2))
        reached = args.batch / seconds
        bound = evals_per_second / sims
        print(f"search, {sims:4d} simulations: {reached:9,.1f} positions/s  bound {bound:9,.1f}  "
              f"-> {reached / bound:.0%} of the network's bound")


if __name__ == "__main__":
    main()
