"""Run folders, inputs and crashes lose nothing and never dead-end (docs/runs.md)."""

import dataclasses
import json
import multiprocessing
import os
import pathlib
import signal
import subprocess
import sys

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from train.common import CheckpointError, Checkpointer, RunConfig, RunDir, parse
from train.common.config import SEED_MAX
from train.common.rundir import LOCK_NAME, RunDirError

REPO = pathlib.Path(__file__).resolve().parents[3]


@dataclasses.dataclass(frozen=True)
class Toy(RunConfig):
    RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"save_every"}

    rate: float = 0.5
    weights: tuple[float, ...] = (1.0, 2.0)
    save_every: int = 1


PRESETS = {"quick": Toy()}


def cfg(tmp_path, **kw):
    return Toy(run_name="r", runs_dir=str(tmp_path), **kw)


def files(root):
    return sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob("*"))


# -- one owner per run folder ------------------------------------------------------------------


def test_second_opener_is_refused_with_the_holder_named(tmp_path):
    first = RunDir(tmp_path, "toy", cfg(tmp_path), resume=False)
    with pytest.raises(RunDirError, match=rf"in use by process {os.getpid()} on "):
        RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True)
    first.close()
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as again:
        with pytest.raises(RunDirError, match="in use"):
            RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True)
        assert again.resumed
    RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True).close()  # released by with


_HOLD = """
import sys
from train.common.rundir import RunDir
sys.path.insert(0, {tests!r})
from test_reliability import Toy
run = RunDir({root!r}, "toy", Toy(run_name="r", runs_dir={root!r}, resume=True), resume=True)
print("held", flush=True)
sys.stdin.read()
"""


def test_lock_holds_against_another_process_and_dies_with_it(tmp_path):
    RunDir(tmp_path, "toy", cfg(tmp_path), resume=False).close()
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD.format(root=str(tmp_path), tests=str(REPO / "tests" / "train" / "common"))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(RunDirError, match=rf"in use by process {child.pid} on .*started"):
            RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True)
        with pytest.raises(RunDirError, match="already holds a run"):  # fresh: refused first
            RunDir(tmp_path, "toy", cfg(tmp_path), resume=False)
    finally:
        child.send_signal(signal.SIGKILL)  # a crash: the OS releases the lock
        child.wait()
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        assert json.loads((run.path / LOCK_NAME).read_text())["pid"] == os.getpid()


def _racer(root, barrier, results):
    barrier.wait()
    try:
        RunDir(root, "toy", Toy(run_name="r", runs_dir=root), resume=False).close()
        results.put("ok")
    except RunDirError as e:
        results.put(f"refused: {e}")
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        results.put(f"bug: {type(e).__name__}: {e}")


@pytest.mark.slow  # forked processes racing, six attempts
@pytest.mark.filterwarnings("ignore:os.fork")  # the children touch no JAX
def test_fresh_starts_at_the_same_instant_only_one_wins(tmp_path):
    ctx = multiprocessing.get_context("fork")
    n = 4
    for attempt in range(6):
        root = str(tmp_path / str(attempt))
        barrier, results = ctx.Barrier(n), ctx.Queue()
        procs = [ctx.Process(target=_racer, args=(root, barrier, results)) for _ in range(n)]
        for p in procs:
            p.start()
        outcomes = sorted(results.get(timeout=60) for _ in procs)
        for p in procs:
            p.join(timeout=60)
        assert outcomes.count("ok") == 1, outcomes
        assert all(o == "ok" or o.startswith("refused: ") for o in outcomes), outcomes
        assert json.loads((pathlib.Path(root) / "toy" / "r" / "config.json").read_text())["rate"] == 0.5


# -- settings refused before anything is written -----------------------------------------------


@pytest.mark.parametrize("argv, field", [
    (["--rate", "nan"], "rate"), (["--rate", "inf"], "rate"), (["--rate", "-inf"], "rate"),
    (["--weights", "1", "nan"], "weights"),
    (["--seed", "99999999999999999999"], "seed"), (["--seed", "-1"], "seed"),
    (["--seed", str(SEED_MAX + 1)], "seed"), (["--runs-dir", ""], "runs_dir"),
    (["--runs-dir", "  "], "runs_dir"),
])
def test_bad_values_exit_2_with_one_line_naming_the_field(argv, field, capsys):
    with pytest.raises(SystemExit) as e:
        parse(PRESETS, argv, prog="toy")
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("toy: error: invalid configuration: ")
    assert field in err
    if field == "seed":
        assert f"0..{SEED_MAX}" in err
    if field == "runs_dir":
        assert "empty" in err


