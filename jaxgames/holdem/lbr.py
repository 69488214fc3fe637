"""Local best response (LBR; Lisý & Bowling 2017, "Equilibrium Approximation Quality of Current
No-Limit Poker Bots", Algorithm 1): a lower bound on how much a hold'em policy can be beaten.

LBR plays one seat against a hold'em :class:`jaxgames.player.Player` and knows its strategy
(its ``probs``), not its cards. It keeps the policy's *range*: a probability over the 1,326
hole-card pairs (``equity.HOLE_PAIRS``), uniform at the deal over the pairs that miss LBR's
cards; pairs that meet a board card are dropped as the board is dealt, and after each of the
policy's actions the range is multiplied by the probability of that action with each pair
(the policy's ``probs`` with its hole cards replaced by the pair) and renormalised: Bayes'
rule. At its own decisions LBR assumes both players check or call to the end of the hand and
picks the action of highest expected value (chips, relative to folding now):

    wp        = P(LBR's hand beats the range at a showdown), ties half, the board completed
                at random (``wp_samples`` completions; exact on the river)
    U[check/call] = wp * pot - (1 - wp) * asked
    U[raise r]    = fp * pot + (1 - fp) * (wp' * (pot + a) - (1 - wp') * (asked + a))
    U[fold]       = 0 (when folding is legal)

``pot`` is every chip in the middle, ``asked`` what LBR must add to call, ``a`` the raise's
chips beyond the call (capped by the policy's stack), ``fp`` the range's probability of
folding to it (the policy's fold probability after the raise, summed over the range) and
``wp'`` the win probability against the part of the range that does not fold. (The paper's
Algorithm 1 uses the same wp there; the continuing range is what is met at the showdown, and
costs nothing more here.) LBR considers every legal action of the nine-action abstraction;
``argmax U``, which is fold exactly when every other action has U < 0 (ties go to the lower
action id, so to fold).

Everything is one jitted program: each game is a ``lax.while_loop`` whose carry holds the
state, the range and the returns (``jaxgames.rollout`` plays stateless policies; LBR carries a
range), and the games are ``vmap``-ed. Each deal is played twice, LBR on the button and in
the big blind with the same cards dealt to the same seats (duplicate), and the interval is
over deals. Beside the winnings as played, the same hands all-in adjusted
(:func:`allin_adjusted`): the same expectation, less of the luck of the cards dealt after an
all-in. docs/holdem_eval.md has the measured values.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.arena import ci95
from jaxgames.core import Env, PRNGKey, State
from jaxgames.holdem import betting
from jaxgames.holdem.bots import sample_action, to_mbb
from jaxgames.holdem.cards import BOARD_VISIBLE
from jaxgames.holdem.equity import (HAND_INDEX, HOLE_PAIRS, NUM_HANDS, blocked_hands, showdown_expectation,
                                    showdown_scores, win_probability)
from jaxgames.holdem.game import RIVER, SHOWDOWN, showdown_result
from jaxgames.player import Player

Array = jax.Array

__all__ = ["LBRResult", "LocalBestResponse", "RAISES", "allin_adjusted", "hand_probs", "lbr_decision", "lbr_result",
           "normalize", "pooled", "prior_range", "update_range", "utilities", "with_hole_cards"]

#: LBR's raises, in candidate order: ½, ¾, 1, 1½, 2 pots and all-in
RAISES = tuple(range(betting.RAISE_HALF, betting.ALL_IN + 1))
DEFAULT_WP_SAMPLES = 128
#: board completions that value an all-in before the river (:func:`allin_adjusted`): the
#: estimate's own error, at most 1/32 of the contested chips a hand, is small beside the
#: cards' luck it takes out (all or nothing)
ALLIN_SAMPLES = 1024


# -- the range ------------------------------------------------------------------------------------


def prior_range(known_cards: Array) -> Array:
    """float32 [1326]: uniform over the pairs that share no card with ``known_cards`` int [n]
    (entries < 0 ignored)."""
    return normalize(jnp.where(blocked_hands(known_cards), 0.0, 1.0).astype(jnp.float32))


def normalize(hand_range: Array) -> Array:
    """``hand_range`` float [1326] scaled to sum 1 (left as it is when it sums to 0)."""
    total = hand_range.sum()
    return jnp.where(total > 0, hand_range / jnp.where(total > 0, total, 1.0), hand_range)


def update_range(hand_range: Array, action_probs: Array, action: Array) -> Array:
    """Bayes' rule: ``hand_range`` float [1326] after the policy played ``action``, where
    ``action_probs`` float [1326, 9] are its probabilities with each pair. A posterior of
    total mass 0 (an action the model says no pair plays) keeps the prior."""
    posterior = hand_range * action_probs[:, action]
    return jnp.where(posterior.sum() > 0, normalize(posterior), hand_range)


def with_hole_cards(state: State, seat: Array | int, hole: Array) -> State:
    """``state`` with ``seat``'s hole cards replaced by ``hole`` int [2]: the deck's two hole
    positions of that seat are swapped with wherever ``hole``'s cards lie, so the deck stays
    a permutation (a pair that meets the other seat's cards or the board moves those cards:
    LBR gives such pairs zero weight). ``showdown`` is recomputed; ``observation`` is not
    (:func:`hand_probs` sets it)."""
    deck = state.deck.astype(jnp.int32)
    pos = jnp.arange(deck.shape[0])
    seat = jnp.asarray(seat, jnp.int32)
    hole = jnp.asarray(hole).astype(jnp.int32)
    for i in range(2):
        target = 2 * seat + i
        where = jnp.argmax(deck == hole[i])
        here = deck[target]
        deck = jnp.where(pos == target, hole[i], jnp.where(pos == where, here, deck))
    deck = deck.astype(state.deck.dtype)
    return state.replace(deck=deck, showdown=showdown_result(deck))


def hand_probs(env: Env, bot: Player, params: Any, state: State, candidates: State, seat: Array,
               key: PRNGKey) -> Array:
    """float32 [C, 1326, 9]: the bot's ``probs`` in each candidate state (leaves [C, ...],
    states where ``seat`` acts, all on ``state``'s deck and street), with ``seat``'s hole
    cards replaced by each pair, every call with the same ``key``.

    The deck (with the pair) and the street are set from ``state`` outside the candidates'
    ``vmap``, so whatever the bot derives from its cards and the board alone (the equity
    bot's Monte Carlo) is computed once per pair, not once per candidate."""
    seat = jnp.asarray(seat, jnp.int32)

    def per_pair(pair):
        dealt = with_hole_cards(state, seat, pair)

        def per_candidate(candidate):
            hypo = candidate.replace(deck=dealt.deck, showdown=dealt.showdown, street=state.street,
                                     current_player=seat)
            hypo = hypo.replace(observation=env.observe(hypo, seat))
            return bot.probs(params, hypo, key)

        return jax.vmap(per_candidate)(candidates)

    return jax.vmap(per_pair, out_axes=1)(jnp.asarray(HOLE_PAIRS))


# -- LBR's decision ---------------------------------------------------------------------------------


def utilities(pot: Array, asked: Array, raise_chips: Array, legal: Array, score: Array, weight: Array,
              hand_range: Array, fold_probs: Array) -> tuple[Array, Array]:
    """LBR's expected values (module docstring), float32 [9], -inf on illegal actions, and
    its action (``argmax``).

    ``pot`` chips in the middle; ``asked`` chips to call; ``raise_chips`` int [6]: each
    raise's chips beyond the call, capped by the opponent's stack (order :data:`RAISES`);
    ``legal`` bool [9]; ``score``/``weight`` float [1326] from ``showdown_scores``;
    ``hand_range`` float [1326] (normalised); ``fold_probs`` float [6, 1326]: the opponent's
    fold probability with each pair after each raise."""
    pot = jnp.asarray(pot, jnp.float32)
    asked = jnp.asarray(asked, jnp.float32)
    a = jnp.asarray(raise_chips, jnp.float32)
    wp = win_probability(score, weight, hand_range)
    u_call = wp * pot - (1.0 - wp) * asked
    fp = (fold_probs * hand_range[None]).sum(-1)                            # [6]
    continuing = hand_range[None] * (1.0 - fold_probs)                      # [6, 1326]
    wp_cont = jax.vmap(lambda r: win_probability(score, weight, r))(continuing)
    u_raise = fp * pot + (1.0 - fp) * (wp_cont * (pot + a) - (1.0 - wp_cont) * (asked + a))
    u = jnp.concatenate([jnp.zeros(1), jnp.stack([u_call, u_call]), u_raise]).astype(jnp.float32)
    u = jnp.where(legal, u, -jnp.inf)
    return u, jnp.argmax(u).astype(jnp.int32)


def _raise_candidates(env: Env, state: State) -> State:
    """State after each raise of :data:`RAISES` (leaves [6, ...]; an illegal raise's state is
    the game's illegal-action end, never used)."""
    return jax.vmap(lambda a: env.step(state, a))(jnp.asarray(RAISES, jnp.int32))


def _table(env: Env, state: State, me: Array) -> tuple[Array, Array, Array, Array]:
    """pot, asked, raise chips beyond the call (capped) [6], and the chips of each action [9]."""
    opp = 1 - me
    to_call = jnp.maximum(state.bets[opp] - state.bets[me], 0)
    pot = state.committed.sum()
    chips = betting.amounts(pot, to_call, state.stacks[me])
    asked = chips[betting.CALL]
    beyond = jnp.minimum(chips[jnp.asarray(RAISES)] - asked, state.stacks[opp])
    return pot, asked, beyond, chips


def lbr_decision(env: Env, bot: Player, params: Any, state: State, hand_range: Array, key: PRNGKey, *,
                 wp_samples: int = DEFAULT_WP_SAMPLES) -> tuple[Array, Array]:
    """LBR's action (int32 []) and utilities (float32 [9]) in ``state``, where LBR is to act
    and ``hand_range`` float [1326] is the opponent's range. Reads LBR's own cards, the board
    and the bets only."""
    me = state.current_player
    obs = env.observe(state, me)
    wp_key, probs_key = rng.split(key, 2)
    score, weight = showdown_scores(obs.hole, obs.board, wp_key, num_samples=wp_samples)
    hand_range = normalize(hand_range * ~blocked_hands(jnp.concatenate([obs.hole, obs.board])))
    probs = hand_probs(env, bot, params, state, _raise_candidates(env, state), 1 - me, probs_key)
    pot, asked, beyond, _ = _table(env, state, me)
    u, action = utilities(pot, asked, beyond, state.legal_action_mask, score, weight, hand_range,
                          probs[:, :, betting.FOLD])
    return action, u


# -- the games ---------------------------------------------------------------------------------------


def allin_adjusted(state: State, seat: Array, won: Array, key: PRNGKey) -> Array:
    """float32 []: ``seat``'s chips ``won`` in the finished hand ``state``, or, where the hand
    went to a showdown after an all-in before the river, what the all-in was worth: the
    contested chips times ``seat``'s expected showdown result over the board still to come
    (:func:`equity.showdown_expectation`, :data:`ALLIN_SAMPLES` completions). Both have the
    same expectation given the cards seen when the betting stopped; the second leaves out the
    luck of the cards dealt after it, the largest swings of a deep-stacked hand. This is the
    all-in adjustment poker evaluations use (the simplest case of AIVAT, Burch et al. 2018)."""
    last_street = state.history[jnp.maximum(state.step_count - 1, 0), 2].astype(jnp.int32)
    early = state.terminated & (state.street == SHOWDOWN) & (last_street < RIVER)
    visible = jnp.asarray(BOARD_VISIBLE)[jnp.clip(last_street, 0, RIVER)]
    deck = state.deck.astype(jnp.int32)
    board = jnp.where(jnp.arange(5) < visible, deck[4:9], -1)
    seat0 = showdown_expectation(deck[:4].reshape(2, 2), board, key, num_samples=ALLIN_SAMPLES)
    worth = seat0 * jnp.minimum(state.committed[0], state.committed[1]).astype(jnp.float32)
    return jnp.where(early, jnp.where(seat == 0, worth, -worth), won)


def _play(env: Env, bot: Player, params: Any, deal_key: PRNGKey, lbr_seat: Array, key: PRNGKey,
          wp_samples: int) -> tuple[Array, Array, Array]:
    """One hand, LBR in ``lbr_seat``: (LBR's chips won float32 [], the same all-in adjusted
    float32 [] (:func:`allin_adjusted`), actions played int32 [])."""
    state = env.init(deal_key)
    lbr_seat = jnp.asarray(lbr_seat, jnp.int32)
    bot_seat = 1 - lbr_seat
    start_range = prior_range(env.observe(state, lbr_seat).hole)
    limit = env.max_steps or 10_000

    def cond(carry):
        state, _, _, _, t = carry
        return ~(state.terminated | state.truncated) & (t < limit)

    def body(carry):
        state, hand_range, k, won, t = carry
        k, k_probs, k_wp, k_act = rng.split(k, 4)
        lbr_turn = state.current_player == lbr_seat
        obs = env.observe(state, lbr_seat)
        hand_range = normalize(hand_range * ~blocked_hands(jnp.concatenate([obs.hole, obs.board])))
        # Every action's next state, stepped once (the move played is one of them: one
        # traced and compiled step, not two). One batch of the bot's probabilities per move:
        # [current state, after each raise]; on the bot's move the first gives the Bayes
        # update, on LBR's move the others give the fold probabilities (the rest is computed
        # and dropped: a select under vmap).
        after = jax.vmap(lambda a: env.step(state, a))(jnp.arange(betting.NUM_ACTIONS, dtype=jnp.int32))
        raises = jnp.asarray(RAISES)
        candidates = jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x[None], y[raises]]), state, after)
        probs = hand_probs(env, bot, params, state, candidates, bot_seat, k_probs)   # [7, 1326, 9]
        # the bot's move: a sample of its probabilities with its real cards
        real = state.deck.astype(jnp.int32)[2 * bot_seat + jnp.arange(2)]
        bot_action = sample_action(probs[0, jnp.asarray(HAND_INDEX)[real[0], real[1]]], k_act)
        # LBR's move
        score, weight = showdown_scores(obs.hole, obs.board, k_wp, num_samples=wp_samples)
        pot, asked, beyond, _ = _table(env, state, lbr_seat)
        _, lbr_action = utilities(pot, asked, beyond, state.legal_action_mask, score, weight, hand_range,
                                  probs[1:, :, betting.FOLD])
        action = jnp.where(lbr_turn, lbr_action, bot_action)
        hand_range = jnp.where(lbr_turn, hand_range, update_range(hand_range, probs[0], bot_action))
        state = jax.tree_util.tree_map(lambda x: x[action], after)
        return state, hand_range, k, won + state.rewards[lbr_seat], t + 1

    init = (state, start_range, key, jnp.float32(0), jnp.int32(0))
    final, _, _, won, steps = jax.lax.while_loop(cond, body, init)
    # its own stream: the hand's play (and so the unadjusted result) is the same as without it
    return won, allin_adjusted(final, lbr_seat, won, jax.random.fold_in(key, 0xA11)), steps


