"""Sturtevant & White's features for Hearts: boolean *atoms* of the perfect-information state,
and every AND of up to k atoms, indexed sparsely into one weight vector.

Atoms are read from the learning player's ``seat`` ("we"; "left" ``seat + 1``, "across"
``seat + 2``, "right" ``seat + 3``). :func:`atoms_qs` gives the Q♠ predictor's ``bool [72]``
(the table below), :func:`atoms_hearts` the hearts predictor's ``bool [100]``: atoms 0..41
``hearts_us_k``, ``hearts_them_k``, ``hearts_out_k`` (k = 0..13), 42..99 the table's 14..71.
``ranks=False`` leaves out the ranked atoms 48..59: the source's counts, 60 and 88 atoms. A
feature is the AND of a set of atoms of the static sizes (``k``: 1..k, or ``include``, e.g.
(1, 3)); :func:`active_indices` gives a state's active features, ``(indices int32 [..., M],
valid bool [..., M])``, as indices into one weight vector (the combinatorial number system),
never a dense matrix.

What the atoms mean (backers, exits, the Q♠ player, mid-trick states), the source's counts,
the ranked atoms and the index layout: docs/hearts_features.md.

The Q♠ predictor, :func:`atoms_qs` (``ATOM_KEYS_QS`` / ``ATOM_NAMES_QS``; a test checks this
table against them):

====  ======================  =================================================================
 #    key                     meaning
====  ======================  =================================================================
 0    qs_us                   we hold the Q♠
 1    qs_left                 left holds the Q♠
 2    qs_across               across holds the Q♠
 3    qs_right                right holds the Q♠
 4    qs_played               the Q♠ has been played (taken, or on the table)
 5    qs_taken_us             we took the Q♠
 6    qsp_backers_0           the Q♠ player holds no backer
 7    qsp_backers_1           the Q♠ player holds 1 backer
 8    qsp_backers_2           the Q♠ player holds 2 backers
 9    qsp_backers_3           the Q♠ player holds 3 or more backers
 10   qsp_bare                the Q♠ player holds no other spade (a spade lead drops the Q♠)
 11   qsp_high                the Q♠ player also holds the A♠ or the K♠
 12   qsp_can_dump            the Q♠ player is void in clubs, diamonds or hearts
 13   qsp_fewer_backers       we hold more backers than the Q♠ player
 14   lead_us                 we lead
 15   lead_left               left leads
 16   lead_across             across leads
 17   lead_right              right leads
 18   backers_0               we hold no backer
 19   backers_1               we hold 1 backer
 20   backers_2               we hold 2 backers
 21   backers_3               we hold 3 or more backers
 22   ace_spades              we hold the A♠
 23   king_spades             we hold the K♠
 24   high_spade_left         left holds the A♠ or the K♠
 25   high_spade_across       across holds the A♠ or the K♠
 26   high_spade_right        right holds the A♠ or the K♠
 27   void_us_clubs           we are void in clubs             (27..30: ♣ ♦ ♥ ♠)
 31   single_clubs            we hold exactly one club         (31..34: ♣ ♦ ♥ ♠)
 35   exit_clubs              we hold an exit in clubs         (35..38: ♣ ♦ ♥ ♠)
 39   no_exit_us              we hold no exit (in any suit)
 40   no_exit_left            left holds no exit
 41   no_exit_across          across holds no exit
 42   no_exit_right           right holds no exit
 43   long_hearts             we hold 4 or more hearts
 44   top_heart               we hold the highest heart still out
 45   early                   0 to 3 tricks have been played
 46   middle                  4 to 8 tricks have been played
 47   late                    9 or more tricks have been played
 48   top3_clubs_1            we hold 1 of the 3 highest clubs (48..59: ♣ ♦ ♥ ♠ x 1, 2, 3)
 ...                          still out (in any hand)
 59   top3_spades_3           we hold the 3 highest spades still out
 60   void_left_clubs         left is void in clubs            (60..71: left, across, right
 ...                                                             x ♣ ♦ ♥ ♠)
 71   void_right_spades       right is void in spades
====  ======================  ================================================================="""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.hearts.cards import CLUBS, DIAMONDS, HEARTS, NUM_CARDS, NUM_PLAYERS, QUEEN, QUEEN_OF_SPADES, SPADES

Array = jax.Array

