"""Terminal play against the computer (jaxgames.hex.play), driven by typed lines.

Tiny boards and few simulations; one compiled opponent per (size, swap) for the module (the
opponent and the step are cached by jaxgames.hex.play). Nothing here depends on which cell the
computer picks: the person's moves are chosen from the board as it stands.
"""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.hex import from_sgf, replay, to_cell_name, winner
from jaxgames.hex import play as hp

N = 4
SIMS = 20
BOARD_LEGEND = "X = Black (top-bottom)"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def session(tmp_path, *, clock=None, **settings):
    settings = {"board_size": N, "opponent": "uct", "simulations": SIMS, "seed": 0,
                "sgf": str(tmp_path / "game.sgf"), **settings}
    out = io.StringIO()
    kwargs = {"clock": clock} if clock else {}
    return hp.Session(hp.Settings(**settings), out, echo=True, **kwargs), out


def first_legal(s: hp.Session):
    """Endless input: whatever empty cell comes first on the current board."""
    while True:
        yield s.legal_cells()[0]


def saved_actions(path) -> tuple:
    with open(path, encoding="utf-8") as f:
        return from_sgf(f.read(), N).actions


def announced_winner(text: str) -> int:
    found = re.findall(r"Game over: (Black|White) wins", text)
    assert len(found) == 1, text
    return {"Black": 0, "White": 1}[found[0]]


def test_full_game_to_the_end(tmp_path):
    s, out = session(tmp_path)
    result = s.run(first_legal(s))
    text = out.getvalue()
    assert result.ended_by == "win" and result.exit_code == 0
    # the winner announced is the rules' winner of the final board, and the record's
    final = np.asarray(s.state.board)
    assert announced_winner(text) == result.winner == int(winner(jnp.asarray(final), N))
    board, won = replay(result.actions, N)
    assert won == result.winner and (board == final).all()
    # the record round-trips: same moves, RE written
    assert saved_actions(result.sgf_path) == result.actions == tuple(s.actions)
    assert f"RE[{'BW'[result.winner]}+]" in open(result.sgf_path).read()
    assert f"Game saved to {os.path.abspath(result.sgf_path)}" in text
    # a board after every move (and one at the start), a time line per move
    assert text.count(BOARD_LEGEND) == len(result.actions) + 1
    assert len(re.findall(r"\[\d+\.\d+ s; (you|computer) \d+\.\d+ s in total\]", text)) == len(result.actions)
    assert "Time, you (Black):" in text and "Time, computer (White):" in text


def test_timer_per_move_and_totals(tmp_path):
    now = [0.0]
    s, out = session(tmp_path, clock=lambda: now[0])

    def typed():
        for _ in range(2):
            now[0] += 7.0       # the person thinks for 7 s before each move
            yield s.legal_cells()[0]
        yield "quit"

    result = s.run(typed())
    text = out.getvalue()
    assert result.times[0::2] == (7.0, 7.0) and result.times[1::2] == (0.0, 0.0)
    assert "[7.0 s; you 7.0 s in total]" in text
    assert "[7.0 s; you 14.0 s in total]" in text
    assert "Time, you (Black): 14.0 s over 2 moves, 7.0 s a move" in text


def test_undo_restores_the_position(tmp_path):
    s, out = session(tmp_path)
    seen = {}

    def typed():
        yield "undo"                          # nothing to take back yet
        seen["before"] = s.board_text()
        yield s.legal_cells()[0]
        seen["moves"] = len(s.actions)        # my move and the reply
        yield "undo"
        seen["after"] = s.board_text()
        seen["after_moves"] = len(s.actions)
        yield "quit"

    result = s.run(typed())
    text = out.getvalue()
    assert "Nothing to undo" in text
    assert seen["moves"] == 2 and seen["after_moves"] == 0
    assert seen["after"] == seen["before"]
    assert "Took back" in text and "Your move again." in text
    # no move left on the board: no empty record
    assert result.actions == () and result.sgf_path is None and result.exit_code == 0
    assert "No move on the board: no record saved." in text and not (tmp_path / "game.sgf").exists()


def test_undo_as_white_keeps_the_computers_first_move(tmp_path):
    s, out = session(tmp_path, human_colour="white")
    seen = {}

    def typed():
        yield "undo"                          # only the computer has moved
        seen["before"] = s.board_text()
        yield s.legal_cells()[0]
        yield "undo"
        seen["after"] = s.board_text()
        yield "quit"

    result = s.run(typed())
    assert "Nothing to undo" in out.getvalue()
    assert seen["after"] == seen["before"]
    assert len(result.actions) == 1 and saved_actions(result.sgf_path) == result.actions


