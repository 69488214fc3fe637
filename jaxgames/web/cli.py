"""The command line of ``python -m jaxgames.web``: the flags and the server's start.

A bad flag or value ends with argparse's one line and exit status 2, as every jaxgames
command; the server binds 127.0.0.1 unless ``--host`` says otherwise (it runs agents for
whoever reaches the port: not something to open to a network by default)."""

from __future__ import annotations

import argparse

from jaxgames import cli_args
from jaxgames.web.agents import RUN_GAMES

PROG = "python -m jaxgames.web"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8066


def _run(text: str) -> tuple[str, str]:
    game, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"must be GAME=RUN_FOLDER (e.g. holdem=runs/holdem/quick-seed0), got {text!r}")
    if game not in RUN_GAMES:
        raise argparse.ArgumentTypeError(f"no game {game!r}; the games: {', '.join(RUN_GAMES)}")
    return game, path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play the jaxgames games against their agents in a browser.")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to bind (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=cli_args.count(1, 65535, "a TCP port"), default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--run", type=_run, action="append", default=[], metavar="GAME=RUN",
                   help="a trained agent's run folder, the opponent 'agent' of that game's page (repeatable; "
                        f"games: {', '.join(RUN_GAMES)})")
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(argv)
    runs = {}
    for game, path in args.run:
        if game in runs:
            p.error(f"argument --run: {game} given twice")
        runs[game] = path
    args.runs = runs
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import uvicorn

    from jaxgames.web.agents import Agents
    from jaxgames.web.server import make_app

    print(f"jaxgames web: http://{args.host}:{args.port}/ (the first move of each game compiles: seconds)", flush=True)
    uvicorn.run(make_app(Agents(args.runs)), host=args.host, port=args.port, log_level="warning")
    return 0
