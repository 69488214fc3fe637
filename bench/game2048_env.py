"""Random-play throughput of jaxgames' 2048 against pgx's, same process, same harness.

    python -m bench.game2048_env [--batch 1024] [--steps 100] [--repeats 5]

Each environment plays ``batch`` games in parallel: a uniformly random legal action per game,
auto-reset on game end, ``steps`` vmapped steps inside one jitted ``lax.scan``. Timing starts
after a warm-up call (compilation) and waits on ``block_until_ready``; the best of
``repeats`` runs is reported as environment steps per second (batch * steps / seconds).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

import jaxgames
from jaxgames import core


def _rollout(init, step, batch: int, steps: int):
    """Jitted ``key -> total reward`` of ``steps`` random auto-reset steps over ``batch`` games."""

    def run(key):
        k0, key = jax.random.split(key)
        state = jax.vmap(init)(jax.random.split(k0, batch))

        def body(carry, k):
            state, total = carry
            ka, ks = jax.random.split(k)
            actions = jax.vmap(core.random_legal_action)(state, jax.random.split(ka, batch))
            state = jax.vmap(step)(state, actions, jax.random.split(ks, batch))
            return (state, total + state.rewards.sum()), None

        (state, total), _ = jax.lax.scan(body, (state, jnp.float32(0)), jax.random.split(key, steps))
        return total

    return jax.jit(run)


def _pgx_auto_reset(env):
    """pgx's step with reset on game end, shaped like ``jaxgames.core.auto_reset``."""

    def step(state, action, key):
        step_key, reset_key = jax.random.split(key)
        new = env.step(state, action, step_key)
        done = new.terminated | new.truncated
        fresh = env.init(reset_key).replace(rewards=new.rewards)
        return jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), fresh, new)

    return step


def measure(fns: list, repeats: int) -> list[float]:
    """Best wall time of each function over ``repeats`` rounds, after a warm-up call.

    The functions take turns within each round, so a burst of load from other processes
    hits both sides alike rather than one of them.
    """
    for fn in fns:
        fn(jax.random.PRNGKey(0)).block_until_ready()
    best = [float("inf")] * len(fns)
    for i in range(repeats):
        for j, fn in enumerate(fns):
            t = time.perf_counter()
            fn(jax.random.PRNGKey(i + 1)).block_until_ready()
            best[j] = min(best[j], time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--variant", default="2048", choices=["2048", "2584"])
    args = parser.parse_args(argv)

    import pgx  # bench-only dependency (extra "bench")

    ours_env = jaxgames.make("2048", variant=args.variant)
    pgx_env = pgx.make("2048")
    ours = _rollout(ours_env.init, core.auto_reset(ours_env), args.batch, args.steps)
    theirs = _rollout(pgx_env.init, _pgx_auto_reset(pgx_env), args.batch, args.steps)

    n = args.batch * args.steps
    t_ours, t_pgx = measure([ours, theirs], args.repeats)
    result = {
        "jaxgames_steps_per_s": n / t_ours,
        "pgx_steps_per_s": n / t_pgx,
        "ratio": t_pgx / t_ours,
    }
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), "
          f"jax {jax.__version__}, pgx {pgx.__version__}")
    print(f"batch {args.batch}, {args.steps} steps per scan, best of {args.repeats}, "
          f"variant {args.variant} (pgx: 2048)")
    print(f"jaxgames {args.variant}: {result['jaxgames_steps_per_s']:>14,.0f} steps/s")
    print(f"pgx 2048:      {result['pgx_steps_per_s']:>14,.0f} steps/s")
    print(f"ratio jaxgames / pgx: {result['ratio']:.2f}x")
    return result


if __name__ == "__main__":
    main()
