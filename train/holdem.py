"""Heads-up no-limit hold'em: AlphaHoldem's pseudo-Siamese network trained by PPO with the
Trinal-Clip loss and Best-K self-play, evaluated against five baselines and by local best
response.

    python -m train.holdem                         # quick (6 min on a 2-core Zen 5, <= 15 on slower CPUs)
    python -m train.holdem --preset full           # <= 2 h on a 2-core CPU
    python -m train.holdem --loss trinal --run-name trinal   # the source's Trinal-Clip loss (the presets: plain PPO)

The source (Zhao et al., AAAI 2022): card and action tensors in, a pseudo-Siamese network,
PPO whose loss also clips the ratio of negative advantages (δ1 = 3) and the value target (the
chips each side put in), opponents drawn among the K best of a rated pool of past models.
Writes runs/holdem/<run-name>/: config.json, metrics.jsonl, checkpoints/, best/, plots/*.png,
report.md and summary.json (docs/holdem_training.md).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated, Sequence

import tyro

from jaxgames.holdem.network import SIZES, TOWERS
from train.algos.ppo import PPOConfig
from train.common import (RunConfig, check_divisible, exit_on_user_error, run_main,
                          one_cpu_device_per_core, parse)
from train.common.config import check_int32, check_memory
from train.games import holdem as lib

GAME = lib.GAME
PROG = "python -m train.holdem"

#: train, evaluate and write the run folder (the run lives in train/games/holdem.py)
train = lib.train


@dataclasses.dataclass(frozen=True)
class Config(RunConfig):
    """Hold'em PPO (Trinal-Clip) from one seat against anchors and the K best pool models, a
    duplicate evaluation against the baselines after every round."""

    # the final evaluation's sizes change no training: --resume of a finished run with other
    # sizes evaluates its agent again (e.g. a longer LBR)
    RUN_ONLY_FIELDS = RunConfig.RUN_ONLY_FIELDS | {"final_eval_deals", "lbr_hands"}
    # a finished run carried on: --resume --rounds N with N above the saved rounds (the learning
    # rate is constant, so nothing trained so far depends on the number of rounds)
    EXTENDABLE_FIELDS = frozenset({"rounds"})

    network: str = "small"
    """The network's size: small (trains on a CPU) or source (AlphaHoldem's, about 8.6M
    parameters, for accelerators)."""
    tower: str = ""
    """The towers: dense or conv ("": the size's own)."""
    rounds: int = 10
    """Rounds; the newest model joins the pool after each."""
    updates_per_round: int = 10
    """PPO updates per round (one jitted chunk)."""
    pool_capacity: int = 32
    """Past models the pool keeps (the oldest leaves when full)."""
    best_k: int = 5
    """Opponents are drawn among the K best rated pool models (the source: 5)."""
    anchor_fraction: float = lib.ANCHOR_FRACTION
    """Share of the opponents that are fixed anchors outside the lineage."""
    anchors: str = ",".join(lib.ANCHORS)
    """The anchors, comma-separated baselines (random, call, allin, fold, equity); the first
    is the Elo's 0. An anchor is no longer a held-out measure of the agent."""
    eval_deals: int = 500
    """Duplicate deals (each played twice, seats swapped) against each baseline after every round."""
    final_eval_deals: int = 5_000
    """Duplicate deals against each baseline at the end: the summary's figures."""
    lbr_hands: int = 256
    """Hands of local best response against the final agent (0: none); an even number."""
    lbr_every: int = 5
    """Local best response against the newest model every this many rounds, all-in adjusted and
    as played, on the same deals each time (0: only at the end): the training curve of
    plots/lbr.png."""
    round_lbr_hands: int = 64
    """Hands of each of those local best responses; an even number."""
    elo_deals: int = 200
    """Duplicate deals of the newest model against each pool model it meets (0: none)."""
    elo_opponents: int = 4
    """Pool models the newest meets after every round, the most recent first (0: all)."""
    exploiter_share: float = 0.0
    """Share of the opponents that are frozen exploiters (AlphaStar's main exploiters,
    train/algos/league.py; 0: none, no exploiter trained). Off by default: not yet measured.
    Above 0 each update also trains an exploiter against the newest model (about twice the cost)."""
    exploiter_margin_mbb: float = 1_000.0
    """The exploiter is frozen into the exploiters' pool once its training return against the
    newest model over a round is above this (the lower end of its 95% interval), mbb/hand."""
    exploiter_rounds: int = 10
    """...or after this many rounds whatever it reached; it then restarts from the newest model."""
    exploiter_capacity: int = 8
    """Frozen exploiters kept (the oldest leaves when full)."""
    learner: Annotated[PPOConfig, tyro.conf.OmitArgPrefixes] = PPOConfig()
    """The learner's hyper-parameters (train/algos/ppo.py), flags without a prefix."""

    def validate(self) -> None:
        super().validate()
        if self.network not in SIZES:
            raise ValueError(f"network must be one of {', '.join(SIZES)}, got {self.network!r}")
        if self.tower and self.tower not in TOWERS:
            raise ValueError(f"tower must be one of {', '.join(TOWERS)} (or empty), got {self.tower!r}")
        for name in ("rounds", "updates_per_round", "pool_capacity", "best_k", "exploiter_rounds",
                     "exploiter_capacity"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("eval_deals", "final_eval_deals"):
            if getattr(self, name) < 2:
                raise ValueError(f"{name} must be >= 2 (the interval needs two deals), got {getattr(self, name)}")
        for name in ("elo_deals", "elo_opponents", "lbr_hands", "lbr_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.elo_deals == 1:
            raise ValueError("elo_deals must be 0 or >= 2 (the interval needs two deals)")
        for name in ("lbr_hands", "round_lbr_hands"):
            if getattr(self, name) % 2:
                raise ValueError(f"{name} must be even (half with LBR on the button), got {getattr(self, name)}")
        if self.lbr_every and self.round_lbr_hands < 2:
            raise ValueError(f"round_lbr_hands must be >= 2 when lbr_every is set, got {self.round_lbr_hands}")
        lib.anchor_names(self.anchors)
        if not 0.0 <= self.anchor_fraction <= 1.0:
            raise ValueError(f"anchor_fraction must be in [0, 1], got {self.anchor_fraction}")
        if not 0.0 <= self.exploiter_share <= 1.0 - self.anchor_fraction:
            raise ValueError(f"exploiter_share must be in [0, 1 - anchor_fraction = {1.0 - self.anchor_fraction:g}], "
                             f"got {self.exploiter_share}")
        self.learner.validate()
        check_divisible(self.learner.num_envs)
        updates = self.rounds * self.updates_per_round
        check_int32("the decisions (rounds x updates_per_round x num_envs x num_steps)",
                    updates * self.learner.num_envs * self.learner.num_steps,
                    "the learner counts its decisions in an int32")
        check_memory(*lib.memory(self))


# What each preset reaches, with the runs behind these choices: docs/holdem_training.md and
# docs/lab/holdem.md.
# Both presets train with the plain clipped PPO loss: at these budgets it beat the source's
# Trinal-Clip on every seed measured (docs/lab/holdem.md: the quick preset's seeds 0 and 1, the
# full preset's seed 0, where only plain PPO beat the equity bot and reached +500 against fold);
# `--loss trinal` trains with the source's.
PLAIN_PPO = PPOConfig(loss="ppo")
PRESETS = {
    # 25 rounds of 20 updates (about 1.9 M hands), the small dense network: under 6 minutes on
    # a 2-core Zen 5, leaving room for CPUs at a third of its speed
    "quick": Config(rounds=25, updates_per_round=20, learner=PLAIN_PPO),
    # 160 rounds of 50 updates (about 18.6 M hands), the final evaluation over 50,000 deals a
    # baseline (100,000 hands) and LBR over 4,096 hands (the issue asks for at least 1,024; the
    # all-in adjusted interval over 4,096 is what tells the agent from the bots, about 17 min
    # of the run): the bars. The LBR curve: 256 hands every 20 rounds (about ±3,500
    # all-in adjusted; 64 hands every 10 was too wide to read a trend). The equity bot is a fourth anchor: without it every
    # configuration measured (the loss, an annealed rate, more anchor games, a larger entropy
    # bonus) lost to it on one seed of two; LBR, which training never meets, is the held-out
    # measure. 160 rounds, not 100: on a 2-core Intel Xeon, seeds 0 and 1 both meet every match
    # bar at 160 (seed 1 lost to the equity bot at 100) and LBR fell on both (seed 0 9,693 ->
    # 7,087, seed 1 11,239 -> 9,582, all-in adjusted); 1 h 23 min there (docs/lab/holdem.md)
    "full": Config(rounds=160, updates_per_round=50, eval_deals=1_000, final_eval_deals=50_000, lbr_hands=4_096,
                   lbr_every=20, round_lbr_hands=256, anchors=",".join(lib.FULL_ANCHORS), learner=PLAIN_PPO),
}


@exit_on_user_error(PROG)
def main(argv: Sequence[str] | None = None) -> dict:
    return run_main(PRESETS, argv, prog=PROG, game=GAME, train=train,
                    shown=("mbb_vs_random", "mbb_vs_call", "mbb_vs_allin", "mbb_vs_fold", "mbb_vs_equity",
                           "hands_trained", "seconds"))


if __name__ == "__main__":
    one_cpu_device_per_core()   # before JAX starts: each core plays its share of the games
    main(sys.argv[1:])
