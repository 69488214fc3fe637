"""Hearts: the four-player trick-avoidance game (standard and paper variants, the moon, games
to a target score), its card encoding, the constrained deal behind ``sample_world``, text
rendering. Rules as implemented: docs/rules/hearts.md."""

from jaxgames.hearts import deal
from jaxgames.hearts.cards import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    NUM_CARDS,
    NUM_PLAYERS,
    PASS_ACROSS,
    PASS_LEFT,
    PASS_NAMES,
    PASS_RIGHT,
    NO_PASS,
    QUEEN_OF_SPADES,
    SPADES,
    TOTAL_POINTS,
    TWO_OF_CLUBS,
    card,
    card_name,
    cards_text,
    parse_card,
)
from jaxgames.hearts.game import Hearts, Observation, State, max_hands
from jaxgames.hearts.render import render_text, tricks
from jaxgames.hearts import bots, evaluate, features, trick_maxn
from jaxgames.hearts.bots import BOT_NAMES, make_bot, trick_search
from jaxgames.hearts.evaluate import MatchResult

__all__ = [
    "BOT_NAMES",
    "CLUBS",
    "DIAMONDS",
    "HEARTS",
    "Hearts",
    "MatchResult",
    "NO_PASS",
    "NUM_CARDS",
    "NUM_PLAYERS",
    "Observation",
    "PASS_ACROSS",
    "PASS_LEFT",
    "PASS_NAMES",
    "PASS_RIGHT",
    "QUEEN_OF_SPADES",
    "SPADES",
    "State",
    "TOTAL_POINTS",
    "TWO_OF_CLUBS",
    "card",
    "card_name",
    "bots",
    "cards_text",
    "deal",
    "evaluate",
    "features",
    "trick_maxn",
    "make_bot",
    "max_hands",
    "parse_card",
    "render_text",
    "trick_search",
    "tricks",
]
