"""What a hold'em player does at the first decision of a hand, and whether its cards change it.

    python -m jaxgames.holdem.profile runs/holdem/full-seed0 runs/holdem/full-seed1
    python -m jaxgames.holdem.profile runs/holdem/quick-seed0 --bots --deals 4000

Four preflop situations, at the table the player was trained at: it opens in the small blind
(first to act), or in the big blind it faces the small blind's limp (a call), a pot-size
raise, or an all-in. In each: the player's probabilities of fold, check or call, a raise (½
to 2 pots) and all-in, averaged over random deals; then the same split for the strongest and
the weakest fifth of those deals (preflop equity against a random hand). A player that
ignores its cards (the call bot, a policy that collapsed to one line) shows the same
numbers in both fifths; a sound one raises more and folds less with strong hands.

Why it is worth a table: matches against the baselines say how much an agent wins, not how it
plays. Two of the three full-preset agents that lost to the equity bot limped every hand in
the small blind and called every pot raise whatever their cards (docs/lab/holdem.md); this
shows it in a second. ``train.holdem`` puts the table of its final agent in the run's report.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any, Callable, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import betting
from jaxgames.holdem.equity import equity
from jaxgames.player import Player

__all__ = ["COLUMNS", "SITUATIONS", "Profile", "main", "markdown", "preflop_profile"]

#: (name, the small blind's first action or None where the small blind itself decides)
SITUATIONS = (("opens in the small blind", None),
              ("faces a limp in the big blind", betting.CALL),
              ("faces a pot raise in the big blind", betting.RAISE_POT),
              ("faces all-in in the big blind", betting.ALL_IN))
#: the action groups of the table: fold, check or call, a raise of ½ to 2 pots, all-in
COLUMNS = ("fold", "check/call", "raise", "all-in")
_GROUP = np.zeros((betting.NUM_ACTIONS, len(COLUMNS)), np.float32)
_GROUP[betting.FOLD, 0] = _GROUP[betting.CHECK, 1] = _GROUP[betting.CALL, 1] = 1
_GROUP[[betting.RAISE_HALF, betting.RAISE_THREE_QUARTERS, betting.RAISE_POT, betting.RAISE_ONE_HALF,
        betting.RAISE_TWO], 2] = 1
_GROUP[betting.ALL_IN, 3] = 1
#: the share of deals in each of the strongest and the weakest group
FIFTH = 0.2


@chex.dataclass(frozen=True)
class Profile:
    """One player's first decisions: ``all``, ``strong`` and ``weak`` are float [4 situations,
    4 columns] (:data:`SITUATIONS` by :data:`COLUMNS`): the mean probabilities over every
    deal, the strongest fifth and the weakest fifth (by preflop equity)."""
    all: np.ndarray
    strong: np.ndarray
    weak: np.ndarray


def preflop_profile(env, probs: Callable[..., jax.Array], params: Any, key: jax.Array, *,
                    num_deals: int = 2_000, equity_samples: int = 256) -> Profile:
    """The :class:`Profile` of the player whose action probabilities are ``probs(params,
    state, key)`` (a :class:`jaxgames.Player`'s ``probs``) over ``num_deals`` random deals of
    ``env``, each met in every situation; the seat in the big blind holds the same cards in
    the three situations it decides."""
    if not isinstance(num_deals, int) or num_deals < 5:
        raise ValueError(f"num_deals must be an integer >= 5 (a fifth of them is a group), got {num_deals!r}")
    legal_first = np.asarray(env.init(jax.random.key(0)).legal_action_mask)
    for name, action in SITUATIONS:
        if action is not None and not legal_first[action]:
            raise ValueError(f"the small blind cannot {betting.ACTION_NAMES[action]} first at this table, "
                             f"so the situation '{name}' does not arise")
    k_deal, k_policy, k_equity = jax.random.split(key, 3)
    chosen, strength = _measure(env, probs, num_deals, equity_samples)(params, k_deal, k_policy, k_equity)
    grouped = np.asarray(chosen, np.float64) @ _GROUP            # [situations, deals, columns]
    strength = np.asarray(strength)                              # [situations, deals]
    n = max(1, int(round(FIFTH * num_deals)))
    order = np.argsort(strength, axis=1, kind="stable")
    pick = lambda idx: np.take_along_axis(grouped, idx[..., None], axis=1).mean(1)
    return Profile(all=grouped.mean(1), strong=pick(order[:, -n:]), weak=pick(order[:, :n]))


@functools.lru_cache(maxsize=8)
def _measure(env, probs_fn, num_deals: int, equity_samples: int):
    """One jitted program: every situation's probabilities [S, D, 9] and the decider's preflop
    equity [S, D] (each seat's computed once: the big blind holds the same cards in the three
    situations it decides)."""

    def situation(params, state, first, key):
        state = jax.lax.cond(first < 0, lambda s: s, lambda s: env.step(s, first), state)
        return probs_fn(params, state, key)

    def seat_equity(state, seat, key):
        obs = env.observe(state, seat)
        return equity(obs.hole, obs.board, key, num_samples=equity_samples)

    firsts = jnp.array([-1 if a is None else a for _, a in SITUATIONS], jnp.int32)
    # the small blind decides the first situation, the big blind the others
    decider_is_bb = jnp.array([a is not None for _, a in SITUATIONS])

    @jax.jit
    def run(params, k_deal, k_policy, k_equity):
        states = jax.vmap(env.init)(jax.random.split(k_deal, num_deals))
        per_deal = jax.vmap(situation, in_axes=(None, 0, None, 0))
        probs = jax.vmap(per_deal, in_axes=(None, None, 0, None))(
            params, states, firsts, jax.random.split(k_policy, num_deals))
        small_blind = states.current_player                              # first to act preflop
        both = jnp.stack([small_blind, 1 - small_blind])                 # [2, D]: SB, BB
        per_seat = jax.vmap(jax.vmap(seat_equity, in_axes=(0, 0, 0)), in_axes=(None, 0, None))
        strength = per_seat(states, both, jax.random.split(k_equity, num_deals))   # [2, D]
        return probs, strength[decider_is_bb.astype(jnp.int32)]

    return run


def markdown(profile: Profile) -> str:
    """The profile as a markdown table: a row per situation, the mean of every deal and, for
    raise (raise or all-in) and fold, the strongest and the weakest fifth."""
    head = ("| situation | " + " | ".join(COLUMNS)
            + " | raise or all-in: strong / weak fifth | fold: strong / weak fifth |")
    rows = [head, "|" + " --- |" * (len(COLUMNS) + 3)]
    pct = lambda x: f"{100 * x:.0f}%"
    for i, (name, _) in enumerate(SITUATIONS):
        cells = [pct(x) for x in profile.all[i]]
        aggressive = lambda m: m[i, 2] + m[i, 3]
        cells.append(f"{pct(aggressive(profile.strong))} / {pct(aggressive(profile.weak))}")
        cells.append(f"{pct(profile.strong[i, 0])} / {pct(profile.weak[i, 0])}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


# -- the command line ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m jaxgames.holdem.profile",
                                description="What hold'em agents (and the baseline bots) do at the first "
                                            "decision of a hand, with strong and with weak cards.")
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="run folders of python -m train.holdem (runs/holdem/<run>); their newest checkpoint")
    p.add_argument("--which", choices=("latest", "best"), default="latest",
                   help="the run's newest checkpoint (default) or its best/ parameters")
    p.add_argument("--bots", action="store_true", help="profile the baseline bots too")
    p.add_argument("--deals", type=int, default=2_000, help="random deals (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals (default 0)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from jaxgames.holdem import Holdem, bots
    from jaxgames.holdem.agent import AgentError, load_agent

    parser = _parser()
    args = parser.parse_args(argv)
    if not args.runs and not args.bots:
        parser.error("name a run folder (or --bots)")
    if args.deals < 5:
        parser.error(f"--deals must be >= 5, got {args.deals}")
    players: list[tuple[Any, Player]] = []
    for run in args.runs:
        try:
            agent = load_agent(run, which=args.which)
        except AgentError as e:
            parser.error(str(e))
        players.append((agent.env, agent))
    if args.bots:
        env = players[0][0] if players else Holdem()
        players += [(env, bots.make_bot(env, name)) for name in bots.BOT_NAMES]
    key = jax.random.key(args.seed)
    for env, player in players:
        print(f"## {player.name}\n")
        profile = preflop_profile(env, player.probs, player.params, key, num_deals=args.deals)
        print(markdown(profile) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
