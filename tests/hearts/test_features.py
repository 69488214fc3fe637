"""Hearts features (jaxgames/hearts/features.py): the combination indexing against brute-force
enumeration (itertools) on a small atom set, the source's feature counts, the cap on active
atoms, the overlaps the TD learner may take, and every atom on hand-made positions (read from
several seats: the rotation), jitted and vmapped."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.hearts import features as F
from jaxgames.hearts.cards import NUM_CARDS, POINTS, parse_card

ENV = jaxgames.make("hearts", variant="paper")

chex.clear_trace_counter()
ATOMS_QS = jax.jit(chex.assert_max_traces(F.atoms_qs, n=1))
ATOMS_HEARTS = jax.jit(chex.assert_max_traces(F.atoms_hearts, n=1))
UNRANKED_QS = jax.jit(lambda state, seat: F.atoms_qs(state, seat, ranks=False))
UNRANKED_HEARTS = jax.jit(lambda state, seat: F.atoms_hearts(state, seat, ranks=False))


# -- combinations --------------------------------------------------------------------------------


def brute_force(n: int, sizes) -> dict[tuple[int, ...], int]:
    """{subset: index}: the sizes in increasing order, each size's subsets in colex order
    (compare the largest atom first), numbered consecutively."""
    out = {}
    for j in sorted(sizes):
        for subset in sorted(itertools.combinations(range(n), j), key=lambda c: c[::-1]):
            out[subset] = len(out)
    return out


ALL7 = np.array(list(itertools.product([False, True], repeat=7)))          # [128, 7]


@pytest.mark.parametrize("sizes", [(1, 2, 3), (1, 3), (2,), (1, 2, 3, 4, 5, 6, 7)])
def test_indexing_matches_brute_force(sizes):
    n = 7
    table = brute_force(n, sizes)
    total = F.num_features(n, include=sizes)
    assert total == len(table) == sum(math.comb(n, j) for j in sizes)
    assert sorted(table.values()) == list(range(total))           # distinct, in range
    for subset, index in table.items():
        assert F.encode(subset, n, include=sizes) == index
        assert F.decode(index, n, include=sizes) == subset
    spec = F.FeatureSpec(n, sizes, n)
    idx, valid = jax.jit(lambda a: F.active_indices(a, include=spec))(jnp.asarray(ALL7))
    assert idx.shape == (128, spec.num_slots) and idx.dtype == jnp.int32
    for row, atoms in enumerate(ALL7):
        on = np.flatnonzero(atoms)
        expect = sorted(table[c] for j in sizes for c in itertools.combinations(on, j))
        got = np.asarray(idx[row])[np.asarray(valid[row])]
        assert sorted(got.tolist()) == expect, atoms
        assert (np.asarray(idx[row])[~np.asarray(valid[row])] == 0).all()


def test_k_and_include_agree():
    assert F.num_features(7, 3) == F.num_features(7, include=(1, 2, 3)) == 7 + 21 + 35
    spec = F.FeatureSpec.of(7, 3, max_active=5)
    assert spec == F.FeatureSpec(7, (3, 1, 2, 2), 5)                 # sorted, repeats dropped
    assert spec.offsets == (0, 7, 28) and spec.num_slots == 5 + 10 + 10
    assert F.num_features(7, include=spec) == spec.num_features == 63
    a = jnp.asarray(ALL7[77])
    for got in (F.active_indices(a, k=3, max_active=5), F.active_indices(a, include=(1, 2, 3), max_active=5)):
        np.testing.assert_array_equal(got[0], F.active_indices(a, include=spec)[0])
    with pytest.raises(ValueError, match="max_active"):
        F.FeatureSpec(7, (1, 2), 8)
    with pytest.raises(ValueError, match="sizes"):
        F.FeatureSpec(7, (0, 2), 3)
    with pytest.raises(ValueError, match="atoms have"):
        F.active_indices(jnp.zeros(6, bool), include=spec)
    with pytest.raises(ValueError, match="k"):
        F.num_features(7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.max_active = 3


def test_the_sources_counts():
    assert F.num_features(60, 2) == 1_830
    assert F.num_features(60, include=(1, 3)) == 34_280
    assert F.num_features(60, 4) == 523_685
    assert F.num_features(88, 2) == 3_916
    assert F.num_features(88, include=(1, 3)) == 109_824
    assert (F.NUM_ATOMS_QS_UNRANKED, F.NUM_ATOMS_HEARTS_UNRANKED) == (60, 88)
    assert (F.NUM_ATOMS_QS, F.NUM_ATOMS_HEARTS) == (60 + 12, 88 + 12)     # with the ranked atoms
    # the last feature of each layout is the top subset
    assert F.decode(523_684, 60, 4) == (56, 57, 58, 59)
    assert F.decode(34_279, 60, include=(1, 3)) == (57, 58, 59)
    assert F.decode(59, 60, include=(1, 3)) == (59,) and F.decode(60, 60, include=(1, 3)) == (0, 1, 2)


def test_the_cap():
    """Past ``max_active`` active atoms the later ones are dropped: exactly the subsets of the
    first four active atoms stay, and ``overflow`` says so."""
    n, sizes, cap = 7, (1, 2, 3), 4
    table = brute_force(n, sizes)
    spec = F.FeatureSpec(n, sizes, cap)
    assert spec.num_slots == 4 + 6 + 4
    idx, valid = F.active_indices(jnp.asarray(ALL7), include=spec)
    over = np.asarray(F.overflow(jnp.asarray(ALL7), cap))
    np.testing.assert_array_equal(over, ALL7.sum(1) > cap)
    np.testing.assert_array_equal(np.asarray(F.capped(jnp.asarray(ALL7), cap)).sum(1), np.minimum(ALL7.sum(1), cap))
    for row, atoms in enumerate(ALL7):
        kept = np.flatnonzero(atoms)[:cap]
        expect = sorted(table[c] for j in sizes for c in itertools.combinations(kept, j))
        got = np.asarray(idx[row])[np.asarray(valid[row])]
        assert sorted(got.tolist()) == expect
        assert len(got) == sum(math.comb(len(kept), j) for j in sizes)


def test_overlaps_count_the_shared_features():
    gen = np.random.default_rng(1)
    atoms = jnp.asarray(gen.random((3, 5, 9)) < 0.45)                 # [B, T, n]
    spec = F.FeatureSpec(9, (1, 2, 3), 4)
    idx, valid = F.active_indices(atoms, include=spec)
    got = np.asarray(F.overlaps(atoms, spec))
    for b, t, u in itertools.product(range(3), range(5), range(5)):
        a = set(np.asarray(idx[b, t])[np.asarray(valid[b, t])].tolist())
        c = set(np.asarray(idx[b, u])[np.asarray(valid[b, u])].tolist())
        assert got[b, t, u] == len(a & c)


def test_names():
    qs60, hearts88 = F.atom_names("qs", 60), F.atom_names("hearts", 88)
    i = F.encode([0, 27], 60, 4)
    assert F.combination_names(i, qs60, 4) == "we hold the Q♠ AND we are void in clubs"
    j = F.encode([0, 14, 59], 60, include=(1, 3))
    assert F.combination_names(j, qs60, include=(1, 3), sep=" & ") == \
        "we hold the Q♠ & we lead & right is void in spades"
    assert F.combination_names(F.encode([5], 88, 2), hearts88, 2) == "we took 5 hearts"
    assert F.combination_names(F.encode([42], 88, 2), hearts88, 2) == "we lead"
    assert F.atom_names("qs", 72) == F.ATOM_NAMES_QS and F.atom_names("hearts", 100) == F.ATOM_NAMES_HEARTS
    k = F.encode([0, 49, 71], 72, include=(1, 3))
    assert F.combination_names(k, F.ATOM_NAMES_QS, include=(1, 3), sep=" & ") == \
        "we hold the Q♠ & we hold 2 of the 3 highest clubs still out & right is void in spades"
    with pytest.raises(ValueError, match="no qs atom set has 61 atoms"):
        F.atom_names("qs", 61)
    with pytest.raises(ValueError):
        F.decode(1830, 60, 2)


def test_the_docstring_table_names_the_atoms():
    rows = re.findall(r"^ (\d+)\s+(\w+)\s", F.__doc__, flags=re.M)
    assert len(rows) == 43                     # the rest are ranges (27..30 ...), named in order
    for number, key in rows:
        assert F.ATOM_KEYS_QS[int(number)] == key
    assert F.ATOM_KEYS_HEARTS[42:] == F.ATOM_KEYS_QS[14:]
    assert F.ATOM_NAMES_HEARTS[42:] == F.ATOM_NAMES_QS[14:]
    assert F.ATOM_KEYS_HEARTS[:3] == ("hearts_us_0", "hearts_us_1", "hearts_us_2")
    assert F.ATOM_KEYS_HEARTS[41] == "hearts_out_13"


# -- atoms on hand-made positions -------------------------------------------------------------------


def cards(text: str) -> list[int]:
    """``"QS 3S 3H-KH"`` -> card indices; ``3H-KH`` is a run of one suit."""
    out = []
    for word in text.split():
        if "-" in word:
            lo, hi = (parse_card(w) for w in word.split("-"))
            out += list(range(lo, hi + 1, 4))
        else:
            out.append(parse_card(word))
    return out


def position(hands, *, leader: int, table: str = "", taken=None):
    """A paper-variant play state built by hand: ``hands`` the four seats' cards, ``table``
    the current trick's cards in order from ``leader``, ``taken`` {seat: cards} taken in
    earlier tricks (each point card played must be listed; the others go to ``leader``)."""
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
    state = ENV.from_deal(np.arange(NUM_CARDS) % 4)
    return state.replace(
        owner=jnp.asarray(owner), played_by=jnp.asarray(played_by), taken_by=jnp.asarray(taken_by),
        play_order=jnp.asarray(play_order), trick=jnp.asarray(trick), leader=jnp.int8(leader),
        num_played=jnp.int8(base + k), points=jnp.asarray(points), current_player=jnp.int32((leader + k) % 4))


def on(atoms, keys) -> set[str]:
    return {keys[i] for i in np.flatnonzero(np.asarray(atoms))}


def hearts_keys(us, them, out, general):
    return {f"hearts_us_{us}", f"hearts_them_{them}", f"hearts_out_{out}"} | (set(general) - set(F.ATOM_KEYS_QS[:14]))


def top3_keys(state, seat: int) -> set[str]:
    """The ranked atoms of ``seat`` counted in Python: per suit, the 3 highest cards still in a
    hand, and how many of them ``seat`` holds."""
    owner = np.asarray(state.owner)
    out = set()
    for suit, word in enumerate(("clubs", "diamonds", "hearts", "spades")):
        held = sorted((c for c in range(NUM_CARDS) if c % 4 == suit and owner[c] >= 0), reverse=True)
        k = sum(owner[c] == seat for c in held[:3])
        if k:
            out.add(f"top3_{word}_{k}")
    return out


# Nine tricks played; we (seat 0) hold the Q♠ with one backer; across leads.
NINE = dict(hands=["QS 3S 2H 4C", "AS 9S 5S 3C", "KD 7D 2D 5H", "KS 4S 2S JS"], leader=2,
            taken={0: "3H 4H 6H", 1: "7H-AH"})
NINE_FROM = {
    0: {"qs_us", "lead_across", "backers_1", "high_spade_left", "high_spade_right", "void_us_diamonds",
        "single_clubs", "single_hearts", "exit_hearts", "no_exit_across", "late", "void_left_diamonds",
        "void_left_hearts", "void_across_clubs", "void_across_spades", "void_right_clubs", "void_right_diamonds",
        "void_right_hearts"},
    # seat 1: the Q♠ is with the right, one backer, void in diamonds; we hold two backers
    1: {"qs_right", "qsp_backers_1", "qsp_can_dump", "qsp_fewer_backers", "lead_left", "backers_2", "ace_spades",
        "high_spade_across", "void_us_diamonds", "void_us_hearts", "single_clubs", "exit_clubs", "no_exit_left",
        "late", "void_left_clubs", "void_left_spades", "void_across_clubs", "void_across_diamonds",
        "void_across_hearts", "void_right_diamonds"},
}
# Eleven tricks played; seat 2 took the Q♠ and eleven hearts; right (seat 3) leads.
ELEVEN = dict(hands=["AH 5C", "2H 9C", "KC 3D", "TC 4D"], leader=3, taken={2: "QS 3H-KH"})
ELEVEN_FROM = {
    2: {"qs_played", "qs_taken_us", "lead_left", "backers_0", "void_us_hearts", "void_us_spades", "single_clubs",
        "single_diamonds", "exit_diamonds", "no_exit_left", "late", "void_left_hearts", "void_left_spades",
        "void_across_diamonds", "void_across_spades", "void_right_diamonds", "void_right_spades"},
    0: {"qs_played", "lead_right", "backers_0", "void_us_diamonds", "void_us_spades", "single_clubs", "single_hearts",
        "exit_clubs", "top_heart", "no_exit_right", "late", "void_left_diamonds", "void_left_spades",
        "void_across_hearts", "void_across_spades", "void_right_hearts", "void_right_spades"},
}
# Five tricks played: seat 0 holds the Q♠ with three backers and the A♠; across (seat 1) leads.
FIVE = dict(hands=["QS JS TS 9S AS 2C 3C 4C", "KS 8S 2D-7D", "2H-9H", "2S 5C 6C 7C 8D 9D TD JD"], leader=1,
            taken={3: "TH JH", 0: "QH KH AH"})
FIVE_FROM = {
    3: {"qs_left", "qsp_backers_3", "qsp_high", "qsp_can_dump", "lead_across", "backers_1", "high_spade_left",
        "high_spade_across", "void_us_hearts", "single_spades", "exit_spades", "no_exit_right", "middle",
        "void_left_diamonds", "void_left_hearts", "void_across_clubs", "void_across_hearts", "void_right_clubs",
        "void_right_diamonds", "void_right_spades"},
    2: {"qs_across", "qsp_backers_3", "qsp_high", "qsp_can_dump", "lead_right", "backers_0", "high_spade_across",
        "high_spade_right", "void_us_clubs", "void_us_diamonds", "void_us_spades", "no_exit_us", "long_hearts",
        "top_heart", "middle", "void_left_hearts", "void_across_diamonds", "void_across_hearts", "void_right_clubs",
        "void_right_hearts"},
}
# The deal: we hold A♠ K♠ and three backers, four top hearts; right holds the Q♠ bare.
DEAL = dict(hands=["AS KS 2S 3S 4S AH KH QH JH 2C 3D 4D 5D", "5S-JS 2H-7H", "8H 9H TH JC QC KC AC 2D TD-AD",
                   "QS 3C-TC 6D-9D"], leader=0)
DEAL_FROM = {
    0: {"qs_right", "qsp_backers_0", "qsp_bare", "qsp_can_dump", "qsp_fewer_backers", "lead_us", "backers_3",
        "ace_spades", "king_spades", "single_clubs", "exit_clubs", "exit_spades", "no_exit_right", "long_hearts",
        "top_heart", "early", "void_left_clubs", "void_left_diamonds", "void_across_spades", "void_right_hearts"},
}
CASES = [(NINE, NINE_FROM, (3, 8, 2), (8, 3, 2)), (ELEVEN, ELEVEN_FROM, (11, 0, 2), (0, 11, 2)),
         (FIVE, FIVE_FROM, (2, 3, 8), (0, 5, 8)), (DEAL, DEAL_FROM, (0, 0, 13), (0, 0, 13))]


def hearts_of(case, seat):
    """(us, them, out) of a case from a seat: the first two seats listed in the case's table."""
    _, table, first, second = case
    return first if seat == list(table)[0] else second