@functools.lru_cache(maxsize=16)
def _program(env: Env, probs, num_deals: int, wp_samples: int):
    """``run(params, key) -> (won [2, D], all-in adjusted [2, D], steps [2, D])``, jitted: one per (env, policy's
    ``probs``, deals, samples) and process, so every :class:`LocalBestResponse` of the same
    policy (a run's LBR every few rounds, its final one, a resumed run) traces it once."""
    play = functools.partial(_play, env, Player("LBR's opponent", None, probs=probs), wp_samples=wp_samples)
    d = num_deals
    # game g: deal g % D, LBR in seat g // D (one vmap over all games: batching the loop
    # body twice, once per nested vmap, doubled the trace time)
    seat_of_game = jnp.asarray(np.repeat(np.arange(2, dtype=np.int32), d))
    deal_of_game = np.tile(np.arange(d), 2)

    @jax.jit
    def run(params, key):
        deal_key, play_key = rng.split(key, 2)
        deals = rng.split(deal_key, d)[deal_of_game]
        keys = rng.split(play_key, 2 * d)
        won, adjusted, steps = jax.vmap(lambda k_deal, seat, k: play(params, k_deal, seat, k))(
            deals, seat_of_game, keys)
        return won.reshape(2, d), adjusted.reshape(2, d), steps.reshape(2, d)

    return run


