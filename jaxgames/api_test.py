"""The shared contract test: ``api_test(env)`` checks that a game keeps the contract of
:mod:`jaxgames.core`.

Every game's tests call it, so the step contract, the chance step and ``sample_world`` are
verified the same way for every game, beside the game's own hand-worked positions. It lives
apart from :mod:`jaxgames.core` because it is test machinery: players and learners never
need it.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import CHANCE_PLAYER, Env, PRNGKey, State, random_legal_action, random_policy
from jaxgames.rollout import rollout

__all__ = ["api_test"]


def api_test(env: Env, *, num_games: int = 16, max_steps: int = 2000, seed: int = 0,
             num_probes: int = 3) -> None:
    """Check that ``env`` keeps the contract. Raises AssertionError on the first violation.

    Dtypes and shapes (``observation_spec``, ``observe_all``); random play to the end, single
    and vmapped; the finished-game no-op; illegal-action termination and penalty (a traced
    out-of-range action included); all-True mask at terminal states; integer actions only
    (floats, bools and Python ints outside int32 refused, in ``step`` and ``afterstate``); a
    stochastic ``step`` refuses to run without a key; ``init`` takes a typed key, a raw key and
    an integer seed alike and refuses anything else; seats outside ``0 .. num_players - 1``
    (``observe``, ``sample_world``): a ValueError when known at trace time, and traced, the
    blank observation / world, which read nothing of the state; the chance step
    (probabilities sum to 1, every outcome a valid state, ``step`` equal to one of them) and
    ``sample_world`` (consistent with what the player saw, reading nothing else) on
    ``num_probes`` states of a game; no recompile on a second call
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

    # A traced action out of range, however far, is an illegal action like any other.
    for far in (-1, 2**31 - 1):
        punished = step(fresh, jnp.int32(far), key)
        assert bool(punished.terminated), f"the traced action {far} must end the game"
        assert float(punished.rewards[mover]) == env.illegal_action_penalty, "illegal-action penalty"

    # Inputs that would otherwise be silently converted are refused.
    _check_refused_actions(env, fresh, key)
    if env.stochastic:
        try:
            env.step(fresh, jnp.argmax(fresh.legal_action_mask))
        except ValueError:
            pass
        else:
            raise AssertionError("a stochastic step ran without a key")

    _check_keys(env, seed)
    others = [fresh, init(jax.random.fold_in(key, 1)), *probes, state]
    _check_seats(env, others, key)

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


def _raises(error: type, call, what: str) -> None:
    try:
        call()
    except error:
        pass
    else:
        raise AssertionError(f"{what}: expected a {error.__name__}")


def _check_refused_actions(env: Env, state: State, key: PRNGKey) -> None:
    """Floats, bools and strings are TypeErrors, integers that do not fit an int32
    ValueErrors, in ``step`` and (where the game has it) ``afterstate``."""
    methods = [("step", lambda a: env.step(state, a, key))]
    if env.has_chance_step:
        methods.append(("afterstate", lambda a: env.afterstate(state, a)))
    for name, call in methods:
        for wrong in (0.0, jnp.float32(1.0), "1", True, False, np.bool_(True), jnp.bool_(True)):
            _raises(TypeError, lambda: call(wrong), f"{name} with the action {wrong!r}")
        for wrong in (2**40, -2**40, 2**31, np.int64(2**40)):
            _raises(ValueError, lambda: call(wrong), f"{name} with the action {wrong!r}")