@pytest.mark.parametrize("which", range(len(CASES)))
def test_atoms_on_hand_made_positions(which):
    case, table, _, _ = CASES[which]
    state = position(**case)
    for seat, expect in table.items():
        ranked = expect | top3_keys(state, seat)
        assert on(ATOMS_QS(state, seat), F.ATOM_KEYS_QS) == ranked, seat
        us, them, out = hearts_of(CASES[which], seat)
        assert on(ATOMS_HEARTS(state, seat), F.ATOM_KEYS_HEARTS) == hearts_keys(us, them, out, ranked), seat
        # without the ranked atoms: the same atoms but those, at the source's 60 and 88
        assert on(UNRANKED_QS(state, seat), F.UNRANKED_KEYS_QS) == expect, seat
        assert on(UNRANKED_HEARTS(state, seat), F.UNRANKED_KEYS_HEARTS) == hearts_keys(us, them, out, expect), seat


def test_every_atom_is_seen_on_and_off():
    """Across the hand-made positions, from all four seats, each Q♠ atom is true somewhere
    (the Q♠ player's 2 backers: test_backer_counts) and false somewhere; so is each general
    atom of the hearts predictor, and the hearts counts of the positions show."""
    states = [position(**case) for case, *_ in CASES]
    qs = np.stack([np.asarray(ATOMS_QS(s, p)) for s in states for p in range(4)])
    hearts = np.stack([np.asarray(ATOMS_HEARTS(s, p)) for s in states for p in range(4)])
    # the ranked atoms (48..59): test_ranked_atoms, and against top3_keys in every case above
    ranked = np.zeros(F.NUM_ATOMS_QS, bool)
    ranked[48:60] = True
    assert {F.ATOM_KEYS_QS[i] for i in np.flatnonzero(~qs.any(0) & ~ranked)} <= {"qsp_backers_2"}
    assert (~qs).any(0).all() and (~hearts).any(0).all()
    assert hearts[:, 42:][:, ~ranked[14:]].any(0).all()
    shown = {F.ATOM_KEYS_HEARTS[i] for i in np.flatnonzero(hearts[:, :42].any(0))}
    assert {"hearts_us_0", "hearts_us_3", "hearts_us_11", "hearts_them_11", "hearts_them_5", "hearts_out_2",
            "hearts_out_13"} <= shown


