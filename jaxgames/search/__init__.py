"""Game-agnostic search."""

from jaxgames.search.expectimax import ExpectimaxGame, action_values, best_action, for_env

__all__ = ["ExpectimaxGame", "action_values", "best_action", "for_env"]
