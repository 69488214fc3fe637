"""Hold'em baseline players and the duplicate head-to-head in milli-big-blinds per hand.

A hold'em player is a :class:`jaxgames.player.Player` with ``probs(params, state, key) ->
float32 [9]``, its action probabilities (zero on illegal actions), and ``policy(params, state,
key) -> int32 []``, the arena policy that plays a sample of them. Both read only what the mover may see
(``env.observe(state, state.current_player)`` and the legal mask). Exposing the probabilities,
not only a sampled action, is what local best response needs (``lbr.py`` tracks the player's
range by Bayes' rule from them); a learned agent plugs into the arena and LBR the same way.

The baselines (docs/holdem_eval.md):

* ``random``  — uniform over the legal actions;
* ``call``    — call when facing a bet, check otherwise (a calling station);
* ``allin``   — all-in when legal, else call (facing an all-in), else check;
* ``fold``    — fold when legal, else check (loses the blinds: LBR's known answer);
* ``equity``  — :func:`equity_bot`: Monte Carlo equity against a random hand; raises with
  high equity, calls when the equity covers the pot odds, checks when free, folds otherwise.

Head-to-head (:func:`head_to_head`) goes through :class:`jaxgames.arena.Arena` with its two
rotations: game d of each rotation is dealt from the same key, so every deal is played twice
with the seats (and the button) swapped; the 95% interval is over the deals (each the sum of
its two games), the unit that is independent.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.arena import Arena, ci95
from jaxgames.core import Env, Policy, PRNGKey, State
from jaxgames.holdem import betting
from jaxgames.holdem.equity import equity
from jaxgames.player import Player, one_of   # one_of: re-exported, the bots of a table as one player

Array = jax.Array
#: ``probs(params, state, key) -> float32 [9]``: action probabilities of the player to move
ProbsFn = Callable[[Any, State, PRNGKey], Array]

__all__ = ["BOT_NAMES", "EquityBotConfig", "HeadToHead", "against_baselines", "all_in_bot", "board_code",
           "call_bot", "duplicate_summary", "equity_bot", "fold_bot", "head_to_head", "make_bot", "one_of",
           "player_from_probs", "policy_from_probs", "random_bot", "sample_action", "to_mbb"]


def sample_action(probs: Array, key: PRNGKey) -> Array:
    """int32 []: an action drawn from ``probs`` float [9] (need not sum to 1); never one of
    probability 0. One random word and a cumulative sum (cheaper than a categorical draw)."""
    total = jnp.cumsum(probs)
    u = (rng.random_words(key, 1)[0] >> 8).astype(jnp.float32) * jnp.float32(2.0 ** -24)
    hit = total > u * total[-1]
    # Rounding could leave no entry above u * total: then the likeliest action.
    return jnp.where(hit.any(), jnp.argmax(hit), jnp.argmax(probs)).astype(jnp.int32)


def policy_from_probs(probs: ProbsFn) -> Policy:
    """The arena policy that plays a sample of ``probs``."""

    def policy(params: Any, state: State, key: PRNGKey) -> Array:
        probs_key, sample_key = rng.split(key, 2)
        return sample_action(probs(params, state, probs_key), sample_key)

    return policy


def player_from_probs(name: str, probs: ProbsFn) -> Player:
    """The hold'em :class:`~jaxgames.player.Player` of ``probs``: its policy plays a sample of
    them, and it keeps them for local best response (a learned agent is built this way too).
    Parameter-free (``params=None``) and hashable, so arenas built from it compile once."""
    return Player(name=name, policy=policy_from_probs(probs), probs=probs)


def _first_legal(mask: Array, preference: Sequence[int]) -> Array:
    """float32 [9]: one-hot on the first legal action of ``preference`` (a legal action always
    exists in a live state: check or call; at a finished state the mask is all True)."""
    out = jnp.zeros(betting.NUM_ACTIONS, jnp.float32)
    taken = jnp.bool_(False)
    for a in preference:
        pick = mask[a] & ~taken
        out = out.at[a].set(pick.astype(jnp.float32))
        taken = taken | pick
    return out


# -- the parameter-free baselines ---------------------------------------------------------------


def _random_probs(params: Any, state: State, key: PRNGKey) -> Array:
    del params, key
    mask = state.legal_action_mask.astype(jnp.float32)
    return mask / jnp.maximum(mask.sum(), 1.0)


def _call_probs(params: Any, state: State, key: PRNGKey) -> Array:
    del params, key
    return _first_legal(state.legal_action_mask, (betting.CALL, betting.CHECK))


def _all_in_probs(params: Any, state: State, key: PRNGKey) -> Array:
    del params, key
    return _first_legal(state.legal_action_mask, (betting.ALL_IN, betting.CALL, betting.CHECK))


def _fold_probs(params: Any, state: State, key: PRNGKey) -> Array:
    del params, key
    return _first_legal(state.legal_action_mask, (betting.FOLD, betting.CHECK))


_RANDOM = player_from_probs("random", _random_probs)
_CALL = player_from_probs("call", _call_probs)
_ALL_IN = player_from_probs("allin", _all_in_probs)
_FOLD = player_from_probs("fold", _fold_probs)


def random_bot() -> Player:
    """Uniform over the legal actions."""
    return _RANDOM


def call_bot() -> Player:
    """Call when facing a bet, check otherwise."""
    return _CALL


def all_in_bot() -> Player:
    """All-in whenever legal; facing an all-in (no raise left) call; check if nothing else."""
    return _ALL_IN


def fold_bot() -> Player:
    """Fold whenever folding is legal (facing a bet), check otherwise."""
    return _FOLD


# -- the equity bot -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EquityBotConfig:
    """The equity bot's settings (docs/holdem_eval.md has the rule and why).

    num_samples:   Monte Carlo deals per equity estimate (standard error <= 0.5/sqrt(n))
    raise_equity:  raise with at least this equity against a random hand
    raise_action:  the raise it makes (default 1 pot); all-in when that size is not legal
    seed:          seeds the Monte Carlo deals (with the public board, see ``equity_bot``)
    """

    num_samples: int = 128
    raise_equity: float = 0.7
    raise_action: int = betting.RAISE_POT
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.num_samples, bool) or not isinstance(self.num_samples, int) or self.num_samples < 1:
            raise ValueError(f"num_samples must be a positive integer, got {self.num_samples!r}")
        if not isinstance(self.raise_equity, (int, float)) or not 0.0 <= self.raise_equity <= 1.0:
            raise ValueError(f"raise_equity must be a number in [0, 1], got {self.raise_equity!r}")
        raises = range(betting.RAISE_HALF, betting.ALL_IN + 1)
        if self.raise_action not in raises:
            raise ValueError(f"raise_action must be one of the raises {list(raises)} "
                             f"({', '.join(betting.ACTION_NAMES[a] for a in raises)}), got {self.raise_action!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")


def board_code(board: Array) -> Array:
    """int32 []: a number that identifies the dealt board int [5] (-1 = not dealt):
    ``sum (board[i] + 1) * 53**i`` (below 53**5 < 2**31)."""
    digits = (jnp.asarray(board).astype(jnp.int32) + 1)
    return (digits * jnp.asarray([53 ** i for i in range(5)], jnp.int32)).sum()


def equity_bot(env: Env, config: EquityBotConfig | None = None, **options: Any) -> Player:
    """The equity bot for ``env`` (a :class:`jaxgames.holdem.Holdem`): ``config`` or the
    :class:`EquityBotConfig` fields as keywords. Parameter-free (``params`` is ignored).

    With e = Monte Carlo equity of its hand against a uniformly random hand (the board
    completed at random), ``to_call`` the chips it must add to call and ``pot`` the chips in
    the middle: e >= ``raise_equity``: the ``raise_action`` raise (all-in if that is not legal,
    call if no raise is); nothing to call: check; e >= to_call / (pot + to_call) (the pot
    odds): call; otherwise fold. One action with probability 1.

    The Monte Carlo deals come from ``seed`` and the public board, not from the ``key``: the
    bot's decision is a function of what it sees (its cards, the board, the bets), so a deal
    replayed with the seats swapped is played the same way (duplicate play then cancels the
    luck exactly) and LBR's Bayes update sees the probabilities the bot acts on; every hand
    on one board shares the same deals, so under ``vmap`` over hypothetical hands (LBR) the
    random words are drawn once.
    """
    if config is None:
        config = EquityBotConfig(**options)
    elif options:
        raise ValueError("give either config or keyword options, not both")
    return _equity_bot(env, config)


@functools.lru_cache(maxsize=None)
def _equity_bot(env: Env, config: EquityBotConfig) -> Player:
    n = config.num_samples
    threshold = jnp.float32(config.raise_equity)
    preference = (config.raise_action, betting.ALL_IN, betting.CALL, betting.CHECK)

    def probs(params: Any, state: State, key: PRNGKey) -> Array:
        del params, key
        obs = env.observe(state, state.current_player)
        mc_key = jax.random.fold_in(jax.random.key(config.seed), board_code(obs.board))
        e = equity(obs.hole, obs.board, mc_key, num_samples=n)
        me = obs.player.astype(jnp.int32)
        to_call = jnp.maximum(obs.bets[1 - me] - obs.bets[me], 0)
        pot_odds = to_call.astype(jnp.float32) / (obs.pot + to_call).astype(jnp.float32)
        mask = state.legal_action_mask
        raise_ = _first_legal(mask, preference)
        passive = _first_legal(mask, (betting.CHECK, betting.CALL))     # check when free, else call
        fold = _first_legal(mask, (betting.FOLD, betting.CHECK))
        strong = e >= threshold
        covered = (to_call == 0) | (e >= pot_odds)
        return jnp.where(strong, raise_, jnp.where(covered, passive, fold))

    return player_from_probs(f"equity{'' if config == EquityBotConfig() else f' {config}'}", probs)


#: the bot names :func:`make_bot` knows
BOT_NAMES = ("random", "call", "allin", "fold", "equity")


def make_bot(env: Env, name: str, **options: Any) -> Player:
    """The baseline called ``name`` (one of :data:`BOT_NAMES`) for ``env``; ``options`` go to
    the equity bot's :class:`EquityBotConfig` (the others take none). The argument order of
    every game's ``make_bot``: the env first, as a caller of ``jaxgames.make`` holds it."""
    if name == "equity":
        return equity_bot(env, **options)
    simple = {"random": _RANDOM, "call": _CALL, "allin": _ALL_IN, "fold": _FOLD}
    if name not in simple:
        raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOT_NAMES)}")
    if options:
        raise ValueError(f"the {name} bot takes no options, got {sorted(options)}")
    return simple[name]