# Eight tricks played: the A♠ and K♠ among them, so the Q♠ J♠ T♠ are the 3 highest spades still out.
RANKED = dict(hands=["QS JS TS 9D 8D", "6C 5C 2S 3S 7D", "4C 3C 6D 2D 4H", "3H 2H 5D 3D 4D"], leader=0,
              taken={1: "5H-AH"})
RANKED_FROM = {0: {"top3_spades_3", "top3_diamonds_2"}, 1: {"top3_clubs_2", "top3_diamonds_1"},
               2: {"top3_clubs_1", "top3_hearts_1"}, 3: {"top3_hearts_2"}}


def test_ranked_atoms():
    """How many of each suit's 3 highest cards still out a seat holds, cards played not counted."""
    state = position(**RANKED)
    for seat, expect in RANKED_FROM.items():
        got = on(ATOMS_QS(state, seat), F.ATOM_KEYS_QS)
        assert {k for k in got if k.startswith("top3_")} == expect == top3_keys(state, seat), seat
        assert on(ATOMS_HEARTS(state, seat), F.ATOM_KEYS_HEARTS) & set(F.ATOM_KEYS_QS[48:60]) == expect, seat
        assert got - expect == on(UNRANKED_QS(state, seat), F.UNRANKED_KEYS_QS), seat
    assert F.ATOM_KEYS_QS[48:60] == tuple(f"top3_{s}_{k}" for s in ("clubs", "diamonds", "hearts", "spades")
                                          for k in (1, 2, 3))


