"""Hearts rules: the contract for both variants, hand-made tricks (following suit, voids, the
first trick, hearts broken, passing in every direction, the moon with and without its rule),
games to a target score, observations that hide what they must, and ``sample_world``: never a
card to a player known not to hold it, every count kept, passed cards with their receiver,
exactly uniform (against brute-force enumeration). OpenSpiel agreement: test_openspiel.py."""

from __future__ import annotations

import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import hearts as H
from jaxgames.hearts import deal as D
from jaxgames.hearts.cards import IS_POINT, POINTS, SUIT, card, card_name, parse_card

STD = jaxgames.make("hearts")
PAPER = jaxgames.make("hearts", variant="paper")
PAPER_NO_MOON = jaxgames.make("hearts", variant="paper", moon=False)
GAME = jaxgames.make("hearts", target_score=40)

# Jitted once per module; test_no_recompiles (last) checks each compiled exactly once.
STEP = {e: jax.jit(e.step) for e in (STD, PAPER, PAPER_NO_MOON, GAME)}
FROM_DEAL = jax.jit(lambda owner, d: STD.from_deal(owner, pass_dir=d))
_OBSERVE = jax.jit(GAME.observe)
# sample_world of the target-score game: the standard hand plus the later deals to redraw
SAMPLE = jax.jit(jax.vmap(GAME.sample_world, in_axes=(None, None, 0)))
GAME_INIT = jax.jit(GAME.init)
LEGAL = jax.jit(GAME.legal_mask)
ASSIGN = jax.jit(jax.vmap(D.assign_hidden, in_axes=(None, None, 0)))
COUNT = jax.jit(D.count_assignments)


def cards(text: str) -> list[int]:
    """``"AC KC 2H-7H"`` -> card indices; ``2H-7H`` is a run of one suit."""
    out = []
    for word in text.split():
        if "-" in word:
            lo, hi = (parse_card(w) for w in word.split("-"))
            assert lo % 4 == hi % 4
            out += list(range(lo, hi + 1, 4))
        else:
            out.append(parse_card(word))
    return out


def deal_of(*hands: str) -> np.ndarray:
    owner = np.full(52, -1, np.int8)
    for seat, text in enumerate(hands):
        for c in cards(text):
            assert owner[c] == -1, card_name(c)
            owner[c] = seat
    assert (owner >= 0).all() and all((owner == s).sum() == 13 for s in range(4))
    return owner


def legal(state) -> set[int]:
    return set(np.flatnonzero(np.asarray(state.legal_action_mask)).tolist())


def play(env, state, text: str):
    for c in cards(text):
        assert c in legal(state), f"{card_name(c)} is not legal: {sorted(map(card_name, legal(state)))}"
        state = STEP[env](state, jnp.int32(c))
    return state


def start(owner, pass_dir=0):
    return FROM_DEAL(jnp.asarray(owner), jnp.int8(pass_dir))


def _as_game(state):
    """A standard single-hand state as the first hand of a GAME (the same rules)."""
    if state.next_deals.shape[0]:
        return state
    return state.replace(next_deals=jnp.zeros((GAME.max_hands - 1, 13), jnp.uint8))


def OBSERVE(state, p):
    return _OBSERVE(_as_game(state), jnp.int32(p))


def seat_of(state) -> int:
    return int(state.current_player)


# -- options, encoding ------------------------------------------------------------------------


def test_options_are_validated():
    assert (STD.num_players, STD.num_actions, STD.stochastic, STD.perfect_information) == (4, 52, False, False)
    assert (STD.variant, STD.moon, STD.target_score, STD.first_pass) == ("standard", True, None, "left")
    assert PAPER.first_pass == "none" and GAME.max_hands == 4 * 39 // 26 + 1 == 7
    assert STD.illegal_action_penalty == -27.0 and GAME.illegal_action_penalty == -66.0
    for bad, match in [(dict(variant="classic"), "variant must be one of"),
                       (dict(moon="yes"), "moon must be True or False"),
                       (dict(target_score=0), "target_score must be None"),
                       (dict(target_score=1001), "target_score must be None"),
                       (dict(target_score=True), "target_score must be None"),
                       (dict(target_score=100.0), "target_score must be None"),
                       (dict(first_pass="up"), "first_pass must be one of"),
                       (dict(variant="paper", first_pass="left"), "paper variant has no passing"),
                       (dict(passes=3), "valid options: variant, moon, target_score, first_pass")]:
        with pytest.raises(ValueError, match=match):
            jaxgames.make("hearts", **bad)