def test_seed_range_is_what_jax_random_key_tells_apart():
    _, c = parse(PRESETS, ["--seed", str(SEED_MAX)])
    data = lambda s: np.asarray(jax.random.key_data(jax.random.key(s)))
    assert c.seed == SEED_MAX and not np.array_equal(data(SEED_MAX), data(0))
    if not jax.config.jax_enable_x64:  # past the range seeds alias or overflow
        assert np.array_equal(data(SEED_MAX + 1), data(0))
    with pytest.raises(OverflowError):
        jax.random.key(2**64)


def test_refused_commands_leave_nothing_behind(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RunDirError, match="is a file"):
        RunDir(blocker / "runs", "toy", cfg(blocker / "runs"), resume=False)
    with pytest.raises(RunDirError, match="no run"):
        RunDir(tmp_path / "runs", "toy", cfg(tmp_path / "runs", resume=True), resume=True)
    with pytest.raises(RunDirError, match="empty"):
        RunDir("", "toy", cfg(tmp_path), resume=False)
    assert files(tmp_path) == ["file"]

    RunDir(tmp_path / "runs", "toy", cfg(tmp_path / "runs"), resume=False).close()
    before = {f: (tmp_path / f).read_bytes() for f in files(tmp_path) if (tmp_path / f).is_file()}
    with pytest.raises(RunDirError, match="already holds a run"):
        RunDir(tmp_path / "runs", "toy", cfg(tmp_path / "runs"), resume=False)
    with pytest.raises(RunDirError, match="rate differs"):
        RunDir(tmp_path / "runs", "toy", cfg(tmp_path / "runs", rate=0.25, resume=True), resume=True)
    after = {f: (tmp_path / f).read_bytes() for f in files(tmp_path) if (tmp_path / f).is_file()}
    assert after == before


def test_unwritable_runs_folder_is_refused_before_creating_anything(tmp_path):
    # /proc refuses new folders to everyone, root included (a chmod would not stop root)
    with pytest.raises(RunDirError, match="not writable"):
        RunDir("/proc/jaxgames-runs", "toy", cfg("/proc/jaxgames-runs"), resume=False)
    assert not os.path.exists("/proc/jaxgames-runs")
    if os.geteuid() != 0:  # and a folder without write permission, for everyone else
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            with pytest.raises(RunDirError, match="not writable"):
                RunDir(locked / "runs", "toy", cfg(locked / "runs"), resume=False)
            assert list(locked.iterdir()) == []
        finally:
            locked.chmod(0o700)


def test_folder_left_by_a_start_killed_before_config_json_can_start_fresh(tmp_path):
    run = tmp_path / "toy" / "r"
    run.mkdir(parents=True)
    (run / LOCK_NAME).write_text("")
    (run / "metrics.jsonl").write_text("")
    RunDir(tmp_path, "toy", cfg(tmp_path), resume=False).close()
    assert (run / "config.json").exists()
    other = tmp_path / "toy" / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(RunDirError, match="no config.json"):
        RunDir(tmp_path, "toy", Toy(run_name="other", runs_dir=str(tmp_path)), resume=False)
    assert files(other) == ["notes.txt"]


# -- resume compares only what changes the results ---------------------------------------------


def test_resume_ignores_where_and_how_only_what_changes_results(tmp_path):
    with RunDir(tmp_path / "a", "toy", cfg(tmp_path / "a"), resume=False) as run:
        run.log(1, {"x": 1.0})
    moved = tmp_path / "elsewhere"
    (tmp_path / "a").rename(moved)
    for c in (cfg(str(moved) + "/", resume=True),                       # moved, trailing slash
              cfg(moved, resume=True, keep_checkpoints=9, progress=False),
              cfg(moved, resume=True, save_every=4)):                    # a subclass's own
        with RunDir(c.runs_dir, "toy", c, resume=True) as run:
            assert run.metrics() == [{"step": 1, "x": 1.0}]
    for change, message in [({"rate": 0.25}, r"rate differs from the saved run \(0.5 saved, 0.25 now\)"),
                            ({"weights": (1.0,)}, r"weights differs .*\[1.0, 2.0\] saved, \[1.0\] now"),
                            ({"seed": 3}, r"seed differs .*\(0 saved, 3 now\)")]:
        with pytest.raises(RunDirError, match=message):
            RunDir(moved, "toy", cfg(moved, resume=True, **change), resume=True)


