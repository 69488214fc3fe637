"""What the web tests share: the client of one app per module and the card finder."""

from __future__ import annotations

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