__all__ = [
    "ATOM_KEYS_HEARTS",
    "ATOM_KEYS_QS",
    "ATOM_NAMES_HEARTS",
    "ATOM_NAMES_QS",
    "FeatureSpec",
    "NUM_ATOMS_HEARTS",
    "NUM_ATOMS_HEARTS_UNRANKED",
    "NUM_ATOMS_QS",
    "NUM_ATOMS_QS_UNRANKED",
    "UNRANKED_KEYS_HEARTS",
    "UNRANKED_KEYS_QS",
    "active_indices",
    "atom_counts",
    "atom_names",
    "atoms_hearts",
    "atoms_qs",
    "capped",
    "combination_names",
    "decode",
    "encode",
    "num_features",
    "overflow",
    "overlaps",
]

# -- the atoms' names -------------------------------------------------------------------------------

_WHO = ("us", "left", "across", "right")
_WHO_WORDS = ("we", "left", "across", "right")
_SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
_SUIT_ONE = ("club", "diamond", "heart", "spade")


def _void_text(p: int, s: int) -> str:
    return f"{_WHO_WORDS[p]} {'are' if p == 0 else 'is'} void in {_SUIT_WORDS[s]}"


_QS_SPECIFIC: tuple[tuple[str, str], ...] = (
    ("qs_us", "we hold the Q♠"),
    ("qs_left", "left holds the Q♠"),
    ("qs_across", "across holds the Q♠"),
    ("qs_right", "right holds the Q♠"),
    ("qs_played", "the Q♠ has been played"),
    ("qs_taken_us", "we took the Q♠"),
    ("qsp_backers_0", "the Q♠ player holds no backer"),
    ("qsp_backers_1", "the Q♠ player holds 1 backer"),
    ("qsp_backers_2", "the Q♠ player holds 2 backers"),
    ("qsp_backers_3", "the Q♠ player holds 3+ backers"),
    ("qsp_bare", "the Q♠ player holds no other spade"),
    ("qsp_high", "the Q♠ player holds the A♠ or K♠"),
    ("qsp_can_dump", "the Q♠ player is void in clubs, diamonds or hearts"),
    ("qsp_fewer_backers", "we hold more backers than the Q♠ player"),
)
_GENERAL: tuple[tuple[str, str], ...] = (
    *((f"lead_{w}", f"{_WHO_WORDS[p]} lead" + ("" if p == 0 else "s")) for p, w in enumerate(_WHO)),
    ("backers_0", "we hold no backer"),
    ("backers_1", "we hold 1 backer"),
    ("backers_2", "we hold 2 backers"),
    ("backers_3", "we hold 3+ backers"),
    ("ace_spades", "we hold the A♠"),
    ("king_spades", "we hold the K♠"),
    *((f"high_spade_{_WHO[p]}", f"{_WHO[p]} holds the A♠ or K♠") for p in (1, 2, 3)),
    *((f"void_us_{_SUIT_WORDS[s]}", _void_text(0, s)) for s in range(4)),
    *((f"single_{_SUIT_WORDS[s]}", f"we hold exactly one {_SUIT_ONE[s]}") for s in range(4)),
    *((f"exit_{_SUIT_WORDS[s]}", f"we hold an exit in {_SUIT_WORDS[s]}") for s in range(4)),
    ("no_exit_us", "we hold no exit"),
    *((f"no_exit_{_WHO[p]}", f"{_WHO[p]} holds no exit") for p in (1, 2, 3)),
    ("long_hearts", "we hold 4+ hearts"),
    ("top_heart", "we hold the highest heart still out"),
    ("early", "0-3 tricks played"),
    ("middle", "4-8 tricks played"),
    ("late", "9+ tricks played"),
    *((f"void_{_WHO[p]}_{_SUIT_WORDS[s]}", _void_text(p, s)) for p in (1, 2, 3) for s in range(4)),
)
#: how many of the 3 highest cards of each suit still out we hold (1, 2, 3): the ranks the
#: other atoms do not see, so that the value tells one card of a suit from another
_RANKED: tuple[tuple[str, str], ...] = tuple(
    (f"top3_{_SUIT_WORDS[s]}_{k}", f"we hold {k} of the 3 highest {_SUIT_WORDS[s]} still out")
    for s in range(4) for k in (1, 2, 3))
