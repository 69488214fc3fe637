"""The checkpoint format of a run folder, the one place that knows it.

Training (``train/common/checkpoint.py``: rotation, the best checkpoint, falling back past
damaged files, multi-host saves) writes through this module, and whatever plays a trained
run (``jaxgames.hex.agent``, shipped models) reads through it, so the two cannot drift apart.

A run folder ``runs/<game>/<run>/`` holds its checkpoints in two folders of step folders:

- ``checkpoints/<step>/`` (:data:`LATEST`): the whole training carry, the newest few kept;
- ``best/<step>/`` (:data:`BEST`): the parameters only, at the best evaluation so far.

A step folder is an orbax checkpoint of two items:

- ``state/``: ``{"carry": tree, "key": uint32 key data}`` (orbax's standard pytree format);
- ``meta/``: a JSON object ``{"format_version": FORMAT_VERSION, "step": int, "config":
  {...the run's config...}, ...}`` and any numbers saved with it (a best checkpoint's score).

A single parameter tree also travels as a portable ``.npz`` file (:func:`write_npz`,
:func:`read_npz`: the agents shipped in ``jaxgames.pretrained``): one array per leaf, keyed by
its tree path (``jax.tree_util.keystr``, e.g. ``['params']['dense']['kernel']``), read back
into the tree of a ``like`` tree, never through pickle.

Not step folders: ``<step>.orbax-checkpoint-tmp*`` (:data:`TMP_MARK`, a save cut short by a
kill) and ``damaged-<step>[-n]`` (:data:`DAMAGED_PREFIX`, set aside by training after it could
not be read). No pickle anywhere.

Every expected failure raises :class:`CheckpointError` (a ``ValueError``), one line naming the
folder and the problem: no checkpoint, unreadable files ("is unreadable: its files are damaged
or incomplete"), unreadable metadata, another format version (:class:`OtherFormatError`),
parameters that do not fit the tree they are read into, non-finite parameters; for an
``.npz`` file, one line naming the file: unreadable (damaged, not an ``.npz``), a key missing
or extra, a shape or dtype that differs, non-finite values.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pathlib
import re
import sys
import zipfile
from typing import Any, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

from jaxgames.run_folder import one_line

__all__ = [
    "BEST",
    "DAMAGED_PREFIX",
    "FORMAT_VERSION",
    "LATEST",
    "META_KEYS",
    "TMP_MARK",
    "CheckpointError",
    "OtherFormatError",
    "aside_path",
    "check_meta",
    "check_shapes",
    "find_step",
    "meta_args",
    "params_path",
    "read_meta",
    "read_npz",
    "read_params",
    "restore_args",
    "save_args",
    "state_tree",
    "step_numbers",
    "unpack",
    "unreadable",
    "write_npz",
]

FORMAT_VERSION = 1
#: the folders of a run folder: the latest checkpoints (whole carry), the best (parameters)
LATEST = "checkpoints"
BEST = "best"
#: in the name of a save cut short (orbax's temporary folder)
TMP_MARK = ".orbax-checkpoint-tmp"
#: the name of a step folder set aside as unreadable: ``damaged-<step>``, ``damaged-<step>-<n>``
DAMAGED_PREFIX = "damaged-"
#: the metadata fields every checkpoint has; any other is a number saved with it
META_KEYS = ("format_version", "step", "config")

_FOLDERS = {"best": BEST, "latest": LATEST}
#: the names of the parameters inside a training carry, in the order they are preferred
_PARAMS_NAMES = ("average", "params", "weights")


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, of another format version, or that does not
    fit what it is read into; the message names the folder and the problem."""


class OtherFormatError(CheckpointError):
    """Readable, but written by another format version (the files are not damaged)."""


# -- writing (the training's checkpoint manager) -------------------------------------------------


def state_tree(tree: Any, key: jax.Array) -> dict:
    """The ``state`` item of a step folder: ``{"carry": tree, "key": key data}``."""
    return {"carry": tree, "key": np.asarray(jax.random.key_data(key))}


