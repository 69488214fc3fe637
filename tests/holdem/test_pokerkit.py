"""Hold'em rules against pokerkit, an independent implementation (test-only dependency).

Random hands are played in pokerkit (tournament mode, the same blinds and stacks, the same
hole cards and board dealt explicitly) by a random player that picks among the actions our
rules doc says are legal, computed here in plain Python from pokerkit's own state: fold and
check/call from pokerkit's ``can_fold``/``can_check_or_call``, a pot-fraction raise iff its
raise-to amount (the doc's formula on pokerkit's pot and bets) lies in pokerkit's
``[min, max)`` completion range, all-in iff pokerkit can raise at all (to its max). The same
deals and actions are then replayed through ``Holdem`` in one jitted batch, which must agree
at every decision on the legal mask and the seat to act, after every action on the stacks,
and at the end on every chip won or lost (pokerkit's payoffs).

Some deals have unequal stacks (calls all-in for less, uncalled chips at a showdown) and some
a board that plays (a straight flush or a broadway straight on the board: split pots); the
random player favours all-ins. Counts of each case are asserted, so the situations the test
claims to cover occur.

    python tests/holdem/test_pokerkit.py --hands 50000     # the long version
"""

from __future__ import annotations

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pokerkit
import pytest

import jaxgames
from jaxgames.holdem import cards as C

AUTOMATIONS = tuple(getattr(pokerkit.Automation, name) for name in (
    "ANTE_POSTING", "BET_COLLECTION", "BLIND_OR_STRADDLE_POSTING",
    "HOLE_CARDS_SHOWING_OR_MUCKING", "HAND_KILLING", "CHIPS_PUSHING", "CHIPS_PULLING",
    "RUNOUT_COUNT_SELECTION"))
# The doc's sizes, written out again here: raise-to = the bet to call + floor(f * (pot + to_call))
SIZES = ((1, 2), (3, 4), (1, 1), (3, 2), (2, 1))
# The random player's weights: fold, check, call, five raises, all-in (all-ins favoured).
WEIGHTS = np.array([0.6, 3, 3, 1, 1, 1, 1, 1, 1.2])
# Boards that play for both seats whatever the hole cards: split pots
SPLIT_BOARDS = ("AsKsQsJsTs", "9h8h7h6h5h", "AcKdQhJsTc")


def _pk(card: int) -> str:
    return C.card_name(card)


def pk_new_hand(env, deck: np.ndarray, button: int, stacks: np.ndarray):
    """A pokerkit hand; pokerkit's heads-up player 1 is the button (small blind)."""
    seats = [1 - button, button]  # pokerkit index -> our seat
    state = pokerkit.NoLimitTexasHoldem.create_state(
        AUTOMATIONS, True, 0, (env.small_blind, env.big_blind), env.big_blind,
        tuple(int(stacks[s]) for s in seats), 2)
    for s in seats:
        state.deal_hole(_pk(deck[2 * s]) + _pk(deck[2 * s + 1]))
    return state, seats


