"""List the shipped agents with their measured strength, or measure one again.

    python -m jaxgames.pretrained                                      # one line per agent
    python -m jaxgames.pretrained --evaluate holdem alphaholdem-small [--deals 2000] [--seed 0]
    python -m jaxgames.pretrained --evaluate hex az-11x11 --deals 200     # games, in Hex: the card's scale

``--evaluate`` plays the card's evaluation again (the game's hook: for hold'em the duplicate
match against each baseline bot the card lists) over ``--deals`` deals, and prints the card's
figure and the measured one side by side; ``agree`` says whether the 95% interval of their
difference covers zero (the intervals' half-widths combined; a share of games won shows its
Wilson interval, asymmetric, and agrees by half its width). A bad flag or an agent that cannot be used: one line, exit status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from jaxgames import cli_args
from jaxgames.pretrained import hooks, store
from jaxgames.pretrained.card import PretrainedError

PROG = "python -m jaxgames.pretrained"

__all__ = ["main", "strength_line"]


def number(x: float) -> str:
    """A signed figure as a card's table shows it: thousands separated, whole above 100."""
    return f"{x:+,.0f}" if abs(x) >= 100 else f"{x:+.3g}"


def result_text(result: dict) -> str:
    """``+14,959 ± 500``; a share of games won with its (asymmetric) interval: ``98.0% (95.0-99.2%)``."""
    if {"low", "high", "games"} <= result.keys():
        return f"{result['mean']:.1%} ({result['low']:.1%}-{result['high']:.1%})"
    return f"{number(result['mean'])} ± {number(result['ci95'])[1:]}"


def counted(evaluation: dict, n: int | None = None) -> str:
    """``50,000 deals``, or ``200 games`` for a game without deals (the card has ``games``)."""
    n = evaluation["deals"] if n is None else n
    return f"{n:,} {'games' if 'games' in evaluation else 'deals'}"


def strength_line(card: dict) -> str:
    """``game/name: vs random +14,959 ± 500, ... mbb/hand over 50,000 deals``: one line."""
    ev = card["evaluation"]
    vs = ", ".join(f"{bot} {result_text(r)}" for bot, r in ev["baselines"].items())
    return f"{card['game']}/{card['name']}: vs {vs} {ev['unit']} over {counted(ev)}"


def list_agents() -> int:
    cards = store.available()
    if not cards:
        print(f"no shipped agents in {store.AGENTS}")
    for card in cards:
        print(strength_line(card))
    return 0


def evaluate(game: str, name: str, *, deals: int | None, seed: int) -> int:
    card = store.card(game, name)
    hook = hooks.hook(game)
    deals = hook.DEFAULT_DEALS if deals is None else deals
    if deals > hook.MAX_DEALS:
        raise PretrainedError(f"--deals {deals:,}: {game} measures at most {hook.MAX_DEALS:,} in one run "
                              f"({hook.MAX_DEALS_WHY}); run several --seed and pool them")
    player = store.load(game, name)
    ev = card["evaluation"]
    print(f"{game}/{name}: measuring again over {counted(ev, deals)} (seed {seed}), {ev['unit']}; the card's "
          f"figures are over {counted(ev)}")
    start = time.perf_counter()
    measured = hook.measure(player, baselines=list(ev["baselines"]), deals=deals, seed=seed)
    rows = [("baseline", f"card ({counted(ev)})", f"measured ({counted(ev, deals)})", "agree")]
    for bot, was in ev["baselines"].items():
        now = measured["baselines"][bot]
        agree = abs(now["mean"] - was["mean"]) <= math.hypot(now["ci95"], was["ci95"])
        rows.append((bot, result_text(was), result_text(now), "yes" if agree else "NO"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))))
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="The trained agents shipped with jaxgames: "
                                                       "list them, or measure one's card again.")
    p.add_argument("--evaluate", nargs=2, metavar=("GAME", "NAME"),
                   help="play the card's evaluation of the agent again and compare")
    p.add_argument("--deals", type=cli_args.count(2, 10**9, "the interval needs two deals"), default=None,
                   metavar="N",
                   help="with --evaluate: deals per baseline, games in Hex (default: the game's, hold'em "
                        "2,000, Hex 50; the card's own count measures at the card's scale)")
    p.add_argument("--seed", type=cli_args.seed, default=0, help="with --evaluate: the deals' seed (0)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.evaluate is None and (args.deals is not None or args.seed != 0):
        parser.error("argument --deals/--seed: only with --evaluate GAME NAME")
    try:
        if args.evaluate is None:
            return list_agents()
        game, name = args.evaluate
        return evaluate(game, name, deals=args.deals, seed=args.seed)
    except PretrainedError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