# -- head-to-head ---------------------------------------------------------------------------------


def to_mbb(chips: Any, big_blind: int) -> Any:
    """Chips to milli-big-blinds: ``1000 * chips / big_blind``."""
    return np.asarray(chips, np.float64) * 1000.0 / big_blind


@dataclasses.dataclass(frozen=True)
class HeadToHead:
    """A duplicate match of bot A against bot B, from A's side, in mbb per hand."""

    mean: float               # A's mean winnings, mbb/hand (B's is -mean: the game is zero-sum)
    ci95: float               # half-width of the 95% interval, over deals
    seat_mean: np.ndarray     # float64 [2]  A's mbb/hand on the button (seat 0), in the big blind
    seat_ci95: np.ndarray     # float64 [2]
    deal_returns: np.ndarray  # float64 [D]  A's chips summed over the two games of each deal
    num_deals: int
    num_hands: int            # 2 * num_deals

    def __str__(self) -> str:
        return (f"{self.mean:+.0f} ± {self.ci95:.0f} mbb/hand over {self.num_deals} deals "
                f"({self.num_hands} hands)")


def duplicate_summary(returns: np.ndarray, big_blind: int) -> HeadToHead:
    """:class:`HeadToHead` from the arena's per-game returns of policy 0, ``returns [2 * D]``
    (games 0..D-1: policy 0 on the button; D..2D-1: the same deals, policy 1 on the button)."""
    returns = np.asarray(returns, np.float64)
    d = len(returns) // 2
    button, blind = returns[:d], returns[d:]
    pairs = button + blind
    mbb = functools.partial(to_mbb, big_blind=big_blind)
    return HeadToHead(
        mean=float(mbb(pairs.mean() / 2)), ci95=float(mbb(ci95(pairs / 2))),
        seat_mean=mbb(np.array([button.mean(), blind.mean()])),
        seat_ci95=mbb(np.array([ci95(button), ci95(blind)])),
        deal_returns=pairs, num_deals=d, num_hands=2 * d)