@pytest.mark.parametrize("backers", range(5))
def test_backer_counts(backers):
    """Seat 1 holds the Q♠ and ``backers`` low spades (hearts beside): from seat 0 its count
    atoms, bare when none; from seat 1 our own counts."""
    spades = "2S 3S 4S 5S".split()[:backers]
    hearts = [f"{r}H" for r in "23456789T"][: 5 - backers]
    hands = ["2C-7C", " ".join(["QS", *spades, *hearts]), "2D-7D", "8C-KC"]
    taken = {0: "JH QH KH AH"}
    rest = [c for c in "23456789T" if f"{c}H" not in hearts]
    taken[2] = " ".join(f"{r}H" for r in rest)
    state = position(hands, leader=0, taken=taken)
    got = on(ATOMS_QS(state, 0), F.ATOM_KEYS_QS)
    assert f"qsp_backers_{min(backers, 3)}" in got
    assert {f"qsp_backers_{b}" for b in range(4)} & got == {f"qsp_backers_{min(backers, 3)}"}
    assert ("qsp_bare" in got) == (backers == 0)
    assert {"qs_left", "qsp_can_dump"} <= got and "qsp_fewer_backers" not in got
    mine = on(ATOMS_QS(state, 1), F.ATOM_KEYS_QS)
    assert {f"backers_{b}" for b in range(4)} & mine == {f"backers_{min(backers, 3)}"}
    assert "qs_us" in mine and not any(k.startswith("qsp_") for k in mine)


