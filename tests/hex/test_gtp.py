"""The Hex GTP engine (jaxgames.hex.gtp) and the referee (jaxgames.hex.gtp_referee).

5x5 plain UCT with few simulations, the same settings everywhere, so the one search program is
compiled once in this process and read back from the suite's persistent compilation cache by
the engine subprocesses; one test plays the shipped 7x7 agent. Nothing depends on which cell a
search picks: checks are of the protocol, the rules and the agreement with OpenSpiel's Hex.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from jaxgames.hex import gtp
from jaxgames.hex.gtp_referee import GtpClient, play_game

N, SIMS = 5, 16
ENGINE = [sys.executable, "-m", "jaxgames.hex.gtp", "--opponent", "uct", "--simulations", str(SIMS),
          "--board-size", str(N)]


@pytest.fixture(scope="module")
def uct_engine():
    return gtp.Engine(gtp.Options(opponent="uct", simulations=SIMS, board_size=N))


@pytest.fixture()
def engine(uct_engine):
    assert uct_engine.handle("clear_board") == "= \n\n"
    return uct_engine


def ok(engine, line: str) -> str:
    reply = engine.handle(line)
    assert reply.startswith("=") and reply.endswith("\n\n"), (line, reply)
    return reply[1:-2].strip()


def refused(engine, line: str) -> str:
    reply = engine.handle(line)
    assert reply.startswith("?") and reply.endswith("\n\n") and "\n" not in reply[:-2], (line, reply)
    return reply[1:-2].strip()


def board_cells(showboard: str) -> dict:
    """``{cell name: "X" | "O"}`` read back from showboard's drawing (rows 1.., columns a..)."""
    stones = {}
    for line in showboard.splitlines():
        words = line.replace("(", " ").replace(")", " ").split()
        if len(words) >= 2 and words[0].isdigit() and words[-1] == words[0]:
            for col, mark in enumerate(words[1:-1]):
                if mark in "XO":
                    stones[f"{'abcdefghijklmnopqrs'[col]}{words[0]}"] = mark
    return stones


# -- in-process: the protocol and its errors --------------------------------------------------


def test_gtp_framing_ids_comments_and_lists(engine):
    assert engine.handle("1 protocol_version") == "=1 2\n\n"
    assert engine.handle("  \t 3 name   # a comment\r\n") == "=3 jaxgames\n\n"
    assert engine.handle("# only a comment") is None and engine.handle("   \n") is None
    assert engine.handle("7 nosuch") == "?7 unknown command: nosuch\n\n"
    listed = ok(engine, "list_commands").split("\n")
    for name in ("protocol_version", "name", "version", "known_command", "list_commands", "boardsize",
                 "clear_board", "play", "genmove", "undo", "showboard", "final_score", "quit"):
        assert name in listed
        assert ok(engine, f"known_command {name}") == "true"
    assert ok(engine, "known_command komi") == "false"
    assert "UCT" in ok(engine, "version")
    assert refused(engine, "play b").startswith("syntax error")
    assert refused(engine, "genmove").startswith("syntax error")


def test_bad_cells_occupied_cells_and_turns(engine):
    ok(engine, "play B c3")                                 # colours and cells in any case
    assert refused(engine, "play w C3") == "illegal move: white c3 (occupied)"
    assert "(it is white's turn)" in refused(engine, "play b a1")
    assert "(it is white's turn)" in refused(engine, "genmove black")
    assert "off the 5x5 board" in refused(engine, "play w f1")
    assert "off the 5x5 board" in refused(engine, "play w a6")
    for bad in ("a0", "1a", "c", "pass"):
        assert "not a cell" in refused(engine, f"play w {bad}"), bad
    assert "invalid color" in refused(engine, "play red a1")
    assert "swap rule is off" in refused(engine, "play w swap-pieces")
    assert board_cells(ok(engine, "showboard")) == {"c3": "X"}   # nothing refused was played
    move = ok(engine, "genmove w")
    assert board_cells(ok(engine, "showboard")) == {"c3": "X", move: "O"}
    ok(engine, "undo")
    ok(engine, "undo")
    assert board_cells(ok(engine, "showboard")) == {}
    assert refused(engine, "undo") == "cannot undo"


