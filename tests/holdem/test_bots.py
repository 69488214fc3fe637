"""Hold'em baselines: Monte Carlo equity against eval7 (exact on the river and turn, its own
Monte Carlo preflop), the card draw, every bot's probabilities on states of random play, the
equity bot's rule on hand-made hands and its honesty, and the duplicate head-to-head: a
deterministic bot against itself scores exactly 0, the equity bot beats random, call and
all-in, and one compiled arena serves every pairing (no recompiles).

Every statistical assertion is a bound of several standard errors, whatever the key.
"""

from __future__ import annotations

import itertools
import math

import eval7
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.core import random_legal_action
from jaxgames.holdem import Holdem, betting, bots as B, deck_from, equity as E, parse_cards

ENV = Holdem()
EQUITY = B.equity_bot(ENV)
N_SAMPLES = 50_000
_equity = jax.jit(jax.vmap(lambda h, b, k: E.equity(h, b, k, num_samples=N_SAMPLES), in_axes=(0, 0, None)))
_EV7 = [eval7.Card(r + s) for r in "23456789TJQKA" for s in "cdhs"]  # eval7 card of each index


def _random_range() -> eval7.HandRange:
    """Every one of the 1,326 pairs, as an eval7 range."""
    parts = ["22+"] + [f"{hi}2{kind}+" for hi in "AKQJT9876543" for kind in "so"]
    r = eval7.HandRange(",".join(parts))
    assert len(r.hands) == 1326
    return r


def _board(cards: list[int]) -> np.ndarray:
    return np.array(cards + [-1] * (5 - len(cards)), np.int32)


def _enumerated_equity(hole: list[int], board: list[int]) -> float:
    """Exact equity against a random hand by enumeration with eval7 (turn or river)."""
    h, b = [_EV7[c] for c in hole], [_EV7[c] for c in board]
    deck = [_EV7[c] for c in range(52) if c not in hole + board]
    total = count = 0.0
    for opp in itertools.combinations(deck, 2):
        rest = [c for c in deck if c not in opp]
        for run in itertools.combinations(rest, 5 - len(board)):
            mine, theirs = eval7.evaluate(h + b + list(run)), eval7.evaluate(list(opp) + b + list(run))
            total += (mine > theirs) + 0.5 * (mine == theirs)
            count += 1
    return total / count


SPOTS = [  # hole, board
    ("As Kd", "2c 7h Td Js 3d"),
    ("7c 2d", "7h 7s Kd 2s Ac"),
    ("9h 8h", "Th Jh 2c 3d 4s"),
    ("As Kd", "2c 7h Td Js"),
    ("5c 5d", "5h Ks Qs 2s"),
    ("Ah Ac", ""),
    ("7c 2d", ""),
    ("Ts 9s", ""),
]


@pytest.fixture(scope="module")
def spot_equities():
    holes = np.array([parse_cards(h) for h, _ in SPOTS], np.int32)
    boards = np.stack([_board(parse_cards(b)) for _, b in SPOTS])
    return np.asarray(_equity(holes, boards, jax.random.key(0)))


def test_equity_matches_eval7(spot_equities):
    se = 0.5 / math.sqrt(N_SAMPLES)  # the largest standard error of a mean of values in [0, 1]
    full = _random_range()
    for (hole, board), ours in zip(SPOTS, spot_equities):
        h, b = parse_cards(hole), parse_cards(board)
        if len(b) == 5:
            exact = eval7.py_hand_vs_range_exact([_EV7[c] for c in h], full, [_EV7[c] for c in b])
            assert abs(ours - exact) < 5 * se, (hole, board, ours, exact)
            assert abs(_enumerated_equity(h, b) - exact) < 1e-6
        elif len(b) == 4:
            exact = _enumerated_equity(h, b)
            assert abs(ours - exact) < 5 * se, (hole, board, ours, exact)
        else:  # preflop: eval7's own Monte Carlo, 400k deals
            theirs = eval7.py_hand_vs_range_monte_carlo([_EV7[c] for c in h], full, [], 400_000)
            assert abs(ours - theirs) < 5 * (se + 0.5 / math.sqrt(400_000)), (hole, ours, theirs)


