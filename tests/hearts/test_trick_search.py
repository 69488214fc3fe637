"""The trick search with any leaf value (jaxgames.hearts.trick_maxn) against maxn.py.

The value is a hand-written per-seat function (points taken so far, the hearts and the Q♠
held, voids) with dyadic weights, so every value is exact in float32 whatever order XLA adds
in, and the comparisons with ``maxn.maxn_search(depth=4, max_branching=13, stop=trick over)``
are exact, ties (broken to the lowest card) included. Positions: end games built by hand at
each place in a trick (the lead, the 2nd, 3rd and 4th card), whose leaf counts are worked out
by hand below; a lead with 20,736 legal leaves, past the default cap; positions of random
standard games (the first trick's rules, a finished game).

Jitted once per module (``chex.assert_max_traces``): the search and maxn.py on one batch, the
search with its parameters vmapped too, an exact-cap search, the policy with PIMC around the
search.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.hearts import bots as B
from jaxgames.hearts import trick_maxn as T
from jaxgames.hearts.cards import HEARTS, NUM_CARDS, NUM_PLAYERS, POINTS, QUEEN_OF_SPADES, RANK, SUIT, parse_card
from jaxgames.search import maxn
from jaxgames.search.pimc import pimc_policy

ENV = jaxgames.make("hearts")      # the standard variant: its rules are a superset of the paper's
BATCH = 16
CHUNK = 64                         # small: a batch's leaves take many chunks, chunks span positions

chex.clear_trace_counter()


# -- the value: exact in float32 ------------------------------------------------------------------


def seat_value(params, state, seat):
    """Minus (points taken + a quarter of the held hearts' ranks + 4 for the Q♠ held - half a
    point per void), times ``params`` (a power of two in the tests): dyadic, exact."""
    hand = state.owner == seat.astype(jnp.int8)
    hearts = jnp.where(hand & jnp.asarray(SUIT == HEARTS), jnp.asarray(RANK, jnp.float32) + 1, 0.0).sum()
    voids = (hand.reshape(13, 4).sum(0) == 0).sum()
    points = state.points.astype(jnp.float32)[seat]
    return -params * (points + 0.25 * hearts + 4.0 * hand[QUEEN_OF_SPADES] - 0.5 * voids)


VALUE = T.per_seat(seat_value)


def _search(state, params):
    return T.trick_search(ENV, VALUE, state, params, chunk=CHUNK)


def _maxn(state, params):
    return maxn.maxn_search(ENV, state, params, depth=4, max_branching=13, value_fn=VALUE, stop=B.trick_over)


def _exact(state, params):
    return T.trick_search(ENV, VALUE, state, params, max_leaves=T.MAX_MAX_LEAVES, chunk=1024)


SEARCH = jax.jit(jax.vmap(chex.assert_max_traces(_search, n=1), in_axes=(0, None)))
# params vmapped with the states: the search runs position by position (a plain vmap)
def _search_per_params(state, params):
    return T.trick_search(ENV, VALUE, state, params, chunk=CHUNK)


SEARCH_PER_PARAMS = jax.jit(jax.vmap(chex.assert_max_traces(_search_per_params, n=1)))
MAXN = jax.jit(jax.vmap(chex.assert_max_traces(_maxn, n=1), in_axes=(0, None)))
EXACT = jax.jit(jax.vmap(chex.assert_max_traces(_exact, n=1), in_axes=(0, None)))
STEP = jax.jit(ENV.step)
INIT = jax.jit(ENV.init)
ONE, TWO = jnp.float32(1.0), jnp.float32(2.0)


# -- positions ------------------------------------------------------------------------------------


def cards(text: str) -> list[int]:
    return [parse_card(w) for w in text.split()]


def position(hands, *, leader: int, table: str = "", taken=None):
    """A play-phase state of ENV built by hand (as in test_maxn_hearts.py): ``hands`` the four
    seats' cards, ``table`` the current trick's cards in order from ``leader``, ``taken``
    {seat: cards} of earlier tricks (every point card played must be listed; the other played
    cards go to ``leader``'s pile)."""
    owner = np.full(NUM_CARDS, -1, np.int8)
    for seat, text in enumerate(hands):
        for c in cards(text):
            assert owner[c] == -1
            owner[c] = seat
    on_table = cards(table)
    taker = {c: seat for seat, text in (taken or {}).items() for c in cards(text)}
    earlier = [c for c in range(NUM_CARDS) if owner[c] < 0 and c not in on_table]
    assert all(c in taker for c in earlier if POINTS[c] > 0), "say who took each point card"
    base, k = len(earlier), len(on_table)
    assert base % 4 == 0 and k < 4
    for j in range(4):
        assert (owner == (leader + j) % 4).sum() == (52 - base) // 4 - (j < k)
    played_by = np.full(NUM_CARDS, -1, np.int8)
    taken_by = np.full(NUM_CARDS, -1, np.int8)
    play_order = np.full(NUM_CARDS, -1, np.int8)
    for i, c in enumerate(earlier):
        played_by[c] = taken_by[c] = taker.get(c, leader)
        play_order[c] = i
    trick = np.full(4, -1, np.int8)
    for j, c in enumerate(on_table):
        seat = (leader + j) % 4
        played_by[c], play_order[c], trick[seat] = seat, base + j, c
    points = np.array([POINTS[taken_by == s].sum() for s in range(4)], np.int16)
    state = ENV.from_deal(np.arange(NUM_CARDS) % 4, pass_dir=0)
    state = state.replace(
        owner=jnp.asarray(owner), played_by=jnp.asarray(played_by), taken_by=jnp.asarray(taken_by),
        play_order=jnp.asarray(play_order), trick=jnp.asarray(trick), leader=jnp.int8(leader),
        num_played=jnp.int8(base + k),
        hearts_broken=jnp.bool_(((played_by >= 0) & (SUIT == HEARTS)).any()),
        points=jnp.asarray(points), cannot_hold=jnp.zeros((4, NUM_CARDS), bool),
        current_player=jnp.int32((leader + k) % 4))
    state = state.replace(legal_action_mask=ENV.legal_mask(state))
    return state.replace(observation=ENV.observe(state, state.current_player))


# Leaf counts by hand: for each card the mover may play, the product of the later seats'
# legal cards (follow the suit led, else anything).
#
# Seat 0 leads from Q♠ 5♥ 2♣ (hearts broken): Q♠ -> K♠, A♠, 2♠ forced: 1; 5♥ -> 9♥, seat 2
# void (3 cards), T♥: 3; 2♣ -> seat 1 void (3), 4♣, J♣: 3. 7 leaves.
LEAD_3 = position(["QS 5H 2C", "KS 9H 3D", "AS 4C 7D", "2S TH JC"], leader=0,
                  taken={1: "2H 3H 4H", 3: "6H 7H 8H JH QH KH AH"})
# Seat 2 leads from 7♣ 8♦ Q♠ 3♥, then seats 3, 0, 1: 7♣ -> T♣/J♣, 2♣/5♣, 3♣: 2*2*1 = 4;
# 8♦ -> 2♦, 9♦, K♦: 1; Q♠ -> seat 3 void (4), seat 0 void (4), 4♠/6♠: 32; 3♥ -> K♥, A♥, seat 1
# void (4): 4. 41 leaves.
LEAD_4 = position(["2C 5C 9D AH", "3C KD 4S 6S", "7C 8D QS 3H", "TC JC 2D KH"], leader=2,
                  taken={0: "2H 4H 5H", 1: "6H 7H 8H 9H TH JH QH"})
# Seat 3 led the 9♠; seat 0 follows with 5♠/K♠ (2), seat 1 is void (4), seat 2 Q♠/2♠ (2): 16.
SECOND = position(["5S KS 7D 8H", "TD JD QD 9H", "QS 2S AC 6D", "2C 3C 4C"], leader=3, table="9S",
                  taken={0: "2H 3H 4H", 2: "5H 6H 7H TH JH QH KH AH"})
# Seat 2 led the 8♦, seat 3 went over with the K♦; seat 0 follows with Q♦/2♦ (2), seat 1 is
# void (3): 6.
THIRD = position(["QD 2D QS", "3S 9H 4C", "TH 4S", "5S 6S"], leader=2, table="8D KD",
                 taken={0: "2H 3H", 2: "4H 5H 6H 7H 8H JH QH KH AH"})
# Seat 1 led the 5♣, seat 2 the K♣, seat 3 dropped the Q♠: seat 0's 2♣ ducks it onto seat 2,
# its A♣ takes it: 2 leaves, a real choice.
FOURTH = position(["2C AC 7H", "4D 5D", "6D 7D", "8D 9D"], leader=1, table="5C KC QS",
                  taken={1: "2H 3H 4H 5H 6H", 3: "8H 9H TH JH QH KH AH"})
# After the first trick (seat 0's 2♣, three diamond discards), seat 0 leads from the twelve
# other clubs; the others hold no club: 12 x 12^3 = 20,736 leaves, past the default cap of
# 4,096: two leads' grids (1,728 each) fit, the 3♣ and the 4♣.
_OTHERS = [c for c in range(NUM_CARDS) if SUIT[c] != 0 and c not in cards("2D 3D 4D")]
BIG = position(["3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
                " ".join(f"{'23456789TJQKA'[RANK[c]]}{'CDHS'[SUIT[c]]}" for c in _OTHERS[0::3]),
                " ".join(f"{'23456789TJQKA'[RANK[c]]}{'CDHS'[SUIT[c]]}" for c in _OTHERS[1::3]),
                " ".join(f"{'23456789TJQKA'[RANK[c]]}{'CDHS'[SUIT[c]]}" for c in _OTHERS[2::3])], leader=0)
HAND_MADE = [LEAD_3, LEAD_4, SECOND, THIRD, FOURTH, BIG]
ROW_LEAD_4, ROW_FOURTH, ROW_BIG = 1, 4, 5          # their rows in the batch
LEAVES = [7, 41, 16, 6, 2, 2 * 12 ** 3]


def random_positions(seed: int, moves) -> list:
    """States of random standard games after ``moves`` random legal moves each (the first 12
    are the passes; 64 ends the hand)."""
    gen = np.random.default_rng(seed)
    out = []
    for g, count in enumerate(moves):
        state = INIT(jax.random.key(seed * 1000 + g))
        for _ in range(int(count)):
            state = STEP(state, jnp.int32(gen.choice(np.flatnonzero(np.asarray(state.legal_action_mask)))))
        out.append(state)
    return out


def stack(states):
    states = list(states) + [states[-1]] * (BATCH - len(states))
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def row(tree, i):
    return jax.tree_util.tree_map(lambda x: np.asarray(x[i]), tree)


# the first trick at each place, later random positions, a finished hand
RANDOM_MOVES = [12, 13, 14, 15, 20, 29, 38, 47, 57, 64]


@pytest.fixture(scope="module")
def batch():
    return stack(HAND_MADE + random_positions(seed=3, moves=RANDOM_MOVES))


@pytest.fixture(scope="module")
def searches(batch):
    return SEARCH(batch, ONE), MAXN(batch, ONE)


def _assert_same(out, ref, rows=...):
    for field in ("action", "own_values", "action_values", "value"):
        np.testing.assert_array_equal(np.asarray(getattr(out, field))[rows], np.asarray(getattr(ref, field))[rows],
                                      err_msg=field)


# -- tests --------------------------------------------------------------------------------------------


def test_the_batch_covers_the_cases(batch):
    places = set((np.asarray(batch.num_played) % 4)[~np.asarray(batch.terminated)].tolist())
    assert places == {0, 1, 2, 3}
    assert np.asarray(batch.terminated).any()
    assert (np.asarray(batch.num_played) == 0).any()           # the 2♣ lead


def test_equals_maxn(searches):
    """Every position but BIG (past the cap): maxn.py's action, root vectors and value, exactly."""
    out, ref = searches
    rows = np.arange(BATCH) != ROW_BIG
    _assert_same(out, ref, rows)
    assert not np.asarray(out.overflow)[rows].any()


def test_leaf_counts_by_hand(searches):
    out, _ = searches
    assert [int(n) for n in np.asarray(out.num_leaves)[:len(HAND_MADE)]] == LEAVES


def test_hand_made_answers(searches):
    """FOURTH: the A♣ takes the Q♠ (13 points), the 2♣ gives it to seat 2: seat 0 ducks."""
    out, _ = searches
    fourth = row(out, ROW_FOURTH)
    assert int(fourth.action) == parse_card("2C")
    assert fourth.action_values[parse_card("AC"), 0] < fourth.action_values[parse_card("2C"), 0]
    assert fourth.action_values[parse_card("2C"), 2] <= -13


def test_only_legal_cards(searches, batch):
    out, _ = searches
    legal = np.asarray(batch.legal_action_mask) & ~np.asarray(batch.terminated)[:, None]
    rows = ~np.asarray(out.overflow)
    np.testing.assert_array_equal(np.isfinite(np.asarray(out.own_values))[rows], legal[rows])
    live = ~np.asarray(batch.terminated)
    assert legal[live, np.asarray(out.action)[live]].all()
    done = row(out, BATCH - 1)                                  # the finished hand
    assert int(done.action) == 0 and not done.value.any() and int(done.num_leaves) == 0


def test_past_the_cap(searches):
    """BIG at the default cap: the two smallest grids (the 3♣, the 4♣) are searched, exactly as
    maxn.py values them; the other clubs are not; ``overflow`` says so."""
    out, ref = searches
    i = ROW_BIG
    big, full = row(out, i), row(ref, i)
    searched = [parse_card("3C"), parse_card("4C")]
    assert bool(big.overflow) and int(big.num_leaves) == 2 * 12 ** 3
    assert np.flatnonzero(np.isfinite(big.own_values)).tolist() == searched
    np.testing.assert_array_equal(big.action_values[searched], full.action_values[searched])
    assert int(big.action) == searched[int(np.argmax(full.own_values[searched]))]


def test_exact_cap_on_the_largest_lead(searches):
    """``max_leaves=13^4``: BIG's 20,736 leaves all searched, maxn.py's values exactly."""
    _, ref = searches
    i = ROW_BIG
    out = EXACT(stack([BIG, LEAD_4]), ONE)
    assert int(out.num_leaves[0]) == 12 ** 4 and not np.asarray(out.overflow).any()
    _assert_same(row(out, 0), row(ref, i))
    _assert_same(row(out, 1), row(ref, ROW_LEAD_4))


def test_agrees_with_pie_search(batch):
    """With PIE's evaluation the trick search is PIE's hard-coded one
    (jaxgames.hearts.bots.trick_search)."""
    out = jax.jit(jax.vmap(lambda s: T.trick_search(ENV, B.value_fn, s, chunk=CHUNK)))(batch)
    pie = jax.jit(jax.vmap(lambda s: B.trick_search(ENV, s)))(batch)
    rows = ~np.asarray(out.overflow)
    for field in ("action", "own_values", "action_values"):
        np.testing.assert_array_equal(np.asarray(getattr(out, field))[rows], np.asarray(getattr(pie, field))[rows])


def test_params_flow_and_no_recompile(searches, batch):
    """The same compiled search with other params and other positions; params vmapped with the
    states reach each position's value_fn."""
    out2 = SEARCH(batch, TWO)
    np.testing.assert_array_equal(np.asarray(out2.num_leaves), np.asarray(searches[0].num_leaves))
    scales = jnp.asarray(np.where(np.arange(BATCH) % 2 == 0, 1.0, 2.0), jnp.float32)
    mixed = SEARCH_PER_PARAMS(batch, scales)
    rows = np.arange(BATCH) % 2 == 0
    _assert_same(mixed, searches[0], rows)
    _assert_same(mixed, out2, ~rows)
    other = stack(random_positions(seed=4, moves=[16, 25, 34, 43, 52, 61]))
    acts = np.asarray(SEARCH(other, ONE).action)                # assert_max_traces: no new trace
    assert np.asarray(other.legal_action_mask)[np.arange(BATCH), acts].all()


def test_policy_and_pimc(batch):
    """The policy plays the search's card, the passing rule while passing; PIMC around the
    search (a vmap over worlds inside the arena's vmap over games) plays legal cards."""
    passing = random_positions(seed=5, moves=[0, 5])
    states = stack(passing + HAND_MADE[:5])
    policy = T.trick_search_policy(ENV, VALUE, chunk=CHUNK)
    pimc = pimc_policy(ENV, T.trick_search_values(ENV, VALUE, chunk=CHUNK), num_worlds=3)
    keys = jax.random.split(jax.random.key(0), BATCH)
    both = jax.jit(jax.vmap(lambda s, k: (policy(ONE, s, k), pimc(ONE, s, k))))
    acts, pimc_acts = (np.asarray(a) for a in both(states, keys))
    searched = np.asarray(SEARCH(states, ONE).action)
    for i, s in enumerate(passing):
        hand = np.asarray(s.owner) == int(s.current_player)
        want = np.argmax(np.where(np.asarray(s.legal_action_mask), np.asarray(B.pass_scores(jnp.asarray(hand))), -2))
        assert acts[i] == want
    np.testing.assert_array_equal(acts[2:7], searched[2:7])
    legal = np.asarray(states.legal_action_mask)
    assert legal[np.arange(2, 7), pimc_acts[2:7]].all()
    # FOURTH: ducking under the K♣ is right whoever holds the unseen cards
    assert pimc_acts[6] == parse_card("2C")


def _hand(state, seat):
    return state.owner == seat.astype(jnp.int8)                             # bool [52]: the key


def _hand_cost(params, hand):
    hearts = jnp.where(hand & jnp.asarray(SUIT == HEARTS), jnp.asarray(RANK, jnp.float32) + 1, 0.0).sum()
    voids = (hand.reshape(13, 4).sum(0) == 0).sum()
    return -params * (0.25 * hearts + 4.0 * hand[QUEEN_OF_SPADES] - 0.5 * voids)


# seat_value split into a costly part read from the seat's hand alone and the points taken; a
# small block, so a chunk's distinct hands take several rounds of the loop over them
KEYED = T.KeyedValue(key=_hand, costly=_hand_cost, block=8,
                     finish=lambda params, state, seat, c: c - params * state.points.astype(jnp.float32)[seat])


def test_keyed_value_searches_as_the_plain_one(searches, batch):
    """A KeyedValue (its costly part valued once per distinct key of a chunk's leaves and seats)
    gives the plain value's search exactly, every row, the capped BIG included; called as a
    value_fn it is the plain value."""
    keyed = jax.jit(jax.vmap(lambda s: T.trick_search(ENV, KEYED, s, ONE, chunk=CHUNK)))(batch)
    _assert_same(keyed, searches[0])
    np.testing.assert_array_equal(np.asarray(keyed.overflow), np.asarray(searches[0].overflow))
    np.testing.assert_array_equal(np.asarray(jax.jit(KEYED)(TWO, LEAD_3)), np.asarray(jax.jit(VALUE)(TWO, LEAD_3)))


def test_per_seat():
    value = jax.jit(VALUE)(ONE, LEAD_3)
    expect = [seat_value(ONE, LEAD_3, jnp.int32(s)) for s in range(4)]
    np.testing.assert_array_equal(np.asarray(value), np.asarray(expect))
    assert value.shape == (4,) and value.dtype == jnp.float32


@pytest.mark.parametrize("kwargs, message", [
    (dict(max_leaves=T.MIN_MAX_LEAVES - 1), "max_leaves must be an integer >= 2197"),
    (dict(max_leaves=4096.0), "max_leaves must be an integer"),
    (dict(chunk=0), "chunk must be an integer >= 1"),
    (dict(chunk=True), "chunk must be an integer >= 1"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        T.trick_search_policy(ENV, VALUE, **kwargs)
    with pytest.raises(ValueError, match=message):
        T.trick_search(ENV, VALUE, LEAD_3, **kwargs)


def test_needs_hearts():
    with pytest.raises(ValueError, match="needs a Hearts env"):
        T.trick_search_policy(jaxgames.make("hex"), VALUE)


def _no_value(params, state):
    return jnp.zeros(NUM_PLAYERS, jnp.float32)       # the trick's points alone: many cards tie


def test_ties_go_to_the_lowest_or_the_highest_card(batch):
    run = lambda ties: jax.jit(jax.vmap(  # noqa: E731
        lambda s: T.trick_search(ENV, _no_value, s, ONE, chunk=CHUNK, ties=ties)))(batch)
    low, high = run("lowest"), run("highest")
    own = np.asarray(low.own_values)
    np.testing.assert_array_equal(own, np.asarray(high.own_values))
    live = np.isfinite(own).any(1)
    tied = own == own.max(1, keepdims=True)
    low_a, high_a = np.asarray(low.action), np.asarray(high.action)
    np.testing.assert_array_equal(low_a[live], tied[live].argmax(1))
    np.testing.assert_array_equal(high_a[live], 51 - tied[live][:, ::-1].argmax(1))
    assert (low_a != high_a)[live].any()
    np.testing.assert_array_equal(np.asarray(high.value)[live],
                                  np.asarray(high.action_values)[live, high_a[live]])
    with pytest.raises(ValueError, match="ties must be one of lowest, highest"):
        T.trick_search_policy(ENV, VALUE, ties="random")
