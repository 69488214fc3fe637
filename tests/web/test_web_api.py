"""The JSON API of jaxgames.web on legal and illegal input: pages, new games, moves, what the
agent thinks; refusals are 4xx JSON and change nothing; games stay apart. Cheap opponents
(bots) throughout, so the compiles are the game steps' and the bots'."""

import numpy as np
import pytest

from jaxgames.holdem import betting
from web_helpers import client, server_game

GAMES = ("hex", "holdem", "hearts", "ten_half", "2048")


@pytest.fixture(scope="module")
def c():
    return client()


def new(c, kind, **options):
    r = c.post(f"/api/{kind}/new", json=options)
    assert r.status_code == 200, r.text
    return r.json()["id"], r.json()["view"]


def refused(r, status, says):
    assert r.status_code == status, r.text
    assert says in r.json()["error"]


# -- pages and routing ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/hex", "/holdem", "/hearts", "/ten_half", "/2048", "/static/common.js"])
def test_pages_are_served(c, path):
    r = c.get(path)
    assert r.status_code == 200
    assert ("<html" in r.text) if path.count("/") == 1 else ("function" in r.text)


def test_index_links_every_game(c):
    text = c.get("/").text
    for game in GAMES:
        assert f'href="/{game}"' in text


def test_unknown_game_and_page(c):
    refused(c.post("/api/chess/new", json={}), 404, "no game 'chess'")
    assert c.get("/chess").status_code == 404


# -- malformed input -----------------------------------------------------------------------------

