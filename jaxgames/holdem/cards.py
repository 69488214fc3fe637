"""Cards and where the deal puts them.

A card is an integer ``0..51``: ``card = 4 * rank + suit``, rank ``0`` = deuce … ``12`` = ace,
suit ``0..3`` = ♣ ♦ ♥ ♠ (``c d h s``). A hand's whole deal is one shuffled deck (int8 [52]);
every card comes from a fixed position of it, so ``step`` never draws chance:

    positions 0, 1   seat 0's hole cards
    positions 2, 3   seat 1's hole cards
    positions 4-6    the flop, 7 the turn, 8 the river
    positions 9-51   never dealt: the other 43 cards, in increasing order

Only the nine dealt positions are random (:func:`deal_deck`): drawing the 43 cards nobody
ever sees too would add about 1 ms per 1,024 hands, half of a random hand's whole cost
(measured in ``deal_deck``).

Names are the usual two characters, rank then suit: ``As``, ``Td``, ``2c``.
"""

from __future__ import annotations

from typing import Iterable

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
RANKS = "23456789TJQKA"
SUITS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"

#: deck positions of seat s's two hole cards: HOLE_POSITIONS[s]
HOLE_POSITIONS = np.array([[0, 1], [2, 3]], np.int32)
#: deck positions of the five board cards (flop, flop, flop, turn, river)
BOARD_POSITIONS = np.arange(4, 9, dtype=np.int32)
#: board cards visible on each street: preflop, flop, turn, river, showdown
BOARD_VISIBLE = np.array([0, 3, 4, 5, 5], np.int32)
#: how many deck positions are ever dealt
NUM_DEALT = 9


def rank_of(card):
    return card // 4


def suit_of(card):
    return card % 4


