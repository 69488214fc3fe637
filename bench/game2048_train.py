"""2048 n-tuple TD training throughput: jaxgames' JAX learner against a C++ peer, same run.

    python -m bench.game2048_train [--seconds 20] [--num-games 128] [--chunk 256] [--seed 0]
                                   [--layout auto|one|all] [--one-core] [--no-huge-pages]
                                   [--tdl2048 PATH]
    python -m bench.game2048_train --overlap 16,128,1024 [--chunk 1000]   # batch-size study

The peer, ``bench/ntuple_cpp/td2048.cpp``, is a compact single-threaded C++17 implementation of
the same method as ``train/algos/ntuple_td.py`` with its defaults: the 4 standard 6-tuples on 8
symmetries, greedy 1-ply play on reward + V(afterstate), afterstate TD(0) with α = 0.1 split
over the 32 features. It plays one game at a time and updates online after every move;
the JAX learner advances ``--num-games`` games in lock-step and applies their updates with one
scatter-add per move.

Each side trains from scratch for about ``--seconds`` of wall time. The C++ peer is compiled
first (``g++ -O3 -march=native -std=c++17``, into a temp dir). The JAX learner's first chunk
(compilation) is not timed; the timed chunks each end on ``jax.block_until_ready``. Printed:
moves/s of each, the ratio jaxgames / C++ (also per CPU-second: the busy machine's share of the
CPU each side got cancels out), and the average score of the last ~1000 games each
finished (both must beat a random player's ~1100, showing both learn).

``--tdl2048 PATH`` also runs TDL2048, the record holder's own program (built from
github.com/moporgic/TDL2048, see docs/benchmarks.md), one-threaded with ``-n 4x6patt -a 0.1``
for about as long (``bench/tdl2048.py``), and prints its moves/s beside ours and the peer's with
the ratios to it.

The CPU thread layout (``--layout``, ``train/common/cpu_layout.py``) is by default the rule
(one pinned core); ``all`` keeps every core. ``--one-core`` is ``--layout one``. A pinned layout pins
this process before JAX starts, and so the peers it starts: XLA then runs each kernel on one
thread instead of splitting it over all cores (the peers have one thread either way).
``--no-huge-pages`` leaves the JAX learner's table on ordinary pages.

On a GPU or TPU backend nothing is pinned, the table lives in device memory (no huge pages),
and the device is named in the output; the peers still run on the host's CPU, so the ratios
compare the accelerator with one host core. Without g++ the C++ peer is skipped, said on one line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(exe), str(seconds), str(seed)], capture_output=True, text=True,
                          check=True, timeout=seconds + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["cpu_seconds"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return out


def run_jax(seconds: float, num_games: int, chunk_size: int, seed: int = 0, huge_pages: bool = True,
            shared_step: str = "auto") -> dict:
    """Train the JAX learner for about ``seconds`` of post-compile wall time."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxgames.game2048.board import BoardModel
    from train.algos import ntuple_td as td
    MODEL = BoardModel("2048")
    from train.common import make_chunk

    from jaxgames.game2048.ntuple import NTupleNetwork
    cfg = td.TDConfig(network=NTupleNetwork(), num_games=num_games, shared_step=shared_step)
    carry = td.init(cfg, MODEL, jax.random.key(seed))
    if not huge_pages:  # a fresh table on ordinary pages
        carry = carry.replace(table=td.make_table(carry.weights, cfg.tc, count_column=cfg.counts_games,
                                                  huge_pages=False))
    on_huge_pages = huge_pages and td.advise_huge_pages(carry.table)   # init advised it; True if taken
    chunk = make_chunk(td.make_update(cfg, MODEL), chunk_size)
    key = jax.random.key(seed + 1)

    t = time.perf_counter()
    carry, _ = chunk(carry, key, jnp.int32(0))   # compiles; not timed
    jax.block_until_ready(carry)
    compile_s = time.perf_counter() - t

    per_chunk = []  # (moves, games ended, their score sum) of each timed chunk
    elapsed, cpu, start = 0.0, 0.0, chunk_size
    while elapsed < seconds:
        t, c = time.perf_counter(), time.process_time()   # process time: all of XLA's threads
        carry, m = chunk(carry, key, jnp.int32(start))
        jax.block_until_ready((carry, m))
        elapsed += time.perf_counter() - t
        cpu += time.process_time() - c
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
    return {"moves": moves, "games": total_games, "seconds": elapsed, "cpu_seconds": cpu,
            "compile_seconds": compile_s,
            "avg_score_last_games": score / games if games else float("nan"), "last_games": games,
            "huge_pages": on_huge_pages, "shared_step": cfg.step_rule}


