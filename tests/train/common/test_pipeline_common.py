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


# -- the command line: one line and exit 2 for what tyro would box ---------------------------

import json  # noqa: E402
from typing import Annotated  # noqa: E402

import tyro  # noqa: E402

from train.common.config import (INT32_MAX, MEMORY_CAP, check_int32, check_memory,  # noqa: E402
                                 memory_estimate)


@dataclasses.dataclass(frozen=True)
class ToyLearner:
    momentum: float = 0.9
    batch_size: int = 8


@dataclasses.dataclass(frozen=True)
class ToyOptions:
    depth: int = 2


@dataclasses.dataclass(frozen=True)
class NestedConfig(RunConfig):
    steps: int = 10
    fast: bool = False
    weights: tuple[int, ...] = (1, 2)
    learner: Annotated[ToyLearner, tyro.conf.OmitArgPrefixes] = ToyLearner()
    options: ToyOptions = ToyOptions()


NESTED = {"quick": NestedConfig()}


@pytest.mark.parametrize("argv, line", [
    (["--stepz", "3"], "unknown flag --stepz (did you mean --steps?)"),
    (["--momentun", "0.5"], "unknown flag --momentun (did you mean --momentum?)"),      # nested, no prefix
    (["--batch-sise", "4"], "unknown flag --batch-sise (did you mean --batch-size?)"),
    (["--options.dept", "4"], "unknown flag --options.dept (did you mean --options.depth?)"),  # prefixed
    (["--no-fats"], "unknown flag --no-fats (did you mean --no-fast?)"),
    (["--learner.momentum", "0.5"], "unknown flag --learner.momentum (did you mean --momentum?)"),
    (["--zzzzzzzz", "1"], "unknown flag --zzzzzzzz (see --help)"),
    (["--steps", "many"], "--steps needs an integer, got 'many'"),
    (["--steps=1.5"], "--steps needs an integer, got '1.5'"),
    (["--momentum", "fast"], "--momentum needs a number, got 'fast'"),
    (["--weights", "1", "x"], "--weights needs an integer, got 'x'"),
    (["--steps"], "--steps needs a value"),
    (["--steps", "--fast"], "--steps needs a value"),
    (["--fast=yes"], "--fast takes no value (use --fast alone)"),
    (["--steps", "3", "4"], "unexpected argument '4' (every value follows its --flag; see --help)"),
    (["extra"], "unexpected argument 'extra' (every value follows its --flag; see --help)"),
])
def test_a_bad_command_line_is_one_line_naming_the_nearest_flag(argv, line, capsys):
    with pytest.raises(SystemExit) as e:
        parse(NESTED, argv, prog="toy")
    assert e.value.code == 2
    assert capsys.readouterr().err == f"toy: error: {line}\n"


def test_every_spelling_tyro_takes_gets_through():
    _, c = parse(NESTED, ["--steps=7", "--fast", "--batch_size", "4", "--momentum", "-0.5",
                          "--options.depth", "3", "--weights", "-1", "5", "--run_name", "r"])
    assert (c.steps, c.fast, c.learner, c.options.depth, c.weights, c.run_name) == (
        7, True, ToyLearner(momentum=-0.5, batch_size=4), 3, (-1, 5), "r")
    assert parse(NESTED, ["--fast", "--no-fast", "--weights"])[1].fast is False


def test_help_still_lists_the_flags(capsys):
    with pytest.raises(SystemExit) as e:
        parse(NESTED, ["--steps", "x", "--help"], prog="toy")
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--steps" in out and "--momentum" in out and "--options.depth" in out


# -- budgets: int32 counts and the memory cap --------------------------------------------------


