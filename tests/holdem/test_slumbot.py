"""The Slumbot client: its action strings, and 100 hands against a stand-in of Slumbot's JSON
API on 127.0.0.1 (no network reaches slumbot.com here)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import eval7
import numpy as np
import pytest

from jaxgames.holdem import acpc_client, slumbot
from jaxgames.holdem.acpc import Action, Betting
from jaxgames.holdem.cards import card_name
from jaxgames.holdem.slumbot import SlumbotError, incr, parse_betting


@pytest.fixture(scope="module")
def seat():
    return acpc_client.load_seat(seed=5, table=slumbot.SLUMBOT_TABLE)


# -- action strings ----------------------------------------------------------------------------


@pytest.mark.parametrize("text,rounds,base,spent,to_act", [
    ("", [""], 0, (100, 50), 1),
    ("b300", ["r300"], 0, (100, 300), 0),
    ("b200c", ["r200c", ""], 200, (200, 200), 0),                       # the closing '/' optional
    ("b200c/", ["r200c", ""], 200, (200, 200), 0),
    ("b200c/kb250c/kk/b1000f", ["r200c", "cr450c", "cc", "r1450f"], 450, (1450, 450), -1),
    ("ck/b300b900c/", ["cc", "r400r1000c", ""], 1000, (1000, 1000), 0),
    ("b20000c", ["r20000c", "", "", ""], 20000, (20000, 20000), -1),   # an all-in called: no '/' needed
    ("b20000c///", ["r20000c", "", "", ""], 20000, (20000, 20000), -1),
])
def test_parse_betting(text, rounds, base, spent, to_act):
    street = parse_betting(text)
    assert ["".join(a.text() for a in r) for r in street.rounds] == rounds
    assert street.base == base and street.betting.spent == spent and street.betting.to_act == to_act


@pytest.mark.parametrize("text,why", [
    ("kk", "check facing a bet"),
    ("ck/c", "call with nothing to call"),
    ("cf", "fold with nothing to call"),
    ("b200c/b50", "raise-to must be 300..20000"),
    ("b20001", "raise-to must be 200..20000"),
    ("b200x", "k, c, f, b<chips>"),
    ("b", "k, c, f, b<chips>"),
    ("b200/c", "'/' before the street ended"),
    ("b200c//", "'/' before the street ended"),
    ("b200cb300", "missing '/'"),
    ("b300fk", "after the hand is over"),
])
def test_bad_betting_is_refused(text, why):
    with pytest.raises(SlumbotError, match=re.escape(why)):
        parse_betting(text)


def test_incr():
    assert incr(parse_betting("b300"), Action("r", 900)) == "b900"        # preflop: the blinds count
    assert incr(parse_betting("b200c/"), Action("r", 400)) == "b200"      # 200 on the flop
    assert incr(parse_betting("b200c/"), Action("c")) == "k"
    assert incr(parse_betting("b200c/b100"), Action("c")) == "c"
    assert incr(parse_betting("b300"), Action("f")) == "f"


def test_error_answers(seat):
    client = slumbot.Client(seat, post=lambda path, body: {"error_msg": "Bad token"})
    with pytest.raises(SlumbotError, match="Bad token"):
        client.play_hand(0)
    client = slumbot.Client(seat, post=lambda path, body: {"action": "b200z", "client_pos": 0,
                                                           "hole_cards": ["Ac", "9d"], "board": []})
    with pytest.raises(SlumbotError, match="bad Slumbot action"):
        client.play_hand(0)


# -- a stand-in of the API ---------------------------------------------------------------------


class Hand:
    """One hand at the stand-in: the deal, the tracker (wire chips) and Slumbot's action string."""

    def __init__(self, rng, number):
        deck = rng.permutation(52)
        self.client_pos = number % 2            # position 1 is the small blind, the button
        self.client, self.bot, self.board = deck[:2], deck[2:4], deck[4:9]
        self.bets, self.base, self.text = Betting.start(), 0, ""
        self.slashes_after_allin = number % 4 < 2   # Slumbot's string has them, or not

    def apply(self, token: str, action: Action):
        before = self.bets.round
        self.bets = self.bets.apply(action)
        self.text += token
        if self.bets.round != before:
            self.base = self.bets.spent[0]
            if not self.bets.over:
                self.text += "/"
            elif self.slashes_after_allin and max(self.bets.spent) == 20_000:
                self.text += "/" * (self.bets.round - before)

    def answer(self, token: str) -> dict:
        shown = [0, 3, 4, 5][self.bets.round]
        out = {"old_action": "", "action": self.text, "client_pos": self.client_pos, "token": token,
               "hole_cards": [card_name(c) for c in self.client], "board": [card_name(c) for c in self.board[:shown]]}
        if self.bets.over:
            out["winnings"] = self.winnings()
            if self.bets.showdown:
                out["bot_hole_cards"] = [card_name(c) for c in self.bot]
        return out

    def winnings(self) -> int:
        b = self.bets
        if b.folded >= 0:
            return b.spent[b.folded] * (-1 if b.folded == self.client_pos else 1)
        mine, theirs = (eval7.evaluate([eval7.Card(card_name(c)) for c in [*h, *self.board]])
                        for h in (self.client, self.bot))
        return int(np.sign(mine - theirs)) * b.spent[0]


