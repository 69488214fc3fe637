"""Ctrl-C and SIGTERM stop a training run cleanly and say how to continue it (docs/runs.md):
a real run in a subprocess, signalled once it has a checkpoint, prints one line with the exact
``--resume`` command and exits 130, leaving no orbax temporary folder; resumed (the second
time after a SIGTERM), it ends identical to an unbroken run with the same seed."""

import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from train import ten_half
from train.common import exits

REPO = pathlib.Path(__file__).resolve().parents[3]
# 8 chunks of 5 updates, a checkpoint after each: long enough that a signal sent when a
# checkpoint appears lands while the run still trains (the chunks after it take seconds)
PER_CHUNK = 5
NUM_UPDATES = 40
ARGS = ["--episodes", str(NUM_UPDATES * 20000), "--episodes-per-update", "20000",
        "--updates-per-chunk", str(PER_CHUNK), "--arena-games", "2000", "--no-progress"]
LINE = re.compile(r"^python -m train\.ten_half: (interrupted|terminated \(SIGTERM\)) at update (\d+) of "
                  rf"{NUM_UPDATES}; the last checkpoint \(update (\d+)\) is kept in (.+); continue with: (.+)$")


def rows(run):
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def steps(run):
    return sorted(int(p.name) for p in (run / "checkpoints").iterdir() if p.name.isdigit())


@pytest.fixture(scope="module")
def unbroken(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    summary = ten_half.main(ARGS + ["--runs-dir", str(runs), "--run-name", "whole"])
    return summary, rows(runs / "ten_half" / "whole")


# ``python -m train.ten_half argv`` with Ctrl-C raising KeyboardInterrupt, as in a terminal:
# Python keeps SIGINT ignored in a child whose parent ignores it (a job started in the
# background of a script is)
_AS_A_SHELL = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "runpy.run_module('train.ten_half', run_name='__main__', alter_sys=True)")
# what XLA says on stderr when it loads a program from the tests' compilation cache (conftest)
_CACHE_NOTE = re.compile(r"^[EWI]\d{4} [\d:.]+ +\d+ cpu_aot_loader\.cc:\d+\] Loading XLA:CPU AOT result")


def signalled(argv, run, sig, after_step):
    """Start ``python -m train.ten_half argv``, send ``sig`` once checkpoint ``after_step`` is
    written (orbax renames a step's folder to its number when the save is finished); its exit
    status and stderr lines."""
    # stderr to a file, not a pipe read only at the end: the XLA notes of programs loaded from
    # the suite's compilation cache can fill a pipe and stop the child before its checkpoint
    with tempfile.TemporaryFile() as err_file:
        child = subprocess.Popen([sys.executable, "-c", _AS_A_SHELL, *argv], cwd=REPO,
                                 stdout=subprocess.DEVNULL, stderr=err_file,
                                 env=dict(os.environ, PYTHONPATH=str(REPO)))
        try:
            deadline = time.monotonic() + 300
            while not (run / "checkpoints" / str(after_step)).is_dir():
                assert child.poll() is None, "the run ended before its checkpoint"
                assert time.monotonic() < deadline, "no checkpoint came"
                time.sleep(0.01)
            child.send_signal(sig)
            child.wait(timeout=120)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        err_file.seek(0)
        err = err_file.read().decode()
    return child.returncode, [line for line in err.strip().splitlines() if not _CACHE_NOTE.match(line)]


def check_stopped(status, lines, run, argv, *, sigterm):
    """One line naming the last checkpoint and the command that continues the run; exit 130;
    nothing half written. The command's flags (after ``python -m train.ten_half``)."""
    assert status == exits.INTERRUPTED_STATUS, lines
    assert len(lines) == 1, lines
    m = LINE.match(lines[0])
    assert m, lines[0]
    assert (m[1] == "terminated (SIGTERM)") == sigterm
    at, last = int(m[2]), int(m[3])
    assert last == max(steps(run)) <= at < NUM_UPDATES   # stopped before the end, at its checkpoint
    assert pathlib.Path(m[4]) == run
    assert not list(run.rglob("*orbax-checkpoint-tmp*"))
    assert not (run / "summary.json").exists()
    words = shlex.split(m[5])
    assert words[:3] == ["python", "-m", "train.ten_half"] and words[-1] == "--resume"
    assert [w for w in words[3:-1]] == [w for w in argv if w != "--resume"]
    return words[3:], last


