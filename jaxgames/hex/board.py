"""Hex board primitives: static tables, placement with incremental groups, winner tests.

Board layout (docs/rules/hex.md): an n x n rhombus stored row-major, cell ``r * n + c``, row 0
the top edge. Cell (r, c) touches (r, c-1), (r, c+1), (r-1, c), (r-1, c+1), (r+1, c-1) and
(r+1, c): each row is drawn half a cell to the right of the one above it. Black (player 0)
joins the top and bottom rows, White (player 1) the left and right columns.

Two representations, each for the job it is fast at:

* ``groups`` int16 [n*n], kept incrementally by :func:`place`: every stone carries its group's
  key ``4 * root + edges``, where ``root`` is one cell of the group and ``edges`` has bit 0 set
  when the group touches its owner's first edge (top / left) and bit 1 for the second edge
  (bottom / right). All stones of a group share the key, so merging groups on a placement is
  one vectorised relabel, and the game is won the moment a key's edge bits are 3.
  (pgx relabels once per neighbour inside a rolled loop; here it is one select.)
* row bitboards, uint32 [n] (bit c of word r = cell (r, c)), for a connectivity test from
  scratch (:func:`winner`, playouts): a flood fill from the first edge by whole-board dilation
  plus a log-step fill along each row, iterated until nothing changes.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng
from jaxgames.rng import random_words

Array = jax.Array

MIN_SIZE, MAX_SIZE = 3, 19
BLACK, WHITE = 0, 1           # player ids, which are also the colours
NO_WINNER = -1
#: ``board`` cell values: empty, Black's stone, White's stone
EMPTY, BLACK_STONE, WHITE_STONE = 0, 1, -1
#: ``groups`` value of an empty cell (no group key is negative)
NO_GROUP = -1
COLUMN_LETTERS = "abcdefghijklmnopqrs"   # HexGui's column names, a.. for up to 19 columns

# (d_row, d_col) of the six neighbours, in ring order around the cell.
_DIRECTIONS = ((0, -1), (-1, 0), (-1, 1), (0, 1), (1, 0), (1, -1))


def check_size(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not MIN_SIZE <= n <= MAX_SIZE:
        raise ValueError(f"hex board_size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {n!r}")
    return int(n)


@dataclasses.dataclass(frozen=True)
class Tables:
    """Static tables of one board size, built once in NumPy."""

    n: int
    neighbours: np.ndarray   # int32 [n*n, 6]  neighbour cells; off-board slots hold the cell itself
    edges: np.ndarray        # int16 [2, n*n]  edge bits of a stone of each colour on each cell
    shifts: tuple            # row-fill shift amounts 1, 2, 4 ... below n


@functools.lru_cache(maxsize=None)
def tables(n: int) -> Tables:
    n = check_size(n)
    rows, cols = np.divmod(np.arange(n * n), n)
    neighbours = np.empty((n * n, 6), np.int32)
    for j, (dr, dc) in enumerate(_DIRECTIONS):
        r, c = rows + dr, cols + dc
        on = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        # An off-board neighbour points at the cell itself: a cell is empty while a stone is
        # being placed on it, so that slot never matches the mover's colour.
        neighbours[:, j] = np.where(on, r * n + c, np.arange(n * n))
    edges = np.stack([
        (rows == 0) * 1 + (rows == n - 1) * 2,   # Black: top, bottom
        (cols == 0) * 1 + (cols == n - 1) * 2,   # White: left, right
    ]).astype(np.int16)
    shifts = tuple(s for s in (1, 2, 4, 8, 16) if s < n)
    return Tables(n=n, neighbours=neighbours, edges=edges, shifts=shifts)


# -- cell names --------------------------------------------------------------------------------


def cell_name(cell: int, n: int) -> str:
    """HexGui name of a cell: column letter then row number from 1 (cell 0 is ``a1``)."""
    r, c = divmod(int(cell), n)
    if not 0 <= r < n:
        raise ValueError(f"cell {cell} is off a {n}x{n} board")
    return f"{COLUMN_LETTERS[c]}{r + 1}"


def parse_cell(name: str, n: int) -> int:
    """Inverse of :func:`cell_name` (case-insensitive); ValueError for a name off the board."""
    text = name.strip().lower()
    col = COLUMN_LETTERS.find(text[:1]) if text else -1
    digits = text[1:]
    if col < 0 or not digits.isdigit() or digits.startswith("0"):
        raise ValueError(f"{name!r} is not a cell name (column letter, then row number from 1)")
    row = int(digits) - 1
    if col >= n or row >= n:
        raise ValueError(f"cell {name!r} is off a {n}x{n} board")
    return row * n + col


# The names the issue uses for the same two functions.
to_cell_name = cell_name
from_cell_name = parse_cell


# -- incremental rules (the env's step) -------------------------------------------------------


def stone_of(player: Array) -> Array:
    """int8 []: the board value of ``player``'s stones (+1 Black, -1 White)."""
    return (1 - 2 * player).astype(jnp.int8)


