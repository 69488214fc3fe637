"""Frozen Config dataclasses and the CLI generated from them (tyro), with presets.

    python -m train.ten_half --preset full --episodes 1000000 --run-name big

``--preset`` picks the starting values; every other flag overrides one field. Unknown flags
and invalid values stop the program with a clear message before anything is compiled.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from typing import ClassVar, Sequence, TypeVar

import tyro

C = TypeVar("C", bound="RunConfig")

# jax.random.key keeps 32 bits of the seed without x64 (key(2**32) == key(0)), and overflows
# past int64: the seeds that give distinct runs are 0 .. 2**32 - 1.
SEED_MAX = 2**32 - 1


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Fields every pipeline shares. Subclass it (frozen) and add the game's fields."""

    RUN_ONLY_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"resume", "progress", "runs_dir", "run_name", "keep_checkpoints"})
    """Fields that say how a run is carried out, never what it computes: ``--resume`` lets them
    differ from the saved run. A subclass extends it with its own (e.g. how often it saves a
    checkpoint): ``RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"checkpoint_every"}``."""

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

    def validate(self) -> None:
        """Raise ValueError naming the bad field. Subclasses extend this (call it first)."""
        for name, value in _leaves(self):
            values = value if isinstance(value, (tuple, list)) else (value,)
            if any(isinstance(v, float) and not math.isfinite(v) for v in values):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0 <= self.seed <= SEED_MAX:
            raise ValueError(f"seed must be in 0..{SEED_MAX}, got {self.seed}")
        if self.keep_checkpoints < 1:
            raise ValueError("keep_checkpoints must be >= 1")
        if not self.runs_dir.strip():
            raise ValueError("runs_dir must not be empty (use . for the current folder)")
        if ("/" in self.run_name or "\\" in self.run_name or self.run_name in (".", "..")
                or self.run_name != self.run_name.strip() or "\0" in self.run_name):
            raise ValueError(f"run_name must be a plain folder name, got {self.run_name!r}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def _leaves(config) -> list[tuple[str, object]]:
    """(name, value) of every field, those of nested configs (a learner's) included."""
    out = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        out += _leaves(value) if dataclasses.is_dataclass(value) else [(f.name, value)]
    return out


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
    config = tyro.cli(type(default), default=default, args=args, prog=prog or None,
                      description=f"{type(default).__doc__ or ''}\nPresets: {', '.join(presets)} "
                                  f"(--preset NAME, default quick).")
    if not config.run_name:
        config = dataclasses.replace(config, run_name=f"{preset}-seed{config.seed}")
    try:
        config.validate()
    except ValueError as e:
        _fail(prog, f"invalid configuration: {e}")
    return preset, config


def _fail(prog: str, message: str) -> None:
    print(f"{prog or 'error'}: error: {message}", file=sys.stderr)
    raise SystemExit(2)
