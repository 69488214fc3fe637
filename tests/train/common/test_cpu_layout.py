"""The CPU thread layout choice (train/common/cpu_layout.py) with a stand-in timer: it keeps the
fastest layout, a cache hit measures nothing, a damaged cache is said on one line and measured
over, another backend changes nothing, and bad values end with one line and exit status 2.
One test runs the real child processes on a stand-in probe (no JAX work timed)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from train.common import cpu_layout as cl

PROBE = cl.Probe("stand.in:probe", {"num_games": 128})


class Timer:
    """Stands in for measuring: fixed rates, and counts its calls."""

    def __init__(self, **rates):
        self.rates, self.calls = rates, 0

    def __call__(self, probe):
        self.calls += 1
        return dict(self.rates)


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """A 2-CPU machine whose JAX has not started, no layout fixed by the environment, a cache
    file of its own; returns the cache path and the lines logged."""
    monkeypatch.setattr(cl, "usable_cpus", lambda: [0, 1])
    monkeypatch.setattr(cl, "_backend_started", lambda: None)
    monkeypatch.delenv(cl.ENV, raising=False)
    lines: list[str] = []
    machine.lines = lines
    return tmp_path / "cpu_layout.json", lines


def choose(cache, lines, request="auto", timer=None, platform="cpu"):
    return cl.choose(request, PROBE, cache=cache, measure=timer or Timer(all=1.0, one=2.0),
                     platform_of=lambda: platform, log=lines.append)


@pytest.mark.parametrize("rates, best", [({"all": 1.0e6, "one": 1.5e6}, "one"),
                                         ({"all": 1.7e6, "one": 1.5e6}, "all"),
                                         ({"all": 1.5e6, "one": 1.5e6}, "all")])   # a tie changes nothing
def test_the_fastest_layout_is_chosen_and_cached(machine, rates, best):
    cache, lines = machine
    d = choose(cache, lines, timer=Timer(**rates))
    assert (d.layout, d.how, dict(d.rates)) == (best, "measured", rates)
    entry = json.loads(cache.read_text())["entries"][cl.cache_key(PROBE)]
    assert entry["layout"] == best and entry["rates"] == rates
    assert d.line().startswith(f"cpu layout: {cl.LAYOUT_WORDS[best]} (measured now")


def test_a_cache_hit_measures_nothing(machine):
    cache, lines = machine
    choose(cache, lines, timer=Timer(all=1.0, one=2.0))
    timer = Timer(all=5.0, one=1.0)
    d = choose(cache, lines, timer=timer)
    assert (d.layout, d.how, d.seconds, timer.calls) == ("one", "cached", 0.0, 0)
    assert "--cpu-layout measure" in d.line()
    # another probe (another batch size) is another entry, measured on its own
    other = cl.choose("auto", cl.Probe("stand.in:probe", {"num_games": 4096}), cache=cache, measure=timer,
                      platform_of=lambda: "cpu", log=lines.append)
    assert (other.layout, timer.calls) == ("all", 1)
    assert len(json.loads(cache.read_text())["entries"]) == 2
    # "measure" measures again and replaces the entry
    d = choose(cache, lines, request="measure", timer=timer)
    assert (d.layout, d.how, timer.calls) == ("all", "measured", 2)
    assert choose(cache, lines, timer=Timer()).layout == "all"
    assert lines == []


@pytest.mark.parametrize("text", ["{not json", json.dumps({"version": 1, "entries": {"k": {"layout": "two"}}}),
                                  json.dumps({"version": 1, "entries": {"k": {"layout": "one", "rates": {"one": "x"}}}}),
                                  json.dumps([1, 2]), json.dumps({"version": 99, "entries": {}})])
def test_a_damaged_cache_is_said_in_one_line_and_measured_over(machine, text):
    cache, lines = machine
    cache.write_text(text)
    timer = Timer(all=1.0, one=2.0)
    d = choose(cache, lines, timer=timer)
    assert (d.layout, d.how, timer.calls) == ("one", "measured", 1)
    assert len(lines) == 1 and "ignoring the damaged cache" in lines[0] and str(cache) in lines[0], lines
    assert "\n" not in lines[0]
    assert json.loads(cache.read_text())["entries"][cl.cache_key(PROBE)]["layout"] == "one"   # rewritten


def test_other_backends_and_one_cpu_change_nothing(machine, monkeypatch):
    cache, lines = machine
    timer = Timer(all=1.0, one=2.0)
    for request in ("auto", "one", "measure"):
        d = choose(cache, lines, request=request, timer=timer, platform="gpu")
        assert d.layout is None and "gpu" in d.how
    monkeypatch.setattr(cl, "_backend_started", lambda: "cpu")   # too late to pin
    assert choose(cache, lines, timer=timer).layout is None
    monkeypatch.setattr(cl, "_backend_started", lambda: None)
    monkeypatch.setattr(cl, "usable_cpus", lambda: [3])
    assert choose(cache, lines, timer=timer).layout is None
    assert timer.calls == 0 and not cache.exists()


def test_forced_layouts_and_the_environment(machine, monkeypatch):
    cache, lines = machine
    timer = Timer(all=1.0, one=2.0)
    assert choose(cache, lines, request="all", timer=timer).layout == "all"
    monkeypatch.setenv(cl.ENV, "all")               # what the test suite sets: auto means all
    assert choose(cache, lines, timer=timer).layout == "all"
    assert choose(cache, lines, request="one", timer=timer).layout == "one"   # a flag wins
    assert timer.calls == 0
    monkeypatch.setenv(cl.ENV, "fast")
    with pytest.raises(ValueError, match="JAXGAMES_CPU_LAYOUT must be one of auto, all, one, measure"):
        choose(cache, lines, timer=timer)
    with pytest.raises(ValueError, match="cpu_layout must be one of"):
        cl.choose("fast", PROBE, cache=cache, measure=timer)


def test_a_failed_measurement_keeps_all_cores_and_caches_nothing(machine):
    cache, lines = machine

    def broken(probe):
        raise RuntimeError("the 'one' probe failed: ImportError: no module stand")

    d = cl.choose("auto", PROBE, cache=cache, measure=broken, platform_of=lambda: "cpu", log=lines.append)
    assert d.layout is None and len(lines) == 1 and "ImportError" in lines[0]
    assert not cache.exists()


def test_bad_flag_values_exit_2_with_one_line(tmp_path, capsys):
    from bench import game2048_train
    from train import game2048

    for main, argv, message in (
            (game2048.main, ["--cpu-layout", "fast", "--runs-dir", str(tmp_path)], "cpu_layout must be one of"),
            (game2048_train.main, ["--layout", "fast"], "invalid choice: 'fast'"),
            (game2048_train.main, ["--one-core", "--layout", "all"], "contradicts --layout all")):
        with pytest.raises(SystemExit) as e:
            main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "game2048").exists()


STAND_IN = '''
import os
def probe(one=2.0, all=1.0, fail=False):
    if fail:
        raise ValueError("stand-in set-up failed")
    pinned = len(os.sched_getaffinity(0)) == 1
    print("a probe that talks on stdout")   # must not be read as an answer
    return lambda seconds: one if pinned else all
'''


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two usable CPUs to tell a pinned child from one that is not")
def test_the_children_pin_themselves_and_answer_in_turns(tmp_path, monkeypatch):
    (tmp_path / "stand_in_probe.py").write_text(STAND_IN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    rates = cl.measure_in_children(cl.Probe("stand_in_probe:probe", {"one": 3.0, "all": 1.5}),
                                   burst_seconds=0.01)
    assert rates == {"all": 1.5, "one": 3.0}
    with pytest.raises(RuntimeError, match="the 'one' probe failed: ValueError: stand-in set-up failed"):
        cl.measure_in_children(cl.Probe("stand_in_probe:probe", {"fail": True}), layouts=("one",))
    assert sys.modules.get("stand_in_probe") is None   # the probe ran in the children only
