"""``make demo``: the quick presets of ten-and-a-half and 2048, then one summary table (Hex's
quick preset, 13-14 minutes on 2 CPU cores, runs on its own: ``python -m train.hex``).

Each game contributes a row builder: ``(game, method, headline figure, reference)``.
"""

from __future__ import annotations

import sys
import time

from train import game2048, ten_half


def ten_half_rows(runs_dir: str, stamp: str) -> list[list[str]]:
    s = ten_half.main(["--preset", "quick", "--runs-dir", runs_dir, "--run-name", f"demo-{stamp}"])
    opt = s["optimal_value"]
    return [
        ["ten-and-a-half", "on-policy ε-greedy MC control", f"exact value {s['on_policy_value']:+.4f}",
         f"optimum {opt:+.4f} (gap {opt - s['on_policy_value']:.4f})", f"{s['seconds']:.0f} s*"],
        ["ten-and-a-half", "off-policy weighted-IS MC control", f"exact value {s['off_policy_value']:+.4f}",
         f"optimum {opt:+.4f} (gap {opt - s['off_policy_value']:.4f})", "*both methods"],
    ]


def game2048_rows(runs_dir: str, stamp: str) -> list[list[str]]:
    s = game2048.main(["--preset", "quick", "--runs-dir", runs_dir, "--run-name", f"demo-{stamp}"])
    rows = [["2048", "n-tuple TD(0), 1-ply greedy",
             f"avg score {s['depth1_avg_score']:,.0f} (2048 rate {s['depth1_rate_2048']:.0%})",
             f"reference C++ 1-ply ~100,000 after 300k games; {s['train_games']:,} games here",
             f"{s['seconds']:.0f} s"]]
    if "depth2_avg_score" in s:
        rows.append(["2048", "same network, 2-ply expectimax",
                     f"avg score {s['depth2_avg_score']:,.0f} (2048 rate {s['depth2_rate_2048']:.0%})",
                     f"{s['depth2_avg_score'] / s['depth1_avg_score']:.2f}x the 1-ply average", ""])
    rows.append(["2048", "training throughput", f"{s['moves_per_second']:,.0f} moves/s",
                 "C++ peer ~2.7M moves/s on one core, quiet 2-core CPU (bench/game2048_train.py)", ""])
    return rows


GAMES = [ten_half_rows, game2048_rows]


def main(argv=None) -> None:
    runs_dir = "runs"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    rows = []
    for game in GAMES:
        rows += game(runs_dir, stamp)
    header = ["game", "method", "headline", "reference", "wall time"]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: " | ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
    print("\n" + line(header) + "\n" + "-+-".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    print(f"\nruns written under {runs_dir}/<game>/demo-{stamp}/ (report.md, plots/, summary.json)")


if __name__ == "__main__":
    main(sys.argv[1:])
