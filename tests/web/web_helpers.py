"""What the web tests share: the client of one app per module and the card finder; the real
server as a subprocess and the system Chromium (the browser tests, the screenshots script)."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings

with warnings.catch_warnings():   # starlette 1.x asks for httpx2; httpx still works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from jaxgames.web import make_app


def client() -> TestClient:
    return TestClient(make_app())


def server_game(c: TestClient, kind: str, gid: str):
    """The server's own game object (the tests compare the page's view to the true state)."""
    return c.app.state.store.get(kind, gid)[0]


def cards_in(data) -> set[int]:
    """Every card a response holds: the ids of the card dicts (jaxgames.web.cards.card),
    wherever they sit in it."""
    found = set()
    if isinstance(data, dict):
        if {"id", "rank", "suit"} <= data.keys():
            found.add(data["id"])
        for v in data.values():
            found |= cards_in(v)
    elif isinstance(data, list):
        for v in data:
            found |= cards_in(v)
    return found


def longest_list(data) -> int:
    """The longest list anywhere in a response (a 52-long one would be a deck or a mask)."""
    if isinstance(data, dict):
        return max((longest_list(v) for v in data.values()), default=0)
    if isinstance(data, list):
        return max([len(data)] + [longest_list(v) for v in data])
    return 0


# -- the real server and a real browser (tests/web/test_web_browser.py, docs/img/web_screenshots.py)

REPO = pathlib.Path(__file__).resolve().parents[2]
#: Debian's chromium package (.ci/run installs it with apt-get); Playwright drives it, and never
#: downloads a browser of its own (no `playwright install`: the machines have no network)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path, *flags: str, timeout: float = 120.0):
    """``python -m jaxgames.web --port <free port> *flags`` as a subprocess (its output to
    ``log_path``), waited for until ``/`` answers 200: ``(process, base url, seconds from the
    command to that first page)``. A server that exits or does not answer in ``timeout`` is an
    error that quotes its log."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(log_path, "w")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "jaxgames.web", "--port", str(port), *flags],
                            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    log.close()
    while True:
        try:
            with urllib.request.urlopen(url + "/", timeout=2) as r:
                if r.status == 200:
                    return proc, url, time.perf_counter() - started
        except (urllib.error.URLError, OSError):
            pass
        if proc.poll() is not None or time.perf_counter() - started > timeout:
            stop_server(proc)
            raise RuntimeError(f"python -m jaxgames.web did not answer on {url}/ "
                               f"(exit status {proc.returncode}):\n{pathlib.Path(log_path).read_text()[-3000:]}")
        time.sleep(0.05)


def stop_server(proc) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def launch_chromium(playwright):
    """The system Chromium under Playwright, headless, with nothing reaching for the network."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


#: the longest one request of a page may wait (a first move compiles the opponent's programs)
PAGE_WAIT_MS = 300_000


def settle(page, *, wait_ms: int = PAGE_WAIT_MS) -> str:
    """Wait until the page's request is answered (the status line leaves "busy"); the status
    line must not be a refusal (a stale page's 409, an illegal move's 422 ...). Returns it."""
    page.wait_for_function("() => document.getElementById('status').className !== 'busy'", timeout=wait_ms)
    status = page.locator("#status")
    assert status.get_attribute("class") != "error", f"{page.url} shows an error: {status.text_content()}"
    return status.text_content()


def start_game(page, path: str, *, wait_ms: int = PAGE_WAIT_MS, **options) -> None:
    """Open the page, set the options form (selects by value, checkboxes, inputs filled),
    press its button and wait for the game."""
    page.goto(path)
    for name, value in options.items():
        field = page.locator(f"#options [name={name}]")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(str(value))
        elif field.get_attribute("type") == "checkbox":
            field.set_checked(bool(value))
        else:
            field.fill(str(value))
    page.click("#options button")
    settle(page, wait_ms=wait_ms)