#: the general atoms with the ranked ones, before the others' voids (which a cap drops first)
_GENERAL_RANKED = _GENERAL[:34] + _RANKED + _GENERAL[34:]
_POINT_ATOMS: tuple[tuple[str, str], ...] = (
    *((f"hearts_us_{k}", f"we took {k} hearts") for k in range(14)),
    *((f"hearts_them_{k}", f"the opponents took {k} hearts") for k in range(14)),
    *((f"hearts_out_{k}", f"{k} hearts still out") for k in range(14)),
)

#: the Q♠ predictor's atoms (with the ranked ones): short keys and their meanings in words
ATOM_KEYS_QS: tuple[str, ...] = tuple(k for k, _ in _QS_SPECIFIC + _GENERAL_RANKED)
ATOM_NAMES_QS: tuple[str, ...] = tuple(t for _, t in _QS_SPECIFIC + _GENERAL_RANKED)
#: the hearts predictor's atoms: the 42 point counts, then the 58 general atoms
ATOM_KEYS_HEARTS: tuple[str, ...] = tuple(k for k, _ in _POINT_ATOMS + _GENERAL_RANKED)
ATOM_NAMES_HEARTS: tuple[str, ...] = tuple(t for _, t in _POINT_ATOMS + _GENERAL_RANKED)
NUM_ATOMS_QS = len(ATOM_KEYS_QS)
NUM_ATOMS_HEARTS = len(ATOM_KEYS_HEARTS)
#: the same without the ranked atoms: the source's counts, 60 and 88 (runs before 2026-12-02)
UNRANKED_KEYS_QS: tuple[str, ...] = tuple(k for k, _ in _QS_SPECIFIC + _GENERAL)
UNRANKED_KEYS_HEARTS: tuple[str, ...] = tuple(k for k, _ in _POINT_ATOMS + _GENERAL)
NUM_ATOMS_QS_UNRANKED = len(UNRANKED_KEYS_QS)
NUM_ATOMS_HEARTS_UNRANKED = len(UNRANKED_KEYS_HEARTS)
assert (NUM_ATOMS_QS, NUM_ATOMS_HEARTS, NUM_ATOMS_QS_UNRANKED, NUM_ATOMS_HEARTS_UNRANKED) == (72, 100, 60, 88)
assert len(set(ATOM_KEYS_QS + ATOM_KEYS_HEARTS)) == 72 + 42 and len(set(ATOM_NAMES_QS + ATOM_NAMES_HEARTS)) == 114


def atom_counts(ranks: bool) -> tuple[int, int]:
    """(Q♠ atoms, hearts atoms): (72, 100) with the ranked atoms, (60, 88) without."""
    return (NUM_ATOMS_QS, NUM_ATOMS_HEARTS) if ranks else (NUM_ATOMS_QS_UNRANKED, NUM_ATOMS_HEARTS_UNRANKED)


def atom_names(predictor: str, n_atoms: int) -> tuple[str, ...]:
    """The names in words of an atom set: ``predictor`` ``"qs"`` or ``"hearts"``, ``n_atoms``
    its size (72 / 100 with the ranked atoms, 60 / 88 without)."""
    sets = {("qs", NUM_ATOMS_QS): ATOM_NAMES_QS, ("hearts", NUM_ATOMS_HEARTS): ATOM_NAMES_HEARTS,
            ("qs", NUM_ATOMS_QS_UNRANKED): tuple(t for _, t in _QS_SPECIFIC + _GENERAL),
            ("hearts", NUM_ATOMS_HEARTS_UNRANKED): tuple(t for _, t in _POINT_ATOMS + _GENERAL)}
    if (predictor, n_atoms) not in sets:
        raise ValueError(f"no {predictor} atom set has {n_atoms} atoms")
    return sets[predictor, n_atoms]


# -- the atoms ---------------------------------------------------------------------------------------

_RANKS = 13
_BACKER = np.arange(_RANKS) < QUEEN                      # [13] ranks 2..J: the backers
_RANK_IDS = np.arange(_RANKS, dtype=np.int32)


def _hands(state, seat: Array) -> Array:
    """bool [4, 13, 4]: card (rank, suit) held by the relative seat p (0 = us, 1 = left ...)."""
    seat = jnp.asarray(seat, jnp.int32)
    owner = state.owner.astype(jnp.int32)
    rel = jnp.where(owner >= 0, (owner - seat) % NUM_PLAYERS, -1)
    hands = rel[None, :] == jnp.arange(NUM_PLAYERS, dtype=jnp.int32)[:, None]     # [4, 52]
    return hands.reshape(NUM_PLAYERS, _RANKS, 4)            # card c = 4 * rank + suit


