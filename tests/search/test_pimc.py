"""PIMC (jaxgames.search.pimc) on the toy trick game: the worlds, the average, honesty, strength.

The toy game's ``sample_world`` is checked first (uniform over the consistent deals, which are
enumerated in Python; the seat's view and the public state kept; the same worlds from a state
the seat cannot tell apart), because PIMC is only as good as its worlds. PIMC's average is then
compared with the exact mean over every consistent deal (enumerated, each searched by the plain
recursive reference): it must agree within a few standard errors, and every world's values must
be those of one of the deals. Randomness is only asserted through such statistics and
invariants.
"""

from __future__ import annotations

import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import arena
from jaxgames.search import maxn, pimc
from toy_tictactoe import TicTacToe
from toy_trick_game import NUM_CARDS, SUIT, TrickGame, card_value, reference_maxn, trick_done

ENV = TrickGame()
ONE = jnp.float32(1.0)
# the source's IIE in small: max^n to the end of the current trick in each world
CFG = dict(depth=3, max_branching=4, value_fn=card_value, stop=trick_done)
SEARCH = maxn.maxn_action_values(ENV, **CFG)
NUM_WORLDS = 64
NUM_SAMPLES = 2000  # batch of _SAMPLE, always


def _pimc(state, key, params):
    return pimc.pimc_search(ENV, state, key, SEARCH, num_worlds=NUM_WORLDS, params=params)


_PIMC = jax.jit(chex.assert_max_traces(_pimc, n=1))
_SAMPLE = jax.jit(jax.vmap(chex.assert_max_traces(ENV.sample_world, n=1), in_axes=(None, None, 0)))
_OBSERVE = jax.jit(jax.vmap(ENV.observe, in_axes=(0, None)))
_step = jax.jit(ENV.step)
_init = jax.jit(ENV.init)


def _after_one_trick():
    """Seat 0 holds 2 3 7 11, seat 1 holds 1 4 5 9, seat 2 holds 0 6 8 10. Trick 1: seat 0
    leads 3 (suit 1), seat 1 plays 4 (suit 1) and wins it, seat 2 has no suit-1 card and
    plays 0 (a heart): seat 2 is publicly void in suit 1. Seat 1 leads next."""
    holder = np.array([2, 1, 0, 0, 1, 1, 2, 0, 2, 1, 2, 0])
    state = ENV.from_holder(holder)
    for card in (3, 4, 0):
        state = _step(state, jnp.int32(card))
    assert int(state.current_player) == 1 and bool(state.void[2, 1])
    return state


def _own_values(state):
    """The mover's max^n values [A] of ``state`` (-inf where not searched), by the plain
    recursive reference (toy_trick_game.reference_maxn)."""
    q, _ = reference_maxn(ENV, state, params=ONE, **CFG)
    own = q[:, int(state.current_player)]
    return np.where(np.isnan(own), -np.inf, own)


def _copies(state, n):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + x.shape), state)


def _consistent_deals(state, observer):
    """Every holder array the observer cannot tell from ``state`` (brute force: each split of
    the unseen cards between the two other seats with their hand sizes, minus those that put
    a card in a seat known to be void in its suit)."""
    holder, played, void = np.asarray(state.holder), np.asarray(state.played), np.asarray(state.void)
    others = [s for s in range(3) if s != observer]
    unseen = [c for c in range(NUM_CARDS) if not played[c] and holder[c] != observer]
    size = int(((holder == others[0]) & ~played).sum())
    deals = []
    for first in itertools.combinations(unseen, size):
        deal = holder.copy()
        for c in unseen:
            deal[c] = others[0] if c in first else others[1]
        if all(not void[deal[c], SUIT[c]] for c in unseen):
            deals.append(deal)
    return np.array(deals)


def _deal_index(deals, holders):
    """Row of ``deals`` equal to each of ``holders`` [N, 12] (-1 if none)."""
    eq = (holders[:, None, :] == deals[None, :, :]).all(-1)
    return np.where(eq.any(1), eq.argmax(1), -1)


