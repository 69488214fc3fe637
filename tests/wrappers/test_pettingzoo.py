"""The PettingZoo AEC wrapper: PettingZoo's own API and seed tests for Hex, hold'em and Hearts;
observations against the game's own ``observe`` on hand-made positions; the illegal-action
answer (a ValueError, nothing changed); rewards on a hand-made winning move; bad input."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import pathlib

import jax
import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test, seed_test  # noqa: E402

import jaxgames  # noqa: E402
from jaxgames.hearts.cards import NUM_CARDS  # noqa: E402
from jaxgames.hex.render import render_text as hex_text  # noqa: E402
from jaxgames.holdem import betting  # noqa: E402
from jaxgames.wrappers import pettingzoo as pz  # noqa: E402

# a small Hex board keeps its compiles and games short; ten-and-a-half: a one-seat game fits too
GAMES = {"hex": {"board_size": 4}, "holdem": {}, "hearts": {}, "ten_half": {}}
WRAPPERS = pathlib.Path(pz.__file__).parent


@functools.lru_cache(maxsize=None)
def _game(name: str):
    """``(env, step, observe)``: the game and its own step and observe, jitted once per
    module (eagerly, each first call compiles every operation apart: 13 s for one Hearts step)."""
    game = jaxgames.make(name, **GAMES[name])
    return game, jax.jit(game.step), jax.jit(game.observe)


def _observed(obs) -> dict:
    """A game's observation (array or dataclass) as the wrapper lays it out, for comparison."""
    if dataclasses.is_dataclass(obs):
        return {f.name: np.asarray(getattr(obs, f.name)) for f in dataclasses.fields(obs)}
    return np.asarray(obs)


