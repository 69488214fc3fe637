import contextlib
import gc
import importlib.metadata
import os
import pathlib
import shutil
import sys
import tempfile
import typing

import pytest

# Tests import the repo's packages whether or not it is installed (a plain clone works too).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# One persistent XLA compilation cache for the whole session: the pytest-xdist workers and the
# pipelines the tests start as subprocesses inherit this variable, so a program compiled once
# (a tiny Hex or ten-and-a-half run, say) is loaded, not compiled again, by the next process.
# Most of the suite's time is compilation. Set before anything imports jax; a fresh folder per
# session, so a run never reads what an older version of the code compiled.
_OWN_CACHE = "JAX_COMPILATION_CACHE_DIR" not in os.environ
# The suite compiles for its own speed, not the programs': XLA's CPU backend with its older
# loop emitters, and JAX's "disable most optimizations" (LLVM at level 0, no expensive passes),
# compile a tiny Hex run 2.3x faster (48.5 s of compilation down to 21.2 s, a 77 s run to 53 s,
# on a 2-core CPU where compilation is the largest part of the suite). Subprocesses inherit
# both, so what a test compares is computed under the same settings in every process. The few
# tests that execute a lot more than they compile (whole matches of searching bots) turn the
# optimisations back on around that part: the ``optimised_compiles`` fixture. Set
# JAXGAMES_TEST_DEFAULT_COMPILES=1 to run the whole suite with XLA's and JAX's defaults.
# The second flag compiles each program's machine code in one piece instead of in parts on
# XLA's thread pool: the two test workers keep both cores busy already, and the parts' overhead
# cost 10% of the compile time (three test modules, 41.9 -> 37.8 s and 46.9 -> 42.2 s in two
# pairs of runs, a 2-core Intel Xeon, 2026-11-28).
TEST_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false --xla_cpu_parallel_codegen_split_count=1"
FAST_COMPILES = os.environ.get("JAXGAMES_TEST_DEFAULT_COMPILES", "0") in ("", "0")


def _xla_has_emitter_flag() -> bool:
    """Whether the installed XLA knows TEST_XLA_FLAGS' flags (jaxlib 0.10 and older). XLA ends
    the process on a flag it does not know, and under pytest's capture that end is silent: with
    jaxlib 0.11.2 (a GPU machine's) pytest exited 1 with no output at all."""
    try:
        major, minor = (int(p) for p in importlib.metadata.version("jaxlib").split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) < (0, 11)


if FAST_COMPILES:
    if _xla_has_emitter_flag() and TEST_XLA_FLAGS not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{TEST_XLA_FLAGS} {os.environ.get('XLA_FLAGS', '')}".strip()
    os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
if _OWN_CACHE:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxgames-test-xla-cache-")
# Every program goes in the cache, not only those that compile for over a second (JAX's
# default): under the settings above most compile in less, and the pipeline tests build the same
# programs again (a resumed run, a subprocess). The Hex run + resume test: 62 s -> 50 s.
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
# The 2048 pipeline and bench pin themselves to one core by default (train/common/cpu_layout.py);
# the suite keeps both cores for its own processes. Subprocesses inherit it.
os.environ.setdefault("JAXGAMES_CPU_LAYOUT", "all")
# Tracing a program makes millions of short-lived objects; with Python's default thresholds the
# collector runs through them all the time. Rarer collections cut the tiny Hex run's tracing
# from 20-25 s to 16-19 s (three pairs of runs, alternated, on the 2-core CPU). The pytest
# processes only: the pipelines started as subprocesses keep Python's defaults.
gc.set_threshold(50_000, 50, 100)


def pytest_unconfigure(config):
    # the session that made the folder (the xdist controller, or a plain run) removes it
    if _OWN_CACHE and not hasattr(config, "workerinput"):
        shutil.rmtree(os.environ["JAX_COMPILATION_CACHE_DIR"], ignore_errors=True)


@pytest.fixture(scope="session")
def optimised_compiles():
    """``with optimised_compiles(): ...`` compiles what runs inside with XLA's full
    optimisation: for the tests whose programs run for long (a match of searching bots), where
    the suite's fast compiles (above) would cost more in execution than they save. Programs
    compiled before keep their compiled form."""
    import jax

    @contextlib.contextmanager
    def optimised():
        before = jax.config.read("jax_disable_most_optimizations")
        jax.config.update("jax_disable_most_optimizations", False)
        try:
            yield
        finally:
            jax.config.update("jax_disable_most_optimizations", before)
    return optimised


