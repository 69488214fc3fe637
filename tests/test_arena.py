import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena, ratings
from jaxgames.ten_half import dp
from toy_games import Duel, HighCard, Take


def winner(params, state, key):
    return jnp.int32(1)


def loser(params, state, key):
    return jnp.int32(0)


def test_arena_rotates_seats_and_reports_per_seat():
    # Duel: only seat 0 moves; 1 wins for it, 0 loses. Each policy sits in seat 0 half the time.
    result = arena.play(Duel(), [winner, loser], jax.random.key(0), num_games=8)
    np.testing.assert_allclose(result.mean, [1.0, -1.0])
    np.testing.assert_allclose(result.ci95, [0.0, 0.0])
    # winner: +1 in seat 0 (it wins) and +1 in seat 1 (the loser in seat 0 plays 0)
    np.testing.assert_allclose(result.seat_mean, [[1.0, 1.0], [-1.0, -1.0]])
    assert (result.seats.sum(1) == 1).all() and (result.seats[:, 0] == 0).sum() == 4


@chex.assert_max_traces(n=1)
def by_params(params, state, key):
    return jnp.asarray(params, jnp.int32)


def test_new_parameters_do_not_recompile():
    chex.clear_trace_counter()
    env = Duel()
    first = arena.play(env, [by_params, loser], jax.random.key(0), num_games=4, params=[1, None])
    second = arena.play(env, [by_params, loser], jax.random.key(1), num_games=4, params=[0, None])
    # seat 0 decides every game: params 1 wins there, params 0 loses there
    np.testing.assert_allclose(first.seat_mean[0], [1.0, 1.0])
    np.testing.assert_allclose(second.seat_mean[0], [-1.0, 1.0])


def test_rotations_share_the_deal():
    env = HighCard()
    random = jaxgames.random_policy
    result = arena.play(env, [random, honest], jax.random.key(0),
                        num_games=64, stats=lambda s: s.cards)
    cards = result.stats
    np.testing.assert_array_equal(cards[:32], cards[32:])       # game d of both rotations: one deal
    assert len({tuple(c) for c in cards[:32].tolist()}) > 1      # and the deals differ


def test_arena_refuses_bad_game_counts_and_policy_counts():
    with pytest.raises(ValueError, match="2 seats"):
        arena.play(Duel(), [winner], jax.random.key(0), num_games=2)
    with pytest.raises(ValueError, match="multiple of the 2 seatings"):
        arena.play(Duel(), [winner, loser], jax.random.key(0), num_games=3)
    for bad in (0, -4, 2.0):
        with pytest.raises(ValueError, match="positive integer"):
            arena.play(Duel(), [winner, loser], jax.random.key(0), num_games=bad)


def test_a_policy_returning_a_float_is_refused():
    with pytest.raises(TypeError, match="integers"):
        arena.play(Duel(), [lambda p, s, k: jnp.float32(1.6), loser], jax.random.key(0), num_games=2)


def test_arena_confidence_interval_covers_the_exact_value():
    env = jaxgames.make("ten_half")
    table = jnp.asarray(dp.optimal_policy())

    def optimal(params, state, key):
        return table[state.player_sum, state.num_cards, state.num_faces]

    result = arena.play(env, [optimal], jax.random.key(3), num_games=40_000)
    assert abs(result.mean[0] - dp.optimal_value()) < 1.5 * result.ci95[0] + 1e-9
    assert 0.005 < result.ci95[0] < 0.03


def test_ci95_is_1_96_standard_errors_per_column():
    x = np.array([[1.0, 0.0], [3.0, 0.0], [2.0, 4.0], [6.0, 4.0]])
    want = 1.96 * np.array([np.std(x[:, 0], ddof=1), np.std(x[:, 1], ddof=1)]) / 2.0
    np.testing.assert_allclose(arena.ci95(x), want)
    assert arena.ci95(x[:, 0]) == pytest.approx(want[0]) and isinstance(arena.ci95(x[:, 0]), float)
    assert arena.ci95(np.array([5.0])) == 0.0     # one sample: no spread to measure
    np.testing.assert_array_equal(arena.ci95(x[:1]), [0.0, 0.0])


def test_wilson_interval_at_few_games():
    # published Wilson 95% intervals (z = 1.96) of 0, 1 and 2 wins in 2 games
    assert arena.wilson(0, 2) == pytest.approx((0.0, 0.6576), abs=1e-4)
    assert arena.wilson(2, 2) == pytest.approx((0.3424, 1.0), abs=1e-4)
    assert arena.wilson(1, 2) == pytest.approx((0.0945, 0.9055), abs=1e-4)
    assert arena.wilson(0, 2)[0] == 0.0 and arena.wilson(2, 2)[1] == 1.0   # exactly, not ± rounding


@pytest.mark.parametrize("wins, games", [(0, 2), (1, 2), (2, 2), (3, 10), (7.5, 20), (199, 200), (50, 50)])
def test_wilson_bounds_solve_the_score_equation(wins, games):
    # the Wilson bounds are the rates b with |wins/games - b| = z sqrt(b (1 - b) / games),
    # one on each side of the observed rate (a bound at 0 or 1 where the rate is there)
    z, p = 1.96, wins / games
    low, high = arena.wilson(wins, games, z)
    assert 0.0 <= low <= p <= high <= 1.0
    for b in (low, high):
        assert abs(p - b) == pytest.approx(z * np.sqrt(b * (1 - b) / games), abs=1e-12)
    assert arena.wilson(wins, games, 2.576)[0] <= low and arena.wilson(wins, games, 2.576)[1] >= high