def place(board: Array, groups: Array, cell: Array, player: Array, n: int) -> tuple[Array, Array, Array]:
    """``player`` puts a stone on the empty ``cell``: ``(board, groups, won bool [])``.

    board int8 [n*n], groups int16 [n*n], cell int32 [], player int32 [].
    """
    t = tables(n)
    stone = stone_of(player)
    nbrs = jnp.asarray(t.neighbours)[cell]                            # int32 [6]
    own = board[nbrs] == stone                                         # bool [6]
    keys = jnp.where(own, groups[nbrs], jnp.int16(-2))                 # -2 matches no cell
    edges = jnp.asarray(t.edges)[player, cell]
    for j in range(6):  # unrolled at trace time: six static slots, no loop in the program
        edges = edges | jnp.where(own[j], keys[j] & 3, 0).astype(jnp.int16)
    new_key = (4 * cell).astype(jnp.int16) | edges
    idx = jnp.arange(n * n, dtype=jnp.int32)
    merged = idx == cell
    for j in range(6):
        merged = merged | (groups == keys[j])
    groups = jnp.where(merged, new_key, groups)
    board = jnp.where(idx == cell, stone, board)
    return board, groups, edges == 3


def swap_pieces(first_move: Array, n: int) -> tuple[Array, Array]:
    """The swap (pie) move, after Black's single first stone on cell ``first_move``.

    Black's stone at (r, c) is replaced by a White stone at the mirrored cell (c, r), as in
    HexGui's ``swap-pieces`` and OpenSpiel's swap: ``(board, groups)`` of the new position.
    (The game passes its ``last_move``, which spares a search of the board.)
    """
    t = tables(n)
    mirrored = (first_move % n) * n + first_move // n
    idx = jnp.arange(n * n, dtype=jnp.int32)
    at = idx == mirrored
    board = jnp.where(at, jnp.int8(WHITE_STONE), jnp.int8(EMPTY))
    key = (4 * mirrored).astype(jnp.int16) | jnp.asarray(t.edges)[WHITE, mirrored]
    groups = jnp.where(at, key, jnp.int16(NO_GROUP))
    return board, groups


def groups_of(board: Array, n: int) -> tuple[Array, Array]:
    """``(groups int16 [n*n], won bool [2])`` of any board, by placing its stones one by one.

    Not for hot loops (a scan over the cells); for positions built by hand or from records.
    """
    def body(carry, cell):
        placed, groups, won = carry
        v = board[cell]
        player = jnp.where(v == WHITE_STONE, WHITE, BLACK).astype(jnp.int32)
        new_placed, new_groups, w = place(placed, groups, cell, player, n)
        keep = v == EMPTY
        return (jnp.where(keep, placed, new_placed), jnp.where(keep, groups, new_groups),
                won | (~keep & w & (jnp.arange(2) == player))), None

    init = (jnp.zeros(n * n, jnp.int8), jnp.full(n * n, NO_GROUP, jnp.int16), jnp.zeros(2, bool))
    (_, groups, won), _ = jax.lax.scan(body, init, jnp.arange(n * n, dtype=jnp.int32))
    return groups, won


# -- connectivity from scratch (bitboards) ----------------------------------------------------


def row_words(mask: Array, n: int) -> Array:
    """bool [..., n, n] -> uint32 [..., n]: bit c of word r is cell (r, c)."""
    bits = mask.astype(jnp.uint32) << jnp.arange(n, dtype=jnp.uint32)
    # A sum of distinct powers of two is their OR; sum is the cheapest reduction XLA offers.
    return bits.sum(axis=-1, dtype=jnp.uint32)


def _fill_rows(seed: Array, mask: Array, shifts: tuple) -> Array:
    """Spread ``seed`` along each row through ``mask`` both ways: uint32 [..., n].

    Kogge-Stone occluded fill: after shifts 1, 2, 4 ... a run of length L fills in log2(L)
    steps instead of L.
    """
    left, pl = seed, mask
    for s in shifts:
        left = left | (pl & (left << s))
        pl = pl & (pl << s)
    right, pr = left, mask
    for s in shifts:
        right = right | (pr & (right >> s))
        pr = pr & (pr >> s)
    return right


def _spread(x: Array, mask: Array, shifts: tuple) -> Array:
    """One round: every reached cell reaches its six neighbours in ``mask``, then along rows."""
    zero = jnp.zeros_like(x[..., :1])
    above = jnp.concatenate([zero, x[..., :-1]], axis=-1)   # word r-1 moved to row r
    below = jnp.concatenate([x[..., 1:], zero], axis=-1)    # word r+1 moved to row r
    # (r, c) touches (r-1, c), (r-1, c+1), (r+1, c-1), (r+1, c).
    grown = x | above | (above >> 1) | below | (below << 1)
    return _fill_rows(grown & mask, mask, shifts)