def batch_overlap(num_games: int, updates: int, chunk_size: int = 250, seed: int = 0) -> dict:
    """How much the TD steps of one update pile up on shared weights, after ``updates`` updates
    of ``num_games`` games from scratch: of the weights the update changes, the mean number of
    games of the batch that step it, and the largest. Online (one game at a time) every
    step lands alone; batched, a weight read by k games of the batch moves k steps at once."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxgames.game2048.board import BoardModel
    from jaxgames.game2048.ntuple import NTupleNetwork
    from train.algos import ntuple_td as td
    from train.common import make_chunk

    cfg = td.TDConfig(network=NTupleNetwork(), num_games=num_games)
    carry = td.init(cfg, BoardModel("2048"), jax.random.key(seed))
    chunk = make_chunk(td.make_update(cfg, BoardModel("2048")), chunk_size)
    carry, _ = chunk(carry, jax.random.key(seed + 1), jnp.int32(0))   # compiles; not timed
    jax.block_until_ready(carry)
    t = time.perf_counter()
    for start in range(chunk_size, max(updates, 2 * chunk_size), chunk_size):
        carry, _ = chunk(carry, jax.random.key(seed + 1), jnp.int32(start))
    jax.block_until_ready(carry)
    step_us = (time.perf_counter() - t) / (max(updates, 2 * chunk_size) - chunk_size) * 1e6
    live = np.asarray(carry.trace_len) == 1          # games whose last afterstate is updated next
    trace = np.asarray(carry.trace)[live][:, -1]     # [games, F]
    # distinct (game, weight) pairs: a game reading one weight twice steps it twice online too
    pairs = np.unique(np.stack([np.repeat(np.arange(len(trace)), trace.shape[1]), trace.reshape(-1)]), axis=1)
    _, games_per_weight = np.unique(pairs[1], return_counts=True)
    return {"num_games": num_games, "updates": updates,
            "mean_games_per_weight": float(games_per_weight.mean()),
            "max_games_per_weight": int(games_per_weight.max()), "us_per_update": step_us,
            "us_per_move": step_us / num_games}


def _load_average() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "unknown"


class _OneLineParser(argparse.ArgumentParser):
    """Bad input ends with one line on stderr and exit status 2 (not argparse's usage block)."""

    def error(self, message: str):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _choose_layout(args, parser):
    """The CPU thread layout, pinned (or not) before anything starts JAX's backend."""
    from train.common import UserError, cpu_layout

    request = args.layout
    if args.one_core:
        if request not in ("auto", "one"):
            parser.error(f"--one-core is --layout one; it contradicts --layout {request}")
        request = "one"
    try:
        return cpu_layout.select(request)
    except UserError as e:   # a bad JAXGAMES_CPU_LAYOUT
        parser.error(str(e))


def _line(name: str, r: dict, rate: float, on_cpu: bool = True) -> str:
    """One side's rate; per CPU-second only for what runs on the CPU (an accelerator's work
    does not show in the host's CPU time)."""
    cpu = (f"; {r['moves'] / max(r['cpu_seconds'], 1e-9):,.0f} moves per CPU-second, "
           f"{r['cpu_seconds'] / r['seconds']:.2f} cores busy" if on_cpu else "")
    return (f"{name + ':':9} {rate:>12,.0f} moves/s  ({r['moves']:,} moves, {r['games']:,} games "
            f"in {r['seconds']:.1f} s{cpu})")


def main(argv: list[str] | None = None) -> dict:
    from train.common import cpu_layout

    parser = _OneLineParser(prog="python -m bench.game2048_train", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time of each side")
    parser.add_argument("--num-games", type=int, default=128, help="JAX learner's parallel games")
    parser.add_argument("--chunk", type=int, default=256, help="updates per jitted chunk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", default="auto", choices=cpu_layout.REQUESTS,
                        help="CPU thread layout: auto (the rule: one core; JAXGAMES_CPU_LAYOUT first), "
                             "one core, or all cores")
    parser.add_argument("--one-core", action="store_true", help="--layout one: pin to one CPU before JAX starts")
    parser.add_argument("--no-huge-pages", action="store_true", help="JAX table on ordinary pages")
    parser.add_argument("--shared-step", choices=("auto", "sum", "sqrt"), default="auto",
                        help="how the batch's steps on one weight combine (auto: as train.game2048 "
                             "does, sqrt from 256 games per update)")
    parser.add_argument("--tdl2048", metavar="PATH", default="",
                        help="also run TDL2048's binary (github.com/moporgic/TDL2048, built with make)")
    parser.add_argument("--overlap", type=str, default="", metavar="G1,G2,...",
                        help="instead: per batch size, how the TD steps of one update share weights")
    args = parser.parse_args(argv)
    load_before = _load_average()
    for name in ("seconds", "num_games", "chunk"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}")
    if args.tdl2048:
        from bench import tdl2048
        problem = tdl2048.check_executable(args.tdl2048)
        if problem:
            parser.error(problem)
    sizes = []
    if args.overlap:
        try:
            sizes = [int(g) for g in args.overlap.split(",")]
        except ValueError:
            parser.error(f"--overlap takes batch sizes like 128,1024, got {args.overlap!r}")
    layout = _choose_layout(args, parser)
    if args.overlap:
        print(f"load average {load_before}; {args.chunk} updates from scratch per batch size")
        for g in sizes:
            r = batch_overlap(g, args.chunk)
            print(f"{g:>6} games: an updated weight is stepped by {r['mean_games_per_weight']:.2f} games "
                  f"of the batch on average (max {r['max_games_per_weight']}), {r['us_per_update']:,.0f} us per update = "
                  f"{r['us_per_move']:.2f} us per move")
        return {}

    cpp = tdl = None
    with tempfile.TemporaryDirectory(prefix="td2048_") as tmp:
        try:
            exe = build_peer(tmp)
        except CompilerMissing as e:
            print(f"C++ peer: not run ({e})", file=sys.stderr)
        else:
            cpp = run_peer(exe, args.seconds, args.seed)
    if args.tdl2048:
        from bench import tdl2048
        try:
            tdl = tdl2048.run(args.tdl2048, args.seconds, args.seed)
        except (RuntimeError, ValueError) as e:
            raise SystemExit(f"error: {e}") from None
    ours = run_jax(args.seconds, args.num_games, args.chunk, args.seed, huge_pages=not args.no_huge_pages,
                   shared_step=args.shared_step)

    import jax

    load_after = _load_average()
    on_cpu = jax.default_backend() == "cpu"
    jax_rate = ours["moves"] / ours["seconds"]
    result = {"jaxgames_moves_per_s": jax_rate, "jaxgames": ours, "layout": layout.layout,
              "layout_how": layout.how, "backend": jax.default_backend(),
              "device_kind": jax.devices()[0].device_kind}
    sides = [("jaxgames", ours, jax_rate)]
    for name, r in (("C++", cpp), ("TDL2048", tdl)):
        if r is not None:
            sides.append((name, r, r["moves"] / r["seconds"]))
    if cpp is not None:
        result.update(cpp=cpp, cpp_moves_per_s=sides[[n for n, *_ in sides].index("C++")][2])
        result["ratio"] = jax_rate / result["cpp_moves_per_s"]
        if on_cpu:
            result["ratio_cpu"] = (ours["moves"] / max(ours["cpu_seconds"], 1e-9)) \
                / (cpp["moves"] / max(cpp["cpu_seconds"], 1e-9))
    if tdl is not None:
        result.update(tdl2048=tdl, tdl2048_moves_per_s=tdl["moves"] / tdl["seconds"])
        result["ratio_tdl2048"] = jax_rate / result["tdl2048_moves_per_s"]
        if cpp is not None:
            result["cpp_over_tdl2048"] = result["cpp_moves_per_s"] / result["tdl2048_moves_per_s"]

    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), jax {jax.__version__}, "
          f"{os.cpu_count()} CPUs, {len(os.sched_getaffinity(0))} usable; load average "
          f"{load_before} before, {load_after} after")
    print(layout.line())
    print(f"2048 n-tuple TD(0), 4x 6-tuples x 8 symmetries, alpha 0.1; ~{args.seconds:g} s each, "
          f"from scratch")
    table_at = (f"table on {'huge' if ours['huge_pages'] else 'ordinary'} pages" if on_cpu
                else f"table in {jax.devices()[0].device_kind} memory")
    print(f"jaxgames: num_games {args.num_games}, shared step {ours['shared_step']}, chunk {args.chunk} updates "
          f"(compile {ours['compile_seconds']:.1f} s, not timed), {table_at}")
    if cpp is not None:
        print("C++ peer: 1 thread, 1 game, online updates (g++ -O3 -march=native), on the host CPU")
    if tdl is not None:
        print(f"TDL2048:  1 thread, {tdl['blocks']} blocks of 1,000 games, on the host CPU ({tdl['command']})")
    for name, r, rate in sides:
        print(_line(name, r, rate, on_cpu or name != "jaxgames"))
    if cpp is not None:
        per_cpu = f"  (per CPU-second: {result['ratio_cpu']:.2f}x)" if on_cpu else ""
        print(f"ratio jaxgames / C++: {result['ratio']:.2f}x{per_cpu}")
    if tdl is not None:
        print(f"ratio jaxgames / TDL2048: {result['ratio_tdl2048']:.2f}x"
              + (f"; C++ / TDL2048: {result['cpp_over_tdl2048']:.2f}x" if cpp is not None else ""))
    scores = [f"jaxgames {ours['avg_score_last_games']:,.0f} ({ours['last_games']} games)"]
    scores += [f"{n} {r['avg_score_last_1000']:,.0f}" for n, r, _ in sides[1:]]
    print(f"avg score, last ~{LAST_GAMES} games: {', '.join(scores)} (random play ~1,100)")
    return result


if __name__ == "__main__":
    main()
