"""Random-play throughput of jaxgames' Hearts against OpenSpiel's, in the same run.

    python -m bench.hearts_env [--batch 1024] [--repeats 5] [--peer-seconds 5]
                               [--variant standard|paper|both] [--worlds]

* jaxgames: ``--batch`` whole hands at once, each a :func:`jaxgames.rollout.rollout` of
  :func:`jaxgames.core.random_policy` from ``env.init`` (the deal included) to the end of the
  hand, under ``jax.vmap``, one jitted call; games per second = batch / seconds of a call,
  after a warm-up call (compilation). Timed twice: as one program on the default device (the
  headline: what ``jax.jit(jax.vmap(...))`` gives), and split over one XLA CPU device per core
  (``shard_map``; as ``bench/hex_uct.py``), which is faster when the cores are free.
* OpenSpiel (``pyspiel``, C++ rules driven from Python, one game after another, one thread):
  the plain loop, choosing each chance outcome (pass direction, the 52 deal cards) and each
  legal action uniformly. Two ways of drawing are timed: ``random.Random.choice`` (the fastest
  loop we could write) and ``numpy.random`` (``choice`` with the chance probabilities), a
  common way to write it and several times slower. The same rules as ours: ``hearts`` with
  ``qs_breaks_hearts=false``; for the paper variant also ``pass_cards=false,
  no_pts_on_first_trick=false, must_break_hearts=false, can_lead_any_club=true``.
* The same, with the *priority player* (:func:`priority_policy`) instead of
  ``core.random_policy``: also uniformly random among the legal cards (checked every run), but
  one max over pseudo-random card words instead of a cumulative sum and a search, which cost
  more than a Hearts step on XLA's CPU.
* The harness alone: the same rollout of a stand-in game whose ``step`` only counts moves
  (same state, same number of moves a hand, the deal included): the random player (a Threefry
  word, a cumulative sum over the mask), the contract's checks and selects, the loop. No Hearts
  rule can make a game faster than that floor.

The measurements alternate in rounds (every program once, then each OpenSpiel loop for
``peer-seconds / repeats``), and the best rate of each is kept, so bursts of load from other
processes hit all of them alike. Rates are printed per wall-clock second and per CPU-second of
this process (``time.process_time``: the work done, all of XLA's threads counted, whatever
the load from other processes; on a shared machine the steadier figure). ``--worlds`` also times ``Hearts.sample_world`` (batch
states, one world each) 30 moves into a hand. Prints device, versions, batch.
"""

from __future__ import annotations

import os

# One XLA CPU device per core, set before JAX starts (as bench/hex_uct.py): XLA's own
# intra-op threads split each small operation of a step over the cores, which costs more than
# it gains; one device per core runs each share of the games on its own core.
from train.common.mesh import one_cpu_device_per_core  # noqa: E402

one_cpu_device_per_core()

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
from jaxgames.hearts import Hearts  # noqa: E402
from jaxgames.rollout import rollout  # noqa: E402

OPENSPIEL_PARAMS = {
    "standard": {"qs_breaks_hearts": False},
    "paper": {"pass_cards": False, "no_pts_on_first_trick": False, "must_break_hearts": False,
              "can_lead_any_club": True, "qs_breaks_hearts": False},
}


_CARDS = jnp.arange(52, dtype=jnp.uint32)


def priority_policy(params, state, key):
    """A uniformly random legal card from two Threefry words: every card gets a pseudo-random
    word (the words spread over the cards by an integer mixer, as Hex's playouts do), and the
    legal card with the largest word is played. One max over the cards instead of
    ``random_legal_action``'s cumulative sum and search, both slow loops on XLA's CPU. The
    words' top 26 bits decide and the card index breaks ties (bias below 13 / 2**26);
    uniformity is measured by :func:`check_priority_policy`."""
    del params
    w = rng.random_words(key, 2)
    words = rng.mix32(rng.mix32(w[0] + _CARDS * jnp.uint32(0x9E3779B9)) ^ w[1])
    keys = jnp.where(state.legal_action_mask, (words & jnp.uint32(0xFFFFFFC0)) | _CARDS, jnp.uint32(0))
    return (keys.max() & jnp.uint32(63)).astype(jnp.int32)


def check_priority_policy(env, draws: int = 200_000) -> float:
    """The largest deviation, in standard errors, of any legal card's share of ``draws`` picks
    from 1/n, over a mask of 13 cards (a hand) and of 3; raises if an illegal card is picked."""
    state = env.init(jax.random.key(0))
    worst = 0.0
    for legal in (np.arange(52) % 4 == 0, np.isin(np.arange(52), [5, 17, 51])):
        probe = state.replace(legal_action_mask=jnp.asarray(legal))
        picks = np.asarray(jax.jit(jax.vmap(lambda k: priority_policy(None, probe, k)))(
            rng.split(jax.random.key(1), draws)))
        assert legal[picks].all(), "the priority player picked an illegal card"
        n = legal.sum()
        share = np.bincount(picks, minlength=52)[legal] / draws
        worst = max(worst, float(np.abs(share - 1 / n).max() / np.sqrt((1 / n) * (1 - 1 / n) / draws)))
    return worst


def jax_games(env, batch: int, sharded: bool, policy=core.random_policy):
    """``(fn, keys)``: jitted ``fn(keys) -> (steps [B], returns [B, 4])`` of ``batch`` random
    games from the deal; ``sharded``: the games split over every device (one per core)."""

    def one(key):
        init_key, play_key = rng.split(key, 2)
        out = rollout(env, env.init(init_key), policy, play_key)
        return out.steps, out.returns

    keys = rng.split(jax.random.key(0), batch)
    if not sharded:
        return jax.jit(jax.vmap(one)), keys
    mesh = jax.make_mesh((jax.device_count(),), ("games",))
    games = P("games")
    fn = jax.jit(jax.shard_map(jax.vmap(one), mesh=mesh, in_specs=games, out_specs=games, check_vma=False))
    return fn, jax.device_put(keys, NamedSharding(mesh, games))