def test_the_end_of_the_game_resign_and_undo(engine):
    # Black fills column c from top to bottom; White's stones in column a do not stop it
    for row in range(1, N + 1):
        ok(engine, f"play b c{row}")
        if row < N:
            assert ok(engine, "final_score") == "cannot score"
            ok(engine, f"play w a{row}")
    assert ok(engine, "final_score") == "B+"
    assert "game is over: black won" in refused(engine, "play w b1")
    assert "game is over" in refused(engine, "genmove w")
    assert "game is over" in refused(engine, "play w resign")
    ok(engine, "undo")                                       # the winning move taken back
    assert ok(engine, "final_score") == "cannot score"
    ok(engine, "play b resign")
    assert ok(engine, "final_score") == "W+"
    assert "game is over: white won" in refused(engine, "play w e5")
    ok(engine, "undo")                                       # the resignation taken back
    ok(engine, "play b e5")
    assert ok(engine, "final_score") == "cannot score"


def test_boardsize(engine):
    for bad, why in (("boardsize 5 6", "square boards only"), ("boardsize 2", "from 3 to 19"),
                     ("boardsize 20 20", "from 3 to 19"), ("boardsize x", "syntax error"),
                     ("boardsize", "syntax error"), ("boardsize 5 5 5", "syntax error")):
        assert why in refused(engine, bad), bad
    ok(engine, "play b a1")
    assert ok(engine, "boardsize 5") == "" and board_cells(ok(engine, "showboard")) == {}
    ok(engine, "boardsize 5 5")
    ok(engine, "play b e5")                                  # still 5x5


def test_shipped_7x7_agent_with_the_swap_rule():
    # The shipped agent was trained without the swap: it must never play one, but takes it
    engine = gtp.Engine(gtp.Options(board_size=7, simulations=8, swap=True))
    assert "az-7x7" in ok(engine, "version")
    assert "unacceptable size: 8x8" in refused(engine, "boardsize 8 8")
    assert "unacceptable size: 5x5" in refused(engine, "boardsize 5")
    ok(engine, "play b b3")
    reply = ok(engine, "genmove w")                          # the swap is legal here
    assert reply != "swap-pieces" and reply != "b3"
    ok(engine, "undo")
    ok(engine, "play w swap-pieces")                          # b3 (row 3, column b) -> c2
    assert board_cells(ok(engine, "showboard")) == {"c2": "O"}
    assert refused(engine, "play w a1").endswith("(it is black's turn)")
    assert ok(engine, "genmove b") not in ("c2", "swap-pieces")


def test_bad_flags_end_with_one_line_and_status_2(capsys):
    for argv in (["--board-size", "2"], ["--opponent", "uct", "--run", "runs/hex/x"],
                 ["--exploration", "1.0"], ["--simulations", "0"], ["--opponent", "agent"]):
        with pytest.raises(SystemExit) as stop:
            gtp.main(argv)
        assert stop.value.code == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("python -m jaxgames.hex.gtp: error: "), (argv, err)
    for argv in (["--pretrained", "no-such-agent"], ["--run", "/no/such/run"],
                 ["--pretrained", "az-7x7", "--board-size", "9"]):
        assert gtp.main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("python -m jaxgames.hex.gtp: error: "), (argv, err)


# -- over pipes: two engine processes ---------------------------------------------------------


@pytest.fixture(scope="module")
def processes():
    """Two engine processes (seeds 1 and 2), started together after the in-process tests have
    put the search's compiled program in the cache; quit and closed at the end."""
    engines = [GtpClient(ENGINE + ["--seed", str(seed)], stderr=subprocess.PIPE) for seed in (1, 2)]
    yield engines
    for engine in engines:
        engine.close()


