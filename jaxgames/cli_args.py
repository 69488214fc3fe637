"""The command-line values every jaxgames command reads the same way: ``argparse`` types that
refuse a bad value with one line (argparse's ``argument --seed: ...``, exit status 2)."""

from __future__ import annotations

import argparse
from typing import Callable

__all__ = ["SEED_MAX", "count", "seed"]

#: jax.random.key keeps 32 bits of a seed without x64 (key(2**32) is key(0)) and overflows past
#: int64: the seeds that give distinct runs and games are 0 .. 2**32 - 1
SEED_MAX = 2**32 - 1


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def seed(text: str) -> int:
    """``type=`` of a ``--seed``: an integer in 0 .. :data:`SEED_MAX`."""
    value = _integer(text)
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"must be in 0..{SEED_MAX} (a PRNG seed keeps 32 bits), got {text}")
    return value


def count(minimum: int, maximum: int, why: str = "") -> Callable[[str], int]:
    """``type=`` of a count (deals, games, hands): an integer in ``minimum`` .. ``maximum``;
    ``why`` says what the bounds are for in the error."""
    def parse(text: str) -> int:
        value = _integer(text)
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be in {minimum:,}..{maximum:,}{f' ({why})' if why else ''}, "
                                             f"got {text}")
        return value
    return parse
