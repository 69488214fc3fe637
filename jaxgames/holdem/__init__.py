"""Heads-up no-limit Texas hold'em: the game, its betting abstraction, cards, the hand
evaluator, rendering, AlphaHoldem's input encoding (``encode``) and network (``network``)."""

from jaxgames.holdem import betting, cards, hand_eval, render
from jaxgames.holdem.betting import (
    ACTION_NAMES,
    ALL_IN,
    CALL,
    CHECK,
    FOLD,
    FRACTIONS,
    NUM_ACTIONS,
    RAISE_HALF,
    RAISE_ONE_HALF,
    RAISE_POT,
    RAISE_THREE_QUARTERS,
    RAISE_TWO,
    max_actions,
)
from jaxgames.holdem.cards import card_name, cards_text, deck_from, parse_card, parse_cards
from jaxgames.holdem.hand_eval import evaluate
from jaxgames.holdem.game import STREET_NAMES, Holdem, Observation, State, showdown_result
from jaxgames.holdem.render import action_text, history_text, legal_actions_text, render_text
from jaxgames.holdem import bots, equity, lbr
from jaxgames.holdem.bots import BOT_NAMES, EquityBotConfig, HeadToHead, head_to_head, make_bot
from jaxgames.holdem.lbr import LBRResult, LocalBestResponse
from jaxgames.holdem import encode, network

__all__ = [
    "ACTION_NAMES",
    "ALL_IN",
    "BOT_NAMES",
    "CALL",
    "CHECK",
    "EquityBotConfig",
    "FOLD",
    "FRACTIONS",
    "HeadToHead",
    "Holdem",
    "LBRResult",
    "LocalBestResponse",
    "NUM_ACTIONS",
    "Observation",
    "RAISE_HALF",
    "RAISE_ONE_HALF",
    "RAISE_POT",
    "RAISE_THREE_QUARTERS",
    "RAISE_TWO",
    "STREET_NAMES",
    "State",
    "action_text",
    "betting",
    "bots",
    "card_name",
    "cards",
    "cards_text",
    "deck_from",
    "encode",
    "equity",
    "evaluate",
    "hand_eval",
    "head_to_head",
    "history_text",
    "lbr",
    "legal_actions_text",
    "make_bot",
    "max_actions",
    "network",
    "parse_card",
    "parse_cards",
    "render",
    "render_text",
    "showdown_result",
]
