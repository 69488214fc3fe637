"""Dealing: uniform deals, deals packed into bytes, and the constrained deal behind
``Hearts.sample_world``.

Everything here is pure and jittable. A *deal* is ``owner`` int8 [52]: the seat (0..3) that
holds each card.

The constrained deal (:func:`assign_hidden`) gives each hidden card to one of three seats so
that every seat gets exactly its number of cards and no card goes to a seat that may not hold
it. It is **exactly uniform** over all such assignments (up to the float32 rounding of the
counts it weighs by), and it never fails: when no assignment exists (a hand-made state no
game reaches) it drops the per-card constraints and keeps only the counts.

How: a dynamic programme counts, card by card, the ways to deal the cards so far with r0 to
the first seat and r1 to the second (the third gets the rest; a table ``[14, 14]``); then the
cards are dealt from the last to the first, each to a seat in proportion to the number of
ways to deal the cards before it into the room left. That is sequential sampling from the
exact conditional distributions, so each assignment has probability 1 / (their number).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.hearts.cards import HAND_SIZE, NUM_CARDS

Array = jax.Array

_CARDS = np.arange(NUM_CARDS)
_CAP = HAND_SIZE + 1          # DP tables index 0..13 cards per seat
# (c', c) pairs with c' < c: ties of random words are broken by the card index
_BEFORE = _CARDS[:, None] < _CARDS[None, :]


def _unit(words: Array) -> Array:
    """float32 uniforms in [0, 1) from uint32 words (24 bits each)."""
    return (words >> 8).astype(jnp.float32) * jnp.float32(2.0 ** -24)


def order_ranks(words: Array, group: Array) -> Array:
    """int32 [52]: each card's place in a uniformly random order of its group.

    ``words`` uint32 [52] random words, ``group`` int [52] the group of each card (cards of a
    negative group get ranks too, counted among themselves). Ties between words are broken by
    the card index, so the ranks of a group are always ``0 .. size - 1``.
    """
    same = group[:, None] == group[None, :]
    earlier = (words[:, None] < words[None, :]) | ((words[:, None] == words[None, :]) & _BEFORE)
    return (same & earlier).sum(axis=0, dtype=jnp.int32)


def deal_owner(key: jax.Array) -> Array:
    """int8 [52]: a random deal, 13 cards to each of the four seats.

    The cards are ordered by a random 26-bit key each, with the card's index in the low six
    bits so that no two keys are equal (one compare per pair, half the work of breaking ties
    separately); the first 13 go to seat 0, the next 13 to seat 1 ... It is uniform except
    when two cards draw the same 26 bits (probability below 1326 / 2**26 = 2e-5), when the
    lower card comes first: a total-variation distance below 2e-5 from the uniform deal.
    """
    keys = (rng.random_words(key, NUM_CARDS) & jnp.uint32(0xFFFFFFC0)) | jnp.arange(NUM_CARDS, dtype=jnp.uint32)
    ranks = (keys[:, None] < keys[None, :]).sum(axis=0, dtype=jnp.int32)
    return (ranks // HAND_SIZE).astype(jnp.int8)


def deal_owners(key: jax.Array, num_deals: int) -> Array:
    """int8 [num_deals, 52]: independent uniformly random deals."""
    if num_deals == 0:
        return jnp.zeros((0, NUM_CARDS), jnp.int8)
    return jax.vmap(deal_owner)(rng.split(key, num_deals))


def pack_deal(owner: Array) -> Array:
    """uint8 [..., 13]: a deal in 13 bytes; byte r holds the seats of rank r's four cards,
    two bits each (suit s in bits 2s, 2s+1)."""
    seats = jnp.asarray(owner).astype(jnp.uint8).reshape(*owner.shape[:-1], HAND_SIZE, 4)
    shifts = jnp.array([0, 2, 4, 6], jnp.uint8)
    return (seats << shifts).sum(axis=-1, dtype=jnp.uint8)


def unpack_deal(packed: Array) -> Array:
    """int8 [..., 52]: the deal packed by :func:`pack_deal`."""
    shifts = jnp.array([0, 2, 4, 6], jnp.uint8)
    seats = (packed[..., None] >> shifts) & jnp.uint8(3)
    return seats.reshape(*packed.shape[:-1], NUM_CARDS).astype(jnp.int8)


def _shift(table: Array, axis: int) -> Array:
    """``table`` moved one place up ``axis`` (row 0 zero): one more card for that seat."""
    zeros = jnp.zeros_like(jax.lax.slice_in_dim(table, 0, 1, axis=axis))
    return jnp.concatenate([zeros, jax.lax.slice_in_dim(table, 0, _CAP - 1, axis=axis)], axis=axis)


def _completions(allowed: Array) -> tuple[Array, Array]:
    """``(final [14, 14], before [52, 14, 14])``: ``table[r0, r1]`` counts the ways to deal
    the hidden cards seen so far with r0 to seat 0 and r1 to seat 1 (seat 2 the rest);
    ``final`` after every card, ``before[c]`` before card ``c``.

    Card by card, the table is multiplied by ``allowed0 z0 + allowed1 z1 + allowed2`` (the
    count's generating function): two shifts and three adds, no gathers.
    """
    weights = allowed.T.astype(jnp.float32)                  # [52, 3]
    start = jnp.zeros((_CAP, _CAP), jnp.float32).at[0, 0].set(1.0)

    def step(table, w):
        grown = w[0] * _shift(table, 0) + w[1] * _shift(table, 1) + w[2] * table
        return jnp.where(w.any(), grown, table), table

    return jax.lax.scan(step, start, weights)


def assign_hidden(allowed: Array, capacity: Array, words: Array) -> Array:
    """Deal the hidden cards to three seats, uniformly among the assignments that respect
    ``allowed`` and ``capacity``.

    Args:
      allowed:  bool [3, 52]  which of the three seats may get each card; a card no seat may
        get is not dealt (it is not hidden).
      capacity: int [3]  how many cards each seat gets (they sum to the hidden cards' count).
      words:    uint32 [52]  random words, one per card.

    Returns:
      int8 [52]: the seat (0, 1, 2) each hidden card goes to, -1 for the other cards.

    Exactly uniform: the cards are dealt from the last to the first, each to a seat with
    probability proportional to the number of ways to deal the cards before it into the
    seats' remaining room (:func:`_completions`), so every assignment has probability
    1 / (number of assignments), up to float32 rounding of those counts.
    """
    allowed = jnp.asarray(allowed, jnp.bool_)
    capacity = jnp.asarray(capacity, jnp.int32)
    hidden = allowed.any(axis=0)
    final, before = _completions(allowed)
    c0, c1 = jnp.clip(capacity[0], 0, HAND_SIZE), jnp.clip(capacity[1], 0, HAND_SIZE)
    feasible = (final[c0, c1] > 0) & (capacity.sum() == hidden.sum()) & (capacity >= 0).all()

    def deal(room, inputs):
        ok, table, u = inputs
        r0, r1 = room[0], room[1]
        ways = jnp.stack([
            jnp.where(ok[0] & (r0 > 0), table[jnp.maximum(r0 - 1, 0), r1], 0.0),
            jnp.where(ok[1] & (r1 > 0), table[r0, jnp.maximum(r1 - 1, 0)], 0.0),
            jnp.where(ok[2], table[r0, r1], 0.0),
        ])
        cum = jnp.cumsum(ways)
        seat = jnp.argmax(cum > u * cum[-1]).astype(jnp.int32)
        seat = jnp.where(ok.any(), seat, -1)
        return room - jnp.stack([seat == 0, seat == 1]).astype(jnp.int32), seat

    _, seats = jax.lax.scan(deal, jnp.stack([c0, c1]), (allowed.T, before, _unit(words)), reverse=True)
    # Fallback (no consistent assignment): the counts alone, in one random order of the cards.
    overall = order_ranks(words, jnp.where(hidden, 0, -1))
    loose = jnp.where(overall < capacity[0], 0, jnp.where(overall < capacity[0] + capacity[1], 1, 2))
    seat = jnp.where(feasible, seats, loose)
    return jnp.where(hidden, seat, -1).astype(jnp.int8)


def count_assignments(allowed: Array, capacity: Array) -> Array:
    """float32 []: the number of assignments :func:`assign_hidden` chooses among (0 if none)."""
    allowed = jnp.asarray(allowed, jnp.bool_)
    capacity = jnp.asarray(capacity, jnp.int32)
    final, _ = _completions(allowed)
    ok = (capacity.sum() == allowed.any(axis=0).sum()) & (capacity >= 0).all() & (capacity <= HAND_SIZE).all()
    return jnp.where(ok, final[jnp.clip(capacity[0], 0, HAND_SIZE), jnp.clip(capacity[1], 0, HAND_SIZE)], 0.0)


#: random words :func:`assign_hidden` reads
SAMPLE_WORDS = NUM_CARDS