def test_bad_moves_get_a_message_and_the_game_goes_on(tmp_path):
    s, out = session(tmp_path)
    mine = {}

    def typed():
        yield "hello"
        yield "e1"        # column past the board
        yield "a5"        # row past the board
        yield "a0"
        yield "z9"
        yield "   "        # an empty line: just the prompt again
        mine["cell"] = s.legal_cells()[0]
        yield mine["cell"]
        yield mine["cell"]  # now occupied (by me, or by White after a swap: still taken)
        mine["second"] = s.legal_cells()[0]
        yield mine["second"]
        yield "quit"

    result = s.run(typed())
    text = out.getvalue()
    assert "'hello' is not a move" in text
    for cell in ("e1", "a5", "a0", "z9"):
        assert f"{cell} is off the {N}x{N} board" in text
    assert f"{mine['cell']} is already taken (your X)" in text
    assert result.ended_by == "quit" and len(result.actions) == 4
    assert [to_cell_name(a, N) for a in result.actions[0::2]] == [mine["cell"], mine["second"]]
    assert saved_actions(result.sgf_path) == result.actions


def test_swap_when_allowed(tmp_path):
    s, out = session(tmp_path, swap=True, human_colour="white")
    seen = {}

    def typed():
        yield "swap"
        seen["board"] = np.asarray(s.states[2].board)   # right after the swap
        yield "quit"

    result = s.run(typed())
    first = result.actions[0]
    r, c = divmod(first, N)
    assert result.actions[:2] == (first, N * N)
    assert f"You (White) swap: Black's stone on {to_cell_name(first, N)} becomes White's on " \
           f"{to_cell_name(c * N + r, N)}" in out.getvalue()
    board = seen["board"]
    assert board[c * N + r] == -1 and (board != 0).sum() == 1
    text = open(result.sgf_path).read()
    assert "W[swap-pieces]" in text and from_sgf(text).actions == result.actions


def test_swap_refused_when_not_allowed(tmp_path):
    # the rule is off
    s, out = session(tmp_path, human_colour="white")
    result = s.run(iter(["swap", "quit"]))
    assert "The swap rule is off" in out.getvalue() and len(result.actions) == 1
    # the rule is on, but Black cannot swap, and White only on its first move
    s, out = session(tmp_path, swap=True)

    def typed():
        yield "swap"
        yield s.legal_cells()[0]
        yield "swap"
        yield "quit"

    result = s.run(typed())
    assert out.getvalue().count("No swap now") == 2
    assert N * N not in result.actions[0::2]


def test_quit_and_eof_save_the_game(tmp_path, monkeypatch):
    s, out = session(tmp_path)
    result = s.run(iter(["b2", "quit"]))
    assert result.ended_by == "quit" and result.winner is None and len(result.actions) == 2
    assert saved_actions(result.sgf_path) == result.actions
    assert "Game not finished" in out.getvalue()
    assert f"Game saved to {tmp_path / 'game.sgf'}" in out.getvalue()
    # end of input (Ctrl-D), saved under the default timestamped name in the current folder
    monkeypatch.chdir(tmp_path)
    s, out = session(tmp_path, sgf=None)
    result = s.run(iter(["b2"]))
    assert result.ended_by == "eof" and result.exit_code == 0 and len(result.actions) == 2
    assert re.fullmatch(r"hex-\d{8}-\d{6}\.sgf", os.path.basename(result.sgf_path))
    assert os.path.dirname(os.path.abspath(result.sgf_path)) == str(tmp_path)
    assert saved_actions(result.sgf_path) == result.actions
    assert "End of input" in out.getvalue()


def test_cli_full_game_typed_on_stdin(tmp_path, monkeypatch, capsys):
    """The command line as a person would use it: every cell typed in order (occupied ones are
    refused and the next line is read) until someone connects."""
    cells = [to_cell_name(a, N) for a in range(N * N)]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(c + "\n" for c in cells)))
    path = tmp_path / "cli.sgf"
    code = hp.main(["--opponent", "uct", "--board-size", str(N), "--simulations", str(SIMS), "--seed", "3",
                    "--human-colour", "white", "--sgf", str(path)])
    text = capsys.readouterr().out
    assert code == 0
    actions = saved_actions(path)
    env = jaxgames.make("hex", board_size=N)
    state = env.init(jax.random.key(0))
    for a in actions:
        state = env.step(state, jnp.int32(a))
    assert bool(state.terminated)
    assert announced_winner(text) == int(winner(state.board, N))
    assert "you are White" in text and "seed 3" in text


def test_cli_agent_needs_a_run(capsys):
    with pytest.raises(SystemExit) as exc:
        hp.main(["--opponent", "agent", "--board-size", str(N)])
    assert exc.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1 and "--opponent agent needs the run folder" in err[0]


