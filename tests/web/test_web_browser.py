"""The five pages in a real browser: ``python -m jaxgames.web`` as a subprocess, Debian's
Chromium driven by Playwright, a whole game on every page by clicks and keys, the result read
from the page (and checked against the server's own view through the API where the page
could be wrong). Cheap opponents where a page offers them (5x5 Hex against UCT at 8
simulations, Hearts against the rule bot); hold'em against the shipped agent. Also: a
reload shows the same game (its id is in the address), "What does the agent think?" draws
the search's visit counts (Hex) and the agent's probabilities (hold'em), and the server
answers its first page within 10 s of the command.

Nothing here depends on the deals or the agents' choices: the moves are picked from what
the page offers (Python's own random, seeded), and what is checked holds for every game.
``.ci/run`` installs the browser (apt-get install chromium chromium-driver) and sets
JAXGAMES_REQUIRE_BROWSER=1, so there a missing browser fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import signal
import time
import urllib.request

import pytest

from web_helpers import CHROMIUM, PAGE_WAIT_MS, launch_chromium, settle, start_game, start_server, stop_server

pytestmark = pytest.mark.slow

#: the bar for the server's start: the command to the first page answered
STARTUP_BAR_S = 10.0


def _need_browser():
    why = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        why = "playwright is not installed (pip install -e '.[dev]')"
    if why is None and not os.path.exists(CHROMIUM):
        why = f"no {CHROMIUM} (apt-get install chromium chromium-driver; .ci/run does)"
    if why:
        if os.environ.get("JAXGAMES_REQUIRE_BROWSER", "0") not in ("", "0"):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    # no warm-up: its compiles of the shipped agents would share the two cores with the games
    proc, url, _ = start_server(tmp_path_factory.mktemp("web") / "server.log", "--no-warm-up")
    yield url
    stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1000, "height": 700}, base_url=server)
    context.set_default_timeout(PAGE_WAIT_MS)
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def start(page, path: str, **options) -> None:
    """Open the page and start a game with ``options`` (the form's fields); its table shows."""
    start_game(page, path, **options)
    assert page.locator("#table").is_visible()


def game_id(page) -> str:
    gid = page.evaluate("location.hash").lstrip("#")
    assert gid, "the address names no game"
    return gid


def api_view(page, base: str, game: str) -> dict:
    with urllib.request.urlopen(f"{base}/api/{game}/{game_id(page)}") as r:
        return json.loads(r.read())


def text(page, selector: str) -> str:
    return page.locator(selector).text_content()


def test_startup_under_the_bar_while_the_warm_up_compiles(tmp_path):
    """The command to the first page answered (HTTP 200 on /) within the bar; the warm-up
    then compiles the pages' programs in the background, in its order, while pages are served;
    a Ctrl-C in the middle of it stops the server with exit status 130 and one line (not a
    traceback, not a crash of Python's shutdown under XLA's threads)."""
    _need_browser()   # the same machines as the browser tests; the server itself needs none
    log = tmp_path / "server.log"
    proc, url, seconds = start_server(log)
    try:
        assert seconds <= STARTUP_BAR_S, f"the server took {seconds:.1f} s to answer its first page"
        deadline = time.perf_counter() + 300
        while "jaxgames web: 2048 ready" not in log.read_text() and time.perf_counter() < deadline:
            with urllib.request.urlopen(url + "/hex") as r:      # pages answer meanwhile
                assert r.status == 200 and b"Hex" in r.read()
            time.sleep(0.5)
        text = log.read_text()
        assert "skipped" not in text, text
        assert 0 <= text.index("jaxgames web: ten_half ready") < text.index("jaxgames web: 2048 ready"), text
    except BaseException:
        stop_server(proc)
        raise
    proc.send_signal(signal.SIGINT)   # during the hold'em, Hex or Hearts warm-up
    assert proc.wait(timeout=60) == 130, log.read_text()
    text = log.read_text()
    assert text.rstrip().endswith("jaxgames web: stopped (Ctrl-C)") and "Traceback" not in text, text


def test_index_links_the_five_pages(page):
    page.goto("/")
    hrefs = [a.get_attribute("href") for a in page.locator("li a").all()]
    assert hrefs == ["/hex", "/holdem", "/hearts", "/ten_half", "/2048"]
    page.click("text=Ten-and-a-half")
    page.wait_for_url("**/ten_half")
    assert "ten-and-a-half" in text(page, "h1")


def _stones(page) -> int:
    return page.locator("#board circle.stone0, #board circle.stone1").count()


def test_hex_whole_game_against_uct_with_think_and_reload(page, server):
    rng = random.Random(0)
    start(page, "/hex", opponent="uct", board_size=5, simulations=8, colour="black")
    assert text(page, "#headline") == "You are Black; your move. Opponent: UCT (8 simulations)."
    assert page.locator("#board polygon.cell").count() == 25
    assert page.locator("#board polygon.legal").count() == 25 and _stones(page) == 0

    clicks = 0
    while "wins." not in text(page, "#headline"):
        legal = page.locator("#board polygon.legal")
        n = legal.count()
        assert n == 25 - _stones(page) > 0          # every empty cell is clickable, no taken one
        legal.nth(rng.randrange(n)).click()
        settle(page)
        clicks += 1
        moves = text(page, "#moves")
        assert _stones(page) == moves.count(". ") == len(api_view(page, server, "hex")["moves"])
        assert _stones(page) in (2 * clicks, 2 * clicks - 1)   # the reply, unless the game ended on my move

        if clicks == 2:   # mid-game: the agent's search from my position, its visit counts on the cells
            page.click("#thinkbtn")
            status = settle(page)
            m = re.search(r"search visit counts \((\d+) in all\), most visited ([a-e][1-5])", status)
            assert m, status
            counts = [int(t) for t in page.locator("#board text.visits").all_text_contents()]
            assert counts and sum(counts) == int(m.group(1)) > 0
            # a reload: the address names the game; the same stones and moves come back
            before = (game_id(page), _stones(page), moves)
            page.reload()
            settle(page)
            assert (game_id(page), _stones(page), text(page, "#moves")) == before
            assert text(page, "#headline").startswith("You are Black; your move.")
        assert clicks <= 13

    view = api_view(page, server, "hex")
    assert view["over"] and view["legal"] == []
    headline = text(page, "#headline")
    assert headline.startswith("You win." if view["winner"] == 0 else "UCT (8 simulations) wins.")
    assert page.locator("#board polygon.legal").count() == 0 and page.locator("#thinkbtn").is_disabled()
    sgf = page.locator("#sgf").get_attribute("href")
    with urllib.request.urlopen(server + sgf) as r:
        assert r.read().decode().count(";B[") == (_stones(page) + 1) // 2


HOLDEM_ACTION = re.compile(r"^(fold|check|call [\d,]+|(bet|raise) .+ \(to [\d,]+\)|all-in \(to [\d,]+\))$")


def test_holdem_hands_against_the_shipped_agent(page, server):
    rng = random.Random(1)
    start(page, "/holdem")                      # the default opponent: the shipped agent
    assert "shipped" in text(page, "#oppinfo")
    thought, hand = False, 1
    while hand <= 3 or not thought:   # (a hand the agent folds before I act has no think)
        assert hand <= 8
        assert text(page, "#handno") == str(hand)
        assert page.locator("#you .card").count() == 2 and page.locator("#opp .card.back").count() == 2
        while page.locator("#actions button", has_text="Next hand").count() == 0:
            buttons = page.locator("#actions button")
            names = buttons.all_text_contents()
            assert names and all(HOLDEM_ACTION.match(n) for n in names), names
            assert names == [a["text"] for a in api_view(page, server, "holdem")["hand"]["legal"]]
            if not thought:   # the agent's probabilities in my place, one bar per legal action
                page.click("#thinkbtn")
                settle(page)
                rows = page.locator("#think tr")
                assert rows.count() == len(names) + 1 and page.locator("#think .bar").count() == len(names)
                percent = [float(x) for x in re.findall(r"([\d.]+)%", text(page, "#think"))]
                assert abs(sum(percent) - 100) < 1.0
                thought = True
            passive = [i for i, n in enumerate(names) if n == "check" or n.startswith("call")]
            choice = rng.choice(passive) if passive and rng.random() < 0.8 else rng.randrange(len(names))
            buttons.nth(choice).click()
            settle(page)
        # the hand is over: the result line, the score, the log of hands
        result = text(page, "#actions")
        m = re.search(r"You win ([\d,]+)|You lose ([\d,]+)|Split pot", result)
        assert m, result
        won = int((m.group(1) or m.group(2) or "0").replace(",", "")) * (-1 if m.group(2) else 1)
        assert text(page, "#score").startswith(f"{hand} hands:")
        assert page.locator("#log tr").count() == hand + 1
        assert text(page, "#log tr:nth-child(2) td:last-child").startswith(f"{won:+,}" if won else "0")
        board = page.locator("#board .card").count()
        assert board in (0, 3, 4, 5)
        if "at the showdown" in result:
            assert board == 5 and page.locator("#opp .card:not(.back)").count() == 2
        assert page.locator("#thinkbtn").is_disabled()
        page.click("#actions button:has-text('Next hand')")
        settle(page)
        hand += 1
    view = api_view(page, server, "holdem")
    assert view["score"]["hands"] == hand - 1
    assert text(page, "#score").startswith(f"{hand - 1} hands: {'+' if view['score']['chips'] >= 0 else '-'}")


def test_hearts_whole_hand_against_the_rule_bot(page, server):
    rng = random.Random(2)
    start(page, "/hearts", opponent="rule", seat=0, variant="standard")
    assert "rule" in text(page, "#headline")
    assert page.locator("#hand button.card").count() == 13
    head = text(page, "#headline")
    passes = 3 if "pass three cards" in head else 0   # the first hand passes left
    for i in range(passes):
        playable = page.locator("#hand button.card:not([disabled])")
        assert playable.count() == 13 - i             # any card may be passed
        playable.nth(rng.randrange(playable.count())).click()
        settle(page)
    if passes:
        assert page.locator("#hand button.card").count() == 13
        assert "You passed" in text(page, "#passinfo") and "You received" in text(page, "#passinfo")

    played = 0
    while not text(page, "#headline").startswith("Game over."):
        hand = page.locator("#hand button.card")
        assert hand.count() == 13 - played
        playable = page.locator("#hand button.card:not([disabled])")
        n = playable.count()
        legal = api_view(page, server, "hearts")["legal"]
        assert n == len(legal) >= 1
        assert sorted(playable.evaluate_all("bs => bs.map(b => +b.dataset.id)")) == sorted(c["id"] for c in legal)
        playable.nth(rng.randrange(n)).click()
        settle(page)
        played += 1
        # the computer seats played up to my next turn: my trick is complete, shown as the last
        assert page.locator("#last .card").count() == 4
        assert page.locator("#trick .card").count() <= 3
        assert played <= 13
    assert played == 13 and page.locator("#hand button.card").count() == 0
    # the points table: one hand, 26 points in all (78 when the moon was shot: 26 to each other seat)
    rows = page.locator("#hands tr")
    assert rows.count() == 2
    points = [int(x) for x in page.locator("#hands tr:nth-child(2) td").all_text_contents()[1:]]
    assert len(points) == 4 and sum(points) in (26, 78)
    if sum(points) == 78:
        assert sorted(points) == [0, 26, 26, 26]
    assert points == api_view(page, server, "hearts")["hands"][0]["points"]
    assert page.locator("#thinkbtn").is_disabled()


def test_ten_half_games_by_keys(page, server):
    start(page, "/ten_half")                    # hints from the shipped learned policy
    total = 0.0
    for game in (1, 2, 3, 4):
        assert text(page, "#gameno") == str(game)
        if game == 1:                           # the hint, by its key
            page.keyboard.press("?")
            settle(page)
            assert re.search(r": (hit|stick)\. Expected reward: stick -?[\d.]+, hit -?[\d.]+", text(page, "#hint"))
        while "Next game" not in text(page, "#actions"):
            cards = page.locator("#hand .card").count()
            shown = text(page, "#handinfo").split()[0]             # "5½ points (plain)"
            points = int(shown.rstrip("½") or 0) + 0.5 * shown.endswith("½")
            page.keyboard.press("h" if points < 5 and cards < 5 else "s")
            settle(page)
            assert page.locator("#hand .card").count() in (cards, cards + 1)
        result = text(page, "#actions")
        m = re.search(r"You (win|lose) ([\d.]+)", result)
        assert m, result
        total += float(m.group(2)) * (1 if m.group(1) == "win" else -1)
        dealer = text(page, "#dealer")
        assert "did not draw" in dealer or page.locator("#dealer .card").count() >= 1
        assert text(page, "#score").startswith(f"{game} games, ")
        page.keyboard.press("Enter")            # the next game (focus still on New session: must not restart)
        settle(page)
    view = api_view(page, server, "ten_half")
    assert view["score"]["games"] == 4 and view["score"]["total"] == pytest.approx(total)


KEYS = ["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft", "w", "d", "s", "a"]


def _tiles(page) -> list[int]:
    return [int(t) if t else 0 for t in page.locator("#grid .tile").all_text_contents()]


def test_2048_whole_game_by_keys_and_reload(page, server):
    rng = random.Random(3)
    start(page, "/2048", depth=1)
    tiles = _tiles(page)
    assert len(tiles) == 16 and sum(t > 0 for t in tiles) == 2
    # four keys at once, before any answer: one move goes, the others wait for nothing (no stale 409)
    page.evaluate("""() => { for (const key of ["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"])
                               document.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true })); }""")
    settle(page)
    assert text(page, "#moves") == "1"
    moves, score = 1, int(text(page, "#score").replace(",", ""))
    while "game over" not in text(page, "#over"):
        key = rng.choice(KEYS)
        page.keyboard.press(key)
        settle(page)
        now = int(text(page, "#moves"))
        if now == moves:    # that direction moves no tile: the page says so and sends nothing
            assert "moves no tile" in text(page, "#status")
            continue
        assert now == moves + 1
        moves = now
        new_score = int(text(page, "#score").replace(",", ""))
        assert new_score >= score
        score = new_score
        if moves == 20:     # a reload: the same board, score and count
            page.keyboard.press("?")
            settle(page)
            assert re.search(r"expectimax, depth 1.*: (up|right|down|left)\. ", text(page, "#hint"))
            before = (game_id(page), _tiles(page), score, moves)
            page.reload()
            settle(page)
            assert (game_id(page), _tiles(page), int(text(page, "#score").replace(",", "")),
                    int(text(page, "#moves"))) == before
        assert moves < 5000
    tiles = _tiles(page)
    assert all(t > 0 for t in tiles)                # game over: a full board ...
    for r in range(4):                              # ... where no two neighbours merge
        for c in range(4):
            t = tiles[4 * r + c]
            assert c == 3 or tiles[4 * r + c + 1] != t
            assert r == 3 or tiles[4 * (r + 1) + c] != t
    view = api_view(page, server, "2048")
    assert view["over"] and view["moves"] == moves and view["score"] == score > 0
    assert page.locator("#thinkbtn").is_disabled()
