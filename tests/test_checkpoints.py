"""jaxgames.checkpoints reads what training's checkpoint manager writes.

A run folder is written by ``train.common.checkpoint.Checkpointer`` exactly as a pipeline
writes one (``best/``: the parameters; ``checkpoints/``: a training carry), then read back
through the library's reader; then damaged in the ways the format documents.
"""

from __future__ import annotations

import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import checkpoints
from train.common.checkpoint import Checkpointer

CONFIG = {"board_size": 3, "seed": 7}


def params(scale: float) -> dict:
    return {"dense": {"w": scale * jnp.arange(6.0).reshape(2, 3), "b": jnp.full(3, scale)},
            "count": jnp.int32(3)}


LIKE = jax.eval_shape(lambda: params(0.0))


def write(folder: pathlib.Path, step: int, tree, **extra) -> None:
    ck = Checkpointer(folder, keep=3)
    ck.save(step, tree, jax.random.key(step), json.dumps(CONFIG), extra=extra or None)
    ck.close()


@pytest.fixture
def run(tmp_path) -> pathlib.Path:
    """A run folder: best/ at steps 2 and 4 (keep=1 in training; here both, to see the newest
    chosen), checkpoints/ with a whole carry at steps 3 and 5."""
    run = tmp_path / "hex" / "r"
    for step in (2, 4):
        write(run / checkpoints.BEST, step, params(float(step)), vs_uct=0.5)
    for step in (3, 5):
        carry = {"params": params(10.0 + step), "average": params(20.0 + step),
                 "opt_state": {"mu": params(0.0)}, "pool": {"params": params(1.0)}}
        write(run / checkpoints.LATEST, step, carry)
    return run


def assert_equal_trees(got, want) -> None:
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(a, jax.Array) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_the_best_parameters_read_back_as_saved(run):
    step_dir = checkpoints.find_step(run)
    assert step_dir == run / "best" / "4"
    assert_equal_trees(checkpoints.read_params(step_dir, LIKE), params(4.0))
    meta = checkpoints.read_meta(step_dir)
    assert meta["format_version"] == checkpoints.FORMAT_VERSION and meta["step"] == 4
    assert meta["config"] == CONFIG and meta["vs_uct"] == 0.5


def test_in_a_training_carry_the_model_is_the_average(run):
    step_dir = checkpoints.find_step(run, which=("latest",))
    assert step_dir == run / "checkpoints" / "5"
    assert_equal_trees(checkpoints.read_params(step_dir, LIKE), params(25.0))


def test_params_path_prefers_the_shallowest_average_then_params_then_weights():
    p = params(1.0)
    assert checkpoints.params_path(p, LIKE) == ()
    carry = {"az": {"params": p, "average": p, "opt_state": [{"mu": p}], "pool": {"params": p}}}
    assert checkpoints.params_path(carry, LIKE) == ("az", "average")
    del carry["az"]["average"]
    assert checkpoints.params_path(carry, LIKE) == ("az", "params")
    assert checkpoints.params_path({"other": {"w": jnp.zeros(2)}}, LIKE) is None
    # a linear learner's weights (train.algos.linear_td's carry), after params
    w = jax.ShapeDtypeStruct((3,), jnp.float32)
    linear = {"weights": jnp.zeros(3), "games": jnp.int32(0), "updates": jnp.int32(0)}
    assert checkpoints.params_path(linear, w) == ("weights",)
    assert checkpoints.params_path({"params": jnp.ones(3), **linear}, w) == ("params",)


def test_without_best_the_newest_checkpoint_and_not_a_cut_short_or_damaged_one(run):
    for stale in ("best", "checkpoints"):
        (run / stale / "9.orbax-checkpoint-tmp-123").mkdir()
        (run / stale / f"{checkpoints.DAMAGED_PREFIX}8").mkdir()
    assert checkpoints.step_numbers(run / "best") == [2, 4]
    for step in (2, 4):
        (run / "best" / str(step)).rename(run / "best" / f"{checkpoints.DAMAGED_PREFIX}{step}")
    assert checkpoints.find_step(run) == run / "checkpoints" / "5"


def test_no_checkpoint_is_a_named_error(tmp_path):
    (tmp_path / "best").mkdir()
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"holds no checkpoint: neither best/ nor checkpoints/ has a saved step"):
        checkpoints.find_step(tmp_path)


def test_damaged_arrays_are_a_named_error(run):
    step_dir = run / "best" / "4"
    for f in (step_dir / "state").rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"best/4 is unreadable: its files are damaged or incomplete") as e:
        checkpoints.read_params(step_dir, LIKE)
    assert "\n" not in str(e.value) and isinstance(e.value, ValueError)


def test_damaged_metadata_and_another_format_are_named_errors(run):
    step_dir = run / "best" / "4"
    meta_file = step_dir / "meta" / "metadata"
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**meta, "format_version": checkpoints.FORMAT_VERSION + 1}))
    with pytest.raises(checkpoints.OtherFormatError, match=r"format version 2, this code reads 1"):
        checkpoints.read_meta(step_dir)
    meta_file.write_text("{not json")
    with pytest.raises(checkpoints.CheckpointError, match=r"the metadata of checkpoint .*best/4 is unreadable"):
        checkpoints.read_meta(step_dir)


def test_parameters_that_do_not_fit_or_are_not_finite_are_refused(run, tmp_path):
    other = jax.eval_shape(lambda: {"dense": {"w": jnp.zeros((3, 3)), "b": jnp.zeros(3)},
                                    "count": jnp.int32(0)})
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"holds no parameters that fit the 3x3 net: dense/w has shape \(2, 3\)"):
        checkpoints.read_params(run / "best" / "4", other, fits="the 3x3 net")
    bad = params(1.0)
    bad["dense"]["b"] = bad["dense"]["b"].at[0].set(jnp.nan)
    write(tmp_path / "nan" / "best", 1, bad)
    with pytest.raises(checkpoints.CheckpointError, match=r"non-finite parameters"):
        checkpoints.read_params(tmp_path / "nan" / "best" / "1", LIKE)
