"""The league: the pool's ring and sampling, Best-K by rating, the results table and its Elo,
promotion clearing a slot's results, and the between-round hook."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.ratings import elo
from train.algos import league as L


def params(i):
    return {"w": jnp.full((2, 3), float(i)), "b": jnp.int32(i)}


_promote = jax.jit(L.promote)


def filled(n, capacity, num_fixed=1):
    league = L.empty(params(0), capacity=capacity, num_fixed=num_fixed)
    for i in range(n):
        league = _promote(league, params(i))
    return league


def test_promote_fills_then_overwrites_the_oldest():
    league = L.empty(params(0), capacity=3, num_fixed=2)
    assert league.capacity == 3 and league.num_fixed == 2 and int(league.size) == 0
    assert league.params["w"].shape == (3, 2, 3) and league.points.shape == (5, 5)
    league = filled(2, 3)
    assert int(league.size) == 2 and int(league.next) == 2 and league.ids.tolist() == [0, 1, -1]
    assert float(L.get(league, 1)["w"][0, 0]) == 1.0 and int(L.get(league, 1)["b"]) == 1
    league = filled(5, 3)  # 0 1 2, then 3 and 4 replace 0 and 1
    assert int(league.size) == 3 and int(league.added) == 5 and league.ids.tolist() == [3, 4, 2]
    assert [int(L.get(league, i)["b"]) for i in range(3)] == [3, 4, 2]
    with pytest.raises(ValueError, match="capacity"):
        L.empty(params(0), capacity=0)
    with pytest.raises(ValueError, match="num_fixed"):
        L.empty(params(0), capacity=2, num_fixed=0)


def test_promotion_clears_the_results_of_the_model_it_replaces():
    """A slot's row and column in the results table are the model's that sits there: when
    promotion overwrites the oldest model, its results go with it, the others' stay."""
    league = filled(2, 2)
    league = L.record(league, 1, 0, [1.0, 1.0, -1.0])    # slot 0 (generation 0) vs fixed player 0
    league = L.record(league, 2, 0, [1.0, 0.0])          # slot 1 (generation 1): a win and a tie
    league = L.record(league, 2, 1, [-1.0])              # generation 1 lost to generation 0
    assert np.asarray(league.points)[1, 0] == 2 and np.asarray(league.points)[2, 0] == 1.5
    assert np.asarray(league.played)[0, 2] == 2
    league = L.promote(league, params(7))                # replaces generation 0 in slot 0
    points, played = np.asarray(league.points), np.asarray(league.played)
    assert points[1].sum() == points[:, 1].sum() == played[1].sum() == played[:, 1].sum() == 0
    assert points[2, 0] == 1.5 and played[2, 0] == 2 and played[2, 1] == 0
    assert league.ids.tolist() == [2, 1]


def test_sample_is_uniform_over_filled_slots():
    league = filled(5, 8)
    slots = np.asarray(jax.jit(jax.vmap(lambda k: L.sample(league, k)))(
        jax.random.split(jax.random.key(0), 20_000)))
    counts = np.bincount(slots, minlength=8)
    assert counts[5:].sum() == 0
    np.testing.assert_allclose(counts[:5] / 20_000, 0.2, atol=0.015)  # ~5 sigma
    assert int(L.sample(L.empty(params(0), capacity=4), jax.random.key(1))) == 0


def test_best_k_picks_only_the_top_k_uniformly():
    league = filled(6, 8).replace(ratings=jnp.array([10.0, 50.0, -20.0, 40.0, 30.0, 0.0, 999.0, 999.0]))
    draw = jax.jit(jax.vmap(lambda k: L.sample_best_k(league, 3, k)))   # slots 6, 7 empty
    slots = np.asarray(draw(jax.random.split(jax.random.key(2), 12_000)))
    counts = np.bincount(slots, minlength=8)
    assert set(np.nonzero(counts)[0]) == {1, 3, 4}
    np.testing.assert_allclose(counts[[1, 3, 4]] / 12_000, 1 / 3, atol=0.02)
    # k larger than the pool: every filled slot
    assert L.best_k_mask(league, 10).tolist() == [True] * 6 + [False] * 2
    # ties go to the newer model
    tied = L.best_k_mask(league.replace(ratings=jnp.zeros(8)), 2)
    assert np.nonzero(np.asarray(tied))[0].tolist() == [4, 5]


