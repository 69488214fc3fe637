"""The command line of ``python -m jaxgames.web``: the flags and the server's start.

A bad flag or value ends with argparse's one line and exit status 2, as every jaxgames
command; the server binds 127.0.0.1 unless ``--host`` says otherwise (it runs agents for
whoever reaches the port: not something to open to a network by default)."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from jaxgames import cli_args
from jaxgames.terminal import INTERRUPTED
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
    p.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                   help="do not play one game of each page in the background at start (by default the "
                        "agents' programs compile then, before a person's first game waits on them)")
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
    from jaxgames.web.warm import warm_up

    agents = Agents(args.runs)
    server = uvicorn.Server(uvicorn.Config(make_app(agents), host=args.host, port=args.port, log_level="warning"))
    warming = threading.Thread(target=warm_up, args=(agents,), kwargs={"ready": lambda: server.started},
                               name="warm-up", daemon=True)
    if args.warm_up:
        warming.start()
        print(f"jaxgames web: http://{args.host}:{args.port}/ (each game's programs compile in the background "
              f"now: a game started before its 'ready' line waits for them)", flush=True)
    else:
        print(f"jaxgames web: http://{args.host}:{args.port}/ (the first move of each game compiles: seconds)",
              flush=True)
    status = 0
    try:
        server.run()
    except KeyboardInterrupt:     # uvicorn shuts down on Ctrl-C, then raises it again
        print("jaxgames web: stopped (Ctrl-C)", flush=True)
        status = INTERRUPTED
    if warming.is_alive():
        # XLA compiling on that thread: Python's shutdown under it can crash the process
        # (jaxgames.terminal.exit_process has the measurement), so the server ends here
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status
