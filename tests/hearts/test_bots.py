"""Hearts players (jaxgames.hearts.bots) and the source's evaluation (jaxgames.hearts.evaluate).

* The rule-based player's and the passing rule's choices on hand-built observations.
* Strength, through the 14 mixed seatings of the source on the paper variant: PIE beats the
  rule-based player and the rule-based player beats random, each with a 95% interval (over
  deals) that excludes a tie. The margins measured at 32 deals (``bench/hearts_bots.py``) are
  about 2.7 and 5.5 points a hand; the deal counts here give intervals of about half of that.
* Honesty (the arena's check, on the standard variant, the passing phase included): IIE,
  rule-based and random read only their seat's view. PIE plays on the real state by design,
  as the source's perfect-information expert: test_maxn_hearts.py shows it playing two
  states its seat cannot tell apart differently (and the bench runs the check on it).
* The protocol's arithmetic (points per seat, ties split, intervals over deals) on returns
  built by hand; no recompiles.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.arena import mixed_seatings
from jaxgames.hearts import bots as B
from jaxgames.hearts import evaluate as E
from jaxgames.hearts.cards import NUM_CARDS, QUEEN_OF_SPADES, parse_card
from jaxgames.hearts.game import Observation
from jaxgames.player import Player

PAPER = jaxgames.make("hearts", variant="paper")
STD = jaxgames.make("hearts")

chex.clear_trace_counter()
# The arena's policies, wrapped once: PIE sits in one compiled arena, the rule-based player
# in two; a second evaluation with another key must trace nothing again.
PIE = Player("pie", chex.assert_max_traces(B.pie_policy(PAPER), n=1), honest=False)
RULE = Player("rule", chex.assert_max_traces(B.rule_policy(PAPER), n=2), honest=True)
RANDOM = B.make_bot(PAPER, "random")
RULE_SCORES = jax.jit(B.rule_scores)
PASS_SCORES = jax.jit(jax.vmap(B.pass_scores))


def cards(text: str) -> list[int]:
    return [parse_card(w) for w in text.split()]


def mask(text: str) -> np.ndarray:
    m = np.zeros(NUM_CARDS, bool)
    m[cards(text)] = True
    return m


def observation(hand: str, *, leader: int = 0, trick: str = "", queen_played: bool = False) -> Observation:
    """Seat 0's view: ``hand``; ``trick``: the cards played to the current trick from ``leader``."""
    on_table = np.full(4, -1, np.int8)
    for j, c in enumerate(cards(trick)):
        on_table[(leader + j) % 4] = c
    played_by = np.full(NUM_CARDS, -1, np.int8)
    if queen_played:
        played_by[QUEEN_OF_SPADES] = 1
    for seat in range(4):
        if on_table[seat] >= 0:
            played_by[on_table[seat]] = seat
    zeros52 = np.zeros(NUM_CARDS, bool)
    return Observation(
        seat=jnp.int8(0), hand=jnp.asarray(mask(hand)), played_by=jnp.asarray(played_by),
        play_order=jnp.full(NUM_CARDS, -1, jnp.int8), taken_by=jnp.full(NUM_CARDS, -1, jnp.int8),
        trick=jnp.asarray(on_table), leader=jnp.int8(leader), passed=jnp.asarray(zeros52),
        received=jnp.asarray(zeros52), pass_dir=jnp.int8(0), num_passed=jnp.int8(0),
        hearts_broken=jnp.bool_(True), cannot_hold=jnp.zeros((4, NUM_CARDS), bool),
        points=jnp.zeros(4, jnp.int16), scores=jnp.zeros(4, jnp.int16), hand_number=jnp.int16(0))


def rule_card(hand: str, *, legal: str | None = None, **kwargs) -> str:
    """The rule-based player's card for seat 0 holding ``hand`` (``legal``: default the whole hand)."""
    legal_mask = mask(legal if legal is not None else hand)
    scores = np.asarray(RULE_SCORES(observation(hand, **kwargs), jnp.asarray(legal_mask)))
    return jaxgames.hearts.card_name(int(np.argmax(np.where(legal_mask, scores, np.iinfo(np.int32).min))),
                                     ascii=True)


# -- the rules -------------------------------------------------------------------------------------


