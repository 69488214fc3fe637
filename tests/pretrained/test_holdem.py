"""The shipped hold'em agent: a hand-made hand replayed against it (every action it takes is
legal, its probabilities are a distribution over the legal actions, it calls an all-in with
aces and folds seven-deuce to one), a small duplicate match in which it still beats the random
bot, and the exporter's round trip from a run folder.

The strength check is the suite's guard on the shipped agent: a change to the rules, the
encoding or the network that breaks it fails here. Its card measured +13,883 ± 503 mbb/hand
against random over 50,000 deals (about 57,000 mbb of spread per deal): 300 deals give an
interval near ±6,500, so the lower bound sits some 4 standard errors above zero whatever
the key. Nothing here depends on exact PRNG bits.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.holdem import betting, bots, cards
from jaxgames.holdem.agent import Agent
from jaxgames.pretrained import export

AGENT = pretrained.load("holdem")
ENV = AGENT.env
STEP = jax.jit(ENV.step)
STRENGTH_DEALS = 300


def deal(hole0: str, hole1: str, board: str = ""):
    """A hand from a hand-made deck, seat 0 (the opponent) on the button."""
    deck = cards.deck_from(cards.parse_cards(hole0), cards.parse_cards(hole1), cards.parse_cards(board))
    return ENV.deal(jnp.asarray(deck), 0)


def test_it_is_the_shipped_hold_em_agent():
    assert isinstance(AGENT, Agent) and AGENT.network_size == "small" and AGENT.run_dir is None
    assert AGENT.name == "alphaholdem-small (shipped holdem agent)"


def test_a_hand_made_hand_replays_with_legal_actions():
    """The opponent (seat 0) checks or calls to the end; the agent (seat 1) answers."""
    state = deal("9c 9d", "Ks Qs", "Js Ts 2h 4c 8d")
    key = jax.random.key(0)
    for turn in range(ENV.max_steps):
        if bool(state.terminated):
            break
        legal = np.asarray(state.legal_action_mask)
        if int(state.current_player) == 1:
            probs = AGENT.action_probs(state)
            np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-5)
            assert np.all(probs[~legal] == 0)
            action = AGENT.act(state, jax.random.fold_in(key, turn))
            assert legal[action]
        else:
            action = betting.CHECK if legal[betting.CHECK] else betting.CALL
        state = STEP(state, jnp.int32(action))
    assert bool(state.terminated)
    assert float(state.rewards.sum()) == 0.0


def test_it_calls_an_all_in_with_aces_and_folds_seven_deuce():
    aces = STEP(deal("9c 9d", "As Ah"), jnp.int32(betting.ALL_IN))
    assert AGENT.action_probs(aces)[betting.CALL] > 0.9
    trash = STEP(deal("9c 9d", "7c 2d"), jnp.int32(betting.ALL_IN))
    assert AGENT.action_probs(trash)[betting.FOLD] > 0.5


def test_it_still_beats_the_random_bot():
    result = bots.head_to_head(ENV, AGENT, bots.random_bot(), jax.random.key(42), num_deals=STRENGTH_DEALS)
    assert result.mean - result.ci95 > 0, str(result)


def test_export_from_a_run_folder_round_trips(tmp_path):
    """A run folder as the pipeline leaves it (config.json, summary.json, the last round's
    checkpoint written by the training's checkpoint manager) exported and loaded back: the same
    parameters, the summary's figures on the card; parameters other than the evaluated ones
    (the last round's) are refused."""
    from train.common.checkpoint import Checkpointer

    card = pretrained.card("holdem")
    config, per_round = card["config"], card["config"]["updates_per_round"]
    run = tmp_path / "runs" / "holdem" / "r"
    ck = Checkpointer(run / "checkpoints", keep=1)
    ck.save(3 * per_round, AGENT.params, jax.random.key(0), json.dumps(config))
    ck.close()
    (run / "config.json").write_text(json.dumps(config))
    summary = {"mbb_vs_random": {"mean": 123.0, "ci95": 4.5}, "final_eval_deals": 10, "hands_trained": 77,
               "rounds": 3, "seconds": 9.5, "parameters": 219146, "lbr_hands": 8,
               "lbr_mbb": {"mean": 900.0, "ci95": 50.0}, "lbr_mbb_allin_adjusted": {"mean": 800.0, "ci95": 30.0},
               "lbr_mbb_equity_bot": {"mean": 2000.0, "ci95": 60.0},
               "lbr_mbb_allin_adjusted_equity_bot": {"mean": 1900.0, "ci95": 40.0},
               "lbr_mbb_random_bot": {"mean": 3000.0, "ci95": 70.0}}
    (run / "summary.json").write_text(json.dumps(summary))
    root = tmp_path / "agents"
    folder = export.export(game="holdem", run=run, name="t", command="python -m train.holdem", commit="abc",
                           cpu="a CPU", root=root)
    made = pretrained.card("holdem", "t", root=root)
    assert folder == root / "holdem" / "t" and made["checkpoint"] == f"checkpoints/{3 * per_round}"
    assert made["evaluation"]["baselines"] == {"random": {"mean": 123.0, "ci95": 4.5}}
    lbr = made["evaluation"]["local_best_response"]   # LBR beside the yardsticks it played on the same deals
    assert (lbr["mean"], lbr["hands"], lbr["allin_adjusted"]) == (900.0, 8, {"mean": 800.0, "ci95": 30.0})
    assert lbr["against_bots"] == {"equity": {"mean": 2000.0, "ci95": 60.0, "allin_adjusted": {"mean": 1900.0, "ci95": 40.0}},
                                   "random": {"mean": 3000.0, "ci95": 70.0}}
    assert made["hands_trained"] == 77 and made["training_seconds"] == 9.5 and made["config"] == config
    for x, y in zip(jax.tree_util.tree_leaves(pretrained.load("holdem", "t", root=root).params),
                    jax.tree_util.tree_leaves(AGENT.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    with pytest.raises(pretrained.PretrainedError, match="exists: give --overwrite"):
        export.export(game="holdem", run=run, name="t", command="c", commit="c", cpu="c", root=root)
    (run / "summary.json").write_text(json.dumps({**summary, "rounds": 4}))   # a run that stopped early
    with pytest.raises(ValueError, match="its final evaluation is of the parameters of update"):
        export.export(game="holdem", run=run, name="u", command="c", commit="c", cpu="c", root=root)
