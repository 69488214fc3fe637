"""The Starlette app: the pages (package data in ``static/``) and one JSON API per game.

    POST /api/<game>/new           options (JSON object)   -> {"id", "view"}
    GET  /api/<game>/<id>                                   -> the view of the person's seat
    POST /api/<game>/<id>/move     the move (JSON object)   -> the new view
    GET  /api/<game>/<id>/think                             -> what the agent thinks here
    GET  /api/hex/<id>/sgf                                  -> the game as SGF (text)

A game module (``jaxgames.web.<game>``) has a ``Game(options, agents)`` with ``view()``,
``move(body)`` and ``think()``; every expected refusal is a :class:`BadRequest`, raised before
the game changes, answered ``{"error": ...}`` with its 4xx status. A move may carry
``"version"`` (the view's): a page showing an older position gets 409 and changes nothing.
"""

from __future__ import annotations

import importlib
import json
import pathlib
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from jaxgames.web.agents import Agents
from jaxgames.web.errors import BadRequest
from jaxgames.web.store import Store

STATIC = pathlib.Path(__file__).resolve().parent / "static"
#: the games served, each a module jaxgames.web.<module> and a page static/<name>.html
GAMES = {"hex": "hex", "holdem": "holdem", "hearts": "hearts", "ten_half": "ten_half", "2048": "game2048"}
#: a request body larger than this is refused before it is parsed
MAX_BODY = 64 * 1024


def game_class(name: str):
    if name not in GAMES:
        raise BadRequest(f"no game {name!r}; the games are {', '.join(GAMES)}", 404)
    return importlib.import_module(f"jaxgames.web.{GAMES[name]}").Game


async def _body(request: Request) -> dict:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise BadRequest(f"request body over {MAX_BODY} bytes", 413)
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"malformed JSON: {e}") from None
    if not isinstance(body, dict):
        raise BadRequest(f"the body must be a JSON object, got {type(body).__name__}")
    return body


def make_app(agents: Agents | None = None, store: Store | None = None) -> Starlette:
    """The app; ``agents`` says where trained runs are (default: the shipped agents only)."""
    agents = agents or Agents()
    store = store or Store()

    def locked(request: Request):
        kind = request.path_params["game"]
        game_class(kind)
        return store.get(kind, request.path_params["gid"])

    async def new(request: Request) -> Response:
        kind = request.path_params["game"]
        cls = game_class(kind)
        body = await _body(request)
        game = await _threaded(lambda: cls(body, agents))
        gid = store.create(kind, game)
        return JSONResponse({"id": gid, "view": await _threaded(game.view)})

    async def view(request: Request) -> Response:
        game, lock = locked(request)
        return JSONResponse(await _threaded(_under(lock, game.view)))

    async def move(request: Request) -> Response:
        game, lock = locked(request)
        body = await _body(request)

        def work():
            version = body.pop("version", None)
            if version is not None and version != game.version:
                raise BadRequest(f"stale move: the game is at version {game.version}, the page at {version!r} "
                                 f"(reload it)", 409)
            game.move(body)
            return game.view()
        return JSONResponse(await _threaded(_under(lock, work)))

    async def think(request: Request) -> Response:
        game, lock = locked(request)
        return JSONResponse(await _threaded(_under(lock, game.think)))

    async def sgf(request: Request) -> Response:
        game, lock = store.get("hex", request.path_params["gid"])
        return PlainTextResponse(await _threaded(_under(lock, game.sgf)), media_type="application/x-go-sgf",
                                 headers={"Content-Disposition": 'attachment; filename="hex.sgf"'})

    async def page(request: Request) -> Response:
        name = request.path_params.get("game", "index")
        if name != "index" and name not in GAMES:
            return JSONResponse({"error": f"no page {name!r}"}, 404)
        return FileResponse(STATIC / f"{GAMES.get(name, name)}.html")

    async def refused(request: Request, exc: BadRequest) -> Response:
        return JSONResponse({"error": exc.message}, exc.status)

    routes = [
        Route("/", page),
        Route("/api/hex/{gid}/sgf", sgf),
        Route("/api/{game}/new", new, methods=["POST"]),
        Route("/api/{game}/{gid}", view),
        Route("/api/{game}/{gid}/move", move, methods=["POST"]),
        Route("/api/{game}/{gid}/think", think),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/{game}", page),
    ]
    app = Starlette(routes=routes, exception_handlers={BadRequest: refused})
    app.state.store = store
    app.state.agents = agents
    return app


def _under(lock, fn):
    def run():
        with lock:
            return fn()
    return run


async def _threaded(fn) -> Any:
    """``fn()`` on Starlette's thread pool: a JAX move takes from milliseconds to seconds (the
    first compile), and the event loop keeps answering other games meanwhile."""
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(fn)
