"""AlphaHoldem's pseudo-Siamese policy-value network (flax.linen).

Two towers of the same shape with separate weights, one per input tensor (``encode.py``):

    cards    int8 [B, 6, 4, 13]  -> card tower    -> features
    actions  int8 [B, 24, 4, 9]  -> action tower  -> features
    concat -> fully connected trunk (ReLU) -> policy logits [B, 9] (illegal ones masked)
                                           -> value [B]

A tower is ``tower="dense"`` or ``tower="conv"`` (3x3 SAME convolutions,
:class:`jaxgames.hex.network.PatchConv`). Sizes (:data:`SIZES`, :func:`make_network`): ``small``,
the default (dense towers, 219,146 parameters), and ``source``, AlphaHoldem's scale (8,628,234
parameters). Outputs: ``logits`` float32 [B, 9], :data:`ILLEGAL_LOGIT` (finite) where ``legal``
is False, so a softmax gives illegal actions exactly 0; ``value`` float32 [B], unbounded and
linear. The first policy is nearly uniform over the legal actions.

The towers, the sizes and why dense is the default, the outputs and the initialisation:
docs/holdem_training.md (its list "What is built here, and where").
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxgames.hex.network import PatchConv
from jaxgames.holdem import betting
from jaxgames.holdem.encode import ACTION_SHAPE, CARD_SHAPE

Array = jax.Array

#: the logit of an illegal action: exp underflows to exactly 0 against any legal logit
ILLEGAL_LOGIT = -1e9
TOWERS = ("dense", "conv")


@dataclasses.dataclass(frozen=True)
class Size:
    """One network size. A tower is ``conv`` (tower="conv" only) then flatten then
    ``tower_dense``; the towers' outputs are concatenated and go through ``trunk``."""

    tower: str                          # the size's default tower kind
    conv: tuple[int, ...]               # 3x3 SAME convolution filters of a conv tower
    tower_dense: tuple[int, ...]        # dense widths at the end of each tower
    trunk: tuple[int, ...]              # fully connected widths after the concatenation


SIZES: dict[str, Size] = {
    "small": Size(tower="dense", conv=(8, 16), tower_dense=(128,), trunk=(256,)),
    "source": Size(tower="conv", conv=(128, 256, 256), tower_dense=(256,), trunk=(1024, 512)),
}
#: the source's parameter counts: total, convolutions, fully connected
SOURCE_PARAMS = 8_600_000
SOURCE_CONV_PARAMS = 1_800_000
SOURCE_DENSE_PARAMS = 6_800_000


class Tower(nn.Module):
    """``x [B, C, 4, N]`` (int8 or float) -> features float32 [B, tower_dense[-1]]."""

    conv: Sequence[int] = ()
    dense: Sequence[int] = (128,)

    @nn.compact
    def __call__(self, x: Array) -> Array:
        x = x.astype(jnp.float32)
        if self.conv:
            x = jnp.transpose(x, (0, 2, 3, 1))          # NHWC [B, 4, N, C]: channels as features
            for i, features in enumerate(self.conv):
                x = nn.relu(PatchConv(features, (3, 3), padding="SAME", name=f"Conv_{i}")(x))
        x = x.reshape(x.shape[0], -1)
        for i, width in enumerate(self.dense):
            x = nn.relu(nn.Dense(width, name=f"Dense_{i}")(x))
        return x


