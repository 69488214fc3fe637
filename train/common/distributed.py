"""Multi-host runs: one process per host, joined through ``jax.distributed``, every host's
devices in one mesh (``train/common/mesh.py``). The code of a pipeline does not change; only
the launch does (``docs/training.md``, "Scaling out to several hosts").

A pipeline calls :func:`init_distributed` before anything uses JAX. It joins a run when the
launcher's environment asks for one, and otherwise does nothing:

- ``JAX_COORDINATOR_ADDRESS`` (``host:port`` of process 0) with ``JAX_NUM_PROCESSES`` and
  ``JAX_PROCESS_ID``: an explicit coordinator (``python -m train.launch`` sets these);
- SLURM (``srun``, more than one task in the step), Open MPI (``mpirun``, more than one rank)
  and GKE TPU slices (``TPU_WORKER_HOSTNAMES`` naming several hosts): JAX reads the rest;
- ``JAXGAMES_DISTRIBUTED=on`` joins whatever ``jax.distributed.initialize()`` detects (a
  TPU VM pod slice started with ``gcloud ... ssh --worker=all``); ``off`` never joins.

``JAXGAMES_INIT_TIMEOUT`` (seconds to wait for every process to join, default 300) and
``JAXGAMES_HEARTBEAT_TIMEOUT`` (seconds of silence after which a process counts as dead,
default 100) tune JAX's own limits.

In a joined run every process executes the same program: the same jitted chunks, in the same
order, on its share of the batch (the learners generate the batch from keys inside ``jit``,
sharded over the mesh, so each device makes its own share and no host feeds another's).
Whatever Python computes between chunks reads values every process holds alike
(:func:`to_host`), so every process takes the same decisions. Only process 0
(:func:`is_primary`) writes the run folder, the progress bar and the final line; orbax writes
each process's shards of a checkpoint.

When a process dies, the others stop instead of hanging (``train/common/watchdog.py``):
process 0 notices at once through the connection each process keeps to it, or through a
collective that fails (:func:`peer_lost`), and leaves with one line and
:data:`PEER_LOST_STATUS`; the others then notice process 0's end (JAX's coordination
service, hosted by process 0, may end them first with its own fatal message, "Terminating
process because the JAX distributed service detected fatal errors ..."). A process that
hangs without dying is declared dead by JAX after the heartbeat timeout.
"""

from __future__ import annotations

import os
import re

import jax
import numpy as np

from train.common import watchdog
from train.common.errors import UserError

MODE_ENV = "JAXGAMES_DISTRIBUTED"
INIT_TIMEOUT_ENV = "JAXGAMES_INIT_TIMEOUT"
HEARTBEAT_ENV = "JAXGAMES_HEARTBEAT_TIMEOUT"
COORDINATOR_ENV = "JAX_COORDINATOR_ADDRESS"
NUM_PROCESSES_ENV = "JAX_NUM_PROCESSES"
PROCESS_ID_ENV = "JAX_PROCESS_ID"

PEER_LOST_STATUS = 3
"""Exit status of a process that stopped because another process of its run is gone."""

# What a runtime error says when the other end of a collective or barrier has gone away.
_PEER_LOST = re.compile(r"gloo|connection (reset|closed|refused)|socket closed|heartbeat|"
                        r"barrier|coordination service|unavailable|broken pipe", re.I)


class DistributedError(UserError):
    """A multi-host run that cannot start (bad launcher settings, a process that never came)."""


def launch_environment() -> str | None:
    """Which launcher asks for a multi-host run: ``"explicit"``, ``"slurm"``, ``"mpi"``,
    ``"tpu"``, ``"forced"`` (``JAXGAMES_DISTRIBUTED=on``), or None (a single process)."""
    mode = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if mode not in ("auto", "on", "off"):
        raise DistributedError(f"{MODE_ENV} must be auto, on or off, got {mode!r}")
    if mode == "off":
        return None
    if os.environ.get(COORDINATOR_ENV):
        return "explicit"
    slurm_tasks = os.environ.get("SLURM_STEP_NUM_TASKS") or os.environ.get("SLURM_NTASKS")
    if "SLURM_PROCID" in os.environ and "SLURM_JOB_ID" in os.environ and _positive(slurm_tasks) > 1:
        return "slurm"
    if _positive(os.environ.get("OMPI_COMM_WORLD_SIZE")) > 1:
        return "mpi"
    hosts = os.environ.get("TPU_WORKER_HOSTNAMES") or os.environ.get("TPU_PROCESS_ADDRESSES") or ""
    if len([h for h in hosts.split(",") if h.strip()]) > 1:
        return "tpu"
    return "forced" if mode == "on" else None