def _relative(who: Array, seat: Array) -> Array:
    """int32 []: the relative seat of absolute seat ``who`` (-1 stays -1)."""
    who = who.astype(jnp.int32)
    return jnp.where(who >= 0, (who - jnp.asarray(seat, jnp.int32)) % NUM_PLAYERS, -1)


def _general(state, seat: Array, hands: Array, ranks: bool) -> Array:
    """bool [58] (``ranks``) or [46]: the general atoms (the table's 14..71, or 14..59 of the
    unranked set)."""
    counts = hands.sum(axis=1, dtype=jnp.int32)                          # [4 p, 4 suit]
    void = counts == 0
    backers = (hands[:, :, SPADES] & _BACKER).sum(axis=1, dtype=jnp.int32)   # [4]
    high_spade = hands[:, 12, SPADES] | hands[:, 11, SPADES]             # [4] A♠ or K♠
    leader = _relative(state.leader, seat)
    lead = leader == jnp.arange(NUM_PLAYERS)

    # Exits: the lowest card of a suit still out, while another player holds the suit.
    lowest = jnp.where(hands, _RANK_IDS[None, :, None], _RANKS).min(axis=1)      # [4, 4] (13: none)
    holders = (~void).sum(axis=0, dtype=jnp.int32)                        # [4 suit]
    exit_ = (lowest == lowest.min(axis=0)) & ~void & (holders >= 2)       # [4 p, 4 suit]

    # The highest heart still out.
    heart_held = hands[:, :, HEARTS]                                      # [4, 13]
    top = jnp.where(heart_held.any(axis=0), _RANK_IDS, -1).max()
    top_heart = (heart_held[0] & (_RANK_IDS == top)).any()

    # How many of the 3 highest cards of each suit still out (in any hand) we hold.
    out = hands.any(axis=0)                                               # [13, 4]
    above = jnp.cumsum(out[::-1], axis=0, dtype=jnp.int32)[::-1] - out    # cards still out ranked above
    top3 = (hands[0] & (above < 3)).sum(axis=0, dtype=jnp.int32)          # [4 suit], 0..3
    ranked = [(top3[:, None] == jnp.arange(1, 4)).reshape(-1)] if ranks else []   # 12: [suit, k]

    tricks = state.num_played.astype(jnp.int32) // NUM_PLAYERS
    return jnp.concatenate([
        lead,                                                             # 4
        backers[0] == jnp.arange(3), (backers[0] >= 3)[None],             # 0, 1, 2, 3+
        hands[0, 12, SPADES][None], hands[0, 11, SPADES][None],
        high_spade[1:],                                                   # 3
        void[0],                                                          # 4
        counts[0] == 1,                                                   # 4
        exit_[0],                                                         # 4
        ~exit_.any(axis=1),                                               # 4: us, left ...
        (counts[0, HEARTS] >= 4)[None], top_heart[None],
        (tricks <= 3)[None], ((tricks >= 4) & (tricks <= 8))[None], (tricks >= 9)[None],
        *ranked,
        void[1:].reshape(-1),                                             # 12: [p, suit]
    ])


def _qs_specific(state, seat: Array, hands: Array) -> Array:
    """bool [14]: the Q♠ atoms (the table's 0..13)."""
    holder = _relative(state.owner[QUEEN_OF_SPADES], seat)               # -1 once played
    held_by = holder == jnp.arange(NUM_PLAYERS)                          # [4]
    played = state.played_by[QUEEN_OF_SPADES] >= 0
    taken_us = _relative(state.taken_by[QUEEN_OF_SPADES], seat) == 0
    other = holder >= 1                                                  # the "Q♠ player" exists
    h = hands[jnp.maximum(holder, 0)]                                    # [13, 4] its hand
    backers = (h[:, SPADES] & _BACKER).sum(dtype=jnp.int32)
    spades = h[:, SPADES].sum(dtype=jnp.int32)
    high = h[12, SPADES] | h[11, SPADES]
    can_dump = ~h[:, np.array([CLUBS, DIAMONDS, HEARTS])].any(axis=0)   # [3] voids
    ours = (hands[0, :, SPADES] & _BACKER).sum(dtype=jnp.int32)
    return jnp.concatenate([
        held_by,                                                         # 4
        played[None], taken_us[None],
        other & (backers == jnp.arange(3)), (other & (backers >= 3))[None],
        (other & (spades == 1))[None], (other & high)[None], (other & can_dump.any())[None],
        (other & (ours > backers))[None],
    ])


