"""The game contract shared by every jaxgames environment.

Every game is a pure state-transition function over an immutable pytree ``State``:

    env = jaxgames.make("ten_half")
    state = env.init(key)
    state = env.step(state, action, key)
    obs = env.observe(state, player_id)

The step contract, identical for every game (enforced here, in :meth:`Env.step`, so no game
can get it wrong):

* stepping a finished game (``terminated | truncated``) is a no-op that returns zero rewards;
* an illegal action ends the game at once, the position left as it was: the player who chose
  it receives ``illegal_action_penalty`` and every other player ``-penalty / (num_players - 1)``;
* at a terminal state ``legal_action_mask`` is all True, so batched sampling from a masked
  distribution never sees an empty mask;
* actions are integers: a float, a string, a batched action on an unbatched state or the state
  of another game is refused with an error that says so (at trace time: it costs nothing);
* keys are passed in and consumed, never stored in the state; a stochastic game's ``step``
  refuses to run without one.

``CHANCE_PLAYER`` (-1) has one meaning: the ``current_player`` of an *afterstate*, a state
where chance moves next. Such states come only from :meth:`Env.afterstate` and are resolved
by :meth:`Env.apply_chance`; ``init`` and ``step`` never return one (``api_test`` checks), so
players, the arena and learners only ever see a seat ``0 .. num_players - 1`` to move. Games
whose chance happens inside a move (a dealer's draws, a deal) do it inside ``step``.

Games implement ``_init``, ``_step`` (legal, unfinished states only) and ``_observe``.
Stochastic games may expose their chance step (``afterstate``, ``chance_outcomes``,
``apply_chance``); imperfect-information games expose ``sample_world``.
"""

from __future__ import annotations

