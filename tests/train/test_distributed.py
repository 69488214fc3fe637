"""Multi-host runs on one machine: ``python -m train.launch`` starts 2 processes x 2 CPU devices
joined through ``jax.distributed`` (gloo collectives), and the ten-and-a-half pipeline must
give what 1 process x 1 device gives.

One module fixture makes every run once (the runs cost most of this file's time):

- the reference, 1 process x 1 device, in this process;
- 2 x 2 processes, SIGKILLed (process 1) as soon as the first checkpoint is committed, then
  resumed with ``--resume`` by a second 2 x 2 launch.

Every process of the 2 x 2 launches records the files it writes through a Python audit hook
(a ``sitecustomize`` on its path), so "only process 0 wrote files" is checked on what the
processes did, not on what the folder holds.

1 process x 4 devices is left out, as in ``test_distributed_hex.py``: the 2 x 2 launches shard
over the same mesh of 4, and ``test_train_ten_half.py::test_four_devices_match_one`` runs the
learners on 4 devices of one process (the pipeline run at 1 x 4 cost the suite a process).

The Hex pipeline: ``test_distributed_hex.py`` (2 x 2 = 1 x 1, without the kill);
``python -m bench.distributed`` adds its kill and ``--resume``.
"""

import io
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import time

import jax
import pytest

from train import launch, ten_half
from train.common import distributed, launcher

REPO = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--episodes", "40000", "--episodes-per-update", "2000", "--arena-games", "500",
        "--no-progress", "--run-name", "r"]
GRACE = 20  # seconds the launcher leaves the survivors after a failure

# Logs every file-system write under WATCH of this process to AUDIT.<process id>.
_AUDIT_HOOK = textwrap.dedent("""
    import os, sys
    _root = os.environ.get("JAXGAMES_TEST_WATCH")
    if _root:
        _log = open(os.environ["JAXGAMES_TEST_AUDIT"] + "." + os.environ.get("JAX_PROCESS_ID", "x"), "a")
        _WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
        _EVENTS = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate", "os.symlink",
                   "os.link", "shutil.rmtree", "shutil.move", "shutil.copyfile"}

        def _hook(event, args):
            if event == "open":
                path, mode, flags = args
                if not (any(c in (mode or "") for c in "wax+") or (mode is None and flags & _WRITE)):
                    return
                paths = [path]
            elif event in _EVENTS:
                paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
            else:
                return
            for p in paths:
                if isinstance(p, (str, bytes, os.PathLike)):
                    p = os.path.abspath(os.fsdecode(p))
                    if p.startswith(_root):
                        _log.write(event + " " + p + "\\n")
                        _log.flush()

        sys.addaudithook(_hook)
""")


def _env(tmp: pathlib.Path, name: str, **extra) -> dict:
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_AUDIT_HOOK)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JAX_COORDINATOR", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "SLURM_", "OMPI_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(REPO)]),
               JAXGAMES_TEST_WATCH=str(tmp), JAXGAMES_TEST_AUDIT=str(tmp / f"audit-{name}"), **extra)
    return env


def _launch_cmd(*args) -> list:
    return [sys.executable, "-m", "train.launch", "--processes", "2", "--devices-per-process", "2",
            "--grace", str(GRACE), "--", sys.executable, "-m", "train.ten_half", *TINY, *args]


