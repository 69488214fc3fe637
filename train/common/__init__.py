"""Shared pipeline pieces: config + CLI, run directory, chunked driver, checkpoints, mesh,
multi-host runs, plots."""

from train.common.checkpoint import CheckpointError, Checkpointer
from train.common.config import RunConfig, parse
from train.common.driver import (
    BulkyPart,
    Checkpointing,
    Display,
    DivergenceError,
    DriverResult,
    Schedule,
    make_chunk,
    run,
)
from train.common.distributed import (PEER_LOST_STATUS, DistributedError, init_distributed,
                                      is_multiprocess, is_primary, to_host)
from train.common.errors import UserError
from train.common.exits import exit_on_user_error
from train.common.mesh import (batch_mesh, check_divisible, one_cpu_device_per_core, replicate, shard_batch,
                               to_global)
from train.common.rundir import RunDir, RunDirError, markdown_table

__all__ = [
    "BulkyPart", "CheckpointError", "Checkpointer", "Checkpointing", "Display", "DistributedError",
    "DivergenceError", "DriverResult", "PEER_LOST_STATUS", "RunConfig", "RunDir", "RunDirError",
    "Schedule", "UserError", "batch_mesh", "check_divisible", "exit_on_user_error", "one_cpu_device_per_core",
    "init_distributed", "is_multiprocess", "is_primary", "make_chunk", "markdown_table", "parse",
    "replicate", "run", "shard_batch", "to_global", "to_host",
]