def test_draw_cards_distinct_unseen_and_uniform():
    known_cards = parse_cards("2c 2d As Kh Qs")
    known = E.card_set(jnp.asarray(known_cards))
    n = 40_000
    words = jax.random.bits(jax.random.key(3), (n, 7), jnp.uint32)
    drawn = np.asarray(jax.jit(E.draw_cards)(words, known))
    assert drawn.shape == (n, 7) and drawn.min() >= 0 and drawn.max() < 52
    assert not np.isin(drawn, known_cards).any()
    assert all(len(set(row)) == 7 for row in drawn)
    counts = np.bincount(drawn.ravel(), minlength=52)[np.setdiff1d(np.arange(52), known_cards)]
    expected = 7 * n / 47
    assert np.abs(counts - expected).max() < 5 * math.sqrt(expected)
    # each of the 7 positions is uniform too (the k-th draw is not biased by the earlier ones)
    for i in (0, 6):
        c = np.bincount(drawn[:, i], minlength=52)[np.setdiff1d(np.arange(52), known_cards)]
        assert np.abs(c - n / 47).max() < 5 * math.sqrt(n / 47)


def test_hole_pairs_table():
    assert E.HOLE_PAIRS.shape == (1326, 2) and (E.HOLE_PAIRS[:, 0] < E.HOLE_PAIRS[:, 1]).all()
    assert len({tuple(p) for p in E.HOLE_PAIRS}) == 1326
    i, j = E.HOLE_PAIRS[:, 0], E.HOLE_PAIRS[:, 1]
    assert (E.HAND_INDEX[i, j] == np.arange(1326)).all() and (E.HAND_INDEX[j, i] == np.arange(1326)).all()
    blocked = np.asarray(E.blocked_hands(jnp.asarray([51, -1, 0])))
    assert blocked.sum() == 51 + 51 - 1 and blocked[E.HAND_INDEX[0, 51]]


# -- the bots on states of play ----------------------------------------------------------------------

# Jitted once for the module: deal and step a batch of hands, a random legal action.
_deal = jax.jit(jax.vmap(ENV.deal))
_step = jax.jit(jax.vmap(ENV.step))
_random_actions = jax.jit(jax.vmap(random_legal_action))


NUM_GAMES = 48


def _random_states(num_games: int = NUM_GAMES, seed: int = 0):
    """The live states of ``num_games`` hands of random play, as one stacked batch."""
    decks = jax.jit(jax.vmap(ENV.shuffle))(jax.random.split(jax.random.key(seed), num_games))
    state = _deal(decks, jnp.zeros(num_games, jnp.int32))
    states, live = [], []
    for t in range(ENV.max_steps):
        states.append(state)
        live.append(~np.asarray(state.terminated))
        state = _step(state, _random_actions(state, jax.random.split(jax.random.key(seed + 1 + t), num_games)))
    keep = np.stack(live).reshape(-1)
    # on the host: op by op, jnp would compile a concatenation and a gather for every field
    stacked = jax.tree_util.tree_map(lambda *x: np.concatenate([np.asarray(v) for v in x]), *states)
    return jax.tree_util.tree_map(lambda x: x[keep], stacked)


def _hand_made(like, *hands):
    """States from (seat 0's cards, seat 1's cards, actions from the deal), the button on seat
    0, stacked and followed by rows of ``like`` up to its batch size, so that the module's
    jitted functions see only the batch shapes they were compiled for."""
    size = NUM_GAMES
    hands = list(hands) + [hands[-1]] * (size - len(hands))
    decks = np.stack([deck_from(parse_cards(h0), parse_cards(h1)) for h0, h1, _ in hands])
    state = _deal(jnp.asarray(decks), jnp.zeros(size, jnp.int32))
    for t in range(max(len(a) for *_, a in hands)):
        acts = jnp.asarray([a[t] if t < len(a) else betting.CHECK for *_, a in hands], jnp.int32)
        more = np.array([t < len(a) for *_, a in hands])
        stepped = _step(state, acts)
        state = jax.tree_util.tree_map(   # on the host, as in _random_states
            lambda x, y: np.where(more.reshape((-1,) + (1,) * (np.ndim(x) - 1)), y, x), state, stepped)
    rest = like.step_count.shape[0] - size
    return jax.tree_util.tree_map(lambda x, y: np.concatenate([np.asarray(x), np.asarray(y)[:rest]]), state, like)


ALL = [B.random_bot(), B.call_bot(), B.all_in_bot(), B.fold_bot(), EQUITY]
TABLE = B.one_of(ALL)
_probs = jax.jit(jax.vmap(TABLE.probs, in_axes=(None, 0, None)))


@pytest.fixture(scope="module")
def states():
    return _random_states()