def test_points_are_win_one_tie_half_loss_zero():
    np.testing.assert_array_equal(L.points_of([3.0, 0.0, -1.0, 1.0, -250.0]), [1, 0.5, 0, 1, 0])


def test_the_elo_list_and_ratings_follow_the_results():
    """Four models, model g beating model h more often as g - h grows, and all of them
    against the fixed player: the Elo list orders them, the fixed player sits at 0, each slot's
    rating is its model's, and Best-K then picks the two strongest."""
    league = filled(4, 4)
    wins = np.array([[0, 3, 2, 1], [7, 0, 4, 2], [8, 6, 0, 3], [9, 8, 7, 0]])
    for g in range(4):
        league = L.record(league, 1 + g, 0, [1.0] * (2 + 2 * g) + [-1.0] * (8 - 2 * g))
        for h in range(4):
            if g < h:
                league = L.record(league, 1 + g, 1 + h, [1.0] * wins[g, h] + [-1.0] * wins[h, g])
    ratings = L.elo_list(league)
    assert ratings[-1] == 0.0 and set(ratings) == {-1, 0, 1, 2, 3}
    assert ratings[0] < ratings[1] < ratings[2] < ratings[3]
    # the same fit as jaxgames.ratings.elo on the table
    direct = elo(np.asarray(league.points), np.asarray(league.played), prior_games=1.0, anchor=0)
    np.testing.assert_allclose([ratings[g] for g in range(4)], direct[1:], rtol=1e-6)
    rated = L.rate(league)
    np.testing.assert_allclose(np.asarray(rated.ratings), [ratings[g] for g in range(4)], rtol=1e-6)
    assert np.nonzero(np.asarray(L.best_k_mask(rated, 2)))[0].tolist() == [2, 3]


def test_recent_slots_are_the_newest_models_first():
    league = filled(6, 4)   # slots hold generations 4, 5, 2, 3
    assert L.recent_slots(league, 2) == [1, 0]
    assert L.recent_slots(league, 0) == [1, 0, 3, 2]
    assert L.recent_slots(league, 0, skip=1) == [0, 3, 2]
    assert L.recent_slots(filled(2, 4), 5) == [1, 0]   # fewer than the cap


def test_after_round_promotes_records_plays_and_rates():
    """The hook promotes the newest model, records its evaluation against the fixed player,
    plays it against the most recent other models (not itself), and rates everyone."""
    league = filled(3, 4)   # generations 0, 1, 2
    met = []

    def play(newest, other, key):
        met.append(int(other["b"]))
        # the newest (b = 9) beats everyone but loses to generation 2
        return np.array([1.0, 1.0]) if int(other["b"]) != 2 else np.array([-1.0, -1.0])

    league, info = L.after_round(league, params(9), fixed_returns={0: [1.0, -1.0, 1.0, 1.0]},
                                 play=play, opponents=2, key=jax.random.key(0))
    assert info["generation"] == 3 and met == [2, 1]    # the two most recent, newest first
    points, played = np.asarray(league.points), np.asarray(league.played)
    me = 1 + 3   # fixed player 0, then slot 3
    assert played[me, 0] == 4 and points[me, 0] == 3
    assert points[me, 1 + 2] == 0 and points[me, 1 + 1] == 2 and played[me, 1 + 0] == 0
    assert info["elo"] == L.elo_list(league)[3] and np.asarray(league.ratings)[3] == pytest.approx(info["elo"])
    assert int(league.size) == 4 and int(L.get(league, 3)["b"]) == 9
