"""The learned Hearts player of Sturtevant & White: a linear value over AND-combinations of
boolean atoms (:mod:`jaxgames.hearts.features`), read at the leaves of max^n over the current
trick (:mod:`jaxgames.hearts.trick_maxn`), under perfect information or inside PIMC.

Three predictors, as the source's section 2:

* ``"qs"``: the Q♠ points a seat will take (13 or 0), from the 72 Q♠ atoms; learned at the
  states between tricks while the Q♠ is still in a hand; the output cut to (0, 13).
* ``"hearts"``: the hearts a seat will take in the hand (0..13), from the 100 hearts atoms;
  learned at the states between tricks while a heart is still in a hand; cut to (0, 13).
* ``"combined"``: every point a seat will take in the hand (0..26), over the features the two
  predictors found most useful (the source: the top 10,000 of the Q♠ predictor and the top
  2,000 of the hearts predictor, by the size of their learned weight): each selected feature
  keeps its own atoms, so a state's active features are its active Q♠ combinations and its
  active hearts combinations that were selected; learned at the states between tricks while a
  point is still in a hand; cut to (0, 26).

Each predictor's output is the seat's points *in the whole hand* (the source: "how many hearts
we would take within a game"): the points it has taken so far plus the weights' sum
(``train.algos.linear_td``'s ``offset``), cut to the range, so the weights learn the points
*still to come*. The search wants those: a leaf's value is minus (the output minus the points
taken, at least 0), and 0 once no point of the predictor's kind is left in a hand; the
trick's own rewards (minus the points taken in it) are added by the search, so every seat
minimises the points of the trick plus the points it expects later. (With the taken points
left to the weights, a player whose weights had not learned them was indifferent to taking
points: the points of a trick came back as points no longer to come; measured, docs/lab/hearts.md.)
The same value stands for the opponents (the source's).

A :class:`ValueSpec` is everything static about a learned value (hashable: the policies
below are built once per spec and env); the weights are the policies' ``params``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Policy
from jaxgames.hearts import features as feat
from jaxgames.hearts import trick_maxn
from jaxgames.hearts.bots import pass_action
from jaxgames.hearts.cards import HEARTS, NUM_CARDS, POINTS, QUEEN_OF_SPADES
from jaxgames.hearts.game import Hearts, State
from jaxgames.search.pimc import pimc_policy as _pimc_policy

Array = jax.Array

__all__ = ["CLIP_MARGIN", "LEAF_CHUNK", "PREDICTORS", "ValueSpec", "atoms_fn", "combined_spec", "features_fn",
           "features_of_atoms", "imperfect_policy", "offset", "outcome", "perfect_policy", "record", "select_top",
           "taken", "to_come", "top_features", "value_fn"]

PREDICTORS = ("qs", "hearts", "combined")
#: each predictor's value range (points of the hand)
RANGE = {"qs": 13.0, "hearts": 13.0, "combined": 26.0}
#: the output is cut to [CLIP_MARGIN, range - CLIP_MARGIN]: the source's "0+" and "13-", so a
#: search tells "will take it" from "has taken it"; training (``train.games.hearts``) cuts the same
CLIP_MARGIN = 1e-3
#: leaves per chunk of the trick search: a chunk's distinct atom vectors are valued once, so a
#: larger chunk than the search's default shares more
LEAF_CHUNK = 256
#: the card the learned player takes among equal values: the highest. The value sees few ranks,
#: so most of a hand's cards leave the same atoms behind and tie; keeping the low cards (the
#: lowest on ties) and shedding the high ones is the game's own advice. Measured: the same
#: weights lost to PIE by 0.45 and 0.46 points a hand with the lowest, beat it by 0.54 and 0.41
#: with the highest (docs/hearts_training.md)
TIES = "highest"

_HEART = np.arange(NUM_CARDS) % 4 == HEARTS
_QS = np.arange(NUM_CARDS) == QUEEN_OF_SPADES
#: the cards each predictor counts, and their points
_COUNTED = {"qs": _QS, "hearts": _HEART, "combined": POINTS > 0}
_POINTS = POINTS.astype(np.float32)


@dataclasses.dataclass(frozen=True)
class ValueSpec:
    """What a learned value is, apart from its weights.

    ``qs`` / ``hearts``: the combinations of the Q♠ atoms (72, or 60 without the ranked ones)
    and of the hearts atoms (100, or 88) (sizes and the cap on active atoms); the ``"qs"`` predictor uses the first, ``"hearts"`` the
    second, ``"combined"`` the features ``qs_selected`` (ascending indices into the ``qs``
    combinations) and ``hearts_selected`` (into the ``hearts`` ones), in that order: weight
    ``i < len(qs_selected)`` is Q♠ combination ``qs_selected[i]``, the rest hearts combinations.
    """

    predictor: str
    qs: feat.FeatureSpec
    hearts: feat.FeatureSpec
    qs_selected: tuple[int, ...] = ()
    hearts_selected: tuple[int, ...] = ()

    def __post_init__(self):
        if self.predictor not in PREDICTORS:
            raise ValueError(f"predictor must be one of {', '.join(PREDICTORS)}, got {self.predictor!r}")
        atoms = (self.qs.n_atoms, self.hearts.n_atoms)
        if atoms not in (feat.atom_counts(True), feat.atom_counts(False)):
            raise ValueError(f"the Q♠ and hearts specs need {feat.NUM_ATOMS_QS} and {feat.NUM_ATOMS_HEARTS} atoms "
                             f"(or {feat.NUM_ATOMS_QS_UNRANKED} and {feat.NUM_ATOMS_HEARTS_UNRANKED} without the "
                             f"ranked ones), got {atoms[0]} and {atoms[1]}")
        object.__setattr__(self, "qs_selected", tuple(int(i) for i in self.qs_selected))
        object.__setattr__(self, "hearts_selected", tuple(int(i) for i in self.hearts_selected))
        if self.predictor != "combined":
            if self.qs_selected or self.hearts_selected:
                raise ValueError(f"only the combined predictor selects features, not {self.predictor!r}")
            return
        for name, sel, spec in (("qs_selected", self.qs_selected, self.qs),
                                ("hearts_selected", self.hearts_selected, self.hearts)):
            if list(sel) != sorted(set(sel)) or (sel and not 0 <= sel[0] <= sel[-1] < spec.num_features):
                raise ValueError(f"{name} must be distinct ascending feature indices in [0, {spec.num_features})")
        if not self.qs_selected and not self.hearts_selected:
            raise ValueError("the combined predictor needs selected features")

    @property
    def ranks(self) -> bool:
        """The atom sets include the ranked atoms (:mod:`jaxgames.hearts.features`)."""
        return self.qs.n_atoms == feat.NUM_ATOMS_QS

    @property
    def value_high(self) -> float:
        return RANGE[self.predictor]

    @property
    def num_features(self) -> int:
        """The length of the weight vector."""
        if self.predictor == "qs":
            return self.qs.num_features
        if self.predictor == "hearts":
            return self.hearts.num_features
        return len(self.qs_selected) + len(self.hearts_selected)

    @property
    def num_slots(self) -> int:
        """M, the length of :func:`features_fn`'s arrays."""
        if self.predictor == "qs":
            return self.qs.num_slots
        if self.predictor == "hearts":
            return self.hearts.num_slots
        return self.qs.num_slots + self.hearts.num_slots

    def names(self, index: int) -> str:
        """Feature ``index`` of the weight vector in words (its atoms ANDed)."""
        qs_names = feat.atom_names("qs", self.qs.n_atoms)
        hearts_names = feat.atom_names("hearts", self.hearts.n_atoms)
        if self.predictor == "qs":
            return feat.combination_names(index, qs_names, include=self.qs)
        if self.predictor == "hearts":
            return feat.combination_names(index, hearts_names, include=self.hearts)
        if index < len(self.qs_selected):
            return "[Q♠] " + feat.combination_names(self.qs_selected[index], qs_names, include=self.qs)
        index -= len(self.qs_selected)
        return "[hearts] " + feat.combination_names(self.hearts_selected[index], hearts_names, include=self.hearts)


