"""max^n search (jaxgames.search.maxn) against a plain recursive Python max^n over env.step.

The game is the toy trick game (3 players, 12 cards, tricks: tests/search/toy_trick_game.py).
Every search configuration is jitted once for the module (``chex.assert_max_traces``) and run
on one batch of positions taken from random games (start, mid-trick, last trick, finished).
The leaf evaluation is a hand-made function of the full state with dyadic weights, so every
value is exact in float32 and the comparisons are exact, ties included.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import search
from jaxgames.search import maxn
from toy_trick_game import TrickGame, card_value, reference_maxn, trick_done

ENV = TrickGame()
NUM_PLAYERS = ENV.num_players
value_fn = card_value

# The source's shape (to the end of the trick, with a leaf value), a rewards-only search, and a
# narrow deep one that cuts branches (a leaf value, no stop).
CONFIGS = {
    "trick": dict(depth=4, max_branching=4, value_fn=value_fn, stop=trick_done),
    "plain": dict(depth=1, max_branching=4),
    "narrow": dict(depth=6, max_branching=2, value_fn=value_fn),
}


def _batched_search(name):
    """Jitted ``(states [4, N/4], params [4, N/4]) -> (MaxnOutput, policy actions, action
    values)`` [4, N/4] of one configuration, traced once: a vmap of a vmap with params per
    position, which the search's vmap rule folds into one batch of N. The policy and the action
    values (maxn_policy and maxn_action_values, thin wrappers of the search) are compiled for
    the plain search only: each is a program of its own."""
    cfg = CONFIGS[name]
    policy, values = maxn.maxn_policy(ENV, **cfg), maxn.maxn_action_values(ENV, **cfg)

    def search(state, params):
        out = maxn.maxn_search(ENV, state, params, **cfg)
        if name != "plain":
            return out, out.action, out.own_values
        return out, policy(params, state, jax.random.key(0)), values(params, state)
    search.__name__ = f"search_{name}"   # chex counts traces per function name and source
    batched = jax.jit(jax.vmap(jax.vmap(chex.assert_max_traces(search, n=1))))

    def run(states, params):
        """(states [N], params [N]) -> outputs [N]"""
        split = lambda x: x.reshape((4, -1) + x.shape[1:])  # noqa: E731
        out = batched(jax.tree_util.tree_map(split, states), split(params))
        return jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), out)
    return run


_SEARCH = {name: _batched_search(name) for name in CONFIGS}
_step = jax.jit(ENV.step)
_init = jax.jit(ENV.init)


def _positions(seed: int, moves: tuple[int, ...]) -> list:
    """States after each of ``moves`` random legal moves of a few random deals."""
    gen = np.random.default_rng(seed)
    out = []
    for deal in range(4):
        state = _init(jax.random.key(1000 * seed + deal))
        for t in range(max(moves) + 1):
            if t in moves:
                out.append(state)
            if bool(state.terminated):
                break
            state = _step(state, jnp.int32(gen.choice(np.flatnonzero(np.asarray(state.legal_action_mask)))))
    return out


def _stack(states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


ONE = jnp.float32(1.0)    # params of value_fn: a scale
POSITIONS = _positions(0, (0, 1, 2, 4, 8, 10, 12))       # 28 positions, 4 of them finished
OTHERS = _positions(1, (0, 1, 2, 4, 8, 10, 12))          # same shapes, other deals
N = len(POSITIONS)
ONES = jnp.ones(N, jnp.float32)
SCALES = jnp.asarray(1.0 + np.arange(N) % 3, jnp.float32)   # value_fn's params, per position


def _check_against_reference(name, states, out, params=ONES):
    cfg = CONFIGS[name]
    out = jax.tree_util.tree_map(np.asarray, out)
    for i, state in enumerate(states):
        q, overflow = reference_maxn(ENV, state, params=params[i], **cfg)
        np.testing.assert_array_equal(out.action_values[i], q, err_msg=f"{name} position {i}")
        assert bool(out.overflow[i]) == overflow, f"{name} position {i}: overflow"
        mover = int(state.current_player)
        own = np.where(np.isnan(q[:, mover]), -np.inf, q[:, mover])
        np.testing.assert_array_equal(out.own_values[i], own)
        if bool(state.terminated):
            assert int(out.action[i]) == 0 and not out.value[i].any()
        else:
            best = int(np.argmax(own))                     # first maximum: the lowest id
            assert int(out.action[i]) == best, f"{name} position {i}: action"
            np.testing.assert_array_equal(out.value[i], q[best])


@pytest.fixture(scope="module")
def results():
    return {name: _SEARCH[name](_stack(POSITIONS), ONES)[0] for name in CONFIGS}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_matches_brute_force(name, results):
    _check_against_reference(name, POSITIONS, results[name])


def test_batch_covers_the_cases(results):
    """The positions exercise what the comparison is meant to cover."""
    trick, narrow = results["trick"], results["narrow"]
    finished = np.array([bool(s.terminated) for s in POSITIONS])
    assert 0 < finished.sum() < len(POSITIONS)
    searched = np.isfinite(np.asarray(trick.own_values))
    # more than one searched move, and ties for the mover among them (the tie rule matters)
    ties = [(row[m] == row[m].max()).sum() > 1
            for row, m in zip(np.asarray(trick.own_values), searched) if m.sum() > 1]
    assert any(ties) and not all(ties)
    # the narrow search cut branches somewhere but not everywhere
    assert 0 < np.asarray(narrow.overflow).sum() < len(POSITIONS) - finished.sum()
    assert not np.asarray(trick.overflow).any()     # 4 cards per hand: B = 4 is exact


def test_no_recompile_and_params_flow():
    """Other positions and other params reuse the compiled search; each position's params
    reach value_fn (the vmap rule folds a vmap of a vmap, params batched, into one batch)."""
    out = _SEARCH["trick"](_stack(OTHERS), SCALES)[0]
    _check_against_reference("trick", OTHERS, out, params=SCALES)


def test_hand_worked_end_game():
    """Two tricks left; seat 0 leads, holding H2 (card 2) and S0 (card 3); seat 1 holds H0
    (0) and the queen (10, 3 points); seat 2 holds H1 (1) and S1 (4).

    Lead H2: everyone follows hearts, seat 0 takes 3; then S0, seat 1 dumps the queen, S1
    wins: seat 2 takes 3.  -> (-3, 0, -3).
    Lead S0: seat 2 wins with S1 and leads H1 next, which seat 0's H2 wins. Seat 1, void in
    spades, scores 0 whichever card it dumps: a tie, broken to the lowest id, H0: seat 2
    takes 1, then seat 0 takes H1 + H2 + the queen = 5.  -> (-5, 0, -1).
    Seat 0 prefers -3: leads H2.
    """
    holder = np.full(12, 0)
    holder[[2, 3]], holder[[0, 10]], holder[[1, 4]] = 0, 1, 2
    played = np.ones(12, bool)
    played[[0, 1, 2, 3, 4, 10]] = False
    holder[played] = np.arange(12)[played] % 3             # played cards: any seat, points 0
    state = ENV.from_holder(holder, played=played, leader=0)
    out = jax.tree_util.tree_map(lambda x: np.asarray(x[0]), _SEARCH["narrow"](_stack([state] * N), ONES)[0])
    np.testing.assert_array_equal(out.action_values[2], [-3, 0, -3])
    np.testing.assert_array_equal(out.action_values[3], [-5, 0, -1])
    assert np.isnan(out.action_values[[0, 1, 4, 10]]).all()
    assert int(out.action) == 2 and not bool(out.overflow)
    np.testing.assert_array_equal(out.value, [-3, 0, -3])


def test_policy_and_action_values_agree_with_search():
    out, actions, own = _SEARCH["plain"](_stack(POSITIONS), ONES)
    np.testing.assert_array_equal(actions, out.action)
    np.testing.assert_array_equal(own, out.own_values)


def test_exports():
    assert search.maxn_search is maxn.maxn_search and "maxn_policy" in search.__all__


@pytest.mark.parametrize("kwargs, message", [
    (dict(depth=0, max_branching=4), "depth must be an integer >= 1"),
    (dict(depth=2.0, max_branching=4), "depth must be an integer >= 1"),
    (dict(depth=True, max_branching=4), "depth must be an integer >= 1"),
    (dict(depth=2, max_branching=0), "max_branching must be an integer >= 1"),
    (dict(depth=2, max_branching=13), "exceeds toy_trick's 12 actions"),
    (dict(depth=9, max_branching=12), "too large"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        maxn.maxn_policy(ENV, **kwargs)
    with pytest.raises(ValueError, match=message):
        maxn.maxn_search(ENV, POSITIONS[0], **kwargs)

