"""A pipeline run as 1 process x 1 device, 1 process x 4 devices and 2 processes x 2 devices
(``python -m train.launch``), and a 2 x 2 run killed after its first checkpoint and resumed:
do the summaries and the metric rows agree, and what does each layout cost?

    python -m bench.distributed                    # the tiny 3x3 Hex run (minutes on 2 cores)
    python -m bench.distributed --game ten_half    # the tiny ten-and-a-half run

The heavy companion of ``tests/train/test_distributed.py`` (ten-and-a-half, killed and resumed
too) and ``tests/train/test_distributed_hex.py`` (Hex, which to fit the test suite leaves out
the kill, the final evaluation, the Elo and the SGF games, and compiles at XLA's optimisation
level 0): here the whole tiny Hex run, with default compilation, killed and resumed. Prints one
row per layout: wall seconds, the ratio to 1 x 1 measured here, and whether ``summary.json``
(less its seconds) and ``metrics.jsonl`` (less timings) equal the 1 x 1 run's: "same" (every
value equal), "~1e-07" (floats equal up to that relative rounding: a sharded run sums the
parts of a loss in another order than one device; every other value equal) or "DIFFERS".
Exits 1 when anything differs beyond rounding. On 2 shared cores the fake devices share the
same cores: the ratios show the overhead of a layout (more processes to start and compile,
collectives over gloo, multi-host checkpoints), not a speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time

import jax

from jaxgames import checkpoints
from train.common.launcher import cpu_devices_env

REPO = pathlib.Path(__file__).resolve().parents[1]
CONFIGS = {
    # tests/train/test_train_hex.py's tiny run, with 8 games per update (4 per colour: a
    # multiple of 4 devices)
    "hex": ["--board-size", "3", "--phase1", "uct", "--rounds", "1", "--updates-per-round", "1",
            "--games-per-update", "8", "--simulations", "4", "--eval-simulations", "4",
            "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64", "--uct-simulations", "8",
            "--eval-games", "4", "--final-eval-games", "6", "--elo-games", "2", "--sgf-games", "2",
            "--phase1-simulations", "8", "--no-progress"],
    "ten_half": ["--episodes", "40000", "--episodes-per-update", "2000", "--updates-per-chunk", "2",
                 "--arena-games", "500", "--no-progress"],
}


def run_single(game: str, args: list, runs: pathlib.Path, devices: int) -> float:
    env = dict(cpu_devices_env(os.environ, devices), PYTHONPATH=str(REPO))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", f"train.{game}", *args, "--runs-dir", str(runs)],
                   cwd=REPO, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def launch_cmd(game: str, args: list, runs: pathlib.Path) -> list:
    return [sys.executable, "-m", "train.launch", "--processes", "2", "--devices-per-process", "2",
            "--grace", "20", "--", sys.executable, "-m", f"train.{game}", *args, "--runs-dir", str(runs)]


def run_launch(game: str, args: list, runs: pathlib.Path) -> float:
    start = time.perf_counter()
    subprocess.run(launch_cmd(game, args, runs), cwd=REPO, check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)))
    return time.perf_counter() - start


def run_killed_and_resumed(game: str, args: list, runs: pathlib.Path,
                           folder: pathlib.Path) -> tuple[float, str]:
    """Kill process 1 once a checkpoint is committed; then --resume. Returns (wall seconds
    of both launches, what the launcher said about the kill)."""
    start = time.perf_counter()
    log = runs.parent / f"{runs.name}-killed.err"
    with open(log, "w") as err:
        launcher = subprocess.Popen(launch_cmd(game, args, runs), cwd=REPO, stdout=subprocess.DEVNULL,
                                    stderr=err, env=dict(os.environ, PYTHONPATH=str(REPO)))
        while not checkpoints.step_numbers(folder / checkpoints.LATEST):
            if launcher.poll() is not None:
                raise SystemExit(f"the run ended before its first checkpoint: {log.read_text()[-2000:]}")
            time.sleep(0.02)
        pid = int(dict(re.findall(r"process (\d) pid (\d+)", log.read_text()))["1"])
        os.kill(pid, signal.SIGKILL)
        killed = time.perf_counter()
        status = launcher.wait()
        stopped = time.perf_counter() - killed
    said = [line for line in log.read_text().splitlines() if "error:" in line or "launch:" in line]
    subprocess.run(launch_cmd(game, args, runs) + ["--resume"], cwd=REPO, check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(REPO)))
    note = f"launcher status {status}, all stopped {stopped:.1f} s after the kill; " + " | ".join(said[-3:])
    return time.perf_counter() - start, note


def compare(a, b) -> tuple[bool, float]:
    """(equal up to float rounding, largest relative difference of a float) of two JSON values:
    the devices of a sharded run sum their parts of a loss in another order than one device."""
    if isinstance(a, dict) and isinstance(b, dict):
        parts = [compare(a[k], b[k]) for k in a] if a.keys() == b.keys() else [(False, 0.0)]
    elif isinstance(a, list) and isinstance(b, list):
        parts = [compare(x, y) for x, y in zip(a, b)] if len(a) == len(b) else [(False, 0.0)]
    elif isinstance(a, float) and isinstance(b, float) and a != b:
        rel = abs(a - b) / max(abs(a), abs(b))
        return rel <= 1e-5, rel
    else:
        return a == b, 0.0
    return all(ok for ok, _ in parts), max((d for _, d in parts), default=0.0)


def verdict(a, b) -> str:
    ok, rel = compare(a, b)
    if a == b:
        return "same"
    return f"~{rel:.0e}" if ok else "DIFFERS"


def figures(folder: pathlib.Path) -> tuple[dict, list]:
    summary = json.loads((folder / "summary.json").read_text())
    summary.pop("seconds", None)
    rows = [{k: v for k, v in json.loads(line).items() if "second" not in k}
            for line in (folder / "metrics.jsonl").read_text().splitlines()]
    return summary, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.distributed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(CONFIGS), default="hex")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-kill", action="store_true", help="skip the killed-and-resumed run")
    opts = parser.parse_args(argv)
    args = CONFIGS[opts.game] + ["--seed", str(opts.seed), "--run-name", "r"]
    root = pathlib.Path(tempfile.mkdtemp(prefix="jaxgames-distributed-"))
    print(f"train.{opts.game}, tiny config, seed {opts.seed}: {' '.join(CONFIGS[opts.game])}")
    print(f"jax {jax.__version__}, {platform.machine()} CPU, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the start; runs in {root}")
    layouts = [("1 x 1 device", lambda r: run_single(opts.game, args, r, 1)),
               ("1 x 4 devices", lambda r: run_single(opts.game, args, r, 4)),
               ("2 x 2 (train.launch)", lambda r: run_launch(opts.game, args, r))]
    if not opts.no_kill:
        layouts.append(("2 x 2 killed + resumed",
                        lambda r: run_killed_and_resumed(opts.game, args, r, r / opts.game / "r")))
    base = None
    ok = True
    print(f"{'layout':<24} {'wall s':>7} {'vs 1x1':>7}  summary  rows")
    for i, (name, fn) in enumerate(layouts):
        runs = root / f"layout{i}"
        out = fn(runs)
        seconds, note = out if isinstance(out, tuple) else (out, "")
        summary, rows = figures(runs / opts.game / "r")
        if base is None:
            base = (seconds, summary, rows)
        same_summary, same_rows = verdict(summary, base[1]), verdict(rows, base[2])
        ok &= "DIFFERS" not in (same_summary, same_rows)
        print(f"{name:<24} {seconds:7.1f} {seconds / base[0]:7.2f}  {same_summary:<8} {same_rows}")
        if same_summary != "same":
            changed = {k: (base[1].get(k), v) for k, v in summary.items() if base[1].get(k) != v}
            print("    " + json.dumps(changed))
        if note:
            print(f"    {note}")
    print(f"summary of 1 x 1: {json.dumps(base[1])}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