def test_the_queen_on_the_table():
    """Mid-trick, the Q♠ led by seat 0: played, taken by no one, held by no one."""
    state = position(["3S 2H 4C", "AS 9S 5S 3C", "KD 7D 2D 5H", "KS 4S 2S JS"], leader=0, table="QS",
                     taken={0: "3H 4H 6H", 1: "7H-AH"})
    got = on(ATOMS_QS(state, 0), F.ATOM_KEYS_QS)
    assert "qs_played" in got and not {"qs_us", "qs_left", "qs_across", "qs_right", "qs_taken_us"} & got
    assert not any(k.startswith("qsp_") for k in got)


def test_rotation():
    """Atoms from seat p equal seat 0's atoms of the same position with the seats relabelled."""
    for case, *_ in CASES:
        state = position(**case)
        for p in range(4):
            def rel(x):
                x = np.asarray(x).astype(np.int32)
                return jnp.asarray(np.where(x >= 0, (x - p) % 4, -1).astype(np.int8))
            turned = state.replace(owner=rel(state.owner), played_by=rel(state.played_by),
                                   taken_by=rel(state.taken_by), leader=rel(state.leader))
            np.testing.assert_array_equal(ATOMS_QS(state, p), ATOMS_QS(turned, 0))
            np.testing.assert_array_equal(ATOMS_HEARTS(state, p), ATOMS_HEARTS(turned, 0))