def _lookup(selected: tuple[int, ...], size: int, offset: int) -> np.ndarray:
    """int32 [size]: the weight of each combination (``offset`` + its rank in ``selected``), -1
    for the combinations not selected."""
    table = np.full(size, -1, np.int32)
    table[np.asarray(selected, np.int64)] = offset + np.arange(len(selected), dtype=np.int32)
    return table


@functools.lru_cache(maxsize=16)
def atoms_fn(spec: ValueSpec) -> Callable[[State, Array], Array]:
    """``atoms(state, seat) -> bool [K]``: what the value reads of ``state`` for ``seat``, the
    capped atoms of the predictor's atom sets (the Q♠ atoms, the hearts atoms, or both in that
    order): a state's features are all a function of them (:func:`features_of_atoms`)."""
    def atoms(state, seat):
        parts = []
        if spec.predictor in ("qs", "combined"):
            parts.append(feat.capped(feat.atoms_qs(state, seat, ranks=spec.ranks), spec.qs.max_active))
        if spec.predictor in ("hearts", "combined"):
            parts.append(feat.capped(feat.atoms_hearts(state, seat, ranks=spec.ranks), spec.hearts.max_active))
        return jnp.concatenate(parts)

    return atoms


@functools.lru_cache(maxsize=16)
def features_of_atoms(spec: ValueSpec) -> Callable[[Array], tuple[Array, Array]]:
    """``features(atoms) -> (indices int32 [M], valid bool [M])`` from :func:`atoms_fn`'s atoms."""
    if spec.predictor == "qs":
        return lambda atoms: feat.active_indices(atoms, include=spec.qs)
    if spec.predictor == "hearts":
        return lambda atoms: feat.active_indices(atoms, include=spec.hearts)
    qs_table = _lookup(spec.qs_selected, spec.qs.num_features, 0)
    hearts_table = _lookup(spec.hearts_selected, spec.hearts.num_features, len(spec.qs_selected))

    def features(atoms):
        qi, qv = feat.active_indices(atoms[:spec.qs.n_atoms], include=spec.qs)
        hi, hv = feat.active_indices(atoms[spec.qs.n_atoms:], include=spec.hearts)
        qw = jnp.asarray(qs_table)[qi]
        hw = jnp.asarray(hearts_table)[hi]
        idx = jnp.concatenate([qw, hw])
        valid = jnp.concatenate([qv & (qw >= 0), hv & (hw >= 0)])
        return jnp.where(valid, idx, 0), valid

    return features