def test_rule_based_choices():
    # lead low: the lowest card, hearts last, no high spade while the queen is out
    assert rule_card("AS KS 3D 7C 2H") == "3D"
    assert rule_card("AS 2H 9H") == "2H"
    assert rule_card("QS 4S 9H") == "4S"
    # follow: duck with the highest card under the trick's best
    assert rule_card("4D 8D TD KD", legal="4D 8D TD KD", leader=3, trick="9D") == "8D"
    # cannot duck: the lowest when a seat still plays after, the highest when last
    assert rule_card("8D JD 2C", legal="8D JD", leader=3, trick="5D") == "8D"
    assert rule_card("8D JD 2C", legal="8D JD", leader=1, trick="5D 3D 4D") == "JD"
    # the Q♠ is never played over a spade trick it would win, but is dumped under the K♠
    assert rule_card("QS 9S", leader=1, trick="5S 3S 4S") == "9S"
    assert rule_card("QS 3S", leader=3, trick="KS") == "QS"
    # void in the led suit: the Q♠, then the A♠/K♠ while the queen is out, then high hearts
    assert rule_card("QS AH 9D", leader=3, trick="5C") == "QS"
    assert rule_card("KS AH 9D", leader=3, trick="5C") == "KS"
    assert rule_card("KS AH 9D", leader=3, trick="5C", queen_played=True) == "AH"
    assert rule_card("9D 2D 5S", leader=3, trick="5C") == "9D"


def test_passing_rule():
    hands = ["QS KS AS 2S AH JH 3H 2C 5C 7D 8D 9D TD",     # unguarded spades go
             "QS KS AS 2S 3S 4S AH JH 3H 2C 5C 7D 8D",     # three low spades guard them
             "2S 3S 4S 5S 2H 3H 4H 2C 3C 4C 5C 6C KD"]     # the K♦, alone in its suit, first
    scores = np.asarray(PASS_SCORES(jnp.asarray(np.stack([mask(h) for h in hands]))))
    top3 = [set(np.argsort(-s, kind="stable")[:3].tolist()) for s in scores]
    assert top3[0] == set(cards("QS AS KS"))
    assert top3[1] == set(cards("QS AH JH"))
    assert int(np.argmax(scores[2])) == parse_card("KD")
    assert (scores[~np.stack([mask(h) for h in hands])] == -1).all()     # cards not held


def test_make_bot_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown Hearts bot 'best'"):
        B.make_bot(PAPER, "best")
    with pytest.raises(ValueError, match="unknown option"):
        B.make_bot(PAPER, "rule", num_worlds=3)
    with pytest.raises(ValueError, match="num_worlds must be an integer >= 1"):
        B.make_bot(PAPER, "iie", num_worlds=0)
    with pytest.raises(ValueError, match="search must be 'trick' or 'maxn'"):
        B.make_bot(PAPER, "pie", search="mcts")
    with pytest.raises(ValueError, match="need a Hearts env"):
        B.make_bot(jaxgames.make("hex", board_size=3), "rule")
    assert B.make_bot(PAPER, "iie") == B.make_bot(PAPER, "iie", num_worlds=20)   # cached: one compile
    with pytest.raises(ValueError, match="2 to 4 player types"):
        E.evaluate(PAPER, [RULE], jax.random.key(0), deals=2)
    with pytest.raises(ValueError, match="deals must be an integer >= 2"):
        E.evaluate(PAPER, [RULE, RANDOM], jax.random.key(0), deals=1)


# -- the protocol's arithmetic ----------------------------------------------------------------------


def test_summary_by_hand():
    seatings = mixed_seatings(4, 2)                       # [14, 4]
    deals = 2
    seats = np.repeat(seatings, deals, axis=0)            # game g: seating g // 2, deal g % 2
    # deal 0: seat 0 takes all 26; deal 1: seats 1 and 2 take 13 each (seats 0 and 3 tie for the win)
    points = np.zeros((len(seats), 4))
    points[0::2, 0] = 26
    points[1::2, 1] = points[1::2, 2] = 13
    r = E.summarize(-points, seats, ("a", "b"), "hand")
    assert r.games == 28 and r.deals == 2 and r.table_points == 6.5
    # the same figures, game by game: a type's points are the mean of its seats; a win is
    # shared by the seats of lowest score; each deal averages its 14 seatings
    by_deal = np.zeros((deals, 2))
    wins = np.zeros((deals, 2))
    for g in range(len(seats)):
        winners = [s for s in range(4) if points[g, s] == points[g].min()]
        for t in range(2):
            by_deal[g % deals, t] += points[g, seats[g] == t].mean() / 14
            wins[g % deals, t] += sum(seats[g, s] == t for s in winners) / len(winners) / 14
    np.testing.assert_allclose(r.deal_points, by_deal)
    np.testing.assert_allclose(r.points, by_deal.mean(0))
    np.testing.assert_allclose(r.wins, wins.mean(0))
    assert r.wins.sum() == pytest.approx(1.0)
    # seat 0 never wins deal 0, and shares deal 1's win with seat 3
    np.testing.assert_allclose(r.seat_points[:, 0], [13, 13])
    # the intervals are over the two deals
    diff = by_deal[:, 0] - by_deal[:, 1]
    assert r.difference == pytest.approx(diff.mean())
    assert r.difference_ci95 == pytest.approx(1.96 * diff.std(ddof=1) / np.sqrt(2))
    assert r.compare(1, 0) == pytest.approx((-diff.mean(), r.difference_ci95))
    # the share of wins: a Wilson interval; both deals split evenly, so over all 28 games
    np.testing.assert_allclose(wins, 0.5)
    np.testing.assert_allclose(np.stack([r.wins_low, r.wins_high], 1), [arena.wilson(14, 28)] * 2)
    assert r.win_text(0) in E.format_results([r]) and r.win_text(0) in r.line() and "±" not in r.win_text(0)
    assert "| a | b | hand | " in E.format_results([r]) and "28 hands (2 deals x 14 seatings)" in r.line()
    with pytest.raises(ValueError, match="multiple of the 14 seatings"):
        E.summarize(-points[:27], seats[:27], ("a", "b"), "hand")