def test_resume_before_the_first_checkpoint_starts_from_the_beginning(tmp_path):
    with RunDir(tmp_path, "toy", cfg(tmp_path), resume=False) as run:
        latest, _ = run.open_checkpoints(keep=2)
        run.log(1, {"x": 1.0})
        run.log(2, {"x": 2.0})  # killed before the first checkpoint
        latest.close()
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        latest, best = run.open_checkpoints(keep=2, best=True)
        assert latest.latest_step() is None and best.latest_step() is None
        assert run.metrics() == []
        run.log(1, {"x": 1.5})
        assert run.metrics() == [{"step": 1, "x": 1.5}]
        latest.close(), best.close()


# -- damaged files -----------------------------------------------------------------------------


def test_partial_last_metrics_line_is_dropped_with_a_note(tmp_path, capsys):
    with RunDir(tmp_path, "toy", cfg(tmp_path), resume=False) as run:
        run.log(1, {"x": 1.0})
        run.log(2, {"x": 2.0})
    path = tmp_path / "toy" / "r" / "metrics.jsonl"
    path.write_text(path.read_text() + '{"step": 3, "x": 3.')  # killed during a write
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        assert "dropped a partial last line" in capsys.readouterr().err
        assert [r["step"] for r in run.metrics()] == [1, 2]
        run.log(3, {"x": 3.0})
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 2, 3]

    path.write_text(path.read_text() + '{"step": 4, "x": 4.0}')  # whole, only its newline lost
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        run.log(5, {"x": 5.0})
        assert [r["step"] for r in run.metrics()] == [1, 2, 3, 4, 5]

    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + ["garbage"] + lines[2:]) + "\n")  # not a cut write
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        with pytest.raises(RunDirError, match="metrics.jsonl line 3 is damaged"):
            run.metrics()


def test_a_session_replaces_rows_at_or_after_its_first_step(tmp_path):
    with RunDir(tmp_path, "toy", cfg(tmp_path), resume=False) as run:
        for s in (1, 2, 3, 4):
            run.log(s, {"x": float(s)})
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        run.log(3, {"x": 30.0})     # resumed from a checkpoint at step 2
        run.log(3, {"y": 1.0})      # later rows of the session append, even at the same step
        assert run.metrics() == [{"step": 1, "x": 1.0}, {"step": 2, "x": 2.0},
                                 {"step": 3, "x": 30.0}, {"step": 3, "y": 1.0}]


LIKE = {"w": jnp.zeros(3), "n": jnp.int32(0)}


def save_steps(ck, steps):
    for s in steps:
        ck.save(s, {"w": jnp.arange(3.0) * s, "n": jnp.int32(s)}, jax.random.key(s), "{}")


def damage(step_dir):
    for f in pathlib.Path(step_dir).rglob("*"):
        if f.is_file():
            f.write_bytes(b"garbage")


def step_names(directory):
    return sorted(p.name for p in pathlib.Path(directory).iterdir())


def test_restore_or_warn_gives_none_and_one_warning_for_an_unreadable_step(tmp_path, capsys):
    ck = Checkpointer(tmp_path / "ck", keep=3)
    save_steps(ck, (1, 2))
    like = {"w": jnp.zeros(3), "n": jnp.int32(0)}
    tree = ck.restore_or_warn(like, jax.random.key(0), step=1, consequence="left out")
    np.testing.assert_array_equal(tree["w"], jnp.arange(3.0))
    assert capsys.readouterr().err == ""
    damage(tmp_path / "ck" / "1")
    assert ck.restore_or_warn(like, jax.random.key(0), step=1, consequence="left out") is None
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and err.rstrip().endswith("; left out") and "Traceback" not in err
    assert step_names(tmp_path / "ck") == ["1", "2"]  # nothing moved aside: exactly that step
    ck.close()


