import dataclasses
import pathlib

import jax
import jax.numpy as jnp
import pytest

from train.common import CheckpointError, Checkpointer, RunConfig, RunDir, parse
from train.common.errors import UserError
from train.common.rundir import RunDirError


@dataclasses.dataclass(frozen=True)
class ToyConfig(RunConfig):
    steps: int = 10
    rate: float = 0.5

    def validate(self):
        super().validate()
        if self.steps < 1:
            raise ValueError("steps must be >= 1")


PRESETS = {"quick": ToyConfig(), "full": ToyConfig(steps=1000)}


def test_presets_and_overrides():
    name, cfg = parse(PRESETS, ["--preset", "full", "--rate", "0.25"])
    assert name == "full" and cfg.steps == 1000 and cfg.rate == 0.25
    assert cfg.run_name == "full-seed0"


@pytest.mark.parametrize("argv, message", [
    (["--stepz", "3"], "stepz"),
    (["--steps", "many"], "steps"),
    (["--steps", "0"], "steps must be >= 1"),
    (["--preset", "huge"], "unknown preset 'huge'"),
])
def test_bad_flags_fail_with_a_clear_message(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse(PRESETS, argv, prog="toy")
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err


def test_run_dir_refuses_to_overwrite_and_checks_resume_config(tmp_path):
    cfg = ToyConfig(run_name="a", runs_dir=str(tmp_path))
    RunDir(tmp_path, "toy", cfg, resume=False).close()
    with pytest.raises(RunDirError, match="--resume"):
        RunDir(tmp_path, "toy", cfg, resume=False)
    with pytest.raises(RunDirError, match="rate"):
        RunDir(tmp_path, "toy", dataclasses.replace(cfg, rate=0.1, resume=True), resume=True)
    with pytest.raises(RunDirError, match="no run"):
        RunDir(tmp_path, "toy", dataclasses.replace(cfg, run_name="b"), resume=True)
    assert issubclass(RunDirError, UserError) and issubclass(CheckpointError, UserError)
    with RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True), resume=True) as run:
        assert run.resumed and run.path == tmp_path / "toy" / "a"


def test_checkpoint_round_trip_and_clear_errors(tmp_path):
    like = {"w": jnp.zeros(3), "n": jnp.int32(0)}
    empty = Checkpointer(tmp_path / "none")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        empty.restore(like, jax.random.key(0))

    ck = Checkpointer(tmp_path / "ck", keep=2)
    for step in (1, 2, 3):
        ck.save(step, {"w": jnp.arange(3.0) * step, "n": jnp.int32(step)}, jax.random.key(7), "{}")
    assert sorted(int(p.name) for p in (tmp_path / "ck").iterdir() if p.name.isdigit()) == [2, 3]
    step, carry, key, meta = ck.restore(like, jax.random.key(0))
    assert step == 3 and int(carry["n"]) == 3 and meta["format_version"] == 1
    assert (jax.random.key_data(key) == jax.random.key_data(jax.random.key(7))).all()

    # corrupt every file of every step: nothing can be read, the error names the folder and
    # what to do, and nothing is moved or deleted
    for step in (2, 3):
        for f in pathlib.Path(tmp_path / "ck" / str(step)).rglob("*"):
            if f.is_file():
                f.write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="none of the checkpoints .* can be read"):
        Checkpointer(tmp_path / "ck").restore(like, jax.random.key(0))
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["2", "3"]


def test_resumed_run_checkpoints_where_an_unbroken_run_does(tmp_path):
    from train.common import Checkpointing, Display, Schedule, run

    def update(carry, key):
        return carry + jax.random.uniform(key), carry

    def go(resume=False, **kw):
        ck = Checkpointer(tmp_path / "ck", keep=10)
        out = run(update, jnp.float32(0), jax.random.key(0),
                  Schedule(num_updates=8, chunk_size=2, checkpoint_every=2, **kw),
                  on_chunk=lambda *a: {}, checkpointing=Checkpointing(latest=ck, resume=resume),
                  display=Display(enabled=False))
        return out, sorted(int(p.name) for p in (tmp_path / "ck").iterdir() if p.name.isdigit())

    first, saved = go(stop_after_chunks=3)      # killed after chunk 3: saved at chunk 2 only
    assert first.step == 6 and saved == [4]
    resumed, saved = go(resume=True)              # resumes at step 4, saves at chunk 4 (step 8)
    assert resumed.step == 8 and saved == [4, 8]
    unbroken = run(update, jnp.float32(0), jax.random.key(0), Schedule(num_updates=8, chunk_size=2),
                   on_chunk=lambda *a: {}, display=Display(enabled=False))
    assert float(resumed.carry) == float(unbroken.carry)