@functools.lru_cache(maxsize=16)
def features_fn(spec: ValueSpec) -> Callable[[State, Array], tuple[Array, Array]]:
    """``features(state, seat) -> (indices int32 [M], valid bool [M])``: the active features
    of ``state`` for ``seat`` (every hand read), M = ``spec.num_slots``."""
    atoms, features = atoms_fn(spec), features_of_atoms(spec)
    return lambda state, seat: features(atoms(state, seat))


def _left(state: State, predictor: str) -> Array:
    """bool []: a card the predictor counts is still in a hand."""
    return jnp.any((state.owner >= 0) & jnp.asarray(_COUNTED[predictor]))


def taken(state: State, seat: Array, predictor: str) -> Array:
    """float32 []: the points of the predictor's kind ``seat`` has taken this hand."""
    mine = (state.taken_by == seat) & jnp.asarray(_COUNTED[predictor])
    return jnp.sum(jnp.where(mine, jnp.asarray(_POINTS), 0.0))


def record(predictor: str) -> Callable[[State], Array]:
    """``record(state) -> bool []``: a state the value is learned at: in play, between tricks
    (no card on the table), a point of the predictor's kind still in a hand."""
    def rec(state):
        return (state.leader >= 0) & jnp.all(state.trick < 0) & _left(state, predictor) & ~state.terminated
    return rec


def outcome(predictor: str) -> Callable[[State, Array], Array]:
    """``outcome(final_state, seat) -> float32 []``: the points of the predictor's kind the
    seat took in the hand (the moon not applied: training has it off)."""
    return lambda state, seat: taken(state, seat, predictor)


def offset(predictor: str) -> Callable[[State, Array], Array]:
    """``offset(state, seat) -> float32 []``: the known part of the output, the points of the
    predictor's kind the seat has taken (``train.algos.linear_td``'s ``offset``)."""
    return lambda state, seat: taken(state, seat, predictor)


def _weights_sum(spec: ValueSpec) -> Callable[[Array, Array], Array]:
    features = features_of_atoms(spec)

    def total(weights, atoms):
        idx, valid = features(atoms)
        return jnp.where(valid, weights[idx], 0.0).sum()

    return total


def _points_to_come(spec: ValueSpec, weights_sum: Array, state: State, seat: Array) -> Array:
    have = taken(state, seat, spec.predictor)
    out = jnp.clip(have + weights_sum, CLIP_MARGIN, spec.value_high - CLIP_MARGIN)
    return jnp.where(_left(state, spec.predictor), jnp.maximum(out - have, 0.0), 0.0)