def _wait_for(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = predicate()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _committed_step(folder: pathlib.Path):
    if not folder.is_dir():
        return None
    steps = [p for p in folder.iterdir() if p.name.isdigit()]  # orbax renames a save when done
    return steps or None


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("distributed")
    multi = tmp / "multi"
    checkpoints = multi / "ten_half" / "r" / "checkpoints"
    # 2 x 2, killed: ten chunks, so the run is still going when the first checkpoint appears
    # (and the kill may land in the middle of a later save)
    with open(tmp / "killed.out", "w") as out, open(tmp / "killed.err", "w") as err:
        launcher = subprocess.Popen(_launch_cmd("--updates-per-chunk", "2", "--runs-dir", str(multi)),
                                    cwd=REPO, stdout=out, stderr=err, env=_env(tmp, "killed"))
        pids = _wait_for(lambda: re.findall(r"process (\d) pid (\d+)", (tmp / "killed.err").read_text()),
                         120, "the launcher's pids")
        pid1 = int(dict(pids)["1"])
        _wait_for(lambda: _committed_step(checkpoints) or launcher.poll() is not None, 240,
                  "the first checkpoint")
        os.kill(pid1, signal.SIGKILL)
        killed_at = time.monotonic()
        killed_status = launcher.wait(timeout=GRACE + 60)
        stopped_after = time.monotonic() - killed_at
    killed_log = (tmp / "killed.err").read_text() + (tmp / "killed.out").read_text()
    checkpoints_at_kill = sorted(int(p.name) for p in _committed_step(checkpoints))

    # 2 x 2, resumed
    resumed = subprocess.run(_launch_cmd("--updates-per-chunk", "2", "--runs-dir", str(multi), "--resume"),
                             cwd=REPO, capture_output=True, text=True, env=_env(tmp, "resumed"), timeout=300)

    # 1 x 1, here
    assert jax.device_count() == 1
    _, config = ten_half.parse(ten_half.PRESETS, TINY + ["--updates-per-chunk", "5",
                                                         "--runs-dir", str(tmp / "one")])
    ten_half.train(config)

    return {"tmp": tmp, "killed_status": killed_status, "stopped_after": stopped_after,
            "killed_log": killed_log, "checkpoints_at_kill": checkpoints_at_kill, "resumed": resumed}


def _run(runs, name, game: str = "ten_half") -> pathlib.Path:
    return runs["tmp"] / name / game / "r"


def _summary(runs, name, game: str = "ten_half") -> dict:
    summary = json.loads((_run(runs, name, game) / "summary.json").read_text())
    summary.pop("seconds")
    return summary


def _rows(runs, name) -> list:
    return [json.loads(line) for line in (_run(runs, name) / "metrics.jsonl").read_text().splitlines()]


def _audit(runs, name, process) -> list[tuple[str, pathlib.Path]]:
    path = runs["tmp"] / f"audit-{name}.{process}"
    if not path.exists():
        return []
    return [(e, pathlib.Path(p)) for e, p in (line.split(" ", 1) for line in path.read_text().splitlines())]


@pytest.mark.slow  # the multi-process launches of the module fixture
def test_killed_process_stops_the_run_with_a_clear_error(runs):
    log = runs["killed_log"]
    # the launcher returns the first failure's status (SIGKILL: 128 + 9) and names it
    assert runs["killed_status"] == 137, log[-3000:]
    assert "process 1 was killed by signal 9 (SIGKILL)" in log
    # process 0 stops on its own, at once, with one line and the peer-lost status
    peer_lost = [line for line in log.splitlines() if "of this multi-host run" in line]
    assert len(peer_lost) == 1, log[-3000:]
    assert peer_lost[0].startswith("python -m train.ten_half: error:")
    assert "process 0 of 2 stops too" in peer_lost[0]
    assert f"process 0 exited with status {distributed.PEER_LOST_STATUS}" in log
    assert "Traceback" not in log and "stopping process" not in log
    assert runs["stopped_after"] < GRACE
    # it was killed in the middle: a checkpoint was committed, the run was not finished
    assert runs["checkpoints_at_kill"] and max(runs["checkpoints_at_kill"]) < 20


@pytest.mark.slow  # the multi-process launches of the module fixture
def test_multi_host_resumed_run_matches_one_device(runs):
    resumed = runs["resumed"]
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]
    # process 0 printed the result line; process 1 printed nothing but gloo's greeting
    assert f"optimal {_summary(runs, 'one')['optimal_value']:+.4f}" in resumed.stdout
    assert not [line for line in (resumed.stdout + resumed.stderr).splitlines()
                if line.startswith("[process 1]")]
    one = _summary(runs, "one")
    assert _summary(runs, "multi") == one
    assert _rows(runs, "multi") == _rows(runs, "one")  # no row lost or repeated by the kill
    assert [r["step"] for r in _rows(runs, "multi")] == list(range(1, 21))


@pytest.mark.slow  # the multi-process launches of the module fixture
def test_only_process_zero_writes_files(runs):
    run = _run(runs, "multi")
    for session in ("killed", "resumed"):
        zero = {p for _, p in _audit(runs, session, 0)}
        one = _audit(runs, session, 1)
        # the hook works: process 0's writes are seen
        assert run / "metrics.jsonl" in zero and run / "run.lock" in zero
        # process 1 writes only its own shards of the checkpoints (orbax's multi-host saves)
        outside = [(e, p) for e, p in one if not p.is_relative_to(run / "checkpoints")]
        assert outside == [], outside[:5]
    written = {p for _, p in _audit(runs, "resumed", 0)}
    for name in ("summary.json", "report.md", "plots/policy.png", "plots/learning_curve.png"):
        assert run / name in written, name
    lock = json.loads((run / "run.lock").read_text())
    assert "ten_half" in lock["command"] and lock["pid"] != 0


