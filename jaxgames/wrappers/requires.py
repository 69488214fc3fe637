"""``require(name)``: import an optional library the wrappers need, or fail with one clear line.

PettingZoo and Gymnasium are not dependencies of jaxgames (they are in the ``dev`` extra); a
wrapper module imports its library through here so a missing one says what to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_INSTALL = {"gymnasium": "gymnasium>=1.0", "pettingzoo": "pettingzoo>=1.24"}


def require(name: str) -> ModuleType:
    """The top-level module ``name`` (``"gymnasium"`` or ``"pettingzoo"``)."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(
            f"jaxgames.wrappers needs {name}, which is not installed: "
            f"pip install '{_INSTALL.get(name, name)}' (or pip install 'jaxgames[dev]')") from err