def save_args(state: Any, step: int, config: dict, extra: dict | None = None) -> ocp.args.Composite:
    """The orbax arguments that save a step folder: ``state`` (from :func:`state_tree`) and the
    metadata, with ``extra`` (a flat dict of numbers) beside the format's own fields."""
    meta = {"format_version": FORMAT_VERSION, "step": int(step), "config": config, **(extra or {})}
    return ocp.args.Composite(state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta))


def restore_args(abstract_state: Any) -> ocp.args.Composite:
    """The orbax arguments that restore a whole step folder into ``abstract_state`` (the
    shapes and dtypes of a :func:`state_tree`)."""
    return ocp.args.Composite(state=ocp.args.StandardRestore(abstract_state), meta=ocp.args.JsonRestore())


def meta_args() -> ocp.args.Composite:
    """The orbax arguments that restore only the metadata of a step folder."""
    return ocp.args.Composite(meta=ocp.args.JsonRestore())


def unpack(restored: Any, step_dir: pathlib.Path) -> tuple[Any, jax.Array, dict]:
    """``(carry, key, meta)`` of a step folder restored with :func:`restore_args`; a checkpoint
    of another format version raises :class:`OtherFormatError`."""
    meta = _check_version(restored["meta"], step_dir)
    key = jax.random.wrap_key_data(np.asarray(restored["state"]["key"]))
    return restored["state"]["carry"], key, meta


def check_meta(meta: Any, step_dir: pathlib.Path) -> dict:
    """``meta`` if it is the JSON object a step folder's metadata is, else the error that says
    the metadata is unreadable."""
    if not isinstance(meta, dict):
        raise unreadable(step_dir, ValueError("the metadata is not a JSON object"), what="the metadata of checkpoint")
    return meta


def check_shapes(step_dir: pathlib.Path, abstract_state: Any) -> None:
    """Raise :class:`CheckpointError` naming the first array whose stored shape or dtype
    differs from ``abstract_state``'s (e.g. a pool sized by another number of rounds), read
    from the step folder's metadata before any array is: a restore that fails partway leaves
    orbax's pending reads behind, whose tracebacks then flood stderr at exit. Metadata that
    cannot be read, or paths that do not line up, are left to the restore itself to judge."""
    try:
        stored = ocp.StandardCheckpointHandler().metadata(step_dir / "state")
        stored = _leaf_names(getattr(stored, "item_metadata", stored))
    except Exception:  # orbax raises many types for unreadable files
        return
    for path, want in _leaf_names(abstract_state).items():
        have = stored.get(path)
        if have is None:
            continue
        if tuple(have.shape) != tuple(want.shape) or np.dtype(have.dtype) != np.dtype(want.dtype):
            raise CheckpointError(
                f"checkpoint {step_dir} does not match this configuration: {'/'.join(path)} is "
                f"{np.dtype(have.dtype).name}{list(have.shape)} there and "
                f"{np.dtype(want.dtype).name}{list(want.shape)} here")


def _check_version(meta: Any, step_dir: pathlib.Path) -> dict:
    version = meta.get("format_version") if isinstance(meta, dict) else None
    if version != FORMAT_VERSION:
        raise OtherFormatError(f"checkpoint {step_dir} has format version {version}, this code "
                               f"reads {FORMAT_VERSION}")
    return meta


def aside_path(folder: pathlib.Path, step: int) -> pathlib.Path:
    """A free name in ``folder`` for the unreadable step folder ``step`` to be moved to."""
    target = folder / f"{DAMAGED_PREFIX}{step}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{DAMAGED_PREFIX}{step}-{n}"
    return target


def unreadable(step_dir: pathlib.Path, e: BaseException, what: str = "checkpoint",
               why: str = "its files are damaged or incomplete") -> CheckpointError:
    """The error for files orbax could not read (``e``, what it raised)."""
    return CheckpointError(f"{what} {step_dir} is unreadable: {why} ({type(e).__name__}: {one_line(e)})")


# -- reading (agents and shipped models) ---------------------------------------------------------


