"""Nothing hidden reaches the page: whole games played through the API, every response's
cards compared with what the person's seat may see in the true state the server holds.

Hold'em: 200 hands against the random bot (its own choices random too, so hands reach
showdowns and folds); every card in a view is the seat's hole, the board dealt so far, or the
other hole cards at a showdown (and those are shown then); each hand of the log is checked
against what that hand showed. Hearts: 20 hands against random players, every seat and both
variants; every card shown is in the seat's hand, played, or passed by or to it, and the hand
shown is exactly the seat's."""

import random

import numpy as np
import pytest

from jaxgames.hearts.cards import NUM_PLAYERS, PASS_SIZE
from jaxgames.holdem.cards import BOARD_VISIBLE
from jaxgames.holdem.game import SHOWDOWN
from web_helpers import cards_in, client, longest_list, server_game

HOLDEM_HANDS = 200
HEARTS_HANDS = 20


@pytest.fixture(scope="module")
def c():
    return client()


def holdem_allowed(state) -> tuple[set, set]:
    """(what seat 0 may see now, the other seat's hole cards)."""
    deck = np.asarray(state.deck).astype(int)
    street = int(state.street)
    seen = set(deck[0:2]) | set(deck[4:4 + BOARD_VISIBLE[street]])
    other = set(deck[2:4])
    if bool(state.terminated) and street == SHOWDOWN:
        seen |= other
    return seen, other


@pytest.mark.slow
def test_holdem_views_hold_only_what_seat_0_may_see(c):
    rng = random.Random(0)
    r = c.post("/api/holdem/new", json={"opponent": "random", "seed": 123})
    gid, view = r.json()["id"], r.json()["view"]
    game = server_game(c, "holdem", gid)
    shown_at_end = {}        # hand number -> the cards that hand showed at its end
    showdowns = folds = 0
    while True:
        seen, other = holdem_allowed(game.state)
        assert cards_in(view["hand"]) <= seen
        assert {x["id"] for x in view["hand"]["hole"]} == set(np.asarray(game.state.deck)[:2].astype(int))
        assert longest_list(view) < 52
        hand = view["hand"]
        if hand["over"]:
            if hand["showdown"]:
                showdowns += 1
                assert {x["id"] for x in hand["opponent_hole"]} == other   # shown, and right
            else:
                folds += 1
                assert not cards_in(hand) & other
            shown_at_end.setdefault(view["score"]["hands"], seen)
        for entry in view["log"]:
            assert cards_in(entry) <= shown_at_end[entry["hand"]]
        if hand["over"]:
            if view["score"]["hands"] == HOLDEM_HANDS:
                break
            body = {"deal": True}
        else:
            body = {"action": rng.choice(hand["legal"])["action"]}
        r = c.post(f"/api/holdem/{gid}/move", json=body)
        assert r.status_code == 200, r.text
        view = r.json()
    assert view["score"]["hands"] == HOLDEM_HANDS
    assert showdowns > 10 and folds > 10        # both ends were checked
    assert sum(e["won"] for e in view["log"]) == pytest.approx(sum(game.results[-len(view["log"]):]))


def hearts_allowed(state, seat: int) -> set:
    owner = np.asarray(state.owner)
    passed_by = np.asarray(state.passed_by)
    allowed = set(np.flatnonzero(owner == seat)) | set(np.flatnonzero(np.asarray(state.played_by) >= 0))
    allowed |= set(np.flatnonzero(passed_by == seat))
    if int(state.num_passed) == NUM_PLAYERS * PASS_SIZE:     # the exchange is made: what came to the seat
        allowed |= set(np.flatnonzero(passed_by == (seat - int(state.pass_dir)) % NUM_PLAYERS))
    return {int(x) for x in allowed}


@pytest.mark.slow
def test_hearts_views_hold_only_what_the_seat_may_see(c):
    rng = random.Random(1)
    hidden_seen = 0
    for deal in range(HEARTS_HANDS):
        seat = deal % NUM_PLAYERS
        variant = "standard" if deal % 5 else "paper"
        r = c.post("/api/hearts/new", json={"opponent": "random", "seed": 1000 + deal, "seat": seat,
                                            "variant": variant})
        gid, view = r.json()["id"], r.json()["view"]
        game = server_game(c, "hearts", gid)
        moves = 0
        while True:
            state = game.state
            allowed = hearts_allowed(state, seat)
            assert cards_in(view) <= allowed
            assert {x["id"] for x in view["hand"]} == set(np.flatnonzero(np.asarray(state.owner) == seat))
            assert longest_list(view) < 52
            hidden_seen += 52 - len(allowed)
            if view["over"]:
                break
            r = c.post(f"/api/hearts/{gid}/move", json={"card": rng.choice(view["legal"])["id"]})
            assert r.status_code == 200, r.text
            view = r.json()
            moves += 1
        assert moves == 13 + (PASS_SIZE if view["pass_direction"] != "none" else 0)   # a whole hand, seat's moves
        assert sum(view["points"]) == 26          # every point was taken (before the moon)
    assert hidden_seen > 0
