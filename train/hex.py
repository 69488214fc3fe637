"""Hex: reinforcement learning against a pool of past models, evaluated against plain UCT.

    python -m train.hex                            # quick: 7x7 (<= 15 min on a 2-core CPU)
    python -m train.hex --preset full              # 11x11, phase 1 + the source's ten rounds
    python -m train.hex --board-size 9 --simulations 64 --run-name b9

The source (Zhang, Meng & Yang 2020): phase 1 trains the network on random games labelled by
plain UCT; phase 2 plays rounds of self-play of the newest model against one drawn from a pool
of past models, trains on them and adds the result to the pool; after ten rounds the model
beats plain UCT in 80% of 20 games. Writes runs/hex/<run-name>/: config.json, metrics.jsonl,
checkpoints/, best/, sgf/, plots/*.png, report.md and summary.json (docs/hex_training.md).
Runs on several hosts as it is (docs/training.md, "Scaling out to several hosts").
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Sequence

from train.common import exit_on_user_error, init_distributed, is_primary, one_cpu_device_per_core, parse
from train.games import hex as lib
from train.games.hex_config import PRESETS

GAME = lib.GAME
PROG = "python -m train.hex"


#: train, evaluate and write the run folder (the run lives in train/games/hex.py)
train = lib.train


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    init_distributed()  # first: the config's checks count every host's devices
    _, config = parse(PRESETS, argv, prog=PROG)
    summary = train(config)
    if is_primary():
        print(json.dumps({k: summary[k] for k in ("board_size", "win_rate_vs_uct", "win_rate_vs_uct_ci95",
                                                  "final_elo", "rounds", "self_play_games", "seconds")})
              + f" -> {pathlib.Path(config.runs_dir) / GAME / config.run_name}")
    return summary


if __name__ == "__main__":
    one_cpu_device_per_core()   # before JAX starts: each core plays its share of the games
    main(sys.argv[1:])
