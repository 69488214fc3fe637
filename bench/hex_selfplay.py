"""Self-play search throughput against the network's own bound, measured in the same run.

    python -m bench.hex_selfplay [--size 11] [--batch 128] [--simulations 32 200] [--kind muzero]
    python -m bench.hex_selfplay --run runs/hex/<run>      # a trained network (its board size)

The network is compute-bound on a CPU, so a search of S simulations can label at most
(network evaluations/s) / S positions per second. This prints that bound next to what
``jaxgames.search.mcts.search`` (mctx's algorithm on ``jaxgames.search.batched_mctx``, the
env as the model) reaches on ``--batch`` positions taken from random games, and the ratio:
the share of the bound that search, rules and data movement leave to the network.

Each case runs in two layouts: one XLA device (XLA's intra-op threads spread the network's
convolutions over the cores, but the search's many small operations run one after another on
one core) and the batch split over one CPU device per core (``shard_map``; each core searches
and evaluates its share of the games). The bound is the network's best evaluations/s over both
layouts, so neither search is measured against a slower network than the machine has. The bound
is timed as S evaluations of the batch in one jitted loop, as long as the search's share of
network work, so that both see the same load on a shared machine (a single short call, best
of several, catches the quiet moments a long search cannot); each timing is the best of
three, bound and search alternating.

A last line (not with ``--run`` or ``--no-pipeline``) measures the search ``train.hex
--preset full`` self-plays with: its board size, search kind, simulations and batch
(``games_per_update`` games: both models' halves go through one search, here both with the
untrained network).

Each simulation walks from the root to a leaf and backs up along the same path, so its cost
beside the network grows with the depth of the tree; the deepest path (mean over the batch)
is printed too. An untrained network's value is almost the same everywhere (about -0.37 for
the source's, Keras initialisation), which makes every searched child look better than the
unsearched ones and grows a single line as deep as the simulations: the worst case. ``--run``
measures a trained network's trees instead.
"""

from __future__ import annotations

# One XLA CPU device per core, set before JAX starts (as bench/hex_uct.py): each case is also
# timed with its games split over them. A single-device computation still gets every core
# through XLA's intra-op threads, so the one-device rows are unchanged by this.
from train.common.mesh import one_cpu_device_per_core  # noqa: E402

one_cpu_device_per_core()

import argparse  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import jaxgames  # noqa: E402
from jaxgames.hex import network  # noqa: E402
from jaxgames.search import mcts  # noqa: E402


def depth_of(tree) -> float:
    """Mean over the batch of the deepest node's depth (the root has depth 0)."""
    parents = np.asarray(tree.parents)
    depth = np.zeros_like(parents)
    rows = np.arange(parents.shape[0])
    for node in range(1, parents.shape[1]):  # a node's parent was expanded before it
        depth[:, node] = depth[rows, np.maximum(parents[:, node], 0)] + 1
    return float(depth.max(axis=1).mean())


def network_loop(net, sims: int):
    """``f(params, obs)``: ``sims`` evaluations of the batch in one jitted loop (each input
    depends on the last output, so XLA cannot hoist the network out of the loop; every output
    is summed, so XLA cannot drop a head or part of the batch either: a search uses both)."""
    def run(params, obs):
        def body(_, acc):
            logits, value = net.apply(params, jnp.where(acc > 1e30, ~obs, obs))
            return acc + value.sum() + logits.sum()
        return jax.lax.fori_loop(0, sims, body, jnp.float32(0.0))[None]
    return run


def on_devices(fn, devices: int):
    """``fn(params, batch, extra)`` jitted, its batch split over the first ``devices`` devices
    (``params`` and ``extra`` replicated; each device's output stacked on a leading axis), and
    a function that places a batch there."""
    mesh = Mesh(np.array(jax.devices()[:devices]), ("games",))
    split = NamedSharding(mesh, P("games"))
    run = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=(P(), P("games"), P()),
                                out_specs=P("games"), check_vma=False))
    return run, lambda batch: jax.device_put(batch, split)


