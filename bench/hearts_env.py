"""Random-play throughput of jaxgames' Hearts against OpenSpiel's, in the same run.

    python -m bench.hearts_env [--batch 1024] [--repeats 5] [--peer-seconds 5]
                               [--variant standard|paper|both] [--worlds]

* jaxgames: ``--batch`` whole games at once, each a :func:`jaxgames.core.rollout` of
  :func:`jaxgames.core.random_policy` from ``env.init`` (deal included) to the end of the
  hand, under ``jax.vmap``, one jitted call; the best of ``--repeats`` calls after a warm-up
  (compilation). Games per second = batch / seconds.
* OpenSpiel (``pyspiel``, C++ rules driven from Python, one game after another): the plain
  loop, ``random.Random`` picking the chance outcome (pass direction, 52 deal cards) and each
  legal action, for ``--peer-seconds``; the same rules as ours (``hearts`` with
  ``qs_breaks_hearts=false``; for the paper variant ``pass_cards=false``,
  ``no_pts_on_first_trick=false``, ``must_break_hearts=false``, ``can_lead_any_club=true``).
  Also timed: the same loop drawing with ``numpy.random`` (``choice`` with the chance
  probabilities), a common way to write it, which is several times slower; the ratio is
  printed against the fast loop.

``--worlds`` also times ``Hearts.sample_world`` (batch states, one world each) in the middle
of the hand. Prints device, versions, batch; numbers vary with the machine's load, so compare
the ratios, which are measured in one process.
"""

from __future__ import annotations

import os

# One XLA CPU device per core, set before JAX starts (as bench/hex_uct.py): XLA's own
# intra-op threads split each small operation of a step over the cores, which costs more than
# it gains; one device per core runs each share of the games on its own core.
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + f" --xla_force_host_platform_device_count={os.cpu_count()}").strip()

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import jaxgames  # noqa: E402
from bench.timing import best_seconds  # noqa: E402
from jaxgames import core, rng  # noqa: E402

OPENSPIEL_PARAMS = {
    "standard": {"qs_breaks_hearts": False},
    "paper": {"pass_cards": False, "no_pts_on_first_trick": False, "must_break_hearts": False,
              "can_lead_any_club": True, "qs_breaks_hearts": False},
}


def jax_games(env, batch: int, sharded: bool):
    """``(fn, keys)``: jitted ``fn(keys) -> (steps [B], returns [B, 4])`` of ``batch`` random
    games from the deal; ``sharded``: the games split over every device (one per core)."""

    def one(key):
        init_key, play_key = rng.split(key, 2)
        out = core.rollout(env, env.init(init_key), core.random_policy, play_key)
        return out.steps, out.returns

    keys = rng.split(jax.random.key(0), batch)
    if not sharded:
        return jax.jit(jax.vmap(one)), keys
    mesh = jax.make_mesh((jax.device_count(),), ("games",))
    games = P("games")
    fn = jax.jit(jax.shard_map(jax.vmap(one), mesh=mesh, in_specs=games, out_specs=games, check_vma=False))
    return fn, jax.device_put(keys, NamedSharding(mesh, games))


def openspiel_games_per_second(variant: str, seconds: float, use_numpy: bool) -> tuple[float, int]:
    import pyspiel

    game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS[variant])
    pick = random.Random(0)
    npr = np.random.default_rng(0)
    games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                if use_numpy:
                    action = outcomes[npr.choice(len(outcomes), p=probs)]
                else:
                    action = pick.choice(outcomes)
            else:
                legal = state.legal_actions()
                action = legal[npr.integers(len(legal))] if use_numpy else pick.choice(legal)
            state.apply_action(action)
        games += 1
    return games / (time.perf_counter() - start), games


def world_sampler(env, batch: int, moves: int):
    """Jitted ``key -> checksum`` of ``sample_world`` for ``batch`` states ``moves`` moves in."""

    def states(key):
        def one(k):
            k1, k2 = rng.split(k, 2)
            return core.rollout(env, env.init(k1), core.random_policy, k2, max_steps=moves).state
        return jax.vmap(one)(rng.split(key, batch))

    start = jax.jit(states)(jax.random.key(7))

    @jax.jit
    def run(key):
        worlds = jax.vmap(lambda s, k: env.sample_world(s, s.current_player, k))(start, rng.split(key, batch))
        return worlds.owner.astype(jnp.int32).sum()

    return run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-seconds", type=float, default=5.0)
    parser.add_argument("--variant", default="both", choices=["standard", "paper", "both"])
    parser.add_argument("--worlds", action="store_true")
    args = parser.parse_args(argv)
    if args.batch % jax.device_count():
        parser.error(f"--batch must be a multiple of the {jax.device_count()} devices")

    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()} ({os.cpu_count()} CPU cores), "
          f"jax {jax.__version__}, open_spiel {importlib.metadata.version('open_spiel')}, "
          f"python {platform.python_version()}")
    print(f"random play, whole hands from the deal, batch {args.batch}, best of {args.repeats}")
    variants = ["standard", "paper"] if args.variant == "both" else [args.variant]
    result = {}
    for variant in variants:
        env = jaxgames.make("hearts", variant=variant)
        rates = {}
        for sharded in (True, False):
            fn, keys = jax_games(env, args.batch, sharded)
            t0 = time.perf_counter()
            steps, _ = jax.block_until_ready(fn(keys))
            compile_s = time.perf_counter() - t0
            rates[sharded] = args.batch / best_seconds(fn, keys, repeats=args.repeats)
        ours = rates[True]
        peer, peer_n = openspiel_games_per_second(variant, args.peer_seconds, use_numpy=False)
        slow, slow_n = openspiel_games_per_second(variant, max(1.0, args.peer_seconds / 2), use_numpy=True)
        result[variant] = {"jaxgames_games_per_s": ours, "jaxgames_one_device_games_per_s": rates[False],
                           "openspiel_games_per_s": peer, "openspiel_numpy_games_per_s": slow,
                           "ratio": ours / peer, "ratio_one_device": rates[False] / peer,
                           "ratio_numpy_loop": ours / slow}
        moves = float(np.mean(np.asarray(steps)))
        print(f"[{variant}] ({moves:.0f} moves a hand)")
        print(f"  jaxgames, {jax.device_count()} devices:       {ours:>12,.0f} games/s  "
              f"({ours * moves:,.0f} steps/s)")
        print(f"  jaxgames, 1 device:          {rates[False]:>12,.0f} games/s  "
              f"({rates[False] * moves:,.0f} steps/s; first call {compile_s:.1f} s)")
        print(f"  OpenSpiel, random.Random:    {peer:>12,.0f} games/s  ({peer_n} games)")
        print(f"  OpenSpiel, numpy.random:     {slow:>12,.0f} games/s  ({slow_n} games)")
        print(f"  ratio jaxgames / OpenSpiel:  {ours / peer:.1f}x  (1 device: {rates[False] / peer:.1f}x; "
              f"against the numpy loop: {ours / slow:.1f}x)")
    if args.worlds:
        env = jaxgames.make("hearts")
        run = world_sampler(env, args.batch, moves=30)
        seconds = best_seconds(run, jax.random.key(3), repeats=args.repeats)
        result["worlds_per_s"] = args.batch / seconds
        print(f"sample_world 30 moves into a hand, batch {args.batch}: {args.batch / seconds:,.0f} worlds/s")
    return result


if __name__ == "__main__":
    main()
