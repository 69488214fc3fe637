"""How long a person waits: ``python -m jaxgames.web.latency GAME [--moves N] [--options JSON]``
plays one game through the API in this process (Starlette's test client, no network) with the
game's default opponent and prints the seconds of: the new game (loading the agent, and for a
game where the computer moves first its compiles), the first move (the step and the
computer's move compile), the later moves (median and slowest), and the first and a later
"think". docs/web.md keeps the figures."""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

from jaxgames.web.agents import Agents
from jaxgames.web.server import GAMES, make_app
from jaxgames.web.warm import first_legal, warm_game


def measure(game: str, moves: int, options: dict, *, warm: bool = False) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    agents = Agents()
    out = {}
    if warm:       # the server's warm-up of this page first (python -m jaxgames.web does it at start)
        t = time.perf_counter()
        warm_game(game, agents)
        out["warm_up"] = time.perf_counter() - t
    c = TestClient(make_app(agents))

    def timed(method, path, body=None):
        t = time.perf_counter()
        r = c.request(method, path, json=body)
        if r.status_code != 200:
            raise SystemExit(f"{path}: {r.status_code} {r.text}")
        return time.perf_counter() - t, r.json()

    out["new"], data = timed("POST", f"/api/{game}/new", options)
    gid, view = data["id"], data["view"]
    out["think_first"], _ = timed("GET", f"/api/{game}/{gid}/think")
    out["think_later"], _ = timed("GET", f"/api/{game}/{gid}/think")
    times = []
    for _ in range(moves):
        move = first_legal(game, view)
        if move is None:
            break
        t, view = timed("POST", f"/api/{game}/{gid}/move", move)
        times.append(t)
    out["move_first"] = times[0]
    out["move_later_median"] = statistics.median(times[1:]) if len(times) > 1 else None
    out["move_later_max"] = max(times[1:]) if len(times) > 1 else None
    out["moves"] = len(times)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m jaxgames.web.latency", description=__doc__.split("\n\n")[0])
    p.add_argument("game", choices=list(GAMES))
    p.add_argument("--moves", type=int, default=8)
    p.add_argument("--options", type=json.loads, default={}, help="the new game's options, JSON")
    p.add_argument("--warm-up", action="store_true", help="the server's warm-up of the page first (its default options)")
    args = p.parse_args(argv)
    result = measure(args.game, args.moves, args.options, warm=args.warm_up)
    print(json.dumps({"game": args.game, "options": args.options,
                      **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in result.items()}}))


if __name__ == "__main__":
    main()
