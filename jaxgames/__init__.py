"""jaxgames: game AI where the whole learning loop is JAX."""

from jaxgames.core import CHANCE_PLAYER, Env, State, api_test, auto_reset, random_legal_action
from jaxgames.registry import available, make

__all__ = [
    "CHANCE_PLAYER",
    "Env",
    "State",
    "api_test",
    "auto_reset",
    "available",
    "make",
    "random_legal_action",
]
