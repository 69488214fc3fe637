"""Multi-host Hex (issue 13) and "4 fake devices give the results of one" for the whole Hex
pipeline (issue 9): the tiny 3x3 ``python -m train.hex`` run as 2 processes x 2 CPU devices
(``python -m train.launch``; one mesh of 4 devices) and as 1 process x 1 device (the test's own
process, as ``test_distributed.py``'s reference), same seed,
must write the same ``summary.json``, the same ``metrics.jsonl`` rows and the same last
checkpoint (parameters, optimizer state, opponent pool, replay buffer, Elo table, key); floats
agree up to rounding, since the devices of a sharded run sum their parts of a gradient in
another order than one device. Only process 0 writes outside the checkpoint folders.

The runs are this file's whole cost, and a run's cost is nearly all XLA compilation, which
every process does in full: the persistent compilation cache (``tests/conftest.py``) keys a
program on the device topology and the device ids, so it shares nothing between the layouts,
between the two processes of the launch, or with ``test_train_hex.py``'s run. So, to stay cheap:

- the settings of ``test_train_hex.py``'s tiny run (phase 1 and one self-play round), 8 games
  per update (a multiple of 2 x 4 devices), without the final evaluation, the Elo games and
  the SGF games: each is one more program to compile in every process, and none is sharded
  (evaluations run whole on each process's first device); the summary's win rate is then the
  last round's evaluation;
- 1 process x 4 devices is left out: the 2 x 2 launch shards over the same mesh of 4, and
  ``test_alphazero.py::test_four_devices_match_one`` runs the learner on 4 devices of one
  process; a third launch cost the suite ~20 s;
- both layouts compile under the suite's fast-compiling settings (``tests/conftest.py``:
  the sharding and the collectives are decided before the backend, so what is compared does
  not change);
- the 1 x 1 run runs in the test's process while the 2 x 2 launch runs: the file takes the
  time of the launch, and the reference costs no process start (Python, JAX and the pipeline's
  imports) and traces with the suite's rarer garbage collections (``tests/conftest.py``).

Measured on the 2-core CPU, the file alone on a quiet machine: 47 s wall, 86 CPU-seconds (with the
1 x 4 launch it was 157 s wall and 135 CPU-seconds on a shared machine, load average 5.3 to 7.5).
On a 2-core Zen 4 shared with another run (load average 3.5 to 5.5), two alternated pairs: the
1 x 1 run in a process of its own 75 s and 73 s wall, 75 and 73 CPU-seconds; here, 69 s and 65 s,
70 and 65 CPU-seconds.
"""

import json
import pathlib
import subprocess
import sys

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest

from bench.distributed import compare
from train import hex as hex_train
from test_distributed import _audit, _env  # the audit hook that records each process's writes
import test_distributed as distributed_test  # the run-folder readers

# Two launches of processes, each compiling the whole pipeline: make test-slow.
pytestmark = pytest.mark.slow

REPO = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--board-size", "3", "--phase1", "uct", "--phase1-simulations", "8", "--rounds", "1",
        "--updates-per-round", "1", "--games-per-update", "8", "--simulations", "4",
        "--eval-simulations", "4", "--sgd-steps", "2", "--batch-size", "8", "--buffer-size", "64",
        "--uct-simulations", "8", "--eval-games", "4", "--final-eval-games", "0", "--elo-games", "0",
        "--sgf-games", "0", "--no-progress", "--run-name", "r"]


def _start(tmp: pathlib.Path, name: str, command: list, **env) -> subprocess.Popen:
    with open(tmp / f"{name}.log", "w") as log:
        return subprocess.Popen(command + [*TINY, "--runs-dir", str(tmp / name)], cwd=REPO,
                                stdout=log, stderr=subprocess.STDOUT, env=_env(tmp, name, **env))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("distributed_hex")
    multi = _start(tmp, "multi", [sys.executable, "-m", "train.launch", "--processes", "2",
                                  "--devices-per-process", "2", "--grace", "20", "--",
                                  sys.executable, "-m", "train.hex"])
    try:
        # 1 x 1, here, while the launch runs
        assert jax.device_count() == 1
        hex_train.main([*TINY, "--runs-dir", str(tmp / "one")])
        assert multi.wait(timeout=500) == 0, (tmp / "multi.log").read_text()[-3000:]
    finally:
        if multi.poll() is None:
            multi.terminate()  # the launcher stops its processes on SIGTERM
            multi.wait(timeout=60)
    return {"tmp": tmp}


