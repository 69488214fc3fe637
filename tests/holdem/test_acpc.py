"""ACPC MATCHSTATE strings, their replay onto the game, the bet translation, and the ACPC client
against a stand-in dealer on 127.0.0.1 (no network reaches a real one here)."""

from __future__ import annotations

import re
import socket
import threading

import eval7
import numpy as np
import pytest

import jaxgames
from jaxgames.holdem import acpc, acpc_client, betting
from jaxgames.holdem.acpc import ACPCError, Action, Betting, MatchState, Translator, Wire, parse_matchstate

# A hand-made transcript: what a dealer sends one client, hand by hand, both positions (1: the
# button); folds, all-ins (preflop, and on the turn), off-tree raises (r333, r1111, r700, r230,
# r600) and on-tree ones (r300, r250 ... ), showdowns with the opponent's cards shown.
TRANSCRIPT = """\
MATCHSTATE:0:0::Td9d|
MATCHSTATE:0:0:r333:Td9d|
MATCHSTATE:0:0:r333c/:Td9d|/Ah7c2s
MATCHSTATE:0:0:r333c/c:Td9d|/Ah7c2s
MATCHSTATE:0:0:r333c/cr1111:Td9d|/Ah7c2s
MATCHSTATE:0:0:r333c/cr1111f:Td9d|/Ah7c2s
MATCHSTATE:1:1::|8s8h
MATCHSTATE:1:1:c:|8s8h
MATCHSTATE:1:1:cr250:|8s8h
MATCHSTATE:1:1:cr250c/:|8s8h/Kc8d3h
MATCHSTATE:1:1:cr250c/c:|8s8h/Kc8d3h
MATCHSTATE:1:1:cr250c/cc/:|8s8h/Kc8d3h/2d
MATCHSTATE:1:1:cr250c/cc/r700:|8s8h/Kc8d3h/2d
MATCHSTATE:1:1:cr250c/cc/r700r20000:|8s8h/Kc8d3h/2d
MATCHSTATE:1:1:cr250c/cc/r700r20000c/:AcKd|8s8h/Kc8d3h/2d/9s
MATCHSTATE:0:2::5c5d|
MATCHSTATE:0:2:r20000:5c5d|
MATCHSTATE:0:2:r20000c///:5c5d|AhKh/Qs7d2c/Jh/3s
MATCHSTATE:1:3::|Ah2h
MATCHSTATE:1:3:r300:|Ah2h
MATCHSTATE:1:3:r300f:|Ah2h
MATCHSTATE:0:4::7c6c|
MATCHSTATE:0:4:c:7c6c|
MATCHSTATE:0:4:cc/:7c6c|/8c9c2d
MATCHSTATE:0:4:cc/r230:7c6c|/8c9c2d
MATCHSTATE:0:4:cc/r230r600:7c6c|/8c9c2d
MATCHSTATE:0:4:cc/r230r600c/:7c6c|/8c9c2d/Kd
MATCHSTATE:0:4:cc/r230r600c/c:7c6c|/8c9c2d/Kd
MATCHSTATE:0:4:cc/r230r600c/cc/:7c6c|/8c9c2d/Kd/5h
MATCHSTATE:0:4:cc/r230r600c/cc/r1800:7c6c|/8c9c2d/Kd/5h
MATCHSTATE:0:4:cc/r230r600c/cc/r1800c:7c6c|AsAd/8c9c2d/Kd/5h
""".splitlines()

#: the client's result in each hand of the transcript (chips): its fold on the flop; its set of
#: eights against AcKd all-in; its fives against AhKh all-in; the big blind's fold to its raise;
#: its straight against aces
RESULTS = {0: -333, 1: 20000, 2: 20000, 3: 100, 4: 1800}


@pytest.fixture(scope="module")
def env():
    return jaxgames.make("holdem")


@pytest.fixture(scope="module")
def wire(env):
    return Wire(env, translator=Translator(randomise=False))


@pytest.fixture(scope="module")
def seat():
    return acpc_client.load_seat(seed=3)


