"""Random-play throughput of jaxgames' 2048 against pgx's, same process, same harnesses.

    python -m bench.game2048_env [--batch 1024] [--steps 100] [--repeats 10]
                                 [--harness both|pgx|cheap] [--variant 2048|2584]

Each environment plays ``batch`` games in parallel, a uniformly random legal action per game,
``steps`` vmapped steps inside one jitted ``lax.scan``. Two harnesses, each run on both
environments with the same code:

* ``pgx`` (pgx's own benchmark recipe): the action is a categorical draw over the masked
  logits (``jax.random.categorical``), and the step is wrapped in an auto-reset that computes
  a fresh ``init`` on every step and keeps it where a game ended.
* ``cheap`` (the step alone): one random word per game picks the k-th legal action
  (``core.random_legal_action``), and a finished game restarts from a start state made
  before timing (one per game slot), so neither sampling nor ``init`` is in the loop.

Timing starts after a warm-up call (compilation) and waits on ``block_until_ready``; the
environments take turns within each round, and the best of ``repeats`` rounds is reported as
environment steps per second (batch * steps / seconds).
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp

import jaxgames
from jaxgames import core, rng

HARNESSES = ("pgx", "cheap")


def _select(pred, on_true, on_false):
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def _pgx_auto_reset(env):
    """pgx's step with reset on game end (a fresh ``init`` every step), shaped like
    ``jaxgames.core.auto_reset``."""

    def step(state, action, key):
        step_key, reset_key = jax.random.split(key)
        new = env.step(state, action, step_key)
        done = new.terminated | new.truncated
        fresh = env.init(reset_key).replace(rewards=new.rewards)
        return _select(done, fresh, new)

    return step


def _categorical_action(state, key):
    """pgx's benchmark player: a categorical draw over log(mask)."""
    logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
    return jax.random.categorical(key, logits).astype(jnp.int32)


def _rollout_pgx_recipe(init, auto_reset_step, batch: int, steps: int):
    """Jitted ``key -> total reward``: categorical actions, ``init`` inside every step."""

    def run(key):
        k0, key = jax.random.split(key)
        state = jax.vmap(init)(jax.random.split(k0, batch))

        def body(carry, k):
            state, total = carry
            ka, ks = jax.random.split(k)
            actions = jax.vmap(_categorical_action)(state, jax.random.split(ka, batch))
            state = jax.vmap(auto_reset_step)(state, actions, jax.random.split(ks, batch))
            return (state, total + state.rewards.sum()), None

        (_, total), _ = jax.lax.scan(body, (state, jnp.float32(0)), jax.random.split(key, steps))
        return total

    return jax.jit(run)


def _rollout_cheap(step, batch: int, steps: int):
    """Jitted ``(start states [batch], key) -> total reward``: the k-th legal action for one
    random word, and a finished game restarts from its slot's start state."""

    def run(starts, key):
        def body(carry, k):
            state, total = carry
            ka, ks = rng.split(k, 2)
            actions = jax.vmap(core.random_legal_action)(state, rng.split(ka, batch))
            new = jax.vmap(step)(state, actions, rng.split(ks, batch))
            done = new.terminated | new.truncated
            state = jax.vmap(_select)(done, starts.replace(rewards=new.rewards), new)
            return (state, total + new.rewards.sum()), None

        (_, total), _ = jax.lax.scan(body, (starts, jnp.float32(0)), rng.split(key, steps))
        return total

    return jax.jit(run)


def measure(fns: list, repeats: int, args: tuple = ()) -> list[float]:
    """Best wall time of each ``fn(*args, key)`` over ``repeats`` rounds, after a warm-up call.

    The functions take turns within each round, so a burst of load from other processes
    hits both sides alike rather than one of them. ``args`` may hold one tuple per function.
    """
    per_fn = args if args and isinstance(args[0], tuple) else [args] * len(fns)
    for fn, a in zip(fns, per_fn):
        fn(*a, jax.random.PRNGKey(0)).block_until_ready()
    best = [float("inf")] * len(fns)
    for i in range(repeats):
        for j, (fn, a) in enumerate(zip(fns, per_fn)):
            t = time.perf_counter()
            fn(*a, jax.random.PRNGKey(i + 1)).block_until_ready()
            best[j] = min(best[j], time.perf_counter() - t)
    return best


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=_positive, default=1024)
    parser.add_argument("--steps", type=_positive, default=100)
    parser.add_argument("--repeats", type=_positive, default=10)
    parser.add_argument("--variant", default="2048", choices=["2048", "2584"])
    parser.add_argument("--harness", default="both", choices=["both", *HARNESSES])
    args = parser.parse_args(argv)

    import pgx  # bench-only dependency (extra "bench")

    ours_env = jaxgames.make("2048", variant=args.variant)
    pgx_env = pgx.make("2048")
    harnesses = HARNESSES if args.harness == "both" else (args.harness,)

    fns, fn_args, labels = [], [], []
    for h in harnesses:
        if h == "pgx":
            fns += [_rollout_pgx_recipe(ours_env.init, core.auto_reset(ours_env), args.batch, args.steps),
                    _rollout_pgx_recipe(pgx_env.init, _pgx_auto_reset(pgx_env), args.batch, args.steps)]
            fn_args += [(), ()]
        else:
            # Start states made before timing, one per game slot (their own keys).
            start_keys = jax.random.split(jax.random.PRNGKey(12345), args.batch)
            fns += [_rollout_cheap(ours_env.step, args.batch, args.steps),
                    _rollout_cheap(pgx_env.step, args.batch, args.steps)]
            fn_args += [(jax.jit(jax.vmap(ours_env.init))(start_keys),),
                        (jax.jit(jax.vmap(pgx_env.init))(start_keys),)]
        labels += [(h, "jaxgames"), (h, "pgx")]

    seconds = measure(fns, args.repeats, tuple(fn_args))
    n = args.batch * args.steps
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), "
          f"jax {jax.__version__}, pgx {pgx.__version__}")
    print(f"batch {args.batch}, {args.steps} steps per scan, best of {args.repeats}, "
          f"variant {args.variant} (pgx: 2048)")
    result = {}
    for i, h in enumerate(harnesses):
        t_ours, t_pgx = seconds[2 * i], seconds[2 * i + 1]
        result[h] = {"jaxgames_steps_per_s": n / t_ours, "pgx_steps_per_s": n / t_pgx,
                     "ratio": t_pgx / t_ours}
        print(f"harness {h:5s}: jaxgames {args.variant} {n / t_ours:>12,.0f} steps/s, "
              f"pgx {n / t_pgx:>12,.0f} steps/s, ratio {t_pgx / t_ours:.2f}x")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
