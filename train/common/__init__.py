"""Shared pipeline pieces: config + CLI, run directory, chunked driver, the run skeleton,
checkpoints, mesh, multi-host runs, plots."""

from train.common.checkpoint import CheckpointError, Checkpointer
from train.common.config import RunConfig, parse
from train.common.entry import run_main
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
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, league_hook, run_pipeline

__all__ = [
    "BulkyPart", "CheckpointError", "Checkpointer", "Checkpointing", "Chunk", "Display",
    "DistributedError", "DivergenceError", "DriverResult", "End", "Final", "Keys",
    "PEER_LOST_STATUS", "Pipeline", "Round", "RunConfig", "RunDir", "RunDirError", "Schedule",
    "UserError", "batch_mesh", "check_divisible", "exit_on_user_error", "init_distributed",
    "is_multiprocess", "is_primary", "league_hook", "make_chunk", "markdown_table",
    "one_cpu_device_per_core", "parse", "replicate", "run", "run_main", "run_pipeline", "shard_batch",
    "to_global", "to_host",
]
