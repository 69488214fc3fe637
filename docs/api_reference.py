"""The API reference: HTML from the docstrings of every public module of ``jaxgames`` and
``train``, by pdoc, into ``build/api/`` (``make docs``; open ``build/api/index.html``).

    python docs/api_reference.py [--output DIR] [--check-only]

pdoc (not mkdocs): it reads the modules themselves, so the reference needs no configuration or
page list to keep in step with the code, and it links the backticked names our docstrings
already use. It leaves a name it cannot resolve as plain text, so the references are checked
here first: every fully qualified ``jaxgames.*`` / ``train.*`` name in backticks in a docstring
must import; a broken one is listed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import pathlib
import pkgutil
import re
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("jaxgames", "train")
#: a backticked fully qualified name, bare or in a Sphinx role (:func:`jaxgames.arena.play`)
REFERENCE = re.compile(r"`((?:jaxgames|train)(?:\.\w+)+)`")


def public_modules() -> list[str]:
    """Every module and package under :data:`PACKAGES` whose dotted name has no part starting
    with ``_`` (``__main__`` and private helpers stay out)."""
    names = []
    for package in PACKAGES:
        names.append(package)
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


def references(source: str) -> list[tuple[int, str]]:
    """``[(line, name)]``: the fully qualified names in backticks in the docstrings of a
    module's source (the module's, its classes' and its functions')."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=False)
        if doc:
            line = node.body[0].lineno
            found += [(line, m.group(1)) for m in REFERENCE.finditer(doc)]
    return found


def resolves(name: str) -> bool:
    """Whether ``name`` is an importable module or an attribute path inside one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
        return True
    return False


def broken_references(modules: list[str]) -> list[str]:
    """``"path:line: name"`` for each reference of :func:`references` that does not resolve."""
    broken = []
    for name in modules:
        path = pathlib.Path(importlib.import_module(name).__file__)
        for line, ref in references(path.read_text()):
            if not resolves(ref):
                broken.append(f"{path.relative_to(ROOT)}:{line}: {ref}")
    return broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python docs/api_reference.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(ROOT / "build" / "api"), help="folder for the HTML (default build/api)")
    parser.add_argument("--check-only", action="store_true", help="check the references, write nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    modules = public_modules()
    broken = broken_references(modules)
    if broken:
        print(f"{len(broken)} broken reference(s) in docstrings:", *broken, sep="\n  ", file=sys.stderr)
        return 1
    if not args.check_only:
        import pdoc

        # string annotations naming types imported only for type checkers: pdoc shows them as
        # written, which is right, and would warn once per use
        warnings.filterwarnings("ignore", message="Error parsing type annotation")
        pdoc.render.configure(search=True)
        pdoc.pdoc(*modules, output_directory=pathlib.Path(args.output))
        print(f"API reference of {len(modules)} modules: {args.output}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
