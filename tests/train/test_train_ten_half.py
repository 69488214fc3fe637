"""The ten-and-a-half pipeline end to end: CLI, run directory, resume, scale-out, notebook."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from train import ten_half
from train.common.launcher import cpu_devices_env
from one_line import assert_refused_in_one_line

REPO = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--episodes", "40000", "--episodes-per-update", "2000", "--updates-per-chunk", "5",
        "--arena-games", "2000", "--no-progress"]


def read_rows(run):
    return [json.loads(l) for l in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """One unbroken CLI run: what the CLI test checks, and what the resume test must give."""
    runs_dir = tmp_path_factory.mktemp("runs")
    summary = ten_half.main(TINY + ["--runs-dir", str(runs_dir), "--run-name", "t"])
    return summary, runs_dir / "ten_half" / "t"


def test_cli_run_writes_everything(whole):
    summary, run = whole
    saved = json.loads((run / "summary.json").read_text())
    for k in ("optimal_value", "on_policy_value", "off_policy_value", "on_policy_agreement",
              "off_policy_agreement", "episodes", "seconds", "on_policy_arena_mean",
              "off_policy_arena_ci95"):
        assert k in saved
    assert saved["episodes"] == 40000
    assert saved["optimal_value"] == pytest.approx(summary["optimal_value"])
    assert saved["on_policy_value"] <= saved["optimal_value"] + 1e-12
    for m in ("on_policy", "off_policy"):  # the arena's sampled value agrees with the exact one
        assert abs(saved[f"{m}_arena_mean"] - saved[f"{m}_value"]) < 3.5 * saved[f"{m}_arena_ci95"]
    for png in ("policy.png", "learning_curve.png", "max_q.png"):
        assert (run / "plots" / png).stat().st_size > 10_000
    assert "agreement with optimum" in (run / "report.md").read_text()
    rows = read_rows(run)
    assert [r["episodes"] for r in rows] == list(range(2000, 40001, 2000))
    assert json.loads((run / "config.json").read_text())["episodes"] == 40000


def test_resume_gives_exactly_the_unbroken_result(whole, tmp_path):
    unbroken, unbroken_run = whole
    base = TINY + ["--runs-dir", str(tmp_path)]
    _, cfg = ten_half.parse(ten_half.PRESETS, base + ["--run-name", "killed"])
    assert ten_half.train(cfg, stop_after_chunks=2) == {}  # "killed" after 2 of 4 chunks
    resumed = ten_half.main(base + ["--run-name", "killed", "--resume"])
    for k in unbroken:
        if k != "seconds":
            assert resumed[k] == unbroken[k], k
    assert read_rows(tmp_path / "ten_half" / "killed") == read_rows(unbroken_run)


def test_cli_rejects_bad_input(tmp_path, capsys):
    for argv, message in [(["--episodez", "5"], "episodez"),
                          (["--episodes", "1500", "--episodes-per-update", "1000"], "multiple"),
                          (["--epsilon", "1.5"], "epsilon")]:
        with pytest.raises(SystemExit) as e:
            ten_half.main(argv + ["--runs-dir", str(tmp_path)])
        assert e.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "ten_half").exists()  # nothing written before the error
    with pytest.raises(SystemExit) as e:  # an expected failure: one line, exit status 2
        ten_half.main(TINY + ["--runs-dir", str(tmp_path), "--resume"])
    assert e.value.code == 2 and "no run" in capsys.readouterr().err


_SHARDED = """
import json, jax, numpy as np
from train.algos import mc_control as mc
from train.common import make_chunk
from train.games import ten_half as lib
init, update = lib.joint(lib.learners(episodes_per_update=4000, epsilon=0.1, discount=1.0))
carry, _ = make_chunk(update, 4)(init(jax.random.key(0)), jax.random.key(5), 0)
print(json.dumps({"devices": jax.device_count(), **{m: np.asarray(mc.q_values(carry[m])).tolist() for m in lib.METHODS}}))
"""


def test_four_devices_match_one():
    def start(n):  # both processes at once
        env = dict(cpu_devices_env(os.environ, n), PYTHONPATH=str(REPO))
        return subprocess.Popen([sys.executable, "-c", _SHARDED], env=env, cwd=REPO, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def result(process):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-3000:]
        return json.loads(out.strip().splitlines()[-1])

    started = [start(1), start(4)]
    one, four = map(result, started)
    assert one["devices"] == 1 and four["devices"] == 4
    for m in ("on_policy", "off_policy"):
        np.testing.assert_allclose(four[m], one[m], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("argv, line", [
    (["--episodez", "5"], "unknown flag --episodez (did you mean --episodes?)"),
    (["--episodes", "many"], "--episodes needs an integer, got 'many'"),
    (["--episodes", str(10**30)],
     f"invalid configuration: episodes must be at most 2,147,483,647 (2**31 - 1): the run's counters "
     f"and array sizes are int32, got {10**30}"),
    (["--episodes", str(10**31), "--episodes-per-update", str(10**31)], "episodes must be at most 2,147,483,647"),
    (["--episodes", str(10**31), "--episodes-per-update", str(10**31), "--resume"],
     "episodes must be at most 2,147,483,647"),
    (["--episodes", "200000000", "--episodes-per-update", "100000000"],
     "8 GiB memory cap (MEMORY_CAP in train/common/config.py); its largest part is an update's "
     "episodes (episodes_per_update)"),
])
def test_unknown_flags_and_huge_budgets_are_one_line_before_anything_is_made(argv, line, tmp_path, capsys):
    assert_refused_in_one_line(ten_half.main, argv, line, tmp_path, capsys, game="ten_half",
                               start="python -m train.ten_half: error: ")


def test_the_largest_budget_within_the_bounds_is_accepted():
    from train.common.config import INT32_MAX, parse
    episodes = INT32_MAX // 1000 * 1000
    _, c = parse(ten_half.PRESETS, ["--episodes", str(episodes), "--episodes-per-update", "1000"])
    assert c.episodes == episodes and c.num_updates == INT32_MAX // 1000
    _, c = parse(ten_half.PRESETS, ["--episodes", "10000000", "--episodes-per-update", "10000000"])
    assert c.episodes_per_update == 10_000_000   # ~6 GiB of episodes: under the cap
