"""The run skeleton (``train/common/skeleton.py``) on a stand-in game: a learner that counts its
updates, a round evaluation, a league hook that changes the carry, a final evaluation. The
round loop's order of calls; a run killed in each phase (between rounds, in a round's
evaluation or hook, in the final evaluation, while its files, summary or report are written)
resumes to the unbroken run's figures; the summary and report are written once, by process 0
only; the named keys are distinct."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from train.common import Checkpointer, RunConfig, RunDir, distributed
from train.common.driver import Display
from train.common.skeleton import Final, Keys, Pipeline, Round, run_pipeline

ROUNDS, UPDATES = 3, 2
#: each round's score (best/ keeps the newest round at the highest: here the first)
SCORES = {2: 1.0, 4: 0.0, 6: 0.5}


@dataclasses.dataclass(frozen=True)
class StandInConfig(RunConfig):
    rounds: int = ROUNDS


def update(carry, key):
    """One update: counts itself and moves the 'parameter' by a random step."""
    n = carry["n"] + 1
    return {**carry, "n": n, "w": carry["w"] + jax.random.uniform(key)}, {"n": n}


def init(key):
    return {"n": jnp.int32(0), "w": jax.random.uniform(key), "pool": jnp.zeros(3, jnp.float32)}


class Killed(KeyboardInterrupt):
    """Stands in for a kill (Ctrl-C, SIGTERM) in one phase."""


def stand_in(calls: list, kill: tuple[str, int] | None = None) -> Pipeline:
    """The stand-in game; every call is recorded in ``calls`` as ``(phase, step)``; ``kill``
    ``(phase, n)`` raises :class:`Killed` at the n-th call of that phase."""
    seen = {}

    def record(phase, step=None):
        calls.append((phase, step))
        seen[phase] = seen.get(phase, 0) + 1
        if kill is not None and kill == (phase, seen[phase]):
            raise Killed(phase)

    def evaluate(c):
        record("evaluate", c.step)
        assert int(c.carry["n"]) == c.step and len(c.metrics["n"]) == UPDATES
        previous = c.last_row["total"] if c.last_row else 0
        row = {"n": int(c.carry["n"]), "w": float(c.carry["w"]), "total": previous + c.step,
               "probe": float(jax.random.uniform(c.keys.round(c.step)))}
        return Round(row, {"score": SCORES[c.step]}, results=float(c.carry["w"]),
                     earlier=((c.step - 1, {"half": True}),))

    def league(step, carry, rnd, keys):
        record("league", step)
        slot = (step // UPDATES) % 3
        return {**carry, "pool": carry["pool"].at[slot].set(rnd.results)}, {"slot": slot}

    def final(end):
        record("final", end.step)
        summary = {"n": int(end.carry["n"]), "w": float(end.carry["w"]),
                   "pool": [float(x) for x in end.carry["pool"]], "steps": [r["step"] for r in end.rows],
                   "best_step": end.best_step,
                   "best_n": None if end.best_params is None else int(end.best_params["n"]),
                   "probe": float(jax.random.uniform(end.keys.final))}

        def files(rundir, summary):
            record("files")
            (rundir.plots / "stand_in.txt").write_text(f"{summary['w']}\n")

        def report(summary):
            record("report")
            return f"# stand-in\n\nw = {summary['w']}\n"

        return Final(summary, report=report, files=files)

    return Pipeline(game="stand_in", keys=Keys.of(0), init=init, update=update,
                    num_updates=ROUNDS * UPDATES, chunk_size=UPDATES, evaluate=evaluate, final=final,
                    league=league, params=lambda carry: {"n": carry["n"], "w": carry["w"]},
                    best_metric="score", restore_best=True, display=Display(enabled=False))


def go(tmp_path, name, calls=None, *, resume=False, stop=None, kill=None):
    config = StandInConfig(runs_dir=str(tmp_path), run_name=name, resume=resume, progress=False)
    return run_pipeline(stand_in([] if calls is None else calls, kill), config, stop_after_chunks=stop)


def folder(tmp_path, name):
    return tmp_path / "stand_in" / name


def rows(tmp_path, name):
    return [json.loads(line) for line in (folder(tmp_path, name) / "metrics.jsonl").read_text().splitlines()]


def without_seconds(summary):
    return {k: v for k, v in summary.items() if k != "seconds"}


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """An unbroken run: its summary, its rows, its report, and the calls it made (the
    checkpoint saves and the writes of the run folder recorded too)."""
    tmp = tmp_path_factory.mktemp("skeleton")
    calls = []
    patch = pytest.MonkeyPatch()
    save, log = Checkpointer.save, RunDir.log
    summary_, report_ = RunDir.write_summary, RunDir.write_report

    def spy_save(self, step, *a, **k):
        calls.append(("save " + self.directory.name, step))
        return save(self, step, *a, **k)

    def spy_log(self, step, row):
        calls.append(("log", step))
        return log(self, step, row)

    patch.setattr(Checkpointer, "save", spy_save)
    patch.setattr(RunDir, "log", spy_log)
    patch.setattr(RunDir, "write_summary", lambda self, s: (calls.append(("summary", None)), summary_(self, s)))
    patch.setattr(RunDir, "write_report", lambda self, t: (calls.append(("write report", None)), report_(self, t)))
    try:
        summary = go(tmp, "whole", calls)
    finally:
        patch.undo()
    return {"tmp": tmp, "summary": summary, "calls": calls, "rows": rows(tmp, "whole"),
            "report": (folder(tmp, "whole") / "report.md").read_text()}


def test_the_round_loop_calls_in_order(whole):
    expected = []
    for step in (2, 4, 6):
        expected += [("evaluate", step), ("league", step), ("log", step - 1), ("log", step),
                     ("save checkpoints", step)]
        if step == 2:   # the best round (SCORES): best/ is saved with its checkpoint
            expected.append(("save best", step))
    expected += [("final", 6), ("files", None), ("summary", None), ("report", None), ("write report", None)]
    assert whole["calls"] == expected


def test_the_run_folder_and_summary_hold_what_the_rounds_did(whole):
    s, run = whole["summary"], folder(whole["tmp"], "whole")
    assert s["n"] == ROUNDS * UPDATES                  # every update ran once
    assert s["steps"] == [1, 2, 3, 4, 5, 6]            # each round's rows: the earlier update's, then its own
    assert [r["total"] for r in whole["rows"] if "total" in r] == [2, 6, 12]   # last_row goes on from the row before
    assert [r.get("slot") for r in whole["rows"] if "n" in r] == [1, 2, 0]     # the league's info joins the row
    # the league's changes to the carry are the carry's: the pool holds each round's w
    assert s["pool"] == pytest.approx([whole["rows"][5]["w"], whole["rows"][1]["w"], whole["rows"][3]["w"]])
    assert s["best_step"] == 2 and s["best_n"] == 2    # best/ read back: round 1's model
    assert json.loads((run / "summary.json").read_text()) == s and "seconds" in s
    assert (run / "report.md").read_text() == f"# stand-in\n\nw = {s['w']}\n"
    assert (run / "plots" / "stand_in.txt").read_text() == f"{s['w']}\n"


@pytest.mark.parametrize("kill", [
    ("stop", 1), ("stop", 2),                 # stopped between rounds (stop_after_chunks)
    ("evaluate", 2), ("league", 3),           # in a round, before its checkpoint
    ("final", 1),                             # training done, before the final evaluation ended
    ("files", 1), ("report", 1),              # after it: before the summary, and after it
])
def test_a_run_killed_in_any_phase_resumes_to_the_unbroken_run(whole, tmp_path, kill):
    if kill[0] == "stop":
        assert go(tmp_path, "killed", stop=kill[1]) == {}
    else:
        with pytest.raises(Killed):
            go(tmp_path, "killed", kill=kill)
    run = folder(tmp_path, "killed")
    assert (run / "summary.json").exists() == (kill[0] == "report")   # the summary is written before the report
    assert not (run / "report.md").exists()
    calls = []
    resumed = go(tmp_path, "killed", calls, resume=True)
    assert without_seconds(resumed) == without_seconds(whole["summary"])
    assert rows(tmp_path, "killed") == whole["rows"]
    assert (run / "report.md").read_text() == whole["report"]
    # a kill after training trains nothing again: the resumed run goes to its final evaluation
    if kill[0] in ("final", "files", "report"):
        assert [c for c in calls if c[0] in ("evaluate", "league")] == []


def test_a_finished_run_resumed_evaluates_again_to_the_same_summary(whole, tmp_path):
    go(tmp_path, "again")
    calls = []
    again = go(tmp_path, "again", calls, resume=True)
    assert without_seconds(again) == without_seconds(whole["summary"])
    assert [c[0] for c in calls] == ["final", "files", "report"]


def test_only_process_zero_writes_the_files_summary_and_report(whole, tmp_path, monkeypatch):
    """Another process of a multi-host run (process 0 there has made the folder and decided
    it may be used): the same calls and the same summary, and nothing of the run folder's
    own written (its checkpoints are written by every process in step, orbax's way)."""
    monkeypatch.setattr(distributed, "is_multiprocess", lambda: True)
    monkeypatch.setattr(distributed, "is_primary", lambda: False)
    monkeypatch.setattr(distributed, "broadcast_text", lambda text, **k: None)   # process 0's verdict: fine
    monkeypatch.setattr(distributed, "barrier", lambda name: None)
    calls = []
    other = go(tmp_path, "whole", calls)
    assert without_seconds(other) == without_seconds(whole["summary"])
    assert ("final", 6) in calls and not {"files", "report"} & {c[0] for c in calls}
    run = folder(tmp_path, "whole")
    assert not any((run / name).exists() for name in ("summary.json", "report.md", "metrics.jsonl", "config.json",
                                                      "plots"))


def test_the_named_keys_are_distinct_and_the_seed_key_trains_where_asked():
    keys = Keys.of(3)
    named = [keys.init, keys.train, keys.eval, keys.round(0), keys.round(2), keys.lbr_curve, keys.final,
             keys.sgf, keys.lbr, keys.profile, keys.baselines, keys.experts, keys.imperfect, keys.end(5)]
    data = {tuple(np.asarray(jax.random.key_data(k)).tolist()) for k in named}
    assert len(data) == len(named)
    # each name at the slot its evaluation had before the names: the published figures reproduce
    for name, i in (("sgf", 1), ("final", 2), ("lbr", 3), ("profile", 4), ("baselines", 100)):
        old = jax.random.fold_in(keys.eval, 2**31 - i)
        assert np.array_equal(jax.random.key_data(getattr(keys, name)), jax.random.key_data(old)), name
    # Hearts' final evaluations: at fold_in(eval, 2**30) and 2**30 + 1, as its published runs
    for name, slot in (("experts", 2**30), ("imperfect", 2**30 + 1)):
        old = jax.random.fold_in(keys.eval, slot)
        assert np.array_equal(jax.random.key_data(getattr(keys, name)), jax.random.key_data(old)), name
    beside = Keys.of(3, train_is_seed=True)
    assert np.array_equal(jax.random.key_data(beside.train), jax.random.key_data(jax.random.key(3)))
    assert not np.array_equal(jax.random.key_data(beside.init), jax.random.key_data(keys.init))
    with pytest.raises(ValueError):
        keys.end(0)


def test_a_pipeline_made_in_the_open_run_folder_runs_the_same(whole, tmp_path):
    """Hearts makes its pipeline once the run folder is open (its stages train inside it)."""
    seen = []

    def make(rundir):
        seen.append((rundir.path, (rundir.path / "config.json").is_file()))
        return stand_in([])

    config = StandInConfig(runs_dir=str(tmp_path), run_name="made", progress=False)
    with pytest.raises(ValueError, match="game="):
        run_pipeline(make, config)
    summary = run_pipeline(make, config, game="stand_in")
    assert seen == [(folder(tmp_path, "made"), True)]
    assert without_seconds(summary) == without_seconds(whole["summary"])
