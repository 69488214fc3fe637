"""Local best response: its known answer (always-fold loses exactly 750 mbb/hand: 1,000 on the
button, where LBR raises and the policy folds, 500 in the big blind, where the policy folds at
once), a large win against always-call, the range's Bayes update on hand-made hands, the
showdown scores against eval7 on the river, the utilities against the paper's formulas in
NumPy, LBR's choice in hand-made spots, no recompiles (one compiled LBR serves both bots), and
the all-in adjustment: an all-in before the river valued at its expected showdown result
(against eval7 over the boards still to come), every other hand left as played.
"""

from __future__ import annotations

import eval7
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.holdem import Holdem, betting, bots as B, deck_from, equity as E, lbr as L, parse_cards

ENV = Holdem()
# jitted once for the module (run eagerly, the game's first deal and step compile op by op: slower)
_deal = jax.jit(ENV.deal)
_step = jax.jit(ENV.step)
_with_hole_cards = jax.jit(L.with_hole_cards, static_argnums=1)
_showdown = jax.jit(L.showdown_result)
FOLD_OR_CALL = B.one_of([B.fold_bot(), B.call_bot()])
DEALS = 128
_EV7 = [eval7.Card(r + s) for r in "23456789TJQKA" for s in "cdhs"]


@pytest.fixture(scope="module")
def lbr():
    return L.LocalBestResponse(ENV, FOLD_OR_CALL, num_deals=DEALS, wp_samples=64)


@pytest.fixture(scope="module")
def results(lbr, optimised_compiles):
    with optimised_compiles():   # LBR's equity sampling over 256 hands: far more running than compiling
        return {"fold": lbr(jnp.int32(0), jax.random.key(0)), "call": lbr(jnp.int32(1), jax.random.key(1))}


def test_always_fold_loses_750_mbb_per_hand(results):
    r = results["fold"]
    assert r.mean == 750.0 and r.ci95 == 0.0
    # on the button LBR raises and the policy folds: +100 chips; in the big blind the policy
    # (on the button) folds its small blind at once: +50
    np.testing.assert_array_equal(r.returns[0], 100.0)
    np.testing.assert_array_equal(r.returns[1], 50.0)
    np.testing.assert_array_equal(r.seat_mean, [1000.0, 500.0])
    np.testing.assert_array_equal(r.steps, [[2] * DEALS, [1] * DEALS])


def test_the_all_in_adjustment_changes_no_hand_without_a_showdown(results):
    # against always-fold no hand reaches a showdown: the adjusted results are the results
    np.testing.assert_array_equal(results["fold"].allin_returns, results["fold"].returns)
    assert results["fold"].allin_mean == results["fold"].mean


_allin_adjusted = jax.jit(L.allin_adjusted)


def _eval7_expectation(holes, board, rng, samples=None) -> float:
    """Seat 0's expected showdown result (+1, 0, -1) over the boards still to come, by eval7:
    every completion, or ``samples`` random ones."""
    import itertools
    seen = set(holes[0] + holes[1] + board)
    rest = [c for c in range(52) if c not in seen]
    need = 5 - len(board)
    boards = (itertools.combinations(rest, need) if samples is None
              else (rng.choice(rest, need, replace=False) for _ in range(samples)))
    results = []
    for more in boards:
        full = [_EV7[c] for c in board + list(more)]
        mine, theirs = (eval7.evaluate([_EV7[c] for c in h] + full) for h in holes)
        results.append(np.sign(mine - theirs))
    return float(np.mean(results))


