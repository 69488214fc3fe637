"""A short timed burst of the n-tuple TD learner's update: what ``train.common.cpu_layout``
runs in a child process per CPU thread layout to pick the faster one.

``burst_timer(...)`` builds the learner (a fresh table, on huge pages as a run has it),
compiles a chunk of updates and runs it once, then returns ``burst(seconds) -> moves/s``:
chunks run back to back until ``seconds`` have passed, each ended on
``jax.block_until_ready``. The rate is nominal moves (every update moves every game once).

The timed program is the run's own (``ntuple_td.make_update`` through the driver's
``make_chunk``), so the layout is chosen on the work the run does, at its batch size.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from train.algos import ntuple_td as td

# moves per chunk: ~15-30 ms of work at ~1 us per move, so one burst is many chunks and the
# dispatch between them is a small part of it, at any batch size
MOVES_PER_CHUNK = 32_768

# TDConfig fields that are numbers inside the compiled program, not its shape: the speed does
# not depend on them, so they stay out of the probe's arguments (and out of the layout cache key)
_VALUE_ONLY = ("network", "learning_rate", "optimistic_init")

TARGET = "train.games.game2048_layout:burst_timer"


def probe_kwargs(cfg: td.TDConfig, variant: str = "2048") -> dict:
    """The JSON-able arguments of :func:`burst_timer` for a run of ``cfg`` (the fields that
    change the compiled update's shape or work: batch, λ trace, TC, the network)."""
    fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name not in _VALUE_ONLY}
    net = cfg.network
    return {"variant": variant, "patterns": [list(p) for p in net.patterns], "base": net.base, **fields}


def burst_timer(variant: str = "2048", patterns=None, base: int = 16, seed: int = 0,
                **td_fields) -> Callable[[float], float]:
    """Set up (compile and warm) the learner; return ``burst(seconds) -> moves per second``."""
    import jax
    import jax.numpy as jnp

    from jaxgames.game2048.board import BoardModel
    from jaxgames.game2048.ntuple import NTupleNetwork
    from train.common import make_chunk

    net = NTupleNetwork(base=base) if patterns is None else \
        NTupleNetwork(patterns=tuple(tuple(p) for p in patterns), base=base)
    cfg = td.TDConfig(network=net, **td_fields)
    model = BoardModel(variant)
    updates = max(1, MOVES_PER_CHUNK // cfg.num_games)
    chunk = make_chunk(td.make_update(cfg, model), updates)
    state = {"carry": td.init(cfg, model, jax.random.key(seed)), "start": 0}
    key = jax.random.key(seed + 1)

    def run_chunk():
        state["carry"], m = chunk(state["carry"], key, jnp.int32(state["start"]))
        jax.block_until_ready((state["carry"], m))
        state["start"] += updates

    run_chunk()   # compiles
    run_chunk()   # first touches of the table's pages, outside the timing

    def burst(seconds: float) -> float:
        moves, t0 = 0, time.perf_counter()
        while True:
            run_chunk()
            moves += updates * cfg.num_games
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                return moves / elapsed

    return burst


def select_layout(request: str, cfg: td.TDConfig, variant: str = "2048", flag: str = "--cpu-layout"):
    """Pick and apply the CPU thread layout for a run of ``cfg`` before JAX's backend starts
    (``train.common.cpu_layout.select`` with this module's burst as the probe); a bad
    ``JAXGAMES_CPU_LAYOUT`` is a :class:`~train.common.errors.UserError` (one line, exit 2)."""
    from train.common import cpu_layout
    from train.common.errors import UserError

    try:
        return cpu_layout.select(request, cpu_layout.Probe(TARGET, probe_kwargs(cfg, variant)), flag=flag)
    except ValueError as e:
        raise UserError(str(e)) from None