def init_distributed() -> bool:
    """Join the multi-host run the environment asks for (see the module docstring); True when
    this process is one of several. Call it before anything uses JAX; calling it again, or
    without a launcher, is harmless. Raises :class:`DistributedError` with one line when the
    run cannot be joined."""
    if jax.distributed.is_initialized():
        return jax.process_count() > 1
    how = launch_environment()
    if how is None:
        return False
    kwargs = {"initialization_timeout": _seconds(INIT_TIMEOUT_ENV, 300),
              "heartbeat_timeout_seconds": _seconds(HEARTBEAT_ENV, 100)}
    if how == "explicit":
        kwargs["coordinator_address"] = os.environ[COORDINATOR_ENV]
        for name, env in (("num_processes", NUM_PROCESSES_ENV), ("process_id", PROCESS_ID_ENV)):
            if os.environ.get(env):  # else JAX looks for a cluster that knows it
                try:
                    kwargs[name] = int(os.environ[env])
                except ValueError:
                    raise DistributedError(f"{env} must be a whole number, got "
                                           f"{os.environ[env]!r}") from None
    try:
        jax.distributed.initialize(**kwargs)
    except RuntimeError as e:
        if "before any JAX" in str(e):
            raise DistributedError(
                f"the launcher asks for a multi-host run ({how}), but this process used JAX "
                f"before joining it: call train.common.init_distributed() first") from None
        raise DistributedError(f"cannot join the multi-host run ({how}): {_one_line(e)}") from None
    except (ValueError, TypeError) as e:
        raise DistributedError(f"cannot join the multi-host run ({how}): {_one_line(e)}") from None
    # CPU devices of different processes talk through gloo (GPUs and TPUs have their own);
    # read when the backend starts, which joining does not do
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if jax.process_count() > 1:
        watchdog.start(_coordinator_host(kwargs.get("coordinator_address")), PEER_LOST_STATUS)
    return jax.process_count() > 1


def is_multiprocess() -> bool:
    """This process is one of several of a joined run (never starts a JAX backend itself)."""
    return jax.distributed.is_initialized() and jax.process_count() > 1


def is_primary() -> bool:
    """Process 0 of a joined run, or the only process: the one that writes files."""
    return not jax.distributed.is_initialized() or jax.process_index() == 0


def to_host(tree):
    """Every ``jax.Array`` leaf as a NumPy array with its global value, the same on every
    process: arrays held whole by this process (one device, or replicated) are copied; an
    array split over hosts is gathered (a collective: every process must call it, in the
    same order)."""
    def one(x):
        if not isinstance(x, jax.Array):
            return x
        if x.is_fully_addressable or x.is_fully_replicated:
            return np.asarray(x)
        from jax.experimental import multihost_utils
        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return jax.tree_util.tree_map(one, tree)


def barrier(name: str) -> None:
    """Wait until every process of the run reaches the barrier ``name`` (no-op alone)."""
    if is_multiprocess():
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices(name)


def broadcast_text(text: str | None, *, limit: int = 4096) -> str | None:
    """Process 0's ``text`` (or None) on every process; the others' arguments are ignored.
    Used to share process 0's verdict (a run folder that cannot be used) with every process,
    so that they all stop together with the same message. At most ``limit`` bytes."""
    if not is_multiprocess():
        return text
    from jax.experimental import multihost_utils
    buf = np.zeros(limit + 1, np.uint8)
    if is_primary() and text is not None:
        data = text.encode()[:limit]
        buf[0] = 1
        buf[1:1 + len(data)] = np.frombuffer(data, np.uint8)
    out = np.asarray(multihost_utils.broadcast_one_to_all(buf))
    if not out[0]:
        return None
    return bytes(out[1:]).rstrip(b"\0").decode(errors="replace")


def peer_lost(error: BaseException) -> bool:
    """Whether ``error``, raised in a multi-host run, says another process is gone (a collective
    or a barrier whose other end dropped) rather than a bug of this one."""
    return (is_multiprocess() and isinstance(error, (jax.errors.JaxRuntimeError, RuntimeError))
            and bool(_PEER_LOST.search(str(error))))


def peer_lost_message(error: BaseException) -> str:
    where = f"process {jax.process_index()} of {jax.process_count()}" if is_multiprocess() else "this process"
    return (f"another process of this multi-host run is gone or cannot be reached; {where} "
            f"stops too ({_one_line(error, 160)})")


def _coordinator_host(address: str | None) -> str:
    """The host of the coordinator, the one address every process reached."""
    if not address:  # found by JAX's cluster detection: it keeps it (not a public API)
        from jax._src import distributed as jax_distributed
        address = getattr(jax_distributed.global_state, "coordinator_address", None) or "127.0.0.1:0"
    return address.rsplit(":", 1)[0].strip("[]")


def _positive(text: str | None) -> int:
    try:
        return int(text) if text else 0
    except ValueError:
        return 0


def _seconds(env: str, default: int) -> int:
    text = os.environ.get(env, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise DistributedError(f"{env} must be a whole number of seconds >= 1, got {text!r}")
    return value


def _one_line(e: BaseException, limit: int = 300) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit] + " ..."
