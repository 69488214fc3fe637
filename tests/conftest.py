import contextlib
import gc
import importlib.metadata
import os
import shutil
import sys
import tempfile

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
TEST_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false"
FAST_COMPILES = os.environ.get("JAXGAMES_TEST_DEFAULT_COMPILES", "0") in ("", "0")


def _xla_has_emitter_flag() -> bool:
    """Whether the installed XLA knows TEST_XLA_FLAGS' flag (jaxlib 0.10 and older). XLA ends
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
# The 2048 pipeline and bench measure the CPU thread layout once per machine and cache it
# (train/common/cpu_layout.py); the suite fixes it instead, so that no test spends seconds
# timing or writes the user's cache. Subprocesses inherit it.
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