@pytest.mark.slow  # three pipeline processes, two of them signalled
def test_sigint_then_sigterm_then_resume_ends_as_an_unbroken_run(unbroken, tmp_path):
    whole, whole_rows = unbroken
    argv = ARGS + ["--runs-dir", str(tmp_path), "--run-name", "r"]
    run = tmp_path / "ten_half" / "r"

    status, lines = signalled(argv, run, signal.SIGINT, after_step=PER_CHUNK)       # Ctrl-C
    again, first = check_stopped(status, lines, run, argv, sigterm=False)
    assert again == argv + ["--resume"]

    status, lines = signalled(again, run, signal.SIGTERM, after_step=first + PER_CHUNK)
    again, second = check_stopped(status, lines, run, again, sigterm=True)
    assert second > first and again == argv + ["--resume"]

    resumed = ten_half.main(again)
    for k in whole:
        if k != "seconds":
            assert resumed[k] == whole[k], k
    assert rows(run) == whole_rows


# -- the line's wording, the deferral of a signal, without a run -----------------------------


def test_the_line_says_what_to_do_wherever_the_run_stands(tmp_path):
    prog = "python -m train.hex"
    argv = ["--preset", "quick", "--run-name", "a b"]
    exits._where.clear()
    assert exits._interrupted_line(prog, argv, KeyboardInterrupt()) == (
        f"{prog}: interrupted before the run folder was made (nothing was written); start it "
        f"again with: {prog} --preset quick --run-name 'a b'")
    exits.note_run_folder("runs/hex/a b")
    assert exits._interrupted_line(prog, argv + ["--no-resume"], exits.Terminated()) == (
        f"{prog}: terminated (SIGTERM) before training started; the run is in runs/hex/a b; "
        f"continue with: {prog} --preset quick --run-name 'a b' --resume")
    exits.note_progress(3, 96, None, tmp_path)
    assert "at update 3 of 96; no checkpoint was saved yet (--resume starts the run from the " \
           "beginning)" in exits._interrupted_line(prog, argv, KeyboardInterrupt())
    exits.note_progress(96, 96, 96, tmp_path)
    line = exits._interrupted_line(prog, argv + ["--resume"], KeyboardInterrupt())
    assert "after the last update (96), before the results were written; the last checkpoint " \
           "(update 96) is kept in runs/hex/a b" in line and line.count("--resume") == 1
    exits._where.clear()


@pytest.fixture
def python_handlers():
    """Ctrl-C raises KeyboardInterrupt and SIGTERM Terminated (as while a main runs), restored after."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    before_term = signal.signal(signal.SIGTERM, exits._raise_terminated)
    yield
    signal.signal(signal.SIGTERM, before_term)
    signal.signal(signal.SIGINT, before)


def test_a_signal_during_a_deferred_block_comes_after_it(python_handlers):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with exits.deferred_interrupts():
            signal.raise_signal(signal.SIGINT)
            done.append("finished")          # not cut short
    assert done == ["finished"]
    with exits.deferred_interrupts(then_raise=False):   # dropped: the cleanup after a first one
        signal.raise_signal(signal.SIGINT)
    with pytest.raises(exits.Terminated):
        with exits.deferred_interrupts():
            with exits.deferred_interrupts():   # nested: the outer one raises it
                signal.raise_signal(signal.SIGTERM)
            done.append("outer finished")
    assert done == ["finished", "outer finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler    # handlers restored
    assert signal.getsignal(signal.SIGTERM) is exits._raise_terminated