def test_wilson_on_arrays_and_edge_cases():
    low, high = arena.wilson(np.array([0, 1, 2]), 2)
    np.testing.assert_allclose(low, [arena.wilson(k, 2)[0] for k in range(3)])
    np.testing.assert_allclose(high, [arena.wilson(k, 2)[1] for k in range(3)])
    assert arena.wilson(0, 0) == (0.0, 1.0)                 # no games: nothing known
    for bad in ((3, 2), (-1, 2), (1, -2)):
        with pytest.raises(ValueError, match="successes"):
            arena.wilson(*bad)


def test_win_rate_is_a_wilson_interval_with_ties_as_half():
    result = arena.play(Duel(), [winner, loser], jax.random.key(0), num_games=2)
    rate, low, high = result.win_rate(0)
    assert rate == 1.0 and (low, high) == pytest.approx(arena.wilson(2, 2))   # not "100% ± 0%"
    assert result.win_rate(1) == pytest.approx((0.0, *arena.wilson(0, 2)))
    # a tie (return 0) is half a win; the two policies' rates add up to 1
    tied = arena.summarize(np.array([[1.0, -1.0], [0.0, 0.0], [0.0, 0.0], [-1.0, 1.0]]))
    assert tied.win_rate(0) == pytest.approx((0.5, *arena.wilson(2, 4)))
    one_tie = arena.summarize(np.array([[1.0, -1.0], [0.0, 0.0]]))
    assert one_tie.win_rate(0) == pytest.approx((0.75, *arena.wilson(1.5, 2)))
    assert one_tie.win_rate(0)[0] + one_tie.win_rate(1)[0] == 1.0


def honest(params, state, key):
    env = HighCard()
    obs = env.observe(state, state.current_player)
    card = jnp.argmax(obs[:3])
    return jnp.where(state.current_player == 0, card == 2, card >= 1).astype(jnp.int32)


def cheat(params, state, key):
    theirs = state.cards[1 - state.current_player]
    mine = state.cards[state.current_player]
    return (mine > theirs).astype(jnp.int32)


def test_honesty_check_tells_an_honest_player_from_a_cheat():
    env = HighCard()
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 32))
    assert arena.honesty_check(env, honest, None, states, jax.random.key(1)) == 0.0
    assert arena.honesty_check(env, cheat, None, states, jax.random.key(1)) > 0.1
    with pytest.raises(ValueError, match="perfect-information"):
        arena.honesty_check(Duel(), winner, None, states, jax.random.key(1))


def test_elo_on_known_results():
    # two players, 3:1 -> the Bradley-Terry gap is 400 log10(3)
    r = ratings.elo(np.array([[0, 3], [1, 0]]), np.array([[0, 4], [4, 0]]))
    np.testing.assert_allclose(r[0] - r[1], 400 * np.log10(3), atol=1e-6)
    np.testing.assert_allclose(r.sum(), 0.0, atol=1e-9)
    # three players of strengths 1, 2, 4, results exactly as expected: recovered exactly
    strength = np.array([1.0, 2.0, 4.0])
    games = np.full((3, 3), 30.0) - 30.0 * np.eye(3)
    points = games * strength[:, None] / (strength[:, None] + strength[None, :])
    r = ratings.elo(points, games, anchor=0)
    np.testing.assert_allclose(r, 400 * np.log10(strength), atol=1e-6)
    assert ratings.expected_score(r[2], r[0]) == pytest.approx(0.8)


def test_elo_refuses_inconsistent_or_unbounded_results():
    with pytest.raises(ValueError, match="infinite"):
        ratings.elo(np.array([[0, 4], [0, 0]]), np.array([[0, 4], [4, 0]]))
    finite = ratings.elo(np.array([[0, 4], [0, 0]]), np.array([[0, 4], [4, 0]]), prior_games=1)
    assert np.isfinite(finite).all() and finite[0] > finite[1]
    with pytest.raises(ValueError, match="equal games"):
        ratings.elo(np.array([[0, 3], [3, 0]]), np.array([[0, 4], [4, 0]]))


def test_mixed_seatings_seat_two_types_in_every_mixed_way():
    seatings = arena.mixed_seatings(4, 2)
    assert seatings.shape == (14, 4) and len({tuple(r) for r in seatings.tolist()}) == 14
    # each type sits in every seat equally often (7 times), and no seating is all one type
    assert ((seatings == 0).sum(0) == 7).all() and (np.ptp(seatings, axis=1) == 1).all()


def test_seatings_score_a_policy_over_all_its_seats():
    taker = lambda params, state, key: jnp.int32(1)   # noqa: E731
    passer = lambda params, state, key: jnp.int32(0)  # noqa: E731
    seatings = arena.mixed_seatings(4, 2)
    result = arena.Arena(Take(), [taker, passer], num_games=28, seatings=seatings)(None, jax.random.key(0))
    np.testing.assert_allclose(result.mean, [1.0, 0.0])
    np.testing.assert_allclose(result.seat_mean, [[1.0] * 4, [0.0] * 4])
    np.testing.assert_array_equal(result.seats, np.repeat(seatings, 2, axis=0))
    np.testing.assert_array_equal(result.seat_returns, (result.seats == 0).astype(np.float32))


def test_arena_refuses_seatings_that_leave_a_policy_out():
    with pytest.raises(ValueError, match="leaves a policy out"):
        arena.Arena(Take(), [winner, loser], num_games=2, seatings=[[0, 0, 0, 0], [0, 1, 0, 1]])
    with pytest.raises(ValueError, match="shape"):
        arena.Arena(Take(), [winner, loser], num_games=2, seatings=[[0, 1]])
    with pytest.raises(ValueError, match="multiple of the 14 seatings"):
        arena.Arena(Take(), [winner, loser], num_games=20, seatings=arena.mixed_seatings())
