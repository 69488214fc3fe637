"""``jaxgames.rng`` (Threefry unrolled) against ``jax.random`` on this backend, same process.

    python -m bench.rng [--batch 4096] [--words 4]

``rng.unrolled()`` decides per backend which one the project uses; this measures whether that
choice pays here: words for a batch of games (one key each), as a game step draws them.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

from jaxgames import rng


def timed(fn, *args, repeats: int = 20) -> float:
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(repeats):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - t) / repeats)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--words", type=int, default=4)
    args = parser.parse_args(argv)
    keys = jax.random.split(jax.random.key(0), args.batch)
    n = args.words
    unrolled = jax.jit(jax.vmap(lambda k: rng.threefry_words(k, n)))
    library = jax.jit(jax.vmap(lambda k: jax.random.bits(k, (n,), jnp.uint32)))
    split_unrolled = jax.jit(jax.vmap(lambda k: jax.random.key_data(rng.threefry_split(k, 3))))
    split_library = jax.jit(jax.vmap(lambda k: jax.random.key_data(jax.random.split(k, 3))))
    assert (unrolled(keys) == library(keys)).all() and (split_unrolled(keys) == split_library(keys)).all()
    t_words = timed(library, keys) / timed(unrolled, keys)
    t_split = timed(split_library, keys) / timed(split_unrolled, keys)
    print(f"backend {jax.default_backend()} ({jax.devices()[0].device_kind}), jax {jax.__version__}, "
          f"batch {args.batch}, {n} words per key")
    print(f"words: unrolled is {t_words:.2f}x jax.random.bits; split: unrolled is {t_split:.2f}x "
          f"jax.random.split  -> rng.unrolled() = {rng.unrolled()} here")


if __name__ == "__main__":
    main()