# -- strings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("line", TRANSCRIPT)
def test_transcript_round_trips(line, wire):
    ms = parse_matchstate(line)
    assert ms.text() == line
    state = wire.to_state(ms)
    assert int(state.step_count) == len(ms.actions)
    assert list(np.asarray(state.committed)) == list(ms.betting.spent)   # the real chips
    back = wire.to_matchstate(state, position=ms.position, hand_number=ms.hand_number)
    assert back.text() == line
    assert bool(state.terminated) == ms.betting.over
    if not ms.betting.over:
        assert int(state.current_player) == ms.betting.to_act


def test_transcript_results(wire):
    finals = {}
    for line in TRANSCRIPT:
        ms = parse_matchstate(line)
        if ms.betting.over:
            finals[ms.hand_number] = ms
    assert {h: wire.result(ms) for h, ms in finals.items()} == RESULTS
    # the game agrees, from its own showdown (the revealed cards are in the replayed deck)
    for h, ms in finals.items():
        assert float(wire.to_state(ms).rewards[ms.position]) == RESULTS[h]


def test_betting_tracker():
    b = acpc.track([[Action("r", 333), Action("c")], [Action("c"), Action("r", 1111)]])
    assert b.spent == (333, 1111) and b.round == 1 and b.to_act == 0 and b.to_call == 778
    assert b.raise_bounds() == (1111 + 778, 20000)
    b = acpc.track([[Action("r", 20000), Action("c")], [], [], []])
    assert b.over and b.showdown and b.round == 3
    assert Betting.start().to_act == 1 and Betting.start().spent == (100, 50)


BAD = [
    ("MATCHSTATE:0:0::|", "own hole cards"),
    ("MATCHSTATE:0:0::", "separated by one '|'"),
    ("MATCH:0:0::Td9d|", "not a MATCHSTATE"),
    ("MATCHSTATE:0:0:Td9d|", "5 fields"),
    ("MATCHSTATE:2:0::Td9d|", "position"),
    ("MATCHSTATE:0:x::Td9d|", "hand number"),
    ("MATCHSTATE:0:0:b200::Td9d|", "5 fields"),
    ("MATCHSTATE:0:0:b200:Td9d|", "bad ACPC action"),
    ("MATCHSTATE:0:0:r:Td9d|", "bad ACPC action"),
    ("MATCHSTATE:0:0:r0200:Td9d|", "bad ACPC action"),
    ("MATCHSTATE:0:0:r150:Td9d|", "raise-to must be 200..20000"),
    ("MATCHSTATE:0:0:r20001:Td9d|", "raise-to must be 200..20000"),
    ("MATCHSTATE:0:0:cf:Td9d|", "fold with nothing to call"),
    ("MATCHSTATE:0:0:r300f/:Td9d|/Ah7c2s", "after the hand ended in round 1"),
    ("MATCHSTATE:0:0:r300fc:Td9d|", "after the hand is over"),
    ("MATCHSTATE:0:0:cc:Td9d|", "'/' is missing"),
    ("MATCHSTATE:0:0:cc/c/:Td9d|/Ah7c2s/Kd", "starts before round 2 has ended"),
    ("MATCHSTATE:0:0:ccc/:Td9d|/Ah7c2s", "missing '/'"),
    ("MATCHSTATE:0:0:cc/:Td9d|", "cards show 0 board"),
    ("MATCHSTATE:0:0:cc/:Td9d|/Ah7c", "3"),
    ("MATCHSTATE:0:0::Td9|", "two characters a card"),
    ("MATCHSTATE:0:0::Td1d|", "bad card '1d'"),
    ("MATCHSTATE:0:0::tdad|", "bad card"),
    ("MATCHSTATE:0:0::Td9d|Td8c", "dealt twice"),
    ("MATCHSTATE:0:0::Td9d", "separated by one '|'"),
    ("MATCHSTATE:0:0::Td9dAs|", "shows 3 hole cards"),
    ("MATCHSTATE:0:0:c/c/c/c/c:Td9d|", "rounds"),
]