def _assert_same(ours, theirs) -> None:
    if isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for k in theirs:
            assert ours[k].dtype == theirs[k].dtype, k
            np.testing.assert_array_equal(ours[k], theirs[k], err_msg=k)
    else:
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def _check_every_seat(aec, state) -> None:
    """Every agent's observation is the game's observe of ``state`` for its seat; only the
    agent to move has a mask, and it is the game's legal mask."""
    game, _, observe = _game(aec.game.id)
    mover = int(state.current_player)
    over = bool(state.terminated | state.truncated)
    for seat, agent in enumerate(aec.possible_agents):
        obs = aec.observe(agent)
        _assert_same(obs["observation"], _observed(observe(state, seat)))
        assert aec.observation_space(agent).contains(obs)
        expected = np.asarray(state.legal_action_mask) if seat == mover and not over else np.zeros(game.num_actions)
        assert obs["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(obs["action_mask"], expected.astype(np.int8))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_pettingzoo_api_and_seed_tests(game):
    api_test(pz.env(game, render_mode="ansi", **GAMES[game]), num_cycles=100)
    seed_test(lambda: pz.env(game, **GAMES[game]), num_cycles=30)


def test_hex_hand_made_position_observations_and_rewards():
    aec = pz.env("hex", render_mode="ansi", board_size=4)
    game, step, _ = _game("hex")
    # Black (X) holds column a rows 1-3, White three stones: Black to move, a4 wins for Black.
    board = np.zeros((4, 4), np.int8)
    board[0:3, 0] = 1
    board[0, 2] = board[1, 2] = board[2, 3] = -1
    state = game.from_board(board)
    aec.reset(options={"state": state})
    assert aec.agent_selection == "player_0"
    _check_every_seat(aec, state)
    # the mover's first plane is its own stones: the hand-made board, read independently
    np.testing.assert_array_equal(aec.observe("player_0")["observation"][..., 0], board == 1)
    np.testing.assert_array_equal(aec.observe("player_1")["observation"][..., 0], board == -1)
    assert aec.render() == hex_text(state)

    aec.step(np.int64(3 * 4 + 0))   # a4: Black connects top and bottom
    after = step(state, 12)
    _check_every_seat(aec, after)
    assert all(aec.terminations.values())
    # the loser is selected first; each agent's last() carries its own reward
    assert aec.agent_selection == "player_1"
    assert aec.last()[1] == -1.0
    aec.step(None)
    assert aec.agent_selection == "player_0" and aec.last()[1] == 1.0
    aec.step(None)
    assert aec.agents == []


def test_holdem_hand_made_deal_observations():
    aec = pz.env("holdem")
    game, step, _ = _game("holdem")
    deck = np.arange(51, -1, -1, dtype=np.int8)  # a known deck: seat 0 holds 51 50, seat 1 49 48
    state = jax.jit(game.deal, static_argnums=1)(deck, 1)
    aec.reset(options={"state": state})
    assert aec.agent_selection == "player_1"    # the button acts first preflop
    _check_every_seat(aec, state)
    np.testing.assert_array_equal(aec.observe("player_0")["observation"]["hole"], [51, 50])
    np.testing.assert_array_equal(aec.observe("player_1")["observation"]["hole"], [49, 48])
    for action in (betting.CALL, betting.CHECK):  # limp, check: the flop comes, seat 0 to act
        aec.step(action)
        state = step(state, action)
        _check_every_seat(aec, state)
    assert aec.agent_selection == "player_0"
    np.testing.assert_array_equal(aec.observe("player_1")["observation"]["board"][:3], [47, 46, 45])


def test_hearts_hand_made_deal_observations_and_illegal_action():
    aec = pz.env("hearts")
    game, step, _ = _game("hearts")
    owner = np.arange(NUM_CARDS) % 4   # seat s holds the cards 4k + s: every card of suit s
    state = jax.jit(game.from_deal)(owner)
    aec.reset(options={"state": state})
    _check_every_seat(aec, state)
    for seat in range(4):
        np.testing.assert_array_equal(aec.observe(f"player_{seat}")["observation"]["hand"], owner == seat)
    # seat 0 passes three of its cards, one a step
    for card in (0, 4, 8):
        aec.step(card)
        state = step(state, card)
    _check_every_seat(aec, state)

    # an illegal card (seat 2's, seat 1 to pass) is refused, naming the legal ones, and changes nothing
    agent = aec.agent_selection
    assert agent == "player_1"
    before = aec.observe(agent)
    with pytest.raises(ValueError, match=r"action 2 is illegal for player_1; its legal actions are \[1, 5, 9,"):
        aec.step(2)
    assert aec.agent_selection == agent
    _assert_same(aec.observe(agent)["observation"], before["observation"])
    with pytest.raises(ValueError, match="illegal"):
        aec.step(NUM_CARDS)   # out of range
    with pytest.raises(TypeError, match="integers"):
        aec.step(12.0)
    with pytest.raises(TypeError, match="integers"):
        aec.step(True)


def test_stepping_chosen_actions_from_a_seeded_reset_matches_the_game():
    aec = pz.env("hex", board_size=4)
    _, step, _ = _game("hex")
    aec.reset(seed=3)
    state = aec.state_of_game
    np.testing.assert_array_equal(np.asarray(state.board), np.zeros(16))   # Hex's init: no chance
    for action in (5, 6, 9, 0):
        aec.step(action)
        state = step(state, action)
        _check_every_seat(aec, state)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="render_mode"):
        pz.env("hex", render_mode="human", board_size=4)
    with pytest.raises(ValueError, match="unknown option"):
        pz.env("hex", size=4)
    aec = pz.env("hex", board_size=4)
    with pytest.raises(ValueError, match="shapes"):
        aec.reset(options={"state": _zeros_state("hex", board_size=5)})
    with pytest.raises(ValueError, match="one state of hex"):
        aec.reset(options={"state": _zeros_state("hearts")})
    with pytest.raises(ValueError, match="out of range"):
        aec.reset(seed=-1)


def _zeros_state(name: str, **options):
    """A state of ``name`` in structure and shapes only (zeros: nothing is compiled)."""
    shapes = jax.eval_shape(jaxgames.make(name, **options).init, jax.random.key(0))
    return jax.tree_util.tree_map(lambda s: np.zeros(s.shape, s.dtype), shapes)


def _load_fresh(name: str, filename: str):
    spec = importlib.util.spec_from_file_location(f"_probe_{name}", WRAPPERS / filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_missing_library_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pettingzoo", None)
    monkeypatch.setitem(__import__("sys").modules, "gymnasium", None)
    _load_fresh("init", "__init__.py")   # the package itself imports neither library
    with pytest.raises(ImportError, match=r"pip install 'pettingzoo>=1.24'"):
        _load_fresh("pz", "pettingzoo.py")
