"""The C++ peer of the 2048 n-tuple TD benchmark (bench/ntuple_cpp/td2048.cpp) builds, plays
and learns: a 2-second run finishes games averaging well above random play (~1100)."""

from __future__ import annotations

import shutil

import pytest

from bench import game2048_train


def test_cpp_peer_learns(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ not found on PATH: cannot compile bench/ntuple_cpp/td2048.cpp")
    exe = game2048_train.build_peer(tmp_path)
    out = game2048_train.run_peer(exe, seconds=2, seed=1)
    assert out["moves"] > 0
    assert out["games"] > 0
    assert out["avg_score_last_1000"] > 500, out
