"""Plain UCT on Hex: jaxgames' batched, jitted search against OpenSpiel's C++ MCTSBot, same run.

    python -m bench.hex_uct [--batch 64] [--simulations 1000] [--size 11] [--peer-games 3]
                            [--breakdown]

Both sides play whole games of self-play from the empty board, ``--simulations`` simulations
a move, random playouts, UCT exploration ``C`` of the source's eq. (4) (OpenSpiel's ``uct_c``
is ``C * sqrt(2)``, the same formula in its notation). Reported: simulations per second =
simulations of every move played / wall time.

* jaxgames: ``--batch`` games at once, ``jax.vmap`` of :func:`jaxgames.search.uct_search` in
  :func:`jaxgames.core.rollout`, one jitted program, timed after compilation. A game that is
  over keeps searching (on its finished position) until the longest game of the batch ends;
  only the moves of live games are counted, so that waste is charged to jaxgames.
* OpenSpiel: ``pyspiel.MCTSBot`` with ``RandomRolloutEvaluator(n_rollouts=1)``, no solver,
  one game after another on one thread (it has no batch), ``--peer-games`` games.

``--breakdown`` also times one search from the empty board with the playouts replaced by a
coin flip: the cost of the tree itself (selection, expansion step, backup) against the whole.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import core, rng
from jaxgames.search import uct


def jax_selfplay(env, batch: int, simulations: int, exploration: float, seed: int):
    """(simulations per second, live moves, batch moves, seconds, compile seconds, Black's wins)."""
    policy = uct.uct_policy(env, num_simulations=simulations, exploration=exploration)

    def one_game(key):
        init_key, play_key = rng.split(key, 2)
        out = core.rollout(env, env.init(init_key), policy, play_key)
        return out.steps, out.returns

    run = jax.jit(lambda key: jax.vmap(one_game)(rng.split(key, batch)))
    key = jax.random.key(seed)
    t = time.perf_counter()
    compiled = run.lower(key).compile()
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    steps, returns = jax.block_until_ready(compiled(key))
    seconds = time.perf_counter() - t
    steps = np.asarray(steps)
    moves = int(steps.sum())
    return (moves * simulations / seconds, moves, int(steps.max()) * batch, seconds, compile_s,
            int((np.asarray(returns)[:, 0] > 0).sum()))


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
    """Seconds of one batched search from the empty board: (whole, tree only)."""

    class CoinFlip(type(env)):
        def playout_returns(self, state, key):  # a cheap stand-in: who wins is a coin flip
            black = (rng.random_words(key, 1)[0] & 1) == 0
            return jnp.where(black, jnp.array([1.0, -1.0]), jnp.array([-1.0, 1.0]))

    flip = CoinFlip(board_size=env.board_size)
    states = jax.vmap(env.init)(rng.split(jax.random.key(0), batch))
    keys = rng.split(jax.random.key(1), batch)
    out = []
    for e in (env, flip):
        fn = jax.jit(jax.vmap(lambda s, k, e=e: uct.uct_search(
            e, s, k, num_simulations=simulations, exploration=exploration).action))
        jax.block_until_ready(fn(states, keys))
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            jax.block_until_ready(fn(states, keys))
            best = min(best, time.perf_counter() - t)
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
        whole, tree = breakdown(env, args.batch, args.simulations, args.exploration)
        print(f"one search from the empty board, batch {args.batch}: {whole * 1e3:.0f} ms; with coin-flip "
              f"playouts (the tree alone) {tree * 1e3:.0f} ms ({tree / whole:.0%})")


if __name__ == "__main__":
    main()
