"""Local processes of one multi-host JAX run: what ``python -m train.launch`` does (see there).

``launch(command, processes=, devices_per_process=)`` starts the processes with the variables
that make them join one run, forwards their output and returns the first failure's status.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Sequence

from train.common.distributed import COORDINATOR_ENV, NUM_PROCESSES_ENV, PROCESS_ID_ENV

PROG = "python -m train.launch"
_DEVICE_FLAG = re.compile(r"--xla_force_host_platform_device_count=\S*")
# gloo's greeting on every process: noise in a forwarded stream. Its threads can write the
# greeting's two sentences, its count and its newline apart, so either sentence marks it, a
# blank line (a stray newline) is dropped too, and so is a bare count right after a greeting
# that ended without one.
_CHATTER = re.compile(rb"is connected to \d+ peer ranks|Expected number of connected peer ranks is")
_ASKED = re.compile(rb"ranks is\s*:")
_ANSWERED = re.compile(rb"ranks is\s*:\s*\d+")
_BARE_COUNT = re.compile(rb"^\s*\d+\s*$")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the coordinator binds it moments later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_devices_env(base: dict, devices: int) -> dict:
    """``base`` for a process with ``devices`` CPU devices: its other ``XLA_FLAGS`` kept, any
    device count replaced."""
    env = dict(base)
    flags = _DEVICE_FLAG.sub("", env.get("XLA_FLAGS", "")).split()
    env["XLA_FLAGS"] = " ".join(flags + [f"--xla_force_host_platform_device_count={devices}"])
    env["JAX_PLATFORMS"] = "cpu"
    return env


def process_env(base: dict, *, process_id: int, processes: int, devices: int, port: int) -> dict:
    """The environment of local process ``process_id`` of ``processes``."""
    env = cpu_devices_env(base, devices)
    env[COORDINATOR_ENV] = f"127.0.0.1:{port}"
    env[NUM_PROCESSES_ENV] = str(processes)
    env[PROCESS_ID_ENV] = str(process_id)
    env["PYTHONUNBUFFERED"] = "1"  # forwarded lines arrive when they are written
    return env


def describe(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by signal {-status} ({name})"
    return f"exited with status {status}"


def exit_status(status: int) -> int:
    """A child's return code as a shell reports it (128 + N for signal N)."""
    return 128 - status if status < 0 else status


def launch(command: Sequence[str], *, processes: int, devices_per_process: int,
           grace: float = 30.0, port: int | None = None) -> int:
    """Run ``command`` as ``processes`` joined local processes; returns the exit status."""
    if processes < 1 or devices_per_process < 1:
        raise ValueError("processes and devices_per_process must be >= 1")
    if grace < 0:
        raise ValueError("grace must be >= 0 seconds")
    if not command:
        raise ValueError("no command to launch")
    port = port or free_port()
    children, pumps = [], []
    for i in range(processes):
        env = process_env(os.environ, process_id=i, processes=processes,
                          devices=devices_per_process, port=port)
        pipe = None if i == 0 else subprocess.PIPE
        try:
            child = subprocess.Popen(list(command), env=env, stdout=pipe, stderr=pipe)
        except OSError as e:
            for c in children:
                c.kill()
            raise ValueError(f"cannot start {command[0]!r}: {e.strerror}") from None
        children.append(child)
        if i:
            for src, dst in ((child.stdout, sys.stdout), (child.stderr, sys.stderr)):
                t = threading.Thread(target=_pump, args=(src, dst, f"[process {i}] "), daemon=True)
                t.start()
                pumps.append(t)
    _say(f"{processes} processes x {devices_per_process} CPU devices, coordinator 127.0.0.1:{port}; "
         + ", ".join(f"process {i} pid {c.pid}" for i, c in enumerate(children)))

    ended: queue.Queue = queue.Queue()
    for i, child in enumerate(children):
        threading.Thread(target=lambda i=i, c=child: ended.put((i, c.wait())), daemon=True).start()

    first = None        # (process, status) of the first failure
    term_at = kill_at = None
    running = set(range(processes))
    previous = signal.signal(signal.SIGTERM, _interrupted) if _main_thread() else None
    try:
        while running:
            try:
                i, status = ended.get(timeout=0.05)
            except queue.Empty:
                pass
            else:
                running.discard(i)
                if status != 0 or first is not None:
                    _say(f"process {i} {describe(status)}")
                if status != 0 and first is None:
                    first = (i, status)
                    term_at = time.monotonic() + grace
                continue
            now = time.monotonic()
            if term_at is not None and now >= term_at and running:
                for j in sorted(running):
                    _say(f"stopping process {j}: still running {grace:g} s after process {first[0]} failed")
                    children[j].terminate()
                term_at, kill_at = None, now + 5.0
            if kill_at is not None and now >= kill_at:
                for j in running:
                    children[j].kill()
                kill_at = None
    except KeyboardInterrupt as e:
        _stop_all(children)
        return 143 if isinstance(e, _Terminated) else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    for t in pumps:
        t.join(timeout=5)
    return 0 if first is None else exit_status(first[1])


class _Terminated(KeyboardInterrupt):
    """The launcher got SIGTERM: it stops its processes as for Ctrl-C."""


def _interrupted(signum, frame):
    raise _Terminated()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _stop_all(children) -> None:
    for c in children:
        if c.poll() is None:
            c.terminate()
    for c in children:
        try:
            c.wait(timeout=5)
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()


def _say(message: str) -> None:
    # one write with its newline: process 0 shares this stream, and print() writes the text and
    # the newline apart, so another process's line could land between them
    sys.stderr.write(f"{PROG}: {message}\n")
    sys.stderr.flush()


def _pump(src, dst, prefix: str) -> None:
    """Copy lines of a child's stream to ours, each with ``prefix`` (blank lines and gloo's
    greeting left out)."""
    out = dst.buffer
    counts_due = 0      # greetings whose count gloo's thread will write on a line of its own
    for line in iter(src.readline, b""):
        if not line.strip():
            continue
        if counts_due and _BARE_COUNT.match(line):
            counts_due -= 1
            continue
        if _CHATTER.search(line):
            # two threads' greetings can share a line, the first one's count coming after it
            counts_due = len(_ASKED.findall(line)) - len(_ANSWERED.findall(line))
            continue
        counts_due = 0
        out.write(prefix.encode() + line)
        out.flush()
    src.close()
