"""One vmap rule for functions written over an explicit batch axis.

The searches (UCT, max^n, the mctx glue, the Hearts trick search) are written for an explicit
batch, ``states [N]``, so that their loops run once for the whole batch and update their trees
in place. A plain ``jax.vmap`` of such a function would add the new axis outside and vmap its
``while_loop``s, which selects every carried array at every iteration. :func:`fold_vmap`
registers the function as its own vmap rule instead (``jax.custom_batching.custom_vmap``):
under ``vmap`` the new axis is folded into the batch, ``[axis_size * N]``, the function runs
once on that batch (through the rule again, so nested vmaps fold as well) and the result is
split back to ``[axis_size, N, ...]``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

__all__ = ["fold_axis", "fold_vmap", "split_axis"]


def fold_vmap(fn: Callable[..., Any], *, shared: Sequence[int] = (),
              shared_batched: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """``fn`` with a vmap rule that folds the vmapped axis into its explicit batch axis.

    ``fn(*args)``: every leaf of every argument has the batch axis ``[N]`` first, except the
    arguments at the positions ``shared`` (one value for the whole batch, such as network
    parameters); every leaf of its output has ``[N]`` first. Under ``vmap`` an argument that
    does not vary along the new axis is broadcast along it. A shared argument that does vary
    along it cannot be folded: then ``shared_batched(axis_size, in_batched, *args)`` gives the
    output ``[axis_size, N, ...]`` (``in_batched`` as ``custom_vmap`` passes it), by default a
    plain ``jax.vmap`` of ``fn``.
    """

    @jax.custom_batching.custom_vmap
    def folded(*args):
        return fn(*args)

    @folded.def_vmap
    def _rule(axis_size, in_batched, *args):
        if any(any(jax.tree_util.tree_leaves(in_batched[i])) for i in shared):
            if shared_batched is None:
                axes = jax.tree_util.tree_map(lambda b: 0 if b else None, in_batched)
                out = jax.vmap(fn, in_axes=axes)(*args)
            else:
                out = shared_batched(axis_size, in_batched, *args)
        else:
            out = split_axis(folded(*(arg if i in shared else fold_axis(arg, batched, axis_size)
                                      for i, (arg, batched) in enumerate(zip(args, in_batched)))),
                             axis_size)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return folded


def fold_axis(tree: Any, batched: Any, axis_size: int) -> Any:
    """Each leaf ``[axis_size, N, ...]`` (or ``[N, ...]`` where ``batched`` is False: it is
    broadcast) -> ``[axis_size * N, ...]``."""

    def fold(x, b):
        if not b:
            x = jnp.broadcast_to(x, (axis_size,) + x.shape)
        return x.reshape((axis_size * x.shape[1],) + x.shape[2:])

    return jax.tree_util.tree_map(fold, tree, batched)


def split_axis(tree: Any, axis_size: int) -> Any:
    """Each leaf ``[axis_size * N, ...]`` -> ``[axis_size, N, ...]``."""
    return jax.tree_util.tree_map(lambda x: x.reshape((axis_size, -1) + x.shape[1:]), tree)