class PseudoSiamese(nn.Module):
    """``(cards int8 [B, 6, 4, 13], actions int8 [B, 24, 4, 9], legal bool [B, 9])
    -> (logits float32 [B, 9], value float32 [B])``."""

    tower: str = "dense"
    conv: Sequence[int] = SIZES["small"].conv
    tower_dense: Sequence[int] = SIZES["small"].tower_dense
    trunk: Sequence[int] = SIZES["small"].trunk
    num_actions: int = betting.NUM_ACTIONS

    def setup(self) -> None:
        if self.tower not in TOWERS:
            raise ValueError(f"holdem network tower must be one of {TOWERS}, got {self.tower!r}")
        conv = tuple(self.conv) if self.tower == "conv" else ()
        # the same shape, separate weights: the "pseudo" of pseudo-Siamese
        self.cards_tower = Tower(conv=conv, dense=tuple(self.tower_dense))
        self.actions_tower = Tower(conv=conv, dense=tuple(self.tower_dense))
        self.trunk_layers = [nn.Dense(w) for w in self.trunk]
        self.policy_head = nn.Dense(self.num_actions, kernel_init=nn.initializers.orthogonal(0.01))
        self.value_head = nn.Dense(1)

    def embed(self, cards: Array, actions: Array) -> tuple[Array, Array]:
        """The two towers' outputs ``(float32 [B, F], float32 [B, F])``."""
        chex.assert_shape(cards, (None, *CARD_SHAPE))
        chex.assert_shape(actions, (cards.shape[0], *ACTION_SHAPE))
        return self.cards_tower(cards), self.actions_tower(actions)

    def __call__(self, cards: Array, actions: Array, legal: Array) -> tuple[Array, Array]:
        chex.assert_shape(legal, (cards.shape[0], self.num_actions))
        x = jnp.concatenate(self.embed(cards, actions), axis=-1)
        for layer in self.trunk_layers:
            x = nn.relu(layer(x))
        logits = jnp.where(legal, self.policy_head(x), ILLEGAL_LOGIT).astype(jnp.float32)
        value = self.value_head(x)[:, 0].astype(jnp.float32)
        return logits, value


def make_network(size: str = "small", tower: str | None = None) -> PseudoSiamese:
    """The network of a named size (:data:`SIZES`); ``tower`` overrides the size's default
    tower kind (``"dense"`` or ``"conv"``)."""
    if size not in SIZES:
        raise ValueError(f"holdem network size must be one of {tuple(SIZES)}, got {size!r}")
    spec = SIZES[size]
    tower = spec.tower if tower is None else tower
    if tower not in TOWERS:
        raise ValueError(f"holdem network tower must be one of {TOWERS}, got {tower!r}")
    return PseudoSiamese(tower=tower, conv=spec.conv, tower_dense=spec.tower_dense, trunk=spec.trunk)


def example_inputs(batch: int = 1) -> tuple[Array, Array, Array]:
    """Zero inputs of the network's shapes (everything legal): for ``init`` and ``eval_shape``."""
    return (jnp.zeros((batch, *CARD_SHAPE), jnp.int8), jnp.zeros((batch, *ACTION_SHAPE), jnp.int8),
            jnp.ones((batch, betting.NUM_ACTIONS), jnp.bool_))


def init_params(module: PseudoSiamese, key: Array) -> Any:
    """The flax variables ``{"params": ...}`` of ``module``."""
    return module.init(key, *example_inputs())


def param_shapes(module: PseudoSiamese) -> Any:
    """The parameters' shapes (``jax.ShapeDtypeStruct`` leaves) without initialising any."""
    return jax.eval_shape(lambda key: init_params(module, key), jax.random.key(0))


def param_count(params: Any) -> int:
    """Number of parameters (arrays or ``ShapeDtypeStruct`` leaves)."""
    return int(sum(math.prod(x.shape) for x in jax.tree_util.tree_leaves(params)))


def param_breakdown(params: Any) -> dict[str, int]:
    """``{"conv": n, "dense": n}``: parameters of the convolutions (their kernels and biases)
    and of the fully connected layers (heads included)."""
    out = {"conv": 0, "dense": 0}
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        names = [getattr(p, "key", "") for p in path]
        out["conv" if any(str(n).startswith("Conv_") for n in names) else "dense"] += math.prod(leaf.shape)
    return out


__all__ = [
    "ILLEGAL_LOGIT",
    "PseudoSiamese",
    "SIZES",
    "SOURCE_CONV_PARAMS",
    "SOURCE_DENSE_PARAMS",
    "SOURCE_PARAMS",
    "Size",
    "TOWERS",
    "Tower",
    "example_inputs",
    "init_params",
    "make_network",
    "param_breakdown",
    "param_count",
    "param_shapes",
]
