"""The pictures of docs/web.md: each page of ``python -m jaxgames.web`` mid-game, in the
system Chromium (Playwright, as tests/web/test_web_browser.py), saved as
``docs/img/web_<game>.png`` (a 1000x700 window).

    .venv/bin/python docs/img/web_screenshots.py             # all five (minutes: the agents compile)
    .venv/bin/python docs/img/web_screenshots.py hex 2048    # some

The opponents are the shipped agents (the pages' defaults); the seeds are fixed, the moves
picked by a fixed rule from what the page offers, so a rerun shows much the same positions.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "web"))

import web_helpers  # noqa: E402
from web_helpers import launch_chromium, start_server, stop_server  # noqa: E402

WAIT_MS = 600_000
VIEWPORT = {"width": 1000, "height": 700}


def settle(page) -> None:
    web_helpers.settle(page, wait_ms=WAIT_MS)


def start(page, path: str, **options) -> None:
    web_helpers.start_game(page, path, wait_ms=WAIT_MS, **options)


def click(page, selector: str) -> None:
    page.click(selector)
    settle(page)


def hex_page(page) -> None:
    start(page, "/hex", board_size=11, seed=1)                 # the shipped 11x11 agent
    for r, c in ((5, 5), (7, 4), (3, 6)):                      # f6, e8, g4: the centre and two bridges
        cell = page.locator("#board polygon.cell").nth(11 * r + c)
        if "legal" in cell.get_attribute("class"):             # (not taken by the agent)
            cell.click()
            settle(page)
    click(page, "#thinkbtn")


def holdem_page(page) -> None:
    start(page, "/holdem", seed=7)                             # the shipped agent
    for _ in range(20):                                        # check or call to the flop
        if page.locator("#board .card").count() >= 3 or page.locator("#actions button", has_text="Next hand").count():
            break
        names = page.locator("#actions button").all_text_contents()
        passive = [i for i, n in enumerate(names) if n == "check" or n.startswith("call")]
        page.locator("#actions button").nth(passive[0] if passive else 0).click()
        settle(page)
    if page.locator("#actions button", has_text="Next hand").count() == 0:
        click(page, "#thinkbtn")


def hearts_page(page) -> None:
    start(page, "/hearts", seed=3, target_score=50)            # the shipped learned players (PIMC)
    for _ in range(3 + 4):                                     # pass three, play four tricks
        page.locator("#hand button.card:not([disabled])").last.click()
        settle(page)
    click(page, "#thinkbtn")


def ten_half_page(page) -> None:
    start(page, "/ten_half", seed=5)
    page.keyboard.press("s")                                   # one game, stick at once
    settle(page)
    page.keyboard.press("Enter")
    settle(page)
    page.keyboard.press("?")
    settle(page)


def game2048_page(page) -> None:
    start(page, "/2048", seed=11)
    moves = 0
    while moves < 120 and "game over" not in page.locator("#over").text_content():
        for key in ("ArrowDown", "ArrowLeft", "ArrowRight", "ArrowUp"):   # keep the big tiles low-left
            before = page.locator("#moves").text_content()
            page.keyboard.press(key)
            settle(page)
            if page.locator("#moves").text_content() != before:
                moves += 1
                break
    page.keyboard.press("?")
    settle(page)


PAGES = {"hex": hex_page, "holdem": holdem_page, "hearts": hearts_page, "ten_half": ten_half_page,
         "2048": game2048_page}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("games", nargs="*", metavar="GAME", help=f"some of {', '.join(PAGES)} (default: all five)")
    p.add_argument("--out", type=pathlib.Path, default=HERE)
    args = p.parse_args(argv)
    for game in args.games:
        if game not in PAGES:
            p.error(f"no game {game!r}; the games: {', '.join(PAGES)}")
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, seconds = start_server(pathlib.Path(tmp) / "server.log", "--no-warm-up")
        print(f"server up in {seconds:.1f} s at {url}", flush=True)
        try:
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                for game in args.games or PAGES:
                    context = browser.new_context(viewport=VIEWPORT, base_url=url)
                    page = context.new_page()
                    PAGES[game](page)
                    out = args.out / f"web_{game}.png"
                    page.screenshot(path=str(out))
                    print(f"{out} ({out.stat().st_size // 1024} KB)", flush=True)
                    context.close()
                browser.close()
        finally:
            stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
