"""The opponent wrapper on Tally (tests/toy_games.py), a three-player game whose every move
pays every seat a known amount: each result is checked against a plain-Python replay of the
same game from the seat and opponent the wrapper drew."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from train.algos.opponents import BIG, MAX_DEALS, UNBOUNDED_MOVES, VsOpponents

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # tests/: the toy games
from toy_games import Duel, Tally  # noqa: E402

L = 4                                   # moves in a game of Tally (unless an action 2 ends it)
ENV = Tally(length=L)
# table[opponent, seat to move] -> the action that opponent plays for that seat
TABLE = jnp.array([[0, 1, 0], [1, 0, 1]], jnp.int32)
STOPPER = jnp.array([[2, 2, 2]], jnp.int32)   # ends every game on its first move
G = 64


def opponent_policy(table, opponent, state, key):
    return table[opponent, state.current_player]


def draw_opponent(table, key):
    return jax.random.randint(key, (), 0, table.shape[0], dtype=jnp.int32)


def value_bounds(final, seat):
    return jnp.stack([-(final.step_count + seat), 100.0 * seat + final.step_count]).astype(jnp.float32)


WRAPPER = VsOpponents(ENV, opponent_policy=opponent_policy, draw_opponent=draw_opponent,
                      value_bounds=value_bounds, max_opponent_moves=10)
RESET = jax.jit(jax.vmap(WRAPPER.reset, in_axes=(None, 0)))
STEP = jax.jit(jax.vmap(WRAPPER.step, in_axes=(None, 0, 0, 0)))
RESET_ONE = jax.jit(WRAPPER.reset)
STEP_ONE = jax.jit(WRAPPER.step)


class Replay:
    """One game of Tally in plain Python, from ``seat``'s view against ``table[opponent]``."""

    def __init__(self, table, seat, opponent):
        self.table, self.seat, self.opponent = np.asarray(table), int(seat), int(opponent)
        self.mover, self.moves, self.over = 0, 0, False
        self.play_opponents()   # the learner's first decision: these rewards go to no one

    def move(self, action):
        mover = self.mover
        paid = action + 1
        reward = 1000 * paid if mover == self.seat else 10 ** mover * paid
        self.moves += 1
        self.over = action == 2 or self.moves >= L
        if not self.over:
            self.mover = (mover + 1) % 3
        return reward

    def play_opponents(self):
        reward = 0
        while not self.over and self.mover != self.seat:
            reward += self.move(int(self.table[self.opponent, self.mover]))
        return reward

    def learner(self, action):
        """The learner's action and the opponents' replies: (reward, game over)."""
        reward = self.move(action)
        return reward + self.play_opponents(), self.over


def lane(tree, i):
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[i], tree)


def check_at_decision(s, replay):
    assert int(s.seat) == replay.seat and int(s.opponent) == replay.opponent
    assert not bool(s.state.terminated) and int(s.state.current_player) == replay.seat
    assert int(s.state.step_count) == replay.moves


def test_rewards_between_decisions_are_credited_to_the_last_one():
    """Every decision's reward is the learner's own move plus the opponents' replies up to its
    next decision (or the game's end); a game ending on an opponent's move or on the learner's
    sets done, the bounds of that game, and the next game starts at the learner's first
    decision with a new seat and opponent."""
    s = RESET(TABLE, jax.random.split(jax.random.key(0), G))
    replays = []
    for i in range(G):
        g = lane(s, i)
        replays.append(Replay(TABLE, g.seat, g.opponent))
        check_at_decision(g, replays[i])
        assert float(g.reward) == 0 and not bool(g.done)
        np.testing.assert_array_equal(g.bounds, [-BIG, BIG])
    assert {r.seat for r in replays} == {0, 1, 2}
    assert {r.opponent for r in replays} == {0, 1}
    ends = {"learner": 0, "opponent": 0}
    for t in range(6):
        actions = (np.arange(G) + t) % 2
        s = STEP(TABLE, s, jnp.asarray(actions, jnp.int32), jax.random.split(jax.random.key(t + 1), G))
        for i in range(G):
            g, r = lane(s, i), replays[i]
            ended_by_learner = r.moves + 1 >= L
            reward, over = r.learner(int(actions[i]))
            assert float(g.reward) == reward, (t, i)
            assert bool(g.done) == over
            if over:
                ends["learner" if ended_by_learner else "opponent"] += 1
                np.testing.assert_array_equal(g.bounds, [-(r.moves + r.seat), 100 * r.seat + r.moves])
                replays[i] = r = Replay(TABLE, g.seat, g.opponent)
            else:
                np.testing.assert_array_equal(g.bounds, [-BIG, BIG])
            check_at_decision(g, r)
    assert ends["learner"] > 0 and ends["opponent"] > 0


