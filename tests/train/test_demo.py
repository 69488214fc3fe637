"""`make demo` end to end with its quick presets (ten-and-a-half, 2048) shrunk to seconds."""

import dataclasses

from train import demo, game2048, ten_half


def test_demo_prints_one_row_per_method(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(ten_half.PRESETS, "quick", dataclasses.replace(
        ten_half.PRESETS["quick"], episodes=20_000, episodes_per_update=2_000, progress=False))
    monkeypatch.setitem(game2048.PRESETS, "quick", dataclasses.replace(
        game2048.PRESETS["quick"], patterns="0,1,2,3", num_games=16, train_moves=16_000,
        updates_per_chunk=500, eval_games=4, final_games=8, final_games_deep=2, progress=False))
    demo.main([])
    out = capsys.readouterr().out
    table = out[out.index("game "):]
    games = [line.split("|")[0].strip() for line in table.splitlines() if "|" in line]
    assert games.count("ten-and-a-half") == 2 and games.count("2048") == 3
    assert "optimum -0.1402" in table and "2-ply expectimax" in table
    assert len(list(tmp_path.glob("runs/*/demo-*/summary.json"))) == 2