def step_numbers(folder: pathlib.Path) -> list[int]:
    """The saved steps in ``folder`` (``best/`` or ``checkpoints/``), ascending; saves cut
    short and folders set aside as damaged are not steps."""
    folder = pathlib.Path(folder)
    try:
        return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit() and p.is_dir())
    except OSError:  # missing or unlistable
        return []


def find_step(run_dir: str | pathlib.Path, which: Sequence[str] = ("best", "latest")) -> pathlib.Path:
    """The newest step folder of the first of ``which`` (``"best"``, ``"latest"``) that holds
    one: by default the best parameters, else the newest checkpoint of the carry."""
    run = pathlib.Path(run_dir)
    for kind in which:
        steps = step_numbers(run / _FOLDERS[kind])
        if steps:
            return run / _FOLDERS[kind] / str(steps[-1])
    names = " nor ".join(f"{_FOLDERS[k]}/" for k in which)
    raise CheckpointError(f"{run} holds no checkpoint: {'neither ' if len(which) > 1 else ''}{names} "
                          f"{'has a' if len(which) > 1 else 'has no'} saved step")


def read_meta(step_dir: pathlib.Path) -> dict:
    """The metadata of a step folder (its format version checked)."""
    step_dir = pathlib.Path(step_dir)
    _drop_stragglers()
    with _quiet_orbax():
        try:
            meta = ocp.Checkpointer(ocp.JsonCheckpointHandler()).restore(step_dir.absolute() / "meta")
        except Exception as e:  # orbax raises many types for unreadable files
            raise unreadable(step_dir, e, what="the metadata of checkpoint") from None
    return _check_version(check_meta(meta, step_dir), step_dir)


def read_params(step_dir: pathlib.Path, like: Any, *, fits: str = "the tree it is read into") -> Any:
    """The parameters saved in a step folder, as jax arrays in the tree, shapes and dtypes of
    ``like`` (arrays or ``jax.ShapeDtypeStruct``s, e.g. ``jax.eval_shape`` of a network's
    ``init``). In ``best/`` the carry is the parameters; in ``checkpoints/`` they are found
    inside the training carry (:func:`params_path`). Only those arrays are read. ``fits``
    describes ``like`` in the error when nothing in the checkpoint fits it."""
    step_dir = pathlib.Path(step_dir)
    # orbax reads a relative path's metadata as missing (tree None): it is handed the absolute
    # one, the messages keep the path as given
    state_dir = step_dir.absolute() / "state"
    _drop_stragglers()
    with _quiet_orbax():
        try:
            tree = getattr(ocp.PyTreeCheckpointer().metadata(state_dir).item_metadata, "tree", None)
        except Exception as e:  # orbax raises many types for unreadable files
            raise unreadable(step_dir, e) from None
        if not isinstance(tree, dict) or "carry" not in tree:  # orbax gives None when it failed
            raise CheckpointError(f"checkpoint {step_dir} is unreadable: its files are damaged or "
                                  f"incomplete (" + ("orbax cannot read the arrays' metadata" if tree
                                                     is None else "the saved tree holds no 'carry'")
                                  + f" in {state_dir})")
        path = params_path(tree["carry"], like)
        if path is None:
            raise CheckpointError(f"checkpoint {step_dir} holds no parameters that fit {fits}"
                                  f"{_mismatch(tree['carry'], like)}")
        item = like
        for k in reversed(("carry",) + path):
            item = {k: item}
        restore_args = jax.tree_util.tree_map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), item)
        try:
            restored = ocp.PyTreeCheckpointer().restore(
                state_dir, args=ocp.args.PyTreeRestore(item=item, restore_args=restore_args,
                                                       partial_restore=True))
        except Exception as e:
            raise unreadable(step_dir, e) from None
    params = restored["carry"]
    for k in path:
        params = params[k]
    if jax.tree_util.tree_structure(params) != jax.tree_util.tree_structure(like):
        raise CheckpointError(f"checkpoint {step_dir} holds parameters that do not fit {fits}")
    for got, want in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(like)):
        # (a partial restore hands back the placeholder of a leaf it did not find)
        if not isinstance(got, np.ndarray) or got.shape != tuple(want.shape):
            raise CheckpointError(f"checkpoint {step_dir} holds parameters that do not fit {fits}")
        if not np.all(np.isfinite(got)):
            raise CheckpointError(f"checkpoint {step_dir} holds non-finite parameters (NaN or inf): "
                                  f"the file is damaged or the training diverged")
    return jax.tree_util.tree_map(lambda x, s: jnp.asarray(x, s.dtype), params, like)