def test_probs_legal_and_normalised(states):
    """(Each bot's policy is ``policy_from_probs(probs)``: it plays a sample of these, and
    ``sample_action`` never draws an action of probability 0: test_sample_action_frequencies.)"""
    mask = np.asarray(states.legal_action_mask)
    n = mask.shape[0]
    p = {bot.name: np.asarray(_probs(jnp.int32(i), states, jax.random.key(2))) for i, bot in enumerate(ALL)}
    for bot in ALL:
        q = p[bot.name]
        assert q.shape == (n, 9) and q.dtype == np.float32
        np.testing.assert_allclose(q.sum(1), 1.0, rtol=1e-6)
        assert (q[~mask] == 0).all(), bot.name
        if bot.name != "random":  # deterministic: one action with probability 1
            assert set(np.unique(q)) <= {0.0, 1.0}, bot.name
    # the simple rules
    facing = mask[:, betting.CALL]
    can_shove = mask[:, betting.ALL_IN]
    np.testing.assert_allclose(p["random"], mask / mask.sum(1, keepdims=True), rtol=1e-6)
    assert (p["call"][facing, betting.CALL] == 1).all() and (p["call"][~facing, betting.CHECK] == 1).all()
    assert (p["allin"][can_shove, betting.ALL_IN] == 1).all()
    assert (p["allin"][~can_shove & facing, betting.CALL] == 1).all()
    assert (p["fold"][facing, betting.FOLD] == 1).all() and (p["fold"][~facing, betting.CHECK] == 1).all()


def test_sample_action_frequencies():
    probs = jnp.array([0.0, 0.1, 0.0, 0.2, 0.0, 0.3, 0.0, 0.4, 0.0], jnp.float32) * 3.0  # unnormalised
    n = 40_000
    draws = np.asarray(jax.jit(jax.vmap(B.sample_action, in_axes=(None, 0)))(
        probs, jax.random.split(jax.random.key(5), n)))
    freq = np.bincount(draws, minlength=9) / n
    assert freq[[0, 2, 4, 6, 8]].sum() == 0
    p = np.asarray(probs) / float(probs.sum())
    assert np.abs(freq - p).max() < 5 * math.sqrt(0.25 / n)


def test_equity_bot_rule_on_hand_made_hands(states):
    A = betting
    states = _hand_made(
        states,
        ("As Ah", "7c 2d", []),                        # aces on the button: equity 0.85 >= 0.7
        ("As Ah", "7c 2d", [A.ALL_IN]),                # 72o facing an all-in: 0.35 < 19,900 / 40,000
        ("7c 2d", "As Ah", [A.ALL_IN]),                # aces facing an all-in: raise -> call
        ("As Ah", "Ts 9s", [A.RAISE_HALF]),            # T9s (~0.54) facing odds 100 / 400
        ("As Ah", "7c 2d", [A.CALL]),                  # 72o, nothing to call: check
    )
    p = np.asarray(_probs(jnp.int32(ALL.index(EQUITY)), states, jax.random.key(0)))[:5]
    assert list(p.argmax(1)) == [A.RAISE_POT, A.FOLD, A.CALL, A.CALL, A.CHECK]
    assert list(np.asarray(states.current_player)[:5]) == [0, 1, 1, 1, 1]
    to_call = int(states.bets[3, 0] - states.bets[3, 1])
    assert to_call / (int(states.committed[3].sum()) + to_call) == 0.25


def test_bots_are_honest(states):
    """They read only their own cards and the dealt board: redealing what the mover cannot
    see (``sample_world``) never changes their probabilities (arena.honesty_check's test,
    on the probabilities themselves)."""
    redeal = jax.jit(jax.vmap(lambda s, k: ENV.sample_world(s, s.current_player, k)))
    n = states.step_count.shape[0]
    worlds = redeal(states, jax.random.split(jax.random.key(4), n))
    assert (np.asarray(worlds.deck) != np.asarray(states.deck)).any()
    for i, bot in enumerate(ALL):
        np.testing.assert_array_equal(_probs(jnp.int32(i), worlds, jax.random.key(2)),
                                      _probs(jnp.int32(i), states, jax.random.key(2)), err_msg=bot.name)


def test_equity_bot_config_errors():
    for bad in ({"num_samples": 0}, {"num_samples": 1.5}, {"raise_equity": 1.5}, {"raise_action": betting.CALL},
                {"seed": "x"}):
        with pytest.raises(ValueError):
            B.equity_bot(ENV, **bad)
    with pytest.raises(ValueError, match="unknown bot"):
        B.make_bot(ENV, "shark")
    with pytest.raises(ValueError, match="takes no options"):
        B.make_bot(ENV, "call", num_samples=3)
    assert B.make_bot(ENV, "equity") is EQUITY  # cached: one compile per configuration
    assert B.make_bot(ENV, "equity", num_samples=64).name != EQUITY.name