def connects(words: Array, n: int) -> Array:
    """bool [...]: do the stones in ``words`` (uint32 [..., n]) join row 0 to row n-1?

    Flood fill from row 0 until row n-1 is reached or nothing changes (a ``while_loop``: the
    rounds needed are the vertical turns of the shortest path, about n on random boards).
    """
    shifts = tables(n).shifts
    start = jnp.zeros_like(words).at[..., 0].set(words[..., 0])
    start = _fill_rows(start, words, shifts)

    def cond(carry):
        old, new = carry
        return jnp.any((old != new).any(-1) & (new[..., -1] == 0))

    def body(carry):
        _, new = carry
        return new, _spread(new, words, shifts)

    _, reached = jax.lax.while_loop(cond, body, (start, _spread(start, words, shifts)))
    return reached[..., -1] != 0


def colour_words(board: Array, n: int) -> Array:
    """uint32 [2, n]: Black's rows, and White's columns as rows (White's stones transposed).

    Transposing maps the hex adjacency onto itself and White's left/right edges onto top/bottom,
    so one fill serves both colours.
    """
    b = board.reshape(n, n)
    return jnp.stack([row_words(b == BLACK_STONE, n), row_words((b == WHITE_STONE).T, n)])


def winner(board: Array, n: int) -> Array:
    """int32 []: BLACK, WHITE, or NO_WINNER (-1) for any board, full or partial.

    At most one colour can connect its edges on any board, and on a full board exactly one
    does (the Hex theorem), so the answer is unique.
    """
    joined = connects(colour_words(board, n), n)
    return jnp.where(joined[0], BLACK, jnp.where(joined[1], WHITE, NO_WINNER)).astype(jnp.int32)


def legal_mask(board: Array, can_swap: Array) -> Array:
    """bool [n*n + 1]: the empty cells, then the swap."""
    return jnp.append(board == EMPTY, can_swap)


# -- random completion (the fast playout) -----------------------------------------------------


def _count(flags: Array) -> Array:
    """int32 []: number of True in a bool vector.

    As a dot product with ones: XLA:CPU vectorises that, while its integer reduction along the
    cells of a batched board is about five times slower (measured, batch 1024, 121 cells).
    """
    return jnp.dot(flags.astype(jnp.float32), jnp.ones(flags.shape[-1], jnp.float32)).astype(jnp.int32)


def cell_words(key: Array, n: int) -> Array:
    """uint32 [n*n]: one pseudo-random word per cell, from two Threefry words of ``key``.

    A Threefry hash per cell (``random_words(key, n*n)``) made an 11x11 playout four times
    slower on a CPU (2.9 us against 0.74 us at batch 1024, measured); here Threefry gives two
    words and a cheap mixer spreads them over the cells: ``hash32(hash32(w0 + cell *
    golden) ^ w1)``. The playout tests check the fill's statistics (single cells, pairs, exact
    win rates).
    """
    w = random_words(key, 2)
    cells = jnp.arange(n * n, dtype=jnp.uint32)
    return rng.mix32(rng.mix32(w[0] + cells * jnp.uint32(0x9E3779B9)) ^ w[1])


def random_fill(board: Array, player: Array, key: Array, n: int) -> Array:
    """int8 [n*n]: ``board`` with every empty cell filled as uniformly random play would.

    The empty cells in a uniformly random order, alternately ``player``'s and the other's:
    ``player`` gets a uniformly random ceil(k/2) of the k empty cells. Each empty cell draws a
    32-bit key (23 bits of :func:`cell_words` above its 9-bit index, so keys never tie) and
    ``player`` takes the ceil(k/2) smallest; the threshold is found by bisection on the key
    value, stopping as soon as exactly ceil(k/2) keys lie below it (about 10 rounds; 32 at
    worst). Ties of the 23 random bits, broken by cell index, bias the draw by less than
    k / 2**23.
    """
    empty = board == EMPTY
    idx = jnp.arange(n * n, dtype=jnp.uint32)
    words = cell_words(key, n)
    keys = jnp.where(empty, (words & ~jnp.uint32(511)) | idx, jnp.uint32(0xFFFFFFFF))
    k = _count(empty)
    want = (k + 1) // 2

    def cond(carry):
        return carry[2] != want

    def body(carry):
        lo, hi, _ = carry
        mid = lo + ((hi - lo) >> 1)
        below = _count(keys < mid)
        # invariant: count(keys < lo) <= want <= count(keys < hi)
        return (jnp.where(below <= want, mid, lo), jnp.where(below >= want, mid, hi), below)

    # Start at [0, 2**32 - 1]: no key is below 0, and every empty key is below 0xFFFFFFFF.
    lo, _, _ = jax.lax.while_loop(
        cond, body, (jnp.uint32(0), jnp.uint32(0xFFFFFFFF), jnp.where(want == 0, 0, -1)))
    mine = empty & (keys < lo)
    stone = stone_of(player)
    return jnp.where(mine, stone, jnp.where(empty, -stone, board))


def random_fill_winner(board: Array, player: Array, key: Array, n: int) -> Array:
    """int32 []: the winner of :func:`random_fill` (one fill: Black wins a full board or not)."""
    full = random_fill(board, player, key, n)
    black = connects(row_words(full.reshape(n, n) == BLACK_STONE, n), n)
    return jnp.where(black, BLACK, WHITE).astype(jnp.int32)
