"""The one game loop: chance keys, and the batched seated form against vmap of the plain one."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from bench.arena import every_policy_rollout
from jaxgames import arena


def test_rollout_shares_chance_when_given_a_chance_key():
    env = jaxgames.make("ten_half")
    always_hit = lambda params, state, key: jnp.int32(1)  # noqa: E731
    start = env.init(jax.random.key(0))
    play = jax.jit(jax.vmap(lambda k, c: jaxgames.rollout(env, start, always_hit, k, chance_key=c)))
    keys = jax.random.split(jax.random.key(1), 20)
    chance = jnp.stack([jax.random.key(5)] * 20)
    shared = play(keys, chance)
    # the same chance key and a deterministic player: the very same game whatever the key
    np.testing.assert_array_equal(shared.state.player_sum, shared.state.player_sum[0])
    free = jax.jit(jax.vmap(lambda k: jaxgames.rollout(env, start, always_hit, k)))(keys)
    assert len(set(np.asarray(free.state.player_sum).tolist())) > 1
    assert (np.asarray(shared.steps) >= 1).all()


def first_legal(params, state, key):
    return jnp.argmax(state.legal_action_mask).astype(jnp.int32)


def last_legal(params, state, key):
    mask = state.legal_action_mask
    return (mask.shape[0] - 1 - jnp.argmax(mask[::-1])).astype(jnp.int32)


@pytest.mark.parametrize("game,options,policies,seatings,max_steps,duplicate", [
    ("hex", {"board_size": 5}, (jaxgames.random_policy, first_legal), arena.rotations(2), None, False),
    ("hex", {"board_size": 5}, (jaxgames.random_policy, first_legal), arena.rotations(2), 7, False),
    ("hearts", {}, (jaxgames.random_policy, first_legal), arena.mixed_seatings(4, 2), None, False),
    ("holdem", {}, (jaxgames.random_policy, first_legal, last_legal), arena.rotations(3)[:, :2], None, True),
    ("hex", {"board_size": 4}, (jaxgames.random_policy,), np.zeros((1, 2), np.int32), None, False),
])
def test_rollout_seated_is_vmapped_rollout_of_the_movers_policy(game, options, policies, seatings,
                                                                max_steps, duplicate):
    """Each policy decides only where it moves, yet every game is the one ``vmap(rollout)``
    plays with the mover's policy: same states, returns and step counts (Hex alternates, the
    Hearts mixed seatings and hold'em's streets do not; with and without shared chance)."""
    env = jaxgames.make(game, **options)
    seats = jnp.asarray(np.repeat(seatings, 3, axis=0))
    num_games = seats.shape[0]
    init_keys = jax.random.split(jax.random.key(3), num_games)
    keys = jax.random.split(jax.random.key(4), num_games)
    chance = jax.random.split(jax.random.key(5), num_games) if duplicate else None
    params = [None] * len(policies)
    want = jax.jit(lambda: every_policy_rollout(env, policies, seats, init_keys, keys, params=params,
                                                max_steps=max_steps, chance_keys=chance))()
    got = jax.jit(lambda: jaxgames.rollout_seated(
        env, jax.vmap(env.init)(init_keys), policies, seats, keys, params=params, max_steps=max_steps,
        chance_keys=chance))()
    chex.assert_trees_all_equal(got, want)
    assert int(want.steps.min()) > 0
    if max_steps is not None:
        assert int(want.steps.max()) == max_steps
