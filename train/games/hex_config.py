"""The settings of ``python -m train.hex``: :class:`Config` (every flag, with the source's
choices as defaults) and the ``quick`` and ``full`` :data:`PRESETS`; importable without the
entry module (the benches read the presets' search settings)."""

from __future__ import annotations

import dataclasses

from jaxgames.hex.board import MAX_SIZE, MIN_SIZE
from jaxgames.hex.network import RESNET_BLOCKS, RESNET_CHANNELS, size_options
from jaxgames.search.mcts import KINDS
from train.common import RunConfig, check_divisible
from train.games import hex as lib


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
    phase1: str = "uct"
    """Phase 1: uct (random games labelled by plain UCT, the source) or none (from scratch)."""
    phase1_rounds: int = 1
    """Rounds of phase 1 (each updates_per_round updates)."""
    phase1_value: str = "result"
    """Value target of a phase-1 position: result (the random game's, the source's) or uct (the
    labelling UCT search's root win rate, over all its simulations)."""
    self_play_value: str = "result"
    """Value target of a self-play position: result (the game's) or uct (plain UCT's root win
    rate with phase1_simulations, as phase1_value uct's; a UCT search on every position)."""
    phase1_simulations: int = 200
    """UCT simulations per phase-1 label."""
    rounds: int = 10
    """Self-play rounds (the source: ten); the newest model joins the pool after each."""
    updates_per_round: int = 4
    """Updates per round (one jitted chunk); each plays games_per_update games, then SGD."""
    games_per_update: int = 32
    """Games per update, half with each colour (a multiple of 2 x the device count)."""
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
    sample_moves: int = 8
    """Self-play moves played by sampling the search's action; later moves play its best."""
    pool_size: int = 0
    """Past models kept as self-play opponents, the most recent (0: every one, the source's
    pool; a smaller pool keeps the opponents near the newest model's strength)."""
    self_fraction: float = 0.0
    """Probability that an update's self-play games are the newest model against itself
    instead of a pool model (0: the source's pool; 1: AlphaZero's pure self-play)."""
    best_k: int = 0
    """Self-play opponents drawn among the K pool models of highest Elo (AlphaHoldem's
    Best-K; the newest of equals, so the K newest before any rating); 0: the whole pool."""
    anchor_fraction: float = 0.0
    """Probability that a self-play update's games are the newest model against plain UCT
    (anchor_simulations) instead of a pool model: an opponent outside the lineage, whose
    moves train the value head only (0: the source's pool alone)."""
    anchor_simulations: int = 200
    """Simulations of the plain-UCT anchor (anchor_fraction)."""
    policy_from: str = "both"
    """Whose self-play moves train the policy head: both (the source) or newest (the pool
    opponent's search policies, from an older network, are left out; its positions still
    train the value head)."""
    self_play_labels: str = "search"
    """Policy targets of self-play positions: search (the self-play search's) or uct (plain UCT
    with phase1_simulations, as phase 1's: the source's sec. 2.3)."""
    compact_search: bool = True
    """Once a self-play step's unfinished games fit in half the batch, search only them (a
    half-size search; the same games, fewer positions searched after most games have ended)."""
    average_decay: float = 0.0
    """Polyak averaging: the model that plays and is evaluated is the moving average of the SGD
    iterates with this decay per SGD step (0: the last iterate, the source)."""
    sgd_steps: int = 32
    """Minibatch steps per update."""
    batch_size: int = 128
    """Positions per minibatch."""
    buffer_size: int = 20_000
    """Replay buffer positions (the newest kept)."""
    learning_rate: float = 1e-3
    """RMSprop step size."""
    lr_decay: bool = False
    """Lower the step size along a cosine to a tenth over the run (off: constant, Keras's)."""
    lr_decay_rounds: int = 0
    """Self-play rounds the cosine spans (0: the run's rounds); more than ``rounds`` stops the
    run partway down the schedule of a longer run."""
    alpha: float = 0.5
    """Policy-loss weight in eq. (3) (value: 1 - alpha)."""
    beta: float = 1e-4
    """L2 coefficient in eq. (3)."""
    augment: bool = True
    """Train on the board's 180-degree rotation with probability 1/2."""
    uct_simulations: int = 200
    """Simulations of the plain-UCT opponent of the evaluation."""
    eval_games: int = 20
    """Evaluation games against UCT after every round, half as Black (the source: 20)."""
    final_eval_games: int = 200
    """Games against UCT at the end, half as Black: the summary's win rate (0: the last
    round's evaluation)."""
    elo_games: int = 4
    """Games of the newest model against each pool model it meets after every round (0 = none)."""
    elo_opponents: int = 0
    """Pool models the newest meets after every round, the most recent first (0: all of them;
    each meeting is one arena call, so a long run's rounds grow with its pool unless capped)."""
    sgf_games: int = 4
    """Final games against UCT saved as SGF (0 = none)."""

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
        # the learner's own fields (games, SGD, buffer, loss) are checked by AZConfig.validate
        for name in ("phase1_simulations", "rounds", "updates_per_round", "simulations",
                     "uct_simulations", "eval_games", "phase1_rounds", "anchor_simulations"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("pool_size", "elo_opponents", "eval_simulations", "best_k", "lr_decay_rounds"):   # 0: the default's meaning
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("elo_games", "sgf_games", "final_eval_games"):
            if getattr(self, name) < 0 or getattr(self, name) % 2:
                raise ValueError(f"{name} must be an even number >= 0, got {getattr(self, name)}")
        if self.eval_games % 2:
            raise ValueError(f"eval_games must be even (half as Black), got {self.eval_games}")
        if not 0.0 <= self.dirichlet_fraction <= 1.0 or self.dirichlet_alpha <= 0:
            raise ValueError("dirichlet_fraction must be in [0, 1] and dirichlet_alpha > 0")
        lib.az_config(self).validate()
        check_divisible(self.games_per_update // 2)


PRESETS = {
    # 7x7 on a 2-core CPU within 15 minutes (measured in docs/hex_training.md): from scratch,
    # since phase 1's UCT labels cost more than they bring at this budget; Gumbel search, which
    # improves the policy with few simulations; 24 rounds, since 16 left some seeds short of
    # the bar; the agent searches with as many simulations as its UCT opponent; the Elo games
    # meet the four newest pool models, a constant cost per round; the policy head learns from
    # the newest model's moves only and the model is the moving average of the SGD iterates:
    # on a 2-core CPU 2.6x slower at the network than the one the preset was sized on, seeds
    # 0-3 won 90-98% this way, against 84% for seed 3 with the source's "both" and the last
    # iterate (docs/hex_training.md)
    "quick": Config(phase1="none", search="gumbel", simulations=64, games_per_update=128,
                    updates_per_round=16, rounds=24, sgd_steps=256, buffer_size=50_000,
                    eval_simulations=200, eval_games=20, elo_opponents=4, lr_decay=True,
                    policy_from="newest", average_decay=0.999),
    # the source's board and phase 1, then self-play in which only the newest model's moves
    # train the policy head (policy_from="newest"; with the source's "both" the run of
    # docs/hex_training.md peaked at round 9, 71% over 200 games, then fell to 21%), the agent
    # searching with 200 simulations against UCT with 1,000. Its one run (18 rounds, 2 CPU
    # devices, on a machine 1.8x slower at the network than the one the quick preset was
    # timed on) kept its best model at round 10, 83% over 200 games, after 1 h 32 min; the
    # preset stops there, at the source's ten rounds, on that run's schedule (the cosine spans
    # 18 rounds): on a 2-core CPU 2.6x slower at the network than the quick preset's, where
    # twelve would take about 2 h 10 min, the preset ran end to end in 1 h 46 min and won
    # 53.5% over 200 games (seed 0): the bar's time, not its strength; on the AVX-512 CPU of
    # the 18-round run the preset trained that run's round-10 model again, round for round, in
    # 1 h 24 min: 78% over its 200 games, 80.8% over 600. 32 simulations with
    # twice the games learned faster early and stalled as low (47.5%), so it keeps 64. The Elo
    # games meet the two newest pool models, a constant cost.
    # No Polyak averaging here, unlike the quick preset: its one 11x11 run (ten rounds) won 28%
    # against UCT-1,000, against 83% for the last iterate's run (docs/hex_training.md).
    # The evaluated agent averages its network over the half turn (eval_symmetry): end to end
    # on the AVX-512 CPU (seed 0, 1 h 28 min) the preset won 88% of its 200 games with it, 78%
    # without; over 600 games that round-10 model won 86.2% averaged, 80.8% alone.
    # Seed 1 on the same CPU stalls (0-5% a round through round 6; with alpha 0.15, 4.5% after
    # ten rounds; 0-10% with 30 sampled moves, two phase-1 rounds or UCT's self-play labels),
    # so the preset was not reliable over seeds: on a Zen 5 CPU seeds 2 and 3 won 76% and 10.5%
    # in 45-48 min (docs/hex_training.md). Two changes since, both measured on seed 3 there:
    # plain UCT as the opponent of a quarter of the self-play updates (anchor_fraction; with
    # UCT-200, 47%), and phase-1 value targets from the labelling UCT search's root win rate
    # instead of the random game's result (phase1_value="uct"): the phase-1 model alone then
    # won 70% of 20 games against UCT-1,000 (0% before); with both and a UCT-1,000 anchor,
    # seed 3 won 94.5% of its final 200 games and seed 1 98.5%, in 43 min each there
    # (docs/hex_training.md).
    "full": Config(board_size=11, phase1_rounds=1, phase1_simulations=400, phase1_value="uct",
                   search="gumbel", simulations=64, games_per_update=128, updates_per_round=16,
                   sgd_steps=256, buffer_size=200_000, uct_simulations=1000, eval_simulations=200,
                   eval_symmetry=True, eval_games=20, elo_games=8, elo_opponents=2, rounds=10,
                   lr_decay=True, lr_decay_rounds=18, policy_from="newest", anchor_fraction=0.25,
                   anchor_simulations=1000),
}