def test_a_game_ending_before_the_learner_moves_is_dealt_again():
    """Against an opponent who ends every game on its first move, only the games where the
    learner moves first reach a decision: every other deal is dealt again inside ``reset``
    (and after each auto-reset), its rewards credited to nothing."""
    s = RESET(STOPPER, jax.random.split(jax.random.key(1), G))
    np.testing.assert_array_equal(s.seat, 0)
    np.testing.assert_array_equal(s.state.step_count, 0)
    np.testing.assert_array_equal(s.reward, 0.0)
    assert not np.asarray(s.done).any()
    s = STEP(STOPPER, s, jnp.zeros(G, jnp.int32), jax.random.split(jax.random.key(2), G))
    # the learner's 0 (+1000), seat 1 stops (+10 * 3): the game ends on the opponent's move
    np.testing.assert_array_equal(s.reward, 1030.0)
    assert np.asarray(s.done).all()
    np.testing.assert_array_equal(s.bounds, np.tile([-2.0, 2.0], (G, 1)))
    np.testing.assert_array_equal(s.seat, 0)
    np.testing.assert_array_equal(s.state.step_count, 0)
    np.testing.assert_array_equal(s.state.current_player, 0)


def test_one_game_and_its_vmapped_lane_agree():
    keys = jax.random.split(jax.random.key(3), 4)
    batched = RESET(TABLE, keys)
    stepped = STEP(TABLE, batched, jnp.array([1, 0, 1, 0], jnp.int32), keys)
    for i in range(4):
        one = RESET_ONE(TABLE, keys[i])
        for a, b in zip(jax.tree_util.tree_leaves(one), jax.tree_util.tree_leaves(lane(batched, i))):
            np.testing.assert_array_equal(a, b)
        two = STEP_ONE(TABLE, one, jnp.int32([1, 0, 1, 0][i]), keys[i])
        for a, b in zip(jax.tree_util.tree_leaves(two), jax.tree_util.tree_leaves(lane(stepped, i))):
            np.testing.assert_array_equal(a, b)


def test_without_value_bounds_and_a_game_without_max_steps():
    wrapper = VsOpponents(ENV, opponent_policy=opponent_policy, draw_opponent=draw_opponent)
    assert wrapper.max_opponent_moves == UNBOUNDED_MOVES and MAX_DEALS >= 1
    s = wrapper.reset(STOPPER, jax.random.key(0))
    s = wrapper.step(STOPPER, s, jnp.int32(2), jax.random.key(1))  # the learner ends the game
    assert bool(s.done) and float(s.reward) == 3000.0
    np.testing.assert_array_equal(s.bounds, [-BIG, BIG])
    assert np.isfinite(np.asarray(s.bounds)).all()


def test_refusals():
    class Solo(Duel):
        num_players = 1
    with pytest.raises(ValueError, match="two or more players"):
        VsOpponents(Solo(), opponent_policy=opponent_policy, draw_opponent=draw_opponent)
    with pytest.raises(ValueError, match="max_opponent_moves"):
        VsOpponents(ENV, opponent_policy=opponent_policy, draw_opponent=draw_opponent, max_opponent_moves=0)
