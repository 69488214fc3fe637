"""Poker hand evaluator: the best five-card hand among 5, 6 or 7 cards, as one int32.

Cards are integers 0..51, ``card = 4 * rank + suit``: rank 0 = deuce ... 12 = ace, suit 0..3
= clubs, diamonds, hearts, spades (2c = 0, 2d = 1, 2h = 2, 2s = 3, ..., As = 51: the encoding
of phevaluator's integer cards; tested). ``evaluate(cards[..., n])`` for n in 5, 6, 7 gives a
value that is higher for a stronger hand and equal for hands of equal strength (suits never
break ties), batched over any leading axes.

Value layout (int32, always >= 0)::

    bits 26..29  category: 0 high card, 1 one pair, 2 two pair, 3 three of a kind,
                 4 straight, 5 flush, 6 full house, 7 four of a kind, 8 straight flush
    bits 13..25  major ranks, a 13-bit rank mask (bit r = rank r): the pair / the two pairs /
                 the trips / the quads / the trips of a full house; 0 for the other categories
    bits  0..12  minor ranks, a 13-bit rank mask: the kickers (high card and flush: the five
                 cards; pair: three; two pair, quads: one; trips: two), the pair of a full
                 house, or the top card of a straight (the five for the wheel A-2-3-4-5)

Within a category a value compares by major ranks first, then by kickers, as the rules say.

How it works (docs/hand_eval.md): every step is elementwise, so XLA fuses the whole evaluator
into one loop over the batch, with no per-hand count arrays, sorts or table gathers. Per hand,
four 13-bit suit masks (OR of ``1 << rank`` over the cards of each suit); a bit-sliced adder
over the four masks gives the ranks held at least twice, three times, four times; a flush is a
suit mask of population count >= 5; straights are shifted ANDs of the rank mask with the ace
copied below the deuce; ``x & (x - 1)`` clears the lowest set bit and ``clz`` finds the highest.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

NUM_CARDS = 52
RANKS = "23456789TJQKA"
SUITS = "cdhs"

HIGH_CARD, ONE_PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, \
    STRAIGHT_FLUSH = range(9)
CATEGORY_NAMES = ("high card", "one pair", "two pair", "three of a kind", "straight", "flush",
                  "full house", "four of a kind", "straight flush")
#: how many of the 133,784,560 seven-card hands fall in each category, as published (the
#: exhaustive count in bench/hand_eval_exhaustive.py and the tests reproduce these)
SEVEN_CARD_COUNTS = (23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644,
                     3_473_184, 224_848, 41_584)
#: the same for the 20,358,520 six-card hands
SIX_CARD_COUNTS = (6_612_900, 9_730_740, 2_532_816, 732_160, 361_620, 205_792, 165_984, 14_664,
                   1_844)
#: the same for the 2,598,960 five-card hands
FIVE_CARD_COUNTS = (1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40)
#: distinct hand strengths (equivalence classes) among all hands of 5, 6 and 7 cards
NUM_CLASSES = {5: 7462, 6: 6075, 7: 4824}

CATEGORY_SHIFT = 26
MAJOR_SHIFT = 13
RANK_MASK = (1 << 13) - 1


def evaluate(cards: Array) -> Array:
    """int32 [...]: strength of the best five-card hand in ``cards`` int [..., n], n in 5..7.

    Higher is stronger, equal for equal strength; the layout is in the module docstring.
    Cards must be distinct integers in 0..51 (not checked: the result of anything else is
    unspecified).
    """
    cards = jnp.asarray(cards)
    if not jnp.issubdtype(cards.dtype, jnp.integer):
        raise TypeError(f"cards must be integers 0..51, got dtype {cards.dtype}")
    if cards.ndim < 1 or cards.shape[-1] not in (5, 6, 7):
        raise ValueError(f"evaluate takes 5, 6 or 7 cards on the last axis, got shape {cards.shape}")
    n = cards.shape[-1]
    one = jnp.uint32(1)

    # Four 13-bit suit masks (bit r: the hand holds rank r in that suit).
    suits = [jnp.zeros(cards.shape[:-1], jnp.uint32) for _ in range(4)]
    for i in range(n):
        # Converted card by card: converting the whole array first made XLA write it out
        # as uint32 in a loop of its own before the evaluator's loop.
        ci = cards[..., i].astype(jnp.uint32)
        bit = one << (ci >> 2)
        s = ci & 3
        suits = [m | jnp.where(s == k, bit, jnp.uint32(0)) for k, m in enumerate(suits)]
    s0, s1, s2, s3 = suits

    # Bit-sliced count of each rank over the four suits: lanes of 13 ranks at once.
    x01, c01 = s0 ^ s1, s0 & s1        # sum of suits 0, 1: bit 0, carry
    x23, c23 = s2 ^ s3, s2 & s3
    ranks = s0 | s1 | s2 | s3          # held at least once
    pairs = c01 | c23 | (x01 & x23)    # held at least twice
    trips = (c01 & (s2 | s3)) | (c23 & (s0 | s1))  # at least three times
    quads = c01 & c23

    # The flush suit (at most one suit holds five of seven cards).
    flush = jnp.zeros_like(s0)
    for m in suits:
        flush = flush | jnp.where(jax.lax.population_count(m) >= 5, m, jnp.uint32(0))
    flush_count = jax.lax.population_count(flush)

    def value(cat: int, major, minor):
        return (jnp.uint32(cat << CATEGORY_SHIFT) | (major << MAJOR_SHIFT) | minor)

    # Each category's value, computed for every hand and kept only where the hand is in it;
    # inside its category a hand's shape is fixed by n (e.g. one pair of 7 cards leaves 5
    # single ranks), which fixes how many low kickers to drop.
    two_plus = _drop_low(pairs, 1)     # non-zero iff two or more ranks are paired
    top_pairs = jnp.where(_drop_low(pairs, 2) != 0, two_plus, pairs)  # three pairs: drop the lowest
    top_trips = _high_bit(trips)
    sf = _straight_top(flush)
    st = _straight_top(ranks)
    flush_top5 = flush
    for i in range(n - 5):
        flush_top5 = jnp.where(flush_count > 5 + i, _drop_low(flush_top5, 1), flush_top5)

    v = value(HIGH_CARD, 0, _drop_low(ranks, n - 5))
    v = jnp.where(pairs != 0, value(ONE_PAIR, pairs, _drop_low(ranks & ~pairs, n - 5)), v)
    v = jnp.where(two_plus != 0, value(TWO_PAIR, top_pairs, _high_bit(ranks & ~top_pairs)), v)
    v = jnp.where(trips != 0, value(THREE_OF_A_KIND, trips, _drop_low(ranks & ~trips, n - 5)), v)
    v = jnp.where(st != 0, value(STRAIGHT, 0, st), v)
    v = jnp.where(flush != 0, value(FLUSH, 0, flush_top5), v)
    v = jnp.where((trips != 0) & (two_plus != 0),
                  value(FULL_HOUSE, top_trips, _high_bit(pairs & ~top_trips)), v)
    v = jnp.where(quads != 0, value(FOUR_OF_A_KIND, quads, _high_bit(ranks & ~quads)), v)
    v = jnp.where(sf != 0, value(STRAIGHT_FLUSH, 0, sf), v)
    return v.astype(jnp.int32)


def _drop_low(x: Array, times: int) -> Array:
    """``x`` with its ``times`` lowest set bits cleared (``x & (x - 1)`` clears one)."""
    for _ in range(times):
        x = x & (x - jnp.uint32(1))
    return x


def _high_bit(x: Array) -> Array:
    """The highest set bit of ``x`` uint32 as a mask; 0 for 0 (a shift by 32 gives 0)."""
    return jax.lax.shift_right_logical(jnp.uint32(1 << 31), jax.lax.clz(x))


def _straight_top(ranks: Array) -> Array:
    """Mask of the top card of the highest straight in a 13-bit rank mask, 0 if none."""
    # Bit 0 of ``low`` is the ace played low, bit r + 1 is rank r; bit j of ``runs`` says the
    # five ranks from j up are all held, so the straight's top card is rank j + 3.
    low = (ranks << 1) | (ranks >> 12)
    runs = low & (low >> 1) & (low >> 2) & (low >> 3) & (low >> 4)
    return _high_bit(runs) << 3


def category(value: Array) -> Array:
    """int32 [...]: the category (0 high card ... 8 straight flush) of ``evaluate``'s values."""
    return jnp.asarray(value) >> CATEGORY_SHIFT


