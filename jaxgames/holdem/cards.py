"""Cards and where the deal puts them.

A card is an integer ``0..51``: ``card = 4 * rank + suit``, rank ``0`` = deuce … ``12`` = ace,
suit ``0..3`` = ♣ ♦ ♥ ♠ (``c d h s``). A hand's whole deal is one shuffled deck (int8 [52]);
every card comes from a fixed position of it, so ``step`` never draws chance:

    positions 0, 1   seat 0's hole cards
    positions 2, 3   seat 1's hole cards
    positions 4-6    the flop, 7 the turn, 8 the river
    positions 9-51   never dealt

Names are the usual two characters, rank then suit: ``As``, ``Td``, ``2c``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

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