def test_card_encoding_and_names():
    assert H.TWO_OF_CLUBS == 0 == parse_card("2C") == parse_card("2♣")
    assert H.QUEEN_OF_SPADES == card(10, H.SPADES) == 43 == parse_card("QS") == parse_card("q♠")
    assert parse_card("10H") == parse_card("TH") == card(8, H.HEARTS) == 34 and parse_card("AS") == 51
    assert card_name(43) == "Q♠" and card_name(43, ascii=True) == "QS" and card_name(34) == "T♥"
    for c in range(52):
        assert parse_card(card_name(c)) == c == parse_card(card_name(c, ascii=True))
        assert SUIT[c] == c % 4 and IS_POINT[c] == (c % 4 == H.HEARTS or c == 43)
    for bad in ("", "Q", "1S", "QX", "11H", "QSS"):
        with pytest.raises(ValueError):
            parse_card(bad)
    assert H.cards_text(cards("AS QS 2H 3C")) == "♠ AQ ♥ 2 ♦ - ♣ 3"


# -- the contract ------------------------------------------------------------------------------


@pytest.mark.parametrize("env", [STD, PAPER], ids=["standard", "paper"])
def test_contract(env):
    jaxgames.api_test(env, num_games=4, num_probes=1)


# -- hand-made tricks --------------------------------------------------------------------------

# Seat 0 all clubs, 1 all diamonds, 2 the spades but the queen and the A♥, 3 the other hearts
# and the Q♠: nobody but seat 0 can follow clubs.
ONE_SUIT_EACH = deal_of("2C-AC", "2D-AD", "2S-JS KS AS AH", "2H-KH QS")


def test_first_trick_rules_and_follow_suit():
    s = start(ONE_SUIT_EACH)
    assert seat_of(s) == 0 and legal(s) == {0}                       # the 2♣ leads
    assert np.asarray(s.cannot_hold)[1:, 0].all()                    # everyone knows who holds it
    s = play(STD, s, "2C")
    assert legal(s) == set(cards("2D-AD"))                           # void in clubs, no points anyway
    s = play(STD, s, "2D")
    assert legal(s) == set(cards("2S-JS KS AS"))                     # no A♥ on the first trick
    s = play(STD, s, "2S")
    assert legal(s) == set(cards("2H-KH QS"))                        # nothing but points: anything
    s = play(STD, s, "QS")
    # the 2♣ is the only club: seat 0 takes the Q♠ (13), paid at once; the Q♠ breaks nothing
    np.testing.assert_array_equal(s.rewards, [-13, 0, 0, 0])
    np.testing.assert_array_equal(s.points, [13, 0, 0, 0])
    assert seat_of(s) == 0 and not bool(s.hearts_broken)
    assert (np.asarray(s.taken_by)[cards("2C 2D 2S QS")] == 0).all()
    hold = np.asarray(s.cannot_hold)
    assert hold[1, cards("2C-AC")].all() and hold[2, cards("2C-AC")].all()
    assert hold[3][~IS_POINT].all() and not hold[3][IS_POINT].any()  # seat 3 showed it holds only points
    s = play(STD, s, "3C 3D 3S")
    assert legal(s) == set(cards("2H-KH"))                           # void in spades now: hearts only
    s = play(STD, s, "2H")
    assert bool(s.hearts_broken) and int(s.points[0]) == 14 and int(s.play_order[cards("2H")[0]]) == 7


# Seat 1 holds the A♣ and twelve hearts; it wins the first trick and must lead a heart.
ONLY_HEARTS = deal_of("2C-7C 2D-8D", "AC 2H-KH", "8C-KC 9D-AD AH", "2S-AS")