@pytest.mark.parametrize("line,why", BAD)
def test_bad_syntax_is_refused(line, why):
    with pytest.raises(ACPCError, match=re.escape(why)):
        parse_matchstate(line)
    assert issubclass(ACPCError, ValueError)


def test_replies():
    ms, action = acpc.parse_reply("MATCHSTATE:0:0:r333:Td9d|:r1000\r\n")
    assert ms.hand_number == 0 and action == Action("r", 1000)
    with pytest.raises(ACPCError, match="out of turn"):
        acpc.parse_reply("MATCHSTATE:0:0::Td9d|:c")
    with pytest.raises(ACPCError, match="raise-to"):
        acpc.parse_reply("MATCHSTATE:0:0:r333:Td9d|:r400")
    with pytest.raises(ACPCError, match="followed by"):
        acpc.parse_reply("MATCHSTATE:0:0:r333:Td9d|")


# -- the bet translation ---------------------------------------------------------------------


def test_pseudo_harmonic_values():
    f = acpc.pseudo_harmonic
    assert f(0.5, 0.5, 1.0) == 1.0 and f(1.0, 0.5, 1.0) == 0.0
    assert f(0.75, 0.5, 1.0) == pytest.approx(0.25 * 1.5 / (0.5 * 1.75))      # 0.4286: B more likely
    assert f(1.165, 1.0, 1.5) == pytest.approx(0.335 * 2 / (0.5 * 2.165))     # 0.619
    assert f(0.6, 0.5, 0.75) == pytest.approx(0.15 * 1.5 / (0.25 * 1.6))      # 0.5625
    with pytest.raises(ValueError):
        f(0.4, 0.5, 1.0)


def test_translator_threshold_and_randomised():
    sizes = [(0.5, 3), (0.75, 4), (1.0, 5), (1.5, 6), (2.0, 7), (99.0, 8)]
    threshold = Translator(randomise=False)
    assert threshold.choose(0.6, sizes) == 3          # f = 0.5625
    assert threshold.choose(0.9, sizes) == 5          # f(0.9, 0.75, 1) = 0.1*1.75/(0.25*1.9) = 0.37
    assert threshold.choose(0.2, sizes) == 3 and threshold.choose(150.0, sizes) == 8
    rand = Translator(seed=7)
    picks = [rand.choose(0.9, sizes, hand=h, index=2) for h in range(2000)]
    share = picks.count(4) / len(picks)
    assert set(picks) == {4, 5} and share == pytest.approx(0.1 * 1.75 / (0.25 * 1.9), abs=0.05)
    # the same hand and action always draw the same label (states are replayed from scratch)
    assert all(rand.choose(0.9, sizes, hand=h, index=2) == picks[h] for h in range(50))


def test_on_tree_amounts_map_exactly(wire, env):
    """In every state of the transcript, every legal raise's own amount labels as that raise."""
    for line in TRANSCRIPT:
        ms = parse_matchstate(line)
        if ms.betting.over:
            continue
        state = wire.to_state(ms)
        for _, a in wire.raise_sizes(state):
            sent = wire.action(state, a)
            assert wire.label(state, sent.amount) == a
            ms.betting.apply(sent)   # our real amount is a legal ACPC raise


def test_off_tree_labels_and_real_chips(wire):
    # SB raises to 333: 233 over the call into a pot of 200 after it, 1.165 pot: between pot
    # (f = 0.619, kept) and 1.5 pots
    state = wire.to_state(parse_matchstate("MATCHSTATE:0:0:r333:Td9d|"))
    assert int(state.history[0, 1]) == betting.RAISE_POT
    assert list(np.asarray(state.committed)) == [100, 333] and int(state.history_chips[0]) == 283
    # our ½-pot raise over it is half the real pot after the call: 233 + (666 / 2) = 566 more
    assert wire.action(state, betting.RAISE_HALF) == Action("r", 100 + 233 + 333)
    assert int(state.min_raise) == 233
    # 0.25 pot is below our smallest size: the smallest legal raise labels it
    # (a min-raise of a bet of 100 into 200: 100 over the call into 400)
    state = wire.to_state(parse_matchstate("MATCHSTATE:0:3:cc/r200r300:Ah2h|/Kc8d3h"))
    assert int(state.history[3, 1]) == betting.RAISE_HALF


