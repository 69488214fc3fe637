"""Every shipped agent (jaxgames.pretrained): it loads, its card is complete and its hash is
its file's; a damaged file, a missing card or parameter file, a card of another agent, an
unknown game or name are each refused with one line naming the file; the command line lists
the agents and refuses bad flags with exit status 2.

Damage is done to a copy of the agents' folder (``root=``), never to the package's files.
"""

from __future__ import annotations

import json
import numbers
import pathlib
import shutil

import jax
import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.player import Player
from jaxgames.pretrained import __main__ as cli
from jaxgames.pretrained.card import sha256

AGENTS = [(c["game"], c["name"]) for c in pretrained.available()]
MB = 1 << 20


def test_agents_ship():
    assert ("holdem", "alphaholdem-small") in AGENTS
    assert pretrained.games() == sorted({g for g, _ in AGENTS})


@pytest.mark.parametrize("game, name", AGENTS)
def test_the_card_is_complete_and_the_hash_is_the_files(game, name):
    card = pretrained.card(game, name)
    folder = pretrained.AGENTS / game / name
    assert card["game"] == game == folder.parent.name and card["name"] == name == folder.name
    for field in ("description", "command", "commit", "cpu", "params_sha256"):
        assert isinstance(card[field], str) and card[field] and "\n" not in card[field]
    assert card["command"].startswith("python -m train.")
    assert isinstance(card["config"], dict) and card["config"].get("game", game) == game
    assert isinstance(card["training_seconds"], numbers.Real) and card["training_seconds"] > 0
    params_file = folder / "params.npz"
    assert card["params_sha256"] == sha256(params_file) and card["bytes"] == params_file.stat().st_size
    assert card["bytes"] < 5 * MB, "a shipped agent stays under a few megabytes"
    ev = card["evaluation"]
    assert ev["deals"] > 0 and ev["unit"] and ev["baselines"]
    for result in ev["baselines"].values():
        assert set(result) >= {"mean", "ci95"} and result["ci95"] >= 0
    with np.load(params_file, allow_pickle=False) as f:   # plain arrays: no pickle needed
        assert f.files


@pytest.mark.parametrize("game, name", AGENTS)
def test_it_loads_as_a_player_and_twice_the_same(game, name):
    a, b = pretrained.load(game, name), pretrained.load(game, name)
    assert isinstance(a, Player) and name in a.name
    leaves_a, leaves_b = jax.tree_util.tree_leaves(a.params), jax.tree_util.tree_leaves(b.params)
    assert len(leaves_a) == len(leaves_b) > 0
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_the_default_is_the_games_first_agent():
    for game in pretrained.games():
        assert pretrained.card(game)["name"] == pretrained.names(game)[0]


@pytest.fixture
def copy(tmp_path) -> pathlib.Path:
    """A copy of the shipped agents' folder, to damage."""
    root = tmp_path / "agents"
    shutil.copytree(pretrained.AGENTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def refused(match: str, fn, *args, **kwargs) -> str:
    with pytest.raises(pretrained.PretrainedError) as e:
        fn(*args, **kwargs)
    text = str(e.value)
    assert "\n" not in text and match in text and isinstance(e.value, ValueError), text
    return text


@pytest.mark.parametrize("game, name", AGENTS)
def test_a_damaged_parameter_file_is_refused(copy, game, name):
    params_file = copy / game / name / "params.npz"
    data = bytearray(params_file.read_bytes())
    data[len(data) // 2] ^= 0x01          # one bit inside the arrays
    params_file.write_bytes(bytes(data))
    text = refused("is damaged: its sha256 is", pretrained.load, game, name, root=copy)
    assert str(params_file) in text
    params_file.unlink()
    assert str(params_file) in refused("is missing", pretrained.load, game, name, root=copy)


@pytest.mark.parametrize("game, name", AGENTS)
def test_a_missing_or_bad_card_is_refused(copy, game, name):
    card_file = copy / game / name / "card.json"
    card = json.loads(card_file.read_text())
    card_file.write_text(json.dumps({**card, "name": "other"}))
    assert str(card_file) in refused("says name 'other'", pretrained.load, game, name, root=copy)
    del card["evaluation"]
    card_file.write_text(json.dumps(card))
    refused("has no 'evaluation'", pretrained.card, game, name, root=copy)
    card_file.write_text("{not json")
    refused("is unreadable", pretrained.available, root=copy)
    card_file.unlink()
    assert str(card_file) in refused("is missing", pretrained.load, game, name, root=copy)


def test_unknown_games_and_names_are_refused_listing_what_ships(copy):
    refused("no shipped agent plays 'chess'", pretrained.load, "chess", root=copy)
    refused("the holdem agents are alphaholdem-small", pretrained.load, "holdem", "nobody", root=copy)


def test_the_list_is_one_line_per_agent(capsys):
    assert cli.main([]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(AGENTS)
    assert lines[[f"{g}/{n}" for g, n in AGENTS].index("holdem/alphaholdem-small")].startswith(
        "holdem/alphaholdem-small: vs random +")


@pytest.mark.parametrize("argv, message", [
    (["--deals", "5"], "--deals/--seed: only with --evaluate GAME NAME"),
    (["--evaluate", "holdem", "alphaholdem-small", "--deals", "1"], "--deals: must be in 2..1,000,000,000"),
    (["--evaluate", "holdem", "alphaholdem-small", "--deals", "1000000000000"], "--deals: must be in 2..1,000,000,000"),
    (["--evaluate", "holdem", "alphaholdem-small", "--seed", "99999999999999999999"], "--seed: must be in 0..4294967295"),
    (["--evaluate", "holdem", "alphaholdem-small", "--seed", "4294967296"], "--seed: must be in 0..4294967295"),
    (["--evaluate", "holdem", "alphaholdem-small", "--seed", "-1"], "--seed: must be in 0..4294967295"),
    (["--evaluate", "holdem"], "--evaluate: expected 2 arguments"),
])
def test_bad_flags_exit_2(argv, message, exits_2_with_one_line):
    exits_2_with_one_line(cli.main, argv, message)


@pytest.mark.parametrize("game, name", [("holdem", "alphaholdem-small"), ("hex", "az-7x7"), ("hearts", "learned-combined"),
                                        ("ten_half", "optimal")])
def test_more_deals_than_a_game_measures_is_one_line_before_loading(game, name, capsys, monkeypatch):
    def never(*args):
        raise AssertionError("the agent was loaded")

    monkeypatch.setattr(cli.store, "load", never)
    most = cli.hooks.hook(game).MAX_DEALS
    assert cli.main(["--evaluate", game, name, "--deals", str(most + 1)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"at most {most:,} in one run" in err[0]


def test_an_unknown_agent_to_evaluate_is_one_line(capsys):
    assert cli.main(["--evaluate", "holdem", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no shipped holdem agent named 'nobody'" in err[0]