def test_cli_agent_missing_run_from_a_shell(tmp_path):
    """(The agent itself is played in tests/hex/test_agent.py, against a real tiny run.)"""
    done = subprocess.run([sys.executable, "-m", "jaxgames.hex.play", "--opponent", "agent",
                           "--checkpoint", "runs/hex/nothing"],
                          capture_output=True, text=True, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": REPO + os.pathsep
                               + os.environ.get("PYTHONPATH", "")}, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "python -m jaxgames.hex.play: error: runs/hex/nothing: no such run folder (give the folder "
        "of a python -m train.hex run, e.g. runs/hex/quick-seed0)"]
    assert not list(tmp_path.iterdir())  # no game, no record


PREPARING = "Preparing the computer (compiling its move once) ... "
INTERRUPTED = "Interrupted before the game began: nothing was played."


# ``python -m jaxgames.hex.play`` with Ctrl-C raising KeyboardInterrupt, as in a terminal: Python
# keeps SIGINT ignored in a child whose parent ignores it (a job started in the background of
# a script is)
_AS_A_SHELL = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "runpy.run_module('jaxgames.hex.play', run_name='__main__', alter_sys=True)")
# what XLA says on stderr when it loads a program from the tests' compilation cache (conftest)
_CACHE_NOTE = re.compile(r"^[EWI]\d{4} [\d:.]+ +\d+ cpu_aot_loader\.cc:\d+\] Loading XLA:CPU AOT result")