# -- duplicate head-to-head --------------------------------------------------------------------------

DEALS = 2048
SIDE_A = [EQUITY, B.call_bot(), B.all_in_bot()]
SIDE_B = [B.random_bot(), B.call_bot(), B.all_in_bot(), EQUITY]
PAIRINGS = [("equity", "equity"), ("call", "call"), ("allin", "allin"),
            ("equity", "random"), ("equity", "call"), ("equity", "allin")]


@pytest.fixture(scope="module")
def matches(optimised_compiles):
    """The pairings, through one compiled arena (each side a ``one_of`` its bots)."""
    a, b = B.one_of(SIDE_A), B.one_of(SIDE_B)
    index_a, index_b = [x.name for x in SIDE_A], [x.name for x in SIDE_B]
    out = {}
    with optimised_compiles():   # every pairing through one arena: far more running than compiling
        for k, (x, y) in enumerate(PAIRINGS):
            out[x, y] = B.head_to_head(ENV, a, b, jax.random.key(10 + k), num_deals=DEALS,
                                       params=[jnp.int32(index_a.index(x)), jnp.int32(index_b.index(y))])
    return out, B._arena(ENV, a.policy, b.policy, DEALS)


def test_duplicate_cancels_luck_exactly(matches):
    results, _ = matches
    for name in ("equity", "call", "allin"):
        r = results[name, name]
        assert r.mean == 0.0 and r.ci95 == 0.0 and (r.deal_returns == 0).all(), name
        # ... while the seats themselves do win and lose
        assert r.seat_mean[0] == -r.seat_mean[1]
    assert results["call", "call"].seat_ci95[0] > 0


def test_equity_bot_beats_random_call_and_all_in(matches):
    results, _ = matches
    for other in ("random", "call", "allin"):
        r = results["equity", other]
        assert r.mean - r.ci95 > 0, (other, str(r))
        assert r.num_hands == 2 * DEALS == len(r.deal_returns) * 2


def test_one_compiled_arena_no_recompiles(matches):
    _, arena = matches
    assert arena._run._cache_size() == 1


def test_duplicate_summary_by_hand():
    # deals: A wins 100 on the button and loses 50 in the blind; then A loses 200 and wins 300
    r = B.duplicate_summary(np.array([100.0, -200.0, -50.0, 300.0]), big_blind=100)
    np.testing.assert_allclose(r.deal_returns, [50.0, 100.0])
    assert r.mean == pytest.approx(1000 * 37.5 / 100)                 # (25 + 50) / 2 chips a hand
    assert r.ci95 == pytest.approx(1.96 * np.std([250.0, 500.0], ddof=1) / math.sqrt(2))
    np.testing.assert_allclose(r.seat_mean, [-500.0, 1250.0])
    assert B.to_mbb(150, 100) == 1500.0


def test_against_baselines_is_one_head_to_head_a_baseline():
    """One compiled arena for every baseline, and the results of one ``head_to_head`` each, to
    the last bit (the i-th baseline played with ``fold_in(key, i)``)."""
    key = jax.random.key(7)
    got = B.against_baselines(ENV, B.call_bot(), None, key, names=["random", "allin"], num_deals=8)
    assert list(got) == ["random", "allin"]
    for i, name in enumerate(got):
        alone = B.head_to_head(ENV, B.call_bot(), B.make_bot(ENV, name), jax.random.fold_in(key, i), num_deals=8)
        np.testing.assert_array_equal(got[name].deal_returns, alone.deal_returns)
    assert not np.array_equal(got["random"].deal_returns, got["allin"].deal_returns)


def test_head_to_head_errors():
    with pytest.raises(ValueError, match="num_deals"):
        B.head_to_head(ENV, EQUITY, EQUITY, jax.random.key(0), num_deals=1)


def test_package_exports():
    import jaxgames.holdem as holdem
    from jaxgames.holdem import lbr

    assert holdem.LocalBestResponse is lbr.LocalBestResponse
    assert {"head_to_head", "make_bot", "LocalBestResponse", "equity"} <= set(holdem.__all__)
    # a hold'em bot is the library's one player type, with its probabilities
    assert isinstance(B.call_bot(), jaxgames.Player) and B.call_bot().probs is not None