def test_integer_fields_are_bounded_by_int32_but_the_seed_by_its_own_range(capsys):
    assert parse(PRESETS, ["--steps", str(INT32_MAX)])[1].steps == INT32_MAX
    for argv in (["--steps", str(INT32_MAX + 1)], ["--steps", str(10**30)],
                 ["--keep-checkpoints", str(10**30)]):
        with pytest.raises(SystemExit) as e:
            parse(PRESETS, argv, prog="toy")
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "2,147,483,647 (2**31 - 1)" in err and "int32" in err
    assert parse(PRESETS, ["--seed", str(2**32 - 1)])[1].seed == 2**32 - 1  # WIDE_INT_FIELDS


def test_memory_estimate_is_what_is_held_plus_the_largest_passing_part():
    held = {"the table (size)": 100, "the buffer (buffer_size)": 50}
    passing = {"an update (games)": 30, "the evaluation (eval_games)": 70}
    assert memory_estimate(held, passing) == (220, "the table (size)")
    assert memory_estimate(held, {"an update (games)": 300}) == (450, "an update (games)")
    assert check_memory(held, passing, cap=220) == 220        # at the cap: allowed
    with pytest.raises(ValueError) as e:
        check_memory(held, passing, cap=219)
    assert "about 220 B" in str(e.value) and "its largest part is the table (size), 100 B" in str(e.value)
    with pytest.raises(ValueError, match=r"8 GiB memory cap \(MEMORY_CAP"):
        check_memory({"the pool (rounds)": MEMORY_CAP + 1})
    check_int32("x", INT32_MAX, "why")
    with pytest.raises(ValueError, match=r"x = 2,147,483,648 is past 2,147,483,647 \(2\*\*31 - 1\): why"):
        check_int32("x", INT32_MAX + 1, "why")


# -- the game of a run folder ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class OtherGameConfig(RunConfig):
    alpha: float = 0.5
    rounds: int = 3
    board_size: int = 7


def _move_run(tmp_path, src_game, dst_game, name="a"):
    (tmp_path / dst_game).mkdir(exist_ok=True)
    (tmp_path / src_game / name).rename(tmp_path / dst_game / name)
    return tmp_path / dst_game / name


def test_config_json_records_the_game_and_resume_keeps_it(tmp_path):
    cfg = ToyConfig(run_name="a", runs_dir=str(tmp_path))
    RunDir(tmp_path, "toy", cfg, resume=False).close()
    saved = json.loads((tmp_path / "toy" / "a" / "config.json").read_text())
    assert saved["game"] == "toy" and saved["steps"] == 10
    with RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True), resume=True) as run:
        assert run.game == "toy"
    assert json.loads((tmp_path / "toy" / "a" / "config.json").read_text())["game"] == "toy"


def test_another_games_run_is_named_not_a_field(tmp_path):
    other = OtherGameConfig(run_name="a", runs_dir=str(tmp_path))
    RunDir(tmp_path, "other", other, resume=False).close()
    run = _move_run(tmp_path, "other", "toy")
    cfg = ToyConfig(run_name="a", runs_dir=str(tmp_path))
    with pytest.raises(RunDirError) as e:
        RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True), resume=True)
    assert str(e.value) == (f"--resume: {run} holds a run of other, not of toy: choose another "
                            f"--run-name")
    with pytest.raises(RunDirError) as e:
        RunDir(tmp_path, "toy", cfg, resume=False)
    assert str(e.value) == f"{run} holds a run of other, not of toy: choose another --run-name"


def test_an_old_config_json_without_the_game_is_judged_by_its_fields(tmp_path):
    other = OtherGameConfig(run_name="a", runs_dir=str(tmp_path))
    RunDir(tmp_path, "other", other, resume=False).close()
    run = _move_run(tmp_path, "other", "toy")
    saved = run / "config.json"
    old = json.loads(saved.read_text())
    del old["game"]
    saved.write_text(json.dumps(old))
    cfg = ToyConfig(run_name="a", runs_dir=str(tmp_path), resume=True)
    with pytest.raises(RunDirError) as e:
        RunDir(tmp_path, "toy", cfg, resume=True)
    assert str(e.value) == (f"--resume: {run} is not a run of toy (its config.json has alpha, "
                            f"board_size, rounds, which toy runs do not): choose another --run-name")
    # reached through a link from runs/toy/: the folder's own parent names the game
    run.rename(tmp_path / "other" / "a")
    (tmp_path / "toy").rmdir()
    (tmp_path / "toy").symlink_to(tmp_path / "other")
    with pytest.raises(RunDirError, match="holds a run of other, not of toy"):
        RunDir(tmp_path, "toy", cfg, resume=True)


