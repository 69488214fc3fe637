"""The trained agent of a ``python -m train.hex`` run folder, ready to play.

    from jaxgames.hex.agent import load_agent
    agent = load_agent("runs/hex/quick-seed0")          # or: env, policy, params = load_agent(...)
    action = agent.act(state)                           # int: the agent's move in ``state``

What it reads (through :mod:`jaxgames.checkpoints`, the format training writes):

- ``config.json``: ``board_size``, ``network`` (source or resnet; a resnet's
  ``resnet_blocks`` and ``resnet_channels``, the defaults where a config has none), ``search``
  (muzero, gumbel or source), ``simulations`` and ``eval_simulations`` (0: as ``simulations``); the agent
  searches with ``eval_simulations`` (what the run's evaluation against UCT used) unless
  ``simulations=`` is given; ``eval_symmetry`` (false where absent): the agent's network
  averaged over the position and its 180-degree rotation, as in the run's evaluation;
- the parameters: ``best/<step>/`` (the parameters at the best win rate against UCT, the
  latest round of equals; the pytree saved there is the parameters only), or, when ``best/``
  holds none (a run stopped before its first evaluation was saved), the newest
  ``checkpoints/<step>/`` (the whole training carry, of which only the network's parameters
  are read). The parameters are restored into the tree of
  ``jaxgames.hex.network.make(board_size, kind=network).init`` (``jax.eval_shape``), so a
  checkpoint that does not fit the network the config describes is refused, not misread.

The policy is ``jaxgames.search.mcts.mcts_policy`` on the run's network with the run's search
(no root noise; the most visited move): an arena policy ``policy(params, state, key) ->
int32 []``, so ``jaxgames.arena`` and ``jaxgames.hex.play`` take it as it is.

A shipped agent (``jaxgames.pretrained``) has no run folder: :func:`make_agent` builds the
same agent from a run's config (a dict) and parameters read elsewhere, and :func:`params_like`
gives the tree they are read into.

Every expected failure raises :class:`AgentError` (a ``ValueError``) naming the path and what
is wrong: no such folder, no ``config.json``, a config of another game or with bad values, no
checkpoint, a checkpoint that is unreadable (damaged files), of another format version, or that
does not fit the config's network. Library code: nothing here imports the training pipeline.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from typing import Any, Callable

import jax
import numpy as np

import jaxgames
from jaxgames.hex import network as hex_network
from jaxgames.hex.board import MAX_SIZE, MIN_SIZE
from jaxgames.player import RunAgent
from jaxgames.search import mcts, symmetry
from jaxgames.run_folder import AgentError, read_agent_params, read_config_json

NETWORKS = ("source", "resnet")
#: the fields of config.json the agent needs (a Hex run's config has them all)
_HEX_FIELDS = ("board_size", "network", "search", "simulations")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Agent(RunAgent):
    """A trained Hex agent: a :class:`jaxgames.player.Player` (the arena, ``jaxgames.hex.play``
    take it as one) with the run it comes from. Unpacks as ``env, policy, params = agent``.

    name:          how it is shown: the run, the update and the search
    policy:        arena policy ``policy(params, state, key) -> int32 []`` (MCTS on the network)
    params:        the network's parameters (a pytree of jax arrays)
    env:           the run's game, ``jaxgames.make("hex", board_size=n)`` (no swap rule)
    network:       ``jaxgames.hex.network.make(n, kind=...)`` (``apply``, ``raw`` ...)
    jitted_policy: ``jax.jit(policy)``, shared by every agent of the same settings in a process
    board_size, simulations, search, network_kind: the settings the policy plays with
    sizes:         a resnet's size arguments, sorted ``(name, value)`` pairs (the source's: none)
    symmetric:     the network averaged over the position and its 180-degree rotation (the
                   run's ``eval_symmetry``)
    run_dir:       the run folder; checkpoint: the step folder read; step: its update (all
                   three None for an agent not read from a run folder: a shipped one)
    """

    network: Any
    jitted_policy: Callable[..., Any]
    board_size: int
    simulations: int
    search: str
    network_kind: str
    symmetric: bool
    sizes: tuple = ()

    def compiled_policy(self) -> Callable[..., Any]:
        return self.jitted_policy

    def with_simulations(self, simulations: int) -> "Agent":
        """The same network and search with ``simulations`` per move (one compile per setting
        in a process, shared with every agent of the same settings)."""
        simulations = _check_simulations(simulations)
        _, _, policy, jitted = _build(self.board_size, self.network_kind, self.search, simulations,
                                      self.sizes, self.symmetric)
        name = self.name.replace(f"{self.simulations} {self.search} simulations",
                                 f"{simulations} {self.search} simulations")
        return dataclasses.replace(self, policy=policy, jitted_policy=jitted, simulations=simulations, name=name)


def load_agent(run_dir: str | pathlib.Path, *, simulations: int | None = None) -> Agent:
    """The agent of the run in ``run_dir`` (``runs/hex/<run>``), searching with
    ``simulations`` per move (None: the run's ``eval_simulations``, else its ``simulations``).
    Raises :class:`AgentError` (see the module docstring)."""
    run = pathlib.Path(run_dir)
    settings = read_config(run)
    if simulations is not None:
        settings["simulations"] = _check_simulations(simulations)
    step_dir, params = _read_params(run, _abstract(settings), _where(settings, run / "config.json"),
                                    settings["board_size"])
    name = f"agent {run.name} (update {int(step_dir.name)}, {_search_text(settings)})"
    return _agent(settings, params, name=name, run_dir=run, checkpoint=step_dir, step=int(step_dir.name))


def make_agent(config: dict, params: Any, *, name: str, simulations: int | None = None,
               where: Any = "the config") -> Agent:
    """The agent that plays ``params`` (the network's parameters, in the tree of
    :func:`params_like`) with the network and search a run's ``config`` (its config.json, a
    dict) describes: a shipped agent, which has no run folder. ``simulations`` as in
    :func:`load_agent`; ``where`` names the config in errors."""
    settings = config_settings(config, where)
    if simulations is not None:
        settings["simulations"] = _check_simulations(simulations)
    return _agent(settings, params, name=f"{name}, {_search_text(settings)}")


def params_like(config: dict, *, where: Any = "the config") -> Any:
    """The shapes and dtypes (``jax.ShapeDtypeStruct`` leaves) of the parameters of the
    network ``config`` (a run's config.json, a dict) describes: the tree a checkpoint or a
    shipped file is read into. :class:`AgentError` naming ``where`` when the config is bad."""
    return _abstract(config_settings(config, where))


def _agent(settings: dict, params: Any, *, name: str, **origin: Any) -> Agent:
    env, net, policy, jitted = _build(settings["board_size"], settings["network"], settings["search"],
                                      settings["simulations"], settings["sizes"], settings["symmetric"])
    return Agent(name=name, policy=policy, params=params, env=env, network=net, jitted_policy=jitted,
                 board_size=settings["board_size"], simulations=settings["simulations"],
                 search=settings["search"], network_kind=settings["network"],
                 symmetric=settings["symmetric"], sizes=settings["sizes"], **origin)


def _abstract(settings: dict) -> Any:
    net = hex_network.make(settings["board_size"], kind=settings["network"], **dict(settings["sizes"]))
    return jax.eval_shape(net.init, jax.random.key(0))


def _where(settings: dict, path: Any) -> str:
    sizes = dict(settings["sizes"])
    shape = f" ({sizes['blocks']} blocks, {sizes['channels']} channels)" if sizes else ""
    n = settings["board_size"]
    return f"the {n}x{n} {settings['network']} network{shape} of {path}"


def _search_text(settings: dict) -> str:
    average = ", network averaged over the half turn" if settings["symmetric"] else ""
    return f"{settings['simulations']} {settings['search']} simulations{average}"


def _check_simulations(simulations: Any) -> int:
    if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) or simulations < 1:
        raise ValueError(f"simulations must be an int >= 1 (or None for the run's), got {simulations!r}")
    return int(simulations)


# -- the run folder ------------------------------------------------------------------------------


def read_config(run: pathlib.Path) -> dict:
    """:func:`config_settings` of ``run/config.json``."""
    run = pathlib.Path(run)
    config = read_config_json(run, game="hex", error=AgentError, fields=_HEX_FIELDS, title="Hex")
    return config_settings(config, run / "config.json")


def config_settings(config: Any, path: Any = "the config") -> dict:
    """``{"board_size", "network", "search", "simulations", "sizes", "symmetric"}`` from a Hex
    run's config (a dict; ``path`` names it in errors), the simulations being those the agent
    plays with (``eval_simulations`` or ``simulations``), ``sizes`` the network's size
    arguments as sorted ``(name, value)`` pairs (``jaxgames.hex.network.size_options``),
    ``symmetric`` the run's ``eval_symmetry`` (false where a config has none)."""
    if not isinstance(config, dict):
        raise AgentError(f"{path} is not a JSON object: not the config of a Hex run")
    missing = [k for k in _HEX_FIELDS if k not in config]
    if missing:
        raise AgentError(f"{path} is not the config of a Hex run: it has no {', '.join(missing)}")
    n, kind, search = config["board_size"], config["network"], config["search"]
    sims, eval_sims = config["simulations"], config.get("eval_simulations", 0)
    if not _is_int(n) or not MIN_SIZE <= n <= MAX_SIZE:
        raise AgentError(f"{path}: board_size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {n!r}")
    if kind not in NETWORKS:
        raise AgentError(f"{path}: network must be one of {', '.join(NETWORKS)}, got {kind!r}")
    if search not in mcts.KINDS:
        raise AgentError(f"{path}: search must be one of {', '.join(mcts.KINDS)}, got {search!r}")
    for name, value, low in (("simulations", sims, 1), ("eval_simulations", eval_sims, 0)):
        if not _is_int(value) or value < low:
            raise AgentError(f"{path}: {name} must be an integer >= {low}, got {value!r}")
    try:
        sizes = hex_network.size_options(
            kind, resnet_blocks=config.get("resnet_blocks", hex_network.RESNET_BLOCKS),
            resnet_channels=config.get("resnet_channels", hex_network.RESNET_CHANNELS))
    except ValueError as e:
        raise AgentError(f"{path}: {e}") from None
    symmetric = config.get("eval_symmetry", False)
    if not isinstance(symmetric, bool):
        raise AgentError(f"{path}: eval_symmetry must be true or false, got {symmetric!r}")
    return {"board_size": n, "network": kind, "search": search, "simulations": eval_sims or sims,
            "sizes": tuple(sorted(sizes.items())), "symmetric": symmetric}


# -- reading the checkpoint ----------------------------------------------------------------------


def _read_params(run: pathlib.Path, abstract: Any, where: str, board_size: int) -> tuple[pathlib.Path, Any]:
    """The step folder the agent is read from (the newest of ``best/``, else of
    ``checkpoints/``) and the parameters in it, in the tree of ``abstract``."""
    def check_saved(saved, step_dir):
        saved_n = saved.get("board_size")
        if saved_n is not None and saved_n != board_size:
            raise AgentError(f"checkpoint {step_dir} was saved by a {saved_n}x{saved_n} run, but "
                             f"config.json says board_size {board_size}: the folder's files do "
                             f"not belong together")

    return read_agent_params(run, abstract, trainer="python -m train.hex", fits=where, which=("best", "latest"),
                             check_saved=check_saved)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# -- the policy ----------------------------------------------------------------------------------


def agent_apply(apply_fn: Callable[..., Any], board_size: int, symmetric: bool) -> Callable[..., Any]:
    """The network the agent searches with: ``apply_fn``, or with ``symmetric`` its average
    over the position and its 180-degree rotation (Hex's one symmetry without the swap rule;
    ``jaxgames.search.symmetry.averaged_apply``)."""
    if not symmetric:
        return apply_fn
    return symmetry.averaged_apply(apply_fn, [symmetry.reverse_cells(board_size * board_size)])


@functools.lru_cache(maxsize=None)
def _build(board_size: int, network: str, search: str, simulations: int,
           sizes: tuple[tuple[str, int], ...] = (), symmetric: bool = False):
    """``(env, net, policy, jax.jit(policy))``, one per settings in a process (one compile)."""
    env = jaxgames.make("hex", board_size=board_size)
    net = hex_network.make(board_size, kind=network, **dict(sizes))
    policy = mcts.mcts_policy(env, agent_apply(net.apply, board_size, symmetric),
                              num_simulations=simulations, kind=search)
    return env, net, policy, jax.jit(policy)


__all__ = ["Agent", "AgentError", "agent_apply", "config_settings", "load_agent", "make_agent",
           "params_like", "read_config"]