def test_launcher_returns_the_first_failure_and_stops_the_rest(capfd):
    # process 1 fails at once with status 7; process 0 would sleep: it is terminated
    code = ("import os, sys, time\n"
            "if os.environ['JAX_PROCESS_ID'] == '1':\n"
            "    print('bad', flush=True); sys.exit(7)\n"
            "time.sleep(60)\n")
    started = time.monotonic()
    assert launch.launch([sys.executable, "-c", code], processes=2, devices_per_process=1, grace=0.5) == 7
    assert time.monotonic() - started < 30
    out, err = capfd.readouterr()
    assert "[process 1] bad" in out
    assert "process 1 exited with status 7" in err
    assert "stopping process 0" in err and "process 0 was killed by signal 15 (SIGTERM)" in err


def test_launcher_sets_each_process_environment():
    env = launch.process_env({"XLA_FLAGS": "--xla_force_host_platform_device_count=8 --xla_foo=1"},
                             process_id=1, processes=3, devices=2, port=1234)
    assert env["XLA_FLAGS"].split() == ["--xla_foo=1", "--xla_force_host_platform_device_count=2"]
    assert env["JAX_COORDINATOR_ADDRESS"] == "127.0.0.1:1234"
    assert (env["JAX_NUM_PROCESSES"], env["JAX_PROCESS_ID"]) == ("3", "1")
    assert launch.exit_status(-9) == 137 and launch.exit_status(2) == 2
    with pytest.raises(SystemExit) as e:
        launch.main(["--processes", "2"])  # no command
    assert e.value.code == 2


@pytest.mark.parametrize("env, expected", [
    ({}, None),
    ({"JAX_COORDINATOR_ADDRESS": "10.0.0.1:1234"}, "explicit"),
    ({"SLURM_JOB_ID": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, None),
    ({"SLURM_JOB_ID": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, "slurm"),
    ({"SLURM_JOB_ID": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_STEP_NUM_TASKS": "1"}, None),
    ({"OMPI_COMM_WORLD_SIZE": "2"}, "mpi"),
    ({"TPU_WORKER_HOSTNAMES": "a,b"}, "tpu"),
    ({"TPU_WORKER_HOSTNAMES": "a"}, None),
    ({"JAXGAMES_DISTRIBUTED": "on"}, "forced"),
    ({"JAXGAMES_DISTRIBUTED": "off", "JAX_COORDINATOR_ADDRESS": "10.0.0.1:1234"}, None),
])
def test_launch_environment_is_read_from_the_launcher(monkeypatch, env, expected):
    for k in list(os.environ):
        if k.startswith(("JAX_COORDINATOR", "SLURM_", "OMPI_", "TPU_", "JAXGAMES_")):
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert distributed.launch_environment() == expected


def test_bad_settings_fail_with_one_line(monkeypatch):
    monkeypatch.setenv("JAXGAMES_DISTRIBUTED", "maybe")
    with pytest.raises(distributed.DistributedError, match="auto, on or off"):
        distributed.launch_environment()
    monkeypatch.setenv("JAXGAMES_DISTRIBUTED", "auto")
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "127.0.0.1:1")
    monkeypatch.setenv("JAXGAMES_HEARTBEAT_TIMEOUT", "soon")
    with pytest.raises(distributed.DistributedError, match="JAXGAMES_HEARTBEAT_TIMEOUT"):
        distributed.init_distributed()
    # this process already uses JAX: joining now is refused with one line
    monkeypatch.delenv("JAXGAMES_HEARTBEAT_TIMEOUT")
    monkeypatch.setenv("JAX_NUM_PROCESSES", "2")
    monkeypatch.setenv("JAX_PROCESS_ID", "1")
    jax.devices()
    with pytest.raises(distributed.DistributedError, match="used JAX before joining"):
        distributed.init_distributed()
    assert not distributed.is_multiprocess() and distributed.is_primary()


def test_forwarded_output_drops_gloos_greeting_even_split_apart(capfdbinary):
    child = io.BytesIO(b"[Gloo] Rank 1 is connected to 3 peer ranks. Expected number of connected peer ranks is : 3\n"
                       b"[Gloo] Rank 1 is connected to 3 peer ranks. \n"
                       b"Expected number of connected peer ranks is : 3\n"
                       b"\n"
                       b"[Gloo] Rank 1 is connected to 3 peer ranks. Expected number of connected peer ranks is : \n"
                       b"3\n"
                       # two threads' greetings on one line, the first one's count after it (a
                       # 2 x 2 Hex launch under load printed '[process 1] 3')
                       b"[Gloo] Rank 1 is connected to 3 peer ranks. Expected number of connected peer ranks is : "
                       b"[Gloo] Rank 1 is connected to 3 peer ranks. Expected number of connected peer ranks is : 3\n"
                       b"3\n"
                       b"loss 0.25\n"
                       b"3\n")
    launcher._pump(child, sys.stdout, "[process 1] ")
    # the count split from its greeting is dropped; the child's own "3" (no greeting before) is not
    assert capfdbinary.readouterr().out == b"[process 1] loss 0.25\n[process 1] 3\n"
