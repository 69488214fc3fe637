"""n-tuple network tables on disk: ``.npz`` (no pickle) with patterns, base, variant and a
format version, refused with a clear error when unreadable, mismatched or not finite."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.game2048.ntuple import NTupleNetwork

TABLES_FORMAT = 1


def export_tables(path, net: NTupleNetwork, weights, variant: str) -> None:
    np.savez_compressed(path, tables=np.asarray(net.tables(weights)), patterns=np.asarray(net.patterns),
                        base=net.base, variant=variant, format_version=TABLES_FORMAT)


def load_tables(path, net: NTupleNetwork, variant: str) -> jax.Array:
    """The flat float32 weights saved at ``path``; ValueError when they cannot serve ``net``."""
    try:
        with np.load(path, allow_pickle=False) as f:
            tables, patterns = f["tables"], f["patterns"]
            base, saved_variant, version = int(f["base"]), str(f["variant"]), int(f["format_version"])
    except Exception as e:
        raise ValueError(f"{path} is not a readable tables file ({type(e).__name__}: {e})") from e
    if version != TABLES_FORMAT:
        raise ValueError(f"{path}: format version {version}, this code reads {TABLES_FORMAT}")
    if tuple(map(tuple, patterns.tolist())) != net.patterns or base != net.base or saved_variant != variant:
        raise ValueError(f"{path} holds patterns {patterns.tolist()} base {base} variant {saved_variant}; "
                         f"this run uses {list(net.patterns)} base {net.base} variant {variant}")
    if tables.size != len(net.patterns) * net.table_size:
        raise ValueError(f"{path} holds {tables.size} weights; the network has "
                         f"{len(net.patterns) * net.table_size}")
    bad = int((~np.isfinite(tables)).sum())
    if bad:
        raise ValueError(f"{path} holds {bad:,} non-finite weights (NaN or inf): not a usable network")
    return jnp.asarray(tables.reshape(-1), jnp.float32)
