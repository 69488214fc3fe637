"""The opponent wrapper: an N-player game seen from one seat, as a single-agent environment.

A single-agent learner (PPO, TD) plays a multi-player game through :class:`VsOpponents`: the
learner sits in one seat, the other seats' moves are played inside the environment by an
opponent policy, and every state the learner sees is one where it is to move. Nothing here
names a game: ``table`` is any pytree the caller carries (a league's pool, anchors ...),
``opponent`` an int32 index that ``opponent_policy`` gives a meaning to.

    wrapper = VsOpponents(env, opponent_policy=play, draw_opponent=draw, value_bounds=bounds)
    s = wrapper.reset(table, key)                  # Seat: the learner is to move in s.state
    s = wrapper.step(table, s, action, key)        # its action, then the others' moves
    # batched: jax.vmap(wrapper.step, in_axes=(None, 0, 0, 0))(table, seats, actions, keys)

``Seat.reward`` is ``rewards[seat]`` summed from the learner's action to its next decision;
at a game's end ``done`` is True, ``bounds`` holds ``value_bounds`` of the final state and
``state`` is already the next game (auto-reset). Jittable and vmappable.

How it works (what is credited to what, games the learner never decides in, the loop and its
bounds): docs/learners.md#the-opponent-wrapper-trainalgosopponentspy.
"""

from __future__ import annotations

from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp

from jaxgames.core import Env, State

__all__ = ["BIG", "MAX_DEALS", "Seat", "VsOpponents", "no_bounds"]

#: the "no bound" of a value clip: finite (a training carry with a non-finite value is taken
#: for a diverged run), far beyond any return of any game, and exact in float32 (2 ** 100)
BIG = 2.0 ** 100
#: deals at most in one call of ``reset`` or ``step`` (games that end before the learner
#: decides are dealt again); reaching it needs a seat that (almost) never decides
MAX_DEALS = 64
#: the default when a game sets no ``max_steps`` (as :func:`jaxgames.rollout.rollout`)
UNBOUNDED_MOVES = 100_000

# opponent_policy(table, opponent int32 [], state, key) -> int32 []: the move of the player to move
OpponentPolicy = Callable[[Any, jax.Array, State, jax.Array], jax.Array]
# draw_opponent(table, key) -> int32 []: the opponent of a new game
DrawOpponent = Callable[[Any, jax.Array], jax.Array]
# value_bounds(final_state, seat int32 []) -> float32 [2] (low, high) of the seat's return
ValueBounds = Callable[[State, jax.Array], jax.Array]


def no_bounds() -> jax.Array:
    """float32 [2]: ``(-BIG, BIG)``, no clip."""
    return jnp.array([-BIG, BIG], jnp.float32)


@chex.dataclass(frozen=True)
class Seat:
    state: Any          # the game (core.State); the learner is to move in it
    seat: jax.Array     # int32 []  the learner's seat in this game
    opponent: jax.Array  # int32 []  which opponent plays the other seats (the caller's index)
    reward: jax.Array   # float32 []  the learner's rewards since its previous decision (credited to it)
    done: jax.Array     # bool []  the game of the previous decision ended (state is a new game)
    bounds: jax.Array   # float32 [2]  value_bounds of the game that just ended when done; else (-BIG, BIG)


@chex.dataclass(frozen=True)
class _Loop:
    """The carry of the opponents' loop."""

    state: Any
    seat: jax.Array
    opponent: jax.Array
    reward: jax.Array    # float32 []  credited so far
    credited: jax.Array  # bool []  the game in play is the one of the learner's last decision
    done: jax.Array      # bool []  that game has ended in this call
    bounds: jax.Array    # float32 [2]
    moves: jax.Array     # int32 []  opponent moves in the game in play, in this call
    deals: jax.Array     # int32 []  deals in this call
    key: jax.Array


def _finished(state) -> jax.Array:
    return state.terminated | state.truncated


