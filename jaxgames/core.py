"""The game contract shared by every jaxgames environment.

Every game is a pure state-transition function over an immutable pytree ``State``:

    env = jaxgames.make("ten_half")
    state = env.init(key)
    state = env.step(state, action, key)
    obs = env.observe(state, player_id)

The step contract, identical for every game (enforced here, in :meth:`Env.step`, so no game
can get it wrong):

* stepping a finished game (``terminated | truncated``) is a no-op that returns zero rewards;
* an illegal action ends the game at once: the player who chose it receives
  ``illegal_action_penalty`` and every other player ``-penalty / (num_players - 1)``;
* at a terminal state ``legal_action_mask`` is all True, so batched sampling from a masked
  distribution never sees an empty mask;
* keys are passed in and consumed, never stored in the state.

Games implement ``_init``, ``_step`` (legal, unfinished states only) and ``_observe``.
Stochastic games also expose their chance step (``afterstate``, ``chance_outcomes``,
``apply_chance``); imperfect-information games expose ``sample_world``.
"""

from __future__ import annotations

import abc
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array
PRNGKey = jax.Array

# ``current_player`` of a chance (dealer) turn, in games that expose one as a separate turn.
CHANCE_PLAYER = -1


class State(abc.ABC):
    """Fields every game's state has (each game declares them in its own dataclass).

    current_player:     int32 []                 -1 on a chance turn
    observation:        game-specific            ``observe(state, current_player)``
    rewards:            float32 [num_players]    rewards of the last step
    terminated:         bool []
    truncated:          bool []
    legal_action_mask:  bool [num_actions]
    step_count:         int32 []
    """

    current_player: Array
    observation: Array
    rewards: Array
    terminated: Array
    truncated: Array
    legal_action_mask: Array
    step_count: Array

    def replace(self, **changes: Any) -> "State":  # provided by flax.struct.dataclass
        raise NotImplementedError


class Env(abc.ABC):
    """Base environment: the contract lives here, the rules in ``_init``/``_step``/``_observe``."""

    #: registry id, e.g. "ten_half"
    id: str = ""
    num_players: int = 1
    num_actions: int = 0
    #: reward of the player who plays an illegal action (the game then ends)
    illegal_action_penalty: float = -1.0
    #: step_count at which a game is truncated; 0 = never (the game always ends by itself)
    max_steps: int = 0

    # -- the contract -------------------------------------------------------------------------

    def init(self, key: PRNGKey) -> State:
        state = self._init(key)
        return state.replace(observation=self.observe(state, state.current_player))

    def step(self, state: State, action: Array, key: PRNGKey | None = None) -> State:
        """One move. ``action`` int32 []; ``key`` feeds whatever chance the move triggers."""
        if key is None:
            key = jax.random.PRNGKey(0)
        action = jnp.asarray(action, jnp.int32)
        finished = state.terminated | state.truncated
        safe_action = jnp.clip(action, 0, self.num_actions - 1)
        is_illegal = (~state.legal_action_mask[safe_action]) | (action != safe_action)
        mover = state.current_player
        # A legal move is played from every state so that ``_step`` always sees valid input;
        # the selects below then decide which result stands.
        playable = jnp.argmax(state.legal_action_mask).astype(jnp.int32)
        played = self._step(
            state.replace(step_count=state.step_count + 1),
            jnp.where(is_illegal, playable, safe_action),
            key,
        )
        stepped = played.replace(
            rewards=jnp.where(is_illegal, self._illegal_rewards(mover), played.rewards),
            terminated=played.terminated | is_illegal)
        if self.max_steps > 0:
            stepped = stepped.replace(
                truncated=stepped.truncated | ((stepped.step_count >= self.max_steps) & ~stepped.terminated))
        idle = state.replace(rewards=jnp.zeros_like(state.rewards))
        new = _select(finished, idle, stepped)
        new = new.replace(
            legal_action_mask=jnp.where(
                new.terminated | new.truncated, True, new.legal_action_mask))
        return new.replace(observation=self.observe(new, new.current_player))

    def observe(self, state: State, player_id: Array | int | None = None) -> Array:
        """What ``player_id`` sees (default: the player to move)."""
        if player_id is None:
            player_id = state.current_player
        return jax.lax.stop_gradient(self._observe(state, jnp.asarray(player_id, jnp.int32)))

    def _illegal_rewards(self, mover: Array) -> Array:
        """float32 [num_players]: the penalty for the mover, its opposite shared by the rest."""
        penalty = jnp.float32(self.illegal_action_penalty)
        if self.num_players == 1:
            return jnp.full((1,), penalty)
        rewards = jnp.full((self.num_players,), -penalty / (self.num_players - 1))
        return rewards.at[jnp.maximum(mover, 0)].set(penalty)

    # -- what each game implements ------------------------------------------------------------

    @abc.abstractmethod
    def _init(self, key: PRNGKey) -> State: ...

    @abc.abstractmethod
    def _step(self, state: State, action: Array, key: PRNGKey) -> State:
        """Apply a legal ``action`` to an unfinished state (step_count already incremented)."""

    @abc.abstractmethod
    def _observe(self, state: State, player_id: Array) -> Array: ...

    # -- optional: chance and hidden information ---------------------------------------------

    def afterstate(self, state: State, action: Array) -> tuple[State, Array]:
        """Deterministic part of a move, before chance: ``(afterstate, reward)``."""
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def chance_outcomes(self, state: State) -> tuple[Array, Array]:
        """All chance outcomes of an afterstate and their probabilities ``([K], [K])``."""
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def apply_chance(self, state: State, outcome: Array) -> State:
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def sample_world(self, state: State, player_id: Array, key: PRNGKey) -> State:
        """A full state consistent with everything ``player_id`` has observed (for PIMC)."""
        raise NotImplementedError(f"{self.id} is a perfect-information game")