@dataclasses.dataclass(frozen=True)
class LBRResult:
    """LBR's winnings against a policy, mbb per hand (the policy's exploitability lower bound
    as the field reports it)."""

    mean: float              # mbb/hand, both seats
    ci95: float              # half-width of the 95% interval, over deals
    seat_mean: np.ndarray    # float64 [2]  LBR on the button (seat 0), in the big blind (seat 1)
    seat_ci95: np.ndarray    # float64 [2]
    returns: np.ndarray      # float32 [2, D]  LBR's chips per hand: [LBR's seat, deal]
    allin_mean: float        # mbb/hand, both seats, all-in adjusted (allin_adjusted): the same expectation
    allin_ci95: float        # its 95% interval's half-width, over deals
    allin_returns: np.ndarray  # float32 [2, D]  LBR's chips per hand, all-in adjusted
    steps: np.ndarray        # int32 [2, D]  actions per hand
    num_deals: int
    num_hands: int           # 2 * num_deals

    def __str__(self) -> str:
        return (f"LBR wins {self.mean:+.0f} ± {self.ci95:.0f} mbb/hand over {self.num_hands} hands "
                f"(button {self.seat_mean[0]:+.0f} ± {self.seat_ci95[0]:.0f}, big blind "
                f"{self.seat_mean[1]:+.0f} ± {self.seat_ci95[1]:.0f}; all-in adjusted "
                f"{self.allin_mean:+.0f} ± {self.allin_ci95:.0f})")


