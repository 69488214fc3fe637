"""The CPU thread layout (train/common/cpu_layout.py): the rule pins one core on the CPU
backend only, the environment and the flags override it, nothing changes once the backend has
started or with one CPU, bad values end with one line and exit status 2, and a real process
is pinned by the rule before its backend starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from train.common import UserError
from train.common import cpu_layout as cl


@pytest.fixture
def machine(monkeypatch):
    """A 2-CPU machine whose JAX has not started and no layout fixed by the environment."""
    monkeypatch.setattr(cl, "usable_cpus", lambda: [0, 1])
    monkeypatch.setattr(cl, "_backend_started", lambda: None)
    monkeypatch.delenv(cl.ENV, raising=False)


def choose(request="auto", platform="cpu"):
    return cl.choose(request, platform_of=lambda: platform)


def test_the_rule_is_one_core_on_the_cpu_backend(machine):
    d = choose()
    assert d.layout == cl.RULE == "one" and "rule" in d.line()
    assert choose("all").layout == "all" and choose("one").layout == "one"


def test_other_backends_a_started_backend_and_one_cpu_change_nothing(machine, monkeypatch):
    for request in cl.REQUESTS:
        d = choose(request, platform="gpu")
        assert d.layout is None and "gpu" in d.line()
    monkeypatch.setattr(cl, "_backend_started", lambda: "cpu")      # too late to pin
    assert choose().layout is None and "already started" in choose().how
    monkeypatch.setattr(cl, "_backend_started", lambda: None)
    monkeypatch.setattr(cl, "usable_cpus", lambda: [3])
    assert choose("one").layout is None


def test_the_environment_then_the_flags(machine, monkeypatch):
    monkeypatch.setenv(cl.ENV, "all")               # what the test suite sets: auto means all
    assert choose().layout == "all" and cl.ENV in choose().how
    assert choose("one").layout == "one"            # a flag wins
    monkeypatch.setenv(cl.ENV, "fast")
    with pytest.raises(UserError, match="JAXGAMES_CPU_LAYOUT must be one of auto, one, all, got 'fast'"):
        choose()
    with pytest.raises(ValueError, match="cpu_layout must be one of"):
        choose("measure")                          # the measured choice is gone


def test_a_plugin_or_jax_platforms_is_not_the_cpu(monkeypatch):
    monkeypatch.setattr(cl, "_backend_started", lambda: None)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda,cpu")
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    assert cl.backend() == "cuda"
    monkeypatch.delenv("JAX_PLATFORMS")
    monkeypatch.delenv("JAX_PLATFORM_NAME", raising=False)
    monkeypatch.setattr(cl, "_accelerator_plugins", lambda: True)
    assert cl.backend() != "cpu"
    monkeypatch.setattr(cl, "_accelerator_plugins", lambda: False)
    assert cl.backend() == "cpu"


def test_bad_flag_values_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    from bench import game2048_train
    from train import game2048

    for main, argv, message in (
            (game2048.main, ["--cpu-layout", "measure", "--runs-dir", str(tmp_path)], "cpu_layout must be one of"),
            (game2048_train.main, ["--layout", "fast"], "invalid choice: 'fast'"),
            (game2048_train.main, ["--one-core", "--layout", "all"], "contradicts --layout all")):
        with pytest.raises(SystemExit) as e:
            main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "game2048").exists()


PINNED = """
import os, sys
import jax, jax.numpy as jnp
from train.common import cpu_layout
cpu_layout.select(sys.argv[1], log=lambda line: print(line))
print(float(jnp.ones(3).sum()), jax.default_backend())   # the backend starts after the pin
print(len(os.sched_getaffinity(0)))
"""


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two usable CPUs to tell a pinned process from one that is not")
def test_a_real_process_is_pinned_by_the_rule_and_not_by_all():
    env = {k: v for k, v in os.environ.items() if k != cl.ENV}
    env["JAX_PLATFORMS"] = "cpu"
    lines = {}
    for request in ("auto", "all"):
        out = subprocess.run([sys.executable, "-c", PINNED, request], capture_output=True, text=True, env=env,
                             check=True, timeout=300).stdout.splitlines()
        lines[request] = out
    assert lines["auto"][0] == "cpu layout: one core (the rule for this learner, docs/benchmarks.md)"
    assert lines["auto"][1:] == ["3.0 cpu", "1"]
    assert lines["all"][1:] == ["3.0 cpu", str(len(os.sched_getaffinity(0)))]
