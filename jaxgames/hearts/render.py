"""Text pictures of a Hearts state (host-side, for terminals, logs and the play CLI).

``render_text(state)`` shows everything (all four hands); ``render_text(state, viewer=p)``
shows only what seat ``p`` may see: its own hand, the others' card counts, the play so far.
Cards are written ``Q♠`` (``QS`` with ``ascii=True``), the ten as ``T``.
"""

from __future__ import annotations

import numpy as np

from jaxgames.hearts.cards import (
    NO_PASS,
    NUM_CARDS,
    NUM_PLAYERS,
    PASS_SIZE,
    PASS_WORDS,
    card_name,
    cards_text,
)


def _host(state) -> dict:
    names = ("owner", "passed_by", "played_by", "play_order", "taken_by", "trick", "leader",
             "num_played", "num_passed", "pass_dir", "hearts_broken", "points", "scores",
             "hand_number", "current_player", "terminated", "truncated", "legal_action_mask")
    fields = {n: np.asarray(getattr(state, n)) for n in names}
    if fields["owner"].shape != (NUM_CARDS,):
        raise ValueError("render_text takes one unbatched Hearts state")
    return fields


def tricks(state) -> list[tuple[int, list[int], int]]:
    """The tricks played so far this hand: ``(leader, cards in play order, taker or -1)``."""
    f = _host(state)
    order = f["play_order"]
    out = []
    for t in range((int(f["num_played"]) + NUM_PLAYERS - 1) // NUM_PLAYERS):
        cards = [int(np.flatnonzero(order == i)[0]) for i in range(4 * t, min(4 * t + 4, int(f["num_played"])))]
        leader = int(f["played_by"][cards[0]])
        out.append((leader, cards, int(f["taken_by"][cards[0]])))
    return out


def render_text(state, viewer: int | None = None, *, ascii: bool = False) -> str:
    """The state as a few lines of text: the hand's phase, each seat's cards (only the
    ``viewer``'s when given) and points, the tricks played, who is to move."""
    f = _host(state)
    name = lambda c: card_name(c, ascii=ascii)  # noqa: E731
    pass_dir = int(f["pass_dir"])
    passing = pass_dir != NO_PASS and int(f["num_passed"]) < NUM_PLAYERS * PASS_SIZE
    over = bool(f["terminated"] | f["truncated"])
    head = f"hand {int(f['hand_number']) + 1}, pass {PASS_WORDS[pass_dir]}"
    if passing:
        head += f", passing ({int(f['num_passed'])}/12 cards passed)"
    else:
        head += f", trick {min(int(f['num_played']) // NUM_PLAYERS + 1, 13)}"
        head += ", hearts broken" if bool(f["hearts_broken"]) else ", hearts not broken"
    lines = [head + (" - game over" if over else "")]
    for seat in range(NUM_PLAYERS):
        held = np.flatnonzero(f["owner"] == seat)
        mark = ">" if seat == int(f["current_player"]) and not over else " "
        if viewer is None or viewer == seat:
            cards = cards_text(held, ascii=ascii)
            passed = np.flatnonzero(f["passed_by"] == seat)
            if len(passed):
                recv = (seat + pass_dir) % NUM_PLAYERS
                cards += f"  | passed to {recv}: " + " ".join(name(c) for c in passed)
        else:
            cards = f"({len(held)} cards)"
        lines.append(f"{mark} seat {seat}: {cards}  [points {int(f['points'][seat])}, "
                     f"score {int(f['scores'][seat])}]")
    for i, (leader, cards, taker) in enumerate(tricks(state)):
        seats = [(leader + k) % NUM_PLAYERS for k in range(len(cards))]
        shown = " ".join(f"{s}:{name(c)}" for s, c in zip(seats, cards))
        lines.append(f"  trick {i + 1}: {shown}" + (f"  -> seat {taker}" if taker >= 0 else ""))
    if not over and (viewer is None or viewer == int(f["current_player"])):
        legal = np.flatnonzero(f["legal_action_mask"])
        verb = "pass" if passing else "play"
        lines.append(f"seat {int(f['current_player'])} to {verb}: " + " ".join(name(c) for c in legal))
    return "\n".join(lines)

