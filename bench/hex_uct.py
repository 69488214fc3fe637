"""Plain UCT on Hex: jaxgames' batched, jitted search against OpenSpiel's C++ MCTSBot, same run.

    python -m bench.hex_uct [--batch 64] [--simulations 1000] [--size 11] [--peer-games 3]
                            [--breakdown]

Both sides play whole games of self-play from the empty board, ``--simulations`` simulations
a move, random playouts, UCT exploration ``C`` of the source's eq. (4) (OpenSpiel's ``uct_c``
is ``C * sqrt(2)``, the same formula in its notation). Reported: simulations per second =
simulations of every move played / wall time.

* jaxgames: ``--batch`` games at once, ``jax.vmap`` of :func:`jaxgames.search.uct_search` in
  :func:`jaxgames.rollout.rollout`, one jitted program, timed after compilation. The games are
  split over one XLA CPU device per core (``--xla_force_host_platform_device_count``, set
  here unless ``XLA_FLAGS`` already sets it; ``shard_map``): XLA's own intra-op threading
  splits the many small operations of a search over threads, which costs more than it gains
  (measured: one device on two cores is slower than one core alone), while one device per
  core runs each half of the games on its own core. A game that is over keeps searching (on
  its finished position) until the longest game of its device ends; only the moves of live
  games are counted, so that waste is charged to jaxgames.
* OpenSpiel: ``pyspiel.MCTSBot`` with ``RandomRolloutEvaluator(n_rollouts=1)``, no solver,
  one game after another on one thread (it has no batch), ``--peer-games`` games.

``--breakdown`` also times one search from the empty board against as many playouts alone
(from the empty board's children): what the playouts cost and what the tree costs.
"""

from __future__ import annotations

import os

# One XLA CPU device per core, set before JAX starts (see above).
from train.common.mesh import one_cpu_device_per_core  # noqa: E402

one_cpu_device_per_core()

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import jaxgames  # noqa: E402
from jaxgames import rng  # noqa: E402
from jaxgames.rollout import rollout  # noqa: E402
from jaxgames.search import uct  # noqa: E402


def jax_selfplay(env, batch: int, simulations: int, exploration: float, seed: int):
    """(simulations per second, live moves, batch moves, seconds, compile seconds, Black's wins)."""
    policy = uct.uct_policy(env, num_simulations=simulations, exploration=exploration)

    def one_game(key):
        init_key, play_key = rng.split(key, 2)
        out = rollout(env, env.init(init_key), policy, play_key)
        return out.steps, out.returns

    mesh = jax.make_mesh((jax.device_count(),), ("games",))
    games = P("games")
    run = jax.jit(jax.shard_map(jax.vmap(one_game), mesh=mesh, in_specs=games, out_specs=games,
                                check_vma=False))
    keys = jax.device_put(rng.split(jax.random.key(seed), batch), NamedSharding(mesh, games))
    t = time.perf_counter()
    compiled = run.lower(keys).compile()
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    steps, returns = jax.block_until_ready(compiled(keys))
    seconds = time.perf_counter() - t
    steps = np.asarray(steps)
    moves = int(steps.sum())
    # a device's batch runs until its longest game ends
    longest = steps.reshape(jax.device_count(), -1).max(-1)
    return (moves * simulations / seconds, moves, int(longest.sum()) * (batch // jax.device_count()),
            seconds, compile_s, int((np.asarray(returns)[:, 0] > 0).sum()))


def openspiel_selfplay(size: int, simulations: int, exploration: float, games: int, seed: int):
    """(simulations per second, moves, seconds) of OpenSpiel's MCTSBot self-play."""
    import pyspiel

    game = pyspiel.load_game("hex", {"board_size": size})
    moves, seconds = 0, 0.0
    for g in range(games):
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed + g)
        bot = pyspiel.MCTSBot(game, evaluator, exploration * math.sqrt(2.0), simulations,
                              1000, False, seed + g, False)
        state = game.new_initial_state()
        t = time.perf_counter()
        while not state.is_terminal():
            state.apply_action(bot.step(state))
            moves += 1
        seconds += time.perf_counter() - t
    return moves * simulations / seconds, moves, seconds