@pytest.mark.parametrize("body, says", [
    (b"{not json", "malformed JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'"holdem"', "must be a JSON object"),
])
def test_malformed_bodies(c, body, says):
    refused(c.post("/api/holdem/new", content=body), 400, says)


@pytest.mark.parametrize("kind, options, says", [
    ("holdem", {"opponent": "nobody"}, "opponent must be one of"),
    ("holdem", {"oponent": "call"}, "unknown hold'em option 'oponent'"),
    ("holdem", {"seed": "3"}, "seed must be int"),
    ("holdem", {"seed": -1}, "seed must be in"),
    ("holdem", {"opponent": "agent"}, "no trained holdem agent"),
    ("hearts", {"seat": 4}, "seat must be in 0..3"),
    ("hearts", {"moon": 1}, "moon must be bool"),
    ("ten_half", {"agent": "dealer"}, "agent must be one of"),
    ("2048", {"variant": "4096"}, "variant must be one of"),
    ("2048", {"hints": "agent"}, "no trained 2048 agent"),
])
def test_bad_options(c, kind, options, says):
    before = len(c.app.state.store)
    refused(c.post(f"/api/{kind}/new", json=options), 400, says)
    assert len(c.app.state.store) == before   # no game was made


def test_unknown_and_foreign_game_ids(c):
    refused(c.get("/api/holdem/nosuchgame"), 404, "no holdem game")
    refused(c.post("/api/holdem/nosuchgame/move", json={"action": 2}), 404, "no holdem game")
    gid, _ = new(c, "ten_half", seed=1)
    refused(c.get(f"/api/holdem/{gid}"), 404, "no holdem game")       # a ten-and-a-half game's id
    assert c.get(f"/api/ten_half/{gid}").status_code == 200


# -- hold'em -------------------------------------------------------------------------------------

def test_holdem_illegal_and_stale_moves_change_nothing(c):
    gid, view = new(c, "holdem", opponent="call", seed=5)
    hand = view["hand"]
    assert view["hand_number"] == 1 and hand["button"] == 0 and hand["to_act"] == 0   # the person's button
    legal = {a["action"] for a in hand["legal"]}
    assert betting.CHECK not in legal and betting.CALL in legal      # the small blind faces the big blind
    for body, status, says in [({"action": betting.CHECK}, 422, "check is not legal"),
                               ({"action": 9}, 400, "action must be in 0..8"),
                               ({"action": "call"}, 400, "action must be int"),
                               ({}, 400, "a hold'em move is"),
                               ({"deal": True}, 422, "the hand is not over"),
                               ({"action": betting.CALL, "version": 7}, 409, "stale move"),
                               ({"action": betting.CALL, "raise": 3}, 400, "unknown hold'em move")]:
        refused(c.post(f"/api/holdem/{gid}/move", json=body), status, says)
        assert c.get(f"/api/holdem/{gid}").json() == view
    r = c.post(f"/api/holdem/{gid}/move", json={"action": betting.CALL, "version": 0})
    assert r.status_code == 200
    after = r.json()
    assert after["version"] == 1
    assert after["hand"]["hole"] == hand["hole"]
    assert after["hand"]["history"][0] == {"seat": 0, "action": "call", "street": "preflop", "chips": 50}
    # the call bot checks behind: the flop is out and it is the person's turn again
    assert after["hand"]["street"] == "flop" and len(after["hand"]["board"]) == 3 and after["hand"]["to_act"] == 0


def test_holdem_fold_ends_the_hand_and_deal_starts_the_next(c):
    gid, view = new(c, "holdem", opponent="call", seed=6)
    done = c.post(f"/api/holdem/{gid}/move", json={"action": betting.FOLD}).json()
    assert done["hand"]["over"] and done["hand"]["won"] == -50 and not done["hand"]["showdown"]
    assert "opponent_hole" not in done["hand"] and "opponent_hole" not in done["log"][0]   # a fold shows nothing
    assert done["score"] == {"hands": 1, "chips": -50.0, "bb": -0.5, "mbb_per_hand": -500.0}
    refused(c.post(f"/api/holdem/{gid}/move", json={"action": betting.CALL}), 422, "the hand is over")
    refused(c.get(f"/api/holdem/{gid}/think"), 422, "not your turn")
    nxt = c.post(f"/api/holdem/{gid}/move", json={"deal": True}).json()
    assert nxt["hand_number"] == 2 and nxt["hand"]["button"] == 1 and not nxt["hand"]["over"]


def test_holdem_think_gives_probabilities_of_the_legal_actions(c):
    gid, view = new(c, "holdem", opponent="random", seed=7)
    thought = c.get(f"/api/holdem/{gid}/think").json()
    assert {a["action"] for a in thought["actions"]} == {a["action"] for a in view["hand"]["legal"]}
    probs = [a["prob"] for a in thought["actions"]]
    assert abs(sum(probs) - 1) < 1e-5 and max(probs) - min(probs) < 1e-5   # the random bot: uniform


def test_two_interleaved_games_stay_apart(c):
    a, va = new(c, "holdem", opponent="call", seed=11)
    b, vb = new(c, "holdem", opponent="call", seed=12)
    assert a != b
    ga, gb = server_game(c, "holdem", a), server_game(c, "holdem", b)
    deck_a, deck_b = np.asarray(ga.state.deck).copy(), np.asarray(gb.state.deck).copy()
    ra = c.post(f"/api/holdem/{a}/move", json={"action": betting.CALL}).json()
    refused(c.post(f"/api/holdem/{b}/move", json={"action": betting.CHECK}), 422, "not legal")  # b is preflop still
    rb = c.post(f"/api/holdem/{b}/move", json={"action": betting.FOLD}).json()
    assert ra["version"] == 1 and rb["version"] == 1
    assert ra["hand"]["street"] == "flop" and not ra["hand"]["over"]
    assert rb["hand"]["over"] and rb["score"]["hands"] == 1
    assert c.get(f"/api/holdem/{a}").json() == ra                       # b's moves left a alone
    assert ra["hand"]["hole"] == va["hand"]["hole"] and rb["log"][0]["hole"] == vb["hand"]["hole"]
    np.testing.assert_array_equal(np.asarray(ga.state.deck), deck_a)
    np.testing.assert_array_equal(np.asarray(gb.state.deck), deck_b)


# -- Hearts --------------------------------------------------------------------------------------

def test_hearts_moves_and_refusals(c):
    gid, view = new(c, "hearts", opponent="rule", seed=3, seat=0)
    assert view["passing"] and view["to_move"] == 0 and len(view["hand"]) == 13
    held = {x["id"] for x in view["hand"]}
    foreign = min(set(range(52)) - held)
    for body, status, says in [({"card": foreign}, 422, "you do not hold it"),
                               ({"card": 52}, 400, "card must be in 0..51"),
                               ({"card": "QS"}, 400, "card must be int"),
                               ({"cards": [1]}, 400, "unknown Hearts move")]:
        refused(c.post(f"/api/hearts/{gid}/move", json=body), status, says)
        assert c.get(f"/api/hearts/{gid}").json() == view
    thought = c.get(f"/api/hearts/{gid}/think").json()
    assert thought["best"]["id"] in held and {v["card"]["id"] for v in thought["values"]} == held
    passed = c.post(f"/api/hearts/{gid}/move", json={"card": thought["best"]["id"]}).json()
    assert passed["version"] == 1 and len(passed["hand"]) == 12
    assert [x["id"] for x in passed["passed"]] == [thought["best"]["id"]]


def test_hearts_first_trick_must_be_led_with_the_two_of_clubs(c):
    # the paper variant has no passing; standard's first lead is the 2♣: find the seat holding it
    gid, view = new(c, "hearts", opponent="random", seed=4, seat=0, variant="standard", moon=True)
    while view["passing"]:
        view = c.post(f"/api/hearts/{gid}/move", json={"card": view["legal"][0]["id"]}).json()
    if not view["tricks"] and not view["trick"]:       # the person leads the first trick: it holds the 2♣
        assert [x["id"] for x in view["legal"]] == [0]
        other = next(x["id"] for x in view["hand"] if x["id"] != 0)
        refused(c.post(f"/api/hearts/{gid}/move", json={"card": other}), 422, "cannot play")
    else:                                              # someone else led it
        assert view["trick"][0]["card"]["id"] == 0


# -- ten-and-a-half and 2048 ---------------------------------------------------------------------

def test_ten_half_moves_hint_and_refusals(c):
    gid, view = new(c, "ten_half", agent="optimal", seed=8)
    assert len(view["hand"]["cards"]) == 1 and view["legal"] == ["stick", "hit"]
    for body, status, says in [({"action": "fold"}, 400, "a ten-and-a-half move is"),
                               ({"action": True}, 400, "a ten-and-a-half move is"),
                               ({"deal": True}, 422, "not over")]:
        refused(c.post(f"/api/ten_half/{gid}/move", json=body), status, says)
    assert c.get(f"/api/ten_half/{gid}").json() == view
    hint = c.get(f"/api/ten_half/{gid}/think").json()
    assert hint["kind"] == "exact values" and hint["best"] in ("stick", "hit")
    assert hint["best"] == max(hint["values"], key=hint["values"].get)    # the optimum plays its best value
    done = c.post(f"/api/ten_half/{gid}/move", json={"action": "stick"}).json()
    assert done["over"] and done["legal"] == []
    assert done["dealer"] is not None and done["dealer"]["halves"] >= 1   # the dealer drew and is shown
    assert done["score"]["games"] == 1 and done["score"]["total"] == done["reward"]
    refused(c.post(f"/api/ten_half/{gid}/move", json={"action": "hit"}), 422, "over")
    nxt = c.post(f"/api/ten_half/{gid}/move", json={"deal": True}).json()
    assert not nxt["over"] and nxt["game_number"] == 2 and len(nxt["hand"]["cards"]) == 1


def test_2048_moves_hint_and_refusals(c):
    gid, view = new(c, "2048", seed=9)
    assert sum(v > 0 for row in view["board"] for v in row) == 2 and view["score"] == 0
    refused(c.post(f"/api/2048/{gid}/move", json={"action": "sideways"}), 400, "a 2048 move is")
    hint = c.get(f"/api/2048/{gid}/think").json()
    assert set(hint["values"]) == set(view["legal"]) and hint["best"] in view["legal"]
    for _ in range(60):                                 # play until some direction moves nothing
        if len(view["legal"]) < 4:
            break
        view = c.post(f"/api/2048/{gid}/move", json={"action": view["legal"][0]}).json()
    blocked = next(d for d in ("up", "right", "down", "left") if d not in view["legal"])
    refused(c.post(f"/api/2048/{gid}/move", json={"action": blocked}), 422, "moves no tile")
    assert c.get(f"/api/2048/{gid}").json() == view
    after = c.post(f"/api/2048/{gid}/move", json={"action": view["legal"][0]}).json()
    assert after["moves"] == view["moves"] + 1
    tiles = sum(v > 0 for row in after["board"] for v in row)
    assert 1 <= tiles <= sum(v > 0 for row in view["board"] for v in row) + 1   # merges, then one new tile


# -- Hex -----------------------------------------------------------------------------------------
# plain UCT on a 3x3 board with 8 simulations and the swap rule in both tests: one cheap
# opponent compiled once (the shipped agents play 7x7 and larger, each a network to compile)
HEX = {"opponent": "uct", "board_size": 3, "simulations": 8, "swap": True}

def test_hex_moves_swap_undo_sgf_and_refusals(c):
    gid, view = new(c, "hex", **HEX, colour="white", seed=2)
    assert view["human"] == 1 and len(view["moves"]) == 1 and view["to_move"] == 1   # Black (UCT) opened
    assert view["can_swap"]
    first = view["last_move"]
    assert first not in view["legal"] and len(view["legal"]) == 8
    for body, status, says in [({"cell": first}, 422, "is taken"),
                               ({"cell": 9}, 400, "cell must be in 0..8"),
                               ({"undo": True}, 422, "nothing to undo"),
                               ({"pass": True}, 400, "unknown Hex move"),
                               ({}, 400, "a Hex move is")]:
        refused(c.post(f"/api/hex/{gid}/move", json=body), status, says)
        assert c.get(f"/api/hex/{gid}").json() == view
    thought = c.get(f"/api/hex/{gid}/think").json()
    assert thought["total"] == 8 and thought["swap_visits"] is not None
    assert sum(map(sum, thought["visits"])) + thought["swap_visits"] == 8
    swapped = c.post(f"/api/hex/{gid}/move", json={"swap": True}).json()
    assert swapped["moves"][1] == "swap" and len(swapped["moves"]) == 3 and not swapped["can_swap"]
    r, col = divmod(first, 3)
    assert swapped["board"][col][r] == -1          # Black's stone became White's, mirrored
    refused(c.post(f"/api/hex/{gid}/move", json={"swap": True}), 422, "no swap now")
    back = c.post(f"/api/hex/{gid}/move", json={"undo": True}).json()
    assert back["moves"] == view["moves"] and back["board"] == view["board"] and back["can_swap"]
    cell = back["legal"][0]
    after = c.post(f"/api/hex/{gid}/move", json={"cell": cell}).json()
    sgf = c.get(f"/api/hex/{gid}/sgf")
    assert sgf.status_code == 200 and sgf.text.startswith("(;FF[4]GM[11]SZ[3]")
    assert sgf.text.count(";B[") + sgf.text.count(";W[") == len(after["moves"])


def test_hex_game_played_to_its_end(c):
    gid, view = new(c, "hex", **HEX, colour="black", seed=3)
    while not view["over"]:
        view = c.post(f"/api/hex/{gid}/move", json={"cell": view["legal"][0]}).json()
    assert view["winner"] in (0, 1) and view["legal"] == [] and view["to_move"] is None
    refused(c.post(f"/api/hex/{gid}/move", json={"cell": 0}), 422, "the game is over")
    refused(c.get(f"/api/hex/{gid}/think"), 422, "not your turn")


def test_latency_tool_times_a_game():
    from jaxgames.web import latency
    out = latency.measure("ten_half", 4, {"agent": "optimal", "seed": 1})
    assert out["moves"] == 4
    assert all(out[k] > 0 for k in ("new", "move_first", "think_first", "think_later", "move_later_median"))


def test_hearts_game_to_a_target_score_logs_each_hand(c):
    gid, view = new(c, "hearts", opponent="random", seed=21, seat=1, variant="paper", target_score=200)
    assert view["hands"] == [] and view["hand_number"] == 1
    while view["hand_number"] == 1:
        view = c.post(f"/api/hearts/{gid}/move", json={"card": view["legal"][0]["id"]}).json()
    assert not view["over"] and len(view["hand"]) == 13 and view["tricks"] == []   # hand 2 is dealt
    (first,) = view["hands"]
    assert first["hand"] == 1 and sum(first["points"]) in (26, 78)   # 78: a moon shot, 26 to each other seat
    assert first["scores"] == view["scores"] == first["points"]


def test_hearts_one_hand_game_logs_its_only_hand(c):
    # the options of the two-of-clubs test above (the same programs): one hand, then the end
    gid, view = new(c, "hearts", opponent="random", seed=5, seat=2, variant="standard", moon=True)
    while not view["over"]:
        view = c.post(f"/api/hearts/{gid}/move", json={"card": view["legal"][0]["id"]}).json()
    (only,) = view["hands"]
    assert only["hand"] == 1 and sum(only["points"]) in (26, 78)
    assert only["scores"] == view["scores"] == only["points"]
