"""Multi-host hold'em: the tiny ``python -m train.holdem`` run as 2 processes x 2 CPU devices
(``python -m train.launch``; one mesh of 4 devices) and as 1 process x 1 device, same seed,
must write the same ``summary.json`` and ``metrics.jsonl`` rows and the same last checkpoint
(parameters, optimizer state, the rated pool, the key), floats up to rounding: the devices of a
sharded run sum their parts of a gradient in another order than one device. Only process 0
writes outside the checkpoint folders.

As ``test_distributed_hex.py`` (which says why): 1 process x 4 devices left out
(``tests/train/algos/test_ppo.py::test_four_devices_match_one`` runs the learner on 4 devices
of one process), the two launches at once, the cheapest settings that still rate a pool
(two rounds: the second round's games meet the first round's model) and run the final
matches against every baseline. LBR is left out (its search is one more program each process
compiles: 20 s of this file's 90 on a shared 2-core machine), and it is not sharded: each
process runs it whole.
"""

import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest

from bench.distributed import compare
from train.common.launcher import cpu_devices_env
from test_distributed import _audit, _env  # the audit hook that records each process's writes
import test_distributed as distributed_test  # the run-folder readers

REPO = pathlib.Path(__file__).resolve().parents[2]
# num_envs, opponent_groups and the minibatch (16 x 4 / 2 = 32 decisions) split over 4 devices
TINY = ["--rounds", "2", "--updates-per-round", "1", "--num-envs", "16", "--num-steps", "4",
        "--opponent-groups", "4", "--epochs", "1", "--minibatches", "2", "--eval-deals", "4",
        "--final-eval-deals", "4", "--lbr-hands", "0", "--elo-deals", "2", "--lbr-every", "0",
        "--no-progress", "--run-name", "r"]


def _start(tmp: pathlib.Path, name: str, command: list, **env) -> subprocess.Popen:
    with open(tmp / f"{name}.log", "w") as log:
        return subprocess.Popen(command + [*TINY, "--runs-dir", str(tmp / name)], cwd=REPO,
                                stdout=log, stderr=subprocess.STDOUT, env=_env(tmp, name, **env))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("distributed_holdem")
    pipeline = [sys.executable, "-m", "train.holdem"]
    started = {
        "multi": _start(tmp, "multi", [sys.executable, "-m", "train.launch", "--processes", "2",
                                       "--devices-per-process", "2", "--grace", "20", "--", *pipeline]),
        "one": _start(tmp, "one", pipeline, **cpu_devices_env({"XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}, 1)),
    }
    try:
        for name, process in started.items():
            assert process.wait(timeout=500) == 0, (tmp / f"{name}.log").read_text()[-3000:]
    finally:
        for process in started.values():
            if process.poll() is None:
                process.terminate()  # the launcher stops its processes on SIGTERM
                process.wait(timeout=60)
    return {"tmp": tmp}


def _run(runs, name) -> pathlib.Path:
    return distributed_test._run(runs, name, "holdem")


def _untimed(tree, losses: bool = True):
    """A summary or a row without its timings (seconds, hands/s), which no two runs share, and
    without its losses if ``losses`` is False."""
    if isinstance(tree, list):
        return [_untimed(x, losses) for x in tree]
    if isinstance(tree, dict):
        return {k: _untimed(v, losses) for k, v in tree.items()
                if "second" not in k and (losses or "loss" not in k)}
    return tree


def test_every_layout_gives_the_summary_and_rows_of_one_device(runs):
    one = json.loads((_run(runs, "one") / "summary.json").read_text())
    multi = json.loads((_run(runs, "multi") / "summary.json").read_text())
    # the run did what the settings ask: 2 updates of 16 games x 4 decisions, a pool rated
    assert one["hands_trained"] > 0 and one["mbb_vs_equity"]["ci95"] > 0
    assert set(multi) == set(one)
    same, largest = compare(_untimed(multi), _untimed(one))
    assert same, (largest, multi, one)
    rows = lambda name: [json.loads(line) for line in (_run(runs, name) / "metrics.jsonl").read_text().splitlines()]
    one_rows, multi_rows = rows("one"), rows("multi")
    assert [r["round"] for r in one_rows] == [1, 2] == [r["round"] for r in multi_rows]
    same, largest = compare(_untimed(multi_rows, losses=False), _untimed(one_rows, losses=False))
    assert same, (largest, multi_rows, one_rows)
    # a loss is a mean of terms that nearly cancel (the policy loss is ~1e-5): the order of its
    # sum moves its last digits more than 1e-5 of it, so it is compared on the scale of a term
    for row, ref in zip(multi_rows, one_rows):
        for k in (k for k in ref if "loss" in k):
            assert abs(row[k] - ref[k]) <= 1e-6 * max(1.0, abs(ref[k])), (k, row[k], ref[k])


def _last_checkpoint(runs, name) -> dict:
    folder = _run(runs, name) / "checkpoints"
    state = folder / str(max(int(p.name) for p in folder.iterdir() if p.name.isdigit())) / "state"
    checkpointer = ocp.PyTreeCheckpointer()
    as_numpy = jax.tree_util.tree_map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray),
                                      checkpointer.metadata(state).item_metadata.tree)
    return checkpointer.restore(state, restore_args=as_numpy)


def test_every_layout_checkpoints_the_carry_of_one_device(runs):
    one, multi = _last_checkpoint(runs, "one"), _last_checkpoint(runs, "multi")
    assert jax.tree_util.tree_structure(multi) == jax.tree_util.tree_structure(one)
    paths, one_leaves = zip(*jax.tree_util.tree_flatten_with_path(one)[0])
    for path, a, b in zip(paths, one_leaves, jax.tree_util.tree_leaves(multi)):
        where = jax.tree_util.keystr(path)
        assert a.shape == b.shape and a.dtype == b.dtype, where
        if np.issubdtype(a.dtype, np.floating) and a.size:
            assert np.abs(a - b).max() <= 1e-5 * max(np.abs(a).max(), 1e-30), where
        else:  # counters, pool ids, ratings' game counts, the games in flight, the key
            np.testing.assert_array_equal(a, b, err_msg=where)


def test_only_process_zero_writes_files(runs):
    run = _run(runs, "multi")
    zero = {p for _, p in _audit(runs, "multi", 0)}
    for name in ("summary.json", "metrics.jsonl", "config.json", "report.md", "run.lock"):
        assert run / name in zero, name
    one = _audit(runs, "multi", 1)
    assert one and all(p.is_relative_to(run / "checkpoints") or p.is_relative_to(run / "best")
                       for _, p in one), [p for _, p in one][:5]
    log = (runs["tmp"] / "multi.log").read_text()
    assert not [line for line in log.splitlines() if line.startswith("[process 1]")]
