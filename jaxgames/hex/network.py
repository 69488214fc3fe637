"""Hex networks (flax.linen) and the adapter the search and the pipelines call.

``kind="source"`` (the default) is the source's network exactly (Zhang, Meng & Yang 2020, sec.
1.1, its Fig. 5): four 3x3 convolutions of 32, 64, 64, 96 filters, a dense 128 (sigmoid), a
value head (the win probability of the player to move) and a policy head (one probability per
cell); 237,882 parameters at 11x11, and every board size from 3 up (a convolution is SAME once
its input is 1x1 or 2x2). ``kind="resnet"``: an AlphaZero-style residual tower for larger runs
on accelerators (any n, a learned swap logit). The modules return *logits*; initialisation is
Keras's defaults. The adapter (:func:`make`) has the game-agnostic shape the search
(``jaxgames.search.mcts``) and the pipelines use::

    apply(params, obs) -> (logits float32 [B, n*n + 1], value float32 [B])

``logits`` over the env's actions (cells, then the swap), ``value`` = 2 p - 1 in [-1, 1] (p the
mover's win probability), each position shown from the mover's side (``mover_frame=True``).
``obs`` may be bool or float, ``[B, n, n, 2]`` or one ``[n, n, 2]`` (outputs then without the
``B``). Everything is jittable and vmappable.

How it works (the layers and the parameter count, small boards, the residual tower, the mover's
frame, the swap logit): docs/hex_training.md#the-network.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxgames.hex.board import check_size

Array = jax.Array

#: the source's convolution filters and dense width
SOURCE_FILTERS = (32, 64, 64, 96)
SOURCE_HIDDEN = 128
#: parameters of the source's network at 11x11 (its Fig. 5)
SOURCE_PARAMS_11 = 237_882
#: the residual tower's default depth and width (``kind="resnet"``)
RESNET_BLOCKS = 6
RESNET_CHANNELS = 64
#: the source used TensorFlow/Keras, whose layers start from Glorot-uniform kernels and zero biases
_KERAS_INIT = nn.initializers.glorot_uniform()


def conv_sizes(board_size: int, num_convs: int = len(SOURCE_FILTERS)) -> list[tuple[str, int]]:
    """``[(padding, output side), ...]`` of the source network's convolutions on an n x n board."""
    side, out = int(board_size), []
    for _ in range(num_convs):
        if side >= 3:
            side -= 2
            out.append(("VALID", side))
        else:
            out.append(("SAME", side))
    return out


def _patch_product(x: Array, kernel: Array) -> Array:
    """A VALID stride-1 convolution as image patches times the kernel as a matrix."""
    kh, kw = kernel.shape[:2]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    # patch channels in (row offset, column offset, input channel) order: the kernel's
    patches = jnp.concatenate([x[:, i:i + oh, j:j + ow, :] for i in range(kh) for j in range(kw)],
                              axis=-1)
    return patches @ kernel.reshape(-1, kernel.shape[-1])