def _run(runs, name) -> pathlib.Path:
    return distributed_test._run(runs, name, "hex")


def _summary(runs, name) -> dict:
    return distributed_test._summary(runs, name, "hex")


def _rows(runs, name) -> list:
    return [{k: v for k, v in json.loads(line).items() if "second" not in k}
            for line in (_run(runs, name) / "metrics.jsonl").read_text().splitlines()]


def _last_checkpoint(runs, name) -> dict:
    """The last checkpoint's carry and key as NumPy arrays, whatever layout wrote it."""
    folder = _run(runs, name) / "checkpoints"
    state = folder / str(max(int(p.name) for p in folder.iterdir() if p.name.isdigit())) / "state"
    checkpointer = ocp.PyTreeCheckpointer()
    as_numpy = jax.tree_util.tree_map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray),
                                      checkpointer.metadata(state).item_metadata.tree)
    return checkpointer.restore(state, restore_args=as_numpy)


def test_every_layout_gives_the_summary_of_one_device(runs):
    one = _summary(runs, "one")
    # the run did what the settings ask: phase 1 and one self-play round of 8 games
    assert (one["board_size"], one["rounds"], one["self_play_games"], one["phase1_games"]) == (3, 2, 8, 8)
    assert one["eval_games"] == 4 and one["win_rate_vs_uct"] * 4 == round(one["win_rate_vs_uct"] * 4)
    assert _summary(runs, "multi") == one


def test_every_layout_gives_the_rows_of_one_device(runs):
    one = _rows(runs, "one")
    assert [(r["round"], r["phase"], r["games"]) for r in one] == [(0, 1, 8), (1, 2, 16)]
    rows = _rows(runs, "multi")
    # every value equal but the losses, equal up to the order of a sum
    same, largest = compare(rows, one)
    assert same, (largest, rows, one)
    for row, ref in zip(rows, one):
        assert {k: v for k, v in row.items() if "loss" not in k and k != "l2"} == \
               {k: v for k, v in ref.items() if "loss" not in k and k != "l2"}


def test_every_layout_checkpoints_the_carry_of_one_device(runs):
    one = _last_checkpoint(runs, "one")
    paths, one_leaves = zip(*jax.tree_util.tree_flatten_with_path(one)[0])
    assert one["carry"]["step"] == 2 and one["carry"]["league"]["size"] == 2
    multi = _last_checkpoint(runs, "multi")
    assert jax.tree_util.tree_structure(multi) == jax.tree_util.tree_structure(one)
    for path, a, b in zip(paths, one_leaves, jax.tree_util.tree_leaves(multi)):
        where = jax.tree_util.keystr(path)
        assert a.shape == b.shape and a.dtype == b.dtype, where
        if np.issubdtype(a.dtype, np.floating) and a.size:
            # parameters, optimizer moments, search policies: up to rounding, measured
            # against the leaf's own scale (RMSprop's moments are ~1e-9)
            assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max(), where
        else:  # counters, pool ids, boards, legal moves, the key, ...
            np.testing.assert_array_equal(a, b, err_msg=where)


def test_only_process_zero_writes_files(runs):
    run = _run(runs, "multi")
    zero = {p for _, p in _audit(runs, "multi", 0)}
    for name in ("summary.json", "metrics.jsonl", "config.json", "report.md", "run.lock",
                 "plots/win_rate.png", "plots/losses.png", "plots/elo.png"):
        assert run / name in zero, name  # the hook sees process 0's writes
    one = _audit(runs, "multi", 1)
    # process 1 writes only its own shards of the checkpoints (orbax's multi-host saves)
    assert one and all(p.is_relative_to(run / "checkpoints") or p.is_relative_to(run / "best")
                       for _, p in one), [p for _, p in one][:5]
    # process 0 printed the result line; process 1 printed nothing but gloo's greeting
    log = (runs["tmp"] / "multi.log").read_text()
    assert '"board_size": 3' in log and "hex/r" in log
    assert not [line for line in log.splitlines() if line.startswith("[process 1]")]
