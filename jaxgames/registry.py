"""``jaxgames.make(id, **options)``: every game by name, imported on first use."""

from __future__ import annotations

import importlib
import inspect

from jaxgames.core import Env

# id -> "module:EnvClass"; modules are imported lazily so `import jaxgames` stays cheap.
_ENVS: dict[str, str] = {
    "ten_half": "jaxgames.ten_half.game:TenHalf",
    "2048": "jaxgames.game2048.game:Game2048",
    "hex": "jaxgames.hex.game:Hex",
    "holdem": "jaxgames.holdem.game:Holdem",
    "hearts": "jaxgames.hearts.game:Hearts",
}


def available() -> list[str]:
    return sorted(_ENVS)


def make(env_id: str, **options) -> Env:
    """Build the environment ``env_id`` with its keyword ``options``.

    Raises ValueError naming the valid ids (unknown game) or the valid options (unknown option).
    """
    if env_id not in _ENVS:
        raise ValueError(f"unknown game {env_id!r}; available: {', '.join(available())}")
    module_name, cls_name = _ENVS[env_id].split(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    params = inspect.signature(cls.__init__).parameters
    valid = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for {env_id!r}; "
            f"valid options: {', '.join(valid) or '(none)'}")
    return cls(**options)
