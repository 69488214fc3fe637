"""Playing cards as the pages draw them. Hold'em and Hearts number cards the same way
(``4 * rank + suit``, rank 0 the deuce, suits ♣ ♦ ♥ ♠), so one encoding serves both.

Every card a view sends is one :func:`card` dict, and only there: the hidden-information tests
find every card a response holds by looking for these dicts, wherever they sit."""

from __future__ import annotations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
SYMBOLS = "♣♦♥♠"


def card(c: int) -> dict:
    """``{"id": 51, "rank": "A", "suit": "s", "symbol": "♠"}`` for a card 0..51."""
    c = int(c)
    if not 0 <= c < 52:
        raise ValueError(f"a card is 0..51, got {c}")
    return {"id": c, "rank": RANKS[c // 4], "suit": SUITS[c % 4], "symbol": SYMBOLS[c % 4]}


def cards(cs) -> list[dict]:
    """:func:`card` of each card of ``cs``, -1 (not dealt, not seen) left out."""
    return [card(c) for c in cs if int(c) >= 0]
