"""Reading TDL2048's output (bench/tdl2048.py) on hand-made samples of its text, stopping it once
its blocks add up to the wanted time (a stand-in script plays TDL2048), and the bench's one-line
refusal of a missing or non-executable ``--tdl2048`` path. TDL2048 itself is not needed."""

from __future__ import annotations

import os
import stat

import pytest

from bench import game2048_train, tdl2048

# what `./2048 -n 4x6patt -a 0.1 -t 1000000 -s 0` prints, cut short inside its fourth block
SAMPLE = """TDL2048+ by Hung Guei
Develop Rev. (GCC 12.2.0 C++202002 @ 2026-11-27 01:54:03)
./2048 -n 4x6patt -a 0.1 -t 1000000 -s 0
time = 2026-11-27 01:54:27.262
seed = 0
alpha = 0.1
lambda = 0, step = 1
stage = {0}, block = 65536
search = 1p, cache = none
thread = 1x

012345[16M] : 012345 37bf26 fedcba c840d9 cdef89 fb73ea 321076 048c15
45689a[16M] : 45689a 26a159 ba9765 d95ea6 89a456 ea6d95 765ba9 15926a

optimize: 1000000

0000001/1000000 250ms 2000000.00ops
local:         avg=7687 max=29480 tile=2048 win=0.40%
total:         avg=7687 max=29480 tile=2048 win=0.40%

0000002/1000000 400ms 1500000.50ops
local:         avg=10756 max=27256 tile=2048 win=1.90%
total:         avg=9222 max=29480 tile=2048 win=1.15%

0000003/1000000 1000ms 2100000.00ops
local:         avg=12079 max=34124 tile=2048 win=3.50%
total:         avg=10174 max=34124 tile=2048 win=1.93%

0000004/1000000 380ms 2124328.95ops
"""


def test_blocks_are_read_and_a_cut_block_is_left_out():
    blocks = tdl2048.parse_blocks(SAMPLE.splitlines())
    assert [(b.index, b.ms, b.ops, b.avg_score) for b in blocks] == [
        (1, 250, 2000000.0, 7687), (2, 400, 1500000.5, 10756), (3, 1000, 2100000.0, 12079)]
    out = tdl2048.summarize(blocks)
    assert out["moves"] == round(500_000 + 600_000.2 + 2_100_000)
    assert out["seconds"] == pytest.approx(1.65)
    assert (out["games"], out["avg_score_last_1000"], out["blocks"]) == (3000, 12079.0, 3)
    with pytest.raises(ValueError, match="no whole statistic block"):
        tdl2048.summarize(tdl2048.parse_blocks(SAMPLE.splitlines()[:17]))   # block 1 without its local line


def _script(path, body: str):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_run_stops_tdl2048_once_its_blocks_reach_the_time(tmp_path):
    # prints the sample's three whole blocks at once, then would run on for a minute
    sample = tmp_path / "sample.txt"
    sample.write_text(SAMPLE.rsplit("0000004", 1)[0])
    exe = _script(tmp_path / "2048", f'printf "%s\\n" "$@" > {tmp_path}/args\ncat {sample}\nexec sleep 60\n')
    out = tdl2048.run(exe, seconds=0.6, seed=3)
    assert out["blocks"] == 2 and out["moves"] == 1_100_000 and out["seconds"] == pytest.approx(0.65)
    assert (tmp_path / "args").read_text().split() == ["-n", "4x6patt", "-a", "0.1", "-t", "1000000", "-s", "3"]
    # it ends before giving enough blocks: one line naming what it last said
    exe = _script(tmp_path / "short", "echo 'unknown option -n'\nexit 1\n")
    with pytest.raises(RuntimeError, match="stopped after 0 blocks: unknown option -n"):
        tdl2048.run(exe, seconds=1)


def test_a_missing_or_unrunnable_path_exits_2_with_one_line(tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.write_text("")
    plain.chmod(0o644)
    for path, why in ((tmp_path / "nope", "no such file"), (tmp_path, "not a file"),
                      (plain, "not executable")):
        with pytest.raises(SystemExit) as e:
            game2048_train.main(["--tdl2048", str(path)])
        err = capsys.readouterr().err
        assert e.value.code == 2 and len(err.splitlines()) == 1, err
        assert err.startswith("python -m bench.game2048_train: error: --tdl2048") and why in err, err
    if os.geteuid() != 0:   # root may run anything: the check above is os.access's
        assert tdl2048.check_executable(plain) is not None