def params_path(carry: Any, like: Any) -> tuple | None:
    """Where in a saved carry the parameters of ``like``'s tree are: ``()`` when the carry is
    the parameters (``best/``), else the shallowest node named ``average``, ``params`` or
    ``weights`` (a linear learner's, ``train.algos.linear_td``) whose tree, shapes and dtypes
    are ``like``'s (``checkpoints/``: the learner's model, not the optimizer's copies of their
    shape, nor a league pool's stacked ones). ``average`` comes first: it is the model that
    plays (the SGD iterate ``params`` itself unless the learner averages); checkpoints written
    before it joined the carry hold ``params`` alone. None when nothing fits."""
    if _fits(carry, like):
        return ()
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _PARAMS_NAMES and _fits(v, like):
                    found.append(path + (k,))
                walk(v, path + (k,))

    walk(carry, ())
    return min(found, key=lambda p: (len(p), _PARAMS_NAMES.index(p[-1]))) if found else None


def _fits(node: Any, like: Any) -> bool:
    try:
        leaves, treedef = jax.tree_util.tree_flatten(node)
    except Exception:
        return False
    want, want_def = jax.tree_util.tree_flatten(like)
    if treedef != want_def:
        return False
    return all(tuple(getattr(a, "shape", ())) == tuple(b.shape)
               and np.dtype(getattr(a, "dtype", None)) == np.dtype(b.dtype)
               for a, b in zip(leaves, want))


def _mismatch(carry: Any, like: Any) -> str:
    """``: <leaf> has shape ... (... expected)`` for the first differing leaf of a carry that
    has ``like``'s tree but other shapes (e.g. another board size); else ''."""
    if not isinstance(carry, dict):
        return ""
    got = dict(jax.tree_util.tree_flatten_with_path(carry)[0])
    for path, want in jax.tree_util.tree_flatten_with_path(like)[0]:
        have = got.get(path)
        if have is not None and tuple(getattr(have, "shape", ())) != tuple(want.shape):
            name = "/".join(str(getattr(p, "key", p)) for p in path)
            return f": {name} has shape {tuple(have.shape)} in the checkpoint, {tuple(want.shape)} expected"
    return ""


def _leaf_names(tree: Any) -> dict[tuple[str, ...], Any]:
    """``{path as names: leaf}`` of a pytree whose leaves have a shape; a dataclass field and a
    dict key of the same name give the same path (orbax stores dataclasses as dicts)."""
    def name(k):
        for attr in ("key", "name", "idx"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)
    leaves = jax.tree_util.tree_leaves_with_path(tree, is_leaf=lambda x: hasattr(x, "shape"))
    return {tuple(name(k) for k in path): leaf for path, leaf in leaves}


@contextlib.contextmanager
def _quiet_orbax() -> Iterator[None]:
    """orbax logs (absl) a warning for every step folder opened by itself, not through the
    CheckpointManager that wrote it: not news to a person loading a trained player."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class _UnretrievedReads(logging.Filter):
    """Drops asyncio's "Future (or Task) exception was never retrieved" for a failed
    tensorstore read."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        # "Future", "Task" or "_GatheringFuture exception was never retrieved" (its class's name)
        first = message.split("\n", 1)[0]
        return not (re.fullmatch(r"\w+ exception was never retrieved", first)
                    and any(word in message for word in ("tensorstore", "OCDBT", "zarr")))


_UNRETRIEVED_READS = _UnretrievedReads()


