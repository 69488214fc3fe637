"""The shipped agents behind the API (slow where one compiles a network or a search): hold'em's
action probabilities, Hex's visit counts from the agent's own search, ten-and-a-half's learned
hint. The fast tests use bots; these check the default opponents' paths once."""

import pytest

from web_helpers import client


@pytest.fixture(scope="module")
def c():
    return client()


@pytest.mark.slow
def test_holdem_shipped_agent_moves_and_thinks(c):
    r = c.post("/api/holdem/new", json={"seed": 4})
    gid, view = r.json()["id"], r.json()["view"]
    assert "shipped" in view["opponent"]
    thought = c.get(f"/api/holdem/{gid}/think").json()
    probs = [a["prob"] for a in thought["actions"]]
    assert abs(sum(probs) - 1) < 1e-4 and all(p >= 0 for p in probs)
    assert {a["action"] for a in thought["actions"]} == {a["action"] for a in view["hand"]["legal"]}
    after = c.post(f"/api/holdem/{gid}/move", json={"action": 2}).json()     # call: the agent replies
    assert after["version"] == 1
    assert after["hand"]["over"] or after["hand"]["to_act"] == 0


@pytest.mark.slow
def test_hex_shipped_agent_opens_and_its_visits_add_up(c):
    r = c.post("/api/hex/new", json={"board_size": 7, "colour": "white", "seed": 5})
    assert r.status_code == 200, r.text
    gid, view = r.json()["id"], r.json()["view"]
    assert "az-7x7" in view["opponent"] and len(view["moves"]) == 1      # Black, the agent, opened
    thought = c.get(f"/api/hex/{gid}/think").json()
    total = sum(map(sum, thought["visits"]))
    assert total == thought["total"] > 0 and thought["swap_visits"] is None
    r, col = view["last_move"] // 7, view["last_move"] % 7
    assert thought["visits"][r][col] == 0                                  # no visit to a taken cell
    refused = c.post("/api/hex/new", json={"board_size": 8})
    assert refused.status_code == 400 and "no shipped Hex agent plays 8x8" in refused.json()["error"]


def test_ten_half_learned_hint(c):   # a table lookup: cheap enough for the fast suite
    gid = c.post("/api/ten_half/new", json={"seed": 6}).json()["id"]
    hint = c.get(f"/api/ten_half/{gid}/think").json()
    assert "mc-on-policy" in hint["who"] and hint["best"] in ("stick", "hit")
    assert set(hint["values"]) == {"stick", "hit"}
