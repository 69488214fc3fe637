"""The preflop profile (jaxgames.holdem.profile) on players whose play is known: the baseline
bots and hand-made policies. Statistics of random deals, never their exact bits: each check
follows from a player's rule (the call bot calls everything; a pair-raiser never raises in the
weakest fifth, where no pair lies)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.holdem import CALL, CHECK, FOLD, Holdem, NUM_ACTIONS, RAISE_POT, bots
from jaxgames.holdem import profile as pf

ENV = Holdem()
DEALS = 100
KEY = jax.random.key(0)
FOLD_COL, CALL_COL, RAISE_COL, ALLIN_COL = range(4)


def _profile(probs, deals=DEALS):
    return pf.preflop_profile(ENV, probs, None, KEY, num_deals=deals, equity_samples=64)


def _bot(name):
    return _profile(bots.make_bot(ENV, name).probs)


def test_a_profile_is_a_distribution_in_every_situation():
    p = _bot("random")
    for m in (p.all, p.strong, p.weak):
        assert m.shape == (len(pf.SITUATIONS), len(pf.COLUMNS))
        np.testing.assert_allclose(m.sum(1), 1.0, atol=1e-5)
    # the random bot ignores its cards, and can raise facing a limp but not fold (checking is free)
    np.testing.assert_allclose(p.strong, p.weak, atol=1e-5)
    assert p.all[1, FOLD_COL] == 0 and p.all[1, RAISE_COL] > 0


def test_the_call_bot_calls_everything_whatever_its_cards():
    p = _bot("call")
    for m in (p.all, p.strong, p.weak):
        np.testing.assert_allclose(m[:, CALL_COL], 1.0)


def test_the_fold_bot_folds_whenever_it_is_asked_to_pay():
    p = _bot("fold")
    np.testing.assert_allclose(p.all[:, FOLD_COL], [1.0, 0.0, 1.0, 1.0])   # a limp costs nothing to check
    np.testing.assert_allclose(p.all[1, CALL_COL], 1.0)


def test_strength_orders_the_fifths():
    """A hand-made player that raises exactly its pairs: the weakest fifth (equity against a
    random hand below about 0.4) holds no pair, the strongest fifth holds most of them."""
    def raise_pairs(params, state, key):
        hole = ENV.observe(state, state.current_player).hole
        pair = (hole[0] // 4) == (hole[1] // 4)
        mask = state.legal_action_mask
        action = jnp.where(pair & mask[RAISE_POT], RAISE_POT, jnp.where(mask[CALL], CALL, CHECK))
        return jax.nn.one_hot(action, NUM_ACTIONS)

    p = _profile(raise_pairs, deals=400)
    assert p.weak[0, RAISE_COL] == 0.0
    assert p.strong[0, RAISE_COL] > 0.15     # 6% of all hands are pairs; most in the top fifth
    assert p.strong[0, RAISE_COL] > 2 * p.all[0, RAISE_COL]


def test_the_equity_bot_folds_its_weakest_fifth_to_all_in_and_calls_its_strongest():
    """It calls an all-in with an equity above the pot odds (about 1/2): the strongest fifth
    (above about 0.58) calls, the weakest (below about 0.40) folds; both equities are Monte
    Carlo estimates, so a hand near a border may land either side."""
    p = _bot("equity")
    assert p.strong[3, FOLD_COL] <= 0.2 and p.weak[3, FOLD_COL] >= 0.8


def test_markdown_has_a_row_per_situation():
    text = pf.markdown(_bot("allin"))
    lines = text.splitlines()
    assert len(lines) == 2 + len(pf.SITUATIONS)
    assert lines[2].startswith("| opens in the small blind | 0% | 0% | 0% | 100% | 100% / 100% |")


def test_too_few_deals_is_refused():
    with pytest.raises(ValueError, match="num_deals"):
        pf.preflop_profile(ENV, bots.make_bot(ENV, "call").probs, None, KEY, num_deals=4)


@pytest.mark.parametrize("argv, message", [
    ([], "name a run folder (or --bots)"),
    (["--bots", "--deals", "3"], "--deals must be >= 5, got 3"),
    (["--bots", "--nope"], "unrecognized arguments: --nope"),
])
def test_cli_bad_input_exits_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        pf.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(message) and not any("Traceback" in line for line in err)
