"""2048: does a large batch learn as well per move? Score at equal moves per batch size and rule.

    python -m bench.game2048_batch --games 128,4096 --rules sum,sqrt --seeds 0,1 \\
        --moves 25M,50M,100M,200M,300M --out /tmp/batch.jsonl --plot docs/img/game2048_batch.png

For every (games per update, shared-step rule, seed) the learner (``train/algos/ntuple_td.py``,
TD(0), α = 0.1, the 4 standard 6-tuples) trains from scratch; at each of ``--moves`` (training
moves, all games together) its greedy 1-ply player is evaluated on ``--eval-games`` games in
the arena, from the same evaluation keys for every configuration (so the configurations are
compared on the same deals of tiles). One JSON line per checkpoint is appended to ``--out``;
configurations already there are skipped, so a long study can be stopped and started again.
``--plot`` draws the average score against moves, one line per batch size and rule, each run's
points and their mean.

The rules are the learner's ``shared_step``: ``sum`` adds the steps that the games of one update
make on a shared weight, ``sqrt`` divides that sum by the square root of the number of games
that stepped it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.timing import cpu_model


def parse_count(text: str) -> int:
    """'300M' -> 300_000_000, '4k' -> 4000, '128' -> 128."""
    scale = {"k": 10**3, "m": 10**6, "g": 10**9}.get(text[-1:].lower(), 1)
    number = text[:-1] if scale > 1 else text
    try:
        value = float(number) * scale
    except ValueError:
        raise ValueError(f"not a count: {text!r} (like 128, 4k, 300M)") from None
    if value < 1 or value != int(value):
        raise ValueError(f"not a positive whole count: {text!r}")
    return int(value)




def train_and_evaluate(num_games: int, rule: str, seed: int, checkpoints: list[int], eval_games: int,
                       on_point=None) -> list[dict]:
    """Train from scratch to each checkpoint (moves) in turn and evaluate there; one dict each."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxgames.game2048 import players
    from jaxgames.game2048.board import BoardModel
    from jaxgames.game2048.ntuple import NTupleNetwork
    from train.algos import ntuple_td as td
    from train.common import make_chunk

    model = BoardModel("2048")
    cfg = td.TDConfig(network=NTupleNetwork(), num_games=num_games, shared_step=rule)
    carry = td.init(cfg, model, jax.random.key(seed))
    update = td.make_update(cfg, model)
    policy = players.value_policy(cfg.network, 1)
    # chunks of about a second's work, whatever the batch; the checkpoints round to whole chunks
    chunk_updates = max(1, 2**20 // num_games)
    chunk = make_chunk(update, chunk_updates)
    train_key = jax.random.key(10_000 + seed)
    done_updates, seconds, points = 0, 0.0, []
    for moves in sorted(checkpoints):
        target = -(-moves // (num_games * chunk_updates)) * chunk_updates
        while done_updates < target:
            t = time.perf_counter()
            carry, _ = chunk(carry, train_key, jnp.int32(done_updates))
            jax.block_until_ready(carry.table)
            seconds += time.perf_counter() - t
            done_updates += chunk_updates
        stats = players.evaluate(policy, carry.weights, jax.random.key(2**20 + moves // 10**6),
                                 num_games=eval_games)
        score = stats.score.astype(np.float64)
        point = {"num_games": num_games, "rule": rule, "seed": seed, "moves": done_updates * num_games,
                 "checkpoint": moves, "avg_score": float(score.mean()),
                 "ci95": float(1.96 * score.std(ddof=1) / np.sqrt(len(score))),
                 "rate_2048": float((stats.max_tile >= 2048).mean()),
                 "rate_8192": float((stats.max_tile >= 8192).mean()),
                 "eval_games": eval_games, "train_seconds": seconds,
                 "moves_per_second": done_updates * num_games / max(seconds, 1e-9)}
        points.append(point)
        if on_point:
            on_point(point)
    return points


def read_points(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot(points: list[dict], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 5))
    configs = sorted({(p["num_games"], p["rule"]) for p in points})
    colors = {g: plt.cm.tab10(i) for i, g in enumerate(sorted({g for g, _ in configs}))}
    for games, rule in configs:
        mine = [p for p in points if p["num_games"] == games and p["rule"] == rule]
        xs = sorted({p["checkpoint"] for p in mine})
        mean = [np.mean([p["avg_score"] for p in mine if p["checkpoint"] == x]) for x in xs]
        # a run is a (device, seed): another device draws other tiles from the same seed
        runs = len({(p.get("device", ""), p["seed"]) for p in mine})
        style = "--" if rule == "sum" else "-"
        ax.plot(np.array(xs) / 1e6, mean, style, marker="o", color=colors[games],
                label=f"{games:,} games, {rule} ({runs} run{'s' * (runs > 1)})")
        ax.scatter([p["checkpoint"] / 1e6 for p in mine], [p["avg_score"] for p in mine], s=8,
                   color=colors[games], alpha=0.5)
    ax.set(xlabel="training moves (millions)", ylabel="average score, greedy 1-ply", title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="128,4096", help="games per update, comma-separated")
    parser.add_argument("--rules", default="sum,sqrt", help="shared-step rules: sum, sqrt")
    parser.add_argument("--seeds", default="0", help="seeds, comma-separated")
    parser.add_argument("--moves", default="100M,300M", help="checkpoints in training moves")
    parser.add_argument("--eval-games", type=int, default=500, help="1-ply games per evaluation")
    parser.add_argument("--out", default="game2048_batch.jsonl", help="JSON lines, appended")
    parser.add_argument("--plot", default="", help="PNG of score against moves (from all of --out)")
    parser.add_argument("--plot-only", action="store_true", help="only redraw --plot from --out")
    args = parser.parse_args(argv)
    try:
        games = [parse_count(g) for g in args.games.split(",")]
        checkpoints = [parse_count(m) for m in args.moves.split(",")]
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError as e:
        parser.error(str(e))
    rules = args.rules.split(",")
    from train.algos.ntuple_td import SHARED_STEPS
    if bad := [r for r in rules if r not in SHARED_STEPS]:
        parser.error(f"--rules takes {', '.join(SHARED_STEPS)}, got {', '.join(bad)}")
    if args.eval_games < 2:
        parser.error("--eval-games must be >= 2")
    out = Path(args.out)
    if args.plot_only:
        if not args.plot:
            parser.error("--plot-only needs --plot")
        points = read_points(out)
        plot(points, Path(args.plot), "2048 TD(0), α = 0.1: score at equal moves per batch size")
        return points

    import jax
    header = (f"{jax.devices()[0].device_kind} ({jax.default_backend()}), host CPU {cpu_model()}, "
              f"{os.cpu_count()} CPUs, jax {jax.__version__}")
    print(header, flush=True)
    done = {(p["num_games"], p["rule"], p["seed"]) for p in read_points(out)}
    out.parent.mkdir(parents=True, exist_ok=True)

    def record(point):
        point["device"] = header
        point["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        with out.open("a") as f:
            f.write(json.dumps(point) + "\n")
        print(f"{point['num_games']:>6} games {point['rule']:>4} seed {point['seed']}: "
              f"{point['moves'] / 1e6:7.1f} M moves  avg score {point['avg_score']:9,.0f} "
              f"± {point['ci95']:,.0f}  ({point['moves_per_second'] / 1e6:.2f} M moves/s)", flush=True)

    for g in games:
        for rule in rules:
            for seed in seeds:
                if (g, rule, seed) in done:
                    print(f"{g} games {rule} seed {seed}: in {out} already, skipped", flush=True)
                    continue
                train_and_evaluate(g, rule, seed, checkpoints, args.eval_games, on_point=record)
    points = read_points(out)
    if args.plot:
        plot(points, Path(args.plot), "2048 TD(0), α = 0.1: score at equal moves per batch size")
    return points


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