def card_name(card: int, *, symbols: bool = False) -> str:
    """``"As"`` (or ``"A♠"`` with ``symbols``) for a card 0..51; ``"??"`` for -1 (unseen)."""
    card = int(card)
    if card == -1:
        return "??"
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"a card is an integer 0..51 (or -1 for unseen), got {card}")
    suits = SUIT_SYMBOLS if symbols else SUITS
    return RANKS[card // 4] + suits[card % 4]


def cards_text(cards: Iterable[int], *, symbols: bool = False, sep: str = " ") -> str:
    """``"As Kd 2c"``: the names of several cards (unseen ones as ``??``)."""
    return sep.join(card_name(c, symbols=symbols) for c in np.asarray(cards).reshape(-1))


def parse_card(name: str) -> int:
    """The card named ``"As"``, ``"td"``, ``"A♠"`` … (rank then suit, any case)."""
    text = name.strip()
    if len(text) != 2:
        raise ValueError(f"a card is a rank and a suit such as 'As' or 'Td', got {name!r}")
    rank = RANKS.find(text[0].upper())
    suit = SUITS.find(text[1].lower())
    if suit < 0:
        suit = SUIT_SYMBOLS.find(text[1])
    if rank < 0 or suit < 0:
        raise ValueError(f"unknown card {name!r}: ranks {RANKS}, suits {SUITS} or {SUIT_SYMBOLS}")
    return 4 * rank + suit


def parse_cards(text: str) -> list[int]:
    """``"AsKd 2c"`` -> ``[51, 46, 1]``: cards written together or separated by spaces/commas."""
    compact = "".join(text.replace(",", " ").split())
    if len(compact) % 2:
        raise ValueError(f"cards are two characters each, got {text!r}")
    return [parse_card(compact[i:i + 2]) for i in range(0, len(compact), 2)]


def deck_from(hole0: Iterable[int], hole1: Iterable[int], board: Iterable[int] = ()) -> np.ndarray:
    """int8 [52]: a deck that deals ``hole0`` to seat 0, ``hole1`` to seat 1 and ``board``
    (up to 5 cards) to the board; the other cards follow in increasing order. Host side."""
    hole0, hole1, board = (list(map(int, h)) for h in (hole0, hole1, board))
    if len(hole0) != 2 or len(hole1) != 2 or len(board) > 5:
        raise ValueError("two hole cards per seat and at most five board cards")
    fixed = hole0 + hole1 + board
    if len(set(fixed)) != len(fixed) or not all(0 <= c < NUM_CARDS for c in fixed):
        raise ValueError(f"cards must be distinct integers 0..51, got {fixed}")
    rest = [c for c in range(NUM_CARDS) if c not in fixed]
    # the board's missing cards come first from the rest, so positions stay fixed
    return np.asarray(fixed + rest, np.int8)


# -- the deal (pure, jittable) ---------------------------------------------------------------


def select_bit(x: Array, k: Array) -> Array:
    """uint32: the position of the k-th lowest set bit of ``x`` (k < popcount(x)), by halving."""
    pos = jnp.zeros_like(x)
    for w in (16, 8, 4, 2, 1):
        below = jax.lax.population_count(x & jnp.uint32((1 << w) - 1))
        up = k >= below
        k = k - jnp.where(up, below, jnp.uint32(0))
        x = jnp.where(up, x >> w, x)
        pos = pos + jnp.where(up, jnp.uint32(w), jnp.uint32(0))
    return pos


def card_set(cards: Array) -> tuple[Array, Array]:
    """The set of ``cards`` int [..., n] (entries < 0 ignored) as two uint32 words [...]:
    bit c of the first word for cards 0..31, bit c - 32 of the second for 32..51."""
    cards = jnp.asarray(cards).astype(jnp.int32)
    valid = cards >= 0
    c = jnp.clip(cards, 0, NUM_CARDS - 1).astype(jnp.uint32)
    lo_bits = jnp.where(valid & (cards < 32), jnp.uint32(1) << (c & 31), jnp.uint32(0))
    hi_bits = jnp.where(cards >= 32, jnp.uint32(1) << ((c - 32) & 31), jnp.uint32(0))
    lo = jax.lax.reduce(lo_bits, jnp.uint32(0), jax.lax.bitwise_or, (cards.ndim - 1,))
    hi = jax.lax.reduce(hi_bits, jnp.uint32(0), jax.lax.bitwise_or, (cards.ndim - 1,))
    return lo, hi


def draw_cards(words: Array, known: tuple[Array, Array], *, unroll: bool = False) -> Array:
    """int32 [..., n]: n distinct cards drawn uniformly from those not in ``known`` (a
    :func:`card_set`, broadcast against ``words[..., 0]``), one random word each (uint32
    [..., n]; draw i takes the ``word % count``-th card left: a bias below 52 / 2**32).

    The free cards are a 52-bit set in two words, so a draw is a few elementwise bit
    operations. A ``lax.scan`` keeps the compiled program small (unrolled, the deal's nine
    draws took 2 s to compile); ``unroll=True`` unrolls it where the draws sit in a hot loop
    (Monte Carlo equity)."""
    words = jnp.asarray(words, jnp.uint32)
    batch = words.shape[:-1]
    free = (jnp.broadcast_to(~known[0], batch),
            jnp.broadcast_to(~known[1] & jnp.uint32((1 << (NUM_CARDS - 32)) - 1), batch))

    def draw(free, word):
        lo, hi = free
        count_lo = jax.lax.population_count(lo)
        count = count_lo + jax.lax.population_count(hi)
        k = word % jnp.maximum(count, jnp.uint32(1))
        in_lo = k < count_lo
        card = jnp.where(in_lo, select_bit(lo, k), jnp.uint32(32) + select_bit(hi, k - count_lo))
        bit = jnp.uint32(1) << (card & jnp.uint32(31))
        return (jnp.where(in_lo, lo & ~bit, lo), jnp.where(in_lo, hi, hi & ~bit)), card.astype(jnp.int32)

    drawn = jax.lax.scan(draw, free, jnp.moveaxis(words, -1, 0), unroll=unroll)[1]
    return jnp.moveaxis(drawn, 0, -1)


def draw_without(words: Array, cards: Array) -> Array:
    """int32 [n]: n distinct cards drawn uniformly from those not in ``cards`` (int [m], -1
    entries ignored), one random word each (uint32 [n]): :func:`draw_cards`."""
    return draw_cards(words, card_set(cards))


def deal_deck(dealt: Array, words: Array) -> Array:
    """int8 [52]: a deck whose dealt positions 0..8 are ``dealt`` (int [9]) where it is >= 0,
    and cards drawn uniformly from the rest where it is -1 (``words`` uint32 [9], one per
    position); positions 9..51 hold the 43 other cards in increasing order.

    ``init`` deals with all nine unknown (a uniformly random deal); ``sample_world`` keeps
    what the player has seen. Measured on the 2-core CPU, 1,024 decks: 0.3 ms, against
    1.4 ms for all 52 positions drawn the same way, 1.7 ms for a sort of packed random keys
    and 4.3 ms for ``jax.random.permutation`` (a random hand's play costs about 1-2 ms)."""
    dealt = jnp.asarray(dealt, jnp.int32)
    need = dealt < 0
    drawn = draw_without(words, dealt)
    first = jnp.where(need, drawn[jnp.clip(jnp.cumsum(need) - 1, 0, NUM_DEALT - 1)], dealt)
    used = jnp.zeros(NUM_CARDS, jnp.bool_).at[first].set(True)
    slot = jnp.where(used, NUM_CARDS, jnp.cumsum(~used) - 1)   # each other card's place in the tail
    tail = jnp.zeros(NUM_CARDS - NUM_DEALT, jnp.int32).at[slot].set(jnp.arange(NUM_CARDS), mode="drop")
    return jnp.concatenate([first, tail]).astype(jnp.int8)
