"""A Hex agent against plain UCT given the same wall time a move, both timed in the same run.

    python -m bench.hex_equal_time --agent az-9x9 [--games 100] [--seed 0]
    python -m bench.hex_equal_time --run runs/hex/<run>          # a run's best/ model

Equal simulations (the agent at its 200, UCT at 5,000) say how well each uses a simulation;
a user choosing an engine asks what each does in the same time. Both players are timed one
game at a time (batch 1, the way a person plays one), each move a jitted call, on the same
positions: the empty board and the positions after 8, 16, ... random moves, up to two thirds
of the board. The agent's seconds a move over UCT-``--reference``'s give the ratio; UCT at
the simulations whose time matches the agent's (found by timing: its cost grows faster than its
simulations) then plays ``--games`` games against the agent, colours alternating, through
``jaxgames.arena`` (batched: the result does not depend on the batch). Printed: both times,
the ratio, the equal-time simulations, the win rate with its Wilson interval, the CPU.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from bench.timing import cpu_model
from jaxgames import arena as arena_lib
from jaxgames import pretrained
from jaxgames.hex.agent import load_agent
from jaxgames.search.uct import uct_policy


def positions(env, key, *, every: int = 8) -> list:
    """The empty board and the positions after ``every``, 2 ``every``, ... uniformly random
    legal moves, while at least a third of the board is empty (none is over)."""
    state = env.init(key)
    out, n = [state], env.num_actions
    step = jax.jit(env.step)
    for i in range(1, (2 * n) // 3 + 1):
        key, k = jax.random.split(key)
        legal = np.asarray(state.legal_action_mask)
        action = jax.random.choice(k, n, p=jnp.asarray(legal / legal.sum()))
        state = step(state, action)
        if bool(state.terminated):
            break
        if i % every == 0:
            out.append(state)
    return out


def seconds_per_move(policy, params, states, key, *, repeats: int = 2) -> float:
    """Mean seconds of one move of ``policy`` over ``states``, one game at a time (each the
    best of ``repeats`` calls after a compile)."""
    fn = jax.jit(policy)
    jax.block_until_ready(fn(params, states[0], key))
    total = 0.0
    for s in states:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            jax.block_until_ready(fn(params, s, key))
            best = min(best, time.perf_counter() - t)
        total += best
    return total / len(states)


def equal_simulations(time_of, target: float, start: int, start_seconds: float, *,
                      tolerance: float = 0.1, tries: int = 6) -> tuple[int, float]:
    """``(simulations, seconds)``: UCT's simulations a move whose time ``time_of(n)`` is within
    ``tolerance`` of ``target`` seconds, from its ``start_seconds`` at ``start`` simulations.
    UCT's cost grows faster than its simulations (its tree's arrays grow with them), so each
    step fits ``t = c n^b`` through the last two timings (``b = 1`` for the first) and times the
    ``n`` it predicts; after ``tries`` timings, the closest one. At least 1 simulation."""
    if target <= 0 or start_seconds <= 0 or start < 1:
        raise ValueError("the times and the simulations must be positive")
    timed = [(start, start_seconds)]
    n = max(1, round(start * target / start_seconds))
    for _ in range(tries):
        if n in dict(timed):
            break
        timed.append((n, time_of(n)))
        if abs(timed[-1][1] / target - 1) <= tolerance:
            break
        (n1, t1), (n2, t2) = timed[-2], timed[-1]
        b = np.log(t2 / t1) / np.log(n2 / n1) if n1 != n2 and t1 != t2 else 1.0
        n = max(1, round(n2 * (target / t2) ** (1 / max(b, 0.1))))
    return min(timed, key=lambda p: abs(np.log(p[1] / target)))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--agent", help="a shipped Hex agent (python -m jaxgames.pretrained lists them)")
    which.add_argument("--run", help="a run folder, runs/hex/<run> (its best/ model)")
    parser.add_argument("--reference", type=int, default=5000, help="UCT simulations timed beside the agent")
    parser.add_argument("--games", type=int, default=100, help="games at equal time (even: half as Black)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be even and >= 2, got {args.games}")
    if args.reference < 1:
        parser.error(f"--reference must be >= 1, got {args.reference}")
    try:
        agent = pretrained.load("hex", args.agent) if args.agent else load_agent(args.run)
    except ValueError as e:
        parser.error(str(e))
    env, policy, params = agent
    key_positions, key_moves, key_games = jax.random.split(jax.random.key(args.seed), 3)
    states = positions(env, key_positions)

    agent_s = seconds_per_move(policy, params, states, key_moves)
    uct_seconds = lambda n: seconds_per_move(uct_policy(env, num_simulations=n), None, states, key_moves)  # noqa: E731
    reference_s = uct_seconds(args.reference)
    sims, uct_s = equal_simulations(uct_seconds, agent_s, args.reference, reference_s)
    uct = uct_policy(env, num_simulations=sims)

    res = arena_lib.play(env, [policy, uct], key_games, num_games=args.games, params=[params, None])
    rate = float(res.win_rate(0)[0])
    low, high = arena_lib.wilson(rate * args.games, args.games)
    out = {"agent": agent.name, "board_size": agent.board_size, "positions": len(states), "agent_seconds_per_move": agent_s,
           f"uct_{args.reference}_seconds_per_move": reference_s, "ratio": agent_s / reference_s,
           "equal_time_simulations": sims, "equal_time_uct_seconds_per_move": uct_s,
           "games": args.games, "win_rate": rate, "win_rate_low": float(low), "win_rate_high": float(high),
           "cpu": cpu_model(), "devices": jax.device_count()}
    print(f"{agent.name} ({cpu_model()}, {jax.device_count()} device(s), one game at a time, {len(states)} positions)")
    print(f"  agent            {1e3 * agent_s:9.1f} ms a move")
    print(f"  UCT-{args.reference:<12,} {1e3 * reference_s:9.1f} ms a move   (the agent takes {agent_s / reference_s:.3f}x its time)")
    print(f"  UCT-{sims:<12,} {1e3 * uct_s:9.1f} ms a move   (the equal-time UCT)")
    print(f"  the agent against UCT-{sims:,}: {rate:.1%} of {args.games} games (95% Wilson {low:.1%}-{high:.1%})")
    return out


if __name__ == "__main__":
    main()
