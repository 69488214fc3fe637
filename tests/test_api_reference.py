"""The API reference (docs/api_reference.py, ``make docs``): every docstring reference resolves;
the HTML build itself is slow (pdoc imports and renders all modules) and runs in make test-slow."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def api():
    spec = importlib.util.spec_from_file_location("api_reference", ROOT / "docs" / "api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_fully_qualified_docstring_reference_resolves(api):
    modules = api.public_modules()
    assert "jaxgames.arena" in modules and "train.algos.linear_td" in modules
    assert not any(part.startswith("_") for name in modules for part in name.split("."))
    assert api.broken_references(modules) == []


def test_a_broken_reference_is_reported_with_its_line(api):
    source = ('"""Module: see `jaxgames.arena.play`."""\n\n'
              'def f():\n    """Calls :func:`jaxgames.arena.no_such_function` and `train.algos`."""\n')
    assert api.references(source) == [(1, "jaxgames.arena.play"), (4, "jaxgames.arena.no_such_function"),
                                      (4, "train.algos")]
    assert api.resolves("jaxgames.arena.play") and api.resolves("train.algos")
    assert not api.resolves("jaxgames.arena.no_such_function")
    assert not api.resolves("jaxgames.no_such_module.thing")


@pytest.mark.slow
def test_make_docs_writes_a_linked_reference_of_every_public_module(api, tmp_path):
    assert api.main(["--output", str(tmp_path)]) == 0
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    for name in api.public_modules():
        assert name.replace(".", "/") + ".html" in pages
    # a backticked name in a docstring became a link to its page
    evaluate = (tmp_path / "jaxgames" / "hearts" / "evaluate.html").read_text()
    assert 'href="../arena.html#mixed_seatings"' in evaluate
