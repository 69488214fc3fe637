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
if _OWN_CACHE:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jaxgames-test-xla-cache-")


def pytest_unconfigure(config):
    # the session that made the folder (the xdist controller, or a plain run) removes it
    if _OWN_CACHE and not hasattr(config, "workerinput"):
        shutil.rmtree(os.environ["JAX_COMPILATION_CACHE_DIR"], ignore_errors=True)


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