def atoms_qs(state, seat, *, ranks: bool = True) -> Array:
    """bool [72]: the Q♠ predictor's atoms of ``state`` (a :class:`jaxgames.hearts.State`,
    every hand read) from ``seat`` (int, may be traced), in the order of the module's table;
    ``ranks=False``: bool [60], the set without the ranked atoms. Jittable; vmap for a batch."""
    hands = _hands(state, seat)
    return jnp.concatenate([_qs_specific(state, seat, hands), _general(state, seat, hands, ranks)])


def atoms_hearts(state, seat, *, ranks: bool = True) -> Array:
    """bool [100]: the hearts predictor's atoms of ``state`` from ``seat``: the hearts taken by
    us (one atom per count 0..13), by the opponents together (0..13), still out (0..13), then
    the 58 general atoms (the module's table, 14..71); ``ranks=False``: bool [88], the 46
    general atoms without the ranked ones. Jittable; vmap for a batch."""
    hands = _hands(state, seat)
    taker = _relative(state.taken_by, seat)                              # [52]
    heart = jnp.asarray(np.arange(NUM_CARDS) % 4 == HEARTS)
    us = (heart & (taker == 0)).sum(dtype=jnp.int32)
    them = (heart & (taker >= 1)).sum(dtype=jnp.int32)
    out = 13 - us - them
    k = jnp.arange(14)
    return jnp.concatenate([us == k, them == k, out == k, _general(state, seat, hands, ranks)])


# -- combinations ------------------------------------------------------------------------------------


def _sizes(k: int | None, include) -> tuple[int, ...]:
    """The included subset sizes from ``k`` (1..k) or ``include`` (sizes or a FeatureSpec)."""
    if isinstance(include, FeatureSpec):
        sizes = include.sizes
    elif include is not None:
        sizes = tuple(sorted(set(int(s) for s in include)))
    elif k is not None:
        sizes = tuple(range(1, int(k) + 1))
    else:
        raise ValueError("give k (every subset of 1 to k atoms) or include (the subset sizes)")
    if k is not None and include is not None and max(sizes) > k:
        raise ValueError(f"include has sizes above k = {k}: {sizes}")
    return sizes


@dataclasses.dataclass(frozen=True)
class FeatureSpec:
    """Which AND-combinations of ``n_atoms`` atoms are features, and the static cap.

    ``sizes``: the subset sizes included (any iterable; stored sorted, without repeats), e.g.
    ``(1, 2)``, ``(1, 3)``, ``(1, 2, 3, 4)``. ``max_active``: at most this many active atoms
    are combined (the first ones by atom index; see :func:`active_indices`).
    """

    n_atoms: int
    sizes: tuple[int, ...]
    max_active: int

    def __post_init__(self):
        sizes = tuple(sorted(set(int(s) for s in self.sizes)))
        object.__setattr__(self, "sizes", sizes)
        if not isinstance(self.n_atoms, (int, np.integer)) or self.n_atoms < 1:
            raise ValueError(f"n_atoms must be an integer >= 1, got {self.n_atoms!r}")
        if not sizes or sizes[0] < 1 or sizes[-1] > self.n_atoms:
            raise ValueError(f"sizes must be integers from 1 to n_atoms = {self.n_atoms}, got {sizes}")
        if not isinstance(self.max_active, (int, np.integer)) or not 1 <= self.max_active <= self.n_atoms:
            raise ValueError(f"max_active must be an integer from 1 to n_atoms = {self.n_atoms}, "
                             f"got {self.max_active!r}")
        if self.num_features >= 2 ** 31:
            raise ValueError(f"{self.num_features} features do not fit int32 indices")

    @classmethod
    def of(cls, n_atoms: int, k: int | None = None, *, include=None, max_active: int) -> "FeatureSpec":
        """``FeatureSpec(n_atoms, sizes, max_active)`` with the sizes from ``k`` or ``include``."""
        return cls(n_atoms, _sizes(k, include), max_active)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each size's subsets start in the weight vector (one per entry of ``sizes``)."""
        out, total = [], 0
        for j in self.sizes:
            out.append(total)
            total += math.comb(self.n_atoms, j)
        return tuple(out)

    @property
    def num_features(self) -> int:
        """The length of the weight vector: the sum of C(n_atoms, j) over the sizes."""
        return sum(math.comb(self.n_atoms, j) for j in self.sizes)

    @property
    def num_slots(self) -> int:
        """M, the slots :func:`active_indices` returns: the sum of C(max_active, j)."""
        return sum(math.comb(self.max_active, j) for j in self.sizes)


