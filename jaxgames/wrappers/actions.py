"""``as_action(action, num_actions)``: a wrapper's action checked on the host, before any jit."""

from __future__ import annotations

import operator

import numpy as np

_INT32_MAX = 2**31 - 1


def as_action(action, where: str) -> np.int32:
    """``action`` (a Python or NumPy integer, or a 0-d integer array) as an int32.

    A bool, float or anything else is a TypeError; an integer that does not fit an int32 a
    ValueError (an int32 out of the action range reaches the game, which calls it illegal)."""
    if isinstance(action, (bool, np.bool_)) or (isinstance(action, np.ndarray) and action.dtype == np.bool_):
        raise TypeError(f"{where}: actions are integers, got {type(action).__name__} {action!r}")
    try:
        value = operator.index(action)
    except TypeError:
        raise TypeError(f"{where}: actions are integers, got {type(action).__name__} {action!r}") from None
    if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        raise ValueError(f"{where}: action {value} does not fit an int32")
    return np.int32(value)
