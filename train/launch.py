"""Start a multi-host run as local processes: a test and demo tool (on a real cluster, the
cluster's launcher does this: ``srun``, ``mpirun``, ``gcloud ... --worker=all``).

    python -m train.launch --processes 2 --devices-per-process 2 -- python -m train.ten_half --run-name x

Starts ``--processes`` copies of the command, each with ``--devices-per-process`` CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count``, ``JAX_PLATFORMS=cpu``) and the
variables that make it join one run (``JAX_COORDINATOR_ADDRESS`` on a free local port,
``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``; read by ``train.common.init_distributed``).
Process 0 writes straight to this terminal (its progress bar stays live); the others' lines
are prefixed with ``[process i]``. The exit status is the first failure's (128 + the signal
number for a process killed by a signal), 0 when all succeed. After a failure the other
processes get ``--grace`` seconds to stop on their own (they normally do at once, with a
line saying another process is gone), then are terminated.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from train.common.launcher import PROG, describe, exit_status, free_port, launch, process_env

__all__ = ["describe", "exit_status", "free_port", "launch", "main", "process_env"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        split = args.index("--")
        options, command = args[:split], args[split + 1:]
    else:
        options, command = args, []
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run a command as several local processes of one multi-host JAX "
                               "run (a test and demo tool).",
        usage=f"{PROG} [--processes N] [--devices-per-process D] [--grace S] -- COMMAND ...")
    parser.add_argument("--processes", type=int, default=2, help="processes to start (default 2)")
    parser.add_argument("--devices-per-process", type=int, default=1,
                        help="fake CPU devices of each process (default 1)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds the others get to stop on their own after a process fails "
                             "(default 30)")
    parser.add_argument("--port", type=int, default=0, help="coordinator port (default: a free one)")
    opts = parser.parse_args(options)
    if not command:
        parser.error("give the command after --, e.g. -- python -m train.ten_half")
    try:
        return launch(command, processes=opts.processes, devices_per_process=opts.devices_per_process,
                      grace=opts.grace, port=opts.port or None)
    except ValueError as e:
        parser.error(str(e))


if __name__ == "__main__":
    sys.exit(main())