def num_features(n_atoms: int, k: int | None = None, *, include=None) -> int:
    """The number of features: subsets of ``n_atoms`` atoms of sizes 1..``k``, or of the sizes
    in ``include`` (an iterable, or a :class:`FeatureSpec`). ``num_features(60, 4) == 523685``,
    ``num_features(60, include=(1, 3)) == 34280``."""
    sizes = _sizes(k, include)
    return sum(math.comb(int(n_atoms), j) for j in sizes)


@functools.lru_cache(maxsize=None)
def _tables(spec: FeatureSpec):
    """Static NumPy tables of ``spec``: the colex weights C(c, t + 1) by atom (a sentinel row
    of zeros at ``n_atoms``), and per included size with slots: (size, offset, the flat
    positions into the [max_active, k] contribution table, the largest active position each
    subset uses)."""
    n, a, kmax = spec.n_atoms, spec.max_active, spec.sizes[-1]
    binom = np.array([[math.comb(c, t + 1) for t in range(kmax)] for c in range(n)] + [[0] * kmax],
                     np.int64)
    assert binom.max() < 2 ** 31
    parts = []
    for j, off in zip(spec.sizes, spec.offsets):
        subsets = np.array(list(_combinations(a, j)), np.int32).reshape(-1, j)   # [C(a, j), j]
        if len(subsets) == 0:
            continue
        flat = (subsets * kmax + np.arange(j)[None, :]).reshape(-1)              # into [a * kmax]
        parts.append((j, off, flat, subsets[:, -1].copy()))
    return binom.astype(np.int32), tuple(parts)


def _combinations(n: int, j: int):
    """Every j-subset of range(n), ascending within, in colex order."""
    return sorted(itertools.combinations(range(n), j), key=lambda c: c[::-1])


def active_indices(atoms: Array, *, k: int | None = None, max_active: int | None = None,
                   include=None) -> tuple[Array, Array]:
    """The features active in a state: ``(indices int32 [..., M], valid bool [..., M])``.

    ``atoms``: bool [..., n] (any leading batch axes; vmap works too). The sizes come from
    ``k`` (1..k) or ``include`` (sizes, or a :class:`FeatureSpec`, which also gives
    ``max_active``). ``M = sum_j C(max_active, j)`` over the sizes (``spec.num_slots``).

    The first ``max_active`` active atoms (lowest atom indices) are combined: every included
    subset of them is one slot, its index in the weight vector by the module's layout. **Past
    the cap** the further active atoms are dropped: no feature containing one is active (a
    linear value reads them as if off); :func:`overflow` tells when that happened. Slots past
    the active atoms (fewer than ``max_active`` active) are invalid: ``valid`` False, index 0;
    mask them. Valid indices are distinct and in ``[0, num_features)``.

    Branch-free, no scatter: the i-th active atom is found by a [max_active, n] compare on the
    running count, the colex terms C(atom, t + 1) by one small gather, each slot's sum by
    static index tables built once in NumPy.
    """
    atoms = jnp.asarray(atoms).astype(jnp.bool_)
    n = atoms.shape[-1]
    if isinstance(include, FeatureSpec):
        spec = include
        if max_active is not None and max_active != spec.max_active:
            raise ValueError(f"max_active {max_active} differs from the spec's {spec.max_active}")
    else:
        if max_active is None:
            raise ValueError("give max_active (or a FeatureSpec as include)")
        spec = FeatureSpec(n, _sizes(k, include), max_active)
    if spec.n_atoms != n:
        raise ValueError(f"atoms have {n} entries, the spec {spec.n_atoms}")
    binom, parts = _tables(spec)
    a, kmax = spec.max_active, spec.sizes[-1]

    rank = jnp.cumsum(atoms, axis=-1, dtype=jnp.int32) - 1                   # [..., n]
    slot = jnp.arange(a, dtype=jnp.int32)
    hit = atoms[..., None, :] & (rank[..., None, :] == slot[:, None])        # [..., a, n]
    pos = jnp.where(hit, jnp.arange(n, dtype=jnp.int32), 0).sum(axis=-1)     # [..., a]
    pos = jnp.where(hit.any(axis=-1), pos, n)                                # n: no atom (zeros)
    count = jnp.minimum(atoms.sum(axis=-1, dtype=jnp.int32), a)              # [...]
    terms = jnp.asarray(binom)[pos].reshape(*pos.shape[:-1], a * kmax)        # [..., a * kmax]

    indices, valid = [], []
    for j, off, flat, last in parts:
        idx = jnp.take(terms, jnp.asarray(flat), axis=-1).reshape(*terms.shape[:-1], -1, j).sum(-1) + off
        ok = jnp.asarray(last) < count[..., None]                             # [..., C(a, j)]
        indices.append(jnp.where(ok, idx, 0))
        valid.append(ok)
    return jnp.concatenate(indices, axis=-1).astype(jnp.int32), jnp.concatenate(valid, axis=-1)


