"""Table-driven 2048 / 2584 board primitives: pure, jittable, vmap-able, one board at a time.

A board is ``int8 [16]``, row-major, each cell a tile *exponent*: 0 = empty, ``k`` = the k-th
tile of the variant (2048: ``2**k``; 2584: the k-th Fibonacci tile 1, 2, 3, 5, 8, ...).
Actions: 0 up, 1 right, 2 down, 3 left.

Every move is four independent line moves. A line of 4 exponents, read in the direction the
tiles travel (position 0 is the wall they slide against), is the mixed-radix code
``e0 + e1*B + e2*B**2 + e3*B**3``; one table per variant, built once in NumPy, maps every
code to the slid line, which of its cells are fresh merges, and whether anything moved. A
move is then arithmetic (the codes), one gather (the table) and bit unpacking, with no
data-dependent control flow, which is what keeps it cheap under ``vmap``.

``variant`` is a static Python string everywhere: it selects tables and merge rules at trace
time, so it must not be traced.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.rng import random_words

Array = jax.Array

VARIANTS = ("2048", "2584")
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
ACTION_NAMES = ("up", "right", "down", "left")

#: exponent of the tile that spawns with probability 0.9 (2, or 1 in 2584) and 0.1 (4, or 2)
SMALL_TILE, BIG_TILE = 1, 2
SMALL_PROB, BIG_PROB = 0.9, 0.1
#: number of chance outcomes of an afterstate: ``cell * 2 + (0 small | 1 big)``
NUM_CHANCE_OUTCOMES = 32

# Packed table entry: 5 bits per output exponent (positions 0..3), then 4 merge flags, then
# the "changed" bit. 5 bits bound every variant's base at 32.
_EXP_BITS = 5
_FLAG_SHIFT = 4 * _EXP_BITS
_CHANGED_SHIFT = _FLAG_SHIFT + 4


@dataclasses.dataclass(frozen=True, eq=False)
class Rules:
    """One variant's constants. Built once per variant by :func:`rules`.

    base:    B, the number of distinct cell values (exponent 0..B-1)
    values:  int64 [B]   tile value of each exponent (0 for empty)
    table:   int32 [B**4] packed slide-left result of every line code (and _add_step_bits)
    """

    variant: str
    base: int
    values: np.ndarray
    table: np.ndarray

    @property
    def values32(self) -> np.ndarray:
        return self.values.astype(np.int32)

    @property
    def max_tile(self) -> int:
        return int(self.values[-1])


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")


def _tile_values(variant: str) -> np.ndarray:
    if variant == "2048":
        # B = 18: exponents 0..17, up to 131072, the largest tile a 4x4 board can ever hold.
        return np.array([0] + [2**k for k in range(1, 18)], np.int64)
    # B = 32: 1, 2, 3, 5, ... up to 2178309 (index 31); 75025 is index 24.
    fib = [1, 2]
    while len(fib) < 31:
        fib.append(fib[-1] + fib[-2])
    return np.array([0] + fib, np.int64)


def _mergeable_np(variant: str, a: np.ndarray, b: np.ndarray, base: int) -> np.ndarray:
    both = (a > 0) & (b > 0)
    if variant == "2048":
        ok = both & (a == b)
    else:  # adjacent Fibonacci tiles, or 1 + 1
        ok = both & ((np.abs(a - b) == 1) | ((a == 1) & (b == 1)))
    # A merge whose result would not fit the encoding is refused (never reachable in 2048;
    # in 2584 only past 2178309).
    return ok & (np.maximum(a, b) + 1 < base)


def _build_table(variant: str, base: int) -> np.ndarray:
    """Slide every line code toward position 0, vectorised over all ``base**4`` codes."""
    codes = np.arange(base**4, dtype=np.int64)
    lines = np.stack([(codes // base**p) % base for p in range(4)], axis=1)  # [N, 4]
    n = len(codes)
    rows = np.arange(n)

    # Compact: tiles keep their order, gaps close (stable sort on "is empty").
    order = np.argsort(lines == 0, axis=1, kind="stable")
    packed = np.take_along_axis(lines, order, axis=1)

    # Greedy merge from the wall outward: a tile merges with the next one at most once.
    out = np.zeros((n, 4), np.int64)
    flags = np.zeros((n, 4), np.int64)
    write = np.zeros(n, np.int64)
    pending = np.zeros(n, np.int64)  # tile read but not yet written (0 = none)
    for p in range(4):
        t = packed[:, p]
        has = t > 0
        merge = has & (pending > 0) & _mergeable_np(variant, pending, t, base)
        merged = np.maximum(pending, t) + 1
        # merge: write the merged tile, nothing pending
        out[rows[merge], write[merge]] = merged[merge]
        flags[rows[merge], write[merge]] = 1
        # no merge but a pending tile: flush it, the new tile becomes pending
        flush = has & ~merge & (pending > 0)
        out[rows[flush], write[flush]] = pending[flush]
        write = write + (merge | flush)
        pending = np.where(merge, 0, np.where(has, t, pending))
    last = pending > 0
    out[rows[last], write[last]] = pending[last]

    changed = (out != lines).any(axis=1)
    entry = np.zeros(n, np.int64)
    for p in range(4):
        entry |= out[:, p] << (_EXP_BITS * p)
        entry |= flags[:, p] << (_FLAG_SHIFT + p)
    entry |= changed.astype(np.int64) << _CHANGED_SHIFT
    return entry.astype(np.int32)


# Bits past the "changed" bit, for the Env's step: whether the slide toward position 3 changes
# the line (one lookup answers both of a line's directions: the legal mask needs 8 lookups, not
# 16), and how many tiles the slid line keeps (its empty cells are the positions past them,
# which is what the spawn needs).
_LINE_MASK = (1 << 20) - 1
_TOWARD0_SHIFT = _CHANGED_SHIFT
_TOWARD3_SHIFT, _COUNT_SHIFT = _CHANGED_SHIFT + 1, _CHANGED_SHIFT + 2


def _add_step_bits(table: np.ndarray, base: int) -> np.ndarray:
    """``table`` with the toward-position-3 bit and the tile count of every entry."""
    entry = table.astype(np.int64)
    codes = np.arange(len(table), dtype=np.int64)
    fields = np.stack([(codes // base**p) % base for p in range(4)], axis=1)
    reverse = entry[(fields[:, ::-1] * base ** np.arange(4)).sum(1)]
    count = sum((((entry >> (_EXP_BITS * p)) & 31) > 0).astype(np.int64) for p in range(4))
    out = entry | (((reverse >> _CHANGED_SHIFT) & 1) << _TOWARD3_SHIFT) | (count << _COUNT_SHIFT)
    return out.astype(np.int32)


@functools.lru_cache(maxsize=None)
def rules(variant: str = "2048") -> Rules:
    """The variant's tables, built on first use and cached (2048: 105k entries, 2584: 1M)."""
    _check_variant(variant)
    values = _tile_values(variant)
    base = len(values)
    assert base <= 1 << _EXP_BITS
    table = _add_step_bits(_build_table(variant, base), base)
    for arr in (values, table):
        arr.setflags(write=False)
    return Rules(variant=variant, base=base, values=values, table=table)