def test_scaled_table():
    env2 = jaxgames.make("holdem", stack=40_000, small_blind=100, big_blind=200)
    w = Wire(env2, translator=Translator(randomise=False))
    state = w.to_state(parse_matchstate("MATCHSTATE:0:0:r333:Td9d|"))
    assert list(np.asarray(state.committed)) == [200, 666]
    with pytest.raises(ACPCError, match="scaled"):
        Wire(jaxgames.make("holdem", stack=30_000))


# -- the client against a stand-in dealer ------------------------------------------------------

# hands the stand-in deals: the client's position, both hole cards, the board, and the
# opponent's plan: raises as pot fractions (off-tree: 0.6, 1.3, 2.7), "allin", "c", "f"
DEALS = [
    (0, "Td9d", "QhQc", "Ah7c2s5d3c", [0.6, "c", 1.3, "c", "c", "c"]),
    (1, "8s8h", "AcKd", "Kc8d3h2d9s", ["c", 0.6, "c", 2.7, "c", "c"]),
    (0, "5c5d", "AhKh", "Qs7d2cJh3s", ["allin", "c", "c"]),
    (1, "Ah2h", "7s2c", "KsQs4c9h8d", ["f"]),
    (0, "7c6c", "AsAd", "8c9c2dKd5h", ["c", 1.3, "c", 0.6, "allin", "c"]),
    (1, "2c7d", "KhKs", "AcJd4s3h9c", [1.3, 0.6, "c", "c", "c"]),
]


def _opponent_action(bets: Betting, plan: list) -> Action:
    step = plan.pop(0) if plan else "c"
    bounds = bets.raise_bounds()
    if step == "f":
        return Action("f") if bets.to_call else Action("c")
    if step == "c" or bounds is None:
        return Action("c")
    if step == "allin":
        return Action("r", bounds[1])
    pot = sum(bets.spent)
    raise_to = max(bets.spent) + int(step * (pot + bets.to_call))
    return Action("r", min(max(raise_to, bounds[0]), bounds[1]))


def _client_result(pos, hole, opp, board, bets: Betting) -> int:
    """The client's result, by eval7 (independent of the game's evaluator)."""
    if bets.folded >= 0:
        return bets.spent[bets.folded] * (-1 if bets.folded == pos else 1)
    mine, theirs = (eval7.evaluate([eval7.Card(c) for c in re.findall("..", h + board)]) for h in (hole, opp))
    return int(np.sign(mine - theirs)) * bets.spent[0]


REPLY = re.compile(r"MATCHSTATE:[01]:\d+:[cfr0-9/]*:[2-9TJQKAcdhs|/]*:(f|c|r[1-9][0-9]*)")


class StandInDealer(threading.Thread):
    """A one-client ACPC dealer on 127.0.0.1: deals DEALS, sends every state (the client's
    turns and the others), checks each reply, records the client's results."""

    def __init__(self, deals, *, repeat: int = 1):
        super().__init__(daemon=True)
        self.deals, self.repeat = deals, repeat
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.results, self.replies, self.errors = [], [], []
        self.version = None

    def run(self):
        try:
            conn, _ = self.server.accept()
            with conn, conn.makefile("r", newline="\n") as reader:
                self.version = reader.readline().rstrip("\r\n")
                for n in range(self.repeat * len(self.deals)):
                    self._hand(conn, reader, n, *self.deals[n % len(self.deals)])
        except Exception as err:   # noqa: BLE001 - reported by the test
            self.errors.append(repr(err))
        finally:
            self.server.close()

    def _hand(self, conn, reader, n, pos, hole, opp, board, plan):
        plan, bets, rounds = list(plan), Betting.start(), [[]]
        holes = [None, None]
        holes[pos], holes[1 - pos] = hole, opp
        cards = acpc._parse_cards
        flop, turn, river = cards(board[:6], "flop"), cards(board[6:8], "turn"), cards(board[8:], "river")
        while True:
            shown = tuple(cards(h, "hole") if p == pos or bets.showdown else () for p, h in enumerate(holes))
            ms = MatchState(position=pos, hand_number=n, rounds=tuple(map(tuple, rounds)), hole=shown,
                            board=(flop, turn, river)[:bets.round])
            conn.sendall((ms.text() + "\r\n").encode())
            if bets.over:
                self.results.append(_client_result(pos, hole, opp, board, bets))
                return
            if bets.to_act == pos:
                reply = reader.readline().rstrip("\r\n")
                assert REPLY.fullmatch(reply), reply
                got, action = acpc.parse_reply(reply)   # legal for the client, or ACPCError
                assert got == ms, (reply, ms.text())
                self.replies.append(action)
            else:
                action = _opponent_action(bets, plan)
            bets = bets.apply(action)
            rounds[-1].append(action)
            rounds += [[] for _ in range(bets.round + 1 - len(rounds))]


