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
