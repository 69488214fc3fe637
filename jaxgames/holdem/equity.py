"""Monte Carlo equity with the JAX hand evaluator: one hand against a random hand or a range.

Cards are integers 0..51 (``4 * rank + suit``, as in ``cards.py``); a board is int [5] with -1
for the cards not dealt yet. Everything here is jittable and batches with ``vmap``.

* :func:`equity` — a hand's share of the pot at a showdown against a uniformly random hand:
  ``P(win) + P(tie) / 2`` with the opponent's two cards and the rest of the board drawn
  uniformly from the cards the hand's owner has not seen (``num_samples`` draws).
* :func:`showdown_expectation` — two known hands' expected showdown result, the rest of the
  board completed at random: an all-in's value without the luck of the cards to come.
* :func:`showdown_scores` / :func:`win_probability` — one hand against every one of the
  :data:`NUM_HANDS` = 1,326 possible hole-card pairs (a range: a weight per pair), the board
  completed ``num_samples`` times at random: what local best response (``lbr.py``) needs.

Drawing distinct cards cheaply: the cards still in the deck are a 52-bit set held as two
uint32 words (cards 0..31, 32..51); a draw takes the k-th card of the set for a random word
k (``word % count``: the bias is below 52 / 2**32), found by a five-step binary search on
population counts. All of it is elementwise integer work that XLA fuses with the evaluator,
with no sorts, scatters or gathers (a ``cumsum`` over a 52-card mask per draw cost several
times the evaluation itself).
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.holdem import hand_eval
from jaxgames.holdem.cards import card_set, draw_cards

Array = jax.Array

NUM_CARDS = 52
#: every hole-card pair (i < j): int8 [1326, 2], in lexicographic order
HOLE_PAIRS = np.array(list(itertools.combinations(range(NUM_CARDS), 2)), np.int8)
NUM_HANDS = len(HOLE_PAIRS)  # 1326
#: HAND_INDEX[i, j] = HAND_INDEX[j, i]: the row of HOLE_PAIRS holding cards i and j; -1 for i == j
HAND_INDEX = np.full((NUM_CARDS, NUM_CARDS), -1, np.int16)
HAND_INDEX[HOLE_PAIRS[:, 0], HOLE_PAIRS[:, 1]] = np.arange(NUM_HANDS)
HAND_INDEX[HOLE_PAIRS[:, 1], HOLE_PAIRS[:, 0]] = np.arange(NUM_HANDS)
# Each pair as a 52-bit card set (two uint32 words), to test collisions with a word AND.
_PAIR_LO = np.zeros(NUM_HANDS, np.uint32)
_PAIR_HI = np.zeros(NUM_HANDS, np.uint32)
for _c in range(2):
    _card = HOLE_PAIRS[:, _c].astype(np.int64)
    _PAIR_LO |= np.where(_card < 32, np.uint64(1) << np.minimum(_card, 31).astype(np.uint64), 0).astype(np.uint32)
    _PAIR_HI |= np.where(_card >= 32, np.uint64(1) << np.maximum(_card - 32, 0).astype(np.uint64), 0).astype(np.uint32)


def complete_board(board: Array, drawn: Array) -> Array:
    """int32 [..., 5]: ``board`` int [5] (-1 = not dealt) with its missing cards taken from
    ``drawn`` int [..., 5] (position i from ``drawn[..., i]``)."""
    board = jnp.asarray(board).astype(jnp.int32)
    return jnp.where(board >= 0, board, drawn)


def equity(hole: Array, board: Array, key: jax.Array, *, num_samples: int) -> Array:
    """float32 []: ``hole`` int [2]'s expected share of the pot against a uniformly random
    hand at a showdown, the board int [5] (-1 = not dealt) completed at random:
    ``P(win) + P(tie) / 2``, estimated from ``num_samples`` deals of the opponent's two cards
    and the missing board cards, drawn from the 52 less ``hole`` and the dealt board.

    Unbiased; standard error at most ``0.5 / sqrt(num_samples)``. With the key unbatched
    under ``vmap`` the random words are made once and shared by every hand of the batch."""
    if not isinstance(num_samples, int) or num_samples < 1:
        raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
    hole = jnp.asarray(hole).astype(jnp.int32)
    board = jnp.asarray(board).astype(jnp.int32)
    known = card_set(jnp.concatenate([hole, board]))
    words = rng.random_words(key, num_samples * 7).reshape(num_samples, 7)
    drawn = draw_cards(words, known, unroll=True)                      # [S, 7]
    full = complete_board(board, drawn[:, 2:])                         # [S, 5]
    mine = hand_eval.evaluate(jnp.concatenate([jnp.broadcast_to(hole, (num_samples, 2)), full], -1))
    theirs = hand_eval.evaluate(jnp.concatenate([drawn[:, :2], full], -1))
    score = (mine > theirs).astype(jnp.float32) + 0.5 * (mine == theirs).astype(jnp.float32)
    return score.mean()


def showdown_expectation(holes: Array, board: Array, key: jax.Array, *, num_samples: int) -> Array:
    """float32 []: seat 0's expected showdown result (+1 win, -1 loss, 0 split) with both
    seats' hole cards ``holes`` int [2, 2] known, the board int [5] (-1 = not dealt) completed
    ``num_samples`` times from the cards neither seat holds nor the board shows. Unbiased for
    the result over the board still to come (standard error at most ``1 / sqrt(num_samples)``);
    with a complete board every sample is the board itself, so the result is exact. What an
    all-in before the river is worth, the luck of the cards still to come taken out: the
    all-in adjustment of poker evaluations (``lbr.py``)."""
    if not isinstance(num_samples, int) or num_samples < 1:
        raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
    holes = jnp.asarray(holes).astype(jnp.int32)
    board = jnp.asarray(board).astype(jnp.int32)
    known = card_set(jnp.concatenate([holes.reshape(4), board]))
    words = rng.random_words(key, num_samples * 5).reshape(num_samples, 5)
    full = complete_board(board, draw_cards(words, known, unroll=True))   # [S, 5]
    values = [hand_eval.evaluate(jnp.concatenate([jnp.broadcast_to(holes[s], (num_samples, 2)), full], -1))
              for s in range(2)]
    return jnp.sign(values[0] - values[1]).astype(jnp.float32).mean()


def showdown_scores(hole: Array, board: Array, key: jax.Array, *, num_samples: int) -> tuple[Array, Array]:
    """``hole`` int [2] against every pair of :data:`HOLE_PAIRS`, the board int [5] (-1 = not
    dealt) completed ``num_samples`` times from the cards ``hole``'s owner has not seen.

    Returns ``(score, weight)``, float32 [1326] each: ``weight[h]`` counts the completions
    that share no card with pair h (0 for a pair that collides with ``hole`` or the dealt
    board), ``score[h]`` sums hole's result over them (1 win, ½ tie, 0 loss). Against a
    range r (weights over pairs) the win probability is ``r·score / r·weight``: the
    completions are drawn without knowing the opponent's pair, and keeping only those
    disjoint from pair h weighs every (h, completion) exactly as dealing h first would
    (each h keeps the same number of possible completions). On the river the board is
    complete and the result exact."""
    if not isinstance(num_samples, int) or num_samples < 1:
        raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
    hole = jnp.asarray(hole).astype(jnp.int32)
    board = jnp.asarray(board).astype(jnp.int32)
    dealt = jnp.concatenate([hole, board])
    known = card_set(dealt)
    words = rng.random_words(key, num_samples * 5).reshape(num_samples, 5)
    full = complete_board(board, draw_cards(words, known, unroll=True))  # [S, 5]
    full_set = card_set(full)                                          # [S] x 2
    mine = hand_eval.evaluate(jnp.concatenate([jnp.broadcast_to(hole, (num_samples, 2)), full], -1))  # [S]
    pairs = jnp.asarray(HOLE_PAIRS).astype(jnp.int32)                  # [H, 2]
    theirs = hand_eval.evaluate(jnp.concatenate([
        jnp.broadcast_to(pairs[:, None], (NUM_HANDS, num_samples, 2)),
        jnp.broadcast_to(full[None], (NUM_HANDS, num_samples, 5))], -1))   # [H, S]
    pair_lo, pair_hi = jnp.asarray(_PAIR_LO), jnp.asarray(_PAIR_HI)
    clash = ((pair_lo[:, None] & full_set[0][None]) | (pair_hi[:, None] & full_set[1][None])) != 0
    blocked = ((pair_lo & known[0]) | (pair_hi & known[1])) != 0        # [H]
    ok = ~clash & ~blocked[:, None]
    result = (mine[None] > theirs).astype(jnp.float32) + 0.5 * (mine[None] == theirs).astype(jnp.float32)
    return jnp.where(ok, result, 0.0).sum(1), ok.sum(1).astype(jnp.float32)


def win_probability(score: Array, weight: Array, hand_range: Array) -> Array:
    """float32 []: the win probability (ties half) against ``hand_range`` float [1326] from
    :func:`showdown_scores`; 0.5 for an empty range (nothing to play against)."""
    num = (hand_range * score).sum(-1)
    den = (hand_range * weight).sum(-1)
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1.0), 0.5)


def blocked_hands(cards: Array) -> Array:
    """bool [1326]: the pairs that share a card with ``cards`` int [n] (entries < 0 ignored)."""
    lo, hi = card_set(cards)
    return ((jnp.asarray(_PAIR_LO) & lo) | (jnp.asarray(_PAIR_HI) & hi)) != 0