def _device_tables(variant: str) -> tuple[Array, Array]:
    # Converted on every call, never cached: under a trace jnp.asarray makes a tracer, and a
    # cached tracer would leak into the next trace.
    r = rules(variant)
    return jnp.asarray(r.table), jnp.asarray(r.values32)


# -- line codes -------------------------------------------------------------------------------


def _line_codes(board: Array, base: int) -> Array:
    """Codes of the 4 lines of every action: int32 [4 actions, 4 lines]."""
    b = board.astype(jnp.int32).reshape(4, 4)
    up = _codes(b.T, base)              # line j = column j, wall at row 0
    right = _codes(b[:, ::-1], base)    # line i = row i, wall at column 3
    down = _codes(b.T[:, ::-1], base)
    left = _codes(b, base)
    return jnp.stack([up, right, down, left])


def _codes(lines: Array, base: int) -> Array:
    """int32 [4 lines, 4 positions] -> int32 [4] line codes, position 0 first (explicit sums:
    a reduction over 4 compiles to a slower inner loop on the CPU)."""
    return lines[:, 0] + base * lines[:, 1] + base**2 * lines[:, 2] + base**3 * lines[:, 3]


def _fields(packed: Array) -> Array:
    """int32 [...] 5-bit packed lines -> int32 [..., 4] exponents, position 0 first."""
    return (packed[..., None] >> (_EXP_BITS * jnp.arange(4, dtype=jnp.int32))) & 31


