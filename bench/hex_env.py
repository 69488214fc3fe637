"""Random-play throughput of jaxgames' Hex against pgx's, same process, same harness.

    python -m bench.hex_env [--batch 1024] [--steps 100] [--repeats 10] [--size 11]

Each environment plays ``batch`` games in parallel, auto-reset on game end, ``steps`` vmapped
steps inside one jitted ``lax.scan``; both are driven by the same random player, so the
ratio shows the environments. Two random players are timed:

* ``order`` (the headline): each game plays the cells in a uniformly random order, drawn
  in NumPy before timing (one order per game slot, rotated per episode) and read at
  ``step_count``. In Hex the legal moves are exactly the empty cells, so this is uniformly
  random play (never swapping), and the player costs one lookup per move.
* ``core``: ``jaxgames.core.random_legal_action`` on ``legal_action_mask`` (the project's
  generic random player). On a 2-core CPU it costs more than either Hex step, which
  flattens the ratio; it is printed for completeness.

Timing starts after a warm-up call (compilation) and waits on ``block_until_ready``; the best
of ``repeats`` runs is reported as environment steps per second (batch * steps / seconds).

Also measured: ``Hex.playout_returns`` (a random fill and one winner test, the rollout of UCT)
against the contract's move-by-move random rollout (``jaxgames.rollout`` with the random policy)
from the empty board, as playouts per second.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from bench.game2048_env import _pgx_auto_reset, measure
from jaxgames import core, rng
from jaxgames.rollout import rollout


def _rollout(init, step, batch: int, steps: int, player: str, moves_played, orders: np.ndarray):
    """Jitted ``key -> total reward`` of ``steps`` random auto-reset steps over ``batch`` games.

    ``moves_played(state)`` is the environment's move counter (the ``order`` player reads it).
    """
    table = jnp.asarray(orders)               # int32 [num_orders, n*n]
    slots = jnp.arange(batch, dtype=jnp.int32)

    def run(key):
        k0, key = jax.random.split(key)
        state = jax.vmap(init)(rng.split(k0, batch))

        def body(carry, k):
            state, episode, total = carry
            ka, ks = rng.split(k, 2)
            if player == "order":
                row = (slots + 7 * episode) % table.shape[0]
                actions = table[row, moves_played(state)]
            else:
                actions = jax.vmap(core.random_legal_action)(state, rng.split(ka, batch))
            state = jax.vmap(step)(state, actions, rng.split(ks, batch))
            episode = episode + (moves_played(state) == 0)
            return (state, episode, total + state.rewards.sum()), None

        carry = (state, jnp.zeros(batch, jnp.int32), jnp.float32(0))
        (_, _, total), _ = jax.lax.scan(body, carry, rng.split(key, steps))
        return total

    return jax.jit(run)


def _playouts(env, batch: int, fast: bool):
    """Jitted ``key -> sum of Black's returns`` of ``batch`` playouts from the start."""

    def run(key):
        state = env.init(key)
        keys = jax.random.split(key, batch)
        if fast:
            returns = jax.vmap(lambda k: env.playout_returns(state, k))(keys)
        else:
            returns = jax.vmap(lambda k: rollout(env, state, core.random_policy, k).returns)(keys)
        return returns[:, 0].sum()

    return jax.jit(run)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--size", type=int, default=11)
    args = parser.parse_args(argv)

    import pgx  # bench-only dependency (extra "bench")

    n = args.size
    ours_env = jaxgames.make("hex", board_size=n)
    ours_swap_env = jaxgames.make("hex", board_size=n, swap=True)
    from pgx.hex import Hex as PgxHex

    pgx_env = PgxHex(size=n)
    # One uniformly random order of the cells per game slot (never the swap action).
    orders = np.argsort(np.random.default_rng(0).random((args.batch, n * n)), axis=1).astype(np.int32)
    ours_moves = lambda s: s.step_count  # noqa: E731
    pgx_moves = lambda s: s._step_count  # noqa: E731
    fns = []
    for player in ("order", "core"):
        fns += [_rollout(e.init, core.auto_reset(e), args.batch, args.steps, player, ours_moves, orders)
                for e in (ours_env, ours_swap_env)]
        fns += [_rollout(pgx_env.init, _pgx_auto_reset(pgx_env), args.batch, args.steps, player,
                         pgx_moves, orders)]
    t_ours, t_ours_swap, t_pgx, c_ours, c_ours_swap, c_pgx = measure(fns, args.repeats)
    t_fast, t_slow = measure(
        [_playouts(ours_env, args.batch, True), _playouts(ours_env, args.batch, False)], args.repeats)

    steps = args.batch * args.steps
    result = {
        "jaxgames_steps_per_s": steps / t_ours,
        "jaxgames_swap_steps_per_s": steps / t_ours_swap,
        "pgx_steps_per_s": steps / t_pgx,
        "ratio": t_pgx / t_ours,
        "ratio_swap": t_pgx / t_ours_swap,
        "ratio_core_sampler": c_pgx / c_ours,
        "ratio_core_sampler_swap": c_pgx / c_ours_swap,
        "playouts_per_s": args.batch / t_fast,
        "rollouts_per_s": args.batch / t_slow,
        "playout_ratio": t_slow / t_fast,
    }
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), "
          f"jax {jax.__version__}, pgx {pgx.__version__}")
    print(f"hex {n}x{n}, batch {args.batch}, {args.steps} steps per scan, best of {args.repeats}")
    print(f"jaxgames hex:         {result['jaxgames_steps_per_s']:>14,.0f} steps/s")
    print(f"jaxgames hex (swap):  {result['jaxgames_swap_steps_per_s']:>14,.0f} steps/s")
    print(f"pgx hex:              {result['pgx_steps_per_s']:>14,.0f} steps/s")
    print(f"ratio jaxgames / pgx: {result['ratio']:.2f}x (with swap: {result['ratio_swap']:.2f}x)"
          f"  [random player: cells in a random order]")
    print(f"random player core.random_legal_action instead: "
          f"{steps / c_ours:,.0f} vs {steps / c_pgx:,.0f} steps/s, ratio {result['ratio_core_sampler']:.2f}x "
          f"(with swap: {result['ratio_core_sampler_swap']:.2f}x)")
    print(f"playouts from the empty board, batch {args.batch}:")
    print(f"  playout_returns (random fill):  {result['playouts_per_s']:>12,.0f} playouts/s")
    print(f"  move-by-move random rollout:    {result['rollouts_per_s']:>12,.0f} playouts/s")
    print(f"  ratio: {result['playout_ratio']:.1f}x")
    return result


if __name__ == "__main__":
    main()