def test_sample_world_is_uniform_over_consistent_deals():
    """Seat 0's worlds: each a consistent deal, all of them equally often, the seat's view and
    the public state unchanged, and the same worlds from a state seat 0 cannot tell apart."""
    state = _after_one_trick()
    deals = _consistent_deals(state, observer=0)
    # unseen by seat 0: 1 5 9 (seat 1) and 6 8 10 (seat 2); 5 is in the suit seat 2 is void
    # in, so it is seat 1's, which gets 2 of the other 5: C(5, 2) deals
    assert len(deals) == 10
    n = NUM_SAMPLES
    keys = jax.random.split(jax.random.key(0), n)
    worlds = _SAMPLE(state, jnp.int32(0), keys)
    index = _deal_index(deals, np.asarray(worlds.holder))
    assert (index >= 0).all(), "a sampled world is not a consistent deal"
    counts = np.bincount(index, minlength=len(deals))
    expected = n / len(deals)
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected), counts
    # what seat 0 sees, and every public field, is the state's
    copies = _copies(state, n)
    chex.assert_trees_all_equal(_OBSERVE(worlds, jnp.int32(0)), _OBSERVE(copies, jnp.int32(0)))
    for name in ("played", "table", "leader", "points", "void", "current_player", "step_count"):
        np.testing.assert_array_equal(getattr(worlds, name), getattr(copies, name), err_msg=name)
    # sampling from another of the worlds (seat 0 cannot tell it from the state) gives the same
    twin = jax.tree_util.tree_map(lambda x: x[index.argmax()], worlds)
    np.testing.assert_array_equal(_SAMPLE(twin, jnp.int32(0), keys).holder, worlds.holder)


def test_pimc_averages_the_consistent_deals():
    """Seat 1 to lead; its 20 possible worlds enumerated and searched one by one give the exact
    mean PIMC estimates."""
    state = _after_one_trick()
    deals = _consistent_deals(state, observer=1)
    assert len(deals) == 20                                 # C(6, 3): no void constrains them
    per_deal = np.array([_own_values(state.replace(holder=jnp.asarray(d, jnp.int8))) for d in deals])  # [20, A]
    legal = np.asarray(state.legal_action_mask)
    assert np.isfinite(per_deal[:, legal]).all() and np.isneginf(per_deal[:, ~legal]).all()
    exact = per_deal.mean(0)
    spread = per_deal[:, legal].std(0)
    assert spread.max() > 0, "the hidden cards must matter in this position"

    out = jax.tree_util.tree_map(np.asarray, _PIMC(state, jax.random.key(1), ONE))
    # every world is one of the deals, searched as such
    rows = (out.world_values[:, None, :] == per_deal[None, :, :]) | (
        np.isneginf(out.world_values[:, None, :]) & np.isneginf(per_deal[None, :, :]))
    assert rows.all(-1).any(-1).all(), "a world's values are none of the consistent deals'"
    np.testing.assert_array_equal(out.action_values, np.where(legal, out.world_values.mean(0), -np.inf))
    tolerance = 5 * spread / np.sqrt(NUM_WORLDS) + 1e-6
    assert (np.abs(out.action_values[legal] - exact[legal]) <= tolerance).all()
    assert np.isneginf(out.action_values[~legal]).all()
    assert exact[out.action] >= exact[legal].max() - 2 * tolerance.max()
    assert legal[out.action]