class StandInSlumbot:
    """``/api/new_hand`` and ``/api/act`` as Slumbot documents them; the bot bets off our tree
    (0.6, 1.3 and 2.7 pots), calls, folds and checks at random; every ``incr`` is checked."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.hands, self.incrs, self.errors, self.off_tree = [], [], [], 0
        self.token = "3f9c-stand-in"
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = stand_in.handle(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def handle(self, path, body):
        try:
            if path == "/api/new_hand":
                if self.hands and body.get("token") != self.token:
                    raise ValueError(f"new_hand without the token: {body}")
                self.hands.append(Hand(self.rng, len(self.hands)))
            elif path == "/api/act":
                hand = self.hands[-1]
                if body.get("token") != self.token or hand.bets.over or hand.bets.to_act != hand.client_pos:
                    raise ValueError(f"act out of turn or without the token: {body}")
                self.incrs.append(body["incr"])
                hand.apply(body["incr"], self.parse_incr(hand, body["incr"]))
            else:
                raise ValueError(f"no such endpoint {path}")
            hand = self.hands[-1]
            while not hand.bets.over and hand.bets.to_act != hand.client_pos:
                hand.apply(*self.bot_action(hand))
            return hand.answer(self.token)
        except Exception as err:   # noqa: BLE001 - Slumbot answers an error message
            self.errors.append(repr(err))
            return {"error_msg": str(err)}

    @staticmethod
    def parse_incr(hand, text) -> Action:
        b = hand.bets
        m = re.fullmatch(r"k|c|f|b([1-9][0-9]*)", text)
        if not m or (text == "k" and b.to_call) or (text in "cf" and not b.to_call):
            raise ValueError(f"illegal incr {text!r} at {hand.text!r}")
        return Action("r", hand.base + int(m.group(1))) if m.group(1) else Action("c" if text in "kc" else "f")

    def bot_action(self, hand):
        b, u = hand.bets, self.rng.random()
        bounds = b.raise_bounds()
        if b.to_call and u < 0.15:
            return "f", Action("f")
        if bounds is None or u < (0.7 if b.to_call else 0.55):
            return ("c" if b.to_call else "k"), Action("c")
        frac = self.rng.choice([0.6, 1.3, 2.7])
        raise_to = min(max(max(b.spent) + int(frac * (sum(b.spent) + b.to_call)), bounds[0]), bounds[1])
        self.off_tree += 1
        return f"b{raise_to - hand.base}", Action("r", raise_to)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_hundred_hands_against_the_stand_in(seat):
    stand_in = StandInSlumbot(seed=1)
    try:
        client = slumbot.Client(seat, host=stand_in.url, timeout=30)
        result = client.play(100)
    finally:
        stand_in.close()
    assert stand_in.errors == []
    assert result.hands == 100 and len(stand_in.hands) == 100
    assert list(result.results) == [h.winnings() for h in stand_in.hands]
    assert stand_in.off_tree > 20 and len(stand_in.incrs) > 100
    assert any(i.startswith("b") for i in stand_in.incrs) and {"c", "k"} & set(stand_in.incrs)
    assert {h.client_pos for h in stand_in.hands} == {0, 1}
    assert np.isfinite(result.ci95) and result.ci95 > 0
    assert result.mbb_per_hand == pytest.approx(1000 * np.mean(result.results) / 100)
    line = result.summary(stand_in.url)
    assert line.startswith(f"100 hands against {stand_in.url}: ") and "mbb/hand (95% interval)" in line


def test_cli_against_the_stand_in(seat, capsys):
    stand_in = StandInSlumbot(seed=2)
    try:
        assert slumbot.main(["--hands", "4", "--host", stand_in.url, "--seed", "5"]) == 0
    finally:
        stand_in.close()
    assert stand_in.errors == []
    out = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"4 hands against http://127\.0\.0\.1:\d+: [+-][0-9,]+ ± [0-9,]+ mbb/hand "
                        r"\(95% interval\), [+-][0-9,]+ chips", out[-1])


@pytest.mark.parametrize("argv,why", [
    ([], "--hands"),
    (["--hands", "0"], "--hands"),
    (["--hands", "ten"], "must be an integer"),
    (["--hands", "3", "--host", "ftp://slumbot.com"], "--host"),
    (["--hands", "3", "--seed", "x"], "--seed"),
])
def test_bad_flags_exit_2(argv, why, exits_2_with_one_line):
    exits_2_with_one_line(slumbot.main, argv, why)


def test_unreachable_host_is_one_line(seat, capsys):
    stand_in = StandInSlumbot()
    url = stand_in.url
    stand_in.close()                       # nothing listens there any more
    assert slumbot.main(["--hands", "1", "--host", url, "--timeout", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{slumbot.PROG}: error: {url}")
