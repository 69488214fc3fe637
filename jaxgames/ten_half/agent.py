"""A ten-and-a-half policy as a table, ready to play: the learned policy of a
``python -m train.ten_half`` run, or the exact optimum.

    from jaxgames.ten_half.agent import load_agent, optimal_player
    agent = load_agent("runs/ten_half/quick-seed0")                 # on-policy MC control's
    agent = load_agent("runs/ten_half/quick-seed0", method="off_policy")
    best = optimal_player()                                          # jaxgames.ten_half.dp's
    act, values = action_and_values(agent, state)                   # what a hint shows

A player's parameters are two tables indexed by the observation ``(player_sum, num_cards,
num_faces)`` (:data:`jaxgames.ten_half.dp.SHAPE`, ``[22, 6, 6]``):

- ``policy`` int8 ``[22, 6, 6]``: the action played, 0 = stick, 1 = hit;
- ``q`` float32 ``[22, 6, 6, 2]``: the action values behind it (a learner's estimates, or the
  exact optimal values; 0 where a state has none: unreachable, or never visited in training).

The policy is stored rather than recomputed from ``q`` so the optimum plays exactly
``dp.optimal_policy()`` (its near-ties would round either way in float32), and a learned
policy is the learner's own ``greedy(Q)`` (``train/algos/mc_control.py``: argmax, ties to
stick), taken once when the table is built.

What :func:`load_agent` reads (through :mod:`jaxgames.checkpoints`, the format training
writes): ``config.json`` (its ``game`` must be ``ten_half``), then the newest
``checkpoints/<step>/``, whose carry is ``{method: {total, weight, episodes}}`` for both
learners; Q = total / weight where weight > 0, else 0 (``mc_control.q_values``). A run has no
``best/``. Every expected failure is an :class:`AgentError` (a ``ValueError``), one line
naming the path. Library code: nothing here imports the training pipeline.
"""

from __future__ import annotations

import functools
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.player import Player
from jaxgames.run_folder import AgentError, read_agent_params, read_config_json
from jaxgames.ten_half import dp

__all__ = ["CONFIG_FIELDS", "METHODS", "AgentError", "action_and_values", "load_agent", "make_player", "optimal_params",
           "optimal_player", "params_from_q", "params_like", "read_q", "table_policy"]

GAME = "ten_half"
#: the learners of a run, as its checkpoint names them (``train.algos.mc_control.METHODS``)
METHODS = ("on_policy", "off_policy")
#: the fields of config.json that say a folder is a ten-and-a-half run
CONFIG_FIELDS = ("episodes", "episodes_per_update", "epsilon")


def params_like() -> dict:
    """The shapes and dtypes of a player's parameters (``jax.ShapeDtypeStruct`` leaves)."""
    return {"policy": jax.ShapeDtypeStruct(dp.SHAPE, jnp.int8),
            "q": jax.ShapeDtypeStruct(dp.SHAPE + (2,), jnp.float32)}


def table_policy(params: dict, state, key: jax.Array) -> jax.Array:
    """Arena policy: the table's action at the state's observation, int32 [] (``key`` unused).
    A terminal state may show a hand beyond the table (a bust's sum): clipped, never read."""
    del key
    s = jnp.clip(state.player_sum, 0, dp.SHAPE[0] - 1)
    n = jnp.clip(state.num_cards, 0, dp.SHAPE[1] - 1)
    f = jnp.clip(state.num_faces, 0, dp.SHAPE[2] - 1)
    return params["policy"][s, n, f].astype(jnp.int32)


def make_player(params: dict, *, name: str) -> Player:
    """The player of a :func:`params_like` tree (jax arrays)."""
    return Player(name=name, policy=table_policy, params=params)


def params_from_q(q: Any) -> dict:
    """A learner's parameters from its Q table (float32 [792, 2] or [22, 6, 6, 2]): the
    greedy policy as the learner plays it (argmax, ties to stick) and the values."""
    q = jnp.asarray(q, jnp.float32).reshape(dp.SHAPE + (2,))
    return {"policy": jnp.argmax(q, axis=-1).astype(jnp.int8), "q": q}


def optimal_params() -> dict:
    """The exact optimum (:mod:`jaxgames.ten_half.dp`): its policy and its action values
    (0 outside the reachable states, where the solver has none)."""
    q = np.nan_to_num(dp.optimal_q(), nan=0.0).astype(np.float32)
    return {"policy": jnp.asarray(dp.optimal_policy(), jnp.int8), "q": jnp.asarray(q)}


def optimal_player() -> Player:
    """The exact optimal policy, computed now (a few ms)."""
    return make_player(optimal_params(), name="the exact optimum (jaxgames.ten_half.dp)")


def action_and_values(player: Player, state) -> tuple[int, np.ndarray]:
    """The player's action in ``state`` and its action values there, float32 [2] (stick, hit):
    what a hint shows. Host side."""
    action = int(_jitted_policy()(player.params, state, jax.random.key(0)))
    s, n, f = int(state.player_sum), int(state.num_cards), int(state.num_faces)
    return action, np.asarray(player.params["q"][s, n, f])


@functools.lru_cache(maxsize=None)
def _jitted_policy():
    return jax.jit(table_policy)


# -- the run folder ------------------------------------------------------------------------------


def load_agent(run_dir: str | pathlib.Path, *, method: str = "on_policy") -> Player:
    """The greedy policy ``method`` (``on_policy`` or ``off_policy``) learned by the run in
    ``run_dir`` (``runs/ten_half/<run>``), from its newest checkpoint. :class:`AgentError`
    when the folder cannot be used (see the module docstring)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    run = pathlib.Path(run_dir)
    read_config_json(run, game=GAME, error=AgentError, fields=CONFIG_FIELDS, title="ten-and-a-half")
    step_dir, q = read_q(run, method)
    return make_player(params_from_q(q), name=f"agent {run.name} ({method.replace('_', '-')} MC control, "
                                              f"update {int(step_dir.name)})")


def read_q(run: pathlib.Path, method: str) -> tuple[pathlib.Path, np.ndarray]:
    """The newest step folder of ``run/checkpoints`` and the Q table of ``method`` in it,
    float32 [792, 2], as ``mc_control.q_values`` computes it."""
    # orbax reads its metadata only through an absolute path
    run = pathlib.Path(run).resolve()
    table = jax.ShapeDtypeStruct((dp.NUM_STATES, 2), jnp.float32)
    learner = {"total": table, "weight": table, "episodes": jax.ShapeDtypeStruct((), jnp.int32)}
    like = {m: learner for m in METHODS}
    step_dir, carry = read_agent_params(run, like, trainer="python -m train.ten_half", until="chunk",
                                        fits="the Monte Carlo learners' tables of a ten-and-a-half run")
    total, weight = carry[method]["total"], carry[method]["weight"]
    q = jnp.where(weight > 0, total / jnp.maximum(weight, 1e-30), 0.0)   # mc_control.q_values
    return step_dir, np.asarray(q, np.float32)
