"""Frozen Config dataclasses and the CLI generated from them (tyro), with presets.

    python -m train.ten_half --preset full --episodes 1000000 --run-name big

``--preset`` picks the starting values; every other flag overrides one field. Unknown flags
and invalid values stop the program with one line and exit status 2 before anything is
compiled or written: an unknown flag is named with the nearest known one (``unknown flag
--simulationz (did you mean --simulations?)``), a malformed value with the type it needs.

Budgets have upper bounds, checked by ``Config.validate()`` before the run folder exists:

- every integer field is at most :data:`INT32_MAX` (2**31 - 1): counts and sizes reach the
  run's arrays, whose counters (updates, episodes, games) and shapes are int32. A subclass
  names the fields that may be larger in ``WIDE_INT_FIELDS`` and bounds them itself
  (2048's ``train_moves``: its updates, ``train_moves / num_games``, are the int32 count);
- what a pipeline holds at once (its carry: tables, buffers, the league's pool, plus the
  largest of its passing working sets: a batch of searches, an evaluation's games) is
  estimated from the configuration and refused past :data:`MEMORY_CAP` (8 GiB) by
  :func:`check_memory`. The cap is a constant, the same on every machine and every host of
  a multi-host run (each host validates alone and all must agree); raise it here for a
  device with more memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import io
import json
import math
import sys
import typing
from typing import Annotated, ClassVar, Mapping, Sequence, TypeVar

import tyro

from jaxgames.cli_args import SEED_MAX

C = TypeVar("C", bound="RunConfig")


#: the largest value of an integer field (the run's counters and array sizes are int32)
INT32_MAX = 2**31 - 1

#: bytes a run may plan to hold at once (see the module docstring and :func:`check_memory`)
MEMORY_CAP = 8 * 2**30


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Fields every pipeline shares. Subclass it (frozen) and add the game's fields."""

    RUN_ONLY_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"resume", "progress", "runs_dir", "run_name", "keep_checkpoints"})
    """Fields that say how a run is carried out, never what it computes: ``--resume`` lets them
    differ from the saved run. A subclass extends it with its own (e.g. how often it saves a
    checkpoint): ``RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"checkpoint_every"}``."""

    EXTENDABLE_FIELDS: ClassVar[frozenset[str]] = frozenset()
    """Integer fields ``--resume`` may raise, never lower: a run's length, in a pipeline where
    nothing computed so far depends on it (hold'em's and Hearts' ``rounds``: constant step sizes; not
    Hex's, whose rate decays over the rounds). A finished run resumed with a larger value trains
    on from its last checkpoint and ends as a run started with that value would."""

    seed: int = 0
    """PRNG seed: the same seed gives the same run, resumed or not."""
    run_name: str = ""
    """Run directory name under runs/<game>/ (default: <preset>-seed<seed>)."""
    runs_dir: str = "runs"
    """Root folder of all runs."""
    resume: bool = False
    """Continue the run in runs/<game>/<run-name>/ from its last checkpoint."""
    keep_checkpoints: int = 3
    """How many of the latest checkpoints to keep."""
    progress: bool = True
    """Show a progress bar."""

    WIDE_INT_FIELDS: ClassVar[frozenset[str]] = frozenset({"seed"})
    """Integer fields exempt from the int32 bound; the subclass bounds them itself."""

    def validate(self) -> None:
        """Raise ValueError naming the bad field. Subclasses extend this (call it first)."""
        for name, value in _leaves(self):
            values = value if isinstance(value, (tuple, list)) else (value,)
            if any(isinstance(v, float) and not math.isfinite(v) for v in values):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0 <= self.seed <= SEED_MAX:
            raise ValueError(f"seed must be in 0..{SEED_MAX}, got {self.seed}")
        for name, value in _leaves(self):
            if name in self.WIDE_INT_FIELDS:
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
            if any(v > INT32_MAX for v in ints):
                raise ValueError(f"{name} must be at most {INT32_MAX:,} (2**31 - 1): the run's counters "
                                 f"and array sizes are int32, got {value!r}")
            if any(v < -INT32_MAX - 1 for v in ints):
                raise ValueError(f"{name} must be at least {-INT32_MAX - 1:,} (-2**31): the run's "
                                 f"numbers are int32, got {value!r}")
        if self.keep_checkpoints < 1:
            raise ValueError("keep_checkpoints must be >= 1")
        if not self.runs_dir.strip():
            raise ValueError("runs_dir must not be empty (use . for the current folder)")
        if ("/" in self.run_name or "\\" in self.run_name or self.run_name in (".", "..")
                or self.run_name != self.run_name.strip() or "\0" in self.run_name):
            raise ValueError(f"run_name must be a plain folder name, got {self.run_name!r}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

    def build_key(self) -> "RunConfig":
        """This config with the fields that build nothing (``RUN_ONLY_FIELDS``: how the run is
        carried out; ``EXTENDABLE_FIELDS``: its length) at their defaults: the key a pipeline
        caches what it compiles under, so a resumed run, or one carried on to more rounds,
        reuses the programs of the run before it in the same process."""
        defaults = type(self)()
        return dataclasses.replace(self, **{f: getattr(defaults, f)
                                            for f in self.RUN_ONLY_FIELDS | self.EXTENDABLE_FIELDS})


def _leaves(config) -> list[tuple[str, object]]:
    """(name, value) of every field, those of nested configs (a learner's) included."""
    out = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        out += _leaves(value) if dataclasses.is_dataclass(value) else [(f.name, value)]
    return out


def check_int32(what: str, value: int, why: str) -> None:
    """Raise ValueError unless ``value`` (a count derived from several fields, named by
    ``what`` with the fields) fits the int32 that holds it (``why``: which one)."""
    if value > INT32_MAX:
        raise ValueError(f"{what} = {value:,} is past {INT32_MAX:,} (2**31 - 1): {why}")


def format_bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def memory_estimate(held: Mapping[str, int], passing: Mapping[str, int] = {}) -> tuple[int, str]:
    """``(bytes, the largest part's name)``: what a run holds all along (``held``: its carry's
    tables, buffers, pool) plus the largest of what it holds for a while (``passing``: an
    update's searches, an evaluation's games), each part named by the fields that size it."""
    parts = dict(held)
    if passing:
        name = max(passing, key=lambda k: passing[k])
        parts[name] = passing[name]
    total = sum(int(v) for v in parts.values())
    return total, max(parts, key=lambda k: parts[k]) if parts else ""


def check_memory(held: Mapping[str, int], passing: Mapping[str, int] = {}, *,
                 cap: int | None = None) -> int:
    """Raise ValueError when :func:`memory_estimate` passes ``cap`` (:data:`MEMORY_CAP`);
    the message names the largest part, the fields to lower. Returns the estimate."""
    cap = MEMORY_CAP if cap is None else cap
    total, largest = memory_estimate(held, passing)
    if total > cap:
        part = dict(held, **passing)[largest]
        raise ValueError(
            f"the run would hold about {format_bytes(total)} at once, past the {format_bytes(cap)} "
            f"memory cap (MEMORY_CAP in train/common/config.py); its largest part is {largest}, "
            f"{format_bytes(part)}")
    return total


def parse(presets: dict[str, C], argv: Sequence[str] | None = None, *, prog: str = "") -> tuple[str, C]:
    """Parse ``--preset NAME`` and field overrides; returns ``(preset_name, config)``.

    Exits with status 2 and a one-line message on a bad preset, flag or value.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    preset = "quick"
    if "--preset" in args:
        i = args.index("--preset")
        if i + 1 >= len(args):
            _fail(prog, f"--preset needs a value: {' | '.join(presets)}")
        preset = args[i + 1]
        del args[i:i + 2]
    else:
        for i, a in enumerate(args):
            if a.startswith("--preset="):
                preset = a.split("=", 1)[1]
                del args[i]
                break
    if preset not in presets:
        _fail(prog, f"unknown preset {preset!r}; choose one of: {', '.join(presets)}")
    default = presets[preset]
    problem = check_args(type(default), args)
    if problem:
        _fail(prog, problem)
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            config = tyro.cli(type(default), default=default, args=args, prog=prog or None,
                              description=f"{type(default).__doc__ or ''}\nPresets: {', '.join(presets)} "
                                          f"(--preset NAME, default quick).")
    except SystemExit as e:
        if e.code in (0, None):   # --help
            sys.stderr.write(captured.getvalue())
            raise
        _fail(prog, _tyro_line(captured.getvalue()))
    sys.stderr.write(captured.getvalue())
    if not config.run_name:
        config = dataclasses.replace(config, run_name=f"{preset}-seed{config.seed}")
    try:
        config.validate()
    except ValueError as e:
        _fail(prog, f"invalid configuration: {e}")
    return preset, config


# -- the command line checked before tyro sees it ---------------------------------------------


def flags(config_type: type) -> dict[str, object]:
    """``{flag: value type}`` of every flag tyro makes of ``config_type``'s fields, those of
    nested configs included (without a prefix when the field is annotated
    ``tyro.conf.OmitArgPrefixes``, else ``--field.``): both spellings (``--run-name``,
    ``--run_name``), ``--no-<flag>`` for booleans, and ``--preset`` and ``--help``."""
    out: dict[str, object] = {"--preset": str, "--help": "help", "-h": "help"}

    def walk(cls: type, prefix: str) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            hint, extras = hints[f.name], ()
            if typing.get_origin(hint) is Annotated:
                hint, *extras = typing.get_args(hint)
            if dataclasses.is_dataclass(hint):
                omit = any(e is tyro.conf.OmitArgPrefixes for e in extras)
                walk(hint, prefix if omit else f"{prefix}{f.name}.")
                continue
            for name in {f.name.replace("_", "-"), f.name}:
                out[f"--{prefix}{name}"] = hint
                if hint is bool:
                    out[f"--{prefix}no-{name}"] = bool
                    out[f"--{prefix}no_{name}"] = bool

    walk(config_type, "")
    return out


def check_args(config_type: type, args: Sequence[str]) -> str | None:
    """What is wrong with ``args`` for ``config_type`` (an unknown flag with the nearest known
    one, a missing or malformed value, a stray word), or None; ``--help`` anywhere: None."""
    if any(a in ("-h", "--help") for a in args):
        return None
    try:
        known = flags(config_type)
    except (NameError, TypeError):   # annotations that do not resolve: tyro alone checks
        return None
    shown = sorted(k for k in known if "_" not in k and k != "-h")   # one spelling each
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("-") or token == "-" or _is_number(token):
            return f"unexpected argument {token!r} (every value follows its --flag; see --help)"
        name, eq, inline = token.partition("=")
        if name not in known:
            near = difflib.get_close_matches(name, shown, n=1, cutoff=0.6)
            return f"unknown flag {name}" + (f" (did you mean {near[0]}?)" if near else " (see --help)")
        kind = known[name]
        i += 1
        if kind is bool:
            if eq:
                return f"{name} takes no value (use {name} alone)"
            continue
        if typing.get_origin(kind) is tuple:
            item = typing.get_args(kind)[0] if typing.get_args(kind) else str
            values = [inline] if eq else []
            while not eq and i < len(args) and (not args[i].startswith("-") or _is_number(args[i])):
                values.append(args[i])
                i += 1
        else:
            item = kind
            if eq:
                values = [inline]
            elif i < len(args) and (not args[i].startswith("--") or _is_number(args[i])):
                values = [args[i]]
                i += 1
            else:
                return f"{name} needs a value"
        for v in values:
            problem = _value_problem(name, item, v)
            if problem:
                return problem
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _value_problem(flag: str, kind: object, value: str) -> str | None:
    try:
        if kind is int:
            int(value)
        elif kind is float:
            float(value)
    except ValueError:
        return f"{flag} needs {'an integer' if kind is int else 'a number'}, got {value!r}"
    return None


def _tyro_line(text: str) -> str:
    """tyro's boxed error as one line (the first line of the box's body)."""
    lines = [ln.strip(" │╭╮╰╯─\t") for ln in text.splitlines()]
    body = [ln for ln in lines[1:] if ln]
    return body[0] if body else "bad command line (see --help)"


def _fail(prog: str, message: str) -> None:
    print(f"{prog or 'error'}: error: {message}", file=sys.stderr)
    raise SystemExit(2)