def _check_keys(env: Env, seed: int) -> None:
    """``init`` takes a typed key, the raw key of the same seed and the seed itself, single
    or vmapped, and gives the same state from each; anything else is refused."""
    typed, raw = jax.random.key(seed + 3), jax.random.PRNGKey(seed + 3)

    @jax.jit
    def inits(typed, raw):
        return (env.init(typed), env.init(raw), env.init(seed + 3),
                jax.vmap(env.init)(jax.random.split(typed, 2)),
                jax.vmap(env.init)(jax.random.split(raw, 2)),
                jax.vmap(env.init)(jnp.arange(seed + 3, seed + 5, dtype=jnp.uint32)))

    one_typed, one_raw, one_seed, two_typed, two_raw, two_seeds = inits(typed, raw)
    _check_state(env, one_typed)
    chex.assert_trees_all_equal(one_raw, one_typed)
    chex.assert_trees_all_equal(one_seed, one_typed)
    chex.assert_trees_all_equal(two_raw, two_typed)
    chex.assert_trees_all_equal(jax.tree_util.tree_map(lambda x: x[0], two_seeds), one_typed)
    for wrong in (None, 0.5, True, "0", jnp.zeros(3, jnp.float32), jnp.zeros((2, 2), jnp.int32)):
        _raises(TypeError, lambda: env.init(wrong), f"init with the key {wrong!r}")
    for wrong in (-1, 2**32):
        _raises(ValueError, lambda: env.init(wrong), f"init with the seed {wrong!r}")


def _check_seats(env: Env, states: list[State], key: PRNGKey) -> None:
    """A seat outside ``0 .. num_players - 1`` known at trace time is a ValueError (a bool a
    TypeError); a traced one gets the blank observation and world, the same whatever the
    state: nothing of the state, hidden or not, reaches the caller."""
    n = env.num_players
    out_of_range = (-1, n, 2**31 - 1)
    state = states[0]
    for bad in (*out_of_range, np.int64(n), jnp.int32(n), 2**40):
        _raises(ValueError, lambda: env.observe(state, bad), f"observe with the seat {bad!r}")
        if not env.perfect_information:
            _raises(ValueError, lambda: env.sample_world(state, bad, key),
                    f"sample_world with the seat {bad!r}")
    for bad in (True, np.bool_(False), 0.0):
        _raises(TypeError, lambda: env.observe(state, bad), f"observe with the seat {bad!r}")
        if not env.perfect_information:
            _raises(TypeError, lambda: env.sample_world(state, bad, key),
                    f"sample_world with the seat {bad!r}")

    observe = jax.jit(env.observe)
    seen = [jax.tree_util.tree_leaves(observe(s, jnp.int32(0))) for s in states]
    assert any(any(not np.array_equal(a, b) for a, b in zip(seen[0], other)) for other in seen[1:]), \
        "the states given to the seat check all look alike: it would prove nothing"
    blank = env.blank_observation
    chex.assert_trees_all_equal_shapes_and_dtypes(blank, env.observation_spec)
    # Every seat in one vmap (a batched seat: the traced path) and the out-of-range ones after.
    seats = jnp.asarray([*range(n), *out_of_range], jnp.int32)
    observe_seats = jax.jit(jax.vmap(env.observe, in_axes=(None, 0)))
    for s in states:
        for bad in out_of_range:
            chex.assert_trees_all_equal(observe(s, jnp.int32(bad)), blank)
        views = observe_seats(s, seats)
        chex.assert_trees_all_equal(jax.tree_util.tree_map(lambda x: x[:n], views), env.observe_all(s))
        for i in range(n, len(seats)):
            chex.assert_trees_all_equal(jax.tree_util.tree_map(lambda x: x[i], views), blank)

    if env.perfect_information:
        return
    sample_seats = jax.jit(jax.vmap(env.sample_world, in_axes=(None, 0, None)))
    for s in [s for s in states if not bool(s.terminated | s.truncated)]:
        worlds = sample_seats(s, seats, key)
        for i in range(len(seats)):
            world = jax.tree_util.tree_map(lambda x: x[i], worlds)
            if i < n:  # a seat's own world: what it sees is kept
                chex.assert_trees_all_equal(observe(world, seats[i]), observe(s, seats[i]))
            else:
                chex.assert_trees_all_equal(world, env.blank_world)


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
