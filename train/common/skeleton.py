"""The one run skeleton every pipeline shares: the run folder, the checkpoints, the round loop,
``--resume``, the final evaluation, plots, summary and report. A game's run module
(``train/games/<game>.py``) gives only what is its own, as a :class:`Pipeline`: its learner,
its round evaluation and row, its league hook, its final evaluation and summary fields, its
report and files. :func:`run_pipeline` runs it: each round trains a chunk
(:func:`train.common.driver.run`), evaluates it (``evaluate(Chunk) -> Round``), runs the league
hook if any, logs the row and checkpoints; at the end ``final(End) -> Final`` evaluates and
process 0 alone writes the files, ``summary.json`` and ``report.md``. A run killed in any phase
continues with ``--resume`` to the result of an unbroken one. Keys (:class:`Keys`) are named:
``keys.round(step)``, ``keys.final``, ``keys.lbr`` ...

    def train(config, *, stop_after_chunks=None):
        return run_pipeline(Pipeline(game="hex", keys=Keys.of(config.seed), init=..., update=...,
                                     num_updates=..., chunk_size=..., evaluate=..., final=...),
                            config, stop_after_chunks=stop_after_chunks)

Each step of a round, the end of a run, resuming and multi-host runs: docs/training.md (its
Skeleton entry).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Mapping, Sequence

import jax
import jax.numpy as jnp

from train.algos import league as league_lib
from train.common.distributed import init_distributed, to_host
from train.common.driver import Checkpointing, Display, Schedule, Update, run
from train.common.rundir import RunDir

__all__ = ["Chunk", "End", "Final", "Keys", "Pipeline", "Round", "league_hook", "run_pipeline"]

# The end of a run's keys count down from the top of the int32 steps (no round's key, its
# step, is one of them). Where each name sits is what the pipelines used before these names,
# so their figures reproduce.
_TOP = 2**31


class _EndKey:
    """``keys.<name>``: the end key ``keys.end(i)``."""

    def __init__(self, i: int, doc: str):
        self.i, self.__doc__ = i, doc

    def __get__(self, keys, owner=None):
        return self if keys is None else keys.end(self.i)


@dataclasses.dataclass(frozen=True)
class Keys:
    """A run's keys, all from its seed: ``init`` (the learner's first carry), ``train`` (the
    driver's: update ``i`` draws ``fold_in(train, i)``) and ``eval``, from which every
    evaluation key is named below."""

    init: jax.Array
    train: jax.Array
    eval: jax.Array

    @classmethod
    def of(cls, seed: int, *, train_is_seed: bool = False) -> "Keys":
        """``init, train, eval = split(key(seed), 3)``; or, with ``train_is_seed``, the seed's
        key trains and ``init, eval`` are split from a stream beside it (ten-and-a-half's and
        Hearts' published runs)."""
        key = jax.random.key(seed)
        if train_is_seed:
            init, evaluation = jax.random.split(jax.random.fold_in(key, _TOP - 1))
            return cls(init=init, train=key, eval=evaluation)
        init, train, evaluation = jax.random.split(key, 3)
        return cls(init=init, train=train, eval=evaluation)

    def round(self, step: int) -> jax.Array:
        """The evaluation of the round that ends at update ``step`` (and its league games,
        which fold in their table row)."""
        return jax.random.fold_in(self.eval, step)

    def end(self, i: int) -> jax.Array:
        """The ``i``-th key of the end of the run (1 .. 2**31 - 1): one per evaluation of the
        final model (2048 takes one per search depth); the names below are some of them."""
        if not 1 <= i < _TOP:
            raise ValueError(f"end keys are numbered 1 .. {_TOP - 1}, got {i}")
        return jax.random.fold_in(self.eval, _TOP - i)

    # the end keys by name, each at the slot these evaluations had before the names
    final = _EndKey(2, "The final evaluation (the best model's, where kept, over the same games).")
    sgf = _EndKey(1, "The recorded games of the end of a run.")
    lbr = _EndKey(3, "The final local best response (the reference bots' too, over the same deals).")
    profile = _EndKey(4, "The final model's play profile.")
    baselines = _EndKey(100, "The baselines measured at the end of the run.")
    lbr_curve = _EndKey(200, "Local best response every few rounds: the same deals each time, so the "
                             "curve's changes are the models', not the deals'.")
    # Hearts' published runs: fold_in(eval, 2**30) and 2**30 + 1
    experts = _EndKey(2**30, "The final evaluation against the fixed experts (Hearts': PIE, the rule bot, "
                             "random, perfect information).")
    imperfect = _EndKey(2**30 - 1, "The final evaluation under imperfect information (Hearts': the learned "
                                   "player inside PIMC).")


@dataclasses.dataclass(frozen=True)
class Chunk:
    """What a round's evaluation is given."""

    step: int                  # updates done (the round ends here)
    carry: Any                 # the learner's carry after the chunk
    metrics: Any               # the chunk's metrics as NumPy arrays [chunk, ...]
    seconds: float             # the chunk's compute time
    keys: Keys
    last_row: dict | None      # the last row logged before this chunk (None: the run's first)


@dataclasses.dataclass(frozen=True)
class Round:
    """What a round's evaluation gives."""

    row: Mapping[str, Any]                 # logged at the round's step (with the league's info)
    shown: Mapping[str, float]             # the progress bar's numbers; ``best_metric`` among them
    results: Any = None                    # for the league hook (the round's match results)
    earlier: Sequence[tuple[int, Mapping[str, Any]]] = ()   # rows of earlier updates of the chunk


@dataclasses.dataclass(frozen=True)
class End:
    """What the final evaluation is given."""

    carry: Any                 # the last carry
    step: int                  # updates done (the run's)
    rows: list[dict]           # every row of the run, as metrics.jsonl holds them
    keys: Keys
    best_step: int | None      # the step best/ holds (None: nothing kept)
    best_params: Any = None    # best/'s parameters, when ``restore_best`` and not the last step


@dataclasses.dataclass(frozen=True)
class Final:
    """What the final evaluation gives; the skeleton adds ``seconds`` to ``summary``."""

    summary: dict
    report: Callable[[dict], str]                          # summary -> report.md
    files: Callable[[RunDir, dict], None] | None = None    # (run folder, summary): plots ...


League = Callable[[int, Any, Round, Keys], tuple[Any, dict]]


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """What is a game's own in a run (everything else is the skeleton's)."""

    game: str                              # runs/<game>/
    keys: Keys
    init: Callable[[jax.Array], Any]       # keys.init -> the first carry
    update: Update                         # pure, jittable: (carry, key) -> (carry, metrics)
    num_updates: int
    chunk_size: int                        # updates per round
    evaluate: Callable[[Chunk], Round]
    final: Callable[[End], Final]
    league: League | None = None
    params: Callable[[Any], Any] = lambda carry: carry   # what best/ keeps
    best_metric: str | None = None         # a key of Round.shown, higher better; None: no best/
    restore_best: bool = False             # End.best_params read from best/
    checkpoint_every: int = 1              # rounds between checkpoints (and after the last)
    display: Display = Display()


def league_hook(*, get: Callable[[Any], Any], put: Callable[[Any, Any], Any],
                params: Callable[[Any], Any], fixed: Callable[[Any], Mapping[int, Any]],
                play=None, opponents: int = 0) -> League:
    """The league's hook for a carry holding a :class:`~train.algos.league.League`
    (``get``/``put``): ``league.after_round`` with the newest ``params(carry)``, its returns
    against the fixed players from the round's results (``fixed(Round.results)``), pool games
    ``play`` against the ``opponents`` most recent models, with the round's key. On host
    arrays, alike on every process (a multi-host run decides the same)."""

    def hook(step: int, carry: Any, rnd: Round, keys: Keys) -> tuple[Any, dict]:
        league, info = league_lib.after_round(
            to_host(get(carry)), to_host(params(carry)), fixed_returns=fixed(rnd.results), play=play,
            opponents=opponents, key=keys.round(step))
        return put(carry, jax.tree_util.tree_map(jnp.asarray, league)), info

    return hook


def run_pipeline(pipeline: Pipeline | Callable[[RunDir], Pipeline], config, *,
                 stop_after_chunks: int | None = None, game: str | None = None) -> dict:
    """Train, evaluate and write the run folder of ``config`` (a ``RunConfig``); returns the
    summary, the same on every process ({} when stopped early). ``pipeline`` may instead be
    made once the run folder is open, ``pipeline(rundir) -> Pipeline`` (Hearts trains its
    stages inside it); ``game`` then names the run folder's game."""
    started = time.time()
    init_distributed()
    made = not isinstance(pipeline, Pipeline)
    if made and game is None:
        raise ValueError("a pipeline made in the run folder needs game=")
    with RunDir(config.runs_dir, game if made else pipeline.game, config, resume=config.resume) as rundir:
        p = pipeline(rundir) if made else pipeline
        latest, best = rundir.open_checkpoints(keep=config.keep_checkpoints, best=p.best_metric is not None)
        loop = _Loop(p, rundir)
        result = run(
            p.update, p.init(p.keys.init), p.keys.train,
            Schedule(num_updates=p.num_updates, chunk_size=p.chunk_size, checkpoint_every=p.checkpoint_every,
                     stop_after_chunks=stop_after_chunks),
            on_chunk=loop.on_chunk, between_chunks=loop.between_chunks,
            checkpointing=Checkpointing(latest=latest, config_json=config.to_json(), resume=config.resume,
                                        best=best, best_metric=p.best_metric, params=p.params),
            display=p.display)
        finished = result.step >= p.num_updates
        best_step = best.latest_step() if best is not None else None
        best_params = None
        if finished and p.restore_best and best_step not in (None, result.step):
            best_params = best.restore_or_warn(p.params(result.carry), p.keys.train, step=best_step,
                                               consequence="the summary leaves the best model out")
        for ck in (latest, best):
            if ck is not None:
                ck.close()
        if not finished:
            return {}
        final = p.final(End(carry=result.carry, step=result.step, rows=rundir.metrics(), keys=p.keys,
                            best_step=best_step, best_params=best_params))
        summary = {**final.summary, "seconds": time.time() - started}
        if rundir.writes:
            if final.files is not None:
                final.files(rundir, summary)
            rundir.write_summary(summary)
            rundir.write_report(final.report(summary))
    return summary


class _Loop:
    """The driver's two calls between chunks: ``on_chunk`` evaluates (its numbers judge
    ``best/``), ``between_chunks`` runs the league hook and logs the row."""

    def __init__(self, pipeline: Pipeline, rundir: RunDir):
        self.p, self.rundir = pipeline, rundir
        self.pending: dict[int, Round] = {}
        self.last_row: dict | None = None
        self.started = False

    def on_chunk(self, step, carry, metrics, seconds):
        if not self.started:   # the session's first chunk: the rows up to where it began
            self.started = True
            leaves = jax.tree_util.tree_leaves(metrics)
            start = step - (len(leaves[0]) if leaves else self.p.chunk_size)
            before = [r for r in self.rundir.metrics() if r["step"] <= start]
            self.last_row = before[-1] if before else None
        rnd = self.p.evaluate(Chunk(step=step, carry=carry, metrics=metrics, seconds=seconds,
                                    keys=self.p.keys, last_row=self.last_row))
        self.pending[step] = rnd
        return rnd.shown

    def between_chunks(self, step, carry):
        rnd = self.pending.pop(step)
        info = {}
        if self.p.league is not None:
            carry, info = self.p.league(step, carry, rnd, self.p.keys)
        for earlier, row in rnd.earlier:
            self.rundir.log(earlier, row)
        row = {**rnd.row, **info}
        self.rundir.log(step, row)
        self.last_row = {"step": step, **row}
        return carry