def test_an_old_config_json_of_this_game_resumes_and_a_changed_field_is_still_named(tmp_path):
    cfg = ToyConfig(run_name="a", runs_dir=str(tmp_path))
    RunDir(tmp_path, "toy", cfg, resume=False).close()
    saved = tmp_path / "toy" / "a" / "config.json"
    old = json.loads(saved.read_text())
    del old["game"]
    saved.write_text(json.dumps(old))
    RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True), resume=True).close()
    assert json.loads(saved.read_text())["game"] == "toy"     # written on resume
    # a field added since the run was made: refused as an older version's, not taken for another game
    del old["rate"]
    saved.write_text(json.dumps(old))
    with pytest.raises(RunDirError, match=r"--resume: .*config\.json was written by an older version of this "
                                          r"pipeline \(it has no rate, a setting added since\): it cannot be resumed"):
        RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True), resume=True)


@dataclasses.dataclass(frozen=True)
class LongerToyConfig(ToyConfig):
    EXTENDABLE_FIELDS = frozenset({"steps"})


def test_resume_may_raise_an_extendable_field_never_lower_it(tmp_path):
    cfg = LongerToyConfig(run_name="a", runs_dir=str(tmp_path), steps=10)
    RunDir(tmp_path, "toy", cfg, resume=False).close()
    saved = tmp_path / "toy" / "a" / "config.json"
    longer = dataclasses.replace(cfg, resume=True, steps=25)
    RunDir(tmp_path, "toy", longer, resume=True).close()
    assert json.loads(saved.read_text())["steps"] == 25          # the run's length from now on
    with pytest.raises(RunDirError) as e:
        RunDir(tmp_path, "toy", dataclasses.replace(cfg, resume=True, steps=24), resume=True)
    assert str(e.value) == ("--resume: steps may only grow (25 saved, 24 now): a run is carried on, never "
                            "cut short; resume with steps >= 25 or start another --run-name")
    assert json.loads(saved.read_text())["steps"] == 25
    # any other field still has to match, and without the class's consent a length is one of them
    with pytest.raises(RunDirError, match=r"--resume: rate differs from the saved run \(0.5 saved, 0.25 now\)"):
        RunDir(tmp_path, "toy", dataclasses.replace(longer, rate=0.25, steps=30), resume=True)
    plain = ToyConfig(run_name="b", runs_dir=str(tmp_path), steps=10)
    RunDir(tmp_path, "toy", plain, resume=False).close()
    with pytest.raises(RunDirError, match=r"--resume: steps differs from the saved run \(10 saved, 11 now\)"):
        RunDir(tmp_path, "toy", dataclasses.replace(plain, resume=True, steps=11), resume=True)


def test_the_build_key_drops_only_what_builds_nothing():
    cfg = LongerToyConfig(run_name="a", runs_dir="elsewhere", resume=True, progress=False, steps=25, rate=0.25, seed=3)
    key = cfg.build_key()
    assert key == LongerToyConfig(steps=LongerToyConfig().steps, rate=0.25, seed=3)
    assert key == dataclasses.replace(cfg, run_name="b", steps=7, keep_checkpoints=9).build_key()
    assert key != dataclasses.replace(cfg, rate=0.5).build_key()
    assert ToyConfig(steps=25).build_key().steps == 25        # a length no class lets grow stays in it