def _merged_values(entries: Array, exps: Array, values: Array, variant: str) -> Array:
    """Value of every fresh merge (0 elsewhere): int32 ``[..., 4 positions]``."""
    flags = (entries[..., None] >> (_FLAG_SHIFT + jnp.arange(4, dtype=jnp.int32))) & 1
    return (flags << exps) if variant == "2048" else values[exps] * flags


def _to_board(lines: Array, action: int) -> Array:
    """Line-major ``[4 lines, 4 positions]`` of a static action -> row-major ``[4, 4]``."""
    if action == UP:
        return lines.T
    if action == RIGHT:
        return lines[:, ::-1]
    if action == DOWN:
        return lines[:, ::-1].T
    return lines


# -- public API -------------------------------------------------------------------------------


def slide_all(board: Array, variant: str = "2048") -> tuple[Array, Array, Array]:
    """All four moves at once, from one table gather of the 16 line codes.

    board: int8 [16]. Returns (afterstates int8 [4, 16], rewards int32 [4], changed bool [4]),
    indexed by action.
    """
    _check_variant(variant)
    table, values = _device_tables(variant)
    e = table[_line_codes(board, rules(variant).base)]  # [4 actions, 4 lines]
    exps = _fields(e)                                      # [4, 4, 4]
    merged = _merged_values(e, exps, values, variant)
    # Sums and ors spelled out: reductions over these small axes compile to slow inner loops
    # on the CPU (measured 2x on the whole function, batch 128 and 1024).
    rewards = functools.reduce(jnp.add, [merged[:, i, j] for i in range(4) for j in range(4)])
    changed = ((e[:, 0] | e[:, 1] | e[:, 2] | e[:, 3]) >> _CHANGED_SHIFT) & 1
    boards = jnp.stack([_to_board(exps[a], a).reshape(16) for a in range(4)])
    return boards.astype(jnp.int8), rewards, changed.astype(jnp.bool_)


def slide(board: Array, action: Array, variant: str = "2048") -> tuple[Array, Array, Array]:
    """One move. board int8 [16], action int32 [] -> (afterstate int8 [16], reward int32 [],
    changed bool []). A move with ``changed == False`` is illegal; the board comes back as is.

    All four moves, then a pick: measured ~10% faster at batch 1024 on CPU than gathering
    only the action's 4 codes, whose action-dependent selects cost more than 12 extra lookups.
    """
    afters, rewards, changed = slide_all(board, variant)
    action = jnp.asarray(action, jnp.int32)
    return afters[action], rewards[action], changed[action]


def legal_moves(board: Array, variant: str = "2048") -> Array:
    """bool [4]: which moves change the board (the legal ones).

    Eight lookups, one per row and column, each answering both of the line's directions
    (the same answers as :func:`slide_all`'s ``changed``; tested).
    """
    _check_variant(variant)
    base = rules(variant).base
    table, _ = _device_tables(variant)
    b = board.astype(jnp.int32).reshape(4, 4)
    return _legal_of_lines(table, _codes(b, base), _codes(b.T, base), True, False)