@pytest.mark.parametrize("street", ["preflop", "flop", "turn"])
def test_an_all_in_before_the_river_counts_its_expected_value(street):
    holes = (parse_cards("As Ad"), parse_cards("Kh Kc"))
    board = parse_cards("Qs 7d 2c 9h 4s")
    state = _deal(deck_from(*holes, board), 0)
    checks = {"preflop": (), "flop": (betting.CALL, betting.CHECK),
              "turn": (betting.CALL, betting.CHECK, betting.CHECK, betting.CHECK)}[street]
    for a in checks + (betting.ALL_IN, betting.CALL):
        state = _step(state, jnp.int32(a))
    assert bool(state.terminated) and int(state.street) == 4 and int(state.committed[0]) == 20_000
    seen = {"preflop": 0, "flop": 3, "turn": 4}[street]
    exact = _eval7_expectation(holes, board[:seen], np.random.default_rng(0),
                               samples=20_000 if street == "preflop" else None)
    for seat in (0, 1):
        won = state.rewards[seat]
        adjusted = float(_allin_adjusted(state, jnp.int32(seat), won, jax.random.key(seat)))
        # L.ALLIN_SAMPLES completions: a standard error of at most 1/32 of the contested chips
        assert abs(adjusted / 20_000 - (exact if seat == 0 else -exact)) < 0.15, (street, seat, adjusted, exact)
        assert adjusted != float(won)   # the real board (a K-less run-out: +20,000 to seat 0) is not what counts


def test_a_hand_checked_to_the_river_or_folded_counts_as_played():
    holes = (parse_cards("As Ad"), parse_cards("Kh Kc"))
    state = _deal(deck_from(*holes, parse_cards("Qs 7d 2c 9h 4s")), 0)
    folded = _step(state, jnp.int32(betting.FOLD))
    for a in (betting.CALL, betting.CHECK) + (betting.CHECK, betting.CHECK) * 2 + (betting.ALL_IN, betting.CALL):
        state = _step(state, jnp.int32(a))    # all-in on the river: the board is complete
    for done in (folded, state):
        assert bool(done.terminated)
        for seat in (0, 1):
            assert float(_allin_adjusted(done, jnp.int32(seat), done.rewards[seat], jax.random.key(0))) == float(
                done.rewards[seat])
    assert float(state.rewards[0]) == 20_000


def test_batches_pool_into_one_result(results):
    call, fold = results["call"], results["fold"]
    both = L.pooled([call, fold], 2 * DEALS, ENV.big_blind)
    assert both.num_deals == 2 * DEALS and both.returns.shape == (2, 2 * DEALS)
    np.testing.assert_allclose(both.mean, (call.mean + fold.mean) / 2, rtol=1e-9)
    np.testing.assert_allclose(both.allin_mean, (call.allin_mean + fold.allin_mean) / 2, rtol=1e-9)
    first = L.pooled([call, fold], DEALS, ENV.big_blind)     # cut to the first deals: the first batch
    assert (first.mean, first.ci95, first.allin_mean, first.allin_ci95) == (
        call.mean, call.ci95, call.allin_mean, call.allin_ci95)
    np.testing.assert_array_equal(first.steps, call.steps)


def test_lbr_beats_always_call_by_a_lot(results):
    r = results["call"]
    # a calling station pays off every value bet: LBR's winnings are tens of big blinds a hand
    assert r.mean - r.ci95 > 5_000, str(r)
    assert r.num_hands == 2 * DEALS


def test_no_recompiles(lbr, results):
    lbr(jnp.int32(0), jax.random.key(7))  # other params and key: the same program
    assert lbr._run._cache_size() == 1


# -- the range --------------------------------------------------------------------------------------


def _ace_folder():
    """Folds every hand holding the ace of spades, calls (or checks) with every other."""
    ace = parse_cards("As")[0]

    def probs(params, state, key):
        hole = ENV.observe(state, state.current_player).hole.astype(jnp.int32)
        has_ace = (hole == ace).any()
        fold = B._first_legal(state.legal_action_mask, (betting.FOLD, betting.CHECK))
        call = B._first_legal(state.legal_action_mask, (betting.CALL, betting.CHECK))
        return jnp.where(has_ace, fold, call)

    return B.player_from_probs("ace folder", probs), ace