class LocalBestResponse:
    """``lbr(params, key) -> LBRResult``: LBR against ``bot`` (with ``params``) over
    ``num_deals`` deals, each played with LBR on the button and in the big blind.

    Compiled once per (env, bot's ``probs``, num_deals, wp_samples) and process; another key,
    other ``params`` or another instance for the same bot do not recompile."""

    def __init__(self, env: Env, bot: Player, *, num_deals: int, wp_samples: int = DEFAULT_WP_SAMPLES):
        if isinstance(num_deals, bool) or not isinstance(num_deals, (int, np.integer)) or num_deals < 1:
            raise ValueError(f"num_deals must be a positive integer, got {num_deals!r}")
        if isinstance(wp_samples, bool) or not isinstance(wp_samples, int) or wp_samples < 1:
            raise ValueError(f"wp_samples must be a positive integer, got {wp_samples!r}")
        if not isinstance(bot, Player) or bot.probs is None:
            raise ValueError(f"bot must be a Player with probs (bots.player_from_probs), got {bot!r}")
        self.env, self.bot, self.num_deals, self.wp_samples = env, bot, int(num_deals), wp_samples
        self._run = _program(env, bot.probs, self.num_deals, wp_samples)

    def __call__(self, params: Any, key: PRNGKey) -> LBRResult:
        won, adjusted, steps = self._run(params, key)
        return lbr_result(won, adjusted, steps, self.env.big_blind)