def test_hand_beyond_the_history_is_called_down(seat):
    """A min-raise war longer than the game's history (16 actions): the client calls, counts it."""
    war = "".join(f"r{100 * k}" for k in range(2, 19))             # 17 raises: position 0 to act
    lines = [f"MATCHSTATE:0:0:{war}:Td9d|", f"MATCHSTATE:0:0:{war}f:Td9d|", "# a comment", ""]
    sent = []
    result = acpc_client.play_lines(lines, sent.append, seat)
    assert sent == [f"MATCHSTATE:0:0:{war}:Td9d|:c"]
    assert result.results == (-1700,) and result.fallbacks == 1        # its own last raise, r1700
    assert "played out with calls" in result.summary("x")


def test_client_against_stand_in_dealer(seat):
    dealer = StandInDealer(DEALS, repeat=2)
    dealer.start()
    result = acpc_client.play("127.0.0.1", dealer.port, seat, timeout=60)
    dealer.join(timeout=30)
    assert dealer.errors == []
    assert dealer.version == "VERSION:2.0.0"
    assert result.hands == 2 * len(DEALS) and list(result.results) == dealer.results
    assert len(dealer.replies) >= result.hands - 2   # it answered its turns (the dealer checked each)
    assert result.summary("x").startswith(f"{result.hands} hands against x: ")
    assert np.isfinite(result.ci95) and result.mbb_per_hand == pytest.approx(
        1000 * np.mean(dealer.results) / 100)


def test_client_stops_after_hands(seat):
    dealer = StandInDealer(DEALS)
    dealer.start()
    result = acpc_client.play("127.0.0.1", dealer.port, seat, hands=2, timeout=60)
    dealer.join(timeout=30)
    assert result.hands == 2 and list(result.results) == dealer.results[:2]


def test_cli(seat, capsys):
    dealer = StandInDealer(DEALS[:3])
    dealer.start()
    assert acpc_client.main(["127.0.0.1", str(dealer.port), "--seed", "3"]) == 0
    dealer.join(timeout=30)
    out = capsys.readouterr().out
    assert re.search(r"^3 hands against 127\.0\.0\.1:\d+: [+-][0-9,]+ ± [0-9,]+ mbb/hand \(95% interval\)", out)


@pytest.mark.parametrize("argv,why", [
    (["127.0.0.1"], "required: port"),
    (["127.0.0.1", "http"], "must be an integer"),
    (["127.0.0.1", "70000"], "1..65,535"),
    (["127.0.0.1", "9", "--hands", "0"], "--hands"),
    (["127.0.0.1", "9", "--seed", "-1"], "--seed"),
])
def test_bad_flags_exit_2(argv, why, exits_2_with_one_line):
    exits_2_with_one_line(acpc_client.main, argv, why)


def test_no_dealer_is_one_line(seat, capsys):
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]          # closed again: nothing listens there
    assert acpc_client.main(["127.0.0.1", str(port), "--timeout", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{acpc_client.PROG}: error: the dealer at 127.0.0.1:{port}")
