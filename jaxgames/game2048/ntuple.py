"""n-tuple network: the value of a 2048 afterstate as a sum of table look-ups.

Each pattern (a tuple of cells) is read on all 8 symmetries of the board (4 rotations x 2
mirrors); the tile exponents it covers index one float32 table per pattern, and the 8 x P
looked-up weights add up to the value. Symmetric boards therefore get equal values by
construction (tested), and with the default patterns every cell is read by some feature.

Exponents at or above ``base`` share the last index (``base - 1``): with the usual base 16 a
65536 tile reads like 32768, as in the reference C++ implementation.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array

#: the standard four 6-tuples (Yeh et al. / the source): cell numbers row-major 0..15
DEFAULT_PATTERNS = ((0, 1, 2, 3, 4, 5), (4, 5, 6, 7, 8, 9), (0, 1, 2, 4, 5, 6), (4, 5, 6, 8, 9, 10))


def symmetries() -> np.ndarray:
    """int [8, 16]: ``sym[s, i]`` is the cell that cell ``i`` moves to under symmetry ``s``."""
    grid = np.arange(16).reshape(4, 4)
    out = []
    for flip in (False, True):
        g = grid.T if flip else grid
        for r in range(4):
            out.append(np.rot90(g, r).reshape(16))
    # out[s][j] = original cell now at position j; invert to "where does cell i go"
    return np.stack([np.argsort(o) for o in out])


@dataclasses.dataclass(frozen=True)
class NTupleNetwork:
    """Static description (hashable, so it can be a jit static argument)."""

    patterns: tuple[tuple[int, ...], ...] = DEFAULT_PATTERNS
    base: int = 16

    def __post_init__(self):
        sizes = {len(p) for p in self.patterns}
        if not self.patterns or len(sizes) != 1:
            raise ValueError(f"patterns must be non-empty and all of one length, got {self.patterns}")
        for p in self.patterns:
            if len(set(p)) != len(p) or not all(0 <= c < 16 for c in p):
                raise ValueError(f"pattern {p} must list distinct cells 0..15")
        if not 2 <= self.base <= 32 or self.base ** self.tuple_size >= 2**31:
            raise ValueError(f"base {self.base} with {self.tuple_size}-tuples does not index in int32")

    @property
    def tuple_size(self) -> int:
        return len(self.patterns[0])

    @property
    def table_size(self) -> int:
        return self.base ** self.tuple_size

    @property
    def num_features(self) -> int:
        """Weights read per board: 8 symmetries x patterns."""
        return 8 * len(self.patterns)

    def cells(self) -> np.ndarray:
        """int32 [num_features, tuple_size]: the board cells each feature reads."""
        sym = symmetries()
        return np.asarray([[sym[s][c] for c in p] for p in self.patterns for s in range(8)], np.int32)

    def offsets(self) -> np.ndarray:
        """int32 [num_features]: where each feature's table starts in the flat weights."""
        return np.repeat(np.arange(len(self.patterns)) * self.table_size, 8).astype(np.int32)

    def init_weights(self, value: float = 0.0) -> Array:
        """Flat float32 [patterns * table_size]; ``value`` is the board value it starts at
        (optimistic initialisation), spread evenly over the features read."""
        return jnp.full(len(self.patterns) * self.table_size, value / self.num_features, jnp.float32)

    def tables(self, weights: Array) -> Array:
        """float32 [patterns, table_size]: one table per pattern (a view of the flat weights)."""
        return weights.reshape(len(self.patterns), self.table_size)

    def digit_groups(self) -> tuple[tuple[int, int], ...]:
        """The tuple's digits in groups whose partial index stays below 2**24, where float32
        counts exactly: ((first digit, end digit), ...); one group for 6-tuples of base 16."""
        per = max(g for g in range(1, self.tuple_size + 1) if self.base ** g <= 2**24)
        return tuple((lo, min(lo + per, self.tuple_size)) for lo in range(0, self.tuple_size, per))

    def index_matrix(self) -> np.ndarray:
        """float32 [16, groups * num_features]: ``board @ M`` gives every feature's partial
        index of each digit group (cell ``c`` of the tuple counts ``base**j`` for its digit j)."""
        cells, f = self.cells(), self.num_features
        m = np.zeros((16, len(self.digit_groups()) * f), np.float32)
        for q, (lo, hi) in enumerate(self.digit_groups()):
            for j in range(lo, hi):
                m[cells[:, j], q * f + np.arange(f)] += float(self.base ** (j - lo))
        return m

    def indices(self, board: Array) -> Array:
        """Flat weight indices of a board: int [..., 16] -> int32 [..., num_features].

        An index is linear in the cell exponents, so all of them come from one small matrix
        product (exact: every partial sum is an integer below 2**24); on the CPU that is one
        fast kernel where gathering 6 cells per feature and summing was several slower ones.
        """
        e = jnp.minimum(board.astype(jnp.int32), self.base - 1).astype(jnp.float32)
        parts = jnp.matmul(e, jnp.asarray(self.index_matrix()), precision=jax.lax.Precision.HIGHEST)
        parts = parts.astype(jnp.int32)
        f, out = self.num_features, jnp.asarray(self.offsets())
        for q, (lo, _) in enumerate(self.digit_groups()):
            out = out + parts[..., q * f:(q + 1) * f] * (self.base ** lo)
        return out

    def indices_by_gather(self, board: Array) -> Array:
        """:meth:`indices` the direct way (6 cells gathered per feature, weighted, summed): the
        reference the matrix form is tested against."""
        cells = jnp.asarray(self.cells())
        powers = jnp.asarray(self.base ** np.arange(self.tuple_size), jnp.int32)
        e = jnp.minimum(board.astype(jnp.int32), self.base - 1)[..., cells]  # [..., F, k]
        return (e * powers).sum(-1) + jnp.asarray(self.offsets())

    def value(self, weights: Array, board: Array) -> Array:
        """V(board): int [..., 16] -> float32 [...]."""
        return weights[self.indices(board)].sum(-1)
