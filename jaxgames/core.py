"""The game contract shared by every jaxgames environment.

Every game is a pure state-transition function over an immutable pytree ``State``:

    env = jaxgames.make("ten_half")
    state = env.init(key)
    state = env.step(state, action, key)
    obs = env.observe(state, player_id)

The step contract is enforced here, once, in :meth:`Env.step`, so no game can get it wrong:
stepping a finished game is a no-op with zero rewards; an illegal action ends the game at once
(``illegal_action_penalty`` to its mover); ``legal_action_mask`` is all True at a terminal
state; actions are integers (anything else is refused); keys are passed in and consumed, never
stored (:func:`as_key`: a typed key, a raw uint32 [2] key or an integer seed). ``observe`` and
``sample_world`` refuse a seat out of range known at trace time; a traced one reveals nothing.
``CHANCE_PLAYER`` (-1) moves only at an afterstate (:meth:`Env.afterstate`,
:meth:`Env.apply_chance`). Games implement ``_init``, ``_step`` and ``_observe``. Beside this
module: :mod:`jaxgames.rollout`, the one game loop, and :mod:`jaxgames.api_test`, the contract
test every game passes.

The contract in full (the refusals, keys, seats, chance, what a game implements):
docs/api.md#the-contract-in-full-jaxgamescore.
"""

from __future__ import annotations

import abc
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng

__all__ = [
    "CHANCE_PLAYER",
    "Array",
    "Env",
    "PRNGKey",
    "Policy",
    "State",
    "as_key",
    "auto_reset",
    "random_legal_action",
    "random_policy",
]

Array = jax.Array
PRNGKey = jax.Array
#: ``policy(params, state, key) -> action int32 []`` on one unbatched state
Policy = Callable[[Any, "State", PRNGKey], Array]

# ``current_player`` of an afterstate: chance moves next (see the module docstring).
CHANCE_PLAYER = -1