def test_leading_hearts_and_what_it_reveals():
    s = play(STD, start(ONLY_HEARTS), "2C AC 8C")
    assert legal(s) == set(cards("2S-JS KS AS"))                     # first trick: no Q♠
    s = play(STD, s, "2S")
    assert seat_of(s) == 1 and not bool(s.hearts_broken)
    assert legal(s) == set(cards("2H-KH"))                           # only hearts: may lead them
    s = play(STD, s, "2H")
    assert bool(s.hearts_broken)
    assert np.asarray(s.cannot_hold)[1][SUIT != H.HEARTS].all()      # everyone now knows it
    assert legal(s) == set(cards("AH"))                              # follow suit
    s = play(STD, s, "AH")
    assert legal(s) == set(cards("3S-AS"))                           # void: any card, the Q♠ too
    s = play(STD, s, "QS 2D")
    np.testing.assert_array_equal(s.rewards, [0, 0, -15, 0])         # A♥ takes 2♥ A♥ Q♠
    assert np.asarray(s.cannot_hold)[3, cards("2H-AH")].all() and np.asarray(s.cannot_hold)[0, cards("2H-AH")].all()


HEARTS_UNBROKEN = deal_of("2C 2H-7H 2D-7D", "AC 8H-KH 8D-KD", "3C-8C AH 2S-7S", "9C-KC AD 8S-AS")


def test_hearts_must_be_broken():
    s = play(STD, start(HEARTS_UNBROKEN), "2C AC 3C 9C")
    assert seat_of(s) == 1 and legal(s) == set(cards("8D-KD"))       # hearts held, not broken: no lead
    s = play(STD, s, "8D")
    assert legal(s) == set(cards("4C-8C AH 2S-7S"))                  # a void after the first trick: all
    s = play(STD, s, "AH")
    assert bool(s.hearts_broken) and legal(s) == set(cards("AD"))
    s = play(STD, s, "AD 2D")
    np.testing.assert_array_equal(s.rewards, [0, 0, 0, -1])
    # once broken, hearts may be led (by rule, on seat 1's remaining cards)
    owner, trick = s.owner, s.trick
    unbroken = STD.play_mask(owner, jnp.int8(1), trick, jnp.int8(1), jnp.int8(8), jnp.bool_(False))
    broken = STD.play_mask(owner, jnp.int8(1), trick, jnp.int8(1), jnp.int8(8), jnp.bool_(True))
    assert set(np.flatnonzero(unbroken).tolist()) == set(cards("9D-KD"))
    assert set(np.flatnonzero(broken).tolist()) == set(cards("8H-KH 9D-KD"))
    # the paper variant has none of these rules: any card leads, even the first
    p = start(HEARTS_UNBROKEN).replace(pass_dir=jnp.int8(0))
    assert set(np.flatnonzero(PAPER.legal_mask(p)).tolist()) == set(cards("2C 2H-7H 2D-7D"))


def test_paper_variant_leads_anything():
    s = PAPER.from_deal(jnp.asarray(ONE_SUIT_EACH))
    assert seat_of(s) == 0 and int(s.pass_dir) == 0 and legal(s) == set(cards("2C-AC"))
    s = play(PAPER, s, "AC 2D")
    assert legal(s) == set(cards("2S-JS KS AS AH"))                  # points allowed on trick one
    s = play(PAPER, s, "AH QS")
    np.testing.assert_array_equal(s.rewards, [-14, 0, 0, 0])
    np.testing.assert_array_equal(PAPER.from_deal(jnp.asarray(ONE_SUIT_EACH), hand_number=3).current_player, 3)


