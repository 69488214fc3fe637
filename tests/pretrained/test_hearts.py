"""The shipped Hearts agent: its card and hash, two hand-made tricks where its move is the
obvious one (it ducks under the Q♠ rather than take it, and it drops the Q♠ on the A♠), it
loads twice the same, a selection out of order is refused, a small match in which it still
beats the random bot, the exporter's round trip from a run folder, and the play command's
default opponent.

The strength check is the suite's guard on the shipped agent: a change to the rules, the
features or the search that breaks it fails here. It is the card's protocol (the learned
value's trick search reading every hand against the bot, every deal in the 14 seatings that
mix them): the card measured about 6 points a hand fewer than random over 100 deals, a spread
near 2 points per deal; ``STRENGTH_DEALS`` deals give an interval near ±1.5, so the lower bound
sits several standard errors above zero whatever the key. In the hand-made tricks the agent
plays last, or second after the A♠: what the others hold does not change the trick's outcome,
so its move does not depend on the worlds PIMC samples. Nothing depends on exact PRNG bits.

Compiles: the agent's PIMC move (the shipped player as it plays, one jit for both tricks) and
one arena (the strength check).
"""

from __future__ import annotations

import io
import json
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import checkpoints, pretrained
from jaxgames.hearts import play as hp
from jaxgames.hearts.agent import Agent, default_env
from jaxgames.hearts.cards import card_name, parse_card
from jaxgames.pretrained import export
from jaxgames.pretrained import hearts as hook
from jaxgames.pretrained.card import sha256

AGENT = pretrained.load("hearts")
CARD = pretrained.card("hearts")
ENV = AGENT.env
STEP = jax.jit(ENV.step)
STRENGTH_DEALS = 6


def cards(text: str) -> list[int]:
    return [parse_card(w) for w in text.split()]


def trick(hands: tuple[str, str, str, str], played: str):
    """The paper variant's first trick (seat 0 leads) from a hand-made deal, ``played`` on the table."""
    owner = np.full(52, -1, np.int8)
    for seat, text in enumerate(hands):
        owner[cards(text)] = seat
    state = ENV.from_deal(owner)
    for c in cards(played):
        assert bool(state.legal_action_mask[c]), card_name(c)
        state = STEP(state, jnp.int32(c))
    return state


def test_it_is_the_shipped_learned_hearts_player():
    assert isinstance(AGENT, Agent) and AGENT.run_dir is None and AGENT.honest and not AGENT.perfect
    assert AGENT.name == f"{CARD['name']} (shipped hearts agent)" and ENV is default_env()
    assert AGENT.spec.predictor == CARD["config"]["predictor"] == "combined"
    assert AGENT.params.shape == (AGENT.spec.num_features,) == (12_000,)
    assert AGENT.num_worlds == CARD["config"]["worlds"] == 20


def test_the_card():
    folder = pretrained.AGENTS / "hearts" / CARD["name"]
    assert CARD["params_sha256"] == sha256(folder / "params.npz")
    assert CARD["command"].startswith("python -m train.hearts --preset full")
    assert CARD["checkpoint"] == f"checkpoints/{CARD['config']['rounds'] * CARD['config']['updates_per_round']}"
    ev = CARD["evaluation"]
    assert set(ev["baselines"]) == {"pie", "rule", "random"} and ev["deals"] == CARD["config"]["final_eval_deals"]
    assert set(ev["imperfect_information"]["baselines"]) == {"iie", "rule"}
    random = ev["baselines"]["random"]
    assert random["mean"] - random["ci95"] > 0            # it beats random, the interval clear of 0
    assert random["mean"] == pytest.approx(random["bot_points"]["mean"] - random["agent_points"]["mean"])
    assert CARD["hands_trained"] > 0 and CARD["bytes"] < 200_000


def test_it_ducks_under_the_queen_of_spades():
    """10♠ led, the Q♠ on it, then the 3♠: the agent, last, holds the K♠ and the 5♠."""
    hands = ("TS AS 2C 3C 4C 5C 6C 7C 8C 2H 3H 4H 5H", "QS 2S 4S 6S 7S 8S 9S JS 9C TC 6H 7H 8H",
             "3S JC QC KC AC 9H TH JH QH KH AH 2D 3D", "KS 5S 4D 5D 6D 7D 8D 9D TD JD QD KD AD")
    state = trick(hands, "TS QS 3S")
    assert int(state.current_player) == 3
    for i in range(3):
        assert card_name(AGENT.act(state, jax.random.key(i)), ascii=True) == "5S"


def test_it_drops_the_queen_of_spades_on_the_ace():
    """The A♠ led: the agent (seat 1) holds the Q♠ and the 4♠, no other spade."""
    hands = ("AS KS JS TS 9S 2C 3C 4C 5C 6C 7C 8C 9C", "QS 4S 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD",
             "2S 3S 5S 6S 7S 8S TC JC QC KC AC KD AD", "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH")
    state = trick(hands, "AS")
    for i in range(3):
        assert card_name(AGENT.act(state, jax.random.key(i)), ascii=True) == "QS"


def test_it_loads_twice_the_same():
    again = pretrained.load("hearts")
    np.testing.assert_array_equal(np.asarray(again.params), np.asarray(AGENT.params))
    assert again.spec == AGENT.spec and again.policy is AGENT.policy   # one policy: one compile


