"""HexGui-style SGF game records: export and import (host-side, plain Python).

    (;FF[4]GM[11]SZ[11]AP[jaxgames]RE[B+];B[f6];W[swap-pieces];B[e7])

``GM[11]`` is Hex; ``SZ[n]`` the board size (``SZ[n:n]`` accepted); cells are named as in
HexGui, column letter then row number from 1 (``a1`` is row 0, column 0, action 0);
``W[swap-pieces]`` is the swap (action n*n). Moves alternate B, W, B ... from Black. Root
properties other than FF, GM, SZ are kept (``GameRecord.properties``) but not interpreted.
Every defect is a ValueError naming the move number and the token (or the character offset
of the garbage): wrong game or size, occupied cell, wrong colour, a swap anywhere but White's
first move, a move after the game is won, setup stones, variations, anything unparsable.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from jaxgames.hex.board import MAX_SIZE, MIN_SIZE, cell_name, parse_cell

SWAP_NAME = "swap-pieces"
_TOKEN = re.compile(r"\s*(?:(\()|(\))|(;)|([A-Za-z]+)((?:\s*\[(?:\\.|[^\]\\])*\])+))", re.S)
_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.S)
# Setup and other moves HexGui can write that this game does not have.
_UNSUPPORTED = {"AB": "setup stones", "AW": "setup stones", "AE": "setup stones"}


@dataclasses.dataclass(frozen=True)
class GameRecord:
    board_size: int
    actions: tuple            # int per move: cell r*n + c, or n*n for the swap
    properties: dict          # root properties besides FF, GM, SZ (first value of each)

    @property
    def uses_swap(self) -> bool:
        return self.board_size ** 2 in self.actions


_STEPS = ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0))


class _Game:
    """Host-side rules, move by move, for checking records (independent of the JAX code)."""

    def __init__(self, n: int):
        self.n = n
        self.board = np.zeros(n * n, np.int8)
        self.moves = 0
        self.winner = -1

    def play(self, a: int) -> None:
        """Play action ``a``; ValueError saying why it is illegal."""
        n = self.n
        if self.winner >= 0:
            raise ValueError(f"the game was already won by {'Black' if self.winner == 0 else 'White'}")
        if a == n * n:
            if self.moves != 1:
                raise ValueError("the swap is only legal as White's first move (move 2)")
            first = int(np.flatnonzero(self.board)[0])
            self.board[:] = 0
            self.board[(first % n) * n + first // n] = -1
        elif not 0 <= a < n * n:
            raise ValueError(f"action {a} is off a {n}x{n} board")
        elif self.board[a]:
            raise ValueError(f"{cell_name(a, n)} is already occupied")
        else:
            player = self.moves % 2
            self.board[a] = 1 - 2 * player
            if self._joins(a, player):
                self.winner = player
        self.moves += 1

    def _joins(self, a: int, player: int) -> bool:
        """Does the group of the stone on ``a`` touch both of ``player``'s edges?"""
        n, cells = self.n, self.board.reshape(self.n, self.n)
        stone = cells.flat[a]
        todo = [divmod(a, n)]
        seen = set(todo)
        ends = set()
        while todo:
            r, c = todo.pop()
            line = r if player == 0 else c
            if line in (0, n - 1):
                ends.add(line)
            for dr, dc in _STEPS:
                q = (r + dr, c + dc)
                if 0 <= q[0] < n and 0 <= q[1] < n and q not in seen and cells[q] == stone:
                    seen.add(q)
                    todo.append(q)
        return len(ends) == 2


def replay(actions, board_size: int) -> tuple[np.ndarray, int]:
    """Check a move list against the rules: ``(board int8 [n*n], winner or -1)``.

    ValueError naming the move (numbered from 1) that is off the board, on an occupied cell,
    a misplaced swap, or played after the game was won.
    """
    game = _Game(board_size)
    for i, a in enumerate(actions):
        try:
            game.play(int(a))
        except ValueError as err:
            raise ValueError(f"move {i + 1}: {err}") from None
    return game.board.copy(), game.winner