def test_damaged_newest_checkpoint_falls_back_and_is_kept_aside(tmp_path, capsys):
    ck = Checkpointer(tmp_path / "ck", keep=3)
    save_steps(ck, (1, 2, 3, 4))
    ck.close()
    damage(tmp_path / "ck" / "4")
    (tmp_path / "ck" / "3" / "state" / "_METADATA").unlink()  # damaged differently
    ck = Checkpointer(tmp_path / "ck", keep=3)
    step, tree, key, meta = ck.restore(LIKE, jax.random.key(0))
    assert step == 2 and int(tree["n"]) == 2 and meta["step"] == 2
    assert np.array_equal(jax.random.key_data(key), jax.random.key_data(jax.random.key(2)))
    err = capsys.readouterr().err
    assert "ck/4 is unreadable" in err and "moved it to" in err and "resumed from step 2" in err
    assert step_names(tmp_path / "ck") == ["2", "damaged-3", "damaged-4"]
    assert ck.latest_step() == 2
    # orbax ignores the folders set aside: they do not count toward keep and are never deleted
    save_steps(ck, (3, 4, 5, 6))
    assert step_names(tmp_path / "ck") == ["4", "5", "6", "damaged-3", "damaged-4"]
    assert int(ck.restore(LIKE, jax.random.key(0), step=4)[1]["n"]) == 4  # one step, exactly
    with pytest.raises(CheckpointError, match="no checkpoint of step 3 .*holds 4, 5, 6"):
        ck.restore(LIKE, jax.random.key(0), step=3)
    damage(tmp_path / "ck" / "6")
    with pytest.raises(CheckpointError, match="ck/6 is unreadable"):
        ck.restore(LIKE, jax.random.key(0), step=6)    # asked for: no fallback, nothing moved
    assert "6" in step_names(tmp_path / "ck")
    assert ck.restore(LIKE, jax.random.key(0))[0] == 5
    assert "damaged-6" in step_names(tmp_path / "ck")
    ck.close()


def test_only_checkpoint_unreadable_is_one_line_saying_what_to_do(tmp_path):
    ck = Checkpointer(tmp_path / "ck", keep=3)
    save_steps(ck, (1,))
    damage(tmp_path / "ck" / "1")
    with pytest.raises(CheckpointError) as e:
        ck.restore(LIKE, jax.random.key(0))
    assert "\n" not in str(e.value) and "ck/1 is unreadable" in str(e.value)
    assert "start another --run-name" in str(e.value) and step_names(tmp_path / "ck") == ["1"]
    ck.close()


@chex.dataclass(frozen=True)
class _Pooled:
    params: jax.Array    # [capacity, 2]
    ids: jax.Array       # [capacity]


def test_a_checkpoint_of_other_shapes_is_named_in_one_line_before_any_array_is_read(tmp_path, monkeypatch):
    # e.g. a pool sized by another number of rounds; an orbax restore that fails partway
    # leaves pending reads whose tracebacks flood stderr at exit, so none is attempted
    def carry(capacity, dtype=jnp.float32):
        return {"pool": _Pooled(params=jnp.ones((capacity, 2), dtype), ids=jnp.arange(capacity)),
                "n": jnp.int32(0)}
    ck = Checkpointer(tmp_path / "ck", keep=3)
    ck.save(1, carry(4), jax.random.key(0), "{}")
    step, tree, _, _ = ck.restore(carry(4), jax.random.key(1))      # the same shapes: restored
    assert step == 1 and tree["pool"].params.shape == (4, 2)
    restores = []
    monkeypatch.setattr(ck._manager, "restore", lambda *a, **k: restores.append(a))
    for like, named in ((carry(11), "carry/pool/ids is int32[4] there and int32[11] here"),
                        (carry(4, jnp.int32), "carry/pool/params is float32[4, 2] there and int32[4, 2] here")):
        with pytest.raises(CheckpointError) as e:
            ck.restore(like, jax.random.key(0))
        assert "\n" not in str(e.value) and "ck/1 does not match this configuration" in str(e.value)
        assert named in str(e.value)
    assert restores == [] and step_names(tmp_path / "ck") == ["1"]   # nothing read, nothing moved
    ck.close()


def test_an_error_inside_the_run_folder_closes_its_checkpointers(tmp_path):
    with pytest.raises(RuntimeError, match="the run failed"):
        with RunDir(tmp_path, "toy", cfg(tmp_path), resume=False) as run:
            latest, best = run.open_checkpoints(keep=2, best=True)
            raise RuntimeError("the run failed")
    assert latest._closed and best._closed
    latest.close()   # closing again is a no-op


def test_other_format_version_is_refused_not_set_aside(tmp_path, monkeypatch):
    from jaxgames import checkpoints  # the format the Checkpointer writes
    ck = Checkpointer(tmp_path / "ck", keep=3)
    save_steps(ck, (1,))
    monkeypatch.setattr(checkpoints, "FORMAT_VERSION", 2)
    save_steps(ck, (2,))
    monkeypatch.setattr(checkpoints, "FORMAT_VERSION", 1)
    with pytest.raises(CheckpointError, match="format version 2, this code reads 1"):
        ck.restore(LIKE, jax.random.key(0))
    assert step_names(tmp_path / "ck") == ["1", "2"]
    ck.close()