# -- passing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", [1, 3, 2])
def test_passing(direction):
    s = start(HEARTS_UNBROKEN, direction)
    passes = ["2H 3H 4H", "8H 9H TH", "AH 2S 3S", "QS AS KS"]
    before = np.asarray(s.owner).copy()
    for seat, text in enumerate(passes):
        for i, c in enumerate(cards(text)):
            assert seat_of(s) == seat and legal(s) == set(np.flatnonzero(np.asarray(s.owner) == seat).tolist())
            assert int(s.leader) == -1 and not bool(s.terminated)
            s = STEP[STD](s, jnp.int32(c))
            np.testing.assert_array_equal(s.rewards, 0)
            if seat < 3 or i < 2:   # in transit: out of the hand, seen only by its passer
                assert int(s.owner[c]) == -1 and int(s.passed_by[c]) == seat
                for other in range(4):
                    o = OBSERVE(s, other)
                    assert bool(o.passed[c]) == (other == seat) and not bool(o.received.any())
                    assert int(o.hand.sum()) == 13 - min(3, max(0, int(s.num_passed) - 3 * other))
    owner = np.asarray(s.owner)
    for seat, text in enumerate(passes):
        receiver = (seat + direction) % 4
        assert (owner[cards(text)] == receiver).all()
        o = OBSERVE(s, receiver)
        assert set(np.flatnonzero(np.asarray(o.received)).tolist()) == set(cards(text))
        assert set(np.flatnonzero(np.asarray(OBSERVE(s, seat).passed)).tolist()) == set(cards(text))
    kept = np.ones(52, bool)
    kept[sum(map(cards, passes), [])] = False
    np.testing.assert_array_equal(owner[kept], before[kept])
    assert all((owner == p).sum() == 13 for p in range(4))
    assert seat_of(s) == owner[0] == int(s.leader) and legal(s) == {0}   # the 2♣'s new holder leads
    assert int(s.num_passed) == 12 and np.asarray(s.cannot_hold)[np.arange(4) != owner[0], 0].all()


def test_no_pass_hand_and_illegal_pass():
    s = start(HEARTS_UNBROKEN, 0)
    assert seat_of(s) == 0 and legal(s) == {0} and int(s.leader) == 0
    s = start(HEARTS_UNBROKEN, 1)
    bad = STEP[STD](s, jnp.int32(cards("AC")[0]))                     # seat 1's card: illegal for 0
    assert bool(bad.terminated)
    np.testing.assert_array_equal(bad.rewards, [-27, 9, 9, 9])


# -- the moon ------------------------------------------------------------------------------------

# Seat 0 holds A K Q of every suit and the J♠: leading them in order it takes every trick.
MOON = deal_of("AC KC QC AD KD QD AH KH QH AS KS QS JS",
               "2C-6C 2D-6D 2H-4H", "7C-JC 7D-JD 5H-7H", "2S-TS 8H-JH")
MOON_ORDER = cards("AC KC QC AD KD QD AS KS QS JS AH KH QH")


def _shoot(env, state):
    """Seat 0 plays MOON_ORDER (its first legal card in that order), the others their lowest
    legal card; returns (final state, summed rewards, last rewards, the last trick's points)."""
    total = np.zeros(4)
    while not bool(state.terminated):
        mask = np.asarray(state.legal_action_mask)
        if seat_of(state) == 0:
            action = next(c for c in MOON_ORDER if mask[c])
        else:
            action = int(np.flatnonzero(mask)[0])
        state = STEP[env](state, jnp.int32(action))
        total += np.asarray(state.rewards)
    last_trick = np.asarray(state.play_order) >= 48
    return state, total, np.asarray(state.rewards), int(np.where(last_trick, POINTS, 0).sum())


def test_shooting_the_moon():
    for env in (PAPER, STD):
        s = env.from_deal(jnp.asarray(MOON), pass_dir=0)
        final, total, last, points = _shoot(env, s)
        assert (np.asarray(final.taken_by) == 0).all() and int(final.points[0]) == 26 and points >= 1
        np.testing.assert_array_equal(total, [0, -26, -26, -26])       # -78 in all
        np.testing.assert_array_equal(final.scores, [0, 26, 26, 26])
        # the correction comes with the last trick: +26 for the shooter, -26 for each other
        np.testing.assert_array_equal(last, [26 - points, -26, -26, -26])
    final, total, last, points = _shoot(PAPER_NO_MOON, PAPER_NO_MOON.from_deal(jnp.asarray(MOON)))
    np.testing.assert_array_equal(total, [-26, 0, 0, 0])
    np.testing.assert_array_equal(final.scores, [26, 0, 0, 0])
    np.testing.assert_array_equal(last, [-points, 0, 0, 0])


# -- games to a target score ------------------------------------------------------------------