class _CountingOnly(Hearts):
    """A stand-in with Hearts' state whose step only counts moves: the harness's floor."""

    def _step(self, state, action, key):
        del action, key
        moves = state.num_played + 1
        length = 64 if self.standard else 52
        return state.replace(num_played=moves, terminated=moves == length)


class OpenSpielLoop:
    """OpenSpiel's random play, a chunk at a time: ``run(seconds) -> (games, seconds)``."""

    def __init__(self, variant: str, use_numpy: bool):
        import pyspiel

        self.game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS[variant])
        self.use_numpy = use_numpy
        self.pick = random.Random(0)
        self.npr = np.random.default_rng(0)

    def run(self, seconds: float) -> tuple[int, float]:
        games = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            state = self.game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probs = zip(*state.chance_outcomes())
                    if self.use_numpy:
                        action = outcomes[self.npr.choice(len(outcomes), p=probs)]
                    else:
                        action = self.pick.choice(outcomes)
                else:
                    legal = state.legal_actions()
                    action = legal[self.npr.integers(len(legal))] if self.use_numpy else self.pick.choice(legal)
                state.apply_action(action)
            games += 1
        return games, time.perf_counter() - start


def world_sampler(env, batch: int, moves: int):
    """Jitted ``key -> checksum`` of ``sample_world`` for ``batch`` states ``moves`` moves in."""

    def states(key):
        def one(k):
            k1, k2 = rng.split(k, 2)
            return rollout(env, env.init(k1), core.random_policy, k2, max_steps=moves).state
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
    print(f"random play, whole hands from the deal, batch {args.batch}, best of {args.repeats} rounds "
          f"({args.peer_seconds / args.repeats:.1f} s of each OpenSpiel loop a round)")
    print(f"random players: core.random_policy, and the priority player (its picks' largest deviation "
          f"from uniform: {check_priority_policy(jaxgames.make('hearts')):.1f} standard errors)")
    variants = ["standard", "paper"] if args.variant == "both" else [args.variant]
    result = {}
    for variant in variants:
        env = jaxgames.make("hearts", variant=variant)
        devices = f"{jax.device_count()} devices"
        runs = {"one device": jax_games(env, args.batch, False),
                devices: jax_games(env, args.batch, True),
                "harness floor": jax_games(_CountingOnly(variant=variant), args.batch, False),
                "priority player": jax_games(env, args.batch, False, priority_policy),
                "harness floor, priority": jax_games(_CountingOnly(variant=variant), args.batch, False,
                                                     priority_policy),
                f"priority, {devices}": jax_games(env, args.batch, True, priority_policy)}
        steps = None
        for name, (fn, keys) in runs.items():
            out_steps, _ = jax.block_until_ready(fn(keys))       # compile
            steps = out_steps if steps is None else steps
        peers = {"random.Random": OpenSpielLoop(variant, False), "numpy.random": OpenSpielLoop(variant, True)}
        best = {name: 0.0 for name in (*runs, *peers)}       # games per wall-clock second
        best_cpu = dict(best)                                  # games per CPU-second of this process
        # Rounds: every program once, then each OpenSpiel loop for a chunk; the best rate of
        # each over the rounds, so a burst of load from other processes hits all alike.
        for _ in range(args.repeats):
            for name, (fn, keys) in runs.items():
                t, c = time.perf_counter(), time.process_time()
                jax.block_until_ready(fn(keys))
                best[name] = max(best[name], args.batch / (time.perf_counter() - t))
                best_cpu[name] = max(best_cpu[name], args.batch / (time.process_time() - c))
            for name, loop in peers.items():
                c = time.process_time()
                games, seconds = loop.run(args.peer_seconds / args.repeats)
                best[name] = max(best[name], games / seconds)
                best_cpu[name] = max(best_cpu[name], games / (time.process_time() - c))
        moves = float(np.mean(np.asarray(steps)))
        fast, slow = best["random.Random"], best["numpy.random"]
        result[variant] = {"games_per_s": best, "games_per_cpu_s": best_cpu,
                           "ratios": {name: (best[name] / fast, best[name] / slow) for name in runs}}
        print(f"[{variant}] ({moves:.0f} moves a hand)     games/s   ratio to OpenSpiel's loops  "
              f"| per CPU-second: games, ratio to the random.Random loop")
        for name in runs:
            note = "  (a stand-in game whose step only counts moves)" if name.startswith("harness") else ""
            print(f"  jaxgames, {name + ':':<26} {best[name]:>10,.0f}   {best[name] / fast:5.1f}x / "
                  f"{best[name] / slow:5.1f}x  | {best_cpu[name]:>9,.0f}  "
                  f"{best_cpu[name] / best_cpu['random.Random']:5.1f}x{note}")
        for name in peers:
            print(f"  OpenSpiel, {name + ':':<25} {best[name]:>10,.0f}                  | {best_cpu[name]:>9,.0f}")
        print("  (ratios: against OpenSpiel's random.Random loop / its numpy.random loop; per CPU-second "
              "counts the work of this process alone, whatever the load from others)")
    if args.worlds:
        env = jaxgames.make("hearts")
        run = world_sampler(env, args.batch, moves=30)
        seconds = best_seconds(run, jax.random.key(3), repeats=args.repeats)
        result["worlds_per_s"] = args.batch / seconds
        print(f"sample_world 30 moves into a hand, batch {args.batch}: {args.batch / seconds:,.0f} worlds/s")
    return result


if __name__ == "__main__":
    main()
