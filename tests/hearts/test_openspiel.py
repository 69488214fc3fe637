"""Differential test against OpenSpiel's independent Hearts (``pyspiel``, a test-only dependency).

Thousands of random games are played by our environment in one jitted batch; each is replayed
in OpenSpiel (the same pass direction, the same deal through its chance nodes, the same
passes and cards), comparing the player to move and the legal moves at every step and every
player's points at the end.

Conventions, read from OpenSpiel's ``hearts.h``/``hearts.cc`` and relied on here: cards are
``4 * rank + suit`` with suits clubs, diamonds, hearts, spades (ours too); the pass
direction is the first chance outcome, 0 none, 1 left, 2 across, 3 right, the receiver being
``(passer + direction) % 4`` (ours too); the k-th dealt card goes to seat ``k % 4``; seat 0
passes its three cards first, then 1, 2, 3 (ours too); returns are ``26 - points``, the moon
applied.

Parameters: the standard variant is OpenSpiel's default ``hearts`` except
``qs_breaks_hearts=false`` (ours: only a heart breaks hearts). The paper variant is
``pass_cards=false, no_pts_on_first_trick=false, must_break_hearts=false,
can_lead_any_club=true``; what OpenSpiel cannot express of it is the first lead: OpenSpiel's
first trick is always led by the 2♣'s holder with a club, ours by seat 0 with any card. Those
paper games are therefore dealt with the 2♣ to seat 0 and open with a club from seat 0's hand;
every later move is free and compared. ``moon=False`` cannot be expressed (OpenSpiel always
scores the moon): it is tested by hand in test_game.py.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import core, rng
from jaxgames.hearts import deal as D
from jaxgames.hearts.cards import NUM_CARDS, SUIT, card_name

pyspiel = pytest.importorskip("pyspiel")

STANDARD_PARAMS = {"qs_breaks_hearts": False}
PAPER_PARAMS = {"pass_cards": False, "no_pts_on_first_trick": False, "must_break_hearts": False,
                "can_lead_any_club": True, "qs_breaks_hearts": False}
NUM_STANDARD = 2000
NUM_PAPER = 1000


@functools.lru_cache(maxsize=None)
def record(variant: str, num_games: int, seed: int):
    """Host arrays of ``num_games`` random games: deal [G, 52], pass direction [G], and per
    step the mover [G, T], the legal mask [G, T, 52], the action [G, T] (-1 after the end),
    and the returns [G, 4]."""
    if variant == "standard":
        env = jaxgames.make("hearts", first_pass="random")   # all four pass directions
    else:
        env = jaxgames.make("hearts", variant="paper")
    steps = 64 if variant == "standard" else 52

    def one(key):
        k_deal, k_first, k_play = rng.split(key, 3)
        state = env.init(k_deal)
        if variant == "paper":
            # OpenSpiel's first lead is a club from the 2♣'s holder: give seat 0 the 2♣ (by a
            # swap with one of its cards) and make its first lead a random club of its hand.
            owner = state.owner
            mine = jnp.argmax(owner == 0)
            holder = owner[0]
            owner = owner.at[mine].set(holder).at[0].set(0)
            state = env.from_deal(owner)
        clubs = (state.owner == 0) & (jnp.asarray(SUIT) == 0)
        first_club = core.random_legal_action(state.replace(legal_action_mask=clubs), k_first)

        def body(carry, inputs):
            state, ret = carry
            t, k = inputs
            action = core.random_legal_action(state, k)
            if variant == "paper":
                action = jnp.where(t == 0, first_club, action)
            live = ~state.terminated
            out = (state.current_player, state.legal_action_mask, jnp.where(live, action, -1))
            state = env.step(state, action)
            return (state, ret + state.rewards), out

        init = (state, jnp.zeros(4, jnp.float32))
        (final, ret), (movers, masks, actions) = jax.lax.scan(
            body, init, (jnp.arange(steps), rng.split(k_play, steps)))
        return state.owner, state.pass_dir, movers, masks, actions, ret, final.terminated

    out = jax.jit(jax.vmap(one))(rng.split(jax.random.key(seed), num_games))
    return tuple(np.asarray(x) for x in out)


def replay(params: dict, deal, pass_dir, movers, masks, actions, returns) -> int:
    """Replays every game in OpenSpiel; returns the number of decisions compared."""
    game = pyspiel.load_game("hearts", params)
    compared = 0
    for g in range(deal.shape[0]):
        state = game.new_initial_state()
        state.apply_action(int(pass_dir[g]))
        hands = [np.flatnonzero(deal[g] == s) for s in range(4)]
        for k in range(NUM_CARDS):
            state.apply_action(int(hands[k % 4][k // 4]))
        for t, action in enumerate(actions[g]):
            if action < 0:
                break
            assert not state.is_chance_node()
            assert state.current_player() == movers[g, t], f"game {g} step {t}: mover"
            ours = np.flatnonzero(masks[g, t]).tolist()
            theirs = state.legal_actions()
            if params is PAPER_PARAMS and t == 0:
                # OpenSpiel can only lead a club here; ours may lead anything
                assert set(theirs) == {c for c in ours if c % 4 == 0}, f"game {g}: first lead"
            else:
                assert ours == theirs, f"game {g} step {t}: legal {ours} != OpenSpiel's {theirs}"
            compared += 1
            state.apply_action(int(action))
        assert state.is_terminal(), f"game {g}: OpenSpiel's hand is not over"
        expected = [26.0 + r for r in returns[g].tolist()]   # OpenSpiel: 26 - points
        assert state.returns() == expected, f"game {g}: {state.returns()} != {expected}"
    return compared


def test_standard_matches_openspiel():
    deal, pass_dir, movers, masks, actions, returns, done = record("standard", NUM_STANDARD, 0)
    assert done.all()
    assert sorted(set(pass_dir.tolist())) == [0, 1, 2, 3]       # every direction is exercised
    assert set(np.round(returns.sum(1)).tolist()) <= {-26.0, -78.0}   # -78 when the moon is shot
    compared = replay(STANDARD_PARAMS, deal, pass_dir, movers, masks, actions, returns)
    assert compared >= NUM_STANDARD * 52


def test_paper_matches_openspiel():
    deal, pass_dir, movers, masks, actions, returns, done = record("paper", NUM_PAPER, 1)
    assert done.all() and (pass_dir == 0).all() and (deal[:, 0] == 0).all()
    compared = replay(PAPER_PARAMS, deal, pass_dir, movers, masks, actions, returns)
    assert compared == NUM_PAPER * 52


def test_openspiel_checks_can_fail():
    # The comparison is not vacuous: a game whose recorded legal moves are altered is caught.
    deal, pass_dir, movers, masks, actions, returns, _ = record("standard", NUM_STANDARD, 0)
    bad = masks[:1].copy()
    t = 20
    bad[0, t, np.flatnonzero(~bad[0, t])[0]] = True
    with pytest.raises(AssertionError, match="legal"):
        replay(STANDARD_PARAMS, deal[:1], pass_dir[:1], movers[:1], bad, actions[:1], returns[:1])
    wrong = returns[:1].copy()
    wrong[0, 0] -= 1
    with pytest.raises(AssertionError):
        replay(STANDARD_PARAMS, deal[:1], pass_dir[:1], movers[:1], masks[:1], actions[:1], wrong)


def test_card_names_are_openspiels():
    # OpenSpiel names its card actions rank then suit ("QS", "TH"): the same encoding and names
    state = pyspiel.load_game("hearts", STANDARD_PARAMS).new_initial_state()
    state.apply_action(0)                                   # no pass
    for c in range(NUM_CARDS):
        state.apply_action(c)                               # deal card c to seat c % 4
    assert [state.action_to_string(state.current_player(), c) for c in range(NUM_CARDS)] == \
        [card_name(c, ascii=True) for c in range(NUM_CARDS)]
