"""Hand evaluator: the same order as eval7 and phevaluator on random 5-, 6- and 7-card hands;
hand-made hands of every category and tie rule; the best five of seven; category counts over
every 5- and 7-card hand (exact) and a random sample (statistical); batching, dtypes, errors,
no recompiles."""

from __future__ import annotations

import itertools

import chex
import eval7
import jax
import jax.numpy as jnp
import numpy as np
import phevaluator
import pytest
from phevaluator import evaluate_cards

from bench.hand_eval_exhaustive import all_hands, category_counts
from jaxgames.holdem import hand_eval as H

# Jitted once per module (compiled once per input shape).
_evaluate = jax.jit(H.evaluate)
_EVAL7_CARDS = [eval7.Card(H.card_name(i)) for i in range(52)]
_EVAL7_CATEGORY = {"High Card": H.HIGH_CARD, "Pair": H.ONE_PAIR, "Two Pair": H.TWO_PAIR,
                   "Trips": H.THREE_OF_A_KIND, "Straight": H.STRAIGHT, "Flush": H.FLUSH,
                   "Full House": H.FULL_HOUSE, "Quads": H.FOUR_OF_A_KIND,
                   "Straight Flush": H.STRAIGHT_FLUSH}
_SAMPLE = {7: 200_000, 6: 50_000, 5: 50_000}


def _random_hands(num: int, n: int, seed: int) -> np.ndarray:
    """int8 [num, n]: uniformly random hands of n distinct cards."""
    return np.argsort(np.random.default_rng(seed).random((num, 52)), axis=1)[:, :n].astype(np.int8)


_samples: dict = {}


def _sample(n: int):
    """(n, hands int8 [S, n], our values int32 [S]) of a fixed random sample, made once."""
    if n not in _samples:
        hands = _random_hands(_SAMPLE[n], n, seed=n)
        _samples[n] = n, hands, np.asarray(_evaluate(hands))
    return _samples[n]


@pytest.fixture(params=[7, 6, 5])
def sample(request):
    return _sample(request.param)


def _dense_rank(values) -> np.ndarray:
    """Each value's position among the distinct values: equal iff equal, less iff less."""
    return np.unique(np.asarray(values), return_inverse=True)[1]


_PAD = 16


def values(*hands: str) -> list[int]:
    """Values of hands written as text, all of one size (evaluated as one padded batch)."""
    cards = [H.parse_cards(h) for h in hands]
    assert len(cards) <= _PAD and len({len(c) for c in cards}) == 1
    batch = np.stack(cards + [cards[0]] * (_PAD - len(cards)))
    return [int(v) for v in _evaluate(batch)[:len(hands)]]


def value(hand: str) -> int:
    return values(hand)[0]


# -- the card encoding ------------------------------------------------------------------------


def test_card_encoding_is_phevaluators():
    for i in range(52):
        name = H.card_name(i)
        assert str(phevaluator.Card(i)) == name          # phevaluator's integer card i
        assert phevaluator.Card(name).id_ == i == H.card_index(name)
        assert str(eval7.Card(name)) == name
    assert (H.card_index("2c"), H.card_index("2d"), H.card_index("2h"), H.card_index("2s")) == (0, 1, 2, 3)
    assert H.card_index("As") == 51 and H.card_index("tH") == 4 * 8 + 2
    np.testing.assert_array_equal(H.parse_cards("As Kd 2c"), [51, 45, 0])
    np.testing.assert_array_equal(H.parse_cards("AsKd2c"), [51, 45, 0])
    assert H.parse_cards("As").dtype == np.int8
    for bad in ("1s", "Ax", "A", "Asd", 51):
        with pytest.raises(ValueError):
            H.card_index(bad)
    for bad in (-1, 52):
        with pytest.raises(ValueError):
            H.card_name(bad)
    with pytest.raises(ValueError):
        H.parse_cards("As K")


# -- against eval7 and phevaluator ------------------------------------------------------------


def test_same_order_as_eval7_and_phevaluator(sample):
    n, hands, ours = sample
    rows = hands.tolist()
    e7 = np.fromiter((eval7.evaluate([_EVAL7_CARDS[c] for c in h]) for h in rows), np.int64, len(rows))
    ph = np.fromiter((evaluate_cards(*h) for h in rows), np.int64, len(rows))  # 1 is the best
    ours_rank = _dense_rank(ours)
    np.testing.assert_array_equal(ours_rank, _dense_rank(e7))
    np.testing.assert_array_equal(ours_rank, _dense_rank(-ph))
    # A sample this size holds thousands of distinct strengths: the comparison has teeth.
    assert ours_rank.max() > 3000
    cats = np.asarray(H.category(ours))
    theirs = np.array([_EVAL7_CATEGORY[eval7.handtype(int(v))] for v in e7])
    np.testing.assert_array_equal(cats, theirs)