class State(abc.ABC):
    """Fields every game's state has (each game declares them in its own dataclass).

    current_player:     int32 []                 seat to move; -1 only on an afterstate
    observation:        game-specific pytree     ``observe(state, current_player)``
    rewards:            float32 [num_players]    rewards of the last step
    terminated:         bool []
    truncated:          bool []
    legal_action_mask:  bool [num_actions]
    step_count:         int32 []
    """

    current_player: Array
    observation: Any
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
    #: ``step`` draws chance (a spawn, a deal ...) and needs its key
    stochastic: bool = False
    #: every player sees the whole state (otherwise ``sample_world`` is implemented)
    perfect_information: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Put the seat and action checks around a game's own ``sample_world`` and
        ``afterstate`` (the public methods a game writes itself), so every game, and every
        subclass of one, checks its inputs the same way
        (docs/api.md#the-contract-in-full-jaxgamescore)."""
        super().__init_subclass__(**kwargs)
        for name, wrap in (("sample_world", _checked_sample_world), ("afterstate", _checked_afterstate)):
            own = cls.__dict__.get(name)
            if own is not None and not getattr(own, "_checked", False):
                setattr(cls, name, wrap(own))

    # -- the contract -------------------------------------------------------------------------

    def init(self, key: PRNGKey | int) -> State:
        """The first state of a game. ``key``: a typed or raw key, or an integer seed (:func:`as_key`)."""
        state = self._init(as_key(key, f"{self.id}.init"))
        return state.replace(observation=self._own_observation(state))

    def step(self, state: State, action: Array, key: PRNGKey | None = None) -> State:
        """One move. ``action`` int []; ``key`` feeds whatever chance the move triggers."""
        action = self._check_step_inputs(state, action)
        if key is None:
            if self.stochastic:
                raise ValueError(
                    f"{self.id} is stochastic: step(state, action, key) needs a key, or every "
                    f"move would draw the same chance outcome")
            key = jax.random.key(0)  # never read: the game has no chance
        else:
            key = as_key(key, f"{self.id}.step")
        finished = state.terminated | state.truncated
        safe_action = jnp.clip(action, 0, self.num_actions - 1)
        is_illegal = (~state.legal_action_mask[safe_action]) | (action != safe_action)
        mover = state.current_player
        # ``_step`` runs on the in-range action whether or not it is legal (branch-free under
        # vmap); an illegal one's result is thrown away below, so a game's ``_step`` may assume
        # legality. (Searching for a legal substitute instead cost more than a Hex move: an
        # argmax over the mask compiles to a scalar loop on the CPU.)
        advanced = state.replace(step_count=state.step_count + 1)
        played = self._step(advanced, safe_action, key)
        punished = advanced.replace(rewards=self._illegal_rewards(mover), terminated=jnp.bool_(True))
        stepped = _select(is_illegal, punished, played)
        if self.max_steps > 0:
            stepped = stepped.replace(
                truncated=stepped.truncated | ((stepped.step_count >= self.max_steps) & ~stepped.terminated))
        idle = state.replace(rewards=jnp.zeros_like(state.rewards))
        new = _select(finished, idle, stepped)
        new = new.replace(
            legal_action_mask=jnp.where(
                new.terminated | new.truncated, True, new.legal_action_mask))
        return new.replace(observation=self._own_observation(new))

    def reset(self, key: PRNGKey, previous: State) -> State:
        """The next game of a sequence, after ``previous`` ended (default: a fresh ``init``).

        Games whose sequence carries something from game to game override it (hold'em moves
        the button); :func:`auto_reset` starts every new game through it.
        """
        del previous
        return self.init(key)

    def observe(self, state: State, player_id: Array | int | None = None) -> Any:
        """What ``player_id`` sees (default: the player to move; seat 0 in a one-player game).

        A seat outside ``0 .. num_players - 1`` is a ValueError when it is known at trace time
        (a Python int ...); a traced one gets :attr:`blank_observation`, which reveals nothing."""
        if player_id is None:
            player_id = state.current_player if self.num_players > 1 else 0
        seat, valid = self._check_seat(player_id, "observe")
        obs = jax.tree_util.tree_map(jax.lax.stop_gradient, self._observe(state, seat))
        if valid is True:
            return obs
        return jax.tree_util.tree_map(lambda o, b: jnp.where(valid, o, b), obs, self.blank_observation)

    def observe_all(self, state: State) -> Any:
        """Every seat's observation, stacked: each leaf ``[num_players, ...]``."""
        return jax.vmap(lambda p: jax.tree_util.tree_map(jax.lax.stop_gradient, self._observe(state, p)))(
            jnp.arange(self.num_players, dtype=jnp.int32))

    @property
    def blank_observation(self) -> Any:
        """The observation of a traced seat outside ``0 .. num_players - 1``: the shapes of
        ``observation_spec``, every signed-integer leaf -1 (no card, no seat), every other
        leaf 0 / False. A constant: it reveals nothing of any state."""
        return jax.tree_util.tree_map(
            lambda s: jnp.full(s.shape, -1 if jnp.issubdtype(s.dtype, jnp.signedinteger) else 0, s.dtype),
            self.observation_spec)

    @functools.cached_property
    def blank_world(self) -> State:
        """What ``sample_world`` gives a traced seat outside ``0 .. num_players - 1``: the fixed
        state ``init(jax.random.key(0))``, which reveals nothing of the state it was asked
        about (NumPy leaves, computed once)."""
        with jax.ensure_compile_time_eval():  # a constant even when first asked inside a trace
            state = jax.jit(self.init)(jax.random.key(0))
        return jax.device_get(state)

    @property
    def observation_spec(self) -> Any:
        """Shapes and dtypes of one observation: a pytree of ``jax.ShapeDtypeStruct``."""
        return self._abstract_state.observation

    def playout_returns(self, state: State, key: PRNGKey) -> Array:
        """float32 [num_players]: what each player collects from ``state`` to the end when
        every move is uniformly random among the legal ones (zeros at a finished state).

        The rollout of plain UCT. Games may override it with a faster sampler of the same
        distribution (Hex fills the board at random and tests the winner once).
        """
        from jaxgames.rollout import rollout  # the game loop is built on this module's Env

        return rollout(self, state, random_policy, key).returns

    @functools.cached_property
    def _abstract_state(self) -> State:
        return jax.eval_shape(self.init, jax.random.key(0))

    def _own_observation(self, state: State) -> Any:
        """``observe(state, current_player)`` without the seat check, for the ``observation``
        field of a decision state (whose mover is a seat): what ``init`` and ``step`` store."""
        seat = state.current_player if self.num_players > 1 else jnp.int32(0)
        return jax.tree_util.tree_map(jax.lax.stop_gradient, self._observe(state, seat))

    def _check_seat(self, player_id: Any, method: str) -> tuple[Array, Array | bool]:
        """``(seat int32 [], valid)``: ``player_id`` checked as a seat of this game.

        Known at trace time (a Python or NumPy int, a concrete array): out of range is a
        ValueError naming it and the range; then ``valid`` is ``True``. Traced: ``seat`` is
        clipped into range and ``valid`` a bool [] saying whether it was in range (the caller
        then hides whatever it computed for the clipped seat). Bools and floats: TypeError."""
        n = self.num_players
        where = f"{self.id}.{method}"
        if isinstance(player_id, (bool, np.bool_, str, bytes, float, complex)):
            raise TypeError(f"{where}: a seat is an integer 0 .. {n - 1}, "
                            f"got {type(player_id).__name__} {player_id!r}")
        dtype = getattr(player_id, "dtype", None)
        if dtype is not None and not jnp.issubdtype(dtype, jnp.integer):
            raise TypeError(f"{where}: a seat is an integer 0 .. {n - 1}, got an array of {dtype}")
        if np.shape(player_id):
            raise ValueError(f"{where}: one seat at a time, got shape {np.shape(player_id)} "
                             f"(batch with jax.vmap)")
        value = _known_value(player_id)
        if value is not None:
            if not 0 <= value < n:
                raise ValueError(f"{where}: player {value} is out of range: the seats of {self.id} "
                                 f"are 0 to {n - 1} (num_players = {n})")
            return jnp.asarray(value, jnp.int32), True
        seat = jnp.asarray(player_id, jnp.int32)
        return jnp.clip(seat, 0, n - 1), (seat >= 0) & (seat < n)

    def _check_step_inputs(self, state: State, action: Any) -> Array:
        """Refuse what would otherwise be silently truncated or broadcast (trace time only)."""
        if isinstance(action, (str, bytes, float, complex, bool, np.bool_)):
            raise TypeError(f"{self.id}: actions are integers, got {type(action).__name__} {action!r}")
        dtype = getattr(action, "dtype", None)
        if dtype is not None and not (jnp.issubdtype(dtype, jnp.integer)):
            raise TypeError(f"{self.id}: actions are integers, got an array of {dtype}")
        if np.ndim(action) == 0:
            value = _known_value(action)
            if value is not None and not _INT32_MIN <= value <= _INT32_MAX:
                raise ValueError(f"{self.id}: action {value} does not fit an int32 (actions are "
                                 f"0 .. {self.num_actions - 1})")
        expected = jax.tree_util.tree_structure(self._abstract_state)
        if jax.tree_util.tree_structure(state) != expected:
            raise TypeError(f"{self.id}.step got a {type(state).__module__}.{type(state).__name__}, "
                            f"not a state of {self.id}")
        batch = np.shape(state.step_count)
        if batch:
            raise ValueError(f"{self.id}.step got a batched state (batch shape {batch}); "
                             f"step one game at a time and batch with jax.vmap(env.step)")
        if np.shape(action):
            raise ValueError(f"{self.id}.step got an action of shape {np.shape(action)} for one "
                             f"game; batch games and actions together with jax.vmap(env.step)")
        return jnp.asarray(action, jnp.int32)

    def _illegal_rewards(self, mover: Array) -> Array:
        """float32 [num_players]: the penalty for the mover, its opposite shared by the rest."""
        penalty = jnp.float32(self.illegal_action_penalty)
        if self.num_players == 1:
            return jnp.full((1,), penalty)
        rewards = jnp.full((self.num_players,), -penalty / (self.num_players - 1))
        return rewards.at[mover].set(penalty)

    # -- what each game implements ------------------------------------------------------------

    @abc.abstractmethod
    def _init(self, key: PRNGKey) -> State: ...

    @abc.abstractmethod
    def _step(self, state: State, action: Array, key: PRNGKey) -> State:
        """Apply a legal ``action`` to an unfinished state (step_count already incremented)."""

    @abc.abstractmethod
    def _observe(self, state: State, player_id: Array) -> Any: ...

    # -- optional: chance and hidden information ---------------------------------------------

    @property
    def has_chance_step(self) -> bool:
        """Whether the game exposes ``afterstate``/``chance_outcomes``/``apply_chance``."""
        return type(self).afterstate is not Env.afterstate

    def afterstate(self, state: State, action: Array) -> tuple[State, Array]:
        """Deterministic part of a move, before chance: ``(afterstate, reward float32 [])``.

        The afterstate has ``current_player == CHANCE_PLAYER``."""
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def chance_outcomes(self, state: State) -> tuple[Array, Array]:
        """All chance outcomes of an afterstate and their probabilities ``([K], [K])``."""
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def apply_chance(self, state: State, outcome: Array) -> State:
        """The decision state that follows an afterstate when chance picks ``outcome``."""
        raise NotImplementedError(f"{self.id} has no separate chance step")

    def sample_world(self, state: State, player_id: Array, key: PRNGKey) -> State:
        """A full state consistent with everything ``player_id`` has observed (for PIMC).

        It must read only what ``player_id`` knows, so that two states the player cannot tell
        apart give the same sample for the same key (``api_test`` checks both). A game's own
        ``sample_world`` is wrapped in the seat check (:meth:`__init_subclass__`): it receives
        an int32 [] seat in range and a typed key; an out-of-range seat known at trace time is
        a ValueError, a traced one gets :attr:`blank_world`."""
        raise NotImplementedError(f"{self.id} is a perfect-information game")


_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1


def _known_value(x: Any) -> int | None:
    """The value of an integer scalar known at trace time (a Python or NumPy int, a concrete
    array); None for a traced one."""
    if isinstance(x, jax.core.Tracer):
        return None
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        return None
    return int(x)


def _checked_sample_world(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def sample_world(self: Env, state: State, player_id: Array, key: PRNGKey) -> State:
        seat, valid = self._check_seat(player_id, "sample_world")
        world = fn(self, state, seat, as_key(key, f"{self.id}.sample_world"))
        if valid is True:
            return world
        return _select(valid, world, jax.tree_util.tree_map(jnp.asarray, self.blank_world))

    sample_world._checked = True
    return sample_world


def _checked_afterstate(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def afterstate(self: Env, state: State, action: Array) -> tuple[State, Array]:
        return fn(self, state, self._check_step_inputs(state, action))

    afterstate._checked = True
    return afterstate


def as_key(key: Any, where: str = "init") -> PRNGKey:
    """A typed key from what ``jax.random`` accepts: a typed key (``jax.random.key(seed)``),
    returned as it is; a raw uint32 [2] key (``jax.random.PRNGKey(seed)``), wrapped (the same
    bits, so the same game as the typed key of the same seed); an integer seed ``0 <= seed <
    2**32`` (a Python, NumPy or traced integer scalar), read as ``jax.random.key(seed)``.
    Anything else (None, a bool, a float, another shape) is a TypeError, an out-of-range seed a
    ValueError. Trace time only: it costs nothing in a compiled program."""
    hint = "pass jax.random.key(seed), jax.random.PRNGKey(seed) or an integer seed"
    if key is None or isinstance(key, (bool, np.bool_, str, bytes, float, complex)):
        raise TypeError(f"{where}: {type(key).__name__} {key!r} is not a key; {hint}")
    dtype = getattr(key, "dtype", None)
    if dtype is None:
        if not isinstance(key, (int, np.integer)):
            raise TypeError(f"{where}: {type(key).__name__} is not a key; {hint}")
        if not 0 <= key < 2**32:
            raise ValueError(f"{where}: seed {key} is out of range 0 .. 2**32 - 1 (jax.random.key "
                             f"would fold it onto another seed's key)")
        return jax.random.key(int(key))
    shape = np.shape(key)
    if jnp.issubdtype(dtype, jax.dtypes.prng_key):
        if shape:
            raise ValueError(f"{where}: one key per game, got keys of shape {shape} (batch with jax.vmap)")
        return key
    if dtype == jnp.uint32 and len(shape) == 1:  # raw key data: uint32 [2] for Threefry
        return jax.random.wrap_key_data(key)
    if jnp.issubdtype(dtype, jnp.integer) and shape == ():
        value = _known_value(key)
        if value is not None and not 0 <= value < 2**32:
            raise ValueError(f"{where}: seed {value} is out of range 0 .. 2**32 - 1")
        return jax.random.key(key)
    raise TypeError(f"{where}: an array of {dtype} {list(shape)} is not a key; {hint}")


def _select(pred: Array, on_true: State, on_false: State) -> State:
    """``pred ? on_true : on_false`` leaf by leaf (a select, cheap under vmap)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def auto_reset(env: Env) -> Callable[[State, Array, PRNGKey], State]:
    """``step`` that starts a new game as soon as one ends.

    The returned state is the fresh game's first state, carrying the rewards of the step that
    ended the old game; a new episode is recognisable by ``step_count == 0``.
    """

    def step(state: State, action: Array, key: PRNGKey) -> State:
        step_key, reset_key = rng.split(key, 2)
        new = env.step(state, action, step_key)
        done = new.terminated | new.truncated
        fresh = env.reset(reset_key, new).replace(rewards=new.rewards)
        return _select(done, fresh, new)

    return step


def random_legal_action(state: State, key: PRNGKey) -> Array:
    """A uniformly random legal action: int32 [] (action 0 if none is legal).

    The k-th legal action for one random word k: a cumulative sum, not a categorical draw,
    because the draw's float work and key handling cost more than a cheap game's whole step.
    The bias is below num_actions / 2**32."""
    mask = state.legal_action_mask
    count = mask.sum(dtype=jnp.uint32)
    k = rng.random_words(key, 1)[0] % jnp.maximum(count, 1)
    return jnp.argmax(jnp.cumsum(mask, dtype=jnp.uint32) > k).astype(jnp.int32)


def random_policy(params: Any, state: State, key: PRNGKey) -> Array:
    """The uniformly random legal player as a :data:`Policy` (``params`` unused)."""
    del params
    return random_legal_action(state, key)
