"""Hold'em rules: the contract, options, hand-made betting sequences with hand-computed chips,
the button order, the deck and its positions, what each seat sees, sample_world, the button
alternating between hands, and the bound on a hand's length against an exhaustive search."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import core
from jaxgames.holdem import betting, render
from jaxgames.holdem import cards as C

F, X, CALL, HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN = range(9)

ENV = jaxgames.make("holdem")
# Jitted once per module: every hand-made sequence below runs through these.
STEP = jax.jit(chex.assert_max_traces(ENV.step, n=1))
DEAL = jax.jit(ENV.deal)


def deal(hole0="2c3d", hole1="4h5s", board="7c8d9hJsQc", button=0, stacks=None):
    deck = C.deck_from(C.parse_cards(hole0), C.parse_cards(hole1), C.parse_cards(board))
    stacks = np.full(2, ENV.stack) if stacks is None else np.asarray(stacks)
    return DEAL(jnp.asarray(deck), jnp.int32(button), jnp.asarray(stacks, jnp.int32))


def legal(state) -> set[int]:
    return set(np.flatnonzero(np.asarray(state.legal_action_mask)).tolist())


def play(state, actions):
    for a in actions:
        assert not bool(state.terminated), f"the hand ended before action {a}"
        assert a in legal(state), f"action {a} is not legal: {legal(state)}"
        state = STEP(state, jnp.int32(a))
    return state


def chips(state):
    return (np.asarray(state.stacks).tolist(), np.asarray(state.bets).tolist(),
            np.asarray(state.committed).tolist())


# -- contract and options ---------------------------------------------------------------------


def test_contract():
    assert (ENV.num_actions, ENV.num_players, ENV.stochastic, ENV.perfect_information) == (9, 2, False, False)
    assert ENV.illegal_action_penalty == -20000.0
    jaxgames.api_test(ENV, num_games=4, num_probes=2)


def test_defaults_and_bad_options():
    assert (ENV.stack, ENV.small_blind, ENV.big_blind) == (20000, 50, 100)
    assert ENV.max_steps == ENV.history_length == betting.max_actions(20000, 50, 100) == 16
    for bad in ({"stack": 100}, {"stack": 0}, {"stack": 20000.0}, {"stack": True}, {"big_blind": "100"},
                {"small_blind": 200}, {"small_blind": 0}, {"stack": 10 ** 9}):
        with pytest.raises(ValueError, match="holdem"):
            jaxgames.make("holdem", **bad)
    with pytest.raises(ValueError, match="valid options: stack, small_blind, big_blind"):
        jaxgames.make("holdem", stacks=100)


# -- hand-made betting sequences (chips worked out by hand in the comments) -------------------


def test_blinds_and_button_order_preflop_and_after():
    s = deal(button=1)
    # seat 1 is the button: it posts 50 and acts first; seat 0 posts 100
    assert chips(s) == ([19900, 19950], [100, 50], [100, 50]) and int(s.current_player) == 1
    assert legal(s) == {F, CALL, HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN}  # no check: 50 to call
    s = play(s, [CALL])
    # the big blind's option: check or raise, never fold or call with nothing to call
    assert int(s.current_player) == 0 and legal(s) == {X, HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN}
    s = play(s, [X])
    # the flop: the big blind (not the button) acts first; bets and the minimum raise reset
    assert int(s.street) == 1 and int(s.current_player) == 0
    assert chips(s) == ([19900, 19900], [0, 0], [100, 100]) and int(s.min_raise) == 100
    for street in (2, 3):
        s = play(s, [X, X])
        assert int(s.street) == street and int(s.current_player) == 0
    s = play(s, [X])
    assert int(s.current_player) == 1 and not bool(s.terminated)
    s = play(s, [X])  # the 8th action: the showdown
    assert bool(s.terminated) and int(s.street) == 4 and int(s.step_count) == 8
    # seat 1 (4h 5s) and seat 0 (2c 3d) both play the board's Q J 9 8 7: a split pot
    np.testing.assert_array_equal(s.rewards, [0.0, 0.0])


def test_pot_fractions_worked_example_and_history():
    s = deal(button=0)
    # seat 0 raises 1 pot: calls 50, then raises by the pot after the call (150 + 50 = 200): to 300
    s = play(s, [POT])
    assert chips(s) == ([19700, 19900], [300, 100], [300, 100])
    s = play(s, [CALL])  # seat 1 puts in 200; flop pot 600
    assert chips(s) == ([19700, 19700], [0, 0], [300, 300]) and int(s.current_player) == 1
    # seat 1 bets ¾ pot: floor(0.75 * 600) = 450
    s = play(s, [THREE_Q])
    # seat 0 raises ½ pot: 450 to call, pot after the call 1050 + 450 = 1500, raise by 750: to 1200
    s = play(s, [HALF])
    assert chips(s) == ([18500, 19250], [1200, 450], [1500, 750]) and int(s.min_raise) == 750
    obs = ENV.observe(s, 1)
    rows = np.asarray(obs.history)[:5].tolist()
    assert rows == [[0, POT, 0], [1, CALL, 0], [1, THREE_Q, 1], [0, HALF, 1], [-1, -1, -1]]
    assert np.asarray(obs.history_chips)[:5].tolist() == [250, 200, 450, 1200, -1]
    assert int(obs.pot) == 2250 and np.asarray(obs.bets).tolist() == [1200, 450]


def test_uncalled_raise_comes_back_on_a_fold():
    s = play(deal(button=0), [HALF, F])  # seat 0 raises to 200, seat 1 folds its 100
    assert bool(s.terminated)
    np.testing.assert_array_equal(s.rewards, [100.0, -100.0])
    s = play(deal(button=0), [CALL, HALF, F])  # limp, the big blind raises to 200, the button folds
    np.testing.assert_array_equal(s.rewards, [-100.0, 100.0])


def test_fold_is_refused_with_nothing_to_call_and_illegal_actions_cost_the_stack():
    s = play(deal(button=0), [CALL])
    assert F not in legal(s)
    bad = STEP(s, jnp.int32(F))
    assert bool(bad.terminated)
    np.testing.assert_array_equal(bad.rewards, [20000.0, -20000.0])  # seat 1 tried to fold
    bad = STEP(deal(button=0), jnp.int32(X))  # the button cannot check 50
    np.testing.assert_array_equal(bad.rewards, [-20000.0, 20000.0])


def test_sizes_at_or_above_the_stack_are_masked_not_shrunk():
    # stacks of 1000: after a limp 900 behind each, pot 200
    s = play(deal(button=0, stacks=[1000, 1000]), [CALL, X])
    assert legal(s) == {X, HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN}  # bets 100 .. 400 < 900
    s = play(s, [TWO])  # seat 1 bets 400
    # seat 0: ½ pot raise puts in 400 + (600 + 400) / 2 = 900 = its stack: masked, all-in instead
    assert legal(s) == {F, CALL, ALLIN}
    amounts = np.asarray(betting.amounts(jnp.int32(600), jnp.int32(400), jnp.int32(900)))
    assert amounts.tolist() == [0, 0, 400, 900, 1150, 1400, 1900, 2400, 900]


def test_minimum_raise_rule():
    # The rule itself: a pot-fraction raise below the last raise is masked (here a hand-made
    # decision: with the nine sizes, heads-up play never reaches one, see the rules doc).
    mask = np.asarray(betting.legal_mask(jnp.int32(1000), jnp.int32(0), jnp.int32(5000), jnp.int32(5000),
                                         jnp.int32(600)))
    assert np.flatnonzero(mask).tolist() == [X, THREE_Q, POT, ONE_HALF, TWO, ALLIN]  # ½ pot = 500 < 600
    # In play: the smallest raise preflop is ½ pot, exactly the minimum raise: to 200
    s = play(deal(button=0), [HALF])
    assert np.asarray(s.bets).tolist() == [200, 100] and int(s.min_raise) == 100
    s = play(s, [HALF])  # 100 to call, pot 300 + 100, raise by 200: to 400
    assert np.asarray(s.bets).tolist() == [200, 400] and int(s.min_raise) == 200


def test_all_in_for_less_than_a_raise():
    # stacks of 600: after a limp 500 behind each, pot 200; seat 1 bets 2 pots = 400
    s = play(deal("AcAd", "KcKd", "2h7s9dJh3c", button=0, stacks=[600, 600]), [CALL, X, TWO])
    # seat 0 can only go all-in: 500 in, a raise of 100, below the 400 minimum
    assert legal(s) == {F, CALL, ALLIN}
    s = play(s, [ALLIN])
    assert chips(s)[0] == [0, 100] and int(s.min_raise) == 400
    # seat 1 may only call its last 100 or fold: nobody is left to raise against
    assert legal(s) == {F, CALL}
    s = play(s, [CALL])
    # both all-in: the board is run out, aces win 600
    assert bool(s.terminated) and int(s.street) == 4
    np.testing.assert_array_equal(s.rewards, [600.0, -600.0])
    assert int(ENV.observe(s, 0).board[4]) == C.parse_card("3c")


@pytest.mark.parametrize("winner", [0, 1])
def test_call_all_in_for_less_returns_the_uncalled_chips(winner):
    holes = ("AcAd", "KcKd") if winner == 0 else ("KcKd", "AcAd")
    s = deal(*holes, "2h7s9dJh3c", button=0, stacks=[20000, 5000])
    s = play(s, [ALLIN])  # seat 0 puts in 19,950 more; seat 1 has 4,900 behind
    assert legal(s) == {F, CALL}  # calling is all-in for less
    s = play(s, [CALL])
    assert chips(s)[2] == [20000, 5000] and bool(s.terminated)
    # only 5,000 of seat 0's chips are contested, the other 15,000 go back
    sign = 1.0 if winner == 0 else -1.0
    np.testing.assert_array_equal(s.rewards, [5000.0 * sign, -5000.0 * sign])


def test_split_pot_after_all_in():
    s = play(deal("2c3d", "4h5s", "AsKsQsJsTs", button=1), [ALLIN, CALL])
    assert bool(s.terminated) and int(s.street) == 4
    np.testing.assert_array_equal(s.rewards, [0.0, 0.0])


def test_showdown_winner_and_kicker():
    # the same pair of kings on the board; seat 1's ace kicker wins
    s = play(deal("Qc2d", "Ac3d", "KhKs7d8c9h", button=0), [CALL, X] + [X, X] * 3)
    np.testing.assert_array_equal(s.rewards, [-100.0, 100.0])


# -- the deal, observations, hidden cards -----------------------------------------------------


def test_deck_is_a_uniform_permutation_and_cards_come_from_fixed_positions():
    decks = np.asarray(jax.jit(jax.vmap(ENV.shuffle))(jax.random.split(jax.random.key(1), 5200)))
    assert decks.dtype == np.int8
    assert (np.sort(decks, axis=1) == np.arange(52)).all()
    # every card at every dealt position about 100 times out of 5,200 (binomial sd ~9.9)
    for p in range(9):
        counts = np.bincount(decks[:, p], minlength=52)
        chi2 = ((counts - 100.0) ** 2 / 100.0).sum()
        assert chi2 < 100, (p, chi2)  # 51 degrees of freedom: mean 51, p(> 100) ~ 5e-5
    s = ENV.deal(jnp.asarray(decks[0]))
    for p in range(2):
        np.testing.assert_array_equal(ENV.observe(s, p).hole, decks[0][2 * p:2 * p + 2])


def test_each_seat_sees_its_own_cards_and_the_dealt_board_only():
    s = deal("AcAd", "KcKd", "2h7s9dJh3c", button=0)
    o0, o1 = ENV.observe(s, 0), ENV.observe(s, 1)
    assert C.cards_text(o0.hole) == "Ac Ad" and C.cards_text(o1.hole) == "Kc Kd"
    assert (np.asarray(o0.board) == -1).all()
    for leaf in jax.tree_util.tree_leaves(o0):  # seat 1's cards are nowhere in seat 0's view
        if leaf.dtype == jnp.int8:
            assert not np.isin(np.asarray(leaf), C.parse_cards("KcKd")).any()
    s = play(s, [CALL, X])
    assert C.cards_text(ENV.observe(s, 1).board) == "2h 7s 9d ?? ??"
    s = play(s, [X, X])
    assert C.cards_text(ENV.observe(s, 0).board) == "2h 7s 9d Jh ??"
    assert int(ENV.observe(s, 0).to_act) == 1 and int(ENV.observe(s, 0).button) == 0


def test_an_invalid_seat_sees_no_card():
    # Issue 38: observe(state, 2) preflop gave seat "2" two cards of the undealt board.
    s = deal("AcAd", "KcKd", "2h7s9dJh3c", button=0)
    for bad in (2, -1, 7, np.int64(2), jnp.int32(2)):
        with pytest.raises(ValueError, match=f"player {int(bad)} is out of range.*0 to 1"):
            ENV.observe(s, bad)
        with pytest.raises(ValueError, match=f"player {int(bad)} is out of range"):
            ENV.sample_world(s, bad, jax.random.key(0))
    dealt = C.parse_cards("AcAdKcKd2h7s9dJh3c")
    for bad in (2, -1):
        obs = jax.jit(ENV.observe)(s, jnp.int32(bad))
        for leaf in jax.tree_util.tree_leaves(obs):   # no card anywhere, and no seat
            if leaf.dtype == jnp.int8:
                assert not np.isin(np.asarray(leaf), dealt).any()
        assert (np.asarray(obs.hole) == -1).all() and (np.asarray(obs.board) == -1).all()
        assert int(obs.player) == -1
        world = jax.jit(ENV.sample_world)(s, jnp.int32(bad), jax.random.key(0))
        np.testing.assert_array_equal(world.deck, ENV.blank_world.deck)
    with pytest.raises(ValueError, match="player 2 is out of range"):
        ENV.deal(C.deck_from(C.parse_cards("AcAd"), C.parse_cards("KcKd"), C.parse_cards("2h7s9dJh3c")), 2)
    chex.assert_trees_all_equal(deal(button=5), deal(button=1))   # traced: clipped


def test_sample_world_redeals_only_unseen_cards():
    s = play(deal("AcAd", "KcKd", "2h7s9dJh3c", button=0), [CALL, X])  # the flop is out
    worlds = jax.jit(jax.vmap(ENV.sample_world, in_axes=(None, None, 0)))(
        s, jnp.int32(0), jax.random.split(jax.random.key(0), 2000))
    decks = np.asarray(worlds.deck)
    assert (np.sort(decks, axis=1) == np.arange(52)).all()
    assert (decks[:, :2] == C.parse_cards("AcAd")).all() and (decks[:, 4:7] == C.parse_cards("2h7s9d")).all()
    # seat 1's first card: any of the 47 unseen cards, each ~2000/47 = 42.6 times
    counts = np.bincount(decks[:, 2], minlength=52)
    unseen = np.setdiff1d(np.arange(52), C.parse_cards("AcAd2h7s9d"))
    assert (counts[C.parse_cards("AcAd2h7s9d")] == 0).all() and (counts[unseen] > 15).all()
    # the showdown result follows the new cards; everything public is unchanged
    assert set(np.asarray(worlds.showdown).tolist()) <= {-1, 0, 1}
    np.testing.assert_array_equal(worlds.committed, np.broadcast_to(s.committed, (2000, 2)))


def test_reset_moves_the_button_and_auto_reset_alternates_it():
    s = ENV.init(jax.random.key(0))
    assert int(s.button) == 0 and int(s.current_player) == 0
    nxt = ENV.reset(jax.random.key(1), s)
    assert int(nxt.button) == 1 and int(nxt.current_player) == 1
    assert int(ENV.reset(jax.random.key(2), nxt).button) == 0
    step = core.auto_reset(ENV)

    @jax.jit
    def run(key):
        def body(state, k):
            ka, ks = jax.random.split(k)
            state = step(state, core.random_legal_action(state, ka), ks)
            return state, (state.button, state.step_count == 0, state.stacks + state.committed)
        return jax.lax.scan(body, ENV.init(key), jax.random.split(key, 300))[1]

    buttons, new_hand, total = map(np.asarray, run(jax.random.key(3)))
    starts = buttons[new_hand]
    assert len(starts) > 20 and (np.diff(starts) != 0).all()  # every new hand flips it
    assert (total == 20000).all()  # stacks reset every hand


def test_step_is_deterministic_and_needs_no_key():
    s = deal(button=0)
    a = STEP(s, jnp.int32(POT))
    b = jax.jit(ENV.step)(s, jnp.int32(POT), jax.random.key(9))
    chex.assert_trees_all_equal(a, b)


def test_render():
    assert C.card_name(51) == "As" and C.card_name(0) == "2c" and C.card_name(34) == "Th"
    assert C.parse_card("td") == 33 and C.parse_card("A♠") == 51
    assert C.parse_cards("AsKd 2c") == [51, 45, 0]
    with pytest.raises(ValueError):
        C.parse_card("1x")
    s = play(deal("AcAd", "KcKd", "2h7s9dJh3c", button=0), [CALL, X, HALF])
    text = render.render_text(s, player=0)
    assert "Ac Ad" in text and "Kc Kd" not in text and "2h 7s 9d" in text and "Jh" not in text
    assert "flop" in text and "pot 300" in text
    assert "Kc Kd" in render.render_text(s)  # no player: everything shown


# -- the bound on a hand's length -------------------------------------------------------------


def test_history_bound_is_tight_by_exhaustive_search():
    """Every action sequence of a small game, breadth first: the longest hand has exactly
    ``max_steps`` actions, and no hand is cut short."""
    env = jaxgames.make("holdem", stack=1000, small_blind=50, big_blind=100)
    chunk = 1024
    expand = jax.jit(jax.vmap(lambda s: jax.vmap(lambda a: env.step(s, a))(jnp.arange(9, dtype=jnp.int32))))
    frontier = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], env.init(jax.random.key(0)))
    depth = deepest = nodes = 0
    while frontier.step_count.shape[0]:
        depth += 1
        n = frontier.step_count.shape[0]
        live_parts = []
        for lo in range(0, n, chunk):
            part = jax.tree_util.tree_map(lambda x: x[lo:lo + chunk], frontier)
            m = part.step_count.shape[0]
            padded = jax.tree_util.tree_map(lambda x: np.concatenate([x, np.repeat(x[:1], chunk - m, 0)]), part)
            kids = jax.tree_util.tree_map(lambda x: np.asarray(x)[:m].reshape((m * 9,) + x.shape[2:]),
                                          expand(padded))
            legal_kids = np.asarray(part.legal_action_mask).reshape(-1)
            assert not kids.truncated[legal_kids].any()
            ended = legal_kids & kids.terminated
            nodes += legal_kids.sum()
            deepest = depth if ended.any() else deepest
            live_parts.append(jax.tree_util.tree_map(lambda x: x[legal_kids & ~kids.terminated], kids))
        frontier = jax.tree_util.tree_map(lambda *x: np.concatenate(x), *live_parts)
    assert deepest == env.max_steps == 12 and nodes > 1000
