"""Gymnasium vector envs: jaxgames' jitted ``JaxgamesVectorEnv`` against Gymnasium's own
``SyncVectorEnv`` of the single ``JaxgamesEnv``, same process, same games, same actions.

    python -m bench.gym_vector [--game 2048|ten_half] [--num-envs 256] [--steps 200]
                               [--peer-steps 20] [--repeats 3]

Both step ``num_envs`` games through Gymnasium's API (NEXT_STEP autoreset): ours in one
jitted, vmapped call per step, the peer one single env after another (each single env step
is itself one jitted call). The actions are a random legal action per game, picked in NumPy
from ``info["action_mask"]`` by the same code on both sides, so the policy's cost is the
same and small. Each side runs ``--steps`` (the peer ``--peer-steps``: its rate is constant
per step) after one untimed warm-up step; the best of ``--repeats`` runs is reported as
environment steps per second (num_envs * steps / seconds), then the ratio.
"""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym
import jax
import numpy as np

from bench.timing import cpu_model
from jaxgames.wrappers.gymnasium import JaxgamesEnv, JaxgamesVectorEnv


def _legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per game: int64 [num_envs]."""
    return np.where(mask.astype(bool), rng.random(mask.shape), -1.0).argmax(1)


def steps_per_second(envs, steps: int, repeats: int) -> float:
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=0)
    _, _, _, _, info = envs.step(_legal_actions(info["action_mask"], rng))  # warm-up: compiles
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            _, _, _, _, info = envs.step(_legal_actions(info["action_mask"], rng))
        best = min(best, time.perf_counter() - t)
    return envs.num_envs * steps / best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("2048", "ten_half"), default="2048")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--peer-steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if min(args.num_envs, args.steps, args.peer_steps, args.repeats) < 1:
        parser.error("--num-envs, --steps, --peer-steps and --repeats must be positive")
    ours = steps_per_second(JaxgamesVectorEnv(args.game, num_envs=args.num_envs), args.steps, args.repeats)
    peer_envs = gym.vector.SyncVectorEnv([lambda: JaxgamesEnv(args.game)] * args.num_envs)
    peer = steps_per_second(peer_envs, args.peer_steps, args.repeats)
    print(f"device: {jax.devices()[0].device_kind} x{jax.device_count()} ({cpu_model()}), jax {jax.__version__}, "
          f"gymnasium {gym.__version__}, python {platform.python_version()}")
    print(f"game {args.game}, batch {args.num_envs} envs, random legal actions, best of {args.repeats}")
    print(f"JaxgamesVectorEnv (one jitted vmapped step): {ours:12,.0f} steps/s  ({args.steps} steps)")
    print(f"SyncVectorEnv of JaxgamesEnv             : {peer:12,.0f} steps/s  ({args.peer_steps} steps)")
    print(f"ratio: {ours / peer:.1f}x")


if __name__ == "__main__":
    main()
