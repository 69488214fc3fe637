"""The body of every ``python -m train.<game>``'s ``main``: join the run, parse the flags,
train, and print the summary's key figures in one line (process 0)."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Callable, Mapping, Sequence

from train.common.config import parse
from train.common.distributed import init_distributed, is_primary

__all__ = ["run_main"]


def run_main(presets: Mapping[str, Any], argv: Sequence[str] | None, *, prog: str, game: str,
             train: Callable[[Any], dict], shown: Sequence[str] | Callable[[dict], str],
             prepare: Callable[[Any], None] | None = None) -> dict:
    """``train(config)`` on the flags ``argv`` over ``presets``; its summary. ``shown``: the
    summary's keys printed as one JSON object (those it has), or a function writing the line;
    the run folder follows. ``prepare(config)``: what must happen before JAX starts a backend
    (2048's CPU layout). A run stopped early (``{}``) prints nothing."""
    init_distributed()  # first: the config's checks count every host's devices
    _, config = parse(presets, argv, prog=prog)
    if prepare is not None:
        prepare(config)
    summary = train(config)
    if is_primary() and summary:
        line = shown(summary) if callable(shown) else json.dumps({k: summary[k] for k in shown if k in summary})
        print(f"{line} -> {pathlib.Path(config.runs_dir) / game / config.run_name}")
    return summary