def test_known_cards_make_pimc_the_search():
    """When the voids leave one consistent deal, every world is the real state."""
    holder = np.arange(NUM_CARDS) % 3
    played = np.ones(NUM_CARDS, bool)
    holder[[2, 3]], holder[[0, 10]], holder[[4, 7]] = 0, 1, 2
    played[[0, 2, 3, 4, 7, 10]] = False
    void = np.zeros((3, 4), bool)
    void[1, [1, 2]] = True          # seat 1 holds no suit 1 or 2: cards 4, 7 are seat 2's
    void[2, [0, 3]] = True          # seat 2 holds no heart, no suit 3: cards 0, 10 are seat 1's
    state = ENV.from_holder(holder, played=played, void=void)
    assert len(_consistent_deals(state, observer=0)) == 1
    out = _PIMC(state, jax.random.key(2), ONE)
    truth = _own_values(state)
    np.testing.assert_array_equal(np.asarray(out.world_values), np.broadcast_to(truth, out.world_values.shape))
    np.testing.assert_array_equal(out.action_values, truth)
    assert int(out.action) == int(np.argmax(truth))


def _mid_game_states():
    """12 live states of random games (leading, second and third to play, tricks 1 to 3)."""
    gen = np.random.default_rng(0)
    out = []
    for deal in range(2):
        state = _init(jax.random.key(100 + deal))
        for t in range(10):
            if t in (0, 1, 2, 3, 5, 7):
                out.append(state)
            state = _step(state, jnp.int32(gen.choice(np.flatnonzero(np.asarray(state.legal_action_mask)))))
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *out)


def test_pimc_is_honest_and_the_perfect_information_search_is_not():
    """The arena's honesty check: redealing what the mover cannot see never changes PIMC's move.
    The check has teeth: max^n on the real state (the source's PIE) changes its move."""
    states = _mid_game_states()
    honest = pimc.pimc_policy(ENV, SEARCH, num_worlds=4)
    assert arena.honesty_check(ENV, honest, ONE, states, jax.random.key(4), num_worlds=4, num_keys=2) == 0.0
    # PIE (max^n on the full state): its move in the real state and in redeals of it, until
    # one differs
    changed = 0
    for i in range(12):
        state = jax.tree_util.tree_map(lambda x: x[i], states)
        worlds = _SAMPLE(state, state.current_player, jax.random.split(jax.random.key(i), NUM_SAMPLES))
        real = np.argmax(_own_values(state))
        for w in range(8):
            changed += np.argmax(_own_values(jax.tree_util.tree_map(lambda x: x[w], worlds))) != real
        if changed:
            break
    assert changed > 0


def test_pimc_beats_random_players():
    """PIMC seated against two random players takes fewer points than its share (all seats
    rotated, deals duplicated): a game has 6 points, 2 each among equals."""
    policy = pimc.pimc_policy(ENV, SEARCH, num_worlds=4)
    result = arena.play(ENV, [policy, jaxgames.random_policy, jaxgames.random_policy],
                        jax.random.key(5), num_games=144, params=[ONE, None, None])
    np.testing.assert_allclose(result.returns.sum(1), -6.0)
    assert result.mean[0] > -2.0 + result.ci95[0], str(result)
    assert result.mean[0] > result.mean[1:].max(), str(result)


def test_no_recompile():
    for seed in range(3):
        state = _init(jax.random.key(10 + seed))
        out = _PIMC(state, jax.random.key(seed), jnp.float32(seed + 1))
        assert bool(state.legal_action_mask[out.action])


@pytest.mark.parametrize("num_worlds", [0, -1, 2.0, True, None])
def test_bad_num_worlds(num_worlds):
    with pytest.raises(ValueError, match="num_worlds must be an integer >= 1"):
        pimc.pimc_policy(ENV, SEARCH, num_worlds=num_worlds)


def test_perfect_information_game_refused():
    with pytest.raises(ValueError, match="perfect-information"):
        pimc.pimc_policy(TicTacToe(), SEARCH, num_worlds=4)


def test_ties_pick_the_lowest_or_the_highest_action():
    values = jnp.asarray([0.0, 2.0, -1.0, 2.0, 2.0, -jnp.inf])
    assert int(pimc.best_of(values)) == 1 and int(pimc.best_of(values, "highest")) == 4
    with pytest.raises(ValueError, match="ties must be one of lowest, highest"):
        pimc.pimc_policy(ENV, lambda p, s: s, num_worlds=2, ties="first")