@functools.lru_cache(maxsize=32)
def _arena(env: Env, policy_a: Policy, policy_b: Policy, num_deals: int) -> Arena:
    return Arena(env, [policy_a, policy_b], num_games=2 * num_deals, max_steps=env.max_steps)


def head_to_head(env: Env, bot_a: Player, bot_b: Player, key: PRNGKey, *, num_deals: int,
                 params: Sequence[Any] | None = None) -> HeadToHead:
    """Duplicate match of ``bot_a`` against ``bot_b`` on ``env``: ``num_deals`` deals, each
    played twice with the seats swapped (2 * num_deals hands), in one jitted batch.

    The arena is cached per (env, bots, num_deals): another key or other ``params`` (one per
    bot; by default each bot's own, ``None`` for the baselines) do not recompile. ``init`` puts the button on seat 0, and
    the arena's second rotation seats bot B there with the same deal, so in every pair each
    bot holds each hand in each position once.
    """
    if isinstance(num_deals, bool) or not isinstance(num_deals, (int, np.integer)) or num_deals < 2:
        raise ValueError(f"num_deals must be an integer >= 2 (the interval needs two deals), got {num_deals!r}")
    arena = _arena(env, bot_a.policy, bot_b.policy, int(num_deals))
    result = arena([bot_a.params, bot_b.params] if params is None else params, key)
    return duplicate_summary(result.returns[:, 0], env.big_blind)


def against_baselines(env: Env, player: Player, params: Any, key: PRNGKey, *, names: Sequence[str],
                      num_deals: int) -> dict[str, HeadToHead]:
    """``player``'s duplicate match (``head_to_head``) against each baseline of ``names``,
    ``num_deals`` deals each, the i-th with key ``fold_in(key, i)``: ``{name: HeadToHead}``.

    The baselines are one bot (:func:`one_of`), so one compiled arena plays them all, with the
    results of one ``head_to_head`` a baseline to the last bit: five arenas took 20 s to compile
    and this one 5.6 s (the small network, 200 deals, a 2-core Intel Xeon under load)."""
    table = one_of([make_bot(env, name) for name in names])   # cached: the same bot every call
    return {name: head_to_head(env, player, table, jax.random.fold_in(key, i), num_deals=num_deals,
                               params=[params, jnp.int32(i)])
            for i, name in enumerate(names)}
