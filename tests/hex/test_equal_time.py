"""The equal-time search of bench/hex_equal_time.py on stand-in cost curves (no timing)."""

import pytest

from bench.hex_equal_time import equal_simulations


@pytest.mark.parametrize("power", [1.0, 1.5, 2.0])
def test_it_finds_the_simulations_whose_time_matches_within_the_tolerance(power):
    cost = lambda n: 1e-6 * n ** power   # noqa: E731  seconds a move at n simulations
    calls = []
    n, t = equal_simulations(lambda n: calls.append(n) or cost(n), 0.05, 200, cost(200))
    assert t == cost(n) and abs(t / 0.05 - 1) <= 0.1
    assert len(calls) <= 6
    if power == 1.0:   # linear: the first guess is right, one timing
        assert calls == [round(200 * 0.05 / cost(200))]


def test_after_its_tries_it_returns_the_closest_timing():
    noisy = iter([0.2, 0.01, 0.2, 0.01, 0.2, 0.01])   # a machine too noisy to converge
    n, t = equal_simulations(lambda n: next(noisy), 0.05, 100, 0.1, tries=6)
    assert (n, t) == (100, 0.1)   # the start: a factor 2 off, where the others are 4 and 5


def test_bad_times_are_refused():
    with pytest.raises(ValueError, match="positive"):
        equal_simulations(lambda n: 1.0, 0.0, 100, 1.0)
    with pytest.raises(ValueError, match="positive"):
        equal_simulations(lambda n: 1.0, 1.0, 0, 1.0)
