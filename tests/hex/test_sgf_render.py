"""SGF export/import (HexGui style) and the text / SVG renderers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import jax
import numpy as np
import pytest

from hex_helpers import batched, games
from jaxgames import hex as H


def _state_after(n, actions, swap=False):
    init, step = batched(n, swap)
    s = init(jax.random.split(jax.random.key(0), 1))
    for a in actions:
        s = step(s, np.asarray([a], np.int32))
    return jax.tree_util.tree_map(lambda x: x[0], s)


def test_export_format():
    text = H.to_sgf([5 * 11 + 5, 121, 4 * 11 + 6], 11)
    assert text == "(;FF[4]GM[11]SZ[11]AP[jaxgames];B[f6];W[swap-pieces];B[g5])"
    won = H.to_sgf([0, 1, 3, 4, 6], 3)   # Black a1 a2 a3 down the left column
    assert won.startswith("(;FF[4]GM[11]SZ[3]AP[jaxgames]RE[B+];B[a1];W[b1]")


@pytest.mark.parametrize("n", [5, 11])
def test_round_trip_of_random_games(n):
    boards, actions, _, returns, _ = games(n)
    for g in range(40):
        moves = [int(a) for a in actions[g] if a >= 0]
        text = H.to_sgf(moves, n, properties={"PB": "random", "C": "a ] bracket"})
        record = H.from_sgf(text)
        assert record.board_size == n and list(record.actions) == moves
        assert record.properties["PB"] == "random" and record.properties["C"] == "a ] bracket"
        board, winner = H.replay(record.actions, n)
        np.testing.assert_array_equal(board, boards[g])
        assert winner == int(returns[g].argmax())
        assert ("RE[B+]" in text) == (winner == 0) and ("RE[W+]" in text) == (winner == 1)


def test_import_hexgui_record_with_swap():
    text = """(;AP[HexGui:0.9.GIT]FF[4]GM[11]SZ[5]
              ;B[b2];W[swap-pieces];B[c3]
              ;W[a1])"""
    record = H.from_sgf(text, board_size=5)
    assert record.actions == (6, 25, 12, 0) and record.uses_swap
    board, winner = H.replay(record.actions, 5)
    # Black's b2 (row 1, column 1) mirrors onto itself as White's stone.
    assert board[6] == H.WHITE_STONE and board[12] == H.BLACK_STONE and winner == -1
    s = _state_after(5, record.actions, swap=True)
    np.testing.assert_array_equal(s.board, board)


@pytest.mark.parametrize("text, where", [
    ("(;FF[4]GM[11]SZ[11];B[f6];W[f6])", r"move 2 \(W\[f6\].*already occupied"),
    ("(;GM[11]SZ[11];B[f6];B[e7])", r"move 2 \(B\[e7\].*White's turn"),
    ("(;GM[11]SZ[11];W[f6])", r"move 1 \(W\[f6\].*Black's turn"),
    ("(;GM[11]SZ[11];B[f6];W[e7];B[swap-pieces])", r"move 3 .*swap is only legal as White's first move"),
    ("(;GM[11]SZ[11];B[swap-pieces])", r"move 1 .*swap"),
    ("(;GM[11]SZ[11];B[l1])", r"move 1 \(B\[l1\].*off a 11x11 board"),
    ("(;GM[11]SZ[11];B[f6];W[e0])", r"move 2 \(W\[e0\].*not a cell name"),
    ("(;GM[11]SZ[11];B[f6];W[swap-sides])", r"move 2 .*'swap-sides' is not a move"),
    ("(;GM[11]SZ[3];B[a1];W[b1];B[a2];W[b2];B[a3];W[c1])", r"move 6 .*already won by Black"),
    ("(;GM[11]SZ[11];B[f6]W[e7])", r"move 1 at character \d+: two moves in one node"),
    ("(;GM[11]SZ[21];B[a1])", r"SZ\[21\] is outside the supported sizes 3..19"),
    ("(;GM[11]SZ[11:9];B[a1])", r"SZ\[11:9\] is not one board size"),
    ("(;GM[11]SZ[x])", r"SZ\[x\]"),
    ("(;GM[1]SZ[19])", r"GM\[1\] is not Hex"),
    ("(;GM[11]SZ[11]AB[a1];B[f6])", r"AB\[...\] \(setup stones\) is not supported"),
    ("(;GM[11]SZ[11];B[f6](;W[a1]))", r"character \d+: variations are not supported"),
    ("(;GM[11]SZ[11];B[f6] %% )", r"character 21: '%% \)' is not an SGF token"),
    ("hello", r"character 0: 'hello'"),
    ("(;GM[11]SZ[11];B[f6]", r"missing '\)'"),
    ("", r"no complete game tree"),
    ("(;GM[11]SZ[11];B[f6]);B[a1]", r"after the end of the game tree"),
])
def test_bad_sgf(text, where):
    with pytest.raises(ValueError, match=where):
        H.from_sgf(text)


def test_wrong_expected_size():
    with pytest.raises(ValueError, match=r"SZ\[9\] but a 11x11 game was expected"):
        H.from_sgf("(;GM[11]SZ[9];B[a1])", board_size=11)


def test_export_refuses_illegal_lists():
    with pytest.raises(ValueError, match="move 2: a1 is already occupied"):
        H.to_sgf([0, 0], 5)
    with pytest.raises(ValueError, match="move 3: the swap"):
        H.to_sgf([0, 1, 25], 5)


def test_render_text():
    s = _state_after(5, [7, 25, 12, 0], swap=True)   # Black c2, swap -> White b3, Black c3, White a1
    text = H.render_text(s)
    lines = text.splitlines()
    assert lines[0] == "    a b c d e"
    assert lines[1] == " 1 (O). . . .  1"                 # the last move, bracketed
    assert lines[3] == "   3  . O X . .  3"                # each row shifted one more space
    assert lines[6] == "        a b c d e"
    assert "X = Black (top-bottom)" in lines[7]
    plain = H.render_text(np.asarray(s.board))             # a bare board: no mark
    assert "(" not in "\n".join(plain.splitlines()[:-1]) and plain.splitlines()[1] == " 1  O . . . .  1"
    # The swap as last move marks the swapped stone.
    swapped = H.render_text(_state_after(5, [7, 25], swap=True))
    assert swapped.splitlines()[3] == "   3  .(O). . .  3"


def test_render_svg():
    s = _state_after(5, [7, 25, 12, 0], swap=True)
    svg = H.render_svg(s)
    root = ET.fromstring(svg)   # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polygon")) == 25
    stones = [c for c in root.findall(f"{ns}circle") if c.get("fill") in ("#1a1a1a", "#fdfdfd")]
    assert len(stones) == 3
    assert len([c for c in root.findall(f"{ns}circle") if c.get("fill") == "#d62728"]) == 1
    labels = [t.text for t in root.findall(f"{ns}text")]
    assert labels == list("abcde") + [str(i) for i in range(1, 6)]
    assert re.search(r'width="\d+"', svg)
    with pytest.raises(ValueError, match="n\\*n cells"):
        H.render_svg(np.zeros(10, np.int8))
