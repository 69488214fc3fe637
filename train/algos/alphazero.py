"""AlphaZero-style learning for any two-player zero-sum game of the contract, as in the Hex
source (Zhang, Meng & Yang 2020, sec. 1): a policy-value network, a search that uses it, and
an opponent pool of past models. Nothing here names a game.

One ``update(carry, key)`` (pure, jitted by the chunked driver) is:

1. **Data.** Phase 1 (the first ``phase1_updates`` updates; the source's supervised start):
   ``games_per_update`` games of uniformly random moves; every position is labelled with the
   game's final result (value) and the distribution of the win rates of the children of a
   plain UCT search's root (policy: each child's W/N, normalised; the source's sec. 1.2);
   with ``phase1_value="uct"`` the value is that search's root win rate instead.
   Phase 2 (self-play): ``games_per_update`` games of the newest model against one model drawn
   uniformly from the pool (with ``best_k``, from its K best by ``AZCarry.ratings``; with
   probability ``self_fraction``, the newest model itself; with ``anchor_fraction``, the
   anchor, a fixed player such as plain UCT), half with the newest model in
   seat 0 and half in seat 1, each move chosen by ``search`` with the mover's parameters;
   every position is labelled with the search's ``action_weights`` (policy; with
   ``policy_from="newest"`` only the newest model's moves; never the anchor's) and the final
   result from the mover's view (value; ``self_play_value="uct"``: UCT's root win rate).
2. **Replay.** The positions go into a fixed-size ring buffer (``train/algos/replay.py``).
3. **SGD.** ``sgd_steps`` RMSprop steps on minibatches drawn uniformly from the buffer, each
   position replaced by its image under ``symmetry`` with probability 1/2 (when given).
   With ``average_decay`` the model that plays and is evaluated is the moving average of the
   SGD iterates (Polyak averaging); SGD itself goes on from its last iterate.

The pool is not changed by ``update``: the pipeline promotes the newest model with
``learner.promote(carry)`` in the driver's ``between_chunks`` hook (after every round), so
the promotion is saved with the checkpoint and ``--resume`` stays exact.

Loss (the source's eq. (3)):

    L = (1 - alpha) * (V - z)^2 + alpha * CE(pi, P) + beta * ||theta||^2

with ``V`` the network's win probability and ``z`` the result on the 0/1 scale (win 1, loss
0, a draw 1/2) as the source's sigmoid value head: the network contract gives ``v`` in
[-1, 1] from the mover's view, and ``V = (v + 1) / 2``, ``z = (r + 1) / 2`` for a return
``r`` in [-1, 1]. ``CE(pi, P) = -sum_a pi(a) log2 P(a)`` (the source's eq. (2), base 2), with
``P`` the softmax of the logits over the legal actions of the position (the source's network
has no mask; masking only drops terms whose target is 0). ``||theta||^2`` is the sum of
squares of every parameter. The source gives no values for alpha, beta or the learning
rate: our defaults are alpha = 0.5 (both heads weighted equally), beta = 1e-4 and Keras's
RMSprop defaults (learning rate 1e-3, decay 0.9, epsilon 1e-7), the source's framework.

Search contract: ``search(params, states [B], keys [B]) -> out`` (a key per game) with
``out.action`` int32 [B] and ``out.action_weights`` float32 [B, A] (an ``mctx.PolicyOutput``;
bind the search's other arguments first, e.g. ``functools.partial(mcts.search, env,
apply_fn, num_simulations=64)``). Network contract: ``init_fn(key) -> params``, ``apply_fn(params,
obs [B, ...]) -> (logits [B, A], value [B])``.

Self-play batching: all games advance one move per step in lockstep; at each step the games
whose mover is the newest model are searched with its parameters and the others with the
opponent's, each group ``games_per_update / 2`` wide. With ``paired_search`` (a search whose
network is :func:`paired_apply` of the network) both groups go through one search of the
whole batch, the parameters of the two models stacked on a leading axis: the tree's
bookkeeping, whose cost on a CPU hardly depends on the batch, runs once per step instead of
twice, and the network still evaluates each half with its own model. For games whose players
alternate (Hex, and any two-player game without passes or double moves) the groups are
exactly half the batch at every step; otherwise some games would be searched with the other
model, which the metric ``misrouted`` counts (0 expected). The newest model sits in seat 0
in the even-numbered games and seat 1 in the odd ones.

Devices: with several, the games are split over them and each device plays its share on its
own (:func:`on_devices`, ``shard_map``): phase 1's UCT labels and the self-play searches run on
every device at once. Each game draws from its own keys, so a run gives the same games on any
number of devices; SGD runs on the whole minibatch, split over the devices by XLA.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, NamedTuple

import chex
import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P

from jaxgames import rng
from jaxgames.core import Env, random_legal_action
from jaxgames.search import keys as key_lib
from jaxgames.search.symmetry import Symmetry, reverse_cells
from train.algos import pool as pool_lib
from train.algos import replay as replay_lib
from train.algos.learner import Learner
from train.common.mesh import BATCH, batch_mesh, shard_batch

__all__ = ["AZCarry", "AZConfig", "AlphaZero", "Position", "loss", "make", "paired_apply",
           "reverse_cells", "uct_anchor", "uct_labeller", "win_rate_distribution"]

# search(params, states [B], keys [B]) -> out with .action [B], .action_weights [B, A]
Search = Callable[[Any, Any, jax.Array], Any]
# labeller(states [B], keys [B]) -> policy targets float32 [B, A]  (phase 1; a key per game);
# with ``phase1_value`` or ``self_play_value`` "uct", (policy targets [B, A], value targets
# float32 [B] in [-1, 1])
Labeller = Callable[[Any, jax.Array], Any]
# anchor(states [B], keys [B]) -> actions int32 [B]  (a fixed self-play opponent; a key per game)
Anchor = Callable[[Any, jax.Array], jax.Array]

ANCHOR_GENERATION = -2   # ``opponent_generation`` of an update played against the anchor


POLICY_FROM = ("both", "newest")
VALUE_TARGETS = ("result", "uct")
SELF_PLAY_LABELS = ("search", "uct")


@dataclasses.dataclass(frozen=True)
class AZConfig:
    max_moves: int
    """Moves after which a game is cut (a bound on the game's length; Hex: n*n)."""
    games_per_update: int = 32
    """Games played per update, in both phases (even: half with each colour)."""
    sgd_steps: int = 32
    """Minibatch steps per update (K)."""
    batch_size: int = 128
    """Positions per minibatch."""
    buffer_size: int = 20_000
    """Positions kept in the replay buffer (the newest)."""
    learning_rate: float = 1e-3
    """RMSprop step size (Keras's default; the source does not give one)."""
    decay_updates: int = 0
    """Updates over which the step size falls along a cosine to ``final_lr_fraction`` of
    itself, then stays (0: constant, the source's Keras default)."""
    final_lr_fraction: float = 0.1
    rmsprop_decay: float = 0.9
    rmsprop_eps: float = 1e-7
    alpha: float = 0.5
    """Weight of the policy loss against the value loss (eq. (3))."""
    beta: float = 1e-4
    """L2 coefficient (eq. (3))."""
    phase1_updates: int = 0
    """Updates of phase 1 (random games labelled by UCT) before self-play; 0 = start from
    scratch (the first pool model is the initial network)."""
    phase1_value: str = "result"
    """The value target of a phase-1 position: ``result`` (the random game's final result,
    the source's) or ``uct`` (the labeller's root value: plain UCT's win rate over all its
    simulations from the position, ``2 W/N - 1``). The random game's result is one random
    playout of the position; UCT's value averages hundreds."""
    self_play_value: str = "result"
    """The value target of a self-play position: ``result`` (the game's, AlphaZero's and the
    source's) or ``uct`` (the labeller's root value, as ``phase1_value="uct"``; it runs the
    labeller on every self-play position)."""
    pool_capacity: int = 32
    """Models the pool keeps (the oldest is replaced when full)."""
    sample_moves: int = 1_000_000
    """Self-play moves (counted by ``step_count``) that play the search's sampled action; later
    ones play the search policy's most likely action (AlphaZero: 30 moves of Go). The
    default samples every move."""
    self_fraction: float = 0.0
    """Probability that an update's games are the newest model against itself (its current
    parameters) rather than against a pool model: 0 is the source's pool, 1 AlphaZero's pure
    self-play. Games against itself cannot be won by exploiting a weak past model."""
    best_k: int = 0
    """Opponents drawn uniformly among the K pool models rated highest by ``AZCarry.ratings``
    (which the pipeline sets, e.g. from its Elo list; AlphaHoldem's Best-K); 0: among all
    of them (the source)."""
    anchor_fraction: float = 0.0
    """Probability that an update's games are the newest model against the anchor, a fixed
    player outside the lineage (``make(anchor=...)``, e.g. plain UCT: :func:`uct_anchor`),
    instead of a pool model. A lineage that meets only its own past models can learn to beat
    them without getting stronger (the Hex runs of ``docs/hex_training.md``); the anchor's
    moves train the value head only (their results are real, they have no search policy)."""
    policy_from: str = "both"
    """Whose self-play moves train the policy head: ``both`` players' (the source) or only the
    ``newest`` model's. A pool opponent's search policy comes from an older network, so with
    ``both`` half the policy targets pull the newest model back towards its past play; with
    ``newest`` the opponent's positions still train the value head (their results are real)."""
    self_play_labels: str = "search"
    """The policy targets of self-play positions: ``search`` (the self-play search's action
    weights, AlphaZero's) or ``uct`` (the phase-1 labeller's, plain UCT's win-rate distribution:
    the source's sec. 2.3, where data generation and play share the tree search and differ only
    in how a node is selected). The moves are the self-play search's either way."""
    compact_search: bool = True
    """With ``paired_search``: once the unfinished games of a step fit in half the batch
    (each model's movers in a quarter), search only those, in a half-size search; otherwise
    the whole batch. Games end at different moves and the batch plays on until the longest
    ends (Hex 7x7 self-play: a share of only about 0.58 of the searched positions is still in play),
    so the last moves of each update cost half. The same games either way (each game draws
    from its own keys); the half-size search is a second compiled program."""
    average_decay: float = 0.0
    """Polyak averaging: the run's model (self-play's newest, the pool, evaluation, ``params``)
    is an exponential moving average of the SGD iterates, ``average <- d * average + (1 - d)
    * iterate`` after every SGD step, while SGD goes on from its own iterate; 0: the iterate
    itself (the source). It smooths the step-to-step noise of the last iterate."""

    def validate(self) -> None:
        if self.sample_moves < 0:
            raise ValueError(f"sample_moves must be >= 0, got {self.sample_moves}")
        if self.phase1_value not in VALUE_TARGETS:
            raise ValueError(f"phase1_value must be one of {', '.join(VALUE_TARGETS)}, got {self.phase1_value!r}")
        if self.self_play_value not in VALUE_TARGETS:
            raise ValueError(f"self_play_value must be one of {', '.join(VALUE_TARGETS)}, "
                             f"got {self.self_play_value!r}")
        if self.policy_from not in POLICY_FROM:
            raise ValueError(f"policy_from must be one of {', '.join(POLICY_FROM)}, got {self.policy_from!r}")
        if self.self_play_labels not in SELF_PLAY_LABELS:
            raise ValueError(f"self_play_labels must be one of {', '.join(SELF_PLAY_LABELS)}, "
                             f"got {self.self_play_labels!r}")
        if self.best_k < 0:
            raise ValueError(f"best_k must be >= 0, got {self.best_k}")
        if not 0.0 <= self.self_fraction <= 1.0:
            raise ValueError(f"self_fraction must be in [0, 1], got {self.self_fraction}")
        if not 0.0 <= self.anchor_fraction <= 1.0:
            raise ValueError(f"anchor_fraction must be in [0, 1], got {self.anchor_fraction}")
        for name in ("max_moves", "games_per_update", "sgd_steps", "batch_size", "buffer_size",
                     "pool_capacity"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.games_per_update % 2:
            raise ValueError(f"games_per_update must be even (half per colour), got {self.games_per_update}")
        if self.phase1_updates < 0:
            raise ValueError(f"phase1_updates must be >= 0, got {self.phase1_updates}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.decay_updates < 0 or not 0.0 <= self.final_lr_fraction <= 1.0:
            raise ValueError("decay_updates must be >= 0 and final_lr_fraction in [0, 1]")
        if self.beta < 0 or self.learning_rate <= 0:
            raise ValueError("beta must be >= 0 and learning_rate > 0")
        if not 0.0 <= self.average_decay < 1.0:
            raise ValueError(f"average_decay must be in [0, 1), got {self.average_decay}")
        if not 0.0 <= self.rmsprop_decay < 1.0 or self.rmsprop_eps <= 0:
            raise ValueError("rmsprop_decay must be in [0, 1) and rmsprop_eps > 0")


@chex.dataclass(frozen=True)
class Position:
    """One row of the replay buffer."""

    obs: Any               # the mover's observation (any pytree of arrays)
    policy: jax.Array      # float32 [A]  search policy (phase 1: UCT win-rate distribution);
    #                        all 0: no policy target (the row trains the value head only)
    legal: jax.Array       # bool [A]  legal actions
    value: jax.Array       # float32 []  final result from the mover's view, in [-1, 1]


@chex.dataclass(frozen=True)
class AZCarry:
    params: Any            # the SGD iterate
    average: Any           # the model: the iterates' moving average (``average_decay``; 0: params)
    opt_state: Any
    pool: pool_lib.Pool
    replay: replay_lib.Replay
    step: jax.Array        # int32 []  updates done
    games: jax.Array       # int32 []  games played (both phases)
    ratings: jax.Array     # float32 [pool capacity]  each slot's rating, for best_k (the
    #                        pipeline sets it; pool.UNRATED until then)


@dataclasses.dataclass(frozen=True)
class AlphaZero(Learner):
    """A :class:`Learner` with the pool promotion and the loss exposed."""

    promote: Callable[[AZCarry], AZCarry] = None      # newest params into the pool
    loss: Callable[[Any, Position], tuple[jax.Array, dict]] = None
    config: AZConfig = None


class Net(NamedTuple):
    init: Callable[[jax.Array], Any]
    apply: Callable[[Any, Any], tuple[jax.Array, jax.Array]]


def win_rate_distribution(win_rates: jax.Array, visits: jax.Array, legal: jax.Array) -> jax.Array:
    """float32 [..., A]: the source's policy label: the root children's win rates normalised
    to sum to 1; if no child won anything, the visit distribution; if none was visited, uniform
    over the legal actions."""
    def norm(x):
        x = jnp.where(legal, x, 0.0).astype(jnp.float32)
        return x / jnp.maximum(x.sum(-1, keepdims=True), 1e-30)

    w, n, u = norm(win_rates), norm(visits.astype(jnp.float32)), norm(jnp.ones_like(win_rates))
    has_w = (jnp.where(legal, win_rates, 0) > 0).any(-1, keepdims=True)
    has_n = (jnp.where(legal, visits, 0) > 0).any(-1, keepdims=True)
    return jnp.where(has_w, w, jnp.where(has_n, n, u))


def uct_labeller(env: Env, num_simulations: int, *, with_value: bool = False) -> Labeller:
    """Phase-1 labels from plain UCT (``jaxgames.search.uct``): the win-rate distribution;
    ``with_value``: with the root's value too, ``(policy [B, A], 2 W/N - 1 [B])`` (the root
    mover's win rate over all simulations, on the [-1, 1] scale)."""
    searches = _uct_searches(env, num_simulations)

    def label(states, key):
        out = searches(states, key_lib.game_keys(key, states.step_count.shape[0]))
        policy = win_rate_distribution(out.win_rates, out.visit_counts, states.legal_action_mask)
        return (policy, 2.0 * out.value - 1.0) if with_value else policy

    return label


def uct_anchor(env: Env, num_simulations: int) -> Anchor:
    """Plain UCT (``jaxgames.search.uct``) with ``num_simulations`` as a self-play anchor."""
    searches = _uct_searches(env, num_simulations)
    return lambda states, keys: searches(states, keys).action.astype(jnp.int32)


def _uct_searches(env: Env, num_simulations: int):
    """``searches(states [B], keys [B]) -> UCTOutput [B]``: plain UCT from every position."""
    from jaxgames.search.uct import uct_search

    return jax.vmap(lambda s, k: uct_search(env, s, k, num_simulations=num_simulations))


def loss(cfg: AZConfig, apply_fn, params, batch: Position) -> tuple[jax.Array, dict]:
    """Eq. (3) on a minibatch; ``(L, {"loss", "value_loss", "policy_loss", "l2"})``."""
    logits, v = apply_fn(params, batch.obs)
    logp = jax.nn.log_softmax(jnp.where(batch.legal, logits, -1e9), axis=-1) / math.log(2.0)
    ce = -(batch.policy * jnp.where(batch.legal, logp, 0.0)).sum(-1)
    if cfg.policy_from == "both":   # every row has a target: the plain mean keeps earlier runs' bits
        policy_loss = ce.mean()
    else:                           # averaged over the rows that have a policy target
        policy_loss = ce.sum() / jnp.maximum((batch.policy.sum(-1) > 0).sum(), 1)
    value_loss = (((v + 1.0) / 2.0 - (batch.value + 1.0) / 2.0) ** 2).mean()
    l2 = sum(jnp.sum(jnp.square(p)) for p in jax.tree_util.tree_leaves(params))
    total = (1.0 - cfg.alpha) * value_loss + cfg.alpha * policy_loss + cfg.beta * l2
    return total, {"loss": total, "value_loss": value_loss, "policy_loss": policy_loss, "l2": l2}


def paired_apply(apply_fn):
    """``apply(stacked_params [2, ...], obs [B, ...])``: the first half of the batch through
    model 0, the second through model 1 (``B`` even); a network for ``paired_search``."""
    def apply(stacked_params, obs):
        # two calls, not a vmap over the stacked parameters: vmapped, every convolution becomes
        # a grouped one, 2.6x slower on XLA:CPU for the source's network (measured at batch 128)
        half = jax.tree_util.tree_leaves(obs)[0].shape[0] // 2
        outs = [apply_fn(jax.tree_util.tree_map(lambda p, i=i: p[i], stacked_params),
                         jax.tree_util.tree_map(lambda x, i=i: x[i * half:(i + 1) * half], obs))
                for i in (0, 1)]
        return jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), *outs)

    return apply


def on_devices(play):
    """``play(shared, games, key) -> (rows [T, G], valid [T, G], returns [G, 2], ended [G],
    extra [1])`` (``games``: leaves ``[G, ...]``) with the games split over the mesh's devices,
    each device playing its share on its own (``shard_map``): a search's many small operations
    then run on every core at once. XLA's automatic partitioning of the batched search ran them
    one device at a time: one self-play update of the full Hex preset took 33 s on 2 CPU devices
    that way, 21.5 s on one device and 15 s split here. One device: ``play`` itself."""
    mesh = batch_mesh()
    if mesh.size == 1:
        return play
    games = P(BATCH)
    return jax.shard_map(play, mesh=mesh, in_specs=(P(), games, P()),
                         out_specs=(P(None, BATCH), P(None, BATCH), games, games, games),
                         check_vma=False)


def _take(tree, idx):
    return jax.tree_util.tree_map(lambda x: x[idx], tree)


def make(cfg: AZConfig, env: Env, net, search: Search, *, symmetry: Symmetry | None = None,
         labeller: Labeller | None = None, phase1_simulations: int = 200,
         eval_search: Search | None = None, paired_search: Search | None = None,
         anchor: Anchor | None = None) -> AlphaZero:
    """The AlphaZero learner of ``env`` (two players, zero-sum, deterministic).

    Args:
      net: ``(init_fn, apply_fn)`` (e.g. ``network.make(n)[1:]``).
      search: self-play search, ``search(params, states [B], keys [B])`` (see the module doc).
      symmetry: ``symmetry(obs, action_vector) -> (obs, action_vector)`` for augmentation
        (e.g. :func:`reverse_cells`); None: no augmentation.
      labeller: phase-1 policy labels ``labeller(states [B], keys [B]) -> [B, A]``; default plain
        UCT with ``phase1_simulations`` (:func:`uct_labeller`).
      eval_search: the search of the trained policy (default ``search``), e.g. without
        exploration noise.
      paired_search: ``search`` with the network :func:`paired_apply` of ``apply_fn``: self-play
        then searches both models' games in one call (module doc); None: two calls.
      anchor: the opponent of ``anchor_fraction`` of the self-play updates,
        ``anchor(states [B], keys [B]) -> actions [B]`` (e.g. :func:`uct_anchor`).
    """
    cfg.validate()
    if cfg.anchor_fraction > 0 and anchor is None:
        raise ValueError("anchor_fraction > 0 needs an anchor (make(..., anchor=uct_anchor(env, n)))")
    if env.num_players != 2:
        raise ValueError(f"AlphaZero here is for two-player games; {env.id} has {env.num_players}")
    init_fn, apply_fn = net[0], net[1]
    G, T, A = cfg.games_per_update, cfg.max_moves, env.num_actions
    step_size = cfg.learning_rate
    if cfg.decay_updates:
        step_size = optax.cosine_decay_schedule(cfg.learning_rate, cfg.decay_updates * cfg.sgd_steps,
                                                alpha=cfg.final_lr_fraction)
    optimizer = optax.rmsprop(step_size, decay=cfg.rmsprop_decay, eps=cfg.rmsprop_eps)
    labels_value = "uct" in (cfg.phase1_value, cfg.self_play_value)   # the labeller gives values
    labels_self_play = cfg.self_play_labels == "uct" or cfg.self_play_value == "uct"
    if labeller is None and (cfg.phase1_updates > 0 or labels_self_play):
        labeller = uct_labeller(env, phase1_simulations, with_value=labels_value)
    eval_search = eval_search or search
    # the newest model's seat in each game: alternating, so that every device's share of the
    # games (a contiguous slice, :func:`on_devices`) has as many games of each seat
    newest_seat = jnp.arange(G, dtype=jnp.int32) % 2
    game_ids = jnp.arange(G, dtype=jnp.int32)

    def row_like():
        state = env.init(jax.random.key(0))
        return Position(obs=state.observation, policy=jnp.zeros(A, jnp.float32),
                        legal=jnp.zeros(A, bool), value=jnp.float32(0))

    def init(key):
        params = init_fn(key)
        pool = pool_lib.empty(params, cfg.pool_capacity)
        if cfg.phase1_updates == 0:
            pool = pool_lib.add(pool, params)
        # a copy: the same array in two leaves of a carry that a chunk donates is donated twice
        return AZCarry(params=params, average=jax.tree_util.tree_map(jnp.copy, params),
                       opt_state=optimizer.init(params), pool=pool,
                       replay=replay_lib.empty(row_like(), cfg.buffer_size),
                       step=jnp.int32(0), games=jnp.int32(0),
                       ratings=jnp.full(cfg.pool_capacity, pool_lib.UNRATED, jnp.float32))

    def start(key):
        return shard_batch(jax.vmap(env.init)(rng.split(key, G)))

    def no_moves(states, key):
        g = states.step_count.shape[0]
        return (jnp.zeros(g, jnp.int32), jnp.zeros((g, A), jnp.float32),
                jnp.full(g, jnp.nan, jnp.float32), jnp.int32(0))

    def finish(states0, ids, record, moves_fn):
        """Scan T moves: ``moves_fn(states, keys [g]) -> (actions [g], policy [g, A], value [g],
        extra int32 [])`` (``g`` games: all of them, or one device's share under
        :func:`on_devices`; ``ids`` [g] their numbers in the whole batch; ``value`` a row's
        value target, NaN for the game's final result). Every game draws from its own keys (the
        step's key folded with its number), so a game plays the same on any number of devices."""
        g = states0.step_count.shape[0]

        def body(carry, key):
            states, returns = carry
            k_move, k_step = (jax.vmap(lambda i, k=k: jax.random.fold_in(k, i))(ids)
                              for k in rng.split(key, 2))
            done = states.terminated | states.truncated
            # once every game is over (most end well before max_moves) the search is skipped
            actions, policy, value, extra = jax.lax.cond(done.all(), no_moves, moves_fn, states, k_move)
            row = Position(obs=states.observation, policy=policy, legal=states.legal_action_mask,
                           value=value)
            nxt = jax.vmap(env.step)(states, actions, k_step)
            return (nxt, returns + nxt.rewards), (row, states.current_player, ~done, extra)

        (final, returns), (rows, movers, valid, extra) = jax.lax.scan(
            body, (states0, jnp.zeros((g, 2), jnp.float32)), rng.split(record, T))
        result = jnp.take_along_axis(returns[None], movers[..., None], axis=-1)[..., 0]  # [T, g]
        value = jnp.where(jnp.isnan(rows.value), result, rows.value)
        rows = rows.replace(value=jnp.clip(value, -1.0, 1.0))
        ended = final.terminated | final.truncated
        return rows, valid, returns, ended, extra.sum()[None]

    def flatten(rows, valid):
        return (jax.tree_util.tree_map(lambda x: x.reshape((T * G,) + x.shape[2:]), rows),
                valid.reshape(-1))

    def phase1_data(carry, key):
        k0, k1 = rng.split(key, 2)

        def play(shared, games, record):
            def moves(states, keys):
                k_act, k_lab = key_lib.split(keys)
                actions = jax.vmap(random_legal_action)(states, k_act)
                labels = labeller(states, k_lab)
                policy, value = labels if labels_value else (labels, None)
                if cfg.phase1_value == "result":   # the game's result
                    value = jnp.full(actions.shape, jnp.nan, jnp.float32)
                return actions, policy, value.astype(jnp.float32), jnp.int32(0)
            states0, _, ids = games
            return finish(states0, ids, record, moves)

        rows, valid, returns, ended, _ = on_devices(play)(None, (start(k0), newest_seat, game_ids), k1)
        rows, valid = flatten(rows, valid)
        return rows, valid, {"newest_score": jnp.float32(0), "misrouted": jnp.int32(0),
                             "ended": ended.mean(), "opponent_generation": jnp.int32(-1)}

    def self_play_data(carry, key):
        k_pick, k0, k1 = rng.split(key, 3)
        slot = (pool_lib.sample_best_k(carry.pool, carry.ratings, cfg.best_k, k_pick) if cfg.best_k
                else pool_lib.sample(carry.pool, k_pick))
        has = carry.pool.size > 0
        if cfg.self_fraction > 0:   # a key of its own: runs without it keep their streams
            itself = jax.random.bernoulli(jax.random.fold_in(k_pick, 1), cfg.self_fraction)
            has = has & ~itself
        vs_anchor = jnp.bool_(False)
        if cfg.anchor_fraction > 0:   # a key of its own, as self_fraction's
            vs_anchor = jax.random.bernoulli(jax.random.fold_in(k_pick, 2), cfg.anchor_fraction)
        opponent = jax.tree_util.tree_map(lambda p, q: jnp.where(has & ~vs_anchor, p, q),
                                          pool_lib.get(carry.pool, slot), carry.average)

        def play(shared, games, record):
            params, opponent, has_opponent, vs_anchor = shared
            states0, seats, ids = games

            def moves(states, keys):
                g = states.step_count.shape[0]
                h = g // 2
                k_new, k_old = key_lib.split(keys)
                done = states.terminated | states.truncated
                wants_new = (states.current_player == seats) & ~done
                wants_old = (states.current_player != seats) & ~done
                order = jnp.argsort(jnp.where(wants_new, 0, jnp.where(done, 1, 2)), stable=True)
                new_idx, old_idx = order[:h], order[h:]
                misrouted = wants_new[old_idx].sum() + wants_old[new_idx].sum()

                def scattered(found):
                    actions, policy = jnp.zeros(g, jnp.int32), jnp.zeros((g, A), jnp.float32)
                    for idx, out in found:
                        actions = actions.at[idx].set(out.action.astype(jnp.int32))
                        policy = policy.at[idx].set(out.action_weights)
                    return actions, policy

                if paired_search is None:
                    actions, policy = scattered(
                        [(new_idx, search(params, _take(states, new_idx), k_new[new_idx])),
                         (old_idx, search(opponent, _take(states, old_idx), k_old[old_idx]))])
                else:
                    both = jax.tree_util.tree_map(lambda p, q: jnp.stack([p, q]), params, opponent)

                    def searched(idx):   # idx: the new model's games, then as many of the old's
                        return scattered([(idx, paired_search(both, _take(states, idx), k_new[idx]))])

                    q = g // 4
                    if cfg.compact_search and q > 0:
                        # each model's movers first, then finished games to fill its quarter
                        # (taken from opposite ends, so no game is searched twice)
                        def first(wants, tie):   # wanting, then finished, then the rest
                            return jnp.argsort(jnp.where(wants, 0, jnp.where(done, 1, 2)) * g + tie)[:q]

                        i = jnp.arange(g)
                        half = jnp.concatenate([first(wants_new, i), first(wants_old, g - 1 - i)])
                        fits = (wants_new.sum() <= q) & (wants_old.sum() <= q)
                        actions, policy = jax.lax.cond(fits, searched, lambda _: searched(order), half)
                    else:
                        actions, policy = searched(order)
                best = jnp.argmax(jnp.where(states.legal_action_mask, policy, -jnp.inf), axis=-1)
                actions = jnp.where(states.step_count < cfg.sample_moves, actions, best.astype(jnp.int32))
                if anchor is not None:
                    # the anchor's movers are among old_idx (the search's opponent half, whose
                    # moves it replaces: that half searched the newest model's own network)
                    def anchored(actions):
                        k_anchor = jax.vmap(lambda k: jax.random.fold_in(k, 3))(keys[old_idx])
                        moves_old = anchor(_take(states, old_idx), k_anchor)
                        return actions.at[old_idx].set(jnp.where(wants_old[old_idx], moves_old,
                                                                 actions[old_idx]))
                    actions = jax.lax.cond(vs_anchor, anchored, lambda a: a, actions)
                value = jnp.full(g, jnp.nan, jnp.float32)   # the games' results
                if labels_self_play:   # keys of their own: the search's stay as they were
                    labels = labeller(states, jax.vmap(lambda k: jax.random.fold_in(k, 2))(keys))
                    label_policy, label_value = labels if labels_value else (labels, None)
                    if cfg.self_play_labels == "uct":
                        policy = label_policy
                    if cfg.self_play_value == "uct":
                        value = label_value.astype(jnp.float32)
                if cfg.policy_from == "newest":   # the pool opponent's targets dropped (after the move)
                    policy = jnp.where((wants_new | ~has_opponent)[:, None], policy, 0.0)
                # the anchor's moves have no search policy: its rows train the value head only
                policy = jnp.where((vs_anchor & ~wants_new)[:, None], 0.0, policy)
                return actions, policy, value, misrouted.astype(jnp.int32)

            return finish(states0, ids, record, moves)

        rows, valid, returns, ended, misrouted = on_devices(play)(
            (carry.average, opponent, has, vs_anchor), (start(k0), newest_seat, game_ids), k1)
        rows, valid = flatten(rows, valid)
        newest_return = jnp.take_along_axis(returns, newest_seat[:, None], axis=1)[:, 0]
        return rows, valid, {"newest_score": newest_return.mean(), "misrouted": misrouted.sum(),
                             "ended": ended.mean(),
                             "opponent_generation": jnp.where(
                                 vs_anchor, ANCHOR_GENERATION, jnp.where(has, carry.pool.ids[slot], -1))}

    def augment(batch: Position, key) -> Position:
        if symmetry is None:
            return batch
        flip = jax.random.bernoulli(key, 0.5, (cfg.batch_size,))

        def one(obs, policy, legal, f):
            o2, p2 = symmetry(obs, policy)
            _, l2 = symmetry(obs, legal)
            pick = lambda a, b: jnp.where(f, b, a)  # noqa: E731
            return jax.tree_util.tree_map(pick, obs, o2), pick(policy, p2), pick(legal, l2)

        obs, policy, legal = jax.vmap(one)(batch.obs, batch.policy, batch.legal, flip)
        return batch.replace(obs=obs, policy=policy, legal=legal)

    grad_fn = jax.grad(lambda p, b: loss(cfg, apply_fn, p, b), has_aux=True)

    def update(carry: AZCarry, key):
        k_data, k_sgd = rng.split(key, 2)
        if cfg.phase1_updates > 0:
            rows, valid, stats = jax.lax.cond(carry.step < cfg.phase1_updates, phase1_data,
                                              self_play_data, carry, k_data)
        else:
            rows, valid, stats = self_play_data(carry, k_data)
        replay = replay_lib.write(carry.replay, rows, valid)

        def sgd(state, key):
            params, opt_state, average = state
            k_sample, k_aug = rng.split(key, 2)
            batch = augment(shard_batch(replay_lib.sample(replay, k_sample, cfg.batch_size)), k_aug)
            grads, aux = grad_fn(params, batch)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            params = optax.apply_updates(params, updates)
            if cfg.average_decay:
                average = optax.incremental_update(params, average, 1.0 - cfg.average_decay)
            return (params, opt_state, average), aux

        (params, opt_state, average), aux = jax.lax.scan(
            sgd, (carry.params, carry.opt_state, carry.average), rng.split(k_sgd, cfg.sgd_steps))
        if not cfg.average_decay:
            average = params
        carry = carry.replace(params=params, average=average, opt_state=opt_state, replay=replay,
                              step=carry.step + 1, games=carry.games + G)
        metrics = {k: v.mean() for k, v in aux.items()}
        metrics.update(stats, positions=valid.sum(dtype=jnp.int32), buffer_size=replay.size,
                       phase=jnp.where(carry.step <= cfg.phase1_updates, 1, 2).astype(jnp.int32),
                       games=carry.games)
        return carry, metrics

    def policy(params, state, key):
        one = jax.tree_util.tree_map(lambda x: x[None], state)
        return eval_search(params, one, key).action[0].astype(jnp.int32)

    def promote(carry: AZCarry) -> AZCarry:
        return carry.replace(pool=pool_lib.add(carry.pool, carry.average))

    return AlphaZero(init=init, update=update, policy=policy, params=lambda c: c.average,
                     promote=promote, loss=lambda p, b: loss(cfg, apply_fn, p, b), config=cfg)