def pk_legal(state, seats, start):
    """Our doc's legal mask, the raise-to amounts, from pokerkit's state."""
    i = state.actor_index
    committed = [start[s] - state.stacks[j] for j, s in enumerate(seats)]  # per pokerkit index
    pot = sum(committed)
    to_call = max(state.bets) - state.bets[i]
    mask = np.zeros(9, bool)
    to = np.zeros(9, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mask[0] = state.can_fold()
    if state.can_check_or_call():
        mask[1] = state.checking_or_calling_amount == 0
        mask[2] = state.checking_or_calling_amount > 0
    if state.can_complete_bet_or_raise_to():
        lo = state.min_completion_betting_or_raising_to_amount
        hi = state.max_completion_betting_or_raising_to_amount
        for k, (num, den) in enumerate(SIZES):
            to[3 + k] = max(state.bets) + (num * (pot + to_call)) // den
            mask[3 + k] = lo <= to[3 + k] < hi
        to[8], mask[8] = hi, True
    return mask, to


def play_pokerkit(env, rng: np.random.Generator, num_hands: int) -> dict:
    """Random hands in pokerkit: the deals, actions, and what pokerkit says at every step."""
    h = env.max_steps
    rec = {k: [] for k in ("deck", "button", "stacks", "actions", "actors", "masks", "after",
                            "length", "payoffs")}
    stats = dict(showdowns=0, splits=0, folds=0, all_in_hands=0, short_all_in_raises=0,
                 short_calls=0, uncalled_at_showdown=0, unequal=0, longest=0,
                 pot_raises_checked=0)
    for n in range(num_hands):
        deck = rng.permutation(52).astype(np.int8)
        if n % 10 == 9:  # a board that plays
            board = C.parse_cards(SPLIT_BOARDS[(n // 10) % len(SPLIT_BOARDS)])
            rest = [c for c in deck if c not in board]
            deck = np.array(rest[:4] + board + rest[4:], np.int8)
        button = int(rng.integers(2))
        if n % 2:
            stacks = rng.integers(env.big_blind + 1, env.stack + 1, size=2)
            stats["unequal"] += 1
        else:
            stacks = np.full(2, env.stack)
        state, seats = pk_new_hand(env, deck, button, stacks)
        actions, actors, masks, after = [], [], [], []
        committed = [int(stacks[s]) - state.stacks[seats.index(s)] for s in range(2)]  # the blinds
        dealt = burnt = 0
        while state.status:
            mask, to = pk_legal(state, seats, stacks)
            i = state.actor_index
            seat = seats[i]
            if mask[8]:
                # our "1 pot" is pokerkit's pot-sized raise wherever neither is clamped
                pot_to = state.pot_completion_betting_or_raising_to_amount
                if state.min_completion_betting_or_raising_to_amount < pot_to < to[8]:
                    assert pot_to == to[5], (pot_to, to[5])
                    stats["pot_raises_checked"] += 1
            w = WEIGHTS * mask
            a = int(rng.choice(9, p=w / w.sum()))
            if a == 8:
                full = max(state.bets) + max(state.completion_betting_or_raising_amount,
                                             state.street.min_completion_betting_or_raising_amount)
                stats["short_all_in_raises"] += int(to[8] < full)
            if a == 2:
                stats["short_calls"] += int(state.checking_or_calling_amount < max(state.bets) - state.bets[i])
            actors.append(seat)
            masks.append(mask)
            actions.append(a)
            if a == 0:
                state.fold()
            elif a in (1, 2):
                committed[seat] += state.checking_or_calling_amount
                state.check_or_call()
            else:
                committed[seat] += int(to[a]) - state.bets[i]
                state.complete_bet_or_raise_to(int(to[a]))
            while state.status and (state.can_burn_card() or state.can_deal_board()):
                if state.can_burn_card():  # burnt cards come from never-dealt positions
                    state.burn_card(_pk(deck[9 + burnt]))
                    burnt += 1
                    continue
                k = 3 if dealt == 0 else 1
                state.deal_board("".join(_pk(c) for c in deck[4 + dealt:4 + dealt + k]))
                dealt += k
            after.append([state.stacks[seats.index(s)] for s in range(2)])
        payoffs = [state.payoffs[seats.index(s)] for s in range(2)]
        went_to_showdown = actions[-1] != 0
        stats["showdowns"] += went_to_showdown
        stats["folds"] += not went_to_showdown
        stats["splits"] += went_to_showdown and payoffs == [0, 0]
        stats["all_in_hands"] += 8 in actions
        stats["uncalled_at_showdown"] += went_to_showdown and committed[0] != committed[1]
        stats["longest"] = max(stats["longest"], len(actions))
        assert len(actions) <= h, f"pokerkit played {len(actions)} actions, above the bound {h}"
        pad = h - len(actions)
        rec["deck"].append(deck)
        rec["button"].append(button)
        rec["stacks"].append(stacks)
        rec["actions"].append(actions + [0] * pad)
        rec["actors"].append(actors + [-1] * pad)
        rec["masks"].append(masks + [np.zeros(9, bool)] * pad)
        rec["after"].append(after + [[0, 0]] * pad)
        rec["length"].append(len(actions))
        rec["payoffs"].append(payoffs)
    out = {k: np.asarray(v) for k, v in rec.items()}
    out["stats"] = stats
    return out


def make_replay(env):
    """Jitted: the recorded hands through ``Holdem``: per step the seat to act and legal mask
    before it and the stacks after it; the summed rewards and whether each hand ended."""

    def one(deck, button, stacks, actions):
        state = env.deal(deck, button, stacks)

        def body(s, a):
            before = (s.current_player, s.legal_action_mask)
            s = env.step(s, a)
            return s, (*before, s.stacks, s.rewards, s.terminated)

        final, (actors, masks, after, rewards, ended) = jax.lax.scan(body, state, actions)
        return actors, masks, after, rewards.sum(0), ended, final.truncated

    return jax.jit(jax.vmap(one))


def compare(env, rec, replay) -> None:
    actors, masks, after, rewards, ended, truncated = jax.tree_util.tree_map(np.asarray, replay(
        jnp.asarray(rec["deck"]), jnp.asarray(rec["button"], jnp.int32), jnp.asarray(rec["stacks"], jnp.int32),
        jnp.asarray(rec["actions"], jnp.int32)))
    length = rec["length"]
    steps = np.arange(env.max_steps)[None, :]
    live = steps < length[:, None]
    last = steps == length[:, None] - 1
    for n in np.flatnonzero(((masks != rec["masks"]).any(-1) & live).any(1))[:1]:
        t = int(np.argmax((masks[n] != rec["masks"][n]).any(-1)))
        raise AssertionError(f"hand {n} step {t}: legal mask {masks[n, t].astype(int)} vs pokerkit "
                             f"{rec['masks'][n, t].astype(int)}; actions {rec['actions'][n, :length[n]]}, "
                             f"stacks {rec['stacks'][n]}, button {rec['button'][n]}")
    np.testing.assert_array_equal(np.where(live, actors, -1), rec["actors"], err_msg="seat to act")
    np.testing.assert_array_equal(np.where((live & ~last)[..., None], after, 0),
                                  np.where((live & ~last)[..., None], rec["after"], 0), err_msg="stacks")
    np.testing.assert_array_equal(rewards, rec["payoffs"].astype(np.float32), err_msg="chips won")
    np.testing.assert_array_equal(ended, steps >= length[:, None] - 1, err_msg="the hand ends with pokerkit's")
    assert not truncated.any()


@pytest.mark.parametrize("options, num_hands", [
    ({}, 1500),                                                 # the competition setting
    ({"stack": 1000, "small_blind": 7, "big_blind": 13}, 500),  # odd chips: the floors matter
])
def test_pokerkit_agrees_on_random_hands(options, num_hands):
    env = jaxgames.make("holdem", **options)
    rec = play_pokerkit(env, np.random.default_rng(0), num_hands)
    compare(env, rec, make_replay(env))
    stats = rec["stats"]
    for case in ("showdowns", "splits", "folds", "all_in_hands", "short_all_in_raises", "short_calls",
                 "uncalled_at_showdown", "pot_raises_checked"):
        assert stats[case] > 0, f"no {case} among {num_hands} hands: {stats}"


def main(argv=None):
    parser = argparse.ArgumentParser(description="the long pokerkit cross-check")
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    env = jaxgames.make("holdem")
    replay = make_replay(env)
    rec = play_pokerkit(env, np.random.default_rng(args.seed), args.hands)
    compare(env, rec, replay)
    print(f"{args.hands} hands agree; {rec['stats']}")


if __name__ == "__main__":
    main()