def _drop_stragglers() -> None:
    """When orbax fails to read damaged files, the reads it still has in flight finish on an
    event loop it has closed, and each reports ``RuntimeError: Event loop is closed`` through
    ``sys.unraisablehook`` (a traceback on stderr, at any later time); a failed read whose
    future or task nobody awaited is logged by asyncio as "Future (Task) exception was never
    retrieved" when it is collected (seen in fresh-clone suite runs: an extra stderr line). Noise around
    the clear error raised here. Installed before orbax is called; drops exactly those reports
    and passes every other one on."""
    asyncio_logger = logging.getLogger("asyncio")
    if _UNRETRIEVED_READS not in asyncio_logger.filters:
        asyncio_logger.addFilter(_UNRETRIEVED_READS)
    if getattr(sys.unraisablehook, "_jaxgames_checkpoints", False):
        return
    previous = sys.unraisablehook

    def hook(unraisable):
        e = unraisable.exc_value
        if isinstance(e, RuntimeError) and str(e) == "Event loop is closed":
            return
        previous(unraisable)

    hook._jaxgames_checkpoints = True
    sys.unraisablehook = hook


# -- a portable parameter file (the agents shipped in jaxgames.pretrained) ------------------------


def write_npz(path: str | pathlib.Path, params: Any) -> pathlib.Path:
    """Write the parameter tree ``params`` (arrays) to ``path`` as an uncompressed ``.npz``:
    one array per leaf, named by its tree path (``jax.tree_util.keystr``). Written to a
    temporary name first and renamed, so a kill never leaves half a file under ``path``."""
    path = pathlib.Path(path)
    arrays = {}
    for key_path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        arrays[jax.tree_util.keystr(key_path)] = np.asarray(leaf)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:  # a file object: np.savez would append ".npz" to a name
        np.savez(f, **arrays)
    os.replace(tmp, path)
    return path


def read_npz(path: str | pathlib.Path, like: Any) -> Any:
    """The parameters in the ``.npz`` file ``path`` (:func:`write_npz`), as jax arrays in the
    tree of ``like`` (arrays or ``jax.ShapeDtypeStruct``s, e.g. ``jax.eval_shape`` of a
    network's ``init``): every key of the tree present, no other, each shape and dtype as in
    ``like``, every value finite; else :class:`CheckpointError`, one line naming the file."""
    path = pathlib.Path(path)
    try:
        stored = np.load(path, allow_pickle=False)
        if not isinstance(stored, np.lib.npyio.NpzFile):  # a .npy: one array, not a tree
            raise ValueError("a single array, not an .npz archive")
        with stored:
            arrays = {name: stored[name] for name in stored.files}
    except FileNotFoundError:
        raise CheckpointError(f"parameter file {path} does not exist") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise CheckpointError(f"parameter file {path} is unreadable: the file is damaged or not an "
                              f".npz ({type(e).__name__}: {one_line(e)})") from None
    leaves, treedef = jax.tree_util.tree_flatten_with_path(like)
    want = {jax.tree_util.keystr(key_path): leaf for key_path, leaf in leaves}
    missing = [k for k in want if k not in arrays]
    extra = [k for k in arrays if k not in want]
    for what, keys in (("lacks", missing), ("has the unexpected", extra)):
        if keys:
            more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
            raise CheckpointError(f"parameter file {path} does not fit the tree it is read into: it "
                                  f"{what} key {keys[0]}{more}")
    for key, spec in want.items():
        have = arrays[key]
        if have.shape != tuple(spec.shape) or have.dtype != np.dtype(spec.dtype):
            raise CheckpointError(f"parameter file {path} does not fit the tree it is read into: {key} "
                                  f"is {have.dtype.name}{list(have.shape)} there and "
                                  f"{np.dtype(spec.dtype).name}{list(spec.shape)} here")
        if np.issubdtype(have.dtype, np.inexact) and not np.all(np.isfinite(have)):
            raise CheckpointError(f"parameter file {path} holds non-finite values (NaN or inf) in {key}")
    return jax.tree_util.tree_unflatten(treedef, [jnp.asarray(arrays[k]) for k in want])