def test_suits_and_card_order_never_matter(sample):
    n, hands, ours = sample
    rng = np.random.default_rng(100 + n)
    perm = np.array([2, 0, 3, 1])                  # a relabelling of the four suits
    relabelled = (hands // 4) * 4 + perm[hands % 4]
    shuffled = rng.permuted(relabelled, axis=1)    # and the cards in another order
    np.testing.assert_array_equal(np.asarray(_evaluate(shuffled.astype(np.int8))), ours)


@pytest.mark.parametrize("n", [6, 7])
def test_best_five_of_six_and_seven(n):
    """A 6- or 7-card value is the largest of its five-card sub-hands' values."""
    n, hands, ours = _sample(n)
    subsets = np.array(list(itertools.combinations(range(n), 5)))      # [C(n,5), 5]
    some = hands[:20_000]
    fives = some[:, subsets]                                           # [20000, C(n,5), 5]
    np.testing.assert_array_equal(np.asarray(_evaluate(fives)).max(axis=1), ours[:20_000])


def test_category_frequencies_of_the_sample():
    n, hands, ours = _sample(7)
    observed = np.bincount(np.asarray(H.category(ours)), minlength=9)
    p = np.array(H.SEVEN_CARD_COUNTS) / sum(H.SEVEN_CARD_COUNTS)
    expected = len(hands) * p
    sigma = np.sqrt(len(hands) * p * (1 - p))
    assert (np.abs(observed - expected) < 5 * sigma).all(), (observed, expected.round())


# -- every hand ---------------------------------------------------------------------------------


def test_every_seven_card_hand_category_counts(optimised_compiles):
    with optimised_compiles():   # 133 M hands: far more running than compiling
        counts = category_counts(7)
    assert counts.sum() == 133_784_560
    assert tuple(counts.tolist()) == H.SEVEN_CARD_COUNTS   # straight flush 41,584 ... high card


def test_every_five_card_hand_counts_and_classes():
    hands = all_hands(5)
    assert hands.shape == (2_598_960, 5)
    # Each hand as a 52-bit set: a sum of five powers of two has five bits set iff they differ.
    sets = np.sort(sum(np.int64(1) << hands[:, i].astype(np.int64) for i in range(5)))
    assert (np.bitwise_count(sets) == 5).all() and (sets[1:] != sets[:-1]).all()
    vals = np.asarray(_evaluate(hands))
    assert tuple(np.bincount(vals >> H.CATEGORY_SHIFT, minlength=9).tolist()) == H.FIVE_CARD_COUNTS
    classes, first = np.unique(vals, return_index=True)
    assert len(classes) == H.NUM_CLASSES[5] == 7462
    # Classes per category: 10 straight flushes, 156 quads, 156 full houses, 1277 flushes,
    # 10 straights, 858 trips, 858 two pairs, 2860 pairs, 1277 high cards.
    per_category = np.bincount(classes >> H.CATEGORY_SHIFT, minlength=9)
    assert per_category[::-1].tolist() == [10, 156, 156, 1277, 10, 858, 858, 2860, 1277]
    # One hand per class, in our order, is in phevaluator's order (7462 = the worst ... 1).
    ranks = np.array([evaluate_cards(*h) for h in hands[first].tolist()])
    np.testing.assert_array_equal(ranks, np.arange(7462, 0, -1))


# -- hand-made hands ----------------------------------------------------------------------------


def test_one_hand_of_each_category_in_order():
    ladder = ["As Kd 9h 7c 5s 3d 2h", "As Ad 9h 7c 5s 3d 2h", "As Ad 9h 9c 5s 3d 2h",
              "As Ad Ah 9c 5s 3d 2h", "5s 6d 7h 8c 9s Kd 2h", "2h 5h 7h 9h Jh Ac 8d",
              "Ks Kh Kd 9c 9s 3h 2c", "9s 9h 9d 9c Ks Kh 2c", "9h Th Jh Qh Kh 2c 2d"]
    vals = values(*ladder)
    assert [v >> H.CATEGORY_SHIFT for v in vals] == list(range(9))
    assert vals == sorted(vals) and len(set(vals)) == 9
    assert np.asarray(H.category(jnp.asarray(vals))).tolist() == list(range(9))
    assert [H.describe(v) for v in vals] == [
        "high card: A K 9 7 5", "one pair: A, kickers 9 7 5", "two pair: A 9, kicker 5",
        "three of a kind: A, kickers 9 5", "straight: 9 high", "flush: J 9 7 5 2",
        "full house: K full of 9", "four of a kind: 9, kicker K", "straight flush: K high"]


def test_wheel_and_straights():
    wheel, six_high, trips, wheel5, broadway, king_high, no_wrap, long_run, paired_run = values(
        "Ah 2c 3d 4s 5h 9c Kd", "2c 3d 4s 5h 6c 9c Kd", "Ah Ac Ad 4s 5h 9c Kd",
        "Ah 2c 3d 4s 5h Jd Jc", "Ts Jd Qh Kc Ac 2d 3h", "9s Ts Jd Qh Kc 2d 3h",
        "Qs Kd Ah 2c 3d 7h 8s", "4c 5d 6h 7s 8c 9d Kh", "5d 6h 7s 8c 9d 9c 9h")
    assert H.describe(wheel) == "straight: 5 high"          # the ace plays low
    assert trips < wheel < six_high < king_high < broadway
    assert wheel == wheel5                                   # a pair beside it changes nothing
    assert no_wrap >> H.CATEGORY_SHIFT == H.HIGH_CARD        # Q-K-A-2-3 is no straight
    assert long_run == paired_run and H.describe(long_run) == "straight: 9 high"  # beats the trips
    assert value("Ah 2c 3d 4s 5h") == wheel                  # five cards: the same value


def test_straight_flushes():
    steel, six_sf, quads, nine_sf, sf_in_six_flush, ace_flush = values(
        "Ah 2h 3h 4h 5h Kc Kd", "2h 3h 4h 5h 6h Kc Kd", "As Ad Ah Ac Ks Kd Kh",
        "5h 6h 7h 8h 9h Tc Jd", "4h 5h 6h 7h 8h Ah Kh", "4h 5h 6h 7h 9h Ah Kh")
    assert H.describe(steel) == "straight flush: 5 high"
    assert quads < steel < sf_in_six_flush < nine_sf and steel < six_sf
    assert H.describe(nine_sf) == "straight flush: 9 high"   # not the J-high straight
    assert H.describe(sf_in_six_flush) == "straight flush: 8 high"  # not the ace-high flush
    assert ace_flush >> H.CATEGORY_SHIFT == H.FLUSH
    # Six cards: a steel wheel beside an off-suit six is the steel wheel, not the 6-high straight.
    assert value("Ah 2h 3h 4h 5h 6c") == value("Ah 2h 3h 4h 5h") == steel


def test_flush_beats_straight_and_keeps_its_top_five():
    flush_and_straight, straight, seven_flush, six_flush, other_suit, higher = values(
        "2h 5h 7h 9h Jh Tc 8d", "7c 8d 9h Tc Jd 2h 5h", "2h 4h 6h 8h Th Qh Kh",
        "3h 4h 6h 8h Th Qh Kh", "6d 8d Td Qd Kd 2c 3s", "7h 4h 6h 8h Th Qh Kh")
    assert flush_and_straight >> H.CATEGORY_SHIFT == H.FLUSH and straight < flush_and_straight
    assert seven_flush == six_flush == other_suit < higher
    assert H.describe(seven_flush) == "flush: K Q T 8 6"


def test_full_houses():
    two_trips, one_trips, bigger_pair, trips_two_pairs, queens_full = values(
        "Ks Kh Kd 9c 9s 9h 2c", "Ks Kh Kd 9c 9s 2h 3c", "Ks Kh Kd Qc Qs 2h 3c",
        "Ks Kh Kd 9c 9s Qh Qc", "Qs Qh Qd Ac As Ah 2c")
    assert H.describe(two_trips) == "full house: K full of 9"
    assert two_trips == one_trips < bigger_pair == trips_two_pairs
    assert H.describe(queens_full) == "full house: A full of Q"  # the higher trips make the three


def test_three_pairs_and_kickers():
    three_pairs, kicker_q, kicker_j, low_third, single_beats_pair = values(
        "As Ad Ks Kd Qs Qd 2c", "As Ad Ks Kd Qh 3c 2c", "As Ad Ks Kd Jh 3c 2c",
        "As Ad Ks Kd 2s 2d Qc", "As Ad 3s 3d 2s 2d 4c")
    assert three_pairs >> H.CATEGORY_SHIFT == H.TWO_PAIR
    assert three_pairs == kicker_q == low_third > kicker_j
    assert H.describe(single_beats_pair) == "two pair: A 3, kicker 4"
    high_a, high_b, pair_a, pair_b, pair_c, trips_a, trips_b, trips_c = values(
        "As Kd 9h 7c 5s 3d 2h", "As Kd 9h 7c 5s 4d 3h", "As Ad Kh 9c 7s 3d 2h",
        "As Ad Kh 9c 7s 4d 2h", "As Ad Kh 9c 8s 3d 2h", "As Ad Ah Kc 7s 3d 2h",
        "As Ad Ah Kc 7s 4d 2h", "As Ad Ah Kc 8s 3d 2h")
    assert high_a == high_b and pair_a == pair_b < pair_c and trips_a == trips_b < trips_c


def test_quads_kicker_choice():
    kicker_k, kicker_k_single, over_trips, kicker_q = values(
        "9s 9h 9d 9c Ks Kh 2c", "9s 9h 9d 9c Kd 3c 2c", "9s 9h 9d 9c Ks Kh Kd",
        "9s 9h 9d 9c Qs Qh Qc")
    assert kicker_k == kicker_k_single == over_trips > kicker_q
    assert H.describe(kicker_q) == "four of a kind: 9, kicker Q"


# -- API ------------------------------------------------------------------------------------------


def test_batching_dtypes_and_vmap():
    n, hands, ours = _sample(7)
    block = hands[:60].reshape(3, 4, 5, n)
    out = _evaluate(block)
    assert out.shape == (3, 4, 5) and out.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out).reshape(-1), ours[:60])
    for dtype in (np.int32, np.uint8):
        np.testing.assert_array_equal(np.asarray(_evaluate(hands[:64].astype(dtype))), ours[:64])
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(H.evaluate))(hands[:64])), ours[:64])
    assert int(_evaluate(hands[0])) == ours[0]               # one hand, no batch axis