def to_come(spec: ValueSpec) -> Callable[[Array, State, Array], Array]:
    """``to_come(weights, state, seat) -> float32 []``: the points the seat is predicted still
    to take: the output (the points taken plus the weights' sum, cut to the range, as
    training reads it) minus the points taken, at least 0; 0 once nothing of the predictor's
    kind is left."""
    atoms, total = atoms_fn(spec), _weights_sum(spec)
    return lambda weights, state, seat: _points_to_come(spec, total(weights, atoms(state, seat)), state, seat)


@functools.lru_cache(maxsize=16)
def value_fn(spec: ValueSpec) -> trick_maxn.KeyedValue:
    """``value_fn(weights, state) -> float32 [4]`` for the trick search: minus each seat's
    predicted points to come. A :class:`~jaxgames.hearts.trick_maxn.KeyedValue` keyed by the
    capped atoms, so the search sums the weights once per distinct atom vector of its leaves."""
    return trick_maxn.KeyedValue(
        key=atoms_fn(spec), costly=_weights_sum(spec),
        finish=lambda weights, state, seat, total: -_points_to_come(spec, total, state, seat))


@functools.lru_cache(maxsize=16)
def perfect_policy(spec: ValueSpec, env: Hearts) -> Policy:
    """``policy(weights, state, key)``: max^n to the end of the trick with the learned value,
    reading every hand (perfect information, as PIE); ties to the highest card (:data:`TIES`)."""
    return trick_maxn.trick_search_policy(env, value_fn(spec), chunk=LEAF_CHUNK, ties=TIES)


@functools.lru_cache(maxsize=16)
def imperfect_policy(spec: ValueSpec, env: Hearts, num_worlds: int = 20) -> Policy:
    """``policy(weights, state, key)``: PIMC over ``num_worlds`` worlds dealt from the mover's
    view (the source: 20), the learned trick search in each; honest; the passing rule of the
    bots while passing."""
    pimc = _pimc_policy(env, trick_maxn.trick_search_values(env, value_fn(spec), chunk=LEAF_CHUNK), num_worlds=num_worlds,
                        ties=TIES)

    def policy(weights: Any, state: State, key: Array) -> Array:
        passing = state.leader < 0
        hand = state.owner == state.current_player.astype(state.owner.dtype)
        pass_card = pass_action(hand, state.legal_action_mask)
        return jnp.where(passing, pass_card, pimc(weights, state, key)).astype(jnp.int32)

    return policy


def top_features(weights, spec: ValueSpec, n: int) -> list[tuple[int, float, str]]:
    """The ``n`` features of largest weight (most points predicted) then, if asked by a
    negative ``n``, of smallest: ``[(index, weight, words)]``."""
    w = np.asarray(weights)
    order = np.argsort(-w, kind="stable") if n > 0 else np.argsort(w, kind="stable")
    return [(int(i), float(w[i]), spec.names(int(i))) for i in order[:abs(n)]]


def select_top(weights, count: int) -> tuple[int, ...]:
    """The ``count`` indices of largest absolute weight (the source's "most useful features":
    a feature that says a seat will not take the points weighs as much as one that says it
    will), ascending; ties to the lower index."""
    w = np.abs(np.asarray(weights, np.float64))
    if not 0 <= count <= len(w):
        raise ValueError(f"cannot select {count} of {len(w)} features")
    order = np.argsort(-w, kind="stable")[:count]
    return tuple(int(i) for i in np.sort(order))


def combined_spec(qs: feat.FeatureSpec, hearts: feat.FeatureSpec, qs_weights, hearts_weights, *,
                  top_qs: int, top_hearts: int) -> tuple[ValueSpec, np.ndarray]:
    """The combined predictor over the top features of a Q♠ and a hearts predictor, and its
    starting weights (each selected feature's learned weight: the sum of the two predictions,
    as far as the selected features carry it)."""
    qs_sel = select_top(qs_weights, min(top_qs, qs.num_features))
    hearts_sel = select_top(hearts_weights, min(top_hearts, hearts.num_features))
    spec = ValueSpec("combined", qs, hearts, qs_sel, hearts_sel)
    start = np.concatenate([np.asarray(qs_weights, np.float32)[list(qs_sel)],
                            np.asarray(hearts_weights, np.float32)[list(hearts_sel)]])
    return spec, start