@jax.custom_vjp
def conv_valid(x: Array, kernel: Array) -> Array:
    """``[B, H, W, in] x [kh, kw, in, out] -> [B, H-kh+1, W-kw+1, out]``: XLA's convolution
    forward, the gradients of :func:`_patch_product` backward.

    Why: on XLA's CPU backend the gradient of a convolution with respect to its kernel runs
    7 to 10 times slower inside a loop (the pipelines' SGD runs in ``lax.scan``) than
    outside one: inside, it keeps a layout that misses the fast convolution path. Through
    patches the kernel's gradient is a matrix product and the input's a sum of shifted slices,
    fast in and out of loops; forward, XLA's convolution is the faster of the two (about 2x at
    11x11 with the source's network).
    """
    return jax.lax.conv_general_dilated(x, kernel, (1, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_forward(x, kernel):
    return conv_valid(x, kernel), (x, kernel)


def _conv_backward(residuals, dy):
    return jax.vjp(_patch_product, *residuals)[1](dy)


conv_valid.defvjp(_conv_forward, _conv_backward)


class PatchConv(nn.Module):
    """A stride-1 convolution with ``nn.Conv``'s parameters (``kernel`` [kh, kw, in, out],
    ``bias`` [out]) and results (tested), whose gradients are fast inside loops on a CPU
    (:func:`conv_valid`)."""

    features: int
    kernel_size: tuple[int, int] = (3, 3)
    padding: str = "VALID"
    kernel_init: Callable = nn.initializers.lecun_normal()

    @nn.compact
    def __call__(self, x: Array) -> Array:
        kh, kw = self.kernel_size
        kernel = self.param("kernel", self.kernel_init, (kh, kw, x.shape[-1], self.features))
        bias = self.param("bias", nn.initializers.zeros_init(), (self.features,))
        if self.padding not in ("VALID", "SAME"):
            raise ValueError(f"padding must be VALID or SAME, got {self.padding!r}")
        h, w = x.shape[1:3]
        # A 1x1 output is one matrix product: XLA:CPU's convolution at that size runs at half
        # the speed or less (the source's network at 7x7 has two such layers, 7 -> 5 -> 3 -> 1
        # -> 1, and evaluates 1.4-1.8x faster this way here); the sums are the convolution's
        # own terms, SAME on a 1x1 input adding only the zeros of its padding.
        if self.padding == "SAME" and (h, w) == (1, 1):
            centre = kernel[(kh - 1) // 2, (kw - 1) // 2]
            return (x[:, 0, 0, :] @ centre)[:, None, None, :] + bias
        if self.padding == "VALID" and (h, w) == (kh, kw):
            return (x.reshape(x.shape[0], -1) @ kernel.reshape(-1, self.features))[:, None, None, :] + bias
        if self.padding == "SAME":
            x = jnp.pad(x, ((0, 0), ((kh - 1) // 2, kh // 2), ((kw - 1) // 2, kw // 2), (0, 0)))
        return conv_valid(x, kernel) + bias


class SourceNet(nn.Module):
    """The source's network. ``obs [B, n, n, 2] -> (policy logits [B, n*n], value logit [B])``."""

    board_size: int
    filters: Sequence[int] = SOURCE_FILTERS
    hidden: int = SOURCE_HIDDEN

    @nn.compact
    def __call__(self, obs: Array) -> tuple[Array, Array]:
        n = self.board_size
        x = obs.astype(jnp.float32)
        for i, (features, (padding, _)) in enumerate(zip(self.filters, conv_sizes(n, len(self.filters)))):
            x = nn.relu(PatchConv(features, (3, 3), padding=padding, kernel_init=_KERAS_INIT,
                                  name=f"Conv_{i}")(x))
        x = x.reshape(x.shape[0], -1)
        x = nn.sigmoid(nn.Dense(self.hidden, kernel_init=_KERAS_INIT)(x))
        value_logit = nn.Dense(1, kernel_init=_KERAS_INIT, name="value")(x)[:, 0]
        policy_logits = nn.Dense(n * n, kernel_init=_KERAS_INIT, name="policy")(x)
        return policy_logits, value_logit


class _ResBlock(nn.Module):
    channels: int

    @nn.compact
    def __call__(self, x: Array) -> Array:
        y = nn.relu(nn.LayerNorm()(PatchConv(self.channels, (3, 3), padding="SAME", name="Conv_0")(x)))
        y = nn.LayerNorm()(PatchConv(self.channels, (3, 3), padding="SAME", name="Conv_1")(y))
        return nn.relu(x + y)


class ResNet(nn.Module):
    """Residual tower. ``obs [B, n, n, 2] -> (policy logits [B, n*n + 1], value logit [B])``."""

    board_size: int
    blocks: int = RESNET_BLOCKS
    channels: int = RESNET_CHANNELS
    value_hidden: int = 128

    @nn.compact
    def __call__(self, obs: Array) -> tuple[Array, Array]:
        n = self.board_size
        x = obs.astype(jnp.float32)
        x = nn.relu(nn.LayerNorm()(PatchConv(self.channels, (3, 3), padding="SAME", name="Conv_0")(x)))
        for _ in range(self.blocks):
            x = _ResBlock(self.channels)(x)
        b = x.shape[0]
        p = nn.relu(nn.LayerNorm()(PatchConv(2, (1, 1), name="Conv_1")(x))).reshape(b, -1)
        policy_logits = nn.Dense(n * n + 1, name="policy")(p)
        v = nn.relu(nn.LayerNorm()(PatchConv(1, (1, 1), name="Conv_2")(x))).reshape(b, -1)
        v = nn.relu(nn.Dense(self.value_hidden)(v))
        value_logit = nn.Dense(1, name="value")(v)[:, 0]
        return policy_logits, value_logit


class Network(NamedTuple):
    """What :func:`make` returns; unpacks as ``module, init, apply, raw = make(...)``.

    module: the flax module; ``module.apply(params, obs [B, n, n, 2])`` gives
        ``(policy logits [B, n*n] (source) or [B, n*n + 1] (resnet), value logit [B])`` in the
        frame it is shown (the mover's, see :func:`to_mover_frame`).
    init:   ``init(key) -> params`` (the flax variables dict ``{"params": ...}``).
    apply:  ``apply(params, obs) -> (logits float32 [B, n*n + 1], value float32 [B] in [-1, 1])``.
    raw:    ``raw(params, obs) -> (policy logits, value logit)``: the module's outputs for the
        board as it is (the mover frame applied and undone), batched or not.
    """

    module: nn.Module
    init: Callable[[Array], Any]
    apply: Callable[[Any, Array], tuple[Array, Array]]
    raw: Callable[[Any, Array], tuple[Array, Array]]

    def value_prob(self, params: Any, obs: Array) -> Array:
        """float32 [B]: the mover's win probability (the source's sigmoid output, for its
        loss (1), which regresses it on z in {0, 1})."""
        return jax.nn.sigmoid(self.raw(params, obs)[1])

    def value_logit(self, params: Any, obs: Array) -> Array:
        """float32 [B]: the value before its sigmoid (for a stable binary cross-entropy)."""
        return self.raw(params, obs)[1]


def num_params(params: Any) -> int:
    return int(sum(math.prod(x.shape) for x in jax.tree_util.tree_leaves(params)))


def _batched_call(fn, obs: Array):
    """Call ``fn`` on ``[B, n, n, 2]``; a single ``[n, n, 2]`` gets (and loses) a batch axis."""
    obs = jnp.asarray(obs)
    if obs.ndim == 3:
        return jax.tree_util.tree_map(lambda x: x[0], fn(obs[None]))
    if obs.ndim != 4:
        raise ValueError(f"hex observations are [B, n, n, 2] or [n, n, 2], got shape {obs.shape}")
    return fn(obs)


def uniform_swap_logit(cell_logits: Array) -> Array:
    """float32 [...]: the swap logit that gives the swap a ``1 / (n*n + 1)`` prior."""
    return jax.nn.logsumexp(cell_logits, axis=-1) - jnp.log(jnp.float32(cell_logits.shape[-1]))


def mover_is_white(obs: Array) -> Array:
    """bool [B]: White is to move in ``obs`` [B, n, n, 2] (the mover's stones, the opponent's).

    Black moves first, so the mover has as many stones as the opponent when Black is to move
    and one fewer when White is. Exact for games without the swap (pie) rule: after a swap
    the counts read the other way round.
    """
    mine = jnp.sum(obs[..., 0].astype(jnp.int32), axis=(-2, -1))
    theirs = jnp.sum(obs[..., 1].astype(jnp.int32), axis=(-2, -1))
    return mine < theirs


def to_mover_frame(obs: Array, white: Array) -> Array:
    """``obs`` [B, n, n, 2] transposed where ``white``: the board as if the mover were Black.

    The transpose (r, c) -> (c, r) maps the Hex grid onto itself (the six neighbour
    directions onto each other) and swaps the edge pairs, so in this frame every mover joins
    top and bottom. It is its own inverse; :func:`make` applies it to the cell logits too.
    """
    return jnp.where(white[:, None, None, None], jnp.swapaxes(obs, 1, 2), obs)


def size_options(kind: str, *, resnet_blocks: int = RESNET_BLOCKS,
                 resnet_channels: int = RESNET_CHANNELS) -> dict[str, int]:
    """:func:`make`'s keyword arguments for a run's network settings: the residual tower's
    depth and width; the source's network has no size to set, so none for it."""
    if kind != "resnet":
        return {}
    for name, value, low in (("resnet_blocks", resnet_blocks, 0), ("resnet_channels", resnet_channels, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return {"blocks": resnet_blocks, "channels": resnet_channels}


def make(board_size: int = 11, *, kind: str = "source", mover_frame: bool = True,
         **kwargs: Any) -> Network:
    """The network for an n x n board and its adapter (see the module docstring).

    mover_frame: show the network every position from the mover's side, so the same weights
        serve both colours (:func:`to_mover_frame`; the mover's colour from the stone counts,
        :func:`mover_is_white`, so not for games with the swap rule). With False the network
        sees the board as it is and must tell the colours apart from the counts itself.

    kind: ``"source"`` (the paper's network; kwargs ``filters``, ``hidden``) or ``"resnet"``
        (kwargs ``blocks`` (6), ``channels`` (64), ``value_hidden`` (128); a run's settings
        give them through :func:`size_options`).
    """
    n = check_size(board_size)
    if kind == "source":
        module = SourceNet(board_size=n, **kwargs)
    elif kind == "resnet":
        module = ResNet(board_size=n, **kwargs)
    else:
        raise ValueError(f"hex network kind must be 'source' or 'resnet', got {kind!r}")

    shapes = jax.eval_shape(module.init, jax.random.key(0), jax.ShapeDtypeStruct((1, n, n, 2), jnp.float32))

    @jax.jit
    def init(key: Array) -> Any:
        return _glorot_init(key, shapes)

    def module_outputs(params: Any, obs: Array) -> tuple[Array, Array]:
        if obs.shape[-3:] != (n, n, 2):
            raise ValueError(f"a {n}x{n} hex network takes [B, {n}, {n}, 2] observations, got {obs.shape}")
        if not mover_frame:
            return module.apply(params, obs)
        white = mover_is_white(obs)
        policy_logits, value_logit = module.apply(params, to_mover_frame(obs, white))
        cells = to_mover_frame(policy_logits[:, :n * n].reshape(-1, n, n, 1), white)
        return jnp.concatenate([cells.reshape(-1, n * n), policy_logits[:, n * n:]], axis=-1), value_logit

    def forward(params: Any, obs: Array) -> tuple[Array, Array]:
        policy_logits, value_logit = module_outputs(params, obs)
        policy_logits = policy_logits.astype(jnp.float32)
        if policy_logits.shape[-1] == n * n:
            swap = uniform_swap_logit(policy_logits)
            policy_logits = jnp.concatenate([policy_logits, swap[..., None]], axis=-1)
        value = jnp.tanh(0.5 * value_logit.astype(jnp.float32))  # = 2 sigmoid(logit) - 1
        return policy_logits, value

    def apply(params: Any, obs: Array) -> tuple[Array, Array]:
        return _batched_call(lambda o: forward(params, o), obs)

    def raw(params: Any, obs: Array) -> tuple[Array, Array]:
        return _batched_call(lambda o: module_outputs(params, o), obs)

    return Network(module=module, init=init, apply=apply, raw=raw)


def _glorot_init(key: Array, shapes: Any) -> Any:
    """Keras's defaults for every layer: Glorot-uniform kernels, zero biases (LayerNorm scales
    one), the same distribution ``module.init`` draws, from one random call: a flax ``init``
    draws each layer separately, which took seconds to compile on a 2-core CPU."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(shapes)
    sizes = [math.prod(s.shape) for _, s in leaves]
    u = jax.random.uniform(key, (sum(sizes),), jnp.float32, -1.0, 1.0)
    out, start = [], 0
    for (path, s), size in zip(leaves, sizes):
        name = getattr(path[-1], "key", None)
        if name == "kernel":
            receptive = math.prod(s.shape[:-2])
            limit = math.sqrt(6.0 / (receptive * (s.shape[-2] + s.shape[-1])))
            out.append((limit * u[start:start + size]).reshape(s.shape).astype(s.dtype))
        else:
            out.append(jnp.full(s.shape, 1.0 if name == "scale" else 0.0, s.dtype))
        start += size
    return jax.tree_util.tree_unflatten(treedef, out)


def flops_per_eval(board_size: int = 11, filters: Sequence[int] = SOURCE_FILTERS,
                   hidden: int = SOURCE_HIDDEN) -> int:
    """Multiply-adds x 2 of one evaluation of the source's network (activations not counted)."""
    n, side, cin, macs = int(board_size), int(board_size), 2, 0
    for features, (padding, out) in zip(filters, conv_sizes(n, len(filters))):
        macs += out * out * features * 9 * cin
        side, cin = out, features
    macs += side * side * cin * hidden + hidden * (1 + n * n)
    return 2 * macs


__all__ = [
    "Network",
    "PatchConv",
    "ResNet",
    "RESNET_BLOCKS",
    "RESNET_CHANNELS",
    "SOURCE_FILTERS",
    "SOURCE_HIDDEN",
    "SOURCE_PARAMS_11",
    "SourceNet",
    "conv_sizes",
    "flops_per_eval",
    "make",
    "mover_is_white",
    "num_params",
    "size_options",
    "to_mover_frame",
    "uniform_swap_logit",
]