def test_target_score_game():
    rng = np.random.default_rng(0)
    s = GAME_INIT(jax.random.key(3))
    assert s.next_deals.shape == (GAME.max_hands - 1, 13)
    total, hand_rewards, hands = np.zeros(4), np.zeros(4), []
    directions = [int(s.pass_dir)]
    while not bool(s.terminated):
        number = int(s.hand_number)
        s = STEP[GAME](s, jnp.int32(rng.choice(np.flatnonzero(np.asarray(s.legal_action_mask)))))
        total += np.asarray(s.rewards)
        hand_rewards += np.asarray(s.rewards)
        if int(s.hand_number) != number or bool(s.terminated):
            hands.append(hand_rewards.sum())
            hand_rewards = np.zeros(4)
            if not bool(s.terminated):   # a fresh hand: dealt, nothing played, scores carried
                assert int(s.hand_number) == number + 1 and int(s.num_played) == 0
                assert all((np.asarray(s.owner) == p).sum() == 13 for p in range(4))
                assert int(s.scores.max()) < 40 and int(s.points.sum()) == 0
                directions.append(int(s.pass_dir))
    scores = np.asarray(s.scores)
    assert scores.max() >= 40 and len(hands) <= GAME.max_hands and len(hands) >= 2
    np.testing.assert_array_equal(total, -scores)                     # rewards: minus the points
    assert set(np.round(hands).tolist()) <= {-26.0, -78.0}
    assert directions == [1, 3, 2, 0, 1, 3, 2][:len(directions)]      # left, right, across, none ...
    np.testing.assert_array_equal(GAME.winners(s), scores == scores.min())
    # the later deals are hidden from everyone: sample_world redraws them
    first = GAME_INIT(jax.random.key(4))
    worlds = SAMPLE(first, jnp.int32(0), jax.random.split(jax.random.key(5), 64))
    assert not (np.asarray(worlds.next_deals) == np.asarray(first.next_deals)).all(axis=(1, 2)).any()


# -- observations and sample_world ----------------------------------------------------------------


def test_observation_hides_the_others_cards():
    s = play(STD, start(HEARTS_UNBROKEN), "2C AC 3C")
    swapped = np.asarray(s.owner).copy()
    a, b = cards("AD")[0], cards("4S")[0]          # seat 3's A♦ and seat 2's 4♠ change hands
    assert swapped[a] == 3 and swapped[b] == 2
    swapped[a], swapped[b] = 2, 3
    t = s.replace(owner=jnp.asarray(swapped))
    for p in (0, 1):
        chex.assert_trees_all_equal(OBSERVE(s, p), OBSERVE(t, p))
    assert not np.array_equal(OBSERVE(s, 2).hand, OBSERVE(t, 2).hand)


def test_an_invalid_seat_is_refused_and_sees_no_hand():
    # Issue 38: observe(state, 7) gave an empty hand without complaint.
    s = start(ONE_SUIT_EACH)
    for bad in (7, -1, 4):
        with pytest.raises(ValueError, match=f"hearts.observe: player {bad} is out of range.*0 to 3"):
            STD.observe(s, bad)
        with pytest.raises(ValueError, match=f"hearts.sample_world: player {bad} is out of range"):
            STD.sample_world(s, bad, jax.random.key(0))
    blank = jax.jit(STD.observe)(s, jnp.int32(4))
    assert not np.asarray(blank.hand).any() and int(blank.seat) == -1
    chex.assert_trees_all_equal(blank, STD.blank_observation)


def test_from_deal_refuses_what_is_not_a_deal():
    theirs = int(np.flatnonzero(ONE_SUIT_EACH != 0)[0])
    for owner in (np.where(np.arange(52) == theirs, 0, ONE_SUIT_EACH),  # 14 cards for seat 0
                  np.where(np.arange(52) == 0, 4, ONE_SUIT_EACH),     # a seat 4
                  ONE_SUIT_EACH[:51]):
        with pytest.raises(ValueError, match="13 cards a seat"):
            STD.from_deal(owner)