class VsOpponents:
    """``env`` from one seat: the other seats played by ``opponent_policy`` (module doc).

    Args:
      env: any game of the contract with two or more players.
      opponent_policy: ``opponent_policy(table, opponent, state, key) -> int32 []``, the move
        of ``state.current_player`` (never the learner's seat) for one unbatched game.
      draw_opponent: ``draw_opponent(table, key) -> int32 []``, the opponent of a new game.
      value_bounds: ``value_bounds(final_state, seat) -> float32 [2]``, the (low, high) clip
        of the learner's return in a game that ended (AlphaHoldem's ``-delta2, delta3``);
        default none: ``(-BIG, BIG)``.
      max_opponent_moves: the most opponent moves in one game between two learner decisions
        (a bound on the loop; default ``env.max_steps``, or 100 000 for a game without one).
      reward_scale: the learner's rewards are the game's times this (hold'em: chips to big
        blinds, the unit a value network learns comfortably); ``value_bounds`` are given in
        the scaled unit.
    """

    def __init__(self, env: Env, *, opponent_policy: OpponentPolicy, draw_opponent: DrawOpponent,
                 value_bounds: ValueBounds | None = None, max_opponent_moves: int | None = None,
                 reward_scale: float = 1.0):
        if env.num_players < 2:
            raise ValueError(f"the opponent wrapper is for games of two or more players; "
                             f"{env.id or type(env).__name__} has {env.num_players}")
        if max_opponent_moves is None:
            max_opponent_moves = env.max_steps or UNBOUNDED_MOVES
        if int(max_opponent_moves) < 1:
            raise ValueError(f"max_opponent_moves must be >= 1, got {max_opponent_moves}")
        self.env = env
        self.opponent_policy = opponent_policy
        self.draw_opponent = draw_opponent
        self.value_bounds = value_bounds
        self.max_opponent_moves = int(max_opponent_moves)
        if not float(reward_scale) > 0:
            raise ValueError(f"reward_scale must be > 0, got {reward_scale}")
        self.reward_scale = float(reward_scale)

    @property
    def num_actions(self) -> int:
        return self.env.num_actions

    def reset(self, table: Any, key: jax.Array) -> Seat:
        """A new game: the learner's seat drawn uniformly, the opponent by ``draw_opponent``,
        the opponents' moves played until the learner is to move (a game that ends first is
        dealt again, its rewards credited to nothing). ``reward`` 0, ``done`` False."""
        k_deal, k_play = jax.random.split(key)
        seat, opponent, state = self._deal(table, k_deal, None)
        loop = _Loop(state=state, seat=seat, opponent=opponent, reward=jnp.float32(0),
                     credited=jnp.bool_(False), done=jnp.bool_(False), bounds=no_bounds(),
                     moves=jnp.int32(0), deals=jnp.int32(1), key=k_play)
        return self._advance(table, loop)

    def step(self, table: Any, s: Seat, action: jax.Array, key: jax.Array) -> Seat:
        """The learner's ``action`` in ``s.state``, then the opponents' moves until the learner
        is to move again or the game ends; ``reward``: ``rewards[seat]`` summed over all those
        moves. On the end: ``done`` True, ``bounds`` set, ``state`` the next game at the
        learner's first decision (new seat and opponent)."""
        k_move, k_play = jax.random.split(key)
        state = self.env.step(s.state, jnp.asarray(action, jnp.int32), k_move)
        loop = _Loop(state=state, seat=s.seat, opponent=s.opponent,
                     reward=self.reward_scale * state.rewards[s.seat].astype(jnp.float32), credited=jnp.bool_(True),
                     done=jnp.bool_(False), bounds=no_bounds(), moves=jnp.int32(0),
                     deals=jnp.int32(0), key=k_play)
        return self._advance(table, loop)

    # -- the loop -------------------------------------------------------------------------------

    def _deal(self, table: Any, key: jax.Array, previous: State | None):
        """``(seat, opponent, state)`` of a new game (``env.init``, or ``env.reset`` after
        ``previous``)."""
        k_seat, k_opponent, k_game = jax.random.split(key, 3)
        seat = jax.random.randint(k_seat, (), 0, self.env.num_players, dtype=jnp.int32)
        opponent = jnp.asarray(self.draw_opponent(table, k_opponent), jnp.int32)
        chex.assert_shape(opponent, ())
        state = self.env.init(k_game) if previous is None else self.env.reset(k_game, previous)
        return seat, opponent, state

    def _bounds(self, state: State, seat: jax.Array) -> jax.Array:
        if self.value_bounds is None:
            return no_bounds()
        bounds = jnp.asarray(self.value_bounds(state, seat), jnp.float32)
        chex.assert_shape(bounds, (2,))
        return bounds

    def _advance(self, table: Any, loop: _Loop) -> Seat:
        """Play the opponents (and deal new games) until the learner is to move."""
        env = self.env

        def learner_to_move(c: _Loop) -> jax.Array:
            return ~_finished(c.state) & (c.state.current_player == c.seat)

        def cond(c: _Loop) -> jax.Array:
            return ~learner_to_move(c) & (c.moves < self.max_opponent_moves) & (c.deals <= MAX_DEALS)

        def body(c: _Loop) -> _Loop:
            key, k_policy, k_step, k_deal = jax.random.split(c.key, 4)
            over = _finished(c.state)
            # the game goes on: the opponent to move plays (computed either way: one branch
            # of a select, as under vmap)
            action = jnp.asarray(self.opponent_policy(table, c.opponent, c.state, k_policy), jnp.int32)
            played = env.step(c.state, action, k_step)
            # the game is over: a new one (the end of the credited game is recorded first)
            seat, opponent, fresh = self._deal(table, k_deal, c.state)
            ends = over & c.credited
            pick = lambda a, b: jax.tree_util.tree_map(lambda x, y: jnp.where(over, x, y), a, b)  # noqa: E731
            return _Loop(
                state=pick(fresh, played), seat=jnp.where(over, seat, c.seat),
                opponent=jnp.where(over, opponent, c.opponent),
                reward=c.reward + jnp.where(~over & c.credited, self.reward_scale * played.rewards[c.seat], 0.0),
                credited=c.credited & ~over, done=c.done | ends,
                bounds=jnp.where(ends, self._bounds(c.state, c.seat), c.bounds),
                moves=jnp.where(over, 0, c.moves + 1), deals=c.deals + over.astype(jnp.int32),
                key=key)

        c = jax.lax.while_loop(cond, body, loop)
        return Seat(state=c.state, seat=c.seat, opponent=c.opponent, reward=c.reward.astype(jnp.float32),
                    done=c.done, bounds=c.bounds)