def evaluate_holdem(hole: Array, board: Array) -> Array:
    """int32 [...]: ``evaluate`` of hole cards int [..., 2] with board int [..., 5] (or 3, 4).

    Leading axes broadcast: ``hole [B, P, 2]`` with ``board [B, 1, 5]`` gives ``[B, P]``.
    """
    hole, board = jnp.asarray(hole), jnp.asarray(board)
    shape = jnp.broadcast_shapes(hole.shape[:-1], board.shape[:-1])
    cards = jnp.concatenate([jnp.broadcast_to(hole, (*shape, hole.shape[-1])),
                             jnp.broadcast_to(board, (*shape, board.shape[-1]))], axis=-1)
    return evaluate(cards)


def compare(hole_a: Array, hole_b: Array, board: Array) -> Array:
    """int32 [...]: +1 where ``hole_a`` int [..., 2] beats ``hole_b`` on ``board`` int [..., 5],
    -1 where it loses, 0 for a split pot."""
    return jnp.sign(evaluate_holdem(hole_a, board) - evaluate_holdem(hole_b, board)).astype(jnp.int32)


# -- host-side helpers (not for jit) ------------------------------------------------------------


def card_index(name: str) -> int:
    """``"As"`` -> 51, ``"2c"`` -> 0 (rank ``23456789TJQKA``, suit ``cdhs``; case-insensitive)."""
    if not isinstance(name, str) or len(name) != 2 or name[0].upper() not in RANKS \
            or name[1].lower() not in SUITS:
        raise ValueError(f"a card is a rank of {RANKS} and a suit of {SUITS}, e.g. 'As', got {name!r}")
    return 4 * RANKS.index(name[0].upper()) + SUITS.index(name[1].lower())


