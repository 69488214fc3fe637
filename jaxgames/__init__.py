"""jaxgames: game AI where the whole learning loop is JAX."""

from jaxgames import arena, search
from jaxgames.api_test import api_test
from jaxgames.core import (
    CHANCE_PLAYER,
    Env,
    Policy,
    State,
    auto_reset,
    random_legal_action,
    random_policy,
)
from jaxgames.rollout import Rollout, rollout, rollout_seated
from jaxgames.player import Player
from jaxgames.registry import available, make

__all__ = [
    "CHANCE_PLAYER",
    "Env",
    "Player",
    "Policy",
    "Rollout",
    "State",
    "api_test",
    "arena",
    "auto_reset",
    "available",
    "make",
    "random_legal_action",
    "random_policy",
    "rollout",
    "rollout_seated",
    "search",
]
