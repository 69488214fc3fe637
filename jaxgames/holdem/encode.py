"""AlphaHoldem's input encoding: one seat's observation as a card tensor and an action tensor.

Built from an :class:`~jaxgames.holdem.game.Observation` alone (``env.observe(state, p)``), so
the opponent's hole cards cannot reach it: the observation never holds them.

Cards, int8 ``[6, 4, 13]`` (:data:`CARD_SHAPE`): six channels, each a ``[suit, rank]`` one-hot
plane (card ``4 * rank + suit``, ``cards.py``; suits ♣ ♦ ♥ ♠, ranks 2 … A):

    0 hole    the observer's two hole cards
    1 flop    the three flop cards (empty preflop)
    2 turn    3 river
    4 public  the board dealt so far (flop, turn, river)
    5 all     hole + public

Actions, int8 ``[24, 4, 9]`` (:data:`ACTION_SHAPE`): channel ``street * 6 + slot`` for the 4
streets and 6 action slots per street, each a ``[4, 9]`` plane over the nine actions:

    row 0  the action, if the observing player (``obs.player``) took it (one-hot)
    row 1  the action, if its opponent took it
    row 2  rows 0 + 1 (the action whoever took it)
    row 3  the legal mask the mover chose from at that decision

Rows are relative to the observer, never absolute seats: the same history reads with rows 0
and 1 swapped from the other seat. Slots of decisions not taken yet are zero.

**Streets with more than six actions.** The source allows at most six actions a street, our
betting can take more (``betting.max_actions``: up to ten on one street with the default
stacks). Slots 0-4 hold the street's first five actions and slot 5 holds its *latest* action,
so the newest decision and the mask it was chosen from stay visible; the actions between (the
6th to the second-to-last) are dropped. With six or fewer actions slot k is simply the k-th.

Everything is jittable and vmappable (one observation in, add a batch with ``jax.vmap``); the
history is handled as one vectorised pass (each row's slot from a cumulative count of the rows
on its street), no loop over it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.holdem import betting
from jaxgames.holdem import cards as C
from jaxgames.holdem.game import Observation

Array = jax.Array

NUM_STREETS = 4   # preflop, flop, turn, river: streets that take actions
NUM_SLOTS = 6     # the source's "at most 6 actions a street"
CARD_CHANNELS = ("hole", "flop", "turn", "river", "public", "all")
ACTION_ROWS = ("mine", "theirs", "sum", "legal")
CARD_SHAPE = (len(CARD_CHANNELS), C.NUM_SUITS, C.NUM_RANKS)                          # (6, 4, 13)
ACTION_SHAPE = (NUM_STREETS * NUM_SLOTS, len(ACTION_ROWS), betting.NUM_ACTIONS)     # (24, 4, 9)

# which of the 7 visible cards (hole 0-1, board 2-6) feed each card channel: int8 [6, 7]
_CARD_CHANNEL_SOURCES = np.array([
    [1, 1, 0, 0, 0, 0, 0],   # hole
    [0, 0, 1, 1, 1, 0, 0],   # flop
    [0, 0, 0, 0, 0, 1, 0],   # turn
    [0, 0, 0, 0, 0, 0, 1],   # river
    [0, 0, 1, 1, 1, 1, 1],   # public
    [1, 1, 1, 1, 1, 1, 1],   # hole + public
], np.int32)


def card_tensor(obs: Observation) -> Array:
    """int8 [6, 4, 13]: the observer's cards and the board, one ``[suit, rank]`` plane per
    channel (module docstring). Cards not dealt (-1) set nothing."""
    seen = jnp.concatenate([obs.hole, obs.board]).astype(jnp.int32)              # [7], -1 = none
    onehot = (seen[:, None] == jnp.arange(C.NUM_CARDS)).astype(jnp.int32)         # [7, 52]
    planes = jnp.asarray(_CARD_CHANNEL_SOURCES) @ onehot                          # [6, 52] card ids
    # card = 4 * rank + suit: [52] -> [rank, suit] -> [suit, rank]
    return planes.reshape(-1, C.NUM_RANKS, C.NUM_SUITS).swapaxes(1, 2).astype(jnp.int8)


def action_slots(history: Array) -> tuple[Array, Array]:
    """``(channel int32 [H], kept bool [H])``: where each history row (``[H, 3]``: seat,
    action, street; -1 rows after the last) goes in the action tensor, and whether it is
    shown at all (padding rows and the middle of a long street are not).

    A row's index on its street (k) is the count of earlier rows on that street; slot k for
    k < 5, and slot 5 for the street's last row (module docstring)."""
    street = history[:, 2].astype(jnp.int32)
    valid = history[:, 0] >= 0
    on = (street[:, None] == jnp.arange(NUM_STREETS)) & valid[:, None]           # [H, 4]
    on = on.astype(jnp.int32)
    before = jnp.cumsum(on, axis=0) - on                                          # [H, 4] earlier rows
    index = (before * on).sum(axis=1)                                             # [H] k on its street
    total = (on.sum(axis=0)[None, :] * on).sum(axis=1)                            # [H] rows on its street
    last = index == total - 1
    slot = jnp.minimum(index, NUM_SLOTS - 1)
    kept = valid & ((index < NUM_SLOTS - 1) | last)
    return jnp.clip(street, 0, NUM_STREETS - 1) * NUM_SLOTS + slot, kept


def action_tensor(obs: Observation) -> Array:
    """int8 [24, 4, 9]: the betting so far, one ``[4, 9]`` plane per (street, slot), rows
    relative to ``obs.player`` (module docstring)."""
    channel, kept = action_slots(obs.history)
    seat = obs.history[:, 0].astype(jnp.int32)
    taken = (obs.history[:, 1, None].astype(jnp.int32) == jnp.arange(betting.NUM_ACTIONS))  # [H, 9]
    mine = seat == obs.player.astype(jnp.int32)
    rows = jnp.stack([taken & mine[:, None], taken & ~mine[:, None], taken,
                      obs.history_legal], axis=1).astype(jnp.int32)               # [H, 4, 9]
    # each kept row lands on its own channel (slots are distinct within a street), so the
    # one-hot product places rows without a scatter and never adds two together
    place = ((channel[:, None] == jnp.arange(ACTION_SHAPE[0])) & kept[:, None]).astype(jnp.int32)  # [H, 24]
    return jnp.einsum("hc,hrk->crk", place, rows).astype(jnp.int8)


def encode(obs: Observation) -> tuple[Array, Array]:
    """``(cards int8 [6, 4, 13], actions int8 [24, 4, 9])`` of one observation."""
    return card_tensor(obs), action_tensor(obs)


__all__ = [
    "ACTION_ROWS",
    "ACTION_SHAPE",
    "CARD_CHANNELS",
    "CARD_SHAPE",
    "NUM_SLOTS",
    "NUM_STREETS",
    "action_slots",
    "action_tensor",
    "card_tensor",
    "encode",
]