@pytest.fixture(scope="module")
def ace_probs():
    """The ace folder's probabilities with every pair, in a hand-made state where it faces a
    raise (LBR on the button holds 2c 3d and raised ½ pot; the policy is the big blind)."""
    bot, ace = _ace_folder()
    state = _deal(deck_from(parse_cards("2c 3d"), parse_cards("Kh Qh")), 0)
    state = _step(state, jnp.int32(betting.RAISE_HALF))
    probs = jax.jit(lambda s: L.hand_probs(ENV, bot, None, s, jax.tree_util.tree_map(lambda x: x[None], s), 1,
                                           jax.random.key(0)))(state)[0]
    return state, probs, ace


def test_range_update_by_bayes_rule(ace_probs):
    state, probs, ace = ace_probs
    has_ace = (E.HOLE_PAIRS == ace).any(1)
    assert (np.asarray(probs)[has_ace, betting.FOLD] == 1).all()
    assert (np.asarray(probs)[~has_ace, betting.CALL] == 1).all()
    prior = L.prior_range(jnp.asarray(parse_cards("2c 3d")))
    blocked = np.asarray(E.blocked_hands(jnp.asarray(parse_cards("2c 3d"))))
    assert (np.asarray(prior)[blocked] == 0).all()
    np.testing.assert_allclose(np.asarray(prior)[~blocked], 1 / (~blocked).sum(), rtol=1e-6)
    # after a call no pair holds the ace; the others keep their (equal) share
    called = np.asarray(L.update_range(prior, probs, jnp.int32(betting.CALL)))
    assert called[has_ace].sum() == 0
    live = ~blocked & ~has_ace
    np.testing.assert_allclose(called[live], 1 / live.sum(), rtol=1e-5)
    # after a fold only the pairs with the ace remain
    folded = np.asarray(L.update_range(prior, probs, jnp.int32(betting.FOLD)))
    np.testing.assert_allclose(folded[~blocked & has_ace], 1 / (~blocked & has_ace).sum(), rtol=1e-5)
    assert folded[~has_ace].sum() == 0
    # an action no pair plays keeps the prior
    np.testing.assert_array_equal(L.update_range(prior, probs, jnp.int32(betting.ALL_IN)), prior)


def test_with_hole_cards_keeps_a_permutation():
    state = _deal(deck_from(parse_cards("2c 3d"), parse_cards("Kh Qh"), parse_cards("Ah 7s 8s")), 0)
    for pair in ("Ac Ad", "Qh 5c", "Kh Qh", "Qh Kh"):
        new = _with_hole_cards(state, 1, jnp.asarray(parse_cards(pair)))
        deck = np.asarray(new.deck)
        assert sorted(deck.tolist()) == list(range(52))
        assert deck[2:4].tolist() == parse_cards(pair)
        assert deck[:2].tolist() == parse_cards("2c 3d")          # the other seat keeps its cards
        assert deck[4:7].tolist() == parse_cards("Ah 7s 8s")      # and the board stays
        # the showdown result is the new deck's
        assert int(new.showdown) == int(_showdown(new.deck))


# -- LBR's decision -----------------------------------------------------------------------------------


def test_showdown_scores_match_eval7_on_the_river():
    hole, board = parse_cards("Ts 9s"), parse_cards("8s 7d 2c Kh 3s")
    score, weight = jax.jit(lambda h, b: E.showdown_scores(h, b, jax.random.key(0), num_samples=8))(
        jnp.asarray(hole), jnp.asarray(board))
    score, weight = np.asarray(score), np.asarray(weight)
    mine = eval7.evaluate([_EV7[c] for c in hole + board])
    for h, (a, b) in enumerate(E.HOLE_PAIRS):
        if {int(a), int(b)} & set(hole + board):
            assert weight[h] == 0 and score[h] == 0
            continue
        theirs = eval7.evaluate([_EV7[int(a)], _EV7[int(b)]] + [_EV7[c] for c in board])
        assert weight[h] == 8 and score[h] == 8 * ((mine > theirs) + 0.5 * (mine == theirs))
    full = eval7.HandRange(",".join(["22+"] + [f"{hi}2{k}+" for hi in "AKQJT9876543" for k in "so"]))
    exact = eval7.py_hand_vs_range_exact([_EV7[c] for c in hole], full, [_EV7[c] for c in board])
    uniform = jnp.ones(1326) / 1326
    assert float(E.win_probability(jnp.asarray(score), jnp.asarray(weight), uniform)) == pytest.approx(exact, abs=1e-6)


