"""The arena's game loop: each policy deciding only where it moves, against every policy deciding
everywhere (the select under ``vmap`` the arena used before), measured in the same run.

    python -m bench.arena [--size 7] [--games 20] [--simulations 200] [--uct-simulations 200]
                          [--run runs/hex/<run>] [--repeats 3]

The match is the Hex pipeline's evaluation: the AlphaZero agent (Gumbel search, ``--simulations``
a move; an untrained source network, or the trained one of ``--run``) against plain UCT
(``--uct-simulations``, random playouts), ``--games`` games, seats rotated. Both loops play the
same games from the same keys (``jaxgames.rollout_seated`` against ``vmap`` of
``jaxgames.rollout`` with the mover's policy selected; the bench checks the returns agree), on
one device as the arena runs. Each timing is the best of ``--repeats`` calls after compilation,
the two loops alternating.
"""

from __future__ import annotations

import argparse
import platform

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from bench.timing import best_seconds
from jaxgames import arena, rng
from jaxgames.hex import network as hex_network
from jaxgames.hex.agent import load_agent
from jaxgames.search import mcts
from jaxgames.search.uct import uct_policy


def every_policy_rollout(env, policies, seats, init_keys, keys, *, params, max_steps=None,
                         chance_keys=None):
    """The arena's loop before ``rollout_seated``: ``vmap`` of ``jaxgames.rollout`` in which
    every policy decides at every step and a select keeps the mover's (``seats`` [G, players],
    keys [G]). The peer here, and the reference ``tests/test_arena.py`` compares with."""
    def one(init_key, key, chance_key, seat):
        def mover(params, state, k):
            actions = jnp.stack([p(params[i], state, k) for i, p in enumerate(policies)])
            return actions[seat[state.current_player]]
        return jaxgames.rollout(env, env.init(init_key), mover, key, params=params,
                                max_steps=max_steps, chance_key=chance_key)

    chance_axis = None if chance_keys is None else 0
    return jax.vmap(one, in_axes=(0, 0, chance_axis, 0))(init_keys, keys, chance_keys, seats)


def loops(env, policies, num_games: int):
    """``(seated, select)``: jitted ``(params, key) -> returns [G, P]`` of the two game loops."""
    seats = jnp.asarray(np.repeat(arena.rotations(env.num_players), num_games // env.num_players, axis=0))

    def keys(key):
        init_key, play_key = rng.split(key, 2)
        return rng.split(init_key, num_games), rng.split(play_key, num_games)

    @jax.jit
    def seated(params, key):
        init_keys, play_keys = keys(key)
        return jaxgames.rollout_seated(env, jax.vmap(env.init)(init_keys), policies, seats, play_keys,
                                       params=params).returns

    @jax.jit
    def select(params, key):
        return every_policy_rollout(env, policies, seats, *keys(key), params=params).returns

    return seated, select


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=7)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--uct-simulations", type=int, default=200)
    parser.add_argument("--run", default=None, help="a Hex run folder: its trained agent")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be a positive even number, got {args.games}")
    if args.run:
        agent = load_agent(args.run, simulations=args.simulations)
        env, policy, params, what = agent.env, agent.policy, agent.params, f"trained ({args.run})"
    else:
        env = jaxgames.make("hex", board_size=args.size)
        net = hex_network.make(args.size)
        policy = mcts.mcts_policy(env, net.apply, num_simulations=args.simulations, kind="gumbel")
        params, what = net.init(jax.random.key(0)), "untrained"
    uct = uct_policy(env, num_simulations=args.uct_simulations)
    seated, select = loops(env, (policy, uct), args.games)
    key = jax.random.key(1)
    both = [params, None]
    np.testing.assert_array_equal(np.asarray(seated(both, key)), np.asarray(select(both, key)))
    times = {"seated": [], "select": []}
    for _ in range(args.repeats):   # alternating, so both see the same load
        times["seated"].append(best_seconds(seated, both, key, repeats=1))
        times["select"].append(best_seconds(select, both, key, repeats=1))
    ours, before = min(times["seated"]), min(times["select"])
    print(f"device: {jax.devices()[0].platform} x{len(jax.devices())}, jax {jax.__version__}, "
          f"{platform.machine()}")
    print(f"hex {env.board_size}x{env.board_size}: {args.games} games, agent ({what} network, gumbel "
          f"{args.simulations} simulations) against UCT-{args.uct_simulations}, the same games both ways")
    print(f"  every policy decides everywhere (vmap + select): {before:7.2f} s")
    print(f"  each policy where it moves (rollout_seated):     {ours:7.2f} s  -> {before / ours:.2f}x faster")


if __name__ == "__main__":
    main()
