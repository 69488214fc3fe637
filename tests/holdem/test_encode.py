"""AlphaHoldem's encoding (jaxgames/holdem/encode.py) on hand-made hands: the exact tensors of
a short hand, rows relative to the observer, a street longer than six actions, the legal mask
of every past decision (``history_legal``), hidden cards never encoded, vmap."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.holdem import cards as C
from jaxgames.holdem import encode as E

F, X, CALL, HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN = range(9)

ENV = jaxgames.make("holdem")


def _encode_test_step(state, action):
    # Its own name and source: chex keys its trace counter on them, and tests/holdem/test_game.py
    # wraps ENV.step itself; both modules on one xdist worker would share a counter.
    return ENV.step(state, action)


# Jitted once per module.
STEP = jax.jit(chex.assert_max_traces(_encode_test_step, n=1))
DEAL = jax.jit(ENV.deal)
INIT = jax.jit(ENV.init)
OBSERVE = jax.jit(ENV.observe)
ENCODE = jax.jit(chex.assert_max_traces(E.encode, n=1))
ENCODE_BATCH = jax.jit(jax.vmap(E.encode))

MINE, THEIRS, SUM, LEGAL = range(4)


def deal(hole0="2c3d", hole1="4h5s", board="7c8d9hJsQc", button=0):
    deck = C.deck_from(C.parse_cards(hole0), C.parse_cards(hole1), C.parse_cards(board))
    return DEAL(jnp.asarray(deck), jnp.int32(button), jnp.full(2, ENV.stack, jnp.int32))


def play(state, actions):
    """The state after ``actions`` and the legal mask each was chosen from."""
    masks = []
    for a in actions:
        mask = np.asarray(state.legal_action_mask)
        assert mask[a] and not bool(state.terminated), (a, mask)
        masks.append(mask)
        state = STEP(state, jnp.int32(a))
    return state, masks


def encoded(state, player):
    cards, actions = ENCODE(OBSERVE(state, jnp.int32(player)))
    assert cards.dtype == jnp.int8 and actions.dtype == jnp.int8
    assert cards.shape == E.CARD_SHAPE == (6, 4, 13) and actions.shape == E.ACTION_SHAPE == (24, 4, 9)
    return np.asarray(cards), np.asarray(actions)


def plane(*names):
    """int8 [4, 13]: the [suit, rank] plane of some cards."""
    out = np.zeros((4, 13), np.int8)
    for card in C.parse_cards(" ".join(names)):
        out[card % 4, card // 4] = 1
    return out


def onehot(a):
    return np.eye(9, dtype=np.int8)[a]


def mask(*actions):
    out = np.zeros(9, np.int8)
    out[list(actions)] = 1
    return out


RAISES = (HALF, THREE_Q, POT, ONE_HALF, TWO, ALLIN)


def test_short_hand_exact_tensors_and_history_legal():
    # button 0 raises 1 pot, seat 1 calls; flop: seat 1 bets ¾ pot, seat 0 raises ½ pot
    s, masks = play(deal(button=0), [POT, CALL, THREE_Q, HALF])
    facing = mask(F, CALL, *RAISES)
    opening = mask(X, *RAISES)
    assert [m.astype(np.int8).tolist() for m in masks] == [facing.tolist(), facing.tolist(),
                                                           opening.tolist(), facing.tolist()]
    # the game records each decision's mask: history_legal, False after the last row
    for p in (0, 1):
        obs = OBSERVE(s, jnp.int32(p))
        assert obs.history_legal.shape == (ENV.history_length, 9) and obs.history_legal.dtype == jnp.bool_
        np.testing.assert_array_equal(np.asarray(obs.history_legal)[:4], np.stack(masks))
        assert not np.asarray(obs.history_legal)[4:].any()

    cards, actions = encoded(s, 1)  # seat 1 (4h 5s) is to act on the flop 7c 8d 9h
    expected = np.stack([plane("4h", "5s"), plane("7c", "8d", "9h"), np.zeros((4, 13)), np.zeros((4, 13)),
                         plane("7c", "8d", "9h"), plane("4h", "5s", "7c", "8d", "9h")])
    np.testing.assert_array_equal(cards, expected)

    want = np.zeros(E.ACTION_SHAPE, np.int8)
    # (channel = street * 6 + slot, seat 1's row, action, mask)
    for channel, row, action, legal in ((0, THEIRS, POT, facing), (1, MINE, CALL, facing),
                                        (6, MINE, THREE_Q, opening), (7, THEIRS, HALF, facing)):
        want[channel, row] = want[channel, SUM] = onehot(action)
        want[channel, LEGAL] = legal
    np.testing.assert_array_equal(actions, want)

    # from seat 0 the same tensors with rows 0 and 1 swapped; its own cards
    cards0, actions0 = encoded(s, 0)
    np.testing.assert_array_equal(actions0, actions[:, [THEIRS, MINE, SUM, LEGAL]])
    np.testing.assert_array_equal(cards0[0], plane("2c", "3d"))
    np.testing.assert_array_equal(cards0[1:5], cards[1:5])


def test_turn_and_river_channels():
    s, _ = play(deal("AsKd", "2c2d", "7c8d9hJsQc", button=1), [CALL, X, X, X, X, X, X])
    assert int(s.street) == 3
    cards, actions = encoded(s, 0)
    np.testing.assert_array_equal(cards[0], plane("As", "Kd"))
    np.testing.assert_array_equal(cards[2], plane("Js"))
    np.testing.assert_array_equal(cards[3], plane("Qc"))
    np.testing.assert_array_equal(cards[4], plane("7c", "8d", "9h", "Js", "Qc"))
    np.testing.assert_array_equal(cards[5], plane("As", "Kd", "7c", "8d", "9h", "Js", "Qc"))
    # two actions on each of preflop, flop, turn; one on the river (seat 0 checked)
    taken = actions[:, SUM].sum(axis=1)
    assert np.flatnonzero(taken).tolist() == [0, 1, 6, 7, 12, 13, 18]
    np.testing.assert_array_equal(actions[18, MINE], onehot(X))


def test_a_street_of_more_than_six_actions_keeps_the_first_five_and_the_latest():
    # preflop ½-pot raises: bets 200, 400, ..., 12,800, then all-in and a call: 9 actions
    seq = [HALF] * 7 + [ALLIN, CALL]
    mid, mid_masks = play(deal(button=0), seq[:7])
    assert not bool(mid.terminated) and int(mid.street) == 0
    _, actions = encoded(mid, 0)
    # slots 0-4: actions 0-4 (seats 0, 1, 0, 1, 0); slot 5: action 6 (seat 0); action 5 dropped
    for slot, k in zip(range(6), (0, 1, 2, 3, 4, 6)):
        row = MINE if k % 2 == 0 else THEIRS
        np.testing.assert_array_equal(actions[slot, row], onehot(HALF))
        np.testing.assert_array_equal(actions[slot, 1 - row], np.zeros(9))
        np.testing.assert_array_equal(actions[slot, LEGAL], mid_masks[k])
    assert not actions[6:].any()

    # six actions exactly: slot k is the k-th, nothing dropped
    six, _ = play(deal(button=0), seq[:6])
    _, actions6 = encoded(six, 1)
    assert (actions6[:6, SUM].argmax(axis=1) == HALF).all() and actions6[:6, MINE].sum() == 3

    end, masks = play(deal(button=0), seq)
    assert bool(end.terminated) and int(end.street) == 4
    _, actions = encoded(end, 1)
    # the newest decision, seat 0's call of the all-in, with the only two actions it had
    np.testing.assert_array_equal(actions[5, THEIRS], onehot(CALL))
    np.testing.assert_array_equal(actions[5, LEGAL], mask(F, CALL))
    np.testing.assert_array_equal(masks[-1].astype(np.int8), mask(F, CALL))
    np.testing.assert_array_equal(actions[4, THEIRS], onehot(HALF))   # action 4: seat 0
    assert not actions[6:].any() and actions[:, SUM].sum() == 6


def test_action_slots_from_a_hand_made_history():
    # streets of 8, 1, 0 and 3 rows (histories need not be legal for the slot rule)
    streets = [0] * 8 + [1] + [3] * 3
    history = np.full((20, 3), -1, np.int8)
    history[:12, 0] = np.arange(12) % 2
    history[:12, 1] = 2
    history[:12, 2] = streets
    channel, kept = map(np.asarray, jax.jit(E.action_slots)(jnp.asarray(history)))
    assert kept.tolist() == [True] * 5 + [False, False, True] + [True] * 4 + [False] * 8
    assert channel[kept].tolist() == [0, 1, 2, 3, 4, 5, 6, 18, 19, 20]


def test_the_opponents_cards_are_never_encoded():
    """From either seat, at every decision and at the showdown: swapping the opponent's hole
    cards changes nothing, and no channel holds them."""
    seq = [CALL, X, THREE_Q, CALL, X, X, POT, CALL]
    for p in (0, 1):
        holes = [("AcAd", "KcKd"), ("AcAd", "3h4h")] if p == 0 else [("KcKd", "AcAd"), ("3h4h", "AcAd")]
        states = [deal(h0, h1, "2h7s9dJh3c", button=0) for h0, h1 in holes]
        for i in range(len(seq) + 1):
            a, b = encoded(states[0], p), encoded(states[1], p)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
            hidden = C.parse_cards(holes[0][1 - p] + holes[1][1 - p])
            for card in hidden:
                assert not a[0][:, card % 4, card // 4].any() and not b[0][:, card % 4, card // 4].any()
            if i < len(seq):
                states = [play(st, [seq[i]])[0] for st in states]
        assert bool(states[0].terminated) and int(states[0].street) == 4


def test_blank_observation_encodes_to_zeros():
    cards, actions = ENCODE(ENV.blank_observation)
    assert not np.asarray(cards).any() and not np.asarray(actions).any()


def test_vmap_matches_one_by_one_and_random_hands_keep_the_invariants():
    """Random hands through the jitted step: every observation of both seats, batched."""
    rng = np.random.default_rng(0)
    observations, lengths = [], []
    for h in range(12):
        s = INIT(jax.random.key(h))
        while True:
            for p in (0, 1):
                observations.append(OBSERVE(s, jnp.int32(p)))
                lengths.append(int(s.step_count))
            if bool(s.terminated):
                break
            legal = np.flatnonzero(np.asarray(s.legal_action_mask))
            # favour the ½-pot raise so that long streets occur
            a = HALF if HALF in legal and rng.random() < 0.6 else rng.choice(legal)
            s = STEP(s, jnp.int32(a))
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *observations)
    cards, actions = map(np.asarray, ENCODE_BATCH(batch))
    assert cards.shape == (len(observations), *E.CARD_SHAPE)
    for i in range(0, len(observations), 7):
        one = encoded_obs(observations[i])
        np.testing.assert_array_equal(cards[i], one[0])
        np.testing.assert_array_equal(actions[i], one[1])
    # rows 0 + 1 = row 2; one action per used slot; each taken action was legal
    np.testing.assert_array_equal(actions[:, :, MINE] + actions[:, :, THEIRS], actions[:, :, SUM])
    assert (actions[:, :, SUM].sum(axis=-1) <= 1).all()
    assert (actions[:, :, LEGAL] >= actions[:, :, SUM]).all()
    # the slots used: min(actions on the street, 6) per street, from the history itself
    streets = np.asarray(batch.history)[:, :, 2]
    for street in range(4):
        on = (streets == street).sum(axis=1)
        used = actions[:, street * 6:(street + 1) * 6, SUM].sum(axis=(1, 2))
        np.testing.assert_array_equal(used, np.minimum(on, 6))
    assert max(lengths) > 6
    # hole cards: two; the board grows 0, 3, 4, 5
    assert (cards[:, 0].sum(axis=(1, 2)) == 2).all()
    assert set(cards[:, 4].sum(axis=(1, 2)).tolist()) <= {0, 3, 4, 5}


def encoded_obs(obs):
    return tuple(np.asarray(x) for x in ENCODE(obs))
