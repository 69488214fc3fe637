"""max^n on Hearts: ``jaxgames.search.maxn`` and the PIE's trick search against a recursive
Python max^n over ``env.step``.

The search is the source's (Sturtevant & White's PIE): max^n to the end of the current trick
(1 to 4 plies), the hand-written evaluation (``jaxgames.hearts.bots.evaluation``) at the
leaves, the points of the trick (and the moon, in the hand's last trick) as rewards. Positions:
end games built by hand (two or three cards each, a trick under way, the last trick with and
without a moon) and positions of random games. Every value is compared exactly: the rewards
are integers and both searches compute the evaluation with the same float operations, so ties
(broken to the lowest card) must agree too.

Jitted once per module (``chex.assert_max_traces``): one step per variant, the evaluation,
``maxn_search`` on the paper variant, ``trick_search`` on both variants.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.hearts import bots as B
from jaxgames.hearts.cards import NUM_CARDS, POINTS, parse_card
from jaxgames.search import maxn

# The standard variant: its rules (the 2♣ lead, the first trick's discards, hearts led once
# broken) are a superset of the paper variant's, and the searches read the rules only through
# ``env.play_mask``; the paper variant's PIE plays in test_bots.py.
ENV = jaxgames.make("hearts")
BATCH = 24            # positions per compiled search call (fixed: one trace)

chex.clear_trace_counter()


def _step(state, action):
    return ENV.step(state, action)


def _maxn(state):
    return maxn.maxn_search(ENV, state, None, depth=4, max_branching=13, value_fn=B.value_fn,
                            stop=B.trick_over)


def _trick(state):
    return B.trick_search(ENV, state)


STEP = jax.jit(chex.assert_max_traces(_step, n=1))
INIT = jax.jit(ENV.init)
VALUE = jax.jit(chex.assert_max_traces(B.evaluation, n=1))
MAXN = jax.jit(jax.vmap(chex.assert_max_traces(_maxn, n=1)))
TRICK = jax.jit(jax.vmap(chex.assert_max_traces(_trick, n=1)))


# -- positions -------------------------------------------------------------------------------------


def cards(text: str) -> list[int]:
    return [parse_card(w) for w in text.split()]


def position(env, hands, *, leader: int, table: str = "", taken=None):
    """A play-phase state built by hand.

    ``hands``: the four seats' cards (``"QS 5H 2C"``); ``table``: the cards of the current
    trick in the order played from ``leader``; ``taken``: {seat: cards} taken in earlier tricks
    (point cards must be listed; every other card played earlier goes to ``leader``'s pile).
    """
    owner = np.full(NUM_CARDS, -1, np.int8)
    for seat, text in enumerate(hands):
        for c in cards(text):
            assert owner[c] == -1
            owner[c] = seat
    on_table = cards(table)
    taker = {c: seat for seat, text in (taken or {}).items() for c in cards(text)}
    earlier = [c for c in range(NUM_CARDS) if owner[c] < 0 and c not in on_table]
    assert set(taker) <= set(earlier)
    assert all(c in taker for c in earlier if POINTS[c] > 0), "say who took each point card"
    base, k = len(earlier), len(on_table)
    assert base % 4 == 0 and k < 4
    counts = [(owner == s).sum() for s in range(4)]
    for j in range(4):
        assert counts[(leader + j) % 4] == (52 - base) // 4 - (j < k), counts
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
    played = played_by >= 0
    state = env.from_deal(np.arange(NUM_CARDS) % 4, pass_dir=0)
    state = state.replace(
        owner=jnp.asarray(owner), played_by=jnp.asarray(played_by), taken_by=jnp.asarray(taken_by),
        play_order=jnp.asarray(play_order), trick=jnp.asarray(trick), leader=jnp.int8(leader),
        num_played=jnp.int8(base + k), hearts_broken=jnp.bool_((played & (np.arange(52) % 4 == 2)).any()),
        points=jnp.asarray(points), cannot_hold=jnp.zeros((4, NUM_CARDS), bool),
        current_player=jnp.int32((leader + k) % 4))
    state = state.replace(legal_action_mask=env.legal_mask(state))
    return state.replace(observation=env.observe(state, state.current_player))


def random_positions(seed: int, moves) -> list:
    """States of random games (one per entry of ``moves``: that many random legal moves from a
    random deal, the first 12 being the passes; 12 + 51 at most: the hand is not over)."""
    gen = np.random.default_rng(seed)
    out = []
    for g, count in enumerate(moves):
        state = INIT(jax.random.key(seed * 1000 + g))
        for _ in range(int(count)):
            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            state = STEP(state, jnp.int32(gen.choice(legal)))
        out.append(state)
    return out


def stack(states):
    states = list(states) + [states[-1]] * (BATCH - len(states))   # pad to the compiled batch
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def row(tree, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


# -- the reference: recursive Python max^n over env.step --------------------------------------------


def reference(state) -> dict[int, np.ndarray]:
    """{legal card: its value vector float32 [4]} at ``state``: max^n to the end of the trick
    (depth 4 at most), the evaluation at the trick's end, 0 once the hand is over; each
    player takes the child of highest own value, the lowest card on ties."""
    step = STEP

    def value(s, depth: int) -> np.ndarray:
        if bool(s.terminated):
            return np.zeros(4, np.float32)
        if depth == 0 or int(s.num_played) % 4 == 0:
            return np.asarray(VALUE(s), np.float32)
        best = None
        mover = int(s.current_player)
        for a in np.flatnonzero(np.asarray(s.legal_action_mask)):
            child = step(s, jnp.int32(a))
            v = np.asarray(child.rewards, np.float32) + value(child, depth - 1)
            if best is None or v[mover] > best[mover]:
                best = v
        return best

    out = {}
    for a in np.flatnonzero(np.asarray(state.legal_action_mask)):
        child = step(state, jnp.int32(a))
        out[int(a)] = np.asarray(child.rewards, np.float32) + value(child, 3)
    return out


def assert_matches_reference(out, state, label):
    ref = reference(state)
    mover = int(state.current_player)
    legal = sorted(ref)
    np.testing.assert_array_equal(np.flatnonzero(np.isfinite(np.asarray(out.own_values))), legal, err_msg=label)
    for a in legal:
        # up to float32 rounding: the compiled search and this recursion add the leaf values in
        # their own orders
        np.testing.assert_allclose(np.asarray(out.action_values)[a], ref[a], rtol=1e-6, err_msg=f"{label}: card {a}")
    own = np.array([ref[a][mover] for a in legal])
    assert int(out.action) == legal[int(np.argmax(own))], label      # first maximum: the lowest card


# -- end games built by hand --------------------------------------------------------------------------

# Three cards each, seat 0 to lead, the Q♠ still out: a lead that wins the trick takes whatever
# the void seats dump on it.
THREE_EACH = position(ENV, ["QS 5H 2C", "KS 9H 3D", "AS 4C 7D", "2S TH JC"], leader=0,
                      taken={1: "2H 3H 4H", 3: "6H 7H 8H JH QH KH AH"})
# A trick under way: seat 2 led the 8♦, seat 3 went over with the K♦; seat 0 must follow
# (Q♦ or 2♦, both under the king), then seat 1 may take the trick with the A♦ or not.
MID_TRICK = position(ENV, ["QD 2D QS", "AD 3S 9H", "TH 4S", "5S 6S"], leader=2, table="8D KD",
                     taken={0: "2H 3H", 2: "4H 5H 6H 7H 8H JH QH KH AH"})
# Last trick: seat 1 has every point so far (the Q♠ and nine hearts) and leads the A♥ over
# the other three hearts: it shoots the moon, +26 for it and -26 for each other seat.
MOON = position(ENV, ["2H", "AH", "3H", "4H"], leader=1,
                taken={1: "QS 5H 6H 7H 8H 9H TH JH QH KH"})
# The same, but seat 3 holds the A♥: it takes the last four points, no moon.
NO_MOON = position(ENV, ["2H", "5H", "3H", "AH"], leader=1,
                   taken={1: "QS 4H 6H 7H 8H 9H TH JH QH KH"})
HAND_MADE = [THREE_EACH, MID_TRICK, MOON, NO_MOON]

# Two states seat 0 cannot tell apart (its hand, the play so far), the other hands dealt
# differently. In A the K♠ is seat 2's only spade: a Q♠ lead forces it over the queen, so PIE
# leads the Q♠; in B every higher spade has a low one to duck with, so it leads the 9♣. PIE
# reads hidden cards (by design); the honest players' check is the arena's, in test_bots.py.
_POINTS_TAKEN = {2: "2H 3H 5H 6H 7H 8H 9H TH JH QH KH AH"}
SEEN_A = position(ENV, ["3D QS 9C", "2C 8S 4H", "KS 5C JD", "AS 7D 2S"], leader=0, taken=_POINTS_TAKEN)
SEEN_B = position(ENV, ["3D QS 9C", "JD 7D 4H", "5C KS 8S", "2C AS 2S"], leader=0, taken=_POINTS_TAKEN)


@pytest.fixture(scope="module")
def positions():
    """The hand-made end games; the first trick at each place (12 moves are the passes); random
    later positions."""
    later = np.random.default_rng(1).integers(16, 63, BATCH - len(HAND_MADE) - 4)
    return HAND_MADE + random_positions(seed=1, moves=[12, 13, 14, 15, *later])


@pytest.fixture(scope="module")
def searches(positions, optimised_compiles):
    batch = stack(positions)
    with optimised_compiles():   # two whole end-game searches: far more running than compiling
        return batch, MAXN(batch), TRICK(batch)


def test_the_moon_in_the_last_trick(searches):
    """Known answers: the only card left of each seat, the trick's points, the moon."""
    _, by_maxn, by_trick = searches
    for out in (by_maxn, by_trick):
        moon, no_moon = row(out, 2), row(out, 3)
        assert int(moon.action) == parse_card("AH") and int(no_moon.action) == parse_card("5H")
        np.testing.assert_array_equal(np.asarray(moon.action_values)[parse_card("AH")], [-26, 22, -26, -26])
        np.testing.assert_array_equal(np.asarray(no_moon.action_values)[parse_card("5H")], [0, 0, 0, -4])


def test_maxn_against_brute_force_on_end_games(positions, searches):
    """maxn.py on the hand-made end games and two random positions = recursive Python max^n."""
    _, by_maxn, _ = searches
    for i in range(len(HAND_MADE) + 2):
        assert_matches_reference(row(by_maxn, i), positions[i], f"position {i}")
    assert not bool(np.asarray(by_maxn.overflow).any())


def test_hand_made_end_games_have_real_choices(positions):
    """The end games are not trivial: the mover's cards get different values."""
    for state in (THREE_EACH, MID_TRICK):
        own = [v[int(state.current_player)] for v in reference(state).values()]
        assert len(own) >= 2 and len(set(own)) >= 2


def test_trick_search_is_maxn(searches):
    """The PIE's trick search computes maxn.py's values bit for bit (ties included) on the
    hand-made end games and on random positions at every place in a trick."""
    batch, by_maxn, by_trick = searches
    places = set((np.asarray(batch.num_played) % 4).tolist())
    assert places == {0, 1, 2, 3}
    np.testing.assert_array_equal(by_trick.action, by_maxn.action)
    np.testing.assert_array_equal(by_trick.own_values, by_maxn.own_values)
    np.testing.assert_array_equal(by_trick.action_values, by_maxn.action_values)   # NaN where illegal


def test_trick_search_against_brute_force(positions, searches):
    """trick_search = recursive Python max^n on the first trick at every place (the 2♣ lead,
    no points discarded while a safe card is held) and on a few later positions."""
    _, _, by_trick = searches
    for i in range(len(HAND_MADE), len(HAND_MADE) + 7):
        assert_matches_reference(row(by_trick, i), positions[i], f"position {i}")
    first = [int(positions[i].num_played) for i in range(len(HAND_MADE), len(HAND_MADE) + 4)]
    assert first == [0, 1, 2, 3]


def test_pie_reads_the_hidden_cards(searches):
    chex.assert_trees_all_equal(ENV.observe(SEEN_A, 0), ENV.observe(SEEN_B, 0))
    out = TRICK(stack([SEEN_A, SEEN_B]))
    assert [int(a) for a in out.action[:2]] == [parse_card("QS"), parse_card("9C")]


def test_no_recompiles(positions):
    """A second batch of other positions reuses every compiled search (assert_max_traces)."""
    other = stack(random_positions(seed=9, moves=range(12, 12 + 2 * BATCH, 2)))
    MAXN(other)
    TRICK(other)
    VALUE(positions[0])