def test_win_interval_over_effective_games():
    # deals won 50% and 90%: p = 0.7, var(deal mean) = 0.08 / 2, so p(1 - p) / var = 5.25 games
    low, high = E.win_interval(np.array([[0.5, 0.5], [0.9, 0.1]]), games=28)
    np.testing.assert_allclose([low[0], high[0]], arena.wilson(0.7 * 5.25, 5.25))
    np.testing.assert_allclose([low[1], high[1]], arena.wilson(0.3 * 5.25, 5.25))
    assert low[0] < 0.7 < high[0] and high[0] - 0.7 < 0.7 - low[0]   # asymmetric, toward 1
    # deals that barely vary count as at most the games played; all won: [wilson(28, 28)]
    low, high = E.win_interval(np.array([[0.70], [0.71]]), games=28)
    np.testing.assert_allclose([low[0], high[0]], arena.wilson(0.705 * 28, 28))
    low, high = E.win_interval(np.array([[1.0], [1.0]]), games=28)
    assert high[0] == 1.0 and low[0] == pytest.approx(arena.wilson(28, 28)[0]) and low[0] < 0.9


# -- strength through the arena ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pie_vs_rule(optimised_compiles):
    with optimised_compiles():   # 168 hands of PIE's searches: far more running than compiling
        return E.evaluate(PAPER, [PIE, RULE], jax.random.key(1), deals=12)


@pytest.fixture(scope="module")
def rule_vs_random():
    return E.evaluate(PAPER, [RULE, RANDOM], jax.random.key(2), deals=8)


def test_pie_beats_rule_based(pie_vs_rule):
    r = pie_vs_rule
    assert r.difference + r.difference_ci95 < 0, r.line()
    assert r.points[0] < E.BREAK_EVEN < r.points[1], r.line()
    assert r.wins[0] > 0.5, r.line()


def test_rule_based_beats_random(rule_vs_random):
    r = rule_vs_random
    assert r.difference + r.difference_ci95 < 0, r.line()
    assert r.points[0] < E.BREAK_EVEN < r.points[1], r.line()


def test_points_add_up(pie_vs_rule, rule_vs_random):
    """Every hand hands out 26 points, or 78 when the moon is shot."""
    for r in (pie_vs_rule, rule_vs_random):
        totals = -r.seat_returns.sum(1)
        assert set(np.round(totals).astype(int).tolist()) <= {26, 78}
        assert r.table_points >= E.BREAK_EVEN
        assert r.games == 14 * r.deals and r.seats.shape == (r.games, 4)


def test_no_recompiles(rule_vs_random):
    """Another key plays other deals through the same compiled arena (the policies' trace
    counters would raise otherwise; PIE's arena is traced once, its search's reuse is checked
    in test_maxn_hearts.py)."""
    again = E.evaluate(PAPER, [RULE, RANDOM], jax.random.key(4), deals=8)
    assert not np.array_equal(again.seat_returns, rule_vs_random.seat_returns)


# -- honesty ---------------------------------------------------------------------------------------------


def test_honesty():
    """The arena's honesty check on states of real games (passing included): IIE's,
    rule-based's and random's moves never change when what their seat cannot see is redealt.
    (PIE's do: test_maxn_hearts.py shows two states its seat cannot tell apart where it plays
    differently; bench/hearts_bots.py runs this check on it too.)"""
    honest = [B.make_bot(STD, "iie", num_worlds=2), B.make_bot(STD, "rule"), B.make_bot(STD, "random")]
    assert all(b.honest for b in honest) and not B.make_bot(STD, "pie").honest

    def all_three(params, state, key):   # one compiled check for the three: 0 only if each is 0
        return jnp.stack([b.policy(params, state, key) for b in honest])

    assert E.honesty(STD, [all_three], jax.random.key(5), num_states=12) == (0.0,)