def _legal_of_lines(table: Array, along: Array, across: Array, horizontal, reversed_) -> Array:
    """The legal mask from the codes of the 4 lines ``along`` one axis and the 4 ``across`` it.

    ``along`` are rows when ``horizontal`` (else columns), read from the far end when
    ``reversed_``; ``across`` are the other axis's lines read from position 0. Python bools or
    traced bool scalars.
    """
    e = table[jnp.concatenate([along, across])]
    a = e[0] | e[1] | e[2] | e[3]
    c = e[4] | e[5] | e[6] | e[7]
    bit = lambda x, s: ((x >> s) & 1).astype(jnp.bool_)
    a_to_first = jnp.where(reversed_, bit(a, _TOWARD3_SHIFT), bit(a, _TOWARD0_SHIFT))  # left / up
    a_to_last = jnp.where(reversed_, bit(a, _TOWARD0_SHIFT), bit(a, _TOWARD3_SHIFT))   # right / down
    c_to_first, c_to_last = bit(c, _TOWARD0_SHIFT), bit(c, _TOWARD3_SHIFT)
    up = jnp.where(horizontal, c_to_first, a_to_first)
    down = jnp.where(horizontal, c_to_last, a_to_last)
    left = jnp.where(horizontal, a_to_first, c_to_first)
    right = jnp.where(horizontal, a_to_last, c_to_last)
    return jnp.stack([up, right, down, left])


def _materialize(x: Array) -> Array:
    """``x`` (int32 [n]) unchanged, computed once: XLA's CPU fusion would otherwise copy its
    producers into every consumer (here: the spawn's arithmetic into each of 16 cells); it
    never fuses a cumulative sum with what feeds it (see jaxgames.rng)."""
    acc = jnp.cumsum(x, dtype=x.dtype)
    return acc - jnp.concatenate([jnp.zeros(1, x.dtype), acc[:-1]])