def test_scripted_exchange_over_a_pipe(processes):
    script = textwrap.dedent("""\
        1 protocol_version
        2 name
        3 boardsize 5 5
        4 play black c3
        5 genmove white
        6 showboard
        7 play b c3
        8 undo
        9 undo
        10 final_score
    """)
    process = processes[0].process
    process.stdin.write(script)                              # all at once: answered in order
    process.stdin.flush()
    replies, lines = [], []
    while len(replies) < 10:
        line = process.stdout.readline()
        assert line, "the engine exited"
        if line == "\n":
            replies.append("\n".join(lines))
            lines = []
        else:
            lines.append(line.rstrip("\n"))
    assert replies[:4] == ["=1 2", "=2 jaxgames", "=3 ", "=4 "]
    assert replies[4].startswith("=5 ")
    reply = replies[4][3:]
    assert reply != "c3" and reply in {f"{c}{r}" for c in "abcde" for r in range(1, 6)}
    assert replies[5].startswith("=6 \n")
    assert board_cells(replies[5]) == {"c3": "X", reply: "O"}
    assert replies[6] == "?7 illegal move: black c3 (occupied)"
    assert replies[7:] == ["=8 ", "=9 ", "=10 cannot score"]


# -- a whole game through the referee, checked by OpenSpiel --------------------------------------


def _openspiel_winner(moves, n: int) -> int:
    """Replay GTP move names in OpenSpiel's Hex (its own cell names); its winner, 0 = Black."""
    pyspiel = pytest.importorskip("pyspiel")
    state = pyspiel.load_game("hex", {"board_size": n}).new_initial_state()
    for i, move in enumerate(moves):
        assert not state.is_terminal(), f"move {i + 1} {move}: OpenSpiel's game is already over"
        player = state.current_player()
        assert player == i % 2                               # OpenSpiel's player 0 moves first: Black
        names = {state.action_to_string(player, a): a for a in state.legal_actions()}
        assert move in names, f"move {i + 1} {move} is not legal in OpenSpiel"
        state.apply_action(names[move])
    assert state.is_terminal(), "OpenSpiel's game is not over"
    returns = state.returns()
    assert sorted(returns) == [-1.0, 1.0]
    return 0 if returns[0] > 0 else 1


def test_two_engines_play_a_whole_game_checked_by_openspiel(processes):
    result = play_game(*processes, board_size=N)
    assert result.reason == "connected"
    assert N <= len(result.moves) <= N * N and len(set(result.moves)) == len(result.moves)
    assert len(result.times) == len(result.moves)
    assert _openspiel_winner(result.moves, N) == result.winner
    assert result.scores == (("B+",) * 2 if result.winner == 0 else ("W+",) * 2)


def test_quit_ends_the_process(processes):
    process = processes[1].process
    process.stdin.write("5 quit\nname\n")
    process.stdin.flush()
    assert process.stdout.read() == "=5 \n\n"               # nothing answered after quit
    assert process.wait(timeout=60) == 0
    err = process.stderr.read()
    assert "genmove white: " in err                          # the search's times, on stderr


FAKE = """
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    sys.stdout.write({"genmove": "= A1", "quit": "="}.get(word, "= ") + "\\n\\n")
    sys.stdout.flush()
    if word == "quit":
        break
"""


def test_referee_refuses_an_illegal_move():
    # Two engines that always answer a1: White's a1 is occupied, so White loses
    engines = [GtpClient([sys.executable, "-c", FAKE]) for _ in range(2)]
    try:
        result = play_game(*engines, board_size=N)
    finally:
        for engine in engines:
            engine.close()
    assert result.moves == ("a1", "a1") and result.actions == (0,)
    assert result.winner == 0 and result.reason.startswith("illegal:") and "occupied" in result.reason