def lbr_result(won: Any, adjusted: Any, steps: Any, big_blind: int) -> LBRResult:
    """The :class:`LBRResult` of LBR's hands: its chips as played and all-in adjusted, float
    [2, D] ([LBR's seat, deal]), and the actions of each hand, int [2, D]."""
    won = np.asarray(won, np.float64)
    adjusted = np.asarray(adjusted, np.float64)
    pairs, adjusted_pairs = won.sum(0) / 2, adjusted.sum(0) / 2
    deals = won.shape[1]
    return LBRResult(mean=float(to_mbb(pairs.mean(), big_blind)), ci95=float(to_mbb(ci95(pairs), big_blind)),
                     seat_mean=to_mbb(won.mean(1), big_blind),
                     seat_ci95=to_mbb(np.array([ci95(w) for w in won]), big_blind), returns=won.astype(np.float32),
                     allin_mean=float(to_mbb(adjusted_pairs.mean(), big_blind)),
                     allin_ci95=float(to_mbb(ci95(adjusted_pairs), big_blind)),
                     allin_returns=adjusted.astype(np.float32), steps=np.asarray(steps), num_deals=deals,
                     num_hands=2 * deals)


def pooled(batches: Sequence[LBRResult], num_deals: int, big_blind: int) -> LBRResult:
    """Batches of LBR (one compiled program called with several keys) as one result over their
    first ``num_deals`` deals."""
    def cat(name):
        return np.concatenate([getattr(b, name) for b in batches], axis=1)[:, :num_deals]
    return lbr_result(cat("returns"), cat("allin_returns"), cat("steps"), big_blind)
