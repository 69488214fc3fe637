"""Random-play throughput of jaxgames' hold'em against OpenSpiel's and RLCard's, same process.

    python -m bench.holdem_env [--batch 1024] [--repeats 5] [--peer-hands 1000]

Heads-up no-limit hold'em, 20,000-chip stacks, blinds 50/100, hands played to the end by a
uniformly random legal player, measured in hands per second:

* jaxgames: ``batch`` hands at once, each ``init`` (shuffle, deal, showdown evaluation) then
  ``jaxgames.rollout`` with ``core.random_policy`` under ``vmap``, one jitted call; the best of
  three calls in each of ``repeats`` rounds, after a warm-up call (compilation). Also timed: the same game with the showdown
  evaluated on the step that ends the hand instead of at the deal (``--no-variant`` skips it),
  which shows what evaluating at the deal saves. Also timed: ``steps`` auto-reset steps of
  ``batch`` games in one ``lax.scan`` (steps per second), both ways: there a new deal is
  computed on every step anyway (``auto_reset`` selects it), while the hands' rollout lets
  XLA hoist a last-step evaluation of the unchanging deck out of its loop.
* OpenSpiel ``universal_poker`` (the C++ game through its Python API, one hand at a time, chance
  nodes sampled uniformly): the full game (every raise size legal: what the random player picks
  from: the issue's peer, and the game string it names) and the ``fchpa`` abstraction (fold,
  call, half pot, pot, all-in: an action set like ours, and 10x faster in OpenSpiel because
  its legal-action lists are short). Both ratios are printed.
* RLCard ``no-limit-holdem`` (pure Python; random agents through ``env.run``): its blinds are
  1/2, so 200 big blinds are 400 chips; its actions are fold, check/call, raise ½ pot, raise
  pot, all-in.

Every peer plays ``peer-hands`` hands per repeat; the peers and jaxgames take turns within each
repeat, so a burst of load from other processes hits all of them. The machine's load average is
printed: timings on a shared machine are noisy, ratios less so.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import core, rng
from jaxgames.holdem import game as G
from jaxgames.rollout import rollout

OPENSPIEL = ("universal_poker(betting=nolimit,numPlayers=2,numRounds=4,blind=100 50,firstPlayer=2 1 1 1,"
             "numSuits=4,numRanks=13,numHoleCards=2,numBoardCards=0 3 1 1,stack=20000 20000,"
             "bettingAbstraction={})")


class ShowdownAtTheEnd(G.Holdem):
    """The same game with the showdown evaluated where the hand ends (for the comparison)."""

    @staticmethod
    def _showdown_at_deal(deck):
        return jnp.int8(0)  # nothing evaluated at the deal

    def _step(self, state, action, key):
        new = super()._step(state, action, key)
        # evaluated here instead: under vmap on every step of every hand (a select computes
        # both sides), and the showdown's rewards redone with it
        result = G.showdown_result(state.deck)
        at_showdown = new.terminated & (action != 0)
        win0 = result.astype(jnp.int32) * jnp.minimum(new.committed[0], new.committed[1])
        rewards = jnp.where(at_showdown, jnp.stack([win0, -win0]).astype(jnp.float32), new.rewards)
        return new.replace(rewards=rewards)


def jax_hands(env, batch: int):
    """Jitted ``key -> (sum of seat 0's returns, actions played)`` over ``batch`` random hands."""

    def one(key):
        k_init, k_play = rng.split(key, 2)
        out = rollout(env, env.init(k_init), core.random_policy, k_play)
        return out.returns[0], out.steps

    @jax.jit
    def run(key):
        returns, steps = jax.vmap(one)(rng.split(key, batch))
        return returns.sum(), steps.sum()

    return run


def jax_auto_reset_steps(env, batch: int, steps: int):
    """Jitted ``key -> total reward``: ``steps`` random auto-reset steps of ``batch`` games in
    one ``lax.scan`` (the loop of a training pipeline: a new hand starts where one ends)."""
    step = core.auto_reset(env)

    @jax.jit
    def run(key):
        k0, key = rng.split(key, 2)
        state = jax.vmap(env.init)(rng.split(k0, batch))

        def body(carry, k):
            state, total = carry
            ka, ks = rng.split(k, 2)
            actions = jax.vmap(core.random_legal_action)(state, rng.split(ka, batch))
            state = jax.vmap(step)(state, actions, rng.split(ks, batch))
            return (state, total + state.rewards[:, 0].sum()), None

        return jax.lax.scan(body, (state, jnp.float32(0)), rng.split(key, steps))[0][1]

    return run


def openspiel_hands(game, n: int, seed: int) -> int:
    """``n`` random hands through pyspiel; returns the actions played."""
    r = np.random.default_rng(seed)
    actions = 0
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[r.integers(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[r.integers(len(legal))])
                actions += 1
    return actions


def rlcard_hands(env, n: int) -> int:
    actions = 0
    for _ in range(n):
        trajectories, _ = env.run(is_training=False)
        actions += sum((len(t) - 1) // 2 for t in trajectories)
    return actions


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-hands", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=100, help="auto-reset steps per scan")
    parser.add_argument("--no-variant", action="store_true", help="skip the showdown-at-the-end variant")
    args = parser.parse_args(argv)

    import pyspiel
    import rlcard
    from rlcard.agents import RandomAgent

    env = jaxgames.make("holdem")
    ours = {"jaxgames": jax_hands(env, args.batch)}
    if not args.no_variant:
        ours["jaxgames, showdown at the end"] = jax_hands(ShowdownAtTheEnd(), args.batch)
    stepping = {"jaxgames": jax_auto_reset_steps(env, args.batch, args.steps)}
    if not args.no_variant:
        stepping["jaxgames, showdown at the end"] = jax_auto_reset_steps(ShowdownAtTheEnd(), args.batch, args.steps)
    games = {f"OpenSpiel {a}": pyspiel.load_game(OPENSPIEL.format(a)) for a in ("fullgame", "fchpa")}
    rl_env = rlcard.make("no-limit-holdem", config={"chips_for_each": 400, "seed": 0})
    rl_env.set_agents([RandomAgent(num_actions=rl_env.num_actions) for _ in range(rl_env.num_players)])

    best = {name: float("inf") for name in [*ours, *games, "RLCard"]}
    actions = {}
    step_best = {name: float("inf") for name in stepping}
    for fn in [*ours.values(), *stepping.values()]:
        jax.block_until_ready(fn(jax.random.key(0)))  # compile
    for i in range(args.repeats):
        for name, fn in ours.items():
            # three calls in a row, the best kept: the first call after the Python peers ran
            # pays for waking XLA's worker threads (measured: up to 2x on this machine)
            for j in range(3):
                t = time.perf_counter()
                _, steps = jax.block_until_ready(fn(jax.random.key(3 * i + j + 1)))
                best[name] = min(best[name], (time.perf_counter() - t) / args.batch)
            actions[name] = int(steps) / args.batch
        for name, fn in stepping.items():
            for j in range(3):
                t = time.perf_counter()
                jax.block_until_ready(fn(jax.random.key(3 * i + j + 1)))
                step_best[name] = min(step_best[name], time.perf_counter() - t)
        for name, game in games.items():
            t = time.perf_counter()
            played = openspiel_hands(game, args.peer_hands, i)
            best[name] = min(best[name], (time.perf_counter() - t) / args.peer_hands)
            actions[name] = played / args.peer_hands
        t = time.perf_counter()
        played = rlcard_hands(rl_env, args.peer_hands)
        best["RLCard"] = min(best["RLCard"], (time.perf_counter() - t) / args.peer_hands)
        actions["RLCard"] = played / args.peer_hands

    rate = {name: 1.0 / s for name, s in best.items()}
    result = {"hands_per_s": rate, "actions_per_hand": actions,
              "ratio_openspiel_fullgame": rate["jaxgames"] / rate["OpenSpiel fullgame"],
              "ratio_openspiel_fchpa": rate["jaxgames"] / rate["OpenSpiel fchpa"],
              "ratio_rlcard": rate["jaxgames"] / rate["RLCard"]}
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; jax {jax.__version__}, open_spiel {_version('open_spiel')}, "
          f"rlcard {rlcard.__version__}, python {platform.python_version()}")
    print(f"HUNL 20,000 chips, blinds 50/100 (RLCard: 400 chips, 1/2), uniformly random legal play; "
          f"jaxgames batch {args.batch}, peers {args.peer_hands} hands; best of {args.repeats}")
    for name in rate:
        print(f"  {name:<32} {rate[name]:>12,.0f} hands/s   {actions[name]:5.2f} actions/hand")
    print(f"ratio jaxgames / OpenSpiel fullgame (the issue's peer): {result['ratio_openspiel_fullgame']:.1f}x")
    print(f"ratio jaxgames / OpenSpiel fchpa (5 actions, the faster): {result['ratio_openspiel_fchpa']:.1f}x")
    print(f"ratio jaxgames / RLCard: {result['ratio_rlcard']:.1f}x")
    step_rate = {name: args.batch * args.steps / t for name, t in step_best.items()}
    result["auto_reset_steps_per_s"] = step_rate
    print(f"auto-reset stepping, batch {args.batch}, {args.steps} steps per scan:")
    for name, r in step_rate.items():
        print(f"  {name:<32} {r:>12,.0f} steps/s")
    if not args.no_variant:
        print(f"showdown evaluated at the deal vs on the last step: "
              f"{rate['jaxgames'] / rate['jaxgames, showdown at the end']:.2f}x in whole hands, "
              f"{step_rate['jaxgames'] / step_rate['jaxgames, showdown at the end']:.2f}x in auto-reset steps")
    return result


def _version(dist: str) -> str:
    from importlib.metadata import version
    try:
        return version(dist)
    except Exception:  # noqa: BLE001 (the version is only printed)
        return "?"


if __name__ == "__main__":
    main()
