"""jaxgames: game AI where the whole learning loop is JAX."""

from jaxgames import arena, search
from jaxgames.core import (
    CHANCE_PLAYER,
    Env,
    Policy,
    Rollout,
    State,
    api_test,
    auto_reset,
    random_legal_action,
    random_policy,
    rollout,
    rollout_seated,
)
from jaxgames.registry import available, make

__all__ = [
    "CHANCE_PLAYER",
    "Env",
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
