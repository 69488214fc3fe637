"""Afterstate TD learning of an n-tuple network, many games in lock-step (2048 and kin).

As the source (and Szubert & Jaśkowski 2014): greedy play on ``reward + V(afterstate)``,
TD(0) or a truncated TD(λ) over the last ``trace_length`` afterstates (delayed TD(λ),
Jaśkowski 2018), with optimistic initialisation and temporal coherence (TC) as options.
:func:`make` returns the :class:`train.algos.learner.Learner`: one ``update`` advances every
game by one move (``B`` moves) and applies all their TD updates with one scatter-add; finished
games restart at once. ``shared_step`` says how a batch's steps of one weight combine:
``"sum"`` (the online rule) or ``"sqrt"`` (divided by the square root of the games that
stepped it); ``"auto"`` picks ``"sqrt"`` from :data:`SQRT_FROM_GAMES` games per update.

The game comes as a board model (``env.board_model()``: ``expand``, ``spawn_from_words``,
``start_from_words``, ``tile_values``): this learner moves raw boards rather than stepping
the Env (the one exception to the project's single game loop; the evaluation plays through
the arena).

The targets, TC, the step rules and why large batches need the square root, why raw boards:
docs/learners.md#afterstate-td-on-an-n-tuple-network-trainalgosntuple_tdpy.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import operator
import sys
from typing import Any

import chex
import jax
import jax.numpy as jnp

from jaxgames import rng
from train.algos.learner import Learner


@dataclasses.dataclass(frozen=True)
class TDConfig:
    # the n-tuple network (the 2048 package has one): ``indices(boards)``,
    # ``value(weights, boards)``, ``init_weights(v)``, ``num_features``
    network: Any
    num_games: int = 1024          # games advanced in parallel
    learning_rate: float = 0.1     # α of the source, split over the features
    lam: float = 0.0               # λ; 0 = TD(0)
    trace_length: int = 5          # h: afterstates kept for the truncated λ-return (λ > 0)
    optimistic_init: float = 0.0   # initial value of every board
    tc: bool = False               # temporal-coherence adaptive learning rates
    shared_step: str = "auto"      # "sum" | "sqrt" | "auto": how the batch's steps of one weight combine

    def __post_init__(self):
        if self.shared_step not in ("auto", *SHARED_STEPS):
            raise ValueError(f"shared_step must be auto or one of {', '.join(SHARED_STEPS)}, "
                             f"got {self.shared_step!r}")

    @property
    def step_rule(self) -> str:
        """``shared_step`` with auto resolved by the batch size (:func:`default_shared_step`)."""
        return default_shared_step(self.num_games) if self.shared_step == "auto" else self.shared_step

    @property
    def counts_games(self) -> bool:
        """Whether the step needs the count of games stepping each weight (the table's last
        column)."""
        return self.step_rule != "sum"


SHARED_STEPS = ("sum", "sqrt")
#: from this many games per update the sum of the steps overshoots at α = 0.1 (docs/lab)
SQRT_FROM_GAMES = 256


def default_shared_step(num_games: int) -> str:
    """The rule "auto" means: the square-root rule from ``SQRT_FROM_GAMES`` games per update,
    the sum below (as learned online, and cheaper on a CPU)."""
    return "sqrt" if num_games >= SQRT_FROM_GAMES else "sum"


@chex.dataclass(frozen=True)
class TDCarry:
    # float32 [P * table, C]: column 0 the n-tuple weights (flat), with TC columns 1, 2 the
    # Σ error and Σ |error| of each weight, and with the "sqrt" shared step a last column that
    # counts, during an update, the games stepping each weight (zero between updates). One
    # array, read by one gather and written by one scatter: split into three, XLA on CPU copies
    # the tables at every step instead of updating them in place (300x slower, measured).
    table: chex.Array
    board: chex.Array       # int8 [G, 16]  each game's position before its next move
    trace: chex.Array       # int32 [G, H, F]  feature indices of the last H afterstates (newest last)
    trace_reward: chex.Array  # float32 [G, H]  reward of the move that followed each of them
    trace_len: chex.Array   # int32 [G]  how many of the H slots hold an afterstate of this game
    score: chex.Array       # int32 [G]
    moves: chex.Array       # int32 [G]  moves in the current game

    @property
    def weights(self) -> chex.Array:
        """float32 [P * table]: the n-tuple weights (a copy; not for the hot loop)."""
        return self.table[:, 0]

    @property
    def tc_error(self) -> chex.Array:
        return self.table[:, 1]

    @property
    def tc_abs(self) -> chex.Array:
        return self.table[:, 2]


def init(cfg: TDConfig, model, key: jax.Array) -> TDCarry:
    net = cfg.network
    g, h, f = cfg.num_games, _trace_slots(cfg), net.num_features
    return TDCarry(
        table=make_table(net.init_weights(cfg.optimistic_init), cfg.tc,
                         count_column=cfg.counts_games),
        board=jax.vmap(lambda k: model.start_from_words(rng.random_words(k, 4)))(jax.random.split(key, g)),
        trace=jnp.zeros((g, h, f), jnp.int32),
        trace_reward=jnp.zeros((g, h), jnp.float32),
        trace_len=jnp.zeros(g, jnp.int32),
        score=jnp.zeros(g, jnp.int32),
        moves=jnp.zeros(g, jnp.int32),
    )


def make_table(weights, tc: bool, tc_error=None, tc_abs=None, *, count_column: bool = False,
               huge_pages: bool = True) -> jax.Array:
    """The carry's table from flat weights (and TC sums, zero by default; with
    ``count_column``, the "sqrt" shared step's zeroed counts), on huge pages where the OS
    offers them (``advise_huge_pages``)."""
    zeros = jnp.zeros_like(weights)
    columns = [weights]
    if tc:
        columns += [zeros if tc_error is None else tc_error, zeros if tc_abs is None else tc_abs]
    if count_column:
        columns.append(zeros)
    table = jnp.stack(columns, axis=1)
    if huge_pages:
        advise_huge_pages(table)
    return table


HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25


def advise_huge_pages(array: jax.Array, min_bytes: int = 64 << 20) -> bool:
    """Back a large CPU array with 2 MiB pages (Linux transparent huge pages, collapsed now).

    Every move reads ~160 weights at random in a 256 MiB table: on 4 KiB pages nearly every
    read also misses the TLB. Huge pages cut that (measured ~10% per update,
    docs/benchmarks.md). The chunk donates the table, so XLA updates this very buffer in place
    and the advice lasts the run. A hint only: True when the kernel took it; False (and no
    change) on other backends or systems, for small arrays, or when refused.
    """
    if array.nbytes < min_bytes or jax.default_backend() != "cpu" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        start = array.unsafe_buffer_pointer()
    except (OSError, AttributeError, RuntimeError):
        return False
    lo = -(-start // HUGE_PAGE) * HUGE_PAGE
    hi = (start + array.nbytes) // HUGE_PAGE * HUGE_PAGE
    if hi <= lo or libc.madvise(lo, hi - lo, _MADV_HUGEPAGE) != 0:
        return False
    return libc.madvise(lo, hi - lo, _MADV_COLLAPSE) == 0   # older kernels: khugepaged, later


def _trace_slots(cfg: TDConfig) -> int:
    return cfg.trace_length if cfg.lam > 0 else 1


def greedy_move(net, table, board, model):
    """1-ply choice on reward + V(afterstate): (action, afterstate, reward, indices, value, alive)."""
    after, reward, legal = model.expand(board)                      # [4,16], [4], [4]
    idx = net.indices(after)                                         # [4, F]
    v = table[idx, 0].sum(-1)                                        # [4]
    q = jnp.where(legal, reward.astype(jnp.float32) + v, -jnp.inf)
    a = jnp.argmax(q)
    return a, after[a], reward[a], idx[a], v[a], legal.any()


@dataclasses.dataclass(frozen=True)
class Parts:
    """What :func:`make` binds: the static pieces of an update."""

    cfg: TDConfig
    model: Any   # the env's board model (``env.board_model()``): moves boards, not States


def policy(parts: Parts, weights, state, key):
    """Greedy 1-ply on reward + V(afterstate); ``weights`` the flat n-tuple weights, ``key`` unused."""
    after, reward, legal = parts.model.expand(state.board)
    q = jnp.where(legal, reward.astype(jnp.float32) + parts.cfg.network.value(weights, after), -jnp.inf)
    return jnp.argmax(q).astype(jnp.int32)


def make(cfg: TDConfig, env) -> Learner:
    """The learner on ``env``'s board model; its policy is greedy 1-ply on reward + V
    (``params`` = the flat n-tuple weights)."""
    parts = Parts(cfg=cfg, model=env.board_model())
    return Learner(init=functools.partial(init, cfg, parts.model), update=_bound_update(parts),
                   policy=functools.partial(policy, parts), params=operator.attrgetter("weights"))


def make_update(cfg: TDConfig, model):
    """``update(carry, key) -> (carry, metrics)``: :func:`update` bound."""
    return _bound_update(Parts(cfg=cfg, model=model))


def _bound_update(parts: Parts):
    # named as update, with its source reachable: chex.assert_max_traces reads both (the tests)
    return functools.update_wrapper(functools.partial(update, parts), update)


def _targets(parts: Parts, table, trace, trace_reward, trace_len, next_value):
    """Truncated λ-returns of the trace slots: float32 [H] (newest slot last).

    ``next_value``: V of the afterstate just played (0 when the game just ended).
    """
    h, lam = _trace_slots(parts.cfg), parts.cfg.lam
    values = table[trace, 0].sum(-1)                             # [H]
    slots = jnp.arange(h)
    valid = slots >= h - trace_len

    def back(carry, x):
        tgt_next, v_next = carry
        r, v, ok = x
        tgt = r + (1 - lam) * v_next + lam * tgt_next
        return (jnp.where(ok, tgt, tgt_next), jnp.where(ok, v, v_next)), tgt

    # the newest slot's target is r + V(next afterstate): with tgt_next = v_next it is
    # r + (1-λ) V + λ V, so the recursion can start from (V_next, V_next)
    _, tgt = jax.lax.scan(back, (next_value, next_value), (trace_reward, values, valid), reverse=True)
    return tgt, values, valid


def _play(parts: Parts, carry: TDCarry, key):
    """One move in every game (a ``vmap``): the games' next boards and traces, and what the
    TD step needs."""
    cfg, model = parts.cfg, parts.model
    net, h = cfg.network, _trace_slots(cfg)

    def one(board, trace, trace_reward, trace_len, words):
        a, after, reward, idx, v_after, alive = greedy_move(net, carry.table, board, model)
        # The move's reward belongs to the previous afterstate's target.
        next_value = jnp.where(alive, v_after, 0.0)
        trace_reward = trace_reward.at[h - 1].set(jnp.where(alive, reward, 0).astype(jnp.float32))
        tgt, values, valid = _targets(parts, carry.table, trace, trace_reward, trace_len, next_value)
        # the oldest slot when the trace is full (with h = 1: the previous afterstate, TD(0));
        # every slot when the game ended
        update_slot = valid & ((jnp.arange(h) == 0) & (trace_len == h) | ~alive)
        delta = jnp.where(update_slot, tgt - values, 0.0)           # [H]
        # shift the trace and push the new afterstate (its reward arrives next move)
        new_trace = jnp.concatenate([trace[1:], idx[None]], 0)
        new_reward = jnp.concatenate([trace_reward[1:], jnp.zeros(1, jnp.float32)])
        new_len = jnp.where(alive, jnp.minimum(trace_len + 1, h), 0)
        new_board = jnp.where(alive, model.spawn_from_words(after, words[0], words[1]),
                              model.start_from_words(words))
        return (new_board, new_trace, new_reward, new_len, reward, alive,
                trace, delta, update_slot)

    return jax.vmap(one)(carry.board, carry.trace, carry.trace_reward, carry.trace_len,
                         _game_words(key, cfg.num_games))


def update(parts: Parts, carry: TDCarry, key: jax.Array):
    """``(carry, metrics)`` after one move in every game, then the TD step."""
    cfg = parts.cfg
    board, trace, trace_reward, trace_len, reward, alive, old_trace, delta, stepped = _play(parts, carry, key)
    table = td_step(cfg, carry.table, old_trace, delta, stepped)
    score = carry.score + jnp.where(alive, reward, 0)
    moves = carry.moves + alive.astype(jnp.int32)
    ended = ~alive
    metrics = {
        "moves": alive.sum(),
        "games_ended": ended.sum(),
        "ended_score_sum": jnp.where(ended, carry.score, 0).astype(jnp.float32).sum(),
        "ended_score_max": jnp.where(ended, carry.score, 0).max(),
        "ended_max_tile_hist": _max_tile_hist(carry.board, ended),
    }
    carry = carry.replace(
        table=table, board=board, trace=trace,
        trace_reward=trace_reward, trace_len=trace_len,
        score=jnp.where(ended, 0, score), moves=jnp.where(ended, 0, moves))
    return carry, metrics


def td_step(cfg: TDConfig, table: jax.Array, old_trace: jax.Array, delta: jax.Array,
            stepped: jax.Array) -> jax.Array:
    """The carry's table after the TD errors ``delta`` float32 [G, H] of the afterstates
    ``old_trace`` int32 [G, H, F] (their feature indices), α split over the F features and the
    games' steps on a shared weight combined by ``cfg.step_rule``; ``stepped`` bool [G, H]
    marks the slots updated (``delta`` is 0 elsewhere)."""
    alpha = cfg.learning_rate / cfg.network.num_features
    flat_idx = old_trace.reshape(-1)                                 # [G*H*F]
    err = jnp.broadcast_to(delta[..., None], old_trace.shape).reshape(-1)
    columns = []
    if cfg.tc:
        rows = table[flat_idx]                                       # [N, C]
        rate = jnp.where(rows[:, 2] > 0, jnp.abs(rows[:, 1]) / jnp.maximum(rows[:, 2], 1e-30), 1.0)
        columns = [err, jnp.abs(err)]
        err = rate * err
    if cfg.step_rule == "sum":
        if not columns:
            return table.at[flat_idx, 0].add(alpha * err)
        return table.at[flat_idx].add(jnp.stack([alpha * err, *columns], -1))
    first = _first_per_game(old_trace, stepped).reshape(-1)
    # Count the games stepping each weight in the (zeroed) last column, read the counts,
    # then step and zero the counts again in one scatter: all in place in the one table.
    # The counts are written through the errors (a game with a non-finite error counts for
    # nothing) because that orders every read of the old table, which the errors need,
    # before the first write. With nothing ordering them, XLA copies the whole table every
    # update to keep them apart (measured: hundreds of times slower; an optimization
    # barrier did not stop it).
    counted = jnp.where(jnp.isfinite(err), first, 0.0)
    table = table.at[flat_idx, -1].add(counted)
    games = jnp.maximum(table[flat_idx, -1], 1.0)
    return table.at[flat_idx].add(jnp.stack([alpha * err / jnp.sqrt(games), *columns, -counted], -1))


def _first_per_game(trace, stepped):
    """float32 [G, H, F]: 1 where a stepped slot's feature reads a weight that no earlier
    feature of the same game's stepped slots read, so that summing it counts each game once per
    weight it steps. ``trace`` int32 [G, H, F], ``stepped`` bool [G, H].

    Compared pairwise within each game ((H F)^2 compares): on the CPU that costs less than
    sorting each game's indices (measured at 128 and 4,096 games: +38 and +374 µs per update,
    against +22 µs and +1.6 ms for a sort and 4x that for a sort carrying the errors along).
    """
    g, h, f = trace.shape
    idx = trace.reshape(g, h * f)
    on = jnp.repeat(stepped, f, axis=1)                                     # [G, H*F]
    earlier = jnp.arange(h * f)[None, :] < jnp.arange(h * f)[:, None]       # [k, j]: j before k
    seen = ((idx[:, :, None] == idx[:, None, :]) & on[:, None, :] & earlier).any(-1)
    return (on & ~seen).astype(jnp.float32).reshape(g, h, f)


def _game_words(key, num_games):
    """uint32 [G, 4]: four random words per game, from one hash. They serve both outcomes of
    the move: words 0-1 place the spawn after a move, all four the next game's start board
    when this one just ended (never both)."""
    return rng.random_words(key, 4 * num_games).reshape(num_games, 4)


def _max_tile_hist(boards, ended):
    """int32 [32]: how many ended games had each largest-tile exponent (every exponent an int8
    board of either variant can hold below 32; ``model.tile_values()`` gives their values)."""
    top = boards.astype(jnp.int32).max(-1)
    return jnp.zeros(32, jnp.int32).at[top].add(ended.astype(jnp.int32))
