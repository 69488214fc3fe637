"""Heads-up no-limit Texas hold'em: the hand evaluator (the game follows in game.py)."""

from jaxgames.holdem.hand_eval import evaluate

__all__ = ["evaluate"]