def test_jit_and_vmap():
    """Batched over states and seats under one jit: the same atoms and indices as one by one."""
    states = [position(**case) for case, *_ in CASES]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    seats = jnp.array([0, 1, 3, 2], jnp.int32)
    spec = F.FeatureSpec(F.NUM_ATOMS_QS, (1, 2, 3, 4), 16)

    @jax.jit
    def featurise(state, seat):
        atoms = F.atoms_qs(state, seat)
        idx, valid = F.active_indices(atoms, include=spec)
        return atoms, idx, valid, F.overflow(atoms, spec.max_active)

    atoms, idx, valid, over = jax.vmap(featurise)(batch, seats)
    assert idx.shape == (4, spec.num_slots)
    for b, s in enumerate(states):
        one = ATOMS_QS(s, int(seats[b]))
        np.testing.assert_array_equal(atoms[b], one)
        i1, v1 = F.active_indices(one, include=spec)
        np.testing.assert_array_equal(idx[b], i1)
        np.testing.assert_array_equal(valid[b], v1)
        assert bool(over[b]) == (int(one.sum()) > 16)
        assert int(v1.sum()) == sum(math.comb(min(int(one.sum()), 16), j) for j in (1, 2, 3, 4))


def test_no_recompiles():
    """The atoms compiled once each for every state and seat above (runs last)."""
    state = position(**NINE)
    for p in range(4):
        ATOMS_QS(state, p)
        ATOMS_HEARTS(state, p)