import abc
import functools
from typing import Any, Callable, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import rng

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

    # -- the contract -------------------------------------------------------------------------

    def init(self, key: PRNGKey) -> State:
        state = self._init(key)
        return state.replace(observation=self.observe(state, state.current_player))

    def step(self, state: State, action: Array, key: PRNGKey | None = None) -> State:
        """One move. ``action`` int []; ``key`` feeds whatever chance the move triggers."""
        action = self._check_step_inputs(state, action)
        if key is None:
            if self.stochastic:
                raise ValueError(
                    f"{self.id} is stochastic: step(state, action, key) needs a key, or every "
                    f"move would draw the same chance outcome")
            key = jax.random.key(0)  # never read: the game has no chance
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
        return new.replace(observation=self.observe(new, new.current_player))

    def reset(self, key: PRNGKey, previous: State) -> State:
        """The next game of a sequence, after ``previous`` ended (default: a fresh ``init``).

        Games whose sequence carries something from game to game override it (hold'em moves
        the button); :func:`auto_reset` starts every new game through it.
        """
        del previous
        return self.init(key)

    def observe(self, state: State, player_id: Array | int | None = None) -> Any:
        """What ``player_id`` sees (default: the player to move)."""
        if player_id is None:
            player_id = state.current_player
        return jax.tree_util.tree_map(
            jax.lax.stop_gradient, self._observe(state, jnp.asarray(player_id, jnp.int32)))

    def observe_all(self, state: State) -> Any:
        """Every seat's observation, stacked: each leaf ``[num_players, ...]``."""
        return jax.vmap(lambda p: self.observe(state, p))(jnp.arange(self.num_players, dtype=jnp.int32))

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
        return rollout(self, state, random_policy, key).returns

    @functools.cached_property
    def _abstract_state(self) -> State:
        return jax.eval_shape(self.init, jax.random.key(0))

    def _check_step_inputs(self, state: State, action: Any) -> Array:
        """Refuse what would otherwise be silently truncated or broadcast (trace time only)."""
        if isinstance(action, (str, bytes, float, complex)):
            raise TypeError(f"{self.id}: actions are integers, got {type(action).__name__} {action!r}")
        dtype = getattr(action, "dtype", None)
        if dtype is not None and not (jnp.issubdtype(dtype, jnp.integer)):
            raise TypeError(f"{self.id}: actions are integers, got an array of {dtype}")
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
        apart give the same sample for the same key (``api_test`` checks both)."""
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


# -- the one game loop ---------------------------------------------------------------------------


@chex.dataclass(frozen=True)
class Rollout:
    state: State        # the final state
    returns: Array      # float32 [num_players]  rewards summed from the start state on
    steps: Array        # int32 []  moves played


def rollout(env: Env, state: State, policy: Policy, key: PRNGKey, *, params: Any = None,
            max_steps: int | None = None, chance_key: PRNGKey | None = None) -> Rollout:
    """Play ``policy`` from ``state`` to the end of the game, or ``max_steps`` moves.

    One unbatched game (vmap it); a ``lax.while_loop``, so games of any length cost only the
    moves they play. ``policy(params, state, key)`` moves for whoever is to play (a policy
    that seats several players reads ``state.current_player``). With ``chance_key`` the chance
    of the move at ``step_count`` t is ``fold_in(chance_key, t)`` whatever the players do (the
    arena shares it across seat rotations: duplicate play); otherwise it comes from ``key``.
    The start state's own rewards are not counted. Every game loop of the project is this one
    (:func:`rollout_seated` is its batched form for several policies in the seats).
    """
    limit = max_steps if max_steps is not None else (env.max_steps or 100_000)

    def cond(carry):
        state, _, t, _ = carry
        return ~(state.terminated | state.truncated) & (t < limit)

    def body(carry):
        state, k, t, ret = carry
        k, k_act, k_chance = rng.split(k, 3)
        if chance_key is not None:
            k_chance = jax.random.fold_in(chance_key, state.step_count)
        action = policy(params, state, k_act)
        state = env.step(state, action, k_chance)
        return state, k, t + 1, ret + state.rewards

    ret = jnp.zeros(env.num_players, jnp.float32)
    state, _, steps, ret = jax.lax.while_loop(cond, body, (state, key, jnp.int32(0), ret))
    return Rollout(state=state, returns=ret, steps=steps)


def rollout_seated(env: Env, states: State, policies: Sequence[Policy], seats: Array, keys: PRNGKey, *,
                   params: Sequence[Any], max_steps: int | None = None,
                   chance_keys: PRNGKey | None = None) -> Rollout:
    """:func:`rollout` of a batch of games whose seats several policies hold, each policy
    evaluated only on the games where it is to move.

    ``states`` [G] (batched), ``seats`` int32 [G, num_players] (the policy in each seat of
    each game), ``keys`` [G] and ``chance_keys`` [G] (or None) as :func:`rollout`'s, one per game;
    ``params[i]`` are policy ``i``'s. Every game gets what ``vmap`` of :func:`rollout` with the
    policy ``policies[seats[g, state.current_player]]`` gives it: the same moves from the same
    keys, the same chance, the same returns and step counts (tested). What differs is the work:
    under ``vmap`` every policy would decide for every game at every step and a select keep
    the mover's, so a match of two searches paid for both at each move. Here the games where
    policy ``i`` moves are gathered, in chunks of ``ceil(G / len(policies))``, as many chunks
    as it has movers that step; with two policies rotated over the seats of a game whose
    players alternate (Hex), each policy searches exactly half the batch.
    """
    num_games = seats.shape[0]
    limit = max_steps if max_steps is not None else (env.max_steps or 100_000)
    chunk = -(-num_games // len(policies))
    chunks = -(-num_games // chunk)

    def decide(states, act_keys, live):
        if len(policies) == 1:
            return jax.vmap(policies[0], in_axes=(None, 0, 0))(params[0], states, act_keys)
        mover = jnp.take_along_axis(seats, (states.current_player % seats.shape[1])[:, None], axis=1)[:, 0]
        actions = jnp.zeros(num_games, jnp.int32)
        for i, policy in enumerate(policies):
            moves = live & (mover == i)
            count = moves.sum(dtype=jnp.int32)
            # the movers first, then the rest: chunk j takes places j*chunk .. (j+1)*chunk - 1
            order = jnp.argsort(~moves, stable=True)
            order = jnp.concatenate([order, order[: chunks * chunk - num_games]])

            def one_chunk(j, actions, i=i, policy=policy, order=order, count=count):
                idx = jax.lax.dynamic_slice(order, (j * chunk,), (chunk,))
                picked = jax.tree_util.tree_map(lambda x: x[idx], (states, act_keys))
                a = jax.vmap(policy, in_axes=(None, 0, 0))(params[i], *picked)
                if not jnp.issubdtype(a.dtype, jnp.integer):   # the contract env.step enforces
                    raise TypeError(f"{env.id}: actions are integers, got an array of {a.dtype} "
                                    f"from policy {i}")
                keep = j * chunk + jnp.arange(chunk) < count
                return actions.at[jnp.where(keep, idx, num_games)].set(a, mode="drop")

            actions = jax.lax.fori_loop(0, (count + chunk - 1) // chunk, one_chunk, actions)
        return actions

    def cond(carry):
        states, _, t, _, _ = carry
        return jnp.any(~(states.terminated | states.truncated)) & (t < limit)

    def body(carry):
        states, k, t, ret, steps = carry
        live = ~(states.terminated | states.truncated)
        k, k_act, k_chance = jax.vmap(lambda key: rng.split(key, 3), out_axes=1)(k)
        if chance_keys is not None:
            k_chance = jax.vmap(jax.random.fold_in)(chance_keys, states.step_count)
        actions = decide(states, k_act, live)
        stepped = jax.vmap(env.step)(states, actions, k_chance)
        states = jax.vmap(_select)(live, stepped, states)
        ret = ret + jnp.where(live[:, None], stepped.rewards, 0.0)
        return states, k, t + 1, ret, steps + live

    ret = jnp.zeros((num_games, env.num_players), jnp.float32)
    steps = jnp.zeros(num_games, jnp.int32)
    states, _, _, ret, steps = jax.lax.while_loop(cond, body, (states, keys, jnp.int32(0), ret, steps))
    return Rollout(state=states, returns=ret, steps=steps)


# -- the shared contract test ----------------------------------------------------------------


def api_test(env: Env, *, num_games: int = 16, max_steps: int = 2000, seed: int = 0,
             num_probes: int = 3) -> None:
    """Check that ``env`` keeps the contract. Raises AssertionError on the first violation.

    Dtypes and shapes (``observation_spec``, ``observe_all``); random play to the end, single
    and vmapped; the finished-game no-op; illegal-action termination and penalty; all-True
    mask at terminal states; integer actions only; a stochastic ``step`` refuses to run
    without a key; the chance step (probabilities sum to 1, every outcome a valid state,
    ``step`` equal to one of them) and ``sample_world`` (consistent with what the player saw,
    reading nothing else) on ``num_probes`` states of a game; no recompile on a second call
    (``chex.assert_max_traces``); same key, same game.
    """
    chex.clear_trace_counter()  # the counter is global: earlier api_test calls must not count
    key = jax.random.key(seed)
    init = jax.jit(chex.assert_max_traces(env.init, n=1))
    step = jax.jit(chex.assert_max_traces(env.step, n=1))
    state = init(key)
    _check_state(env, state)
    chex.assert_trees_all_equal_shapes_and_dtypes(env.observation_spec, state.observation)
    all_obs = jax.jit(env.observe_all)(state)
    chex.assert_trees_all_equal_shapes_and_dtypes(
        all_obs, jax.tree_util.tree_map(
            lambda s: jax.ShapeDtypeStruct((env.num_players, *s.shape), s.dtype), env.observation_spec))

    # Random play, one game, to the end; checks the invariants at every step and keeps a few
    # states for the chance and hidden-information checks.
    k = key
    visited = [state]
    for _ in range(max_steps):
        if bool(state.terminated | state.truncated):
            break
        k, ka, ks = jax.random.split(k, 3)
        assert bool(state.legal_action_mask.any()), "no legal action in a live state"
        state = step(state, random_legal_action(state, ka), ks)
        _check_state(env, state)
        visited.append(state)
    assert bool(state.terminated | state.truncated), f"game did not end in {max_steps} steps"
    assert bool(state.legal_action_mask.all()), "terminal mask must be all True"
    live = [s for s in visited if not bool(s.terminated | s.truncated)]
    probes = [live[i] for i in np.linspace(0, len(live) - 1, min(num_probes, len(live))).astype(int)]

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
    mover = int(fresh.current_player)
    assert float(punished.rewards[mover]) == env.illegal_action_penalty, "illegal-action penalty"

    # Inputs that would otherwise be silently converted are refused.
    for wrong in (0.0, jnp.float32(1.0), "1"):
        try:
            env.step(fresh, wrong, key)
        except TypeError:
            pass
        else:
            raise AssertionError(f"step accepted the non-integer action {wrong!r}")
    if env.stochastic:
        try:
            env.step(fresh, jnp.argmax(fresh.legal_action_mask))
        except ValueError:
            pass
        else:
            raise AssertionError("a stochastic step ran without a key")

    if env.has_chance_step:
        _check_chance_step(env, probes, key)
    if not env.perfect_information:
        _check_sample_world(env, probes, key)

    # Vmapped random play: every game ends, shapes carry a batch axis, no recompiles.
    keys = jax.random.split(key, num_games)
    play = jax.jit(jax.vmap(chex.assert_max_traces(
        lambda k: _random_game(env, k, max_steps), n=1)))
    final = play(keys)
    assert final.rewards.shape == (num_games, env.num_players)
    assert bool((final.terminated | final.truncated).all()), "vmapped games did not end"
    play(jax.random.split(jax.random.key(seed + 1), num_games))  # raises if it retraces
    step(fresh, jnp.int32(bad), jax.random.key(seed + 2))

    # Determinism: the same key plays the same game.
    again = play(keys)
    chex.assert_trees_all_equal(final, again)


def _random_game(env: Env, key: PRNGKey, max_steps: int) -> State:
    init_key, play_key = jax.random.split(key)
    return rollout(env, env.init(init_key), random_policy, play_key, max_steps=max_steps).state


def _check_chance_step(env: Env, probes: list[State], key: PRNGKey) -> None:
    """afterstate -> chance_outcomes -> apply_chance composes to ``step``."""

    @jax.jit
    def expand(state, action, key):
        after, reward = env.afterstate(state, action)
        outcomes, probs = env.chance_outcomes(after)
        children = jax.vmap(lambda o: env.apply_chance(after, o))(outcomes)
        return after, reward, probs, children, env.step(state, action, key)

    for i, state in enumerate(probes):
        for action in np.flatnonzero(np.asarray(state.legal_action_mask)):
            after, reward, probs, children, stepped = expand(
                state, jnp.int32(action), jax.random.fold_in(key, i))
            assert int(after.current_player) == CHANCE_PLAYER, "an afterstate's player is CHANCE_PLAYER"
            probs = np.asarray(probs, np.float64)
            assert (probs >= 0).all() and abs(probs.sum() - 1.0) < 1e-5, \
                f"chance probabilities sum to {probs.sum()}"
            possible = np.flatnonzero(probs > 0)
            for o in possible:
                _check_state(env, jax.tree_util.tree_map(lambda x: x[o], children))
            same = [all(np.array_equal(a[o], b) for a, b in zip(
                jax.tree_util.tree_leaves(children), jax.tree_util.tree_leaves(stepped)))
                for o in possible]
            assert any(same), f"step(state, {action}) is none of apply_chance(afterstate, o)"
            np.testing.assert_allclose(np.asarray(stepped.rewards).sum(), float(reward), rtol=1e-6,
                                       err_msg="afterstate reward differs from step's")


def _check_sample_world(env: Env, probes: list[State], key: PRNGKey, num_samples: int = 16) -> None:
    """A sampled world looks the same to the player, reads only what the player knows, and
    is not simply the real state (which would leak every hidden card to a PIMC player)."""
    sample = jax.jit(jax.vmap(env.sample_world, in_axes=(None, None, 0)))
    observe = jax.jit(env.observe)
    redealt = False
    for i, state in enumerate(probes):
        for p in range(env.num_players):
            keys = jax.random.split(jax.random.fold_in(key, 100 * i + p), num_samples)
            worlds = sample(state, jnp.int32(p), keys)
            for w in range(num_samples):
                world = jax.tree_util.tree_map(lambda x: x[w], worlds)
                _check_state(env, world)
                chex.assert_trees_all_equal(observe(world, p), observe(state, p))
                redealt |= any(not np.array_equal(a, b) for a, b in zip(
                    jax.tree_util.tree_leaves(world), jax.tree_util.tree_leaves(state)))
            # A state p cannot tell from ``state`` (another sample) gives the same worlds.
            twin = jax.tree_util.tree_map(lambda x: x[-1], worlds)
            chex.assert_trees_all_equal(sample(twin, jnp.int32(p), keys), worlds)
    assert redealt, "sample_world returned the real state every time: it must redeal what the player cannot see"


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
    assert 0 <= cp < env.num_players, f"current_player {cp}: init and step return decision states"
    obs = env.observe(state, cp)
    chex.assert_trees_all_equal_shapes_and_dtypes(obs, state.observation)
    chex.assert_trees_all_equal_shapes_and_dtypes(obs, env.observation_spec)
