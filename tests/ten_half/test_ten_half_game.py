"""Rules of ten-and-a-half: hand-worked hands for every helper, the env's step statistics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.ten_half import game as th
from jaxgames.ten_half.render import render

A, T, J, Q, K = th.ACE, th.TEN, th.JACK, th.QUEEN, th.KING


def rank(points):
    """Rank of a numbered card worth ``points`` (1 = A .. 10)."""
    return points - 1


ENV = jaxgames.make("ten_half")
INIT = jax.jit(ENV.init)
STEP = jax.jit(ENV.step)
# [N] keys -> [N] states / one state broadcast, vmapped and jitted once for the module.
BATCH_INIT = jax.jit(jax.vmap(ENV.init))
BATCH_STEP = jax.jit(jax.vmap(ENV.step, in_axes=(None, None, 0)))
DEALER_RESULT = jax.jit(th.dealer_result)
HIT_RESULT = jax.jit(th.hit_result)
HAND_TYPE = jax.jit(th.hand_type)


def make_state(player_sum, num_cards, num_faces):
    state = INIT(jax.random.PRNGKey(0)).replace(
        player_sum=jnp.int32(player_sum), num_cards=jnp.int32(num_cards),
        num_faces=jnp.int32(num_faces))
    return state.replace(observation=ENV.observe(state))


def hand(*ranks):
    """(sum_halves, num_cards, num_faces) of a hand of ranks."""
    ranks = np.array(ranks)
    return (int(th.card_value_halves(ranks).sum()), len(ranks), int(th.is_face(ranks).sum()))


def test_api():
    jaxgames.api_test(ENV)
    assert ENV.id == "ten_half" and ENV.num_players == 1 and ENV.num_actions == 2


def test_make_rejects_options():
    with pytest.raises(ValueError):
        jaxgames.make("ten_half", decks=2)


def test_card_values():
    values = np.asarray(th.card_value_halves(jnp.arange(13)))
    np.testing.assert_array_equal(values, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(th.is_face(jnp.arange(13))), [False] * 10 + [True] * 3)


@pytest.mark.parametrize("cards, type_id, payout", [
    ((J, Q, K, J, Q), th.FIVE_FACES, 5),                                  # 2½ in five faces
    ((A, rank(2), rank(3), rank(4), K), th.HEAVENLY_KING, 4),             # 10½ in five cards
    ((J, rank(4), rank(3), rank(2), A), th.HEAVENLY_KING, 4),             # ½+4+3+2+1 = 10½
    ((J, J, Q, K, rank(8)), th.FIVE_SMALL, 3),                            # 2 + 8 = 10
    ((A, A, A, A, rank(2)), th.FIVE_SMALL, 3),                            # 6 in five cards
    ((J, J, Q, K, A), th.FIVE_SMALL, 3),                                  # not all faces
    ((A, rank(2), rank(3), rank(3), A), th.FIVE_SMALL, 3),                # exactly 10 < 10½
    ((T, J), th.TEN_AND_A_HALF, 2),
    ((rank(5), rank(5), Q), th.TEN_AND_A_HALF, 2),
    ((A, rank(2), rank(3), rank(4), rank(4)), th.BUST, -1),              # 14 in five: bust
    ((T, A), th.BUST, -1),                                                # 11
    ((rank(9),), th.PLAIN, 1),
    ((J, rank(9)), th.PLAIN, 1),                                          # 9½
])
def test_hand_type_of_cards(cards, type_id, payout):
    s, n, f = hand(*cards)
    t, p = HAND_TYPE(s, n, f)
    assert int(t) == type_id and float(p) == payout


@pytest.mark.parametrize("s, n, f, type_id, payout", [
    (21, 1, 0, th.TEN_AND_A_HALF, 2),
    (21, 4, 1, th.TEN_AND_A_HALF, 2),
    (20, 4, 0, th.PLAIN, 1),
    (1, 1, 1, th.PLAIN, 1),
    (4, 4, 4, th.PLAIN, 1),        # four faces: not yet five faces
    (22, 2, 0, th.BUST, -1),
    (22, 5, 0, th.BUST, -1),       # five cards over 10½ bust, not five small
    (40, 2, 0, th.BUST, -1),
    (5, 5, 5, th.FIVE_FACES, 5),
    (21, 5, 1, th.HEAVENLY_KING, 4),
    (20, 5, 2, th.FIVE_SMALL, 3),
])
def test_hand_type_table(s, n, f, type_id, payout):
    t, p = HAND_TYPE(s, n, f)
    assert (int(t), float(p)) == (type_id, payout)


def test_hand_type_broadcasts():
    t, p = th.hand_type(jnp.array([21, 21, 22]), jnp.array([2, 5, 3]), 0)
    np.testing.assert_array_equal(np.asarray(t), [th.TEN_AND_A_HALF, th.HEAVENLY_KING, th.BUST])
    np.testing.assert_array_equal(np.asarray(p), [2, 4, -1])


@pytest.mark.parametrize("before, card, reward, done", [
    ((J, Q, K, J), Q, 5.0, True),                         # five faces
    ((A, rank(2), rank(3), rank(4)), K, 4.0, True),       # heavenly king
    ((J, rank(2), rank(3), rank(4)), A, 4.0, True),       # ½+2+3+4+1 = 10½ in five
    ((J, J, Q, rank(8)), K, 3.0, True),                   # 2 + 8 = 10 in five: five small
    ((A, A, A, A), rank(2), 3.0, True),                   # five small
    ((J, Q, K, J), A, 3.0, True),                         # five small, one non-face
    ((T,), J, 2.0, True),                                 # ten-and-a-half, 2 cards
    ((rank(5), rank(5)), Q, 2.0, True),                   # ten-and-a-half, 3 cards
    ((J,), T, 2.0, True),                                 # ½ + 10
    ((T,), A, -1.0, True),                                # bust
    ((A, rank(2), rank(3), rank(4)), rank(2), -1.0, True),  # five cards, 12: bust
    ((rank(2),), rank(3), 0.0, False),                    # 5, plain: goes on
    ((J, Q, K), K, 0.0, False),                           # four faces, plain
    ((rank(9),), A, 0.0, False),                          # exactly 10: plain
])
def test_hit_result(before, card, reward, done):
    s, n, f = hand(*before)
    new_sum, new_cards, new_faces, r, d = HIT_RESULT(s, n, f, card)
    assert (int(new_sum), int(new_cards), int(new_faces)) == hand(*before, card)
    assert float(r) == reward and bool(d) == done


def dealer(ranks):
    ranks = list(ranks) + [A] * (5 - len(ranks))  # padding: never reached in these cases
    return jnp.array(ranks, jnp.int32)


@pytest.mark.parametrize("player, dealer_cards, reward", [
    # tie rule: equal sum and dealer holds no more cards than the player -> dealer wins
    (hand(rank(2), rank(3)), [rank(5)], -1.0),                 # 5 (2 cards) vs 5 (1 card)
    (hand(rank(5)), [rank(5)], -1.0),                          # 5 vs 5, 1 card each
    (hand(rank(2), rank(3)), [rank(4), A], -1.0),              # 5 vs 5, 2 cards each
    # equal sum with MORE cards: the dealer draws again
    (hand(rank(5)), [rank(2), rank(3), rank(6)], 1.0),         # 5, 5, then 11: dealer bust
    (hand(rank(5)), [rank(2), rank(3), J], -1.0),              # 5, 5, then 5½ beats 5
    (hand(rank(5)), [rank(2), rank(3), A, A], -1.0),           # 5(2c), 6 beats 5
    # dealer special hands
    (hand(T), [rank(5), rank(5), J], -2.0),                    # 10 tied (2 > 1 cards), 10½
    (hand(T), [A, A, A, A, rank(2)], -3.0),                    # five small
    (hand(T), [A, rank(2), rank(3), rank(4), K], -4.0),        # 10 in 4 cards, then 10½
    (hand(rank(3)), [J, Q, K, J, Q], -5.0),                    # five faces
    (hand(rank(2)), [J, Q, K, J, Q], -5.0),                    # 2 vs 2 in 4 cards: draws on
    (hand(J, Q, K), [J, Q, K], -1.0),                          # 1½ vs 1½, 3 cards each
    (hand(T), [T, J], -1.0),                                   # 10 vs 10 in one card: stops
    # dealer bust
    (hand(T), [rank(9), rank(5)], 1.0),                        # 9, then 14
    (hand(rank(8), rank(2)), [rank(9), J, rank(5)], 1.0),      # 10 (2c) vs 9, 9½, 14½
    (hand(rank(8), rank(2)), [rank(9), A], -1.0),              # 10 (2c) vs 10 (2c)
    # dealer beats
    (hand(rank(3)), [rank(7)], -1.0),
    (hand(J), [A], -1.0),
])
def test_dealer_result(player, dealer_cards, reward):
    s, n, _ = player
    assert float(DEALER_RESULT(s, n, dealer(dealer_cards))) == reward


def test_dealer_result_ignores_cards_after_stop():
    a = DEALER_RESULT(6, 1, jnp.array([rank(7), A, A, A, A]))
    b = DEALER_RESULT(6, 1, jnp.array([rank(7), T, T, T, T]))
    assert float(a) == float(b) == -1.0


def test_init_deals_one_card():
    states = BATCH_INIT(jax.random.split(jax.random.PRNGKey(1), 13_000))
    assert (np.asarray(states.num_cards) == 1).all()
    assert not np.asarray(states.terminated).any()
    assert np.asarray(states.legal_action_mask).all()
    sums = np.asarray(states.player_sum)
    faces = np.asarray(states.num_faces)
    np.testing.assert_array_equal(faces == 1, sums == 1)
    assert set(np.unique(sums)) == {1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}
    # faces come with probability 3/13
    p, n = 3 / 13, len(sums)
    assert abs(faces.mean() - p) < 4 * np.sqrt(p * (1 - p) / n)
    np.testing.assert_array_equal(np.asarray(states.observation),
                                  np.stack([sums, states.num_cards, faces], 1))


def sample_step(state, action, n, seed):
    return BATCH_STEP(state, jnp.int32(action), jax.random.split(jax.random.PRNGKey(seed), n))


def close(freq, p, n, sd=4.0):
    return abs(freq - p) <= sd * np.sqrt(p * (1 - p) / n) + 1e-12


def test_hit_from_ten():
    n = 20_000
    out = sample_step(make_state(20, 1, 0), th.HIT, n, 2)
    rewards = np.asarray(out.rewards[:, 0])
    assert np.asarray(out.terminated).all()                    # bust or ten-and-a-half
    assert set(np.unique(rewards)) == {-1.0, 2.0}
    assert close((rewards == -1).mean(), 10 / 13, n)
    np.testing.assert_array_equal(np.asarray(out.num_cards), 2)
    np.testing.assert_array_equal(np.asarray(out.step_count), 1)
    assert np.asarray(out.legal_action_mask).all()
    np.testing.assert_array_equal(np.asarray(out.player_sum)[rewards == 2], 21)


def test_hit_from_ace():
    n = 20_000
    out = sample_step(make_state(2, 1, 0), th.HIT, n, 3)
    term = np.asarray(out.terminated)
    rewards = np.asarray(out.rewards[:, 0])
    assert close(term.mean(), 1 / 13, n)                      # only a 10 busts A
    np.testing.assert_array_equal(rewards[term], -1.0)
    np.testing.assert_array_equal(rewards[~term], 0.0)
    np.testing.assert_array_equal(np.asarray(out.observation)[~term, 1], 2)
    assert np.asarray(out.legal_action_mask)[~term].all()


def test_hit_with_four_cards_always_ends():
    n = 10_000
    out = sample_step(make_state(19, 4, 1), th.HIT, n, 4)     # e.g. A, 2, 6, J
    rewards = np.asarray(out.rewards[:, 0])
    assert np.asarray(out.terminated).all()
    # face -> 10 in five: five small (+3); A -> 10½ in five: heavenly king (+4); else bust
    assert set(np.unique(rewards)) <= {-1.0, 3.0, 4.0}
    assert close((rewards == 3).mean(), 3 / 13, n)
    assert close((rewards == 4).mean(), 1 / 13, n)


# Every dealer sequence of 5 ranks, each equally likely: exact outcome probabilities.
# (passed as an argument: as a jit constant it would be constant-folded, slowly)
ALL_DEALER = jnp.asarray(np.indices((13,) * 5).reshape(5, -1).T, jnp.int32)   # [13**5, 5]


@jax.jit
def _exact_stick_distribution(player_sum, player_cards, all_dealer):
    rewards = jax.vmap(th.dealer_result, in_axes=(None, None, 0))(
        player_sum, player_cards, all_dealer)
    values = jnp.array([1.0, -1.0, -2.0, -3.0, -4.0, -5.0])
    return (rewards[:, None] == values).mean(0), rewards.mean()


def exact_stick_distribution(player_sum, player_cards):
    """P(reward = +1, -1, -2, -3, -4, -5) [6] and the mean, when sticking."""
    return _exact_stick_distribution(player_sum, player_cards, ALL_DEALER)


def test_stick_matches_exact_dealer_distribution():
    n = 40_000
    for seed, (s, c) in enumerate([(20, 1), (10, 2), (3, 3)]):
        probs, _ = exact_stick_distribution(s, c)
        probs = np.asarray(probs)
        assert abs(probs.sum() - 1) < 1e-6            # every sequence ends in one outcome
        out = sample_step(make_state(s, c, 1 if s % 2 else 0), th.STICK, n, 10 + seed)
        assert np.asarray(out.terminated).all()
        rewards = np.asarray(out.rewards[:, 0])
        for value, p in zip([1.0, -1.0, -2.0, -3.0, -4.0, -5.0], probs):
            assert close((rewards == value).mean(), p, n), (s, c, value)
        # the player's hand is unchanged by sticking
        np.testing.assert_array_equal(np.asarray(out.player_sum), s)
        np.testing.assert_array_equal(np.asarray(out.num_cards), c)


def test_stick_tie_rule_statistics():
    # Player 10 with one card: a dealer 10 in one card wins (1/13 of games end that way);
    # the dealer can only reach ten-and-a-half in fewer than 5 cards via a tie it must break.
    probs, _ = exact_stick_distribution(20, 1)
    probs = np.asarray(probs)
    assert probs[0] > 0.3                            # the dealer busts often against 10
    assert probs[2] > 0                              # 10½ in < 5 cards is possible
    probs10_2, _ = exact_stick_distribution(20, 4)
    # with more player cards, more dealer ties go to the dealer: the player does worse
    assert probs10_2[0] < probs[0]


def test_finished_and_illegal():
    state = make_state(20, 1, 0)
    done = STEP(state, jnp.int32(0), jax.random.PRNGKey(5))
    assert bool(done.terminated)
    again = STEP(done, jnp.int32(1), jax.random.PRNGKey(6))
    assert float(again.rewards[0]) == 0.0 and int(again.player_sum) == 20
    bad = STEP(state, jnp.int32(2), jax.random.PRNGKey(5))
    assert bool(bad.terminated) and float(bad.rewards[0]) == -1.0
    bad = STEP(state, jnp.int32(-1), jax.random.PRNGKey(5))
    assert bool(bad.terminated) and float(bad.rewards[0]) == -1.0
    np.testing.assert_array_equal(np.asarray(th.legal_mask(4)), [True, True])
    np.testing.assert_array_equal(np.asarray(th.legal_mask(5)), [True, False])


def test_same_key_same_game():
    key = jax.random.PRNGKey(7)
    a = STEP(make_state(10, 2, 0), jnp.int32(0), key)
    b = STEP(make_state(10, 2, 0), jnp.int32(0), key)
    assert float(a.rewards[0]) == float(b.rewards[0])


def test_render():
    assert render(make_state(11, 2, 1)) == "player 5½ (2 cards, 1 face), plain | live | step 0"
    done = make_state(21, 2, 1).replace(
        terminated=jnp.bool_(True), rewards=jnp.array([2.0], jnp.float32),
        step_count=jnp.int32(1))
    assert render(done) == "player 10½ (2 cards, 1 face), ten-and-a-half | over, reward +2 | step 1"
    assert render(make_state(1, 1, 1)).startswith("player ½ (1 card, 1 face)")
