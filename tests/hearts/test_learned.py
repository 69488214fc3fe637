"""The learned Hearts values (jaxgames/hearts/learned.py): the combined predictor's features on a
hand-made state, the points to come the search sees, the recorded states and outcomes, the
selection of the top features."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.hearts import Hearts, card
from jaxgames.hearts import features as feat
from jaxgames.hearts import learned
from jaxgames.hearts.cards import HEARTS, QUEEN_OF_SPADES

ENV = Hearts(variant="paper", moon=False)
QS = feat.FeatureSpec(feat.NUM_ATOMS_QS, (1, 2), 8)
HEARTS_SPEC = feat.FeatureSpec(feat.NUM_ATOMS_HEARTS, (1, 2), 8)
MARGIN = 1e-3


def spec(predictor, qs_sel=(), hearts_sel=()):
    return learned.ValueSpec(predictor, QS, HEARTS_SPEC, qs_sel, hearts_sel)


@pytest.fixture(scope="module")
def state():
    return jax.jit(ENV.init)(jax.random.key(5))


def take(state, cards, seat):
    """``state`` with ``cards`` taken by ``seat`` (out of every hand)."""
    cards = jnp.asarray(cards)
    return state.replace(owner=state.owner.at[cards].set(-1), taken_by=state.taken_by.at[cards].set(seat))


def test_combined_features_are_the_selected_ones_of_each_atom_set(state):
    # every value and feature function here runs jitted: op by op, each primitive would
    # compile on its own
    qi, qv = jax.jit(lambda s: feat.active_indices(feat.atoms_qs(s, 1), include=QS))(state)
    hi, hv = jax.jit(lambda s: feat.active_indices(feat.atoms_hearts(s, 1), include=HEARTS_SPEC))(state)
    q_active = sorted(int(i) for i in np.asarray(qi)[np.asarray(qv)])
    h_active = sorted(int(i) for i in np.asarray(hi)[np.asarray(hv)])
    assert len(q_active) >= 4 and len(h_active) >= 4
    # select every other active combination of each set, plus some inactive ones
    q_sel = sorted(set(q_active[::2]) | {i for i in range(0, QS.num_features, 97) if i not in q_active})
    h_sel = sorted(set(h_active[1::2]) | {i for i in range(0, HEARTS_SPEC.num_features, 101) if i not in h_active})
    s = spec("combined", q_sel, h_sel)
    assert s.num_features == len(q_sel) + len(h_sel) and s.num_slots == QS.num_slots + HEARTS_SPEC.num_slots
    idx, valid = jax.jit(learned.features_fn(s), static_argnums=1)(state, 1)
    got = sorted(int(i) for i in np.asarray(idx)[np.asarray(valid)])
    want = sorted([q_sel.index(i) for i in q_active[::2]] + [len(q_sel) + h_sel.index(i) for i in h_active[1::2]])
    assert got == want
    # the words say where each feature came from
    assert s.names(0).startswith("[Q♠] ") and s.names(len(q_sel)).startswith("[hearts] ")


def test_points_to_come_subtract_what_was_taken(state):
    for predictor, high in (("qs", 13.0), ("hearts", 13.0), ("combined", 26.0)):
        s = spec(predictor, *(((0, 1), (0, 1)) if predictor == "combined" else ()))
        weights = jnp.full(s.num_features, 100.0)        # every prediction cut to high-
        v = np.asarray(jax.jit(learned.value_fn(s))(weights, state))
        np.testing.assert_allclose(v, -(high - MARGIN), rtol=1e-6)
    hearts = [card(r, HEARTS) for r in range(3)]
    s = spec("hearts")
    value = jax.jit(learned.value_fn(s))
    weights = jnp.full(s.num_features, 100.0)
    three = take(state, hearts, seat=2)                   # seat 2 took 3 hearts: 10- to come
    v = np.asarray(value(weights, three))
    np.testing.assert_allclose(v, [-(13 - MARGIN)] * 2 + [-(10 - MARGIN)] + [-(13 - MARGIN)], rtol=1e-6)
    every = take(state, [card(r, HEARTS) for r in range(13)], seat=1)   # no heart left: nothing to come
    np.testing.assert_array_equal(np.asarray(value(weights, every)), 0.0)
    # the weights' sum is what is still to come: the points taken are the output's known part
    small = jnp.zeros(s.num_features)
    to_come = jax.jit(learned.to_come(s), static_argnums=2)
    assert float(to_come(small, three, 2)) == 0.0
    idx, valid = jax.jit(learned.features_fn(s), static_argnums=1)(three, 2)
    first = int(np.asarray(idx)[np.asarray(valid)][0])
    two = small.at[first].set(2.0)
    np.testing.assert_allclose(float(to_come(two, three, 2)), 2.0, rtol=1e-6)
    assert float(learned.offset("hearts")(three, 2)) == 3.0 and float(learned.offset("qs")(three, 2)) == 0.0
    # the Q♠ predictor: nothing to come once the Q♠ is taken, however many hearts are out
    q = spec("qs")
    gone = take(state, [QUEEN_OF_SPADES], seat=3)
    np.testing.assert_array_equal(np.asarray(jax.jit(learned.value_fn(q))(jnp.full(q.num_features, 100.0), gone)), 0.0)


def test_recorded_states_and_outcomes(state):
    for predictor in learned.PREDICTORS:
        assert bool(learned.record(predictor)(state))                   # the first lead
    after = ENV.step(state, jnp.argmax(state.legal_action_mask))
    assert not any(bool(learned.record(p)(after)) for p in learned.PREDICTORS)   # a card on the table
    no_hearts = take(state, [card(r, HEARTS) for r in range(13)], seat=0)
    assert not bool(learned.record("hearts")(no_hearts))
    assert bool(learned.record("qs")(no_hearts)) and bool(learned.record("combined")(no_hearts))
    done = take(no_hearts, [QUEEN_OF_SPADES], seat=3)
    assert not bool(learned.record("combined")(done))
    assert [float(learned.outcome("hearts")(done, s)) for s in range(4)] == [13.0, 0.0, 0.0, 0.0]
    assert [float(learned.outcome("qs")(done, s)) for s in range(4)] == [0.0, 0.0, 0.0, 13.0]
    assert [float(learned.outcome("combined")(done, s)) for s in range(4)] == [13.0, 0.0, 0.0, 13.0]


def test_select_top_by_size_of_weight():
    w = np.array([0.5, -2.0, 0.1, 2.0, -0.1, 1.0])
    assert learned.select_top(w, 3) == (1, 3, 5)           # |-2| and |2| first, then 1.0; ascending
    assert learned.select_top(w, 0) == ()
    with pytest.raises(ValueError, match="cannot select 7 of 6"):
        learned.select_top(w, 7)
    qs_w = np.zeros(QS.num_features, np.float32)
    qs_w[[3, 7]] = [0.4, -0.9]
    h_w = np.zeros(HEARTS_SPEC.num_features, np.float32)
    h_w[11] = 0.25
    s, start = learned.combined_spec(QS, HEARTS_SPEC, qs_w, h_w, top_qs=2, top_hearts=1)
    assert s.qs_selected == (3, 7) and s.hearts_selected == (11,)
    np.testing.assert_array_equal(start, np.float32([0.4, -0.9, 0.25]))   # each selected feature keeps its weight


@pytest.mark.parametrize("args, match", [
    (("best",), "predictor must be one of qs, hearts, combined"),
    (("qs", (1,), ()), "only the combined predictor selects features"),
    (("combined", (2, 1), ()), "qs_selected must be distinct ascending"),
    (("combined", (), (10**7,)), "hearts_selected must be distinct ascending"),
    (("combined",), "the combined predictor needs selected features"),
])
def test_bad_specs_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        spec(*args)


def test_the_search_with_the_keyed_value_is_the_plain_one():
    """The learned value is keyed by the capped atoms (``learned.value_fn``: the weights summed
    once per distinct atom vector of a chunk's leaves and seats); its search equals the search
    with the same value per leaf (``per_seat``), on positions of rule-bot games at every place
    of a trick. Dyadic weights, so the sums are exact."""
    from jaxgames.hearts import bots, trick_maxn

    s = spec("combined", tuple(range(0, QS.num_features, 3)), tuple(range(0, HEARTS_SPEC.num_features, 2)))
    keyed = learned.value_fn(s)
    plain = trick_maxn.per_seat(keyed.seat_value)
    weights = jnp.asarray(np.random.default_rng(0).integers(-64, 256, s.num_features) / 64.0, jnp.float32)
    rule = bots.make_bot(ENV, "rule").policy

    def positions(key):
        def step(state, k):
            return ENV.step(state, rule(None, state, k)), state
        return jax.lax.scan(step, ENV.init(key), jax.random.split(key, 52))[1]

    states = jax.tree_util.tree_map(lambda x: x[:, [0, 13, 26, 39, 44]].reshape((15,) + x.shape[2:]),
                                    jax.vmap(positions)(jax.random.split(jax.random.key(2), 3)))
    run = jax.jit(lambda st: tuple(jax.vmap(lambda x: trick_maxn.trick_search(ENV, v, x, weights, chunk=32))(st)
                                   for v in (keyed, plain)))
    a, b = run(states)
    for field in ("action", "own_values", "action_values", "value"):
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), np.asarray(getattr(b, field)), err_msg=field)
    assert int(a.num_leaves.sum()) > 500