def card_name(card: int) -> str:
    """51 -> ``"As"``."""
    card = int(card)
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"a card is an integer 0..51, got {card}")
    return RANKS[card // 4] + SUITS[card % 4]


def parse_cards(text: str) -> np.ndarray:
    """``"As Kd 2c"`` (or ``"AsKd2c"``) -> int8 [3] ``[51, 45, 0]``."""
    compact = "".join(text.split())
    if len(compact) % 2:
        raise ValueError(f"cards are two characters each, got {text!r}")
    return np.array([card_index(compact[i:i + 2]) for i in range(0, len(compact), 2)], np.int8)


def describe(value: int) -> str:
    """Readable form of one ``evaluate`` value, e.g. ``"two pair: K Q, kicker 9"``."""
    value = int(value)
    cat = value >> CATEGORY_SHIFT
    major = [RANKS[r] for r in range(12, -1, -1) if value >> (MAJOR_SHIFT + r) & 1]
    minor = [RANKS[r] for r in range(12, -1, -1) if value >> r & 1]
    name = CATEGORY_NAMES[cat]
    if cat in (STRAIGHT, STRAIGHT_FLUSH):
        return f"{name}: {minor[0]} high"
    if cat in (HIGH_CARD, FLUSH):
        return f"{name}: {' '.join(minor)}"
    if cat == FULL_HOUSE:
        return f"{name}: {major[0]} full of {minor[0]}"
    return f"{name}: {' '.join(major)}, kicker{'s' if len(minor) > 1 else ''} {' '.join(minor)}"
