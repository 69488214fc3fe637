"""Hand evaluator: same order as eval7 and phevaluator on random hands."""

from __future__ import annotations

import eval7
import jax
import numpy as np
from phevaluator import evaluate_cards

from jaxgames.holdem import hand_eval as H

_evaluate = jax.jit(H.evaluate)
_EVAL7_CARDS = [eval7.Card(H.card_name(i)) for i in range(52)]


def _dense_rank(values):
    return np.unique(np.asarray(values), return_inverse=True)[1]


def test_same_order_as_eval7_and_phevaluator():
    rng = np.random.default_rng(0)
    for n in (5, 6, 7):
        hands = np.argsort(rng.random((20_000, 52)), axis=1)[:, :n].astype(np.int8)
        ours = _dense_rank(_evaluate(hands))
        e7 = _dense_rank([eval7.evaluate([_EVAL7_CARDS[c] for c in h]) for h in hands.tolist()])
        ph = _dense_rank([-evaluate_cards(*h) for h in hands.tolist()])  # phevaluator: 1 is best
        np.testing.assert_array_equal(ours, e7)
        np.testing.assert_array_equal(ours, ph)