def _random_states():
    """States of random play: while passing, after the exchange, mid-hand, late."""
    rng = np.random.default_rng(1)
    out = []
    for g in range(2):
        s = GAME_INIT(jax.random.key(10 + g))
        for t in range(60):
            if t in (5, 12, 13, 30, 55):
                out.append(s)
            s = STEP[GAME](s, jnp.int32(rng.choice(np.flatnonzero(np.asarray(s.legal_action_mask)))))
    return out


HAND_MADE = [_as_game(play(STD, start(ONE_SUIT_EACH), "2C 2D 2S QS 3C 3D")),   # seat 3: only hearts
             _as_game(play(STD, start(ONLY_HEARTS), "2C AC 8C 2S 2H AH")),
             _as_game(play(STD, start(HEARTS_UNBROKEN, 2), "2H 3H 4H 8H 9H TH AH 2S 3S QS AS KS 2C"))]


@pytest.mark.parametrize("which", ["hand-made", "random play"])
def test_sample_world_keeps_what_the_player_knows(which):
    states = HAND_MADE if which == "hand-made" else _random_states()
    keys = jax.random.split(jax.random.key(2), 64)
    for s in states:
        owner, hold = np.asarray(s.owner), np.asarray(s.cannot_hold)
        played = np.asarray(s.played_by) >= 0
        exchanged = int(s.pass_dir) != 0 and int(s.num_passed) == 12
        # where each card really is: a seat's hand, or (while passing) its passing set
        real = np.where((owner == -1) & ~played, np.asarray(s.passed_by), owner)
        for p in range(4):
            worlds = SAMPLE(s, jnp.int32(p), keys)
            w_owner, w_passed = np.asarray(worlds.owner), np.asarray(worlds.passed_by)
            mine = np.asarray(OBSERVE(s, p).passed) & ~played
            known = (owner == p) | played | mine
            assert (w_owner[:, known] == owner[known]).all()        # own hand, played, passed cards
            for q in range(4):
                assert ((w_owner == q).sum(1) == (owner == q).sum()).all()         # hand sizes
                in_set = (w_passed == q) & (w_owner == -1) & ~played
                assert (in_set.sum(1) == ((np.asarray(s.passed_by) == q) & (owner == -1) & ~played).sum()).all()
                assert not (hold[q][None, :] & (w_owner == q)).any()              # known voids etc.
                if exchanged:   # every pass a seat received is in its hand or was played by it
                    got = w_passed == q
                    assert (got.sum(1) == 3).all()
                    receiver = (q + int(s.pass_dir)) % 4
                    held_after = np.where(played, np.asarray(s.played_by), w_owner)
                    assert (held_after[got] == receiver).all()
            for w in (0, 63):
                world = jax.tree_util.tree_map(lambda x: x[w], worlds)
                chex.assert_trees_all_equal(OBSERVE(world, p), OBSERVE(s, p))
                np.testing.assert_array_equal(world.legal_action_mask, LEGAL(world))
            # the real deal is one of the consistent deals, so there is always one; where there
            # are several, the worlds differ
            others = [(p + i) % 4 for i in (1, 2, 3)]
            allowed = ~known[None, :] & ~hold[others]
            capacity = np.array([((real == q) & ~known).sum() for q in others])
            count = float(COUNT(allowed, capacity))
            assert count >= 1
            if count > 1:
                assert len({w_owner[i][~known].tobytes() for i in range(64)}) > 1


def _brute_force(allowed, capacity):
    hidden = np.flatnonzero(allowed.any(0))
    sols = []
    for seats in itertools.product(range(3), repeat=len(hidden)):
        counts = np.bincount(seats, minlength=3)
        if (counts == capacity).all() and all(allowed[s, c] for s, c in zip(seats, hidden)):
            sols.append(seats)
    return hidden, sols


