"""jaxgames.checkpoints reads what training's checkpoint manager writes.

A run folder is written by ``train.common.checkpoint.Checkpointer`` exactly as a pipeline
writes one (``best/``: the parameters; ``checkpoints/``: a training carry), then read back
through the library's reader; then damaged in the ways the format documents.
"""

from __future__ import annotations

import json
import logging
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


def test_damaged_arrays_are_a_named_error(run, caplog):
    step_dir = run / "best" / "4"
    for f in (step_dir / "state").rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    with pytest.raises(checkpoints.CheckpointError,
                       match=r"best/4 is unreadable: its files are damaged or incomplete") as e:
        checkpoints.read_params(step_dir, LIKE)
    assert "\n" not in str(e.value) and isinstance(e.value, ValueError)
    # a failed read's future collected unawaited: asyncio's report of it is dropped (it came
    # out as a second stderr line of the play CLI once), any other asyncio error is not
    unretrieved = "{0} exception was never retrieved\nfuture: <{0} finished exception={1}>"
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        for kind in ("Future", "Task", "_GatheringFuture"):   # asyncio names the class
            logging.getLogger("asyncio").error(unretrieved.format(kind, "ValueError('Error opening \"zarr\" driver')"))
        logging.getLogger("asyncio").error(unretrieved.format("Future", "KeyError('other')"))
    assert [r.getMessage().splitlines()[1] for r in caplog.records] == [
        "future: <Future finished exception=KeyError('other')>"]


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


# -- the portable .npz file of one parameter tree (jaxgames.pretrained) --------------------------


def test_npz_reads_back_as_written_keyed_by_tree_paths(tmp_path):
    path = checkpoints.write_npz(tmp_path / "params.npz", params(3.0))
    assert path == tmp_path / "params.npz" and not list(tmp_path.glob("*.tmp"))
    with np.load(path, allow_pickle=False) as f:   # plain arrays, no pickle, named by path
        assert sorted(f.files) == ["['count']", "['dense']['b']", "['dense']['w']"]
    assert_equal_trees(checkpoints.read_npz(path, LIKE), params(3.0))


def npz_error(path, like=LIKE) -> str:
    with pytest.raises(checkpoints.CheckpointError) as e:
        checkpoints.read_npz(path, like)
    text = str(e.value)
    assert "\n" not in text and str(path) in text and isinstance(e.value, ValueError)
    return text


def test_npz_damaged_missing_or_not_an_npz_is_one_line(tmp_path):
    path = checkpoints.write_npz(tmp_path / "params.npz", params(1.0))
    data = bytearray(path.read_bytes())
    cut = tmp_path / "cut.npz"
    cut.write_bytes(bytes(data[: len(data) // 2]))
    assert "is unreadable: the file is damaged" in npz_error(cut)
    assert "does not exist" in npz_error(tmp_path / "nowhere.npz")
    text = tmp_path / "text.npz"
    text.write_text("not a zip")
    assert "is unreadable" in npz_error(text)
    one = tmp_path / "one.npy"
    np.save(one, np.zeros(3))
    assert "not an .npz archive" in npz_error(one)


def test_npz_that_does_not_fit_is_refused_naming_the_key(tmp_path):
    path = checkpoints.write_npz(tmp_path / "params.npz", params(1.0))
    more = jax.eval_shape(lambda: {**params(0.0), "extra": jnp.zeros(2)})
    assert "lacks key ['extra']" in npz_error(path, more)
    fewer = jax.eval_shape(lambda: {"dense": params(0.0)["dense"]})
    assert "has the unexpected key ['count']" in npz_error(path, fewer)
    wide = jax.eval_shape(lambda: {**params(0.0), "dense": {"w": jnp.zeros((3, 3)), "b": jnp.zeros(3)}})
    assert "['dense']['w'] is float32[2, 3] there and float32[3, 3] here" in npz_error(path, wide)
    ints = jax.eval_shape(lambda: {**params(0.0), "count": jnp.float32(0)})
    assert "['count'] is int32[] there and float32[] here" in npz_error(path, ints)
    bad = params(1.0)
    bad["dense"]["b"] = bad["dense"]["b"].at[0].set(jnp.inf)
    checkpoints.write_npz(path, bad)
    assert "non-finite values (NaN or inf) in ['dense']['b']" in npz_error(path)