def _cold_env() -> dict:
    """The child's environment without the suite's compilation cache: with the cache warm the
    compile could end before the Ctrl-C arrives, and the game would run on."""
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    return {**env, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _ctrl_c_once_preparing(game_dir, err_path, delay: float = 0.0) -> tuple[int, str, list[str]]:
    """Start a game, send Ctrl-C as soon as it says it is preparing: the exit status, stderr
    and the lines written after "Preparing ..."."""
    # stderr to a file, not a pipe: a child that loads many programs from the suite's
    # compilation cache writes a few KB of XLA notes each, enough to fill a pipe nobody reads
    # and stop the child before it prints anything
    with open(err_path, "wb") as err_file:
        child = subprocess.Popen([sys.executable, "-c", _AS_A_SHELL, "--opponent", "uct", "--board-size", "11",
                                  "--simulations", "1000", "--seed", "0", "--sgf", str(game_dir / "g.sgf")],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file,
                                 cwd=game_dir, env=_cold_env())
        try:
            seen, deadline = b"", time.monotonic() + 300   # a loaded machine imports slowly
            while PREPARING.encode() not in seen:     # written (and flushed) just before the compile
                assert time.monotonic() < deadline and child.poll() is None, seen
                if select.select([child.stdout], [], [], 0.5)[0]:
                    seen += os.read(child.stdout.fileno(), 65536)
            time.sleep(delay)
            child.send_signal(signal.SIGINT)
            out, _ = child.communicate(timeout=120)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    return child.returncode, err_path.read_text(), (seen + out).decode().split(PREPARING)[1].strip().splitlines()


def test_ctrl_c_while_compiling_from_a_shell(tmp_path):
    """Ctrl-C while the computer is compiled (the first seconds of every game): one line, exit
    status 130, no traceback and no record of a game never played."""
    # the compile takes about a second: on a loaded machine the Ctrl-C can arrive after it
    # ("ready (...)" is said first, a game that began ends as quitting does). That race is
    # run again, at most three times; a Ctrl-C Python dropped during the compile is raised
    # before "ready" (PlaySession.prepare), so it never reads as a lost race
    for attempt in range(3):
        game_dir, err_path = tmp_path / f"game{attempt}", tmp_path / f"stderr{attempt}.txt"
        game_dir.mkdir()
        status, err, lines = _ctrl_c_once_preparing(game_dir, err_path)
        assert status == 130, err[-2000:]
        assert [line for line in err.splitlines() if line and not _CACHE_NOTE.match(line)] == []
        if not lines[0].startswith("ready ("):
            break
    assert lines == [INTERRUPTED]
    assert not list(game_dir.iterdir())   # no record


@pytest.mark.slow
def test_twenty_ctrl_c_in_a_row_while_compiling(tmp_path):
    """Twenty Ctrl-Cs, 0 to 4.75 s into the compile (Python's shutdown under XLA's running
    threads crashed 3 s in, exit 139, 3 times in 4 before ``terminal.exit_process``): each ends
    with status 130, nothing on stderr but the cache's notes, one line or a game's end."""
    for attempt in range(20):
        game_dir, err_path = tmp_path / f"game{attempt}", tmp_path / f"stderr{attempt}.txt"
        game_dir.mkdir()
        status, err, lines = _ctrl_c_once_preparing(game_dir, err_path, delay=0.25 * attempt)
        assert status == 130, (attempt, err[-2000:])
        assert [line for line in err.splitlines() if line and not _CACHE_NOTE.match(line)] == [], attempt
        assert lines == [INTERRUPTED] or lines[0].startswith("ready ("), (attempt, lines)


def test_ctrl_c_while_the_computer_is_built_or_compiled(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("b2\n"))
    def building(settings):
        raise KeyboardInterrupt

    monkeypatch.setitem(hp.OPPONENTS, "uct", building)
    assert hp.main(["--opponent", "uct", "--board-size", str(N), "--sgf", str(tmp_path / "g.sgf")]) == 130
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [INTERRUPTED] and captured.err == ""
    monkeypatch.undo()
    s, out = session(tmp_path)

    def compiling(step, key):
        s.out.write(PREPARING)
        raise KeyboardInterrupt

    monkeypatch.setattr(s, "prepare", compiling)
    result = s.run(iter(["b2"]))
    assert result.exit_code == 130 and result.ended_by == "interrupt" and result.sgf_path is None
    assert out.getvalue().split(PREPARING)[1].splitlines() == ["", INTERRUPTED]
    assert not list(tmp_path.iterdir())


def test_uct_defaults_without_board_size_and_simulations():
    env, opponent = hp.uct_opponent(hp.Settings())
    assert env.board_size == hp.DEFAULT_SIZE == 11
    assert opponent.name == f"UCT ({hp.DEFAULT_UCT_SIMULATIONS} simulations)"
    settings = hp.parse_args(["--seed", "1"])
    assert settings.board_size is None and settings.simulations is None
    assert settings.exploration == hp.DEFAULT_EXPLORATION


@pytest.mark.parametrize("argv, message", [
    (["--seed", "4294967296"], "--seed: must be in 0..4294967295"),
    (["--seed", "-1"], "--seed: must be in 0..4294967295"),
    (["--board-size", "2"], "--board-size: must be from 3 to 19"),
    (["--board-size", "20"], "--board-size: must be from 3 to 19"),
    (["--board-size", "x"], "--board-size: invalid int value"),
    (["--human-colour", "red"], "invalid choice: 'red'"),
    (["--opponent", "gnugo"], "--opponent: invalid choice"),
    (["--simulations", "0"], "--simulations: must be at least 1"),
    (["--checkpoint", "runs/hex/x"], "--run: only with --opponent agent"),
    (["--opponent", "uct", "--run", "runs/hex/x"], "--run: only with --opponent agent"),
    (["--opponent", "agent", "--checkpoint", "r", "--exploration", "2"],
     "--exploration: only with --opponent uct"),
    (["--opponent", "agent", "--run", "r", "--swap"], "--swap: the trained agent plays without"),
    (["--swap"], "--swap: the trained agent plays without"),
    (["--exploration", "2"], "--exploration: only with --opponent uct"),
    (["--opponent", "uct", "--pretrained", "az-7x7"], "--pretrained: only with --opponent pretrained"),
    (["--sgf", "/no/such/folder/g.sgf"], "does not exist"),
])
def test_cli_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(hp.main, argv, message)


# -- the shipped agents, the default opponent (their play: tests/pretrained/test_hex.py) ---------


def test_the_default_opponent_is_the_shipped_agent_of_the_board():
    assert hp.parse_args(["--seed", "1"]).opponent == hp.PRETRAINED == hp.Settings().opponent
    env, agent = hp.pretrained_opponent(hp.Settings())
    assert env.board_size == agent.board_size == hp.DEFAULT_SIZE
    assert agent.name.startswith(hp.shipped_agent_name(hp.DEFAULT_SIZE)) and "shipped hex agent" in agent.name
    for n in (7, 9):
        env, agent = hp.pretrained_opponent(hp.Settings(board_size=n))
        assert env.board_size == n and agent.run_dir is None and not env.swap
    # a name plays its own board; --simulations is the search's, not the card's
    env, agent = hp.pretrained_opponent(hp.Settings(pretrained=hp.shipped_agent_name(7), simulations=12))
    assert env.board_size == 7 and agent.simulations == 12 and "12 gumbel simulations" in agent.name


def _refused(settings: hp.Settings) -> str:
    with pytest.raises(hp.OpponentUnavailable) as e:
        hp.pretrained_opponent(settings)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_a_board_or_name_no_shipped_agent_plays_is_refused_in_one_line():
    assert "no shipped Hex agent plays 5x5 (the shipped ones play 7x7" in _refused(hp.Settings(board_size=5))
    assert "plays 7x7 (the board it was trained on)" in _refused(
        hp.Settings(pretrained=hp.shipped_agent_name(7), board_size=9))
    assert "no shipped hex agent named 'nobody'" in _refused(hp.Settings(pretrained="nobody"))
    assert "trained without the swap rule" in _refused(hp.Settings(board_size=7, swap=True))


def test_cli_board_without_a_shipped_agent_exits_2(capsys):
    assert hp.main(["--board-size", "5", "--seed", "0"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "no shipped Hex agent plays 5x5" in err[0] and captured.out == ""