def test_holdem_helpers_compare_players():
    board = H.parse_cards("Ah Kh 7c 7d 2s")
    hole = np.stack([H.parse_cards("As 3c"), H.parse_cards("Kc Ks"), H.parse_cards("Ad 4c")])
    # Batch [2 deals, 3 players]: the board broadcasts over the players.
    hole_b = np.stack([hole, hole[::-1]])
    board_b = np.stack([board, board])[:, None, :]
    got = jax.jit(H.evaluate_holdem)(hole_b, board_b)
    assert got.shape == (2, 3)
    expected = values("As 3c Ah Kh 7c 7d 2s", "Kc Ks Ah Kh 7c 7d 2s", "Ad 4c Ah Kh 7c 7d 2s")
    np.testing.assert_array_equal(np.asarray(got), [expected, expected[::-1]])
    cmp = jax.jit(H.compare)
    assert int(cmp(hole[1], hole[0], board)) == 1          # kings full beat two pair
    assert int(cmp(hole[0], hole[1], board)) == -1
    assert int(cmp(hole[0], hole[2], board)) == 0          # A A 7 7 K either way: split
    # Each player against the one before: P0 ties P2, P1 beats P0, P2 loses to P1.
    np.testing.assert_array_equal(np.asarray(cmp(hole, np.roll(hole, 1, axis=0), board)), [0, 1, -1])


def test_bad_inputs():
    for shape in ((4,), (3, 8), ()):
        with pytest.raises(ValueError, match="5, 6 or 7 cards"):
            H.evaluate(jnp.zeros(shape, jnp.int8))
    with pytest.raises(TypeError, match="integers"):
        H.evaluate(jnp.zeros((7,), jnp.float32))


def test_no_recompile():
    chex.clear_trace_counter()
    fn = jax.jit(chex.assert_max_traces(H.evaluate, n=1))
    a = fn(_random_hands(1024, 7, seed=1))
    b = fn(_random_hands(1024, 7, seed=2))                  # a second batch: no new trace
    assert a.shape == b.shape == (1024,)


def test_package_exports_the_evaluator():
    from jaxgames import holdem

    assert holdem.evaluate is H.evaluate and "evaluate" in holdem.__all__
