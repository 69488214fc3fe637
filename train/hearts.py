"""Hearts: Sturtevant & White's learned player, TD(λ) on AND-ed binary features, used inside
max^n over the current trick (perfect information) and inside PIMC (imperfect information).

    python -m train.hearts                       # quick: the Q♠ and hearts stages, then the combined player
    python -m train.hearts --preset full         # <= 2 h on a 2-core CPU
    python -m train.hearts --preset source       # the source's 200,000 games a stage: days on 2 cores, resumable
    python -m train.hearts --predictor qs        # the Q♠ predictor alone
    python -m train.hearts --opponent pie        # one learning seat against three PIE players

Writes runs/hearts/<run-name>/: config.json, metrics.jsonl, checkpoints/, plots/*.png, report.md
(the top features in words), summary.json and, for the combined player, stages/ (the two
predictors' own runs) and selection.npz (docs/hearts_training.md).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Sequence

from train.common import RunConfig, exit_on_user_error, run_main, parse
from train.games import hearts as lib

GAME = lib.GAME
PROG = "python -m train.hearts"

#: train, evaluate and write the run folder (the run lives in train/games/hearts.py)
train = lib.train


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """A learned predictor by TD(λ) (the Q♠, the hearts, or the two combined after training
    each as a stage), the learned trick search evaluated against PIE after every round, against
    PIE, the rule-based bot and random at the end, and inside PIMC against IIE (the paper
    variant; the moon off in training)."""

    # a finished run carried on: --resume --rounds N with N above the saved rounds (TD(λ)'s step
    # size does not depend on them; the stages keep their stage_rounds)
    EXTENDABLE_FIELDS = frozenset({"rounds"})

    predictor: str = "combined"
    """qs (the Q♠ points), hearts (the hearts) or combined (both, over the top features of the
    two, trained first as stages of this run: the source's player)."""
    rank_atoms: bool = True
    """The 12 ranked atoms (we hold k of a suit's 3 highest cards still out) beside the source's
    60 Q♠ and 88 hearts atoms: 72 and 100 (measured to help, docs/hearts_training.md)."""
    feature_sizes: tuple[int, ...] = (1, 2, 3)
    """Sizes of the AND-combinations of the Q♠ atoms that are features (the source: up to 4)."""
    hearts_feature_sizes: tuple[int, ...] = (1, 2, 3)
    """Sizes of the AND-combinations of the hearts atoms (the source: up to 3)."""
    max_active: int = 16
    """At most this many active atoms of each atom set are combined (the first by atom index;
    later ones dropped)."""
    stage_rounds: int = 2
    """Rounds of each stage (the Q♠ and the hearts predictor) of a combined run."""
    top_qs: int = 10_000
    """Features the combined player takes from the Q♠ predictor (the source: 10,000)."""
    top_hearts: int = 2_000
    """Features the combined player takes from the hearts predictor (the source: 2,000)."""
    games_per_update: int = 32
    """Games played in parallel (vmap) with one set of weights, then learned one after another."""
    updates_per_round: int = 25
    """Updates per round (one jitted chunk); an evaluation and a checkpoint after each round."""
    rounds: int = 3
    """Rounds (of the combined phase, for a combined run)."""
    opponent: str = "self"
    """self: every seat plays the learned search and learns; pie: seat 0 learns against three PIE."""
    lam: float = 0.75
    """λ of the λ-return (the source: 0.75)."""
    lr_scale: float = 13.0
    """Step of a state: 1 / (lr_scale x its active features), the games of an update learned one
    after another (the source's: 13, one game at a time)."""
    eval_deals: int = 4
    """Deals (x 14 seatings) against PIE and against the rule bot after every round."""
    final_eval_deals: int = 20
    """Deals (x 14 seatings) against PIE, the rule bot and random at the end: the summary's figures."""
    imperfect_deals: int = 2
    """Deals (x 14 seatings) of the learned player inside PIMC against IIE and against the rule
    bot at the end, the moon on (0: none)."""
    worlds: int = 20
    """Worlds the learned player (and IIE) deal and search per move under imperfect information
    (the source: 20)."""

    def validate(self) -> None:
        super().validate()
        if self.predictor not in lib.learned.PREDICTORS:
            raise ValueError(f"predictor must be one of {', '.join(lib.learned.PREDICTORS)}, got {self.predictor!r}")
        for name in ("games_per_update", "updates_per_round", "rounds", "stage_rounds", "top_qs", "top_hearts",
                     "worlds"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("eval_deals", "final_eval_deals"):
            if getattr(self, name) < 2:
                raise ValueError(f"{name} must be >= 2 (the interval needs two deals), got {getattr(self, name)}")
        if self.imperfect_deals == 1 or self.imperfect_deals < 0:
            raise ValueError(f"imperfect_deals must be 0 or >= 2 (the interval needs two deals), "
                             f"got {self.imperfect_deals}")
        if self.opponent not in lib.OPPONENTS:
            raise ValueError(f"opponent must be one of {', '.join(lib.OPPONENTS)}, got {self.opponent!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1], got {self.lam}")
        if not self.lr_scale > 0:
            raise ValueError(f"lr_scale must be > 0, got {self.lr_scale}")
        for name in ("feature_sizes", "hearts_feature_sizes"):
            sizes = getattr(self, name)
            if not sizes or any(not 1 <= s <= 4 for s in sizes):
                raise ValueError(f"{name} must be sizes from 1 to 4, got {sizes}")
        if not 1 <= self.max_active <= 24:
            raise ValueError(f"max_active must be from 1 to 24, got {self.max_active}")


# Sized from measured speed (docs/hearts_training.md; 2-core Zen 5, with another run sharing the
# cores: halve these times for a quiet machine): training 23 games/s for the Q♠ or the hearts
# predictor and 11 for the combined one (twice the features a seat), the perfect-information
# evaluation 15-20 hands/s, the learned player inside PIMC (20 worlds) 0.8 hands/s.
PRESETS = {
    # stages of 2 x 25 updates x 32 games (1,600 games each), then 3 x 25 x 32 = 2,400 games of the
    # combined player; 4 deals x 14 seatings against PIE after every round, 20 at the end against
    # PIE, the rule bot and random, 2 deals x 14 in PIMC against IIE and the rule bot
    "quick": Config(stage_rounds=2, rounds=3, eval_deals=4, final_eval_deals=20, imperfect_deals=2),
    # stages of 4 x 25 x 32 (3,200 games each), then 5 x 25 x 32 = 4,000 games of the combined
    # player (10,400 in all: issue 61's lever protocol, where the learned player beats PIE); 10
    # deals a round, 100 at the end (the 1,400 hands), 20 in PIMC. The old 56,000 games
    # (stages of 10 x 50 x 32, then 15 x 50 x 32) broke the 2 h promise on the 2-core Zen 1 of
    # this kind: a stage round of 1,600 games took over 4.5 min, two seeds side by side.
    "full": Config(stage_rounds=4, rounds=5, updates_per_round=25, eval_deals=10, final_eval_deals=100,
                   imperfect_deals=20),
    # the source's volume: 200,000 games for each stage (its runs of the Q♠ and the hearts
    # predictors), then 200,000 of the combined player; rounds of 125 x 32 = 4,000 games, so the
    # round's evaluation (10 deals x 14) costs a few percent; 100 deals at the end, 50 in PIMC (the
    # issue's protocol). Days on a 2-core CPU (docs/hearts_training.md): resume it (--resume).
    "source": Config(stage_rounds=50, rounds=50, updates_per_round=125, eval_deals=10, final_eval_deals=100,
                     imperfect_deals=50),
}


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    return run_main(PRESETS, argv, prog=PROG, game=GAME, train=train,
                    shown=("points_per_hand_learned_vs_pie", "points_per_hand_learned_vs_rule",
                           "points_per_hand_pimc_vs_iie", "train_games", "seconds"))


if __name__ == "__main__":
    main(sys.argv[1:])