def step_from_words(board: Array, action: Array, w_cell: Array, w_tile: Array,
                    variant: str = "2048") -> tuple[Array, Array, Array, Array]:
    """One whole move for the Env: slide along ``action``, spawn, legal moves of the result.

    board int8 [16], action int32 [], two random words uint32 [] -> (board int8 [16],
    reward int32 [], changed bool [], legal bool [4]). Same slide, reward and "changed" as
    :func:`slide`, same legal mask as :func:`legal_moves` on the new board (tested). A move
    that changes nothing spawns nothing.

    The spawn has :func:`spawn`'s law (a uniformly random empty cell, the big tile when
    ``w_tile`` is below 0.1 * 2**32) but counts the empty cells in another order: line by
    line in the move's direction. After a slide every line's empty cells lie past its tiles,
    so the line table's tile counts locate the k-th one with a few scalar operations; the
    k-th empty cell in row-major order would need a running count over the 16 cells.

    Only the move's four lines are looked up (4 lookups, then 8 for the legal mask); the
    slid lines' packed results are the new lines, with the spawned tile or-ed in.
    """
    _check_variant(variant)
    r = rules(variant)
    table, values = _device_tables(variant)
    action = jnp.asarray(action, jnp.int32)
    horizontal = (action & 1) == 1                      # right, left: lines are rows
    reversed_ = (action == RIGHT) | (action == DOWN)    # the wall is at position 3
    b = board.astype(jnp.int32).reshape(4, 4)
    # The move's 4 line codes, position 0 at its wall: all four readings, then a select.
    rows = jnp.where(reversed_, _codes(b[:, ::-1], r.base), _codes(b, r.base))
    cols = jnp.where(reversed_, _codes(b.T[:, ::-1], r.base), _codes(b.T, r.base))
    e = table[jnp.where(horizontal, rows, cols)]        # [4]

    exps = _fields(e)                                   # [line, position from the wall]
    merged = _merged_values(e, exps, values, variant)
    reward = functools.reduce(jnp.add, [merged[i, j] for i in range(4) for j in range(4)])
    changed = ((e[0] | e[1] | e[2] | e[3]) >> _TOWARD0_SHIFT) & 1

    # Spawn: the k-th empty cell, counting line by line, each line's empties past its tiles.
    tiles = (e >> _COUNT_SHIFT) & 7
    empty = 4 - tiles
    c1 = empty[0]
    c2 = c1 + empty[1]
    c3 = c2 + empty[2]
    n = c3 + empty[3]
    k = (((w_cell >> 4) * n.astype(jnp.uint32)) >> 28).astype(jnp.int32)  # as in spawn_from_words
    line = (k >= c1).astype(jnp.int32) + (k >= c2) + (k >= c3)
    first = jnp.where(k >= c3, c3, jnp.where(k >= c2, c2, jnp.where(k >= c1, c1, 0)))
    tiles_before = jnp.where(line == 0, tiles[0], jnp.where(line == 1, tiles[1],
                                                            jnp.where(line == 2, tiles[2], tiles[3])))
    tile = jnp.where(w_tile < _BIG_THRESHOLD, BIG_TILE, SMALL_TILE)
    at = tile << (_EXP_BITS * (tiles_before + k - first))
    spawned = jnp.where((jnp.arange(4) == line) & (changed == 1), at, 0)
    new_lines = _materialize((e & _LINE_MASK) | spawned)  # [4] 5-bit packed, from the wall

    cells = _fields(new_lines)                          # [line, position from the wall]
    # Cell (i, j) is field `position` of line `i` (rows) or `j` (columns): broadcasts and
    # selects, cheaper per cell than unpacking both layouts and transposing.
    i = jnp.arange(4, dtype=jnp.int32)[:, None]
    j = jnp.arange(4, dtype=jnp.int32)[None, :]
    packed = jnp.where(horizontal, new_lines[:, None], new_lines[None, :])
    position = jnp.where(horizontal, j, i)
    position = jnp.where(reversed_, 3 - position, position)
    new_board = ((packed >> (_EXP_BITS * position)) & 31).reshape(16).astype(jnp.int8)
    # Legal mask: the 4 new lines (read from the move's wall) and the 4 across them (read
    # from position 0; line i of the move is position i of each).
    legal = _legal_of_lines(table, _codes(cells, r.base), _codes(cells.T, r.base), horizontal, reversed_)
    return new_board, reward, changed.astype(jnp.bool_), legal


# -- randomness: jaxgames.rng.random_words (JAX's Threefry words, unrolled for the CPU) ----------

# P(big tile) = _BIG_THRESHOLD / 2**32 = 0.1 + 9e-11
_BIG_THRESHOLD = 429496730


_CELL_BITS = np.uint32(1) << np.arange(16, dtype=np.uint32)          # bit i: cell i
_CELLS_UP_TO = (np.uint32(2) << np.arange(16, dtype=np.uint32)) - 1  # bits 0..i


def spawn_from_words(board: Array, w_cell: Array, w_tile: Array) -> Array:
    """:func:`spawn` with its two random words given (uint32 [] each)."""
    empty = board == 0
    # rank[i] = number of empty cells in 0..i, as popcounts of the empty cells' bit mask: a
    # cumsum here is a reduce-window on XLA's CPU backend (the learner's update ran 7-16%
    # slower with it, docs/benchmarks.md)
    mask = jnp.sum(jnp.where(empty, _CELL_BITS, 0), dtype=jnp.uint32)
    rank = jax.lax.population_count(mask & _CELLS_UP_TO).astype(jnp.int32)
    n = jax.lax.population_count(mask)
    # k = floor(u * n) for u uniform on 28 bits: a multiply and a shift instead of a modulo
    # (which XLA's CPU backend does not vectorise); bias at most 16 / 2**28.
    k = (((w_cell >> 4) * n) >> 28).astype(jnp.int32)
    tile = jnp.where(w_tile < _BIG_THRESHOLD, BIG_TILE, SMALL_TILE).astype(board.dtype)
    return jnp.where(empty & (rank == k + 1), tile, board)


