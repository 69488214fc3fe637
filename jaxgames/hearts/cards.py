"""Hearts cards: the encoding every part of the project indexes by, names, static tables.

Card ``c`` in ``0..51`` is ``4 * rank + suit`` (OpenSpiel's encoding):

* ``rank = c // 4``: 0 = two, 1 = three, ..., 8 = ten, 9 = jack, 10 = queen, 11 = king, 12 = ace;
* ``suit = c % 4``: 0 = clubs ♣, 1 = diamonds ♦, 2 = hearts ♥, 3 = spades ♠.

So the 2♣ is card 0, the Q♠ card 43, the A♠ card 51, and the four cards of one rank are
consecutive. Tables are NumPy arrays built once at import (jit reads them as constants).
"""

from __future__ import annotations

import numpy as np

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13
NUM_PLAYERS = 4
HAND_SIZE = 13
NUM_TRICKS = 13
PASS_SIZE = 3  # cards each player passes

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_LETTERS = "23456789TJQKA"
QUEEN = 10


def card(rank: int, suit: int) -> int:
    """The card of ``rank`` (0 = two ... 12 = ace) and ``suit`` (0 ♣, 1 ♦, 2 ♥, 3 ♠)."""
    return 4 * rank + suit


TWO_OF_CLUBS = card(0, CLUBS)             # 0: leads the first trick of the standard game
QUEEN_OF_SPADES = card(QUEEN, SPADES)     # 43: 13 points

#: int8 [52] suit of each card
SUIT = (np.arange(NUM_CARDS) % NUM_SUITS).astype(np.int8)
#: int8 [52] rank of each card (0 = two ... 12 = ace)
RANK = (np.arange(NUM_CARDS) // NUM_SUITS).astype(np.int8)
#: int8 [52] points of each card: 1 per heart, 13 for the Q♠
POINTS = np.where(SUIT == HEARTS, 1, 0).astype(np.int8)
POINTS[QUEEN_OF_SPADES] = 13
#: bool [52] the cards that carry points (hearts and the Q♠)
IS_POINT = POINTS > 0
TOTAL_POINTS = int(POINTS.sum())          # 26
assert TOTAL_POINTS == 26

# Pass directions, stored as the offset from passer to receiver (OpenSpiel's PassDir values):
# seats play in the order 0 -> 1 -> 2 -> 3, and "left" is the next seat to play.
NO_PASS, PASS_LEFT, PASS_ACROSS, PASS_RIGHT = 0, 1, 2, 3
PASS_NAMES = {"none": NO_PASS, "left": PASS_LEFT, "across": PASS_ACROSS, "right": PASS_RIGHT}
PASS_WORDS = {v: k for k, v in PASS_NAMES.items()}
#: int8 [4] the direction of the next hand: left -> right -> across -> none -> left
NEXT_PASS = np.array([PASS_LEFT, PASS_RIGHT, NO_PASS, PASS_ACROSS], np.int8)
assert [PASS_WORDS[int(NEXT_PASS[d])] for d in (1, 3, 2, 0)] == ["right", "across", "none", "left"]


def card_name(c: int, *, ascii: bool = False) -> str:
    """``"Q♠"`` (or ``"QS"`` with ``ascii=True``) for card ``c``; the ten is ``T``."""
    c = int(c)
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"a card is an integer from 0 to 51, got {c}")
    suits = SUIT_LETTERS if ascii else SUIT_SYMBOLS
    return RANK_LETTERS[c // 4] + suits[c % 4]


_SUIT_OF = {**{ch: i for i, ch in enumerate(SUIT_LETTERS)}, **{ch: i for i, ch in enumerate(SUIT_SYMBOLS)},
            "♧": CLUBS, "♢": DIAMONDS, "♡": HEARTS, "♤": SPADES}


def parse_card(name: str) -> int:
    """The card named ``name``: ``"QS"``, ``"Q♠"``, ``"qs"``, ``"10H"``, ``"TH"`` (ValueError otherwise)."""
    text = str(name).strip().upper()
    if len(text) < 2 or text[-1] not in _SUIT_OF:
        raise ValueError(f"not a card: {name!r} (write rank then suit, e.g. QS, Q♠, 10H, 2C)")
    rank_text = "T" if text[:-1] == "10" else text[:-1]
    if len(rank_text) != 1 or rank_text not in RANK_LETTERS:
        raise ValueError(f"not a card: {name!r} (ranks: 2-9, T or 10, J, Q, K, A)")
    return card(RANK_LETTERS.index(rank_text), _SUIT_OF[text[-1]])


def cards_text(cards, *, ascii: bool = False) -> str:
    """Cards (indices, or a bool [52] mask) by suit, ♠ ♥ ♦ ♣, high to low: ``"♠ AQ7 ♥ - ..."``."""
    arr = np.asarray(cards)
    idx = np.flatnonzero(arr) if arr.dtype == np.bool_ and arr.shape == (NUM_CARDS,) else arr.reshape(-1)
    held = set(int(c) for c in idx)
    suits = SUIT_LETTERS if ascii else SUIT_SYMBOLS
    parts = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        ranks = "".join(RANK_LETTERS[r] for r in range(NUM_RANKS - 1, -1, -1) if card(r, s) in held)
        parts.append(f"{suits[s]} {ranks or '-'}")
    return " ".join(parts)
