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

import dataclasses
import sys
from typing import Annotated, Sequence

import tyro

from jaxgames.hex.board import MAX_SIZE, MIN_SIZE
from jaxgames.hex.network import RESNET_BLOCKS, RESNET_CHANNELS, size_options
from jaxgames.search.mcts import KINDS
from train.algos.alphazero import AZConfig
from train.common import (RunConfig, check_divisible, exit_on_user_error, run_main,
                          one_cpu_device_per_core, parse)
from train.games import hex as lib

GAME = lib.GAME
PROG = "python -m train.hex"

#: train, evaluate and write the run folder (the run lives in train/games/hex.py)
train = lib.train


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """Hex AlphaZero-style training (UCT-labelled phase 1, self-play against a pool of past
    models) with an arena evaluation against plain UCT after every round."""

    board_size: int = 7
    """Board side n (3..19)."""
    network: str = "source"
    """The network: source (the paper's CNN) or resnet."""
    resnet_blocks: int = RESNET_BLOCKS
    """Residual blocks of the resnet (0: the stem and the heads alone)."""
    resnet_channels: int = RESNET_CHANNELS
    """Filters of every 3x3 convolution of the resnet."""
    init_from: str = ""
    """Start the network from a trained one: a shipped agent's name (az-11x11) or a run folder
    (runs/hex/<run>, its best/ model). The board and the network must be the run's; the
    optimizer, the buffer and the pool start empty, the pool with this network in it when
    there is no phase 1. Empty: random weights (the source)."""
    phase1: str = "uct"
    """Phase 1, one round: uct (random games labelled by plain UCT, the source) or none."""
    rounds: int = 10
    """Self-play rounds (the source: ten); the newest model joins the pool after each."""
    updates_per_round: int = 4
    """Updates per round (one jitted chunk); each plays games_per_update games, then SGD."""
    simulations: int = 32
    """Search simulations per move in self-play (and in evaluation, unless eval_simulations)."""
    eval_simulations: int = 0
    """Simulations per move of the agent in evaluation games (0: as in self-play)."""
    eval_symmetry: bool = False
    """The evaluated agent's network is averaged over the position and its 180-degree
    rotation (two network evaluations per simulation; self-play is unchanged)."""
    search: str = "muzero"
    """Search: muzero (AlphaZero PUCT), gumbel or source (the paper's eqs. (5)-(7))."""
    dirichlet_fraction: float = 0.25
    """Root noise in self-play (0 = none)."""
    dirichlet_alpha: float = 0.3
    lr_decay: bool = False
    """Lower the step size along a cosine to final_lr_fraction over the run (off: constant)."""
    lr_decay_rounds: int = 0
    """Self-play rounds the cosine spans (0: the run's rounds); more than ``rounds`` stops the
    run partway down the schedule of a longer run."""
    augment: bool = True
    """Train on the board's 180-degree rotation with probability 1/2."""
    uct_simulations: int = 200
    """Simulations of the plain-UCT opponent of the evaluation."""
    uct_ladder: tuple[int, ...] = ()
    """A rising UCT ladder: ascending simulation counts (e.g. 1000 2000 5000 10000). The round
    evaluation's UCT and the self-play anchor both play on the current rung, one up after a
    round whose win rate's 95% interval lies above ladder_threshold (in place of
    uct_simulations and anchor_simulations). Empty: off."""
    ladder_threshold: float = 0.5
    """The ladder climbs once the lower end of the round's 95% interval is above this: 0.5 is
    "better than this rung" with 97.5% confidence, not a lucky round (20 games: 15 wins)."""
    eval_games: int = 20
    """Evaluation games against UCT after every round, half as Black (the source: 20)."""
    final_eval_games: int = 200
    """Games against UCT at the end, half as Black: the summary's win rate (0: the last
    round's evaluation)."""
    pool_size: int = 0
    """Models the pool keeps, the oldest overwritten first (0: every model of the run). Set, with
    a step size that does not decay over the run's own rounds (no lr_decay, or lr_decay_rounds),
    it lets --resume raise --rounds: the longer run then trains on and ends as the unbroken one."""
    elo_games: int = 4
    """Games of the newest model against each pool model it meets after every round (0 = none)."""
    elo_opponents: int = 0
    """Pool models the newest meets after every round, the most recent first (0: all of them)."""
    sgf_games: int = 4
    """Final games against UCT saved as SGF (0 = none)."""
    learner: Annotated[AZConfig, tyro.conf.OmitArgPrefixes] = AZConfig(sample_moves=8)
    """The learner's hyper-parameters (train/algos/alphazero.py), flags without a prefix."""

    @property
    def EXTENDABLE_FIELDS(self) -> frozenset[str]:   # noqa: N802 (RunConfig's name for it)
        return lib.extendable_fields(self)

    def validate(self) -> None:
        super().validate()
        if not MIN_SIZE <= self.board_size <= MAX_SIZE:
            raise ValueError(f"board_size must be in {MIN_SIZE}..{MAX_SIZE}, got {self.board_size}")
        if self.network not in ("source", "resnet"):
            raise ValueError(f"network must be source or resnet, got {self.network!r}")
        size_options("resnet", resnet_blocks=self.resnet_blocks, resnet_channels=self.resnet_channels)
        if self.network == "source" and (self.resnet_blocks, self.resnet_channels) != (RESNET_BLOCKS, RESNET_CHANNELS):
            raise ValueError("resnet_blocks and resnet_channels size the resnet: give --network resnet "
                             "with them (the source's network has fixed sizes)")
        if self.phase1 not in ("uct", "none"):
            raise ValueError(f"phase1 must be uct or none, got {self.phase1!r}")
        if self.search not in KINDS:
            raise ValueError(f"search must be one of {', '.join(KINDS)}, got {self.search!r}")
        for name in ("rounds", "updates_per_round", "simulations", "uct_simulations", "eval_games"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("elo_opponents", "eval_simulations", "lr_decay_rounds", "pool_size"):   # 0: the default's meaning
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("elo_games", "sgf_games", "final_eval_games"):
            if getattr(self, name) < 0 or getattr(self, name) % 2:
                raise ValueError(f"{name} must be an even number >= 0, got {getattr(self, name)}")
        if self.eval_games % 2:
            raise ValueError(f"eval_games must be even (half as Black), got {self.eval_games}")
        if not 0.0 <= self.dirichlet_fraction <= 1.0 or self.dirichlet_alpha <= 0:
            raise ValueError("dirichlet_fraction must be in [0, 1] and dirichlet_alpha > 0")
        self.learner.validate()
        check_divisible(self.learner.games_per_update // 2)
        lib.check_run(self)

# What each preset reaches, with the runs behind these choices: docs/hex_training.md and
# docs/lab/hex.md.
PRESETS = {
    # 7x7 within 15 minutes on a 2-core CPU: from scratch (phase 1's UCT labels cost more than
    # they bring at this budget), Gumbel search (it improves the policy with few simulations),
    # 24 rounds, the agent searching with as many simulations as its UCT opponent, Elo games
    # against the four newest pool models (a constant cost per round), the model the moving
    # average of the SGD iterates, and plain UCT-200 the opponent of a quarter of the updates
    # (seed 3 won 80.5% without it, 99.5% with it, in the same time).
    "quick": Config(phase1="none", search="gumbel", simulations=64, updates_per_round=16, rounds=24,
                    eval_simulations=200, eval_games=20, elo_opponents=4, lr_decay=True,
                    learner=AZConfig(games_per_update=128, sgd_steps=256, buffer_size=50_000,
                                     sample_moves=8, average_decay=0.999, anchor_fraction=0.25,
                                     anchor_simulations=200)),
    # 9x9: the quick preset's recipe (from scratch, Gumbel, the moving average) run longer, the
    # round evaluation and the anchor on a UCT ladder that climbs to the issue-65 bar's UCT-5,000;
    # the cosine spans 30 rounds whatever --rounds says and the pool holds 64 models, so
    # --resume --rounds N goes on past 30 at the final step size and ends as the unbroken run.
    "9x9": Config(board_size=9, phase1="none", search="gumbel", simulations=64, updates_per_round=16, rounds=30,
                  eval_simulations=200, eval_symmetry=True, eval_games=20, elo_opponents=4, lr_decay=True,
                  lr_decay_rounds=30, pool_size=64, uct_ladder=(200, 1000, 2000, 5000),
                  learner=AZConfig(games_per_update=128, sgd_steps=256, buffer_size=80_000, sample_moves=8,
                                   average_decay=0.999, anchor_fraction=0.25)),
    # the source's board, phase 1 and ten rounds, the agent searching with 200 simulations
    # (its network averaged over the half turn) against UCT with 1,000; phase-1 value targets
    # from the labelling UCT search and plain UCT-1,000 as the opponent of a quarter of the
    # self-play updates: the two changes that ended the stalls of some seeds. No Polyak
    # averaging here: it lost on 11x11 (28% against 83%).
    "full": Config(board_size=lib.FULL_SELF_PLAY["board_size"], phase1="uct", search=lib.FULL_SELF_PLAY["search"],
                   simulations=lib.FULL_SELF_PLAY["simulations"], updates_per_round=16,
                   uct_simulations=1000, eval_simulations=200, eval_symmetry=True, eval_games=20,
                   elo_games=8, elo_opponents=2, rounds=10, lr_decay=True, lr_decay_rounds=18,
                   learner=AZConfig(games_per_update=lib.FULL_SELF_PLAY["games_per_update"], sgd_steps=256,
                                    buffer_size=200_000, phase1_simulations=400, phase1_value="uct", sample_moves=8,
                                    anchor_fraction=0.25, anchor_simulations=1000)),
}


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    return run_main(PRESETS, argv, prog=PROG, game=GAME, train=train,
                    shown=("board_size", "win_rate_vs_uct", "win_rate_vs_uct_low", "win_rate_vs_uct_high", "final_elo",
                           "rounds", "self_play_games", "seconds"))


if __name__ == "__main__":
    one_cpu_device_per_core()   # before JAX starts: each core plays its share of the games
    main(sys.argv[1:])
