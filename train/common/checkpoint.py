"""Checkpoints through orbax: the training carry (params, optimizer state, tables ...), the
update step, the PRNG key, the config and a format version. No pickle.

A missing or corrupt checkpoint is reported with the path and what to do; nothing is deleted.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

FORMAT_VERSION = 1


class CheckpointError(RuntimeError):
    pass


class Checkpointer:
    def __init__(self, directory: str | pathlib.Path, *, keep: int = 3):
        self.directory = pathlib.Path(directory).absolute()
        self._manager = ocp.CheckpointManager(
            self.directory,
            options=ocp.CheckpointManagerOptions(max_to_keep=keep, create=True),
        )

    def save(self, step: int, carry: Any, key: jax.Array, config_json: str,
             extra: dict | None = None) -> None:
        meta = {"format_version": FORMAT_VERSION, "step": int(step), "config": json.loads(config_json),
                **(extra or {})}
        tree = {"carry": carry, "key": np.asarray(jax.random.key_data(key))}
        self._manager.save(
            int(step),
            args=ocp.args.Composite(state=ocp.args.StandardSave(tree), meta=ocp.args.JsonSave(meta)),
        )
        self._manager.wait_until_finished()

    def best_value(self) -> float:
        """The ``extra`` metric saved with the latest checkpoint (for a best-only manager)."""
        step = self._manager.latest_step()
        meta = self._manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]
        return max((float(v) for k, v in meta.items() if k not in ("format_version", "step", "config")),
                   default=-float("inf"))

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def restore(self, like_carry: Any, like_key: jax.Array) -> tuple[int, Any, jax.Array, dict]:
        """Latest checkpoint as ``(step, carry, key, meta)``; ``like_*`` give structure/dtypes."""
        step = self._manager.latest_step()
        if step is None:
            raise CheckpointError(
                f"no checkpoint in {self.directory}: the run never saved one; start it again "
                f"without --resume")
        like = {"carry": like_carry, "key": np.asarray(jax.random.key_data(like_key))}
        abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, like)
        try:
            restored = self._manager.restore(
                step,
                args=ocp.args.Composite(
                    state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore()),
            )
        except Exception as e:  # orbax raises many types for unreadable files
            raise CheckpointError(
                f"checkpoint {self.directory / str(step)} is unreadable or does not match this "
                f"configuration ({type(e).__name__}: {e}); delete that step folder to fall back "
                f"to an earlier one") from e
        meta = restored["meta"]
        if meta.get("format_version") != FORMAT_VERSION:
            raise CheckpointError(
                f"checkpoint {self.directory / str(step)} has format version "
                f"{meta.get('format_version')}, this code reads {FORMAT_VERSION}")
        key = jax.random.wrap_key_data(np.asarray(restored["state"]["key"]))
        return step, restored["state"]["carry"], key, meta

    def close(self) -> None:
        self._manager.close()