def test_utilities_are_the_papers_formulas():
    rng = np.random.default_rng(0)
    score = rng.integers(0, 9, 1326).astype(np.float32)
    weight = np.full(1326, 8, np.float32)
    hand_range = rng.random(1326).astype(np.float32)
    hand_range /= hand_range.sum()
    fold = rng.random((6, 1326)).astype(np.float32)
    pot, asked = 700, 300
    beyond = np.array([500, 700, 1000, 1500, 2000, 9000])
    legal = np.array([True, False, True, True, True, False, True, True, True])
    u, action = L.utilities(pot, asked, beyond, legal, score, weight, hand_range, fold)
    wp = (hand_range * score).sum() / (hand_range * weight).sum()
    expected = np.zeros(9)
    expected[betting.CALL] = wp * pot - (1 - wp) * asked
    for i, a in enumerate(L.RAISES):
        fp = (hand_range * fold[i]).sum()
        cont = hand_range * (1 - fold[i])
        wp2 = (cont * score).sum() / (cont * weight).sum()
        expected[a] = fp * pot + (1 - fp) * (wp2 * (pot + beyond[i]) - (1 - wp2) * (asked + beyond[i]))
    u = np.asarray(u)
    assert np.isneginf(u[~legal]).all()
    np.testing.assert_allclose(u[legal], expected[legal], rtol=1e-4, atol=1e-3)
    assert int(action) == int(np.argmax(np.where(legal, expected, -np.inf)))


def test_lbr_choices_in_hand_made_spots():
    call = B.call_bot()
    decide = jax.jit(lambda s, r: L.lbr_decision(ENV, call, None, s, r, jax.random.key(0), wp_samples=64))
    # On the river with the nuts (a royal flush) against a calling station: every raise is called,
    # so the largest, all-in, is worth most.
    deck = deck_from(parse_cards("As Ks"), parse_cards("2c 3d"), parse_cards("Qs Js Ts 4h 5h"))
    state = _deal(deck, 0)
    for a in (betting.CALL, betting.CHECK) + (betting.CHECK, betting.CHECK) * 2:   # to the river
        state = _step(state, jnp.int32(a))
    assert int(state.street) == 3 and int(state.current_player) == 1
    state = _step(state, jnp.int32(betting.CHECK))                 # the big blind checks the river
    assert int(state.current_player) == 0
    prior = L.prior_range(jnp.asarray(parse_cards("As Ks")))
    action, u = decide(state, prior)
    assert int(action) == betting.ALL_IN and float(u[betting.ALL_IN]) > float(u[betting.RAISE_TWO]) > 0
    # Facing an all-in preflop with the worst hand against an opponent who calls with every
    # hand: calling 19,900 for a 150-chip pot with about a third of the equity loses: fold.
    deck = deck_from(parse_cards("7c 2d"), parse_cards("As Ah"))
    state = _step(_deal(deck, 1), jnp.int32(betting.ALL_IN))     # seat 1 on the button shoves
    assert int(state.current_player) == 0
    action, u = decide(state, L.prior_range(jnp.asarray(parse_cards("7c 2d"))))
    assert int(action) == betting.FOLD and float(u[betting.CALL]) < 0


def test_lbr_errors():
    with pytest.raises(ValueError, match="num_deals"):
        L.LocalBestResponse(ENV, B.call_bot(), num_deals=0)
    with pytest.raises(ValueError, match="wp_samples"):
        L.LocalBestResponse(ENV, B.call_bot(), num_deals=2, wp_samples=0)
    with pytest.raises(ValueError, match="Player with probs"):
        L.LocalBestResponse(ENV, B.call_bot().policy, num_deals=2)
