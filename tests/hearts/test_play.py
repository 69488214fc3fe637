"""Terminal Hearts (jaxgames.hearts.play), driven by typed lines.

The computer players are the rule-based bots (one compile per env for the module, cached by
jaxgames.hearts.play). Nothing depends on the deal a seed gives: the person's cards are chosen
from the hand as it stands, and every check reads the session's own state.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from jaxgames.hearts import play as hp
from jaxgames.hearts.cards import NUM_PLAYERS, SUIT, card_name

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# Two games, two compiles for the module: standard Hearts, one hand (the default), and the
# paper variant to a target score (PAPER_GAME), which the other tests share.
PAPER_GAME = {"variant": "paper", "target_score": 30}


def session(**settings):
    out = io.StringIO()
    return hp.Session(hp.Settings(**{"opponent": "rule", "seed": 0, **settings}), out, echo=True), out


def first_legal(s: hp.Session):
    """Endless input: the lowest card the person may play (or pass) now."""
    while True:
        yield card_name(s.legal()[0], ascii=True)


def test_full_hand_with_passing():
    s, out = session(seat=1)
    result = s.run(first_legal(s))
    text = out.getvalue()
    assert result.ended_by == "end" and result.over and result.exit_code == 0
    assert len(re.findall(r"(You take|Seat \d takes) the trick", text)) == 13
    assert len(re.findall(r"You pass the ", text)) == 3 and text.count("passes 3 cards") == 3
    # the cards announced as received (seat 1 gets seat 0's: the first hand passes left) are
    # among the cards the person plays afterwards
    got = re.search(r"you received (\S+) (\S+) (\S+) from seat 0", text)
    assert got
    assert set(got.groups()) <= set(re.findall(r"You play the (\S+)\.", text))
    # the points announced are the game's, seat by seat, and they add up to 26 (78 with the moon)
    assert sum(result.scores) in (26, 78)
    announced = re.findall(r"(?:you|seat \d) (\d+)", text.split("Game over. Points: ")[1].splitlines()[0])
    assert [int(x) for x in announced] == list(result.scores)
    # 12 passes and 52 cards, every one of the person's legal when played (the env would end
    # the game on an illegal one)
    assert len(result.actions) == 64


def test_messages_for_bad_input():
    s, out = session(**PAPER_GAME, seat=0)
    seen = {}

    def typed():
        yield "hello"
        yield "QS AH"                                  # two cards while playing
        hand = s.hand()
        not_mine = next(c for c in range(52) if c not in hand)
        seen["not_mine"] = card_name(not_mine, ascii=True)
        yield seen["not_mine"]
        yield "show"
        yield "tricks"
        yield "help"
        yield "   "
        yield card_name(s.legal()[0], ascii=True)      # lead: the paper variant allows any card
        # keep playing until the person must follow a suit while holding another one
        while True:
            trick = np.asarray(s.state.trick)
            if int(s.state.num_played) % 4:
                led = int(trick[int(s.state.leader)]) % 4
                other = [c for c in s.hand() if SUIT[c] != led]
                if other and len(s.legal()) < len(s.hand()):
                    seen["off_suit"] = card_name(other[0], ascii=True)
                    yield seen["off_suit"]
                    break
            yield card_name(s.legal()[0], ascii=True)
        yield "quit"

    result = s.run(typed())
    text = out.getvalue()
    assert "not a card: 'hello'" in text
    assert "One card at a time" in text
    assert f"You do not hold the {card_name(hp.parse_card(seen['not_mine']))}." in text
    assert text.count("Your hand:") >= 2 and "No card played yet this hand." in text
    assert "Commands:" in text
    assert "off_suit" in seen and "You must follow " in text
    assert result.ended_by == "quit" and not result.over and "You quit" in text


def test_passing_several_cards_in_one_line():
    s, out = session(seat=0)
    seen = {}

    def typed():
        hand = [card_name(c, ascii=True) for c in s.hand()]
        yield " ".join(hand[:4])                       # one too many
        yield f"{hand[0]} {hand[0]}"
        seen["passed"] = hand[:3]
        yield ", ".join(hand[:3])
        yield "quit"

    s.run(typed())
    text = out.getvalue()
    assert "You have 3 cards left to pass." in text and "The same card twice." in text
    assert [card_name(a, ascii=True) for a in s.actions[:3]] == seen["passed"]
    assert text.count("You pass the ") == 3


def test_game_to_a_target_score():
    s, out = session(**PAPER_GAME, seat=3)
    result = s.run(first_legal(s))
    text = out.getvalue()
    assert result.over and max(result.scores) >= 30
    hands = text.count("Hand over.")
    assert hands >= 2 and text.count("Scores: ") == hands
    winners = [p for p in range(NUM_PLAYERS) if result.scores[p] == min(result.scores)]
    line = text.split("Game over. Final scores: ")[1].splitlines()
    assert ("You win" in line[1]) == (3 in winners)


def test_end_of_input_stops_the_game():
    s, out = session(**PAPER_GAME, seat=2)
    result = s.run(iter([]))
    assert result.ended_by == "eof" and result.exit_code == 0 and not result.over
    assert "End of input" in out.getvalue() and "Game not finished" in out.getvalue()


def test_cli_full_hand_typed_on_stdin(tmp_path):
    """The command line as a person would use it: every card typed in order, over and over
    (cards not held or not playable are refused and the next line is read), to the end."""
    lines = "".join(f"{r}{su}\n" for r in "23456789TJQKA" for su in "CDHS") * 12
    done = subprocess.run([sys.executable, "-m", "jaxgames.hearts.play", "--opponent", "rule", "--seed", "5",
                           "--seat", "2", "--ascii"], input=lines, capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")},
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "you are seat 2" in out and "Seed 5" in out
    assert "Game over. Points:" in out and len(re.findall(r"takes? the trick", out)) == 13
    assert "♠" not in out.split("ready")[1]          # --ascii
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, message", [
    (["--seed", "4294967296"], "--seed: must be in 0..4294967295"),
    (["--seed", "-1"], "--seed: must be in 0..4294967295"),
    (["--seat", "4"], "--seat: must be 0, 1, 2 or 3"),
    (["--seat", "x"], "--seat: invalid int value"),
    (["--opponent", "gnu"], "--opponent: invalid choice"),
    (["--worlds", "0"], "--worlds: must be at least 1"),
    (["--opponent", "rule", "--worlds", "5"], "--worlds: only with --opponent iie"),
    (["--target-score", "0"], "--target-score: must be from 1 to 1000"),
    (["--variant", "bridge"], "--variant: invalid choice"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(hp.main, argv, message)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="seat must be 0, 1, 2 or 3"):
        hp.Settings(seat=7)
    with pytest.raises(ValueError, match="unknown opponent"):
        hp.Settings(opponent="gnubg")
    with pytest.raises(ValueError, match="worlds must be an integer >= 1"):
        hp.Settings(worlds=0)