def capped(atoms: Array, max_active: int) -> Array:
    """bool [..., n]: the atoms :func:`active_indices` combines: the first ``max_active``
    active atoms (the others dropped)."""
    atoms = jnp.asarray(atoms).astype(jnp.bool_)
    return atoms & (jnp.cumsum(atoms, axis=-1, dtype=jnp.int32) <= max_active)


def overlaps(atoms: Array, spec: FeatureSpec) -> Array:
    """float32 [..., T, T]: how many features each pair of states shares, for
    ``train.algos.linear_td``'s ``overlap`` (cheaper than from the indices). ``atoms`` bool
    [..., T, n]. The active features of a state are the included subsets of its capped atoms,
    so two states share the included subsets of their capped atoms' intersection:
    ``sum_j C(|cap_t ∩ cap_u|, j)`` over the sizes j."""
    cap = capped(atoms, spec.max_active).astype(jnp.float32)
    common = jnp.einsum("...tn,...un->...tu", cap, cap).astype(jnp.int32)   # [..., T, T]
    table = np.array([sum(math.comb(x, j) for j in spec.sizes) for x in range(spec.max_active + 1)],
                     np.float32)
    return jnp.asarray(table)[common]


def overflow(atoms: Array, max_active: int) -> Array:
    """bool [...]: more than ``max_active`` atoms are active (some were dropped)."""
    return jnp.asarray(atoms).astype(jnp.int32).sum(axis=-1) > max_active


def encode(subset: Iterable[int], n_atoms: int, k: int | None = None, *, include=None) -> int:
    """The index of the feature ANDing the atoms ``subset`` (distinct atom indices)."""
    atoms = sorted(int(c) for c in subset)
    sizes = _sizes(k, include)
    if len(set(atoms)) != len(atoms) or len(atoms) not in sizes or not all(0 <= c < n_atoms for c in atoms):
        raise ValueError(f"{atoms} is no feature of {n_atoms} atoms with sizes {sizes}")
    offset = sum(math.comb(n_atoms, i) for i in sizes if i < len(atoms))
    return offset + sum(math.comb(c, t + 1) for t, c in enumerate(atoms))


def decode(index: int, n_atoms: int, k: int | None = None, *, include=None) -> tuple[int, ...]:
    """The atoms (ascending) ANDed by feature ``index``: the inverse of :func:`encode`."""
    index = int(index)
    sizes = _sizes(k, include)
    if not 0 <= index < num_features(n_atoms, include=sizes):
        raise ValueError(f"feature index {index} out of range for {n_atoms} atoms with sizes {sizes}")
    for j in sizes:
        count = math.comb(n_atoms, j)
        if index < count:
            break
        index -= count
    out = []
    for t in range(j - 1, -1, -1):       # colex unranking: the largest c with C(c, t + 1) <= index
        c = t
        while math.comb(c + 1, t + 1) <= index:
            c += 1
        out.append(c)
        index -= math.comb(c, t + 1)
    return tuple(reversed(out))


def combination_names(index: int, names: Sequence[str], k: int | None = None, *, include=None,
                      sep: str = " AND ") -> str:
    """Feature ``index`` in words: its atoms' ``names`` joined by ``sep``, e.g.
    ``combination_names(i, ATOM_NAMES_QS, 4)`` -> ``"we hold the Q♠ AND we are void in clubs"``."""
    return sep.join(names[c] for c in decode(index, len(names), k, include=include))