def breakdown(env, batch: int, simulations: int, exploration: float) -> tuple[float, float]:
    """Seconds of one batched search from the empty board, and of its playouts alone."""
    mesh = jax.make_mesh((jax.device_count(),), ("games",))
    games = P("games")
    keys = jax.device_put(rng.split(jax.random.key(1), batch), NamedSharding(mesh, games))

    # A few searches (or playout rounds) in one program, as in a game: the buffers are reused
    # from one move to the next instead of being faulted in afresh.
    def searches(keys):
        def one(i, total):
            k = jax.vmap(lambda k: jax.random.fold_in(k, i))(keys)
            return total + jax.vmap(lambda k: uct.uct_search(
                env, env.init(k), k, num_simulations=simulations, exploration=exploration).action)(k)
        return jax.lax.fori_loop(0, 4, one, jnp.zeros(keys.shape, jnp.int32))

    def playouts(keys):
        # the same number of playouts, from the children of the empty board (their longest)
        def one(i, total):
            k = jax.vmap(lambda k: jax.random.fold_in(k, i))(keys)
            child = jax.vmap(lambda k: env.step(env.init(k), jnp.int32(0)))(k)
            return total + jax.vmap(env.playout_returns)(child, k)[:, 0]
        return jax.lax.fori_loop(0, 4 * simulations, one, jnp.zeros(keys.shape, jnp.float32))

    out = []
    for body in (searches, playouts):
        fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=games, out_specs=games, check_vma=False))
        jax.block_until_ready(fn(keys))
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            jax.block_until_ready(fn(keys))
            best = min(best, (time.perf_counter() - t) / 4)
        out.append(best)
    return out[0], out[1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--exploration", type=float, default=uct.DEFAULT_EXPLORATION)
    parser.add_argument("--peer-games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args(argv)
    if args.batch % jax.device_count():
        parser.error(f"--batch must be a multiple of the {jax.device_count()} devices")
    env = jaxgames.make("hex", board_size=args.size)

    peer, peer_moves, peer_s = openspiel_selfplay(args.size, args.simulations, args.exploration,
                                                  args.peer_games, args.seed)
    ours, moves, batch_moves, seconds, compile_s, black = jax_selfplay(
        env, args.batch, args.simulations, args.exploration, args.seed)

    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()} ({os.cpu_count()} CPU cores), "
          f"jax {jax.__version__}, open_spiel {importlib.metadata.version('open_spiel')}, "
          f"python {platform.python_version()}")
    print(f"hex {args.size}x{args.size}, {args.simulations} simulations a move, random playouts, "
          f"C = {args.exploration} (OpenSpiel uct_c = {args.exploration * math.sqrt(2):.4f})")
    print(f"jaxgames uct_search : {ours:12,.0f} simulations/s  batch {args.batch}, {moves} moves of "
          f"live games in {seconds:.1f} s ({moves / batch_moves:.0%} of the batch's moves), "
          f"compile {compile_s:.1f} s, Black won {black}/{args.batch}")
    print(f"OpenSpiel MCTSBot   : {peer:12,.0f} simulations/s  {args.peer_games} games, {peer_moves} moves "
          f"in {peer_s:.1f} s, one thread")
    print(f"ratio: {ours / peer:.1f}x")
    if args.breakdown:
        whole, playouts = breakdown(env, args.batch, args.simulations, args.exploration)
        print(f"one search from the empty board, batch {args.batch}: {whole * 1e3:.0f} ms, of which "
              f"its {args.simulations} playouts a game take about {playouts * 1e3:.0f} ms "
              f"({playouts / whole:.0%}); the tree (selection, expansion step, backup) the rest")


if __name__ == "__main__":
    main()
