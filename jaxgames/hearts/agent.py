"""The learned player of a ``python -m train.hearts`` run folder, ready to play.

    from jaxgames.hearts.agent import load_agent
    agent = load_agent("runs/hearts/quick-seed0")        # or: env, policy, params = load_agent(...)
    action = agent.act(state)                             # int: the agent's card (or pass) in ``state``
    load_agent(run, env=Hearts(variant="standard"))       # the same weights in any Hearts env
    load_agent(run, perfect=True)                         # the perfect-information trick search

The player is the run's learned value (:mod:`jaxgames.hearts.learned`) at the leaves of max^n
over the rest of the current trick, inside PIMC over ``num_worlds`` worlds
(:func:`jaxgames.hearts.learned.imperfect_policy`): honest. ``perfect=True`` gives
:func:`~jaxgames.hearts.learned.perfect_policy`, the trick search on the real cards (``honest``
False, as PIE). It plays the env it is given (default the paper variant, the moon on, one hand);
while cards are passed it passes by the bots' rule. :func:`load_agent` reads ``config.json``, a
combined run's ``selection.npz`` and the newest ``checkpoints/<step>/``; :func:`make_agent`
builds the agent from a config dict and a parameter tree (:func:`params_like`), as
``jaxgames.pretrained`` does; :meth:`Agent.playing` gives the same value in another env, or with
the other search. Every expected failure raises :class:`AgentError` (a ``ValueError``), one line
naming the path. Library code: nothing here imports the training pipeline.

What it reads, field by field, and what it refuses:
docs/hearts_training.md#playing-against-a-trained-agent.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import zipfile
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts import features as feat
from jaxgames.hearts import learned
from jaxgames.hearts.game import Hearts
from jaxgames.player import RunAgent
from jaxgames.run_folder import AgentError, one_line, read_agent_params, read_config_json

GAME = "hearts"
#: what ``which`` may name: the newest checkpoint (a Hearts run keeps no best/)
WHICH = ("latest",)
#: PIMC's worlds when neither ``num_worlds`` nor the config says (the source's)
DEFAULT_WORLDS = 20
#: the fields of config.json the agent needs (a Hearts run's config has them all)
_HEARTS_FIELDS = ("predictor", "feature_sizes", "hearts_feature_sizes", "max_active")
#: the largest AND-combination and cap training allows (train.hearts.Config.validate)
_MAX_SIZE, _MAX_ACTIVE = 4, 24
SELECTION = "selection.npz"
_SELECTION_KEYS = ("qs_selected", "hearts_selected")



@dataclasses.dataclass(frozen=True, kw_only=True)
class Agent(RunAgent):
    """A trained Hearts player: a :class:`jaxgames.player.Player` (``jaxgames.hearts.evaluate``,
    the arena and ``jaxgames.hearts.play`` take it as one) with the run it comes from. Unpacks
    as ``env, policy, params = agent``.

    name:        how it is shown: the run, the predictor, the update and how it plays
    policy:      arena policy ``policy(weights, state, key) -> int32 []``:
                 ``learned.imperfect_policy(spec, env, num_worlds)``, or
                 ``learned.perfect_policy(spec, env)`` with ``perfect``
    params:      the weights, a jax ``float32 [spec.num_features]``
    honest:      True (PIMC reads the seat's view only); False with ``perfect``
    env:         the Hearts env the policy was built for
    spec:        the :class:`jaxgames.hearts.learned.ValueSpec` (predictor, features, selection)
    perfect:     the perfect-information trick search rather than PIMC
    num_worlds:  PIMC's worlds a move (None with ``perfect``)
    which:       ``"latest"``; checkpoint: the step folder read; step: its update; run_dir: the run
                 (all four None for an agent not read from a run folder: a shipped one)
    """

    spec: learned.ValueSpec
    perfect: bool
    num_worlds: int | None
    which: str | None = None

    @property
    def predictor(self) -> str:
        return self.spec.predictor

    def playing(self, env: Hearts | None = None, *, num_worlds: int | None = None, perfect: bool = False,
                name: str | None = None) -> "Agent":
        """The same weights and value playing ``env`` (default: this agent's), inside PIMC over
        ``num_worlds`` worlds (default: this agent's, else 20) or with ``perfect`` the trick
        search on the real cards; named ``name`` (default: this agent's name)."""
        env = self.env if env is None else env
        _check_play(env, num_worlds, perfect)
        if not perfect and num_worlds is None:
            num_worlds = self.num_worlds or DEFAULT_WORLDS
        worlds, policy = _player(self.spec, env, num_worlds, perfect)
        return dataclasses.replace(self, name=self.name if name is None else name, policy=policy, env=env,
                                   honest=not perfect, perfect=perfect, num_worlds=worlds)

    def top_features(self, n: int = 10) -> list[tuple[int, float, str]]:
        """``[(index, weight, words)]``: the ``n`` features of largest weight (most points
        predicted), or with a negative ``n`` of smallest (:func:`learned.top_features`)."""
        return learned.top_features(self.params, self.spec, n)


def load_agent(run_dir: str | pathlib.Path, *, which: str = "latest", env: Hearts | None = None,
               num_worlds: int | None = None, perfect: bool = False) -> Agent:
    """The learned player of the run in ``run_dir`` (``runs/hearts/<run>``, or a stage of a
    combined run) with its newest checkpoint's weights, playing ``env`` (default
    :func:`default_env`: the paper variant, the moon on, one hand): inside PIMC over
    ``num_worlds`` worlds (default: the config's ``worlds``, else 20), or with ``perfect`` the
    trick search on the real cards. Raises :class:`AgentError` (see the module docstring) for
    a folder that cannot be used; ValueError for bad arguments."""
    if which not in WHICH:
        raise ValueError(f"which must be one of {', '.join(WHICH)} (a Hearts run keeps no best/), got {which!r}")
    _check_play(env, num_worlds, perfect)
    run = pathlib.Path(run_dir)
    settings = read_config(run)
    spec = value_spec(run, settings)
    step_dir, weights = _read_weights(run, spec, settings)
    step = int(step_dir.name)
    worlds = None if perfect else int(num_worlds if num_worlds is not None
                                      else settings.get("worlds", DEFAULT_WORLDS))
    how = "perfect information" if perfect else f"PIMC {worlds} worlds"
    name = f"agent {run.name} ({spec.predictor} predictor, update {step}, {how})"
    return make_agent(settings, _params_of(spec, weights), name=name, env=env, num_worlds=worlds,
                      perfect=perfect, which=which, run_dir=run, checkpoint=step_dir, step=step)


def make_agent(config: dict, params: Any, *, name: str, env: Hearts | None = None, num_worlds: int | None = None,
               perfect: bool = False, where: Any = "the config", **origin: Any) -> Agent:
    """The agent that plays ``params`` (a tree of :func:`params_like`'s: the weights and, for
    a combined value, its two selections) with the value ``config`` describes (a run's
    config.json as a dict; checked by :func:`config_settings`, ``where`` naming it), on
    ``env`` (default :func:`default_env`) inside PIMC over ``num_worlds`` worlds (default:
    the config's ``worlds``, else 20) or with ``perfect`` the trick search on the real cards.
    A selection that is not strictly increasing or out of range, or weights of another
    length: :class:`AgentError`, one line. ``origin``: the run folder fields of :class:`Agent`."""
    _check_play(env, num_worlds, perfect)
    env = default_env() if env is None else env
    settings = config_settings(config, where=where)
    spec = _spec_of(settings, params, where)
    weights = jnp.asarray(params["weights"], jnp.float32)
    if weights.shape != (spec.num_features,):
        raise AgentError(f"the weights of {where} must be float32 [{spec.num_features}] (the {spec.predictor} "
                         f"value's features), got {list(weights.shape)}")
    worlds, policy = _player(spec, env, num_worlds if num_worlds is not None else settings.get("worlds"),
                             perfect)
    return Agent(name=name, policy=policy, params=weights, honest=not perfect, env=env, spec=spec,
                 perfect=perfect, num_worlds=worlds, **origin)


def params_like(config: dict, *, where: Any = "the config") -> dict:
    """The shapes and dtypes (``jax.ShapeDtypeStruct`` leaves) of the parameters of the value
    ``config`` describes: ``{"weights": float32 [F]}``, and for a combined value
    ``"qs_selected": int32 [top_qs]``, ``"hearts_selected": int32 [top_hearts]`` (each at most
    the number of its combinations, as training selects), F their sum; from the config alone."""
    settings = config_settings(config, where=where)
    qs, hearts = _feature_specs(settings)
    if settings["predictor"] != "combined":
        size = (qs if settings["predictor"] == "qs" else hearts).num_features
        return {"weights": jax.ShapeDtypeStruct((size,), jnp.float32)}
    counts = []
    for key, spec in (("top_qs", qs), ("top_hearts", hearts)):
        top = config.get(key)
        if not _is_int(top) or top < 0:
            raise AgentError(f"{where}: a combined value needs {key}, a count >= 0, got {top!r}")
        counts.append(min(top, spec.num_features))
    return {"weights": jax.ShapeDtypeStruct((sum(counts),), jnp.float32),
            "qs_selected": jax.ShapeDtypeStruct((counts[0],), jnp.int32),
            "hearts_selected": jax.ShapeDtypeStruct((counts[1],), jnp.int32)}


def _check_play(env: Any, num_worlds: Any, perfect: bool) -> None:
    """ValueError for an env that is not a Hearts env, or worlds that are not a count (or are
    given to the perfect-information player)."""
    if env is not None and not isinstance(env, Hearts):
        raise ValueError(f"env must be a jaxgames.hearts Hearts env, got {env!r}")
    if num_worlds is not None:
        if perfect:
            raise ValueError("num_worlds is for the PIMC player; perfect=True reads the real cards")
        if isinstance(num_worlds, (bool, np.bool_)) or not isinstance(num_worlds, (int, np.integer)) \
                or num_worlds < 1:
            raise ValueError(f"num_worlds must be an integer >= 1, got {num_worlds!r}")


def _player(spec: learned.ValueSpec, env: Hearts, num_worlds: int | None, perfect: bool):
    """``(worlds, policy)``: PIMC's worlds (None with ``perfect``) and the policy (cached per
    spec, env and worlds: one compile)."""
    if perfect:
        return None, learned.perfect_policy(spec, env)
    worlds = int(DEFAULT_WORLDS if num_worlds is None else num_worlds)
    return worlds, learned.imperfect_policy(spec, env, worlds)


def _params_of(spec: learned.ValueSpec, weights: Any) -> dict:
    """The parameter tree of :func:`params_like` for ``spec`` and its ``weights``."""
    if spec.predictor != "combined":
        return {"weights": weights}
    return {"weights": weights, "qs_selected": np.asarray(spec.qs_selected, np.int32),
            "hearts_selected": np.asarray(spec.hearts_selected, np.int32)}


def _spec_of(settings: dict, params: Any, where: Any) -> learned.ValueSpec:
    """The :class:`~jaxgames.hearts.learned.ValueSpec` of ``settings`` with the selections in
    ``params`` (combined), each refused in one line unless strictly increasing and in range."""
    qs, hearts = _feature_specs(settings)
    if settings["predictor"] != "combined":
        return learned.ValueSpec(settings["predictor"], qs, hearts)
    selected = []
    for key, spec in (("qs_selected", qs), ("hearts_selected", hearts)):
        sel = np.asarray(params[key])
        ok = sel.ndim == 1 and np.issubdtype(sel.dtype, np.integer) and bool(np.all(np.diff(sel) > 0)) \
            and (sel.size == 0 or 0 <= sel[0] and sel[-1] < spec.num_features)
        if not ok:
            raise AgentError(f"{key} must be strictly increasing feature indices in [0, {spec.num_features}) "
                             f"(the combinations {where} describes): the parameters are damaged or of another value")
        selected.append(tuple(int(i) for i in sel))
    try:
        return learned.ValueSpec("combined", qs, hearts, *selected)
    except ValueError as e:   # no feature selected at all
        raise AgentError(f"the parameters of the value {where} describes: {one_line(e)}") from None


@functools.lru_cache(maxsize=None)
def default_env() -> Hearts:
    """The env an agent plays when none is given: ``Hearts(variant="paper")`` (no passing, the
    moon on, one hand; the source's imperfect-information test). One object per process, so
    the agents built on it share their compiled policy."""
    return Hearts(variant="paper")


# -- the run folder ------------------------------------------------------------------------------


def read_config(run: str | pathlib.Path) -> dict:
    """:func:`config_settings` of ``run/config.json``."""
    run = pathlib.Path(run)
    config = read_config_json(run, game=GAME, error=AgentError, fields=_HEARTS_FIELDS, title="Hearts")
    return config_settings(config, where=run / "config.json")


def config_settings(config: dict, *, where: Any = "the config") -> dict:
    """``{"predictor", "feature_sizes", "hearts_feature_sizes", "max_active", "rank_atoms"}``
    (sizes as tuples) and ``"worlds"`` where the config has it, from a Hearts run's config (its
    config.json as a dict, or these settings again), checked: :class:`AgentError` naming
    ``where`` when a field is missing or bad, or the config is of another game."""
    if not isinstance(config, dict):
        raise AgentError(f"{where} is not a JSON object: not the config of a Hearts run")
    other = config.get("game")
    if other is not None and other != GAME:
        raise AgentError(f"{where} is the config of a {other} run, not a Hearts run")
    missing = [k for k in _HEARTS_FIELDS if k not in config]
    if missing:
        raise AgentError(f"{where} is not the config of a Hearts run: it has no {', '.join(missing)}")
    predictor = config["predictor"]
    if predictor not in learned.PREDICTORS:
        raise AgentError(f"{where}: predictor must be one of {', '.join(learned.PREDICTORS)}, got {predictor!r}")
    out = {"predictor": predictor}
    for name in ("feature_sizes", "hearts_feature_sizes"):
        sizes = config[name]
        if not isinstance(sizes, (list, tuple)) or not sizes \
                or not all(_is_int(s) and 1 <= s <= _MAX_SIZE for s in sizes):
            raise AgentError(f"{where}: {name} must be a list of sizes from 1 to {_MAX_SIZE}, got {sizes!r}")
        out[name] = tuple(int(s) for s in sizes)
    active = config["max_active"]
    if not _is_int(active) or not 1 <= active <= _MAX_ACTIVE:
        raise AgentError(f"{where}: max_active must be an integer from 1 to {_MAX_ACTIVE}, got {active!r}")
    out["max_active"] = int(active)
    ranks = config.get("rank_atoms", False)       # runs from before the ranked atoms have none
    if not isinstance(ranks, bool):
        raise AgentError(f"{where}: rank_atoms must be true or false, got {ranks!r}")
    out["rank_atoms"] = ranks
    if "worlds" in config:
        worlds = config["worlds"]
        if not _is_int(worlds) or worlds < 1:
            raise AgentError(f"{where}: worlds must be an integer >= 1, got {worlds!r}")
        out["worlds"] = int(worlds)
    return out


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def value_spec(run: str | pathlib.Path, settings: dict) -> learned.ValueSpec:
    """The run's :class:`~jaxgames.hearts.learned.ValueSpec` from :func:`read_config`'s
    ``settings``; for a combined run with the features of ``run/selection.npz``."""
    run = pathlib.Path(run)
    qs, hearts = _feature_specs(settings)
    if settings["predictor"] != "combined":
        return learned.ValueSpec(settings["predictor"], qs, hearts)
    qs_selected, hearts_selected = _read_selection(run / SELECTION)
    try:
        return learned.ValueSpec("combined", qs, hearts, qs_selected, hearts_selected)
    except ValueError as e:
        raise AgentError(f"{run / SELECTION} does not fit config.json's features ({one_line(e)}): "
                         f"the folder's files do not belong together") from None


def _feature_specs(settings: dict) -> tuple[feat.FeatureSpec, feat.FeatureSpec]:
    """The Q♠ and the hearts combinations :func:`config_settings`' ``settings`` describe."""
    qs, hearts = feat.atom_counts(settings.get("rank_atoms", False))
    return (feat.FeatureSpec(qs, settings["feature_sizes"], settings["max_active"]),
            feat.FeatureSpec(hearts, settings["hearts_feature_sizes"], settings["max_active"]))


def _read_selection(path: pathlib.Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(qs_selected, hearts_selected)`` of a combined run's selection.npz."""
    if not path.is_file():
        raise AgentError(f"{path} is missing: a combined run writes the features it selected there "
                         f"(the run stopped before its stages ended?); give another run")
    try:
        with np.load(path, allow_pickle=False) as saved:
            missing = [k for k in _SELECTION_KEYS if k not in saved.files]
            if missing:
                raise AgentError(f"{path} is not a combined run's selection: it has no {', '.join(missing)}")
            arrays = [saved[k] for k in _SELECTION_KEYS]
    except AgentError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise AgentError(f"{path} is unreadable ({one_line(e)}): its file is damaged") from None
    out = []
    for key, a in zip(_SELECTION_KEYS, arrays):
        if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
            raise AgentError(f"{path}: {key} must be a 1-D integer array, got {a.dtype} {a.shape}")
        out.append(tuple(int(i) for i in a))
    return out[0], out[1]


# -- reading the checkpoint ----------------------------------------------------------------------


def _read_weights(run: pathlib.Path, spec: learned.ValueSpec, settings: dict) -> tuple[pathlib.Path, jax.Array]:
    """The newest step folder and the weights in it, ``float32 [spec.num_features]``."""
    def check_saved(saved, step_dir):
        theirs = {k: tuple(saved[k]) if isinstance(saved[k], list) else saved[k]
                  for k in (*_HEARTS_FIELDS, "rank_atoms") if k in saved}
        ours = {k: settings[k] for k in theirs}
        if theirs != ours:
            diff = ", ".join(f"{k} {theirs[k]!r}" for k in theirs if theirs[k] != ours[k])
            raise AgentError(f"checkpoint {step_dir} was saved by a run with {diff}, but config.json "
                             f"says otherwise: the folder's files do not belong together")

    like = jax.ShapeDtypeStruct((spec.num_features,), jnp.float32)
    fits = (f"the {spec.num_features:,} weights of the {spec.predictor} value that {run / 'config.json'}"
            + (f" and {SELECTION}" if spec.predictor == "combined" else "") + " describe")
    return read_agent_params(run, like, trainer="python -m train.hearts", fits=fits, check_saved=check_saved)


__all__ = ["Agent", "AgentError", "DEFAULT_WORLDS", "WHICH", "config_settings", "default_env", "load_agent",
           "make_agent", "params_like", "read_config", "value_spec"]