def spawn(board: Array, key: Array, variant: str = "2048") -> Array:
    """A new tile in a uniformly random empty cell: the small tile w.p. 0.9, else the big one.

    board int8 [16] -> int8 [16]. One draw of two words (:func:`random_words`): one picks the
    k-th empty cell, the other the tile. A full board comes back unchanged.
    """
    _check_variant(variant)
    w = random_words(key, 2)
    return spawn_from_words(board, w[0], w[1])


def chance_outcomes(board: Array) -> tuple[Array, Array]:
    """Every spawn of an afterstate: outcomes int32 [32] (= cell * 2 + (0 small | 1 big)),
    probs float32 [32] (zero on occupied cells; all zero on a full board)."""
    empty = (board == 0).astype(jnp.float32)
    n = jnp.maximum(empty.sum(), 1.0)
    probs = jnp.stack([empty * (SMALL_PROB / n), empty * (BIG_PROB / n)], axis=1).reshape(32)
    return jnp.arange(NUM_CHANCE_OUTCOMES, dtype=jnp.int32), probs


def apply_chance(board: Array, outcome: Array) -> Array:
    """Place the tile of ``outcome`` (see :func:`chance_outcomes`): int8 [16]."""
    outcome = jnp.asarray(outcome, jnp.int32)
    tile = (SMALL_TILE + outcome % 2).astype(board.dtype)
    return jnp.where(jnp.arange(16) == outcome // 2, tile, board)


def tile_values(board: Array, variant: str = "2048") -> Array:
    """Tile values int32 [16] (0 for empty)."""
    _check_variant(variant)
    return _device_tables(variant)[1][board.astype(jnp.int32)]


def max_tile(board: Array, variant: str = "2048") -> Array:
    """Largest tile value on the board: int32 []."""
    return tile_values(board, variant).max()


def initial_board(key: Array, variant: str = "2048") -> Array:
    """An empty board with two tiles, each placed like :func:`spawn` places one: int8 [16].

    On an empty board the k-th empty cell is cell k, so the two cells are drawn directly
    (the second among the 15 left) with no running count; one draw of four words.
    """
    _check_variant(variant)
    return initial_board_from_words(random_words(key, 4))


def initial_board_from_words(w: Array) -> Array:
    """:func:`initial_board` with its four random words given (uint32 [4])."""
    first = ((w[0] >> 4) * jnp.uint32(16)) >> 28
    second = ((w[2] >> 4) * jnp.uint32(15)) >> 28
    second = second + (second >= first)
    tiles = jnp.where(w[jnp.array([1, 3])] < _BIG_THRESHOLD, BIG_TILE, SMALL_TILE)
    cells = jnp.arange(16, dtype=jnp.uint32)
    board = jnp.where(cells == first, tiles[0], 0) + jnp.where(cells == second, tiles[1], 0)
    return board.astype(jnp.int8)


@dataclasses.dataclass(frozen=True)
class BoardModel:
    """One variant's board-level moves, for learners that work below the Env.

    The afterstate TD learner (``train/algos/ntuple_td.py``) moves boards, not States: the
    Env's contract checks and selects cost more than a move itself there (measured:
    docs/benchmarks.md). Everything here is the same rule the Env applies.
    """

    variant: str = "2048"
    num_actions: int = 4

    def expand(self, board: Array) -> tuple[Array, Array, Array]:
        """(afterstates int8 [4, 16], rewards int32 [4], legal bool [4])."""
        return slide_all(board, self.variant)

    def spawn_from_words(self, after: Array, w_cell: Array, w_tile: Array) -> Array:
        return spawn_from_words(after, w_cell, w_tile)

    def start_from_words(self, words: Array) -> Array:
        """A new game's board from four random words."""
        return initial_board_from_words(words)

    def tile_values(self) -> np.ndarray:
        """int64 [32]: the value of each exponent 0..31 (0 beyond the variant's range)."""
        values = np.zeros(32, np.int64)
        v = rules(self.variant).values
        values[:len(v)] = v[:32]
        return values