def test_garbage_best_metadata_is_a_named_error_and_the_run_goes_on(tmp_path, capsys):
    best = Checkpointer(tmp_path / "best", keep=1)
    assert best.best_value() == -float("inf")
    best.save(3, {"w": jnp.ones(2)}, jax.random.key(0), "{}", extra={"eval": 12.5})
    assert best.best_value() == 12.5
    meta_file = tmp_path / "best" / "3" / "meta" / "metadata"
    assert meta_file.is_file()
    meta_file.write_text("{garbage")
    with pytest.raises(CheckpointError, match=r"metadata of checkpoint .*best/3 is unreadable"):
        best.best_value(strict=True)
    assert best.best_value() == -float("inf")  # unknown: the next evaluation replaces it
    assert "best/3 is unreadable" in capsys.readouterr().err
    best.save(5, {"w": jnp.ones(2)}, jax.random.key(0), "{}", extra={"eval": 1.0})
    assert best.best_value() == 1.0 and step_names(tmp_path / "best") == ["5"]
    best.close()


def test_stale_temporary_folders_are_cleaned_when_opening(tmp_path, capsys):
    with RunDir(tmp_path, "toy", cfg(tmp_path), resume=False) as run:
        latest, best = run.open_checkpoints(keep=2, best=True)
        save_steps(latest, (1,))
        latest.close(), best.close()
        for stale in (run.checkpoints / "2.orbax-checkpoint-tmp-1712345678",
                      run.checkpoints / "3.orbax-checkpoint-tmp", run.path / "best" / "1.orbax-checkpoint-tmp"):
            (stale / "state").mkdir(parents=True)
            (stale / "state" / "x").write_bytes(b"half")
    with RunDir(tmp_path, "toy", cfg(tmp_path, resume=True), resume=True) as run:
        latest, best = run.open_checkpoints(keep=2, best=True)
        assert step_names(run.checkpoints) == ["1"] and step_names(run.path / "best") == []
        assert capsys.readouterr().err.count("a checkpoint save that was cut short") == 3
        assert latest.latest_step() == 1 and best.best_value() == -float("inf")
        latest.close(), best.close()


# -- end to end: a real pipeline, killed, damaged, resumed -------------------------------------

TINY = ["--episodes", "40000", "--episodes-per-update", "10000", "--updates-per-chunk", "1",
        "--no-progress"]


class Killed(BaseException):
    pass


def kill_at_save(monkeypatch, n):
    """Make the n-th checkpoint save of this process die before writing (a kill)."""
    real, count = Checkpointer.save, [0]

    def save(self, *a, **kw):
        count[0] += 1
        if count[0] == n:
            raise Killed
        return real(self, *a, **kw)
    monkeypatch.setattr(Checkpointer, "save", save)


def rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def kill(argv, monkeypatch, at_save):
    from train import ten_half
    kill_at_save(monkeypatch, at_save)
    try:
        ten_half.main(argv)
        raise AssertionError("not killed")
    except Killed:
        pass
    monkeypatch.undo()


@pytest.mark.slow  # four runs of the pipeline
def test_pipeline_killed_twice_and_damaged_ends_identical(tmp_path, monkeypatch, capsys):
    """Killed before its first checkpoint, resumed (from the beginning), killed again while
    saving its last checkpoint, newest checkpoint damaged, resumed (from the one before): the
    same summary and metrics as an unbroken run."""
    from train import ten_half
    base = TINY + ["--runs-dir", str(tmp_path)]
    whole = ten_half.main(base + ["--run-name", "whole"])
    argv = base + ["--run-name", "killed"]
    run = tmp_path / "ten_half" / "killed"

    kill(argv, monkeypatch, at_save=1)
    assert rows(run) and step_names(run / "checkpoints") == []
    kill(argv + ["--resume"], monkeypatch, at_save=4)
    assert "from the beginning" in capsys.readouterr().err
    assert step_names(run / "checkpoints") == ["1", "2", "3"]
    assert [r["step"] for r in rows(run)] == [1, 2, 3, 4]
    assert not (run / "summary.json").exists()

    damage(run / "checkpoints" / "3")
    resumed = ten_half.main(argv + ["--resume"])
    assert "resumed from step 2" in capsys.readouterr().err
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    assert rows(run) == rows(tmp_path / "ten_half" / "whole")
    assert "damaged-3" in step_names(run / "checkpoints")
