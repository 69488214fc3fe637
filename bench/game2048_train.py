"""2048 n-tuple TD training throughput: jaxgames' JAX learner against a C++ peer, same run.

    python -m bench.game2048_train [--seconds 20] [--num-games 128] [--chunk 256] [--seed 0]
                                   [--one-core] [--no-huge-pages]

The peer, ``bench/ntuple_cpp/td2048.cpp``, is a compact single-threaded C++17 implementation of
the same method as ``train/algos/ntuple_td.py`` with its defaults: the 4 standard 6-tuples on 8
symmetries, greedy 1-ply play on reward + V(afterstate), afterstate TD(0) with α = 0.1 split
over the 32 features. It plays one game at a time and updates online after every move;
the JAX learner advances ``--num-games`` games in lock-step and applies their updates with one
scatter-add per move.

Each side trains from scratch for about ``--seconds`` of wall time. The C++ peer is compiled
first (``g++ -O3 -march=native -std=c++17``, into a temp dir). The JAX learner's first chunk
(compilation) is not timed; the timed chunks each end on ``jax.block_until_ready``. Printed:
moves/s of each, the ratio jaxgames / C++, and the average score of the last ~1000 games each
finished (both must beat a random player's ~1100, showing both learn).

``--one-core`` pins this process, and so the peer it starts, to one CPU before JAX starts:
XLA then runs each kernel on one thread instead of splitting it over all cores (the peer has
one thread either way). ``--no-huge-pages`` leaves the JAX learner's table on ordinary pages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "ntuple_cpp" / "td2048.cpp"
LAST_GAMES = 1000


class CompilerMissing(RuntimeError):
    pass


def build_peer(out_dir: str | os.PathLike) -> Path:
    """Compile the C++ peer into ``out_dir``; returns the executable's path."""
    gxx = shutil.which("g++")
    if gxx is None:
        raise CompilerMissing("g++ not found on PATH: the C++ peer (bench/ntuple_cpp/td2048.cpp) "
                              "needs a C++17 compiler (e.g. apt-get install g++)")
    exe = Path(out_dir) / "td2048"
    cmd = [gxx, "-O3", "-march=native", "-std=c++17", "-o", str(exe), str(SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the C++ peer failed ({' '.join(cmd)}):\n{proc.stderr}")
    return exe


def run_peer(exe: str | os.PathLike, seconds: float, seed: int = 0) -> dict:
    """Run the compiled peer: {"moves", "games", "seconds", "avg_score_last_1000"}."""
    proc = subprocess.run([str(exe), str(seconds), str(seed)], capture_output=True, text=True,
                          check=True, timeout=seconds + 60)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_jax(seconds: float, num_games: int, chunk_size: int, seed: int = 0, huge_pages: bool = True) -> dict:
    """Train the JAX learner for about ``seconds`` of post-compile wall time."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxgames.game2048.board import BoardModel
    from train.algos import ntuple_td as td
    MODEL = BoardModel("2048")
    from train.common import make_chunk

    from jaxgames.game2048.ntuple import NTupleNetwork
    cfg = td.TDConfig(network=NTupleNetwork(), num_games=num_games)
    carry = td.init(cfg, MODEL, jax.random.key(seed))
    if not huge_pages:  # a fresh table on ordinary pages
        carry = carry.replace(table=td.make_table(carry.weights, cfg.tc, huge_pages=False))
    on_huge_pages = huge_pages and td.advise_huge_pages(carry.table)   # init advised it; True if taken
    chunk = make_chunk(td.make_update(cfg, MODEL), chunk_size)
    key = jax.random.key(seed + 1)

    t = time.perf_counter()
    carry, _ = chunk(carry, key, jnp.int32(0))   # compiles; not timed
    jax.block_until_ready(carry)
    compile_s = time.perf_counter() - t

    per_chunk = []  # (moves, games ended, their score sum) of each timed chunk
    elapsed, start = 0.0, chunk_size
    while elapsed < seconds:
        t = time.perf_counter()
        carry, m = chunk(carry, key, jnp.int32(start))
        jax.block_until_ready((carry, m))
        elapsed += time.perf_counter() - t
        start += chunk_size
        per_chunk.append((m["moves"], m["games_ended"], m["ended_score_sum"]))
    moves = sum(int(np.asarray(c[0], np.int64).sum()) for c in per_chunk)
    # average score over the last >= LAST_GAMES finished games (whole chunks from the end)
    games, score = 0, 0.0
    for _, g, s in reversed(per_chunk):
        games += int(np.asarray(g).sum())
        score += float(np.asarray(s, np.float64).sum())
        if games >= LAST_GAMES:
            break
    total_games = sum(int(np.asarray(c[1]).sum()) for c in per_chunk)
    return {"moves": moves, "games": total_games, "seconds": elapsed, "compile_seconds": compile_s,
            "avg_score_last_games": score / games if games else float("nan"), "last_games": games,
            "huge_pages": on_huge_pages}


def _load_average() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time of each side")
    parser.add_argument("--num-games", type=int, default=128, help="JAX learner's parallel games")
    parser.add_argument("--chunk", type=int, default=256, help="updates per jitted chunk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one-core", action="store_true", help="pin to one CPU before JAX starts")
    parser.add_argument("--no-huge-pages", action="store_true", help="JAX table on ordinary pages")
    args = parser.parse_args(argv)
    load_before = _load_average()
    for name in ("seconds", "num_games", "chunk"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}")
    if args.one_core:
        if "jax" in sys.modules:  # XLA sizes its thread pool when it starts
            parser.error("--one-core needs a fresh process (JAX is already imported here)")
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    with tempfile.TemporaryDirectory(prefix="td2048_") as tmp:
        try:
            exe = build_peer(tmp)
        except CompilerMissing as e:
            raise SystemExit(f"error: {e}") from None
        cpp = run_peer(exe, args.seconds, args.seed)
    ours = run_jax(args.seconds, args.num_games, args.chunk, args.seed, huge_pages=not args.no_huge_pages)

    import jax

    load_after = _load_average()
    cpp_rate = cpp["moves"] / cpp["seconds"]
    jax_rate = ours["moves"] / ours["seconds"]
    result = {"jaxgames_moves_per_s": jax_rate, "cpp_moves_per_s": cpp_rate,
              "ratio": jax_rate / cpp_rate, "cpp": cpp, "jaxgames": ours}
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), jax {jax.__version__}, "
          f"{os.cpu_count()} CPUs, {len(os.sched_getaffinity(0))} usable; load average "
          f"{load_before} before, {load_after} after")
    print(f"2048 n-tuple TD(0), 4x 6-tuples x 8 symmetries, alpha 0.1; ~{args.seconds:g} s each, "
          f"from scratch")
    print(f"jaxgames: num_games {args.num_games}, chunk {args.chunk} updates "
          f"(compile {ours['compile_seconds']:.1f} s, not timed), table on "
          f"{'huge' if ours['huge_pages'] else 'ordinary'} pages")
    print(f"C++ peer: 1 thread, 1 game, online updates (g++ -O3 -march=native)")
    print(f"jaxgames: {jax_rate:>12,.0f} moves/s  ({ours['moves']:,} moves, {ours['games']:,} games "
          f"in {ours['seconds']:.1f} s)")
    print(f"C++:      {cpp_rate:>12,.0f} moves/s  ({cpp['moves']:,} moves, {cpp['games']:,} games "
          f"in {cpp['seconds']:.1f} s)")
    print(f"ratio jaxgames / C++: {result['ratio']:.2f}x")
    print(f"avg score, last ~{LAST_GAMES} games: jaxgames {ours['avg_score_last_games']:,.0f} "
          f"({ours['last_games']} games), C++ {cpp['avg_score_last_1000']:,.0f} "
          f"(random play ~1,100)")
    return result


if __name__ == "__main__":
    main()
