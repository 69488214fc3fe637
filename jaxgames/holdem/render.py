"""Text rendering of hold'em states for the terminal (host side, not jittable)."""

from __future__ import annotations

import numpy as np

from jaxgames.holdem import betting
from jaxgames.holdem.cards import cards_text
from jaxgames.holdem.game import STREET_NAMES


def action_text(state, action: int) -> str:
    """What ``action`` would do in ``state`` (the player to act): ``"call 50"``,
    ``"raise ½ pot (to 200)"``, ``"all-in (19,950)"``, ``"check"``, ``"fold"``."""
    me = int(state.current_player)
    bets = np.asarray(state.bets, np.int64)
    to_call = max(int(bets[1 - me] - bets[me]), 0)
    put = int(np.asarray(betting.amounts(
        np.int32(np.asarray(state.committed).sum()), np.int32(to_call), np.int32(np.asarray(state.stacks)[me])))[action])
    name = betting.ACTION_NAMES[action]
    if action in (betting.FOLD, betting.CHECK):
        return name
    if action == betting.CALL:
        return f"call {put:,}"
    if action == betting.ALL_IN:
        return f"all-in (to {int(bets[me]) + put:,})"
    if to_call == 0:  # nothing to call: the raise is a bet
        name = name.replace("raise", "bet")
    return f"{name} (to {int(bets[me]) + put:,})"


def legal_actions_text(state) -> list[tuple[int, str]]:
    """``[(action, action_text), ...]`` for the legal actions of the player to act."""
    if bool(state.terminated | state.truncated):
        return []
    return [(int(a), action_text(state, int(a))) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


def history_text(state) -> str:
    """``"preflop: s0 call 50, s1 check | flop: s1 raise ½ pot 100"`` (chips put in)."""
    rows = np.asarray(state.history)
    put = np.asarray(state.history_chips)
    streets: dict[int, list[str]] = {}
    for (seat, action, street), chips in zip(rows.tolist(), put.tolist()):
        if seat < 0:
            break
        text = betting.ACTION_NAMES[action] + (f" {chips:,}" if chips > 0 else "")
        streets.setdefault(street, []).append(f"s{seat} {text}")
    return " | ".join(f"{STREET_NAMES[s]}: {', '.join(a)}" for s, a in streets.items()) or "(no action yet)"


def render_text(state, player: int | None = None, *, symbols: bool = False) -> str:
    """A few lines: street, pot and who acts; the board; each seat's cards (only ``player``'s
    when given: the others as ``?? ??``), stack, bet this street and chips in; the history;
    at the end, each seat's result."""
    street = int(state.street)
    deck = np.asarray(state.deck)
    visible = [0, 3, 4, 5, 5][street]
    board = [int(c) for c in deck[4:4 + visible]] + [-1] * (5 - visible)
    over = bool(state.terminated | state.truncated)
    pot = int(np.asarray(state.committed).sum())
    head = f"{STREET_NAMES[street]} | pot {pot:,} | "
    if over:
        r = np.asarray(state.rewards)
        head += "hand over: " + ", ".join(f"seat {s} {r[s]:+,.0f}" for s in range(2))
    else:
        head += f"seat {int(state.current_player)} to act"
    lines = [head, f"board: {cards_text(board, symbols=symbols)}"]
    button = int(state.button)
    for s in range(2):
        hole = deck[2 * s:2 * s + 2] if player is None or player == s else [-1, -1]
        role = "button" if s == button else "big blind"
        lines.append(f"seat {s} ({role:>9}): {cards_text(hole, symbols=symbols)}  "
                     f"stack {int(state.stacks[s]):,}  bet {int(state.bets[s]):,}  in {int(state.committed[s]):,}")
    lines.append(history_text(state))
    return "\n".join(lines)
