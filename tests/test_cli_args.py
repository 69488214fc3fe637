"""The shared command-line values: seeds and counts refused in one line."""

import argparse

import pytest

from jaxgames import cli_args


def _parser():
    p = argparse.ArgumentParser(prog="prog")
    p.add_argument("--seed", type=cli_args.seed)
    p.add_argument("--deals", type=cli_args.count(2, 1000, "the interval needs two"))
    return p


def test_seeds_are_the_32_bits_jax_keeps():
    assert _parser().parse_args(["--seed", "0"]).seed == 0
    assert _parser().parse_args(["--seed", str(2**32 - 1)]).seed == cli_args.SEED_MAX == 2**32 - 1


def test_counts_in_their_bounds():
    assert [_parser().parse_args(["--deals", n]).deals for n in ("2", "1000")] == [2, 1000]


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "argument --seed: must be in 0..4294967295 (a PRNG seed keeps 32 bits), got -1"),
    (["--seed", "4294967296"], "argument --seed: must be in 0..4294967295"),
    (["--seed", "99999999999999999999"], "got 99999999999999999999"),
    (["--seed", "1.5"], "argument --seed: must be an integer, got '1.5'"),
    (["--deals", "1"], "argument --deals: must be in 2..1,000 (the interval needs two), got 1"),
    (["--deals", "1001"], "argument --deals: must be in 2..1,000"),
    (["--deals", "many"], "argument --deals: must be an integer, got 'many'"),
])
def test_bad_values_are_one_line(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(_parser().parse_args, argv, message)
