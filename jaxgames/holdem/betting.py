"""The betting abstraction: nine actions, their chip amounts and which are legal.

AlphaHoldem's nb = 9 actions (docs/rules/holdem.md has the worked example):

    0 fold   1 check   2 call   3 raise ½ pot   4 ¾ pot   5 1 pot   6 1½ pot   7 2 pot   8 all-in

"f × pot" is the pot-limit convention: with ``to_call`` chips to call and ``pot`` chips already
in the middle (both players' chips this hand, this street's bets included), the raise puts in
``to_call + floor(f * (pot + to_call))``: it calls, then raises by f times the pot after the
call. With nothing to call that is a bet of ``floor(f * pot)``.

Everything here is pure and jittable on one decision (scalars), or plain Python for the
static bound on a hand's length.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

FOLD, CHECK, CALL, RAISE_HALF, RAISE_THREE_QUARTERS, RAISE_POT, RAISE_ONE_HALF, RAISE_TWO, ALL_IN = range(9)
NUM_ACTIONS = 9
ACTION_NAMES = ("fold", "check", "call", "raise ½ pot", "raise ¾ pot", "raise 1 pot",
                "raise 1½ pot", "raise 2 pot", "all-in")
#: short names for histories and the terminal
ACTION_SHORT = ("f", "x", "c", "r½", "r¾", "r1", "r1½", "r2", "allin")
#: the pot fractions of actions 3..7 as exact ratios (numerator, denominator)
FRACTIONS = ((1, 2), (3, 4), (1, 1), (3, 2), (2, 1))
_NUM = np.array([n for n, _ in FRACTIONS], np.int32)
_DEN = np.array([d for _, d in FRACTIONS], np.int32)
#: the largest stack the int32 chip arithmetic allows (2 * (pot + to_call) < 2**31)
MAX_STACK = 100_000_000


def raise_increments(pot: Array, to_call: Array) -> Array:
    """int32 [5]: by how much each pot-fraction raise raises, ``floor(f * (pot + to_call))``."""
    return (jnp.asarray(_NUM) * (pot + to_call)) // jnp.asarray(_DEN)


def amounts(pot: Array, to_call: Array, stack: Array) -> Array:
    """int32 [9]: the chips each action puts in (fold 0, check 0, call ``min(to_call, stack)``,
    the five raises ``to_call + increment``, all-in ``stack``). Legal or not."""
    zero = jnp.zeros((), jnp.int32)
    head = jnp.stack([zero, zero, jnp.minimum(to_call, stack)])
    return jnp.concatenate([head, to_call + raise_increments(pot, to_call), stack[None]]).astype(jnp.int32)


def legal_mask(pot: Array, to_call: Array, stack: Array, opponent_stack: Array, min_raise: Array) -> Array:
    """bool [9]: the legal actions of a player to act (``stack`` > 0 chips behind).

    fold and call iff there is something to call (folding when one can check is refused, as
    pokerkit refuses it); check iff there is nothing to call. A pot-fraction raise iff its
    increment is at least ``min_raise`` (the last bet or raise of the street, at least one big
    blind) and it puts in less than the whole stack (all-in is its own action). All-in iff it
    puts in more than calling does. No raise at all when the opponent has no chips behind.
    """
    facing = to_call > 0
    can_raise = (stack > to_call) & (opponent_stack > 0)
    inc = raise_increments(pot, to_call)
    sized = can_raise & (inc >= min_raise) & (to_call + inc < stack)
    return jnp.concatenate([jnp.stack([facing, ~facing, facing]), sized, can_raise[None]])


def max_actions(stack: int, small_blind: int, big_blind: int) -> int:
    """The most actions one hand can take under this abstraction (equal stacks): a tight bound.

    Every street that is played takes two actions that add nothing (preflop: the small blind
    calls and the big blind checks or raises; after: check, then bet) plus one per bet or
    raise, and ends with a call or a second check: ``8 + R`` with R bets and raises in all.
    Raises may be spread over the streets in any way: a call and a bet of f × pot on the next
    street move the same chips as a raise of f × (pot + to_call). R is largest when every
    raise is the smallest, ½ pot (never below the minimum raise: ½ × (pot + to_call) >= the
    last raise, which the pot contains), until the stack no longer covers one; then one
    all-in, then the call. Checked against an exhaustive search of the betting tree in
    tests/holdem/test_game.py.
    """
    behind = [stack - big_blind, stack - big_blind]      # after the small blind limps
    pot = 2 * big_blind
    bets = [0, 0]                                       # the raises happen on one street
    raises, mover = 0, 0
    while True:
        to_call = bets[1 - mover] - bets[mover]
        put = to_call + (pot + to_call) // 2
        if put >= behind[mover]:
            if behind[mover] > to_call and behind[1 - mover] > 0:
                raises += 1                             # the last raise: all-in
            break
        behind[mover] -= put
        bets[mover] += put
        pot += put
        raises += 1
        mover = 1 - mover
    return 8 + raises