def alternate_best(fns, repeats: int = 3) -> list[float]:
    """Seconds of the fastest call of each ``fn()`` after one untimed call (compilation),
    the functions called in turn ``repeats`` times (the same load for each)."""
    for fn in fns:
        jax.block_until_ready(fn())
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--simulations", type=int, nargs="+", default=[32, 200])
    parser.add_argument("--kind", default="muzero", help=f"search kind: {', '.join(mcts.KINDS)}")
    parser.add_argument("--run", help="a train.hex run folder: use its trained network (and board size)")
    parser.add_argument("--no-pipeline", action="store_true",
                        help="leave out the search train.hex's full preset self-plays with")
    args = parser.parse_args(argv)
    if args.kind not in mcts.KINDS:
        parser.error(f"--kind must be one of {', '.join(mcts.KINDS)}, got {args.kind!r}")
    if args.batch < 1 or min(args.simulations) < 1:
        parser.error("--batch and --simulations must be >= 1")
    if args.run:
        from jaxgames.hex.agent import load_agent
        agent = load_agent(args.run)
        args.size, params, label = agent.env.board_size, agent.params, f"trained ({args.run})"
    net = network.make(args.size)
    if not args.run:
        params, label = net.init(jax.random.key(0)), "untrained"
    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()}, jax {jax.__version__}, "
          f"{label} network (source, {network.num_params(params):,} parameters), load {load()}")
    cases = [(args.size, args.batch, sims, args.kind, "") for sims in args.simulations]
    if not (args.run or args.no_pipeline):
        from train.games.hex import FULL_SELF_PLAY as full
        cases.append((full["board_size"], full["games_per_update"], full["simulations"], full["search"],
                      "  <- train.hex --preset full self-play"))
    for size, batch, sims, kind, note in cases:
        if size != args.size:
            net = network.make(size)
            params = net.init(jax.random.key(0))
        measure(net, params, size, batch, sims, kind, note)
    print(f"load after: {load()}")


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(net, params, size: int, batch: int, sims: int, kind: str, note: str) -> None:
    env = jaxgames.make("hex", board_size=size)
    # positions from random games, a few moves in (every one still live)
    play = jax.jit(jax.vmap(lambda k: jaxgames.rollout(env, env.init(k), jaxgames.random_policy, k,
                                                       max_steps=size).state))
    states = play(jax.random.split(jax.random.key(1), batch))
    key = jax.random.key(2)
    layouts = [d for d in sorted({1, jax.device_count()}) if batch % d == 0]
    calls = []
    for devices in layouts:
        loop = network_loop(net, sims)
        evaluate, place = on_devices(lambda p, obs, _: loop(p, obs), devices)
        search, _ = on_devices(lambda p, s, k: mcts.search(env, net.apply, p, s, k, num_simulations=sims,
                                                           kind=kind).action, devices)
        obs, placed = place(states.observation), place(states)
        calls += [lambda e=evaluate, o=obs: e(params, o, 0), lambda f=search, s=placed: f(params, s, key)]
    once = jax.jit(net.apply)
    seconds = alternate_best(calls + [lambda: once(params, states.observation)])
    tree = jax.jit(lambda p, s, k: mcts.search(env, net.apply, p, s, k, num_simulations=sims,
                                               kind=kind).search_tree)(params, states, key)
    evals = [batch * sims / seconds[2 * i] for i in range(len(layouts))]
    # the bound: the network's best evaluations/s on this machine, whichever layout gives it
    bound = max(evals) / sims
    print(f"hex {size}x{size}, batch {batch:4d}, {kind:6s} {sims:4d} simulations: bound "
          f"{bound:9,.1f} positions/s (deepest path {depth_of(tree):.1f}; one network call alone: "
          f"{batch / seconds[-1]:,.0f} evaluations/s){note}")
    for i, devices in enumerate(layouts):
        reached = batch / seconds[2 * i + 1]
        print(f"    {devices} device(s): network {evals[i]:8,.0f} evaluations/s; search "
              f"{reached:9,.1f} positions/s -> {reached / bound:4.0%} of the bound")


if __name__ == "__main__":
    main()
