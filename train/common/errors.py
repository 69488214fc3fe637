"""The expected failures of a pipeline: :class:`UserError`, which the CLI prints on one line
before it exits with status 2 (``train/common/exits.py``); anything else is a bug and keeps
its traceback.

A module of its own, importing nothing, so that every part of ``train/common`` that refuses
bad input (the run folder, checkpoints, the multi-host launch) can raise it without importing
the exit machinery, which itself needs the multi-host modules.
"""

from __future__ import annotations

__all__ = ["UserError"]


class UserError(Exception):
    """A failure the user can fix (bad input, a run folder in use, a damaged file ...)."""