def test_a_selection_out_of_order_is_refused(tmp_path):
    """A params.npz whose hashes agree (rewritten with its card) but whose selection is not
    strictly increasing: refused in one line naming the file."""
    root = tmp_path / "agents"
    shutil.copytree(pretrained.AGENTS / "hearts", root / "hearts")
    folder = root / "hearts" / CARD["name"]
    like = hook.params_like(CARD["config"], where="the card")
    params = checkpoints.read_npz(folder / "params.npz", like)
    params["hearts_selected"] = params["hearts_selected"][::-1]
    checkpoints.write_npz(folder / "params.npz", params)
    card = {**CARD, "params_sha256": sha256(folder / "params.npz")}
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(pretrained.PretrainedError, match="hearts_selected must be strictly increasing") as e:
        pretrained.load("hearts", root=root)
    assert "\n" not in str(e.value) and str(folder / "params.npz") in str(e.value)


def test_it_still_beats_the_random_bot(optimised_compiles):
    with optimised_compiles():
        result = hook.measure(AGENT, baselines=["random"], deals=STRENGTH_DEALS, seed=42)["baselines"]["random"]
    assert result["mean"] - result["ci95"] > 0, result
    assert result["agent_points"]["mean"] < 6.5 < result["bot_points"]["mean"]


def test_export_from_a_run_folder_round_trips(tmp_path):
    """A combined run's folder as the pipeline leaves it (config.json, selection.npz,
    summary.json, the last update's LinearTDCarry written by the training's checkpoint
    manager) exported and loaded back: the same weights and selections, the summary's figures
    on the card (the sign turned: points fewer than the bot); a summary of other weights is
    refused."""
    from train.algos.linear_td import LinearTDCarry
    from train.common.checkpoint import Checkpointer

    config = {**CARD["config"], "rounds": 3, "updates_per_round": 2}
    run = tmp_path / "runs" / "hearts" / "r"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(config))
    np.savez(run / "selection.npz", qs_selected=np.asarray(AGENT.spec.qs_selected, np.int32),
             hearts_selected=np.asarray(AGENT.spec.hearts_selected, np.int32))
    saver = Checkpointer(run / "checkpoints", keep=1)
    saver.save(6, LinearTDCarry(weights=AGENT.params, games=jnp.int32(9), updates=jnp.int32(6)), jax.random.key(0),
               json.dumps(config))
    saver.close()
    result = {"mean": 2.0, "ci95": 0.5}
    summary = {"predictor": "combined", "features": 12_000, "train_games": 77, "final_eval_deals": 10,
               "imperfect_deals": 2, "seconds": 9.5, "games_won_rate_vs_random": 0.7,
               "points_per_hand_learned_vs_random": {"mean": 4.0, "ci95": 0.5},
               "points_per_hand_expert_random": {"mean": 9.0, "ci95": 0.5},
               "difference_vs_random": {"mean": -5.0, "ci95": 0.75},
               "points_per_hand_pimc_vs_iie": result, "points_per_hand_expert_imperfect_iie": result,
               "difference_imperfect_vs_iie": {"mean": 0.25, "ci95": 1.5}}
    (run / "summary.json").write_text(json.dumps(summary))
    root = tmp_path / "agents"
    folder = export.export(game="hearts", run=run, name="t", command="python -m train.hearts", commit="abc",
                           cpu="a CPU", root=root)
    made = pretrained.card("hearts", "t", root=root)
    assert folder == root / "hearts" / "t" and made["checkpoint"] == "checkpoints/6" and made["config"] == config
    ev = made["evaluation"]
    assert ev["baselines"] == {"random": {"mean": 5.0, "ci95": 0.75, "agent_points": {"mean": 4.0, "ci95": 0.5},
                                          "bot_points": {"mean": 9.0, "ci95": 0.5}, "hands_won": 0.7}}
    assert ev["deals"] == 10 and ev["imperfect_information"]["baselines"]["iie"]["mean"] == -0.25
    assert made["hands_trained"] == 77 and made["training_seconds"] == 9.5
    back = pretrained.load("hearts", "t", root=root)
    np.testing.assert_array_equal(np.asarray(back.params), np.asarray(AGENT.params))
    assert back.spec == AGENT.spec
    (run / "summary.json").write_text(json.dumps({**summary, "features": 60}))
    with pytest.raises(ValueError, match="describes a combined value of 60 features"):
        export.export(game="hearts", run=run, name="u", command="c", commit="c", cpu="c", root=root)
    (run / "config.json").write_text(json.dumps({**config, "rounds": 4}))   # a run that stopped early
    (run / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ValueError, match="its final evaluation is of the weights of update 8"):
        export.export(game="hearts", run=run, name="u", command="c", commit="c", cpu="c", root=root)


# -- the play command's default opponent (built, not compiled: the play tests compile their own) --


def test_play_defaults_to_the_shipped_agent():
    assert hp.parse_args(["--seed", "1"]).opponent == hp.PRETRAINED == hp.Settings().opponent
    s = hp.Session(hp.Settings(seed=1, worlds=3), io.StringIO())
    assert s.opponent.env is s.env and s.env.variant == "standard" and s.opponent.num_worlds == 3
    assert s.opponent.honest and s.opponent.spec == AGENT.spec
    np.testing.assert_array_equal(np.asarray(s.opponent.params), np.asarray(AGENT.params))


def test_play_refuses_an_unknown_shipped_agent(capsys, exits_2_with_one_line):
    assert hp.main(["--pretrained", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no shipped hearts agent named 'nobody'" in err[0]
    exits_2_with_one_line(hp.main, ["--opponent", "rule", "--pretrained", "x"], "argument --pretrained: only with")
    with pytest.raises(ValueError, match="a shipped agent's name is for the opponent 'pretrained'"):
        hp.Settings(opponent="rule", pretrained="x")
