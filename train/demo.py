"""``make demo``: every game's quick preset, then one summary table.

Each game contributes a row builder: ``(game, method, headline figure, reference)``.
"""

from __future__ import annotations

import sys
import time

from train import ten_half


def ten_half_rows(runs_dir: str, stamp: str) -> list[list[str]]:
    s = ten_half.main(["--preset", "quick", "--runs-dir", runs_dir, "--run-name", f"demo-{stamp}"])
    opt = s["optimal_value"]
    return [
        ["ten-and-a-half", "on-policy ε-greedy MC control", f"exact value {s['on_policy_value']:+.4f}",
         f"optimum {opt:+.4f} (gap {opt - s['on_policy_value']:.4f})", f"{s['seconds']:.0f} s*"],
        ["ten-and-a-half", "off-policy weighted-IS MC control", f"exact value {s['off_policy_value']:+.4f}",
         f"optimum {opt:+.4f} (gap {opt - s['off_policy_value']:.4f})", "*both methods"],
    ]


GAMES = [ten_half_rows]


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
