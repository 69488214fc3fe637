"""TDL2048 (github.com/moporgic/TDL2048), the 2048 record holder, as a peer of the training bench.

Its own binary, built by the user (``make`` in its source tree; docs/benchmarks.md), is run
one-threaded with the network and rate of our learner: ``-n 4x6patt -a 0.1`` (TD(0), α = 0.1
split over the 32 features, the 4 standard 6-tuples on 8 isomorphisms), training from scratch.
It trains a number of episodes, not seconds, and prints one statistic block per 1,000::

    000003/100000 381ms 1951527.56ops
    local:        avg=12079 max=34124 tile=2048 win=3.50%
    total:        avg=10174 max=34124 tile=2048 win=1.93%

(``ops`` = moves/s over the block, measured by TDL2048 itself). So :func:`run` asks for far more
episodes than it needs, reads the blocks as they come (it flushes each) and stops the program
once its blocks add up to the wanted seconds; only whole blocks count: moves =
Σ ops × ms / 1000, seconds = Σ ms / 1000, and the last block's ``local`` average is the average
score of its last 1,000 games.
"""

from __future__ import annotations

import dataclasses
import os
import re
import resource
import subprocess
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Iterable

ARGS = ("-n", "4x6patt", "-a", "0.1")
EPISODES_PER_BLOCK = 1000          # TDL2048's default statistic unit
BLOCKS_ASKED = 1_000_000           # -t in thousands of episodes: never reached, the bench stops it

_BLOCK = re.compile(r"^\s*(\d+)/(\d+)\s+(\d+)ms\s+([0-9.]+)ops\b")
_LOCAL = re.compile(r"^\s*local:\s+avg=(\d+)\s+max=(\d+)")


@dataclasses.dataclass(frozen=True)
class Block:
    index: int
    ms: int            # the block's wall time, TDL2048's own clock
    ops: float         # its moves/s over the block
    avg_score: int     # the average score of the block's games

    @property
    def moves(self) -> float:
        return self.ops * self.ms / 1000


def check_executable(path: str | os.PathLike) -> str | None:
    """None if ``path`` can be run, else why not (one line)."""
    p = Path(path)
    if not p.exists():
        return f"--tdl2048 {path}: no such file (build TDL2048 first: see docs/benchmarks.md)"
    if not p.is_file():
        return f"--tdl2048 {path}: not a file (give the binary that TDL2048's make builds, ./2048)"
    if not os.access(p, os.X_OK):
        return f"--tdl2048 {path}: not executable (chmod +x, or build it with make)"
    return None


def parse_blocks(lines: Iterable[str]) -> list[Block]:
    """The statistic blocks of TDL2048's output whose ``local`` line has arrived (a block cut
    off by the stop is left out); everything else (version, arguments, network) is skipped."""
    blocks, head = [], None
    for line in lines:
        m = _BLOCK.match(line)
        if m:
            head = (int(m.group(1)), int(m.group(3)), float(m.group(4)))
            continue
        m = _LOCAL.match(line)
        if m and head is not None:
            blocks.append(Block(*head, avg_score=int(m.group(1))))
            head = None
    return blocks


def summarize(blocks: list[Block]) -> dict:
    """The bench's figures from whole blocks: moves, games, seconds, the last 1,000 games' average."""
    if not blocks:
        raise ValueError("TDL2048 printed no whole statistic block")
    return {"moves": round(sum(b.moves for b in blocks)), "games": EPISODES_PER_BLOCK * len(blocks),
            "seconds": sum(b.ms for b in blocks) / 1000, "avg_score_last_1000": float(blocks[-1].avg_score),
            "blocks": len(blocks)}


def run(exe: str | os.PathLike, seconds: float, seed: int = 0, args: tuple[str, ...] = ARGS) -> dict:
    """Train TDL2048 from scratch for about ``seconds`` of its own block time (whole blocks,
    so a little more), then stop it. Adds ``cpu_seconds`` (its user + system time) and ``command``.
    RuntimeError (one line) if it ends early or prints no block in time."""
    cmd = [str(exe), *args, "-t", str(BLOCKS_ASKED), "-s", str(seed)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines: list[str] = []
    blocks: list[Block] = []
    # A thread reads the pipe into a queue, so a stall can be timed out without losing lines
    # (select() on the pipe does not see the lines Python has already buffered).
    queue: Queue = Queue()
    threading.Thread(target=lambda: [queue.put(ln) for ln in proc.stdout] + [queue.put("")], daemon=True).start()
    # a block of 1,000 games takes well under a second early on; a generous bound for a stall
    deadline = time.monotonic() + 3 * seconds + 60
    try:
        while sum(b.ms for b in blocks) < seconds * 1000:
            try:
                line = queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except Empty:
                line = None
            if not line:
                tail = [ln.strip() for ln in lines if ln.strip()][-1:] or ["no output"]
                raise RuntimeError(f"TDL2048 ({' '.join(cmd)}) "
                                   f"{'stopped' if line == '' else 'printed nothing for too long'} "
                                   f"after {len(blocks)} blocks: {tail[0]}")
            lines.append(line)
            if _LOCAL.match(line):
                blocks = parse_blocks(lines)
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = summarize(blocks)
    out["cpu_seconds"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    out["command"] = " ".join(cmd)
    return out