def _select(pred: Array, on_true: State, on_false: State) -> State:
    """``pred ? on_true : on_false`` leaf by leaf (a select, cheap under vmap)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def auto_reset(env: Env) -> Callable[[State, Array, PRNGKey], State]:
    """``step`` that starts a new game as soon as one ends.

    The returned state is the fresh game's first state, carrying the rewards of the step that
    ended the old game; a new episode is recognisable by ``step_count == 0``.
    """

    def step(state: State, action: Array, key: PRNGKey) -> State:
        step_key, reset_key = jax.random.split(key)
        new = env.step(state, action, step_key)
        done = new.terminated | new.truncated
        fresh = env.init(reset_key).replace(rewards=new.rewards)
        return _select(done, fresh, new)

    return step


def random_legal_action(state: State, key: PRNGKey) -> Array:
    """A uniformly random legal action: int32 []."""
    logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits).astype(jnp.int32)


# -- the shared contract test ----------------------------------------------------------------


def api_test(env: Env, *, num_games: int = 16, max_steps: int = 2000, seed: int = 0) -> None:
    """Check that ``env`` keeps the contract. Raises AssertionError on the first violation.

    Dtypes and shapes; random play to the end, single and vmapped; the finished-game no-op;
    illegal-action termination and penalty; all-True mask at terminal states; no recompile on
    a second call; same key, same game.
    """
    key = jax.random.PRNGKey(seed)
    init = jax.jit(env.init)
    step = jax.jit(env.step)
    state = init(key)
    _check_state(env, state)

    # Random play, one game, to the end; checks the invariants at every step.
    k = key
    for _ in range(max_steps):
        if bool(state.terminated | state.truncated):
            break
        k, ka, ks = jax.random.split(k, 3)
        assert bool(state.legal_action_mask.any()), "no legal action in a live state"
        state = step(state, random_legal_action(state, ka), ks)
        _check_state(env, state)
    assert bool(state.terminated | state.truncated), f"game did not end in {max_steps} steps"
    assert bool(state.legal_action_mask.all()), "terminal mask must be all True"

    # Finished game: any action is a no-op with zero rewards.
    after = step(state, jnp.int32(0), ks)
    assert float(jnp.abs(after.rewards).sum()) == 0.0, "stepping a finished game gave rewards"
    for name in ("current_player", "terminated", "truncated", "step_count"):
        np.testing.assert_array_equal(getattr(after, name), getattr(state, name), err_msg=name)

    # Illegal action: the game ends and the mover gets the penalty.
    fresh = init(key)
    illegal = jnp.nonzero(~np.asarray(fresh.legal_action_mask), size=1, fill_value=-1)[0][0]
    bad = int(illegal) if int(illegal) >= 0 else env.num_actions  # out of range is illegal too
    punished = step(fresh, jnp.int32(bad), key)
    assert bool(punished.terminated), "an illegal action must end the game"
    mover = max(int(fresh.current_player), 0)
    assert float(punished.rewards[mover]) == env.illegal_action_penalty, "illegal-action penalty"

    # Vmapped random play: every game ends, shapes carry a batch axis, no recompiles.
    keys = jax.random.split(key, num_games)
    play = jax.jit(jax.vmap(lambda k: _random_game(env, k, max_steps)))
    final = play(keys)
    assert final.rewards.shape == (num_games, env.num_players)
    assert bool((final.terminated | final.truncated).all()), "vmapped games did not end"
    play(jax.random.split(jax.random.PRNGKey(seed + 1), num_games))
    assert play._cache_size() == 1, "second call recompiled"
    assert step._cache_size() == 1, "step recompiled"

    # Determinism: the same key plays the same game.
    again = play(keys)
    chex.assert_trees_all_equal(final, again)


def _random_game(env: Env, key: PRNGKey, max_steps: int) -> State:
    init_key, play_key = jax.random.split(key)
    state = env.init(init_key)

    def cond(carry):
        state, _, t = carry
        return ~(state.terminated | state.truncated) & (t < max_steps)

    def body(carry):
        state, k, t = carry
        k, ka, ks = jax.random.split(k, 3)
        return env.step(state, random_legal_action(state, ka), ks), k, t + 1

    state, _, _ = jax.lax.while_loop(cond, body, (state, play_key, 0))
    return state


def _check_state(env: Env, state: State) -> None:
    chex.assert_shape(state.rewards, (env.num_players,))
    chex.assert_type(state.rewards, jnp.float32)
    chex.assert_shape(state.legal_action_mask, (env.num_actions,))
    chex.assert_type(state.legal_action_mask, jnp.bool_)
    for name in ("terminated", "truncated"):
        chex.assert_shape(getattr(state, name), ())
        chex.assert_type(getattr(state, name), jnp.bool_)
    for name in ("current_player", "step_count"):
        chex.assert_shape(getattr(state, name), ())
        chex.assert_type(getattr(state, name), jnp.int32)
    cp = int(state.current_player)
    assert cp == CHANCE_PLAYER or 0 <= cp < env.num_players, f"current_player {cp}"
    obs = env.observe(state, max(cp, 0))
    chex.assert_trees_all_equal_shapes_and_dtypes(obs, state.observation)
