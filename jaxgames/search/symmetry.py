"""Symmetries of a board game's positions, for training (augmentation) and search (a network
averaged over a position's images).

A symmetry maps one position's observation and a vector over its actions to their images:

    symmetry(obs, action_vector [A]) -> (obs, action_vector [A])

It must be an involution (applied twice it is the identity), so the same map also carries an
image's policy back to the position's actions; a half turn and a mirror are, a quarter turn is
not.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

Array = jax.Array
Symmetry = Callable[[Any, Array], tuple[Any, Array]]
# apply(params, obs [B, ...]) -> (policy logits [B, A], value [B])
ApplyFn = Callable[[Any, Any], tuple[Array, Array]]


def reverse_cells(num_cells: int) -> Symmetry:
    """The 180-degree rotation of a square board whose observation is ``[n, n, ...]`` and
    whose first ``num_cells`` actions are the cells in row-major order (further actions, a
    swap, stay): rows and columns reversed, cell actions in reverse order. For Hex it maps
    each player's edges onto themselves, so it is a symmetry of the game."""

    def sym(obs, actions):
        obs = jax.tree_util.tree_map(lambda o: o[::-1, ::-1], obs)
        actions = jnp.concatenate([actions[:num_cells][::-1], actions[num_cells:]])
        return obs, actions

    return sym


def averaged_apply(apply_fn: ApplyFn, symmetries: Sequence[Symmetry]) -> ApplyFn:
    """``apply_fn`` averaged over each position and its images under ``symmetries``
    (involutions): the policy is the mean of the images' probabilities, each carried back to
    the position's actions, returned as log-probabilities [B, A]; the value is the mean value
    [B]. The position and its images go through ``apply_fn`` as one batch of
    ``(1 + len(symmetries)) * B``, so a search evaluates them in one network call.

    A network that is itself symmetric is unchanged by the average; one that is not loses
    the part of its error that differs between images (AlphaGo's eight-fold average, here for
    any game's symmetries)."""
    symmetries = tuple(symmetries)
    if not symmetries:
        raise ValueError("averaged_apply needs at least one symmetry")

    def apply(params: Any, obs: Any) -> tuple[Array, Array]:
        batch = jax.tree_util.tree_leaves(obs)[0].shape[0]
        # a symmetry maps an observation with an action vector: the images' observations are
        # taken with a zero vector of the network's action count, their policies carried back below
        zeros = jnp.zeros(jax.eval_shape(apply_fn, params, obs)[0].shape, jnp.float32)
        images = [obs]
        for sym in symmetries:
            images.append(jax.vmap(lambda o, a, s=sym: s(o, a)[0])(obs, zeros))
        stacked = jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs), *images)
        logits, value = apply_fn(params, stacked)
        log_probs = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        per_image = log_probs.reshape((len(images), batch) + log_probs.shape[1:])
        back = [per_image[0]] + [jax.vmap(lambda o, a, s=sym: s(o, a)[1])(obs, per_image[i + 1])
                                 for i, sym in enumerate(symmetries)]
        # log of the mean probability, without leaving log space (stable for tiny priors)
        mean_log_prob = jax.nn.logsumexp(jnp.stack(back), axis=0) - jnp.log(len(images))
        mean_value = value.astype(jnp.float32).reshape(len(images), batch).mean(axis=0)
        return mean_log_prob, mean_value

    return apply


__all__ = ["ApplyFn", "Symmetry", "averaged_apply", "reverse_cells"]