def to_sgf(actions, board_size: int, properties: dict | None = None) -> str:
    """The HexGui SGF of a game given as actions (checked with :func:`replay`)."""
    n = board_size
    _, won = replay(actions, n)
    root = {"FF": "4", "GM": "11", "SZ": str(n), "AP": "jaxgames"}
    if won >= 0:
        root["RE"] = "B+" if won == 0 else "W+"
    root.update(properties or {})
    head = "".join(f"{k}[{_escape(str(v))}]" for k, v in root.items())
    moves = "".join(
        f";{'BW'[i % 2]}[{SWAP_NAME if int(a) == n * n else cell_name(a, n)}]" for i, a in enumerate(actions))
    return f"(;{head}{moves})"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _tokens(text: str):
    """(offset, kind, name, values) for each token; ValueError at the first garbage."""
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            return
        m = _TOKEN.match(text, pos)
        if not m:
            start = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise ValueError(f"bad SGF at character {start}: {text[start:start + 20]!r} is not an SGF token")
        if m.group(1) or m.group(2) or m.group(3):
            yield pos, m.group(1) or m.group(2) or m.group(3), None, None
        else:
            values = [v.replace("\\]", "]").replace("\\\\", "\\") for v in _VALUE.findall(m.group(5))]
            yield pos, "prop", m.group(4), values
        pos = m.end()


def from_sgf(text: str, board_size: int | None = None) -> GameRecord:
    """Parse a HexGui SGF; ``board_size``, when given, must match the record's SZ."""
    if not isinstance(text, str):
        raise ValueError(f"an SGF record is text, got {type(text).__name__}")
    nodes: list[list[tuple[int, str, list]]] = []
    depth = 0
    closed = False
    for pos, kind, name, values in _tokens(text):
        if closed:
            raise ValueError(f"bad SGF at character {pos}: text after the end of the game tree")
        if kind == "(":
            if depth or nodes:
                raise ValueError(f"bad SGF at character {pos}: variations are not supported")
            depth = 1
        elif kind == ")":
            if not depth:
                raise ValueError(f"bad SGF at character {pos}: ')' without '('")
            depth, closed = 0, True
        elif kind == ";":
            if not depth:
                raise ValueError(f"bad SGF at character {pos}: a node outside '(' ... ')'")
            nodes.append([])
        else:
            if not nodes:
                raise ValueError(f"bad SGF at character {pos}: property {name} before the first ';'")
            nodes[-1].append((pos, name, values))
    if not closed:
        raise ValueError("bad SGF: no complete game tree '(;...)'" if not nodes else "bad SGF: missing ')'")

    root = {name.upper(): (pos, values) for pos, name, values in nodes[0]}
    gm = root.get("GM", (0, ["11"]))[1][0].strip()
    if gm != "11":
        raise ValueError(f"bad SGF root: GM[{gm}] is not Hex (GM[11])")
    size_text = root.get("SZ", (0, ["11"]))[1][0].strip()
    parts = size_text.split(":")
    if not all(p.isdigit() for p in parts) or len(parts) > 2 or len(set(parts)) != 1:
        raise ValueError(f"bad SGF root: SZ[{size_text}] is not one board size (rhombic n x n boards only)")
    n = int(parts[0])
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise ValueError(f"bad SGF root: SZ[{n}] is outside the supported sizes {MIN_SIZE}..{MAX_SIZE}")
    if board_size is not None and n != board_size:
        raise ValueError(f"bad SGF root: SZ[{n}] but a {board_size}x{board_size} game was expected")
    properties = {k: v[1][0] for k, v in root.items() if k not in ("FF", "GM", "SZ", "B", "W")}

    actions: list[int] = []
    game = _Game(n)
    for node in nodes:
        moves = [(pos, name.upper(), values) for pos, name, values in node if name.upper() in ("B", "W")]
        for pos, name, _ in node:
            if name.upper() in _UNSUPPORTED:
                raise ValueError(f"bad SGF at character {pos}: {name}[...] ({_UNSUPPORTED[name.upper()]}) "
                                 f"is not supported")
        if not moves:
            if node is not nodes[0]:
                raise ValueError(f"bad SGF: node {nodes.index(node) + 1} holds no move")
            continue
        number = len(actions) + 1
        if len(moves) > 1:
            raise ValueError(f"bad SGF move {number} at character {moves[1][0]}: two moves in one node")
        pos, colour, values = moves[0]
        token = f"{colour}[{values[0] if values else ''}]"
        where = f"bad SGF move {number} ({token}, character {pos})"
        if len(values) != 1:
            raise ValueError(f"{where}: a move has exactly one value")
        expected = "BW"[(number - 1) % 2]
        if colour != expected:
            raise ValueError(f"{where}: it is {'Black' if expected == 'B' else 'White'}'s turn")
        value = values[0].strip().lower()
        if value == SWAP_NAME:
            action = n * n
        elif value in ("swap-sides", "resign", "pass", "forfeit", ""):
            raise ValueError(f"{where}: {value or 'an empty move'!r} is not a move of this game")
        else:
            try:
                action = parse_cell(value, n)
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
        try:
            game.play(action)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        actions.append(action)
    return GameRecord(board_size=n, actions=tuple(actions), properties=properties)
