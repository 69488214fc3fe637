"""Gymnasium spaces of a game's observation, and the observation as NumPy in that layout.

A game's observation is an array (Hex, 2048, ten-and-a-half) or a dataclass of arrays
(hold'em's and Hearts' ``Observation``). An array becomes a ``Box`` of its shape and dtype;
a dataclass a ``Dict`` of its fields (nested dataclasses nest). Bounds: bool leaves 0..1,
integer leaves their dtype's whole range (the games give no tighter bound for every field;
a Box that is too tight would reject real observations), float leaves unbounded.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxgames.wrappers.requires import require

gym_spaces = require("gymnasium").spaces


def observation_space(spec: Any) -> Any:
    """The space of one observation; ``spec`` is ``env.observation_spec`` (or any pytree of
    arrays / ShapeDtypeStructs in the observation's structure)."""
    if dataclasses.is_dataclass(spec):
        return gym_spaces.Dict({f.name: observation_space(getattr(spec, f.name))
                                for f in dataclasses.fields(spec)})
    dtype = np.dtype(spec.dtype)
    if dtype == np.bool_:
        return gym_spaces.Box(0, 1, spec.shape, np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return gym_spaces.Box(info.min, info.max, spec.shape, dtype)
    return gym_spaces.Box(-np.inf, np.inf, spec.shape, dtype)


def action_mask_space(num_actions: int) -> Any:
    """``Box(0, 1, [num_actions], int8)``: the ``action_mask`` of PettingZoo's classic games."""
    return gym_spaces.Box(0, 1, (num_actions,), np.int8)


def to_numpy(obs: Any) -> Any:
    """``obs`` (already on the host) in :func:`observation_space`'s layout: a NumPy array, or
    a dict of them per dataclass field. Copies, so no two observations share memory."""
    if dataclasses.is_dataclass(obs):
        return {f.name: to_numpy(getattr(obs, f.name)) for f in dataclasses.fields(obs)}
    return np.array(obs)