def test_constrained_deal_counts_and_is_uniform():
    gen = np.random.default_rng(5)
    for trial in range(3):   # exact counts against enumeration, random constraints
        hidden = gen.choice(52, 8, replace=False)
        allowed = np.zeros((3, 52), bool)
        allowed[:, hidden] = gen.random((3, 8)) < 0.7
        allowed[gen.integers(3, size=8), hidden] = True        # every hidden card has a seat
        _, sols = _brute_force(allowed, np.array([3, 3, 2]))
        assert len(sols) > 0 and float(COUNT(allowed, np.array([3, 3, 2]))) == len(sols)
    # uniformity: every consistent assignment equally often (chi-square, 10000 deals)
    allowed = np.zeros((3, 52), bool)
    hidden = [3, 7, 11, 15, 19, 23, 27]
    allowed[:, hidden] = True
    allowed[0, 3] = allowed[1, 7] = allowed[2, 11] = allowed[0, 15] = allowed[1, 15] = False
    capacity = np.array([2, 2, 3])
    idx, sols = _brute_force(allowed, capacity)
    n = 10000
    words = jax.vmap(lambda k: jax.random.bits(k, (52,), jnp.uint32))(jax.random.split(jax.random.key(9), n))
    got = np.asarray(ASSIGN(allowed, capacity, words))[:, idx]
    index = {s: i for i, s in enumerate(sols)}
    freq = np.bincount([index[tuple(r)] for r in got.tolist()], minlength=len(sols))  # KeyError if inconsistent
    expected = n / len(sols)
    chi2 = ((freq - expected) ** 2 / expected).sum()
    assert len(sols) > 20 and chi2 < len(sols) + 5 * np.sqrt(2 * len(sols)), chi2
    # no consistent assignment (a state no game reaches): the counts are still kept
    impossible = np.zeros((3, 52), bool)
    impossible[0, :6] = True
    out = np.asarray(ASSIGN(impossible, np.array([2, 2, 2]), words))[:100]
    assert float(COUNT(impossible, np.array([2, 2, 2]))) == 0
    assert all((np.bincount(r[:6], minlength=3) == 2).all() for r in out) and (out[:, 6:] == -1).all()


def test_deals_are_even_and_reproducible():
    deal = jax.jit(jax.vmap(D.deal_owner))
    deals = np.asarray(deal(jax.random.split(jax.random.key(0), 4000)))
    assert all(((deals == s).sum(1) == 13).all() for s in range(4))
    share = (deals == 0).mean(0)                                # each card to seat 0 a quarter of the time
    assert np.abs(share - 0.25).max() < 5 * np.sqrt(0.25 * 0.75 / 4000)
    together = (deals[:, 0] == deals[:, 1]).mean()              # two cards in one hand: 12/51
    assert abs(together - 12 / 51) < 5 * np.sqrt(0.2 * 0.8 / 4000)
    packed = D.pack_deal(jnp.asarray(deals[:5]))
    assert packed.shape == (5, 13) and packed.dtype == jnp.uint8
    np.testing.assert_array_equal(D.unpack_deal(packed), deals[:5])
    again = np.asarray(deal(jax.random.split(jax.random.key(0), 4000)))
    np.testing.assert_array_equal(again, deals)                 # same key, same deal
    assert len({d.tobytes() for d in deals}) == 4000
    a, b = GAME_INIT(jax.random.key(1)), GAME_INIT(jax.random.key(1))
    chex.assert_trees_all_equal(a, b)
    assert not np.array_equal(a.next_deals, GAME_INIT(jax.random.key(2)).next_deals)


def test_render():
    s = play(STD, start(HEARTS_UNBROKEN), "2C AC 3C")
    full = H.render_text(s)
    assert "seat 0: ♠ - ♥ 765432 ♦ 765432 ♣ -" in full and "trick 1: 0:2♣ 1:A♣ 2:3♣" in full
    assert "seat 3 to play: 9♣ T♣ J♣ Q♣ K♣" in full
    mine = H.render_text(s, viewer=1, ascii=True)
    assert "seat 1: S - H KQJT98 D KQJT98 C -" in mine and "seat 0: (12 cards)" in mine
    assert "to play" not in mine and "7H" not in mine
    assert H.tricks(s) == [(0, cards("2C AC 3C"), -1)]


def test_no_recompiles():
    # every jitted function above met states of many shapes of play and compiled once
    for fn in (*STEP.values(), FROM_DEAL, _OBSERVE, SAMPLE, GAME_INIT, LEGAL, ASSIGN, COUNT):
        assert fn._cache_size() == 1
