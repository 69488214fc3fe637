"""MCTS with a network, on any game of the contract: mctx glue (AlphaZero, Gumbel, the source's).

The real game is the model: a node's embedding is the env ``State`` itself. :func:`make_fns`
builds mctx's ``root_fn``/``recurrent_fn`` from an env and a network adapter

    apply_fn(params, obs [B, ...]) -> (logits float32 [B, num_actions], value float32 [B])

whose value lies in [-1, 1] from the view of the player to move (``jaxgames.hex.network.make``
gives one); every node's value is kept from the view of its player to move. Two-player
zero-sum games and one-player games only; exact only for deterministic games. The selection
never picks an illegal action. ``kind``: ``"muzero"`` (PUCT), ``"gumbel"``, ``"source"`` (Zhang,
Meng & Yang 2020, sec. 1.3, eqs. (5)-(7)); ``lam`` mixes a random playout into every kind's
leaf value. :func:`search` takes a batch of states; :func:`mcts_policy` is an arena policy on
one state whose ``jax.vmap`` folds into one batched search.

How it works (the step's outputs, finished games, illegal actions, the source's search on
mctx, batching): docs/search.md#mcts.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import chex
import jax
import jax.numpy as jnp
import mctx

from jaxgames.core import Env, State
from jaxgames.search import batched_mctx
from jaxgames.search.batching import fold_vmap
from jaxgames.search import keys as key_lib

Array = jax.Array
ApplyFn = Callable[[Any, Any], tuple[Array, Array]]

#: the prior logit of an illegal action (the lowest float32, as mctx masks)
MASKED_LOGIT = float(jnp.finfo(jnp.float32).min)
KINDS = ("muzero", "gumbel", "source")


def mask_logits(logits: Array, legal: Array) -> Array:
    """``logits - max`` with illegal actions at :data:`MASKED_LOGIT`: float32 [B, A]."""
    logits = logits - jnp.max(logits, axis=-1, keepdims=True)
    return jnp.where(legal, logits, MASKED_LOGIT)


def _check_env(env: Env) -> None:
    if env.num_players not in (1, 2):
        raise ValueError(f"mcts handles one- and two-player (zero-sum) games; {env.id!r} has "
                         f"{env.num_players} players")


def _evaluate(env: Env, apply_fn: ApplyFn, params: Any, states: State, key: Array,
              lam: float) -> tuple[Array, Array]:
    """``(masked logits [B, A], value [B])`` of a batch of states for their movers; value 0
    where the game is over. With ``lam > 0`` one random playout per state is mixed in."""
    logits, value = apply_fn(params, states.observation)
    batch = value.shape[0]
    chex.assert_shape(logits, (batch, env.num_actions))
    logits = mask_logits(logits.astype(jnp.float32), states.legal_action_mask)
    value = value.astype(jnp.float32)
    if not _is_zero(lam):
        returns = jax.vmap(env.playout_returns)(states, key_lib.game_keys(key, batch))
        mover = jnp.clip(states.current_player, 0, env.num_players - 1)
        z = jnp.take_along_axis(returns, mover[:, None], axis=1)[:, 0]
        value = (1.0 - lam) * value + lam * z
    done = states.terminated | states.truncated
    return logits, jnp.where(done, 0.0, value)


def _is_zero(x: Any) -> bool:
    """A concrete 0 (a traced ``lam`` runs the playouts, whatever its value)."""
    return isinstance(x, (int, float)) and x == 0


def _as_float(x: Any) -> Any:
    """A Python float, or a float32 array where ``x`` is traced (mctx checks for floats)."""
    return float(x) if isinstance(x, (int, float)) else jnp.asarray(x, jnp.float32)


def make_fns(env: Env, apply_fn: ApplyFn, *, lam: float | Array = 0.0):
    """mctx's ``(root_fn, recurrent_fn)`` for ``env`` with the network ``apply_fn``.

    root_fn(params, key, states [B]) -> mctx.RootFnOutput  (embedding = states)
    recurrent_fn(params, key, action int32 [B], states [B]) -> (mctx.RecurrentFnOutput, states)

    ``lam``: the weight of one random playout's result in each leaf value (the source's
    lambda, eq. (6)); a Python 0 runs no playout. It may be a traced scalar (one compiled
    search for every lambda; the playouts then always run).
    """
    _check_env(env)
    if isinstance(lam, (int, float)) and not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")

    def root_fn(params: Any, key: Array, states: State) -> mctx.RootFnOutput:
        logits, value = _evaluate(env, apply_fn, params, states, key, lam)
        return mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)

    def recurrent_fn(params: Any, key: Array, action: Array, states: State):
        step_key, eval_key = key_lib.split(key)
        batch = action.shape[0]
        mover = states.current_player
        new = jax.vmap(env.step)(states, action.astype(jnp.int32), key_lib.game_keys(step_key, batch))
        safe_mover = jnp.clip(mover, 0, env.num_players - 1)
        reward = jnp.take_along_axis(new.rewards, safe_mover[:, None], axis=1)[:, 0]
        logits, value = _evaluate(env, apply_fn, params, new, eval_key, lam)
        done = new.terminated | new.truncated
        same = new.current_player == mover
        discount = jnp.where(done, 0.0, jnp.where(same, 1.0, -1.0)).astype(jnp.float32)
        out = mctx.RecurrentFnOutput(reward=reward.astype(jnp.float32), discount=discount,
                                     prior_logits=logits, value=value)
        return out, new

    return root_fn, recurrent_fn


# -- selection rules ----------------------------------------------------------------------------


def source_action_selection(rows: batched_mctx.Rows, noise: Array, *, eta: float = 1.0,
                            unvisited_q: float = 0.0) -> Array:
    """Eq. (5) at one node of every game (``batched_mctx.Rows``): ``argmax Q + 2 eta P /
    (1 + N)`` (the mapping: docs/search.md#mcts) over the legal children; ``noise``
    [B, A] (tiny) breaks ties."""
    q = jnp.where(rows.visits > 0, rows.q, unvisited_q)
    score = q + 2.0 * eta * rows.prior / (1.0 + rows.visits) + noise
    invalid = rows.masked if rows.invalid is None else rows.masked | rows.invalid
    return batched_mctx.argmax_last(jnp.where(invalid, -jnp.inf, score))


def _dirichlet(key: Array, logits: Array, legal: Array, fraction: float, alpha: float) -> Array:
    """Root prior mixed with Dirichlet noise (AlphaZero), illegal actions masked again."""
    probs = jax.nn.softmax(logits)
    noise = key_lib.draw(key, lambda k, lead: jax.random.dirichlet(
        k, jnp.full(logits.shape[-1], alpha, jnp.float32), shape=lead), logits.shape[0])
    noisy = (1.0 - fraction) * probs + fraction * noise
    return mask_logits(jnp.log(jnp.maximum(noisy, jnp.finfo(jnp.float32).tiny)), legal)


def _sample_visits(key: Array, visit_probs: Array, legal: Array, temperature: float) -> Array:
    """int32 [B]: an action drawn with probabilities ``visits ** (1 / temperature)``."""
    logits = jnp.log(jnp.maximum(visit_probs, jnp.finfo(jnp.float32).tiny))
    logits = jnp.where(legal, logits, -jnp.inf)
    logits = logits - jnp.max(logits, axis=-1, keepdims=True)
    logits = logits / jnp.maximum(jnp.finfo(jnp.float32).tiny, temperature)
    return key_lib.categorical(key, logits).astype(jnp.int32)


# -- the search -------------------------------------------------------------------------------


def search(env: Env, apply_fn: ApplyFn, params: Any, states: State, key: Array, *,
           num_simulations: int, kind: str = "muzero", dirichlet_fraction: float = 0.25,
           dirichlet_alpha: float = 0.3, temperature: float = 1.0, lam: float = 0.0,
           eta: float = 1.0, unvisited_q: float = 0.0, pb_c_init: float = 1.25,
           pb_c_base: float = 19652.0, max_num_considered_actions: int = 16,
           gumbel_scale: float = 1.0, max_depth: int | None = None) -> mctx.PolicyOutput:
    """Search a batch of states (every leaf ``[B, ...]``): an ``mctx.PolicyOutput``.

    ``key``: one key for the batch (mctx's way), or ``[B]`` keys, one per game: each game's
    search then depends on its own key alone, whatever other games share its batch or device
    (``jaxgames.search.keys``).

    kind:
      ``"muzero"``: ``mctx.muzero_policy`` (AlphaZero's PUCT, ``pb_c_init``/``pb_c_base``),
        Dirichlet noise at the root (``dirichlet_fraction`` 0 turns it off), the action sampled
        from the visit counts with ``temperature``; ``action_weights`` = visit frequencies.
      ``"gumbel"``: ``mctx.gumbel_muzero_policy`` (``max_num_considered_actions``,
        ``gumbel_scale``; 0 for evaluation); ``action_weights`` = the improved policy.
      ``"source"``: the source's eqs. (5)-(7) (``eta``, ``unvisited_q``; docs/search.md#mcts), with
        the same root noise and acting as ``"muzero"``.
    lam: the weight of a random playout in each leaf value (every kind; 0 = network only).
    ``lam``, ``eta``, ``unvisited_q``, ``temperature``, ``dirichlet_fraction`` and
    ``dirichlet_alpha`` may be traced scalars (one compiled search for self-play and
    evaluation); a Python 0 for ``lam`` / ``dirichlet_fraction`` skips the playouts / noise.

    ``output.action`` int32 [B], ``output.action_weights`` float32 [B, A] (0 on illegal
    actions), ``output.search_tree`` the mctx tree (embeddings: the env states).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    num_simulations = int(num_simulations)
    if num_simulations < 1:
        raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
    root_fn, recurrent_fn = make_fns(env, apply_fn, lam=lam)
    root_key, noise_key, search_key, act_key = key_lib.split(key, 4)
    root = root_fn(params, root_key, states)
    legal = states.legal_action_mask
    invalid = ~legal

    if kind == "muzero":
        out = batched_mctx.muzero_policy(
            params, search_key, root, recurrent_fn, num_simulations, invalid_actions=invalid,
            max_depth=max_depth, mask_children=True,
            dirichlet_fraction=_as_float(dirichlet_fraction), dirichlet_alpha=_as_float(dirichlet_alpha),
            pb_c_init=pb_c_init, pb_c_base=pb_c_base, temperature=temperature, stop_at_finished=True)
        return out
    if kind == "gumbel":
        return batched_mctx.gumbel_muzero_policy(
            params, search_key, root, recurrent_fn, num_simulations, invalid_actions=invalid,
            max_depth=max_depth, max_num_considered_actions=max_num_considered_actions,
            gumbel_scale=gumbel_scale, stop_at_finished=True)

    # kind == "source"
    if not _is_zero(dirichlet_fraction):
        root = root.replace(prior_logits=_dirichlet(
            noise_key, root.prior_logits, legal, dirichlet_fraction, dirichlet_alpha))
    select = functools.partial(source_action_selection, eta=eta, unvisited_q=unvisited_q)
    tree = batched_mctx.search(
        params, search_key, root=root, recurrent_fn=recurrent_fn,
        root_action_selection_fn=select, interior_action_selection_fn=select,
        num_simulations=num_simulations, max_depth=max_depth, invalid_actions=invalid,
        stop_at_finished=True)
    weights = tree.summary().visit_probs
    action = _sample_visits(act_key, weights, legal, temperature)
    return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)


def most_visited(output: mctx.PolicyOutput, legal: Array) -> Array:
    """int32 [B]: the legal root action with the most visits; ties to the higher Q, then the
    lower index."""
    summary = output.search_tree.summary()
    visits = summary.visit_counts
    q = jnp.clip(summary.qvalues, -1.0, 1.0)
    score = visits + jnp.where(visits > 0, (q + 1.0) / 4.0, 0.0)   # the Q part stays below 1
    return jnp.argmax(jnp.where(legal, score, -jnp.inf), axis=-1).astype(jnp.int32)


def mcts_policy(env: Env, apply_fn: ApplyFn, *, num_simulations: int, kind: str = "muzero",
                **kwargs: Any):
    """An arena policy ``policy(params, state, key) -> action`` (int32 []) on one state.

    No root noise (``dirichlet_fraction=0``, ``gumbel_scale=0`` unless given); plays the most
    visited legal move (``"gumbel"``: mctx's choice, the best of the most visited considered
    moves). ``kwargs`` go to :func:`search`. ``jax.vmap`` of the policy (the arena's) runs one
    search over the whole batch; with batched ``params`` (a different network per game) it
    falls back to a plain vmap of the search.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    kwargs.setdefault("dirichlet_fraction", 0.0)
    if kind == "gumbel":
        kwargs.setdefault("gumbel_scale", 0.0)
    _check_env(env)

    def actions(params, states, keys):
        out = search(env, apply_fn, params, states, keys[0], num_simulations=num_simulations,
                     kind=kind, **kwargs)
        if kind == "gumbel":
            return out.action.astype(jnp.int32)
        return most_visited(out, states.legal_action_mask)

    # params are shared by the batch; batched params (a network per game) take a plain vmap
    batched = fold_vmap(actions, shared=(0,))

    def policy(params: Any, state: State, key: Array) -> Array:
        one = jax.tree_util.tree_map(lambda x: x[None], state)
        return batched(params, one, key[None])[0]

    return policy


__all__ = [
    "KINDS",
    "MASKED_LOGIT",
    "make_fns",
    "mask_logits",
    "mcts_policy",
    "most_visited",
    "search",
    "source_action_selection",
]
