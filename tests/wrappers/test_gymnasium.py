"""The Gymnasium wrappers: ``check_env`` for 2048 and ten-and-a-half through their registered
ids; observations against the game's own ``observe`` on hand-made states; the illegal-action
answer (the game's: the episode ends with its penalty); the vector env against
``SyncVectorEnv`` of single envs given the same actions, autoreset included; bad input."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import jaxgames  # noqa: E402
from jaxgames.game2048 import board as B2048  # noqa: E402
from jaxgames.game2048.game import observation as board_observation  # noqa: E402
from jaxgames.ten_half.render import render as ten_half_text  # noqa: E402
from jaxgames.wrappers import gymnasium as wg  # noqa: E402

UP, RIGHT, DOWN, LEFT = range(4)


@functools.partial(jax.jit, static_argnums=0)
def _board_state(game, exps):
    """A 2048 state holding the hand-made board ``exps`` (16 tile exponents, row-major);
    jitted: eagerly, every operation's first call compiles apart (seconds in all)."""
    board = jnp.asarray(exps, jnp.int8)
    return game.init(jax.random.key(0)).replace(board=board, legal_action_mask=B2048.legal_moves(board),
                                                observation=board_observation(board))


@pytest.mark.parametrize("env_id", sorted(wg.IDS))
def test_check_env_through_the_registered_id(env_id):
    env = gym.make(env_id, render_mode="ansi")
    check_env(env.unwrapped)
    assert isinstance(env.unwrapped, wg.JaxgamesEnv) and env.unwrapped.game.id == wg.IDS[env_id]


def test_2048_hand_made_board_observation_and_a_move():
    env = wg.JaxgamesEnv("2048")
    game = env.game
    exps = np.zeros(16, np.int8)
    exps[[0, 4, 5]] = [1, 1, 3]          # 2 / 2 8 in the first column and beside it
    state = _board_state(game, exps)
    obs, info = env.reset(options={"state": state})
    np.testing.assert_array_equal(obs, np.asarray(game.observe(state)))
    np.testing.assert_array_equal(obs.reshape(16, -1).argmax(1), exps)   # one-hot of the board
    np.testing.assert_array_equal(info["action_mask"], np.asarray(state.legal_action_mask, np.int8))

    obs, reward, terminated, truncated, info = env.step(UP)   # the two 2s merge into a 4
    assert reward == 4.0 and not terminated and not truncated and not info["illegal_action"]
    np.testing.assert_array_equal(obs, np.asarray(game.observe(env.state_of_game)))
    after = np.asarray(jax.jit(B2048.slide, static_argnums=1)(jnp.asarray(exps), UP)[0])
    board = obs.reshape(16, -1).argmax(1)
    spawned = np.flatnonzero(board != after)
    assert len(spawned) == 1 and after[spawned[0]] == 0 and board[spawned[0]] in (1, 2)


def test_2048_illegal_move_ends_the_episode_with_the_penalty():
    env = wg.JaxgamesEnv("2048")
    exps = np.zeros(16, np.int8)
    exps[:4] = [1, 2, 3, 4]               # a full top row of distinct tiles: only down moves it
    state = _board_state(env.game, exps)
    obs0, info = env.reset(options={"state": state})
    np.testing.assert_array_equal(info["action_mask"], [0, 0, 1, 0])
    obs, reward, terminated, truncated, info = env.step(np.int64(UP))
    assert terminated and not truncated and info["illegal_action"]
    assert reward == env.game.illegal_action_penalty == -1.0
    np.testing.assert_array_equal(obs, obs0)   # the board left as it was
    with pytest.raises(TypeError, match="integers"):
        env.step(1.5)


def test_ten_half_hand_made_hand_observation_and_out_of_range_action():
    env = wg.JaxgamesEnv("ten_half", render_mode="ansi")
    game = env.game
    state = game.init(0).replace(player_sum=jnp.int32(15), num_cards=jnp.int32(2), num_faces=jnp.int32(1))
    state = state.replace(observation=game.observe(state))
    obs, _ = env.reset(options={"state": state})
    np.testing.assert_array_equal(obs, [15, 2, 1])
    np.testing.assert_array_equal(obs, np.asarray(game.observe(state)))
    assert env.render() == ten_half_text(state)
    obs, reward, terminated, _, info = env.step(0)   # stick: the dealer plays, the hand ends
    assert terminated and reward in (-5, -4, -3, -2, -1, 1) and not info["illegal_action"]
    np.testing.assert_array_equal(obs, [15, 2, 1])

    env.reset(options={"state": state})
    _, reward, terminated, _, info = env.step(2)     # no action 2: illegal, the game's penalty
    assert terminated and info["illegal_action"] and reward == -1.0


@pytest.mark.parametrize("game", ["ten_half", "2048"])
def test_vector_env_matches_sync_vector_env_of_single_envs(game):
    n, steps = 6, 30
    ours = wg.JaxgamesVectorEnv(game, num_envs=n)
    peer = gym.vector.SyncVectorEnv([lambda: wg.JaxgamesEnv(game)] * n)
    assert ours.observation_space == peer.observation_space and ours.action_space == peer.action_space
    obs, info = ours.reset(seed=11)
    peer_obs, peer_info = peer.reset(seed=11)
    np.testing.assert_array_equal(obs, peer_obs)
    rng = np.random.default_rng(0)
    done_before = np.zeros(n, bool)
    resets = 0
    for _ in range(steps):
        # mostly legal actions, sometimes any action (an illegal one ends the game: more resets)
        legal = np.where(info["action_mask"].astype(bool), rng.random((n, ours.single_action_space.n)), -1)
        actions = np.where(rng.random(n) < 0.2, rng.integers(0, ours.single_action_space.n, n), legal.argmax(1))
        out, peer_out = ours.step(actions), peer.step(actions)
        for mine, theirs in zip(out[:4], peer_out[:4]):
            np.testing.assert_array_equal(mine, theirs)
        obs, reward, terminated, truncated, info = out
        assert info.keys() == peer_out[4].keys()
        for k in info:
            np.testing.assert_array_equal(info[k], peer_out[4][k], err_msg=k)
        # NEXT_STEP: a game that ended last step is reset now, its reward 0, a fresh first state
        assert not terminated[done_before].any() and (reward[done_before] == 0).all()
        if game == "ten_half":
            assert (obs[done_before, 1] == 1).all()   # a fresh hand holds one card
        resets += done_before.sum()
        done_before = terminated | truncated
    assert resets > 0


def test_registration_and_bad_input():
    assert gym.make("jaxgames/2048-v0", variant="2584").unwrapped.game.variant == "2584"
    envs = gym.make_vec("jaxgames/TenHalf-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(envs, wg.JaxgamesVectorEnv) and envs.num_envs == 3
    with pytest.raises(ValueError, match="pettingzoo"):
        wg.JaxgamesEnv("hex")
    with pytest.raises(ValueError, match="render_mode"):
        wg.JaxgamesEnv("2048", render_mode="rgb_array")
    with pytest.raises(ValueError, match="num_envs"):
        wg.JaxgamesVectorEnv("2048", num_envs=0)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="3 integer actions"):
        envs.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="3 seeds"):
        envs.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seeds are integers"):
        envs.reset(seed=[0, 1, -2])
    with pytest.raises(RuntimeError, match="reset"):
        wg.JaxgamesEnv("ten_half").step(0)
    assert jaxgames.make("ten_half").num_players == 1
