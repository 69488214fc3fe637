"""The trained agent of a ``python -m train.holdem`` run folder, ready to play.

    from jaxgames.holdem.agent import load_agent
    agent = load_agent("runs/holdem/quick-seed0")      # or: env, policy, params = load_agent(...)
    action = agent.act(state)                           # int: the agent's action in ``state``
    agent.action_probs(state)                           # float32 [9]: what it samples from

:func:`load_agent` reads ``config.json`` (``network``, ``tower``: the arguments of
:func:`jaxgames.holdem.network.make_network`) and the parameters, by ``which``: ``"latest"``
(the default, the newest ``checkpoints/<step>/``: the last round's, the agent the run's summary
describes) or ``"best"`` (``best/<step>/``, else the newest checkpoint). The policy is the one
the run trained, rebuilt from the game's pieces alone (:func:`network_policy`,
:func:`network_probs`: the network on :func:`jaxgames.holdem.encode.encode` of what the player
to move sees, its masked softmax sampled), as arena functions ``(params, state, key) -> ...``.
:func:`make_agent` builds the agent from a config dict and a parameter tree
(:func:`network_settings`, :func:`params_like`), as ``jaxgames.pretrained`` does. Every expected
failure raises :class:`AgentError` (a ``ValueError``) naming the path and what is wrong. Library
code: nothing here imports the training pipeline.

What it reads, why the last round is the default, what it refuses:
docs/holdem_training.md#playing-against-a-trained-agent.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.holdem import network as net_lib
from jaxgames.holdem.encode import encode
from jaxgames.player import RunAgent
from jaxgames.run_folder import AgentError, read_agent_params, read_config_json

GAME = "holdem"
#: what ``which`` may name: the newest checkpoint, or the best parameters (else the newest checkpoint)
WHICH = ("latest", "best")
#: the fields of config.json the agent needs (a hold'em run's config has them all)
_HOLDEM_FIELDS = ("network", "tower")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Agent(RunAgent):
    """A trained hold'em agent: a :class:`jaxgames.player.Player` (the arena, LBR and
    ``jaxgames.holdem.play`` take it as one) with the run it comes from. Unpacks as
    ``env, policy, params = agent``.

    name:          how it is shown: the run, the update and which parameters
    policy:        arena policy ``policy(params, state, key) -> int32 []`` (:func:`network_policy`)
    params:        the network's variables ``{"params": ...}`` (a pytree of jax arrays)
    probs:         ``probs(params, state, key) -> float32 [9]`` (:func:`network_probs`)
    env:           the run's game, ``jaxgames.make("holdem")`` (the default table it trained on)
    network:       ``jaxgames.holdem.network.make_network(network_size, tower)``
    jitted_policy, jitted_probs: ``jax.jit`` of both, shared by every agent of the same network
                   in a process
    network_size, tower: the network the run trained (``tower`` resolved: never empty)
    which:         ``"best"`` or ``"latest"``, as asked; checkpoint: the step folder read (under
                   ``best/`` or ``checkpoints/``); step: its update; run_dir: the run folder
                   (all four None for an agent not read from a run folder: a shipped one)
    """

    network: Any
    jitted_policy: Callable[..., Any]
    jitted_probs: Callable[..., Any]
    network_size: str
    tower: str
    which: str | None = None

    def compiled_policy(self) -> Callable[..., Any]:
        return self.jitted_policy

    def action_probs(self, state) -> np.ndarray:
        """float32 [9]: the probabilities :meth:`act` samples from (0 on illegal actions)."""
        return np.asarray(self.jitted_probs(self.params, state, jax.random.key(0)))


def load_agent(run_dir: str | pathlib.Path, *, which: str = "latest") -> Agent:
    """The agent of the run in ``run_dir`` (``runs/holdem/<run>``): its newest checkpoint's
    parameters (``which="latest"``), or those of its ``best/`` (``which="best"``; the newest
    checkpoint's where ``best/`` holds none). Raises :class:`AgentError` (see the module docstring)."""
    if which not in WHICH:
        raise ValueError(f"which must be one of {', '.join(WHICH)}, got {which!r}")
    run = pathlib.Path(run_dir)
    settings = read_config(run)
    where = f"the {settings['network']} {settings['tower']} network of {run / 'config.json'}"
    step_dir, params = _read_params(run, params_like(settings), where, settings, which)
    kind = "best" if step_dir.parent.name == "best" else "latest"
    name = f"agent {run.name} (update {int(step_dir.name)}, {kind} parameters)"
    return make_agent(settings, params, name=name, which=which, run_dir=run, checkpoint=step_dir,
                      step=int(step_dir.name))


def make_agent(config: dict, params: Any, *, name: str, **origin: Any) -> Agent:
    """The agent that plays ``params`` (the network's variables, in the tree of
    :func:`params_like`) with the network ``config`` names (a run's config.json, or its
    ``network`` and ``tower``; checked by :func:`network_settings`). ``origin``: the run
    folder fields of :class:`Agent` (``which``, ``run_dir``, ``checkpoint``, ``step``)."""
    settings = network_settings(config)
    size, tower = settings["network"], settings["tower"]
    env, net, policy, probs, jitted_policy, jitted_probs = _build(size, tower)
    return Agent(name=name, policy=policy, params=params, probs=probs, env=env, network=net,
                 jitted_policy=jitted_policy, jitted_probs=jitted_probs, network_size=size, tower=tower,
                 **origin)


def params_like(config: dict) -> Any:
    """The shapes and dtypes (``jax.ShapeDtypeStruct`` leaves) of the parameters of the
    network ``config`` names: the tree a checkpoint or a shipped file is read into."""
    settings = network_settings(config)
    return net_lib.param_shapes(_build(settings["network"], settings["tower"])[1])


# -- the run folder ------------------------------------------------------------------------------


def read_config(run: pathlib.Path) -> dict:
    """``{"network", "tower"}`` from ``run/config.json``: the network's size and its tower
    kind (an empty ``tower`` resolved to the size's own)."""
    run = pathlib.Path(run)
    config = read_config_json(run, game="holdem", error=AgentError, fields=_HOLDEM_FIELDS, title="hold'em")
    return network_settings(config, where=run / "config.json")


def network_settings(config: dict, *, where: Any = "the config") -> dict:
    """``{"network", "tower"}`` of a hold'em config (a run's config.json as a dict): the
    network's size and its tower kind (an empty ``tower`` resolved to the size's own);
    :class:`AgentError` naming ``where`` (the file it came from) when either is missing or bad."""
    missing = [k for k in _HOLDEM_FIELDS if k not in config]
    if missing:
        raise AgentError(f"{where} is not the config of a hold'em run: it has no {', '.join(missing)}")
    size, tower = config["network"], config["tower"]
    if not isinstance(size, str) or size not in net_lib.SIZES:
        raise AgentError(f"{where}: network must be one of {', '.join(net_lib.SIZES)}, got {size!r}")
    if not isinstance(tower, str) or tower not in ("",) + net_lib.TOWERS:
        raise AgentError(f"{where}: tower must be one of {', '.join(net_lib.TOWERS)} (or empty), got {tower!r}")
    return {"network": size, "tower": tower or net_lib.SIZES[size].tower}



# -- reading the checkpoint ----------------------------------------------------------------------


def _read_params(run: pathlib.Path, abstract: Any, where: str, settings: dict,
                 which: str) -> tuple[pathlib.Path, Any]:
    """The step folder the agent is read from (by ``which``) and the parameters in it, in the
    tree of ``abstract``."""
    def check_saved(saved, step_dir):
        if saved.get("network") in net_lib.SIZES and isinstance(saved.get("tower"), str):
            saved_net = (saved["network"], saved["tower"] or net_lib.SIZES[saved["network"]].tower)
            if saved_net != (settings["network"], settings["tower"]):
                raise AgentError(f"checkpoint {step_dir} was saved by a run of the {' '.join(saved_net)} "
                                 f"network, but config.json says {settings['network']} {settings['tower']}: "
                                 f"the folder's files do not belong together")

    return read_agent_params(run, abstract, trainer="python -m train.holdem", fits=where,
                             which=("best", "latest") if which == "best" else ("latest",), check_saved=check_saved)



# -- the policy ----------------------------------------------------------------------------------


def masked_log_probs(apply_fn: Callable[..., Any], params: Any, cards: jax.Array, actions: jax.Array,
                     legal: jax.Array) -> jax.Array:
    """float32 [B, 9]: the log of the network's softmax over the legal actions (``-inf``-like
    on illegal ones, whose probability is exactly 0), from ``cards int8 [B, 6, 4, 13]``,
    ``actions int8 [B, 24, 4, 9]`` and ``legal bool [B, 9]``: what PPO samples and trains."""
    logits, _ = apply_fn(params, cards, actions, legal)
    logits = jnp.where(legal, logits.astype(jnp.float32), net_lib.ILLEGAL_LOGIT)
    return jax.nn.log_softmax(logits, axis=-1)


def _mover_log_probs(env, apply_fn, params, state) -> jax.Array:
    """float32 [9]: :func:`masked_log_probs` for the player to move, on what that seat sees."""
    cards, actions = encode(env.observe(state, state.current_player))
    return masked_log_probs(apply_fn, params, cards[None], actions[None], state.legal_action_mask[None])[0]


def _probs(env, apply_fn, params, state, key) -> jax.Array:
    del key
    return jnp.exp(_mover_log_probs(env, apply_fn, params, state))


def _policy(env, apply_fn, params, state, key) -> jax.Array:
    return jax.random.categorical(key, _mover_log_probs(env, apply_fn, params, state)).astype(jnp.int32)


def network_probs(env, net) -> Callable[..., jax.Array]:
    """``probs(params, state, key) -> float32 [9]``: ``net``'s masked softmax for the player
    to move in ``state`` (one hand of ``env``), on ``encode(env.observe(state, mover))``; 0 on
    illegal actions; ``key`` unused."""
    return functools.partial(_probs, env, net.apply)


def network_policy(env, net) -> Callable[..., jax.Array]:
    """``policy(params, state, key) -> int32 []``: an action sampled from
    :func:`network_probs` (an arena policy)."""
    return functools.partial(_policy, env, net.apply)


@functools.lru_cache(maxsize=None)
def _build(size: str, tower: str):
    """``(env, net, policy, probs, jit(policy), jit(probs))``, one per network in a process
    (one compile)."""
    env = jaxgames.make(GAME)
    net = net_lib.make_network(size, tower=tower)
    policy, probs = network_policy(env, net), network_probs(env, net)
    return env, net, policy, probs, jax.jit(policy), jax.jit(probs)


__all__ = ["Agent", "AgentError", "WHICH", "load_agent", "make_agent", "masked_log_probs",
           "network_policy", "network_probs", "network_settings", "params_like", "read_config"]