@pytest.fixture
def on_one_and_four_devices():
    """``run(script)``: the Python ``script`` run at once in two processes, of 1 and of 4 CPU
    devices, each printing one JSON line last; their two dicts, (one, four)."""
    import json
    import subprocess
    from train.common.launcher import cpu_devices_env
    repo = pathlib.Path(__file__).resolve().parents[1]

    def start(script, n):
        env = dict(cpu_devices_env(os.environ, n), PYTHONPATH=str(repo))
        return subprocess.Popen([sys.executable, "-c", script], env=env, cwd=repo, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def result(proc):
        out, err = proc.communicate()
        assert proc.returncode == 0, err[-2000:]
        return json.loads(out.strip().splitlines()[-1])

    def run(script):
        procs = start(script, 1), start(script, 4)   # both at once
        return tuple(result(p) for p in procs)
    return run


@pytest.fixture
def exits_2_with_one_line(capsys):
    """``check(main, argv, message)``: ``main(argv)`` refuses the flags with exit status 2 and
    one ``error:`` line that contains ``message``, no traceback (every play CLI's contract)."""
    def check(main, argv, message):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if "error:" in line]) == 1
    return check


# -- tiny training runs that several test modules read ---------------------------------------------
# A module that reads a run trained by another module's fixture would train it again in its own
# worker: a tiny run is mostly tracing and compiling, and the persistent cache above spares only
# the compiling. So the modules that read one run are one unit of pytest-xdist's work
# (``--dist loadfile``, the Makefile's): they run in one worker, one after the other, and the
# session fixture trains the run once. Keys are the modules' paths from the repository's root.
SHARED_RUN_MODULES = {
    "tests/train/test_train_holdem.py": "the tiny hold'em run",
    "tests/holdem/test_agent.py": "the tiny hold'em run",
}


@pytest.hookimpl(optionalhook=True)   # a plain pytest without xdist runs the suite too
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist", None) != "loadfile":
        return None   # xdist's own scheduler for the mode asked for
    missing = [m for m in SHARED_RUN_MODULES if not (config.rootpath / m).is_file()]
    if missing:   # a module renamed: its run would silently train once per worker again
        raise pytest.UsageError(f"tests/conftest.py: SHARED_RUN_MODULES names no such module: {', '.join(missing)}")
    from xdist.scheduler import LoadFileScheduling

    class SharedRunScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_RUN_MODULES.get(scope, scope)

    return SharedRunScheduling(config, log)


class TinyRun(typing.NamedTuple):
    argv: list      # the run's flags, without --runs-dir and --run-name
    folder: pathlib.Path
    summary: dict   # what main() returned


#: the hold'em pipeline's test run: 2 rounds of 2 updates (the pool changes between them), LBR
#: every 2nd round and at the end, the final evaluation at the rounds' sizes (it reuses their
#: compiled programs: the run alone 37 s against 48 s, a 2-core Zen 5)
HOLDEM_TINY_RUN = ["--rounds", "2", "--updates-per-round", "2", "--num-envs", "16", "--num-steps", "4",
                   "--opponent-groups", "4", "--epochs", "1", "--minibatches", "2", "--eval-deals", "4",
                   "--final-eval-deals", "4", "--lbr-hands", "4", "--elo-deals", "2", "--lbr-every", "2",
                   "--round-lbr-hands", "4", "--no-progress"]


@pytest.fixture(scope="session")
def tiny_holdem_run(tmp_path_factory) -> TinyRun:
    """A finished ``python -m train.holdem`` run named "whole" (checkpoints/, best/, plots,
    report), trained once for tests/train/test_train_holdem.py and tests/holdem/test_agent.py.
    Read it; copy it before changing anything (resuming it too)."""
    from train import holdem

    root = tmp_path_factory.mktemp("tiny_holdem_run")
    summary = holdem.main(HOLDEM_TINY_RUN + ["--runs-dir", str(root), "--run-name", "whole"])
    return TinyRun(list(HOLDEM_TINY_RUN), root / "holdem" / "whole", summary)
