"""The hold'em pipeline behind ``python -m train.holdem`` (the source: AlphaHoldem, Zhao et al.
2022): the pseudo-Siamese network on the card and action tensors, trained by PPO with the
Trinal-Clip loss (``train/algos/ppo.py``) from one seat against opponents drawn for each group
of games and each update: with probability ``anchor_fraction`` a fixed anchor outside the
lineage (``anchors``: by default the call, all-in and random bots; the full preset adds the
equity bot), else a model drawn among the K best of the rated pool (Best-K self-play; the
learner itself while the pool is empty).

Between rounds (one jitted chunk of updates each): a duplicate evaluation against the five
baselines (random, call, all-in, fold and the equity bot; a bot that is not an anchor never
plays in training, so beating it shows what was learned rather than fitted), then the league's
hook (``league.after_round``): it promotes the newest model, records its duplicate deals
against the anchors, plays it against the most recent pool models and rates every member by
Elo (the first anchor at 0). At the end: the final duplicate evaluation over ``final_eval_deals`` deals a
baseline, local best response (LBR) against the agent, plots, report and summary.

With ``exploiter_share`` above 0 (off by default, not yet measured), an exploiter hunts the
agent (AlphaStar's main exploiters, ``league.Exploiters``): a second PPO learner of the same
network that trains only against the frozen newest model; when its training return against
it clears ``exploiter_margin_mbb`` (the lower end of its 95% interval over a round's updates)
or after ``exploiter_rounds`` rounds, it is frozen into a pool of exploiters and restarted from
the newest model; that share of the agent's groups then faces a frozen exploiter (drawn
uniformly) instead of a Best-K model. Each update trains both learners: about twice the cost.

The pool, its results table and ratings live in the learner's carry (``PPOCarry.pool``), so
they are checkpointed with everything else and ``--resume`` is exact; so do the exploiter,
its target and the frozen exploiters when on.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.holdem import bots as bots_lib
from jaxgames.holdem import encode as encode_lib
from jaxgames.holdem import lbr as lbr_lib
from jaxgames.holdem import network as net_lib
from jaxgames.holdem.agent import network_policy
from jaxgames.holdem.profile import markdown as profile_markdown, preflop_profile
from jaxgames.player import Player
from train.algos import league as league_lib
from train.algos import ppo
from train.algos.opponents import VsOpponents
from train.common import Display, init_distributed, to_host
from train.common.plots import line_plot, plt, save
from train.common.rundir import markdown_table
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, league_hook, run_pipeline

GAME = "holdem"
#: the default training anchors, the league's fixed players outside the lineage: table rows
#: 0.. (the first, the call bot, at Elo 0); ``--anchors`` names others among the baselines
ANCHORS = ("call", "allin", "random")
#: the default share of the groups whose opponent is an anchor (``--anchor-fraction``)
ANCHOR_FRACTION = 0.2
#: the full preset's anchors: the equity bot too (train/holdem.py's PRESETS; docs/lab/holdem.md)
FULL_ANCHORS = ANCHORS + ("equity",)
#: the evaluation's baselines (the equity bot plays in training only when an anchor)
BASELINES = ("random", "call", "allin", "fold", "equity")
#: the learner's reward unit, in big blinds: values near 1 (a won or lost stack is 2), so the
#: value loss does not swamp the policy's in the clipped gradient (in big blinds its squared
#: error reaches 10^4: measured, the policy then barely moved)
REWARD_UNIT_BB = 100
#: random deals of the final agent's preflop profile (jaxgames.holdem.profile): its fifths are
#: 400 deals each
PROFILE_DEALS = 2_000
NETWORK = 0   # Opponent.kind of a network (a pool model, or the learner itself); 1 + i: the anchor i


@chex.dataclass(frozen=True)
class Opponent:
    """The opponent of one group of games for one update."""

    kind: jax.Array    # int32 []  NETWORK, or 1 + i for the fixed anchor anchors[i]
    params: object     # the network's variables (a pool model's, or the learner's own)


def network(config) -> net_lib.PseudoSiamese:
    return net_lib.make_network(config.network, tower=config.tower or None)


def features(env):
    """``features(state, seat) -> (cards int8 [6,4,13], actions int8 [24,4,9])``: what ``seat``
    sees (``env.observe``), encoded as the source's tensors."""

    def fn(state, seat):
        return encode_lib.encode(env.observe(state, seat))

    return fn


def param_count(config) -> int:
    net = network(config)
    return net_lib.param_count(jax.eval_shape(net.init, jax.random.key(0), *net_lib.example_inputs()))


def memory(config) -> tuple[dict[str, int], dict[str, int]]:
    """``(held, passing)`` bytes for :func:`train.common.config.check_memory`: the network,
    its Adam moments and the pool of past models all along; for a while an update's rollout
    (each decision's two tensors, mask and scalars; the game states in flight) or the
    evaluation's games. The largest arrays only: a lower bound."""
    lc = config.learner
    params = 4 * param_count(config)
    decision = math.prod(encode_lib.CARD_SHAPE) + math.prod(encode_lib.ACTION_SHAPE) + 9 + 6 * 4
    state = _state_bytes()
    held = {
        "the network and its Adam moments (network)": 3 * params,
        "the league's pool of past models (pool_capacity, network)": config.pool_capacity * params,
    }
    if config.exploiter_share > 0:
        held["the exploiter, its Adam moments and target (network)"] = 4 * params
        held["the frozen exploiters (exploiter_capacity, network)"] = config.exploiter_capacity * params
    passing = {
        "an update's rollout (num_envs, num_steps)": lc.num_envs * (lc.num_steps * decision + 2 * state),
        "the evaluation's games (final_eval_deals)": 2 * max(config.eval_deals, config.final_eval_deals) * 2 * state,
    }
    return held, passing


@functools.lru_cache(maxsize=None)
def _state_bytes() -> int:
    state = jax.eval_shape(lambda: jaxgames.make(GAME).init(jax.random.key(0)))
    return sum(math.prod(x.shape) * x.dtype.itemsize for x in jax.tree_util.tree_leaves(state))


# -- the opponents -----------------------------------------------------------------------------


def choose_opponent(pool, params, key, *, best_k: int, anchor_fraction: float,
                    num_anchors: int = len(ANCHORS), exploiter_share: float = 0.0) -> Opponent:
    """One group's opponent for one update: a fixed anchor with probability
    ``anchor_fraction`` (uniform among the ``num_anchors``), else a model drawn uniformly among
    the ``best_k`` best rated of the pool (the learner itself while the pool is empty). With
    ``exploiter_share`` > 0 (``pool`` a ``league.WithExploiters``), that share of the draws is a
    frozen exploiter (uniform among them) instead, once one is frozen (before: the Best-K draw).
    Jittable."""
    k_anchor, k_which, k_slot = jax.random.split(key, 3)
    league = league_lib.league_of(pool)
    anchor = jax.random.bernoulli(k_anchor, anchor_fraction)
    which = jax.random.randint(k_which, (), 0, num_anchors)
    slot = league_lib.sample_best_k(league, best_k, k_slot)
    has = league.size > 0
    net_params = jax.tree_util.tree_map(lambda p, q: jnp.where(has, p, q), league_lib.get(league, slot), params)
    if exploiter_share > 0:   # static: share 0 draws exactly as before
        exploiters = pool.exploiters
        u = jax.random.uniform(k_anchor, ())
        anchor = u < anchor_fraction
        faces = (~anchor) & (u < anchor_fraction + exploiter_share) & (exploiters.pool.size > 0)
        frozen = league_lib.get(exploiters.pool, league_lib.sample_exploiter(exploiters, jax.random.fold_in(k_slot, 1)))
        net_params = jax.tree_util.tree_map(lambda p, q: jnp.where(faces, p, q), frozen, net_params)
    return Opponent(kind=jnp.where(anchor, 1 + which, NETWORK).astype(jnp.int32), params=net_params)


def exploiter_opponent(target, key) -> Opponent:
    """The exploiter's opponent in every group: the frozen main model ``target``."""
    del key
    return Opponent(kind=jnp.int32(NETWORK), params=target)


def opponent_policy(env, net, anchors: Sequence[str] = ANCHORS):
    """``policy(opponent, index, state, key) -> action`` of the player to move: the network
    (sampling its masked softmax) or the bot of one of ``anchors``, by ``opponent.kind``."""
    anchors = [bots_lib.make_bot(env, name) for name in anchors]
    play_network = network_policy(env, net)   # the agent's own policy (jaxgames/holdem/agent.py)

    def network_action(opponent, state, key):
        return play_network(opponent.params, state, key).astype(jnp.int32)

    def policy(opponent: Opponent, index, state, key):
        del index  # one opponent per group: the group's table is that opponent
        branches = [functools.partial(network_action, opponent)] + [
            (lambda b: lambda s, k: b.policy(None, s, k).astype(jnp.int32))(b) for b in anchors]
        return jax.lax.switch(opponent.kind, branches, state, key)

    return policy


def value_bounds(env):
    """AlphaHoldem's value clip: ``(-chips the learner put in, chips the opponent put in)`` at
    the end of the hand, in the rewards' unit (:data:`REWARD_UNIT_BB` big blinds)."""

    def bounds(final_state, seat):
        mine, theirs = final_state.committed[seat], final_state.committed[1 - seat]
        return jnp.stack([-mine, theirs]).astype(jnp.float32) / (REWARD_UNIT_BB * env.big_blind)

    return bounds


def build(config):
    """``(env, net, learner, agent)`` for a ``train.holdem.Config`` (:func:`build_parts`)."""
    return build_parts(network_size=config.network, tower=config.tower, pool_capacity=config.pool_capacity,
                       best_k=config.best_k, anchor_fraction=config.anchor_fraction,
                       anchors=anchor_names(config.anchors), learner=config.learner,
                       exploiter_share=config.exploiter_share, exploiter_capacity=config.exploiter_capacity)


def anchor_names(anchors: str) -> tuple[str, ...]:
    """The anchors of ``--anchors`` (comma-separated baseline names), checked: ValueError
    names the problem."""
    names = tuple(n.strip() for n in anchors.split(","))
    unknown = [n for n in names if n not in BASELINES]
    if unknown or not anchors.strip():
        raise ValueError(f"anchors must be comma-separated names among {', '.join(BASELINES)}, got {anchors!r}")
    if len(set(names)) < len(names):
        raise ValueError(f"anchors must name each bot once, got {anchors!r}")
    return names


def build_parts(*, network_size: str, tower: str, pool_capacity: int, best_k: int, anchor_fraction: float,
                learner: ppo.PPOConfig, anchors: Sequence[str] = ANCHORS, exploiter_share: float = 0.0,
                exploiter_capacity: int = 8):
    """``(env, net, learner, agent)``: the learner (``ppo.make``; ``ppo.make_with_exploiter``
    when ``exploiter_share`` > 0) and the agent as a
    :class:`~jaxgames.player.Player` (its policy samples the network's masked softmax; its
    probabilities feed LBR). Keyword settings, so that a benchmark builds the run's learner
    without the entry module's Config."""
    env = jaxgames.make(GAME)   # the default table (stacks 20,000, blinds 50/100), as the source's
    net = net_lib.make_network(network_size, tower=tower or None)
    feats = features(env)
    wrapper = VsOpponents(env, opponent_policy=opponent_policy(env, net, anchors),
                          draw_opponent=lambda table, key: jnp.int32(0),
                          value_bounds=value_bounds(env), reward_scale=1.0 / (REWARD_UNIT_BB * env.big_blind))
    params0 = jax.eval_shape(net.init, jax.random.key(0), *net_lib.example_inputs())
    pool = league_lib.empty(jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), params0),
                            capacity=pool_capacity, num_fixed=len(anchors))
    choose = functools.partial(choose_opponent, best_k=best_k, anchor_fraction=anchor_fraction,
                               num_anchors=len(anchors), exploiter_share=exploiter_share)
    if exploiter_share > 0:
        trainer = ppo.make_with_exploiter(learner, wrapper, net, features=feats, pool=pool, choose_opponent=choose,
                                          exploiter_opponent=exploiter_opponent, capacity=exploiter_capacity)
    else:
        trainer = ppo.make(learner, wrapper, net, features=feats, pool=pool, choose_opponent=choose)
    agent = Player("agent", trainer.policy, None, probs=trainer.probs)
    return env, net, trainer, agent


# -- evaluation ----------------------------------------------------------------------------------


def evaluate(env, agent: Player, params, key, *, num_deals: int) -> dict[str, bots_lib.HeadToHead]:
    """The agent's duplicate match against each baseline: ``{name: HeadToHead}`` (mbb/hand
    from the agent's side, 95% interval over deals)."""
    return bots_lib.against_baselines(env, agent, params, key, names=BASELINES, num_deals=num_deals)


#: LBR's all-in adjusted winnings against the equity and the random bot, mbb/hand, over 16,384
#: hands (the full preset's seed 1 at 160 rounds, docs/holdem_training.md): the LBR curve's
#: reference lines
LBR_EQUITY_BOT, LBR_RANDOM_BOT = 11_128, 11_591
#: the bots LBR also plays at the end, over the agent's hands and deals: the issue's yardsticks,
#: measured in the same run
LBR_REFERENCE_BOTS = ("equity", "random")
#: LBR deals per jitted batch: LBR weighs the agent's probabilities for every hand the
#: opponent may hold (1,326 network evaluations a decision), so a batch's memory grows with
#: it (64 deals: 3.8 GB at the peak; 32: 2.4 GB, measured)
LBR_BATCH_DEALS = 32


def local_best_response(env, agent: Player, params, key, *, hands: int) -> dict:
    """LBR's winnings against the agent over ``hands`` hands (each deal with LBR on the button
    and in the big blind), in batches of :data:`LBR_BATCH_DEALS` deals: ``{"mean", "ci95"}``
    mbb/hand (95% interval over deals), ``"seat_mean"`` [button, big blind], ``"hands"``, and
    ``"allin"``: ``{"mean", "ci95"}`` of the same hands all-in adjusted (``lbr.allin_adjusted``)."""
    deals = hands // 2
    lbr = lbr_lib.LocalBestResponse(env, agent, num_deals=min(deals, LBR_BATCH_DEALS))   # compiled once a process
    r = lbr_lib.pooled([lbr(params, jax.random.fold_in(key, i)) for i in range(-(-deals // lbr.num_deals))],
                       deals, env.big_blind)
    return {"mean": r.mean, "ci95": r.ci95, "seat_mean": [float(x) for x in r.seat_mean], "hands": r.num_hands,
            "allin": {"mean": r.allin_mean, "ci95": r.allin_ci95}}


def mbb_row(results: dict[str, bots_lib.HeadToHead]) -> dict[str, float]:
    row = {}
    for name, r in results.items():
        row[f"mbb_vs_{name}"] = r.mean
        row[f"mbb_vs_{name}_ci95"] = r.ci95
    return row


@functools.lru_cache(maxsize=2)
def _compiled(key_config):
    """What a run compiles, shared by the runs of one process with the same settings."""
    env, net, learner, agent = build(key_config)
    return env, net, learner, agent, jax.jit(learner.init)


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train, evaluate and write the run folder; returns the summary (the same on every
    process of a multi-host run, where process 0 alone writes)."""
    init_distributed()   # first: before the pipeline uses JAX
    return run_pipeline(pipeline(config), config, stop_after_chunks=stop_after_chunks)


def pipeline(config) -> Pipeline:
    """The run's own parts (``train/common/skeleton.py`` runs them): the learner, each round's
    duplicate evaluation (and LBR every ``lbr_every`` rounds), the league's hook and the final
    evaluation."""
    anchors = anchor_names(config.anchors)
    env, net, learner, agent, init = _compiled(config.build_key())
    lc = config.learner

    def pool_games(newest, other, k):
        h2h = bots_lib.head_to_head(env, agent, agent, k, num_deals=config.elo_deals, params=[newest, other])
        return h2h.deal_returns

    hunted = config.exploiter_share > 0
    hook = league_hook(get=lambda carry: league_lib.league_of(carry.pool),
                       put=lambda carry, pool: carry.replace(pool=carry.pool.replace(league=pool) if hunted else pool),
                       params=learner.params,
                       fixed=lambda results: {i: results[name].deal_returns for i, name in enumerate(anchors)},
                       play=pool_games if config.elo_deals else None, opponents=config.elo_opponents)
    return Pipeline(
        game=GAME, keys=Keys.of(config.seed), init=init, update=learner.update, params=learner.params,
        num_updates=config.rounds * config.updates_per_round, chunk_size=config.updates_per_round,
        evaluate=functools.partial(evaluate_round, config, env, learner, agent),
        league=functools.partial(exploiter_hook, config, learner, hook) if hunted else hook,
        final=functools.partial(final_evaluation, config, env, learner, agent),
        best_metric="score",
        display=Display(enabled=config.progress, desc="holdem decisions", units_per_update=lc.num_envs * lc.num_steps,
                        show=lambda s: f"{s['hands/s']:,.0f} hands/s  mbb/hand vs random {s['vs_random']:+,.0f}"
                                       f"  call {s['vs_call']:+,.0f}  equity {s['vs_equity']:+,.0f}"))


#: mbb/hand of one unit of the learner's return per hand (REWARD_UNIT_BB big blinds)
MBB_PER_UNIT = 1000 * REWARD_UNIT_BB


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def exploiter_hook(config, learner, league, step: int, carry, rnd: Round, keys: Keys) -> tuple[object, dict]:
    """The league's hook (``league``), then the exploiter's (``league.exploiter_round``): freeze it
    and restart it from the newest model when it beat its target by the margin or spent its
    budget; its target the newest model. Host arrays, deterministic in the carry."""
    carry, info = league(step, carry, rnd, keys)
    exploiters, x = league_lib.exploiter_round(
        to_host(carry.pool.exploiters), to_host(learner.params(carry)), margin=config.exploiter_margin_mbb / MBB_PER_UNIT,
        budget=config.exploiter_rounds, params=learner.params,
        restart=functools.partial(ppo.start_exploiter, learner.exploiter))
    carry = carry.replace(pool=carry.pool.replace(exploiters=jax.tree_util.tree_map(jnp.asarray, exploiters)))
    return carry, {**info, "exploiter_mbb": _finite(MBB_PER_UNIT * x["exploiter_return"]),
                   "exploiter_mbb_low": _finite(MBB_PER_UNIT * x["exploiter_return_low"]),
                   "exploiter_rounds": x["exploiter_rounds"], "exploiter_frozen": x["exploiter_frozen"],
                   "exploiters": x["exploiters"]}


def evaluate_round(config, env, learner, agent, c: Chunk) -> Round:
    """The round's row: its training figures and the duplicate match against each baseline;
    LBR's winnings every ``lbr_every`` rounds."""
    params = to_host(learner.params(c.carry))
    results = evaluate(env, agent, params, c.keys.round(c.step), num_deals=config.eval_deals)
    m, carry, lc = c.metrics, c.carry, config.learner
    hands = int(m["games_finished"].sum())
    row = {"round": c.step // config.updates_per_round, "hands": int(np.asarray(carry.episodes)),
           "decisions": int(np.asarray(carry.decisions)),
           "hands_per_second": hands / max(c.seconds, 1e-9),
           "decisions_per_second": lc.num_envs * lc.num_steps * len(m["games_finished"]) / max(c.seconds, 1e-9),
           "training_return_bb": REWARD_UNIT_BB * float(np.average(m["episode_return"],
                                                                   weights=np.maximum(m["games_finished"], 1e-9))),
           **{k: float(np.mean(m[k])) for k in ("policy_loss", "value_loss", "entropy", "approx_kl",
                                                 "clip_fraction")},
           **mbb_row(results), "seconds": c.seconds}
    if config.lbr_every and row["round"] % config.lbr_every == 0:
        # the same deals every time (common random numbers): the curve's changes are the models'
        lbr = local_best_response(env, agent, params, c.keys.lbr_curve, hands=config.round_lbr_hands)
        row.update(lbr_mbb=lbr["mean"], lbr_mbb_ci95=lbr["ci95"], lbr_mbb_allin_adjusted=lbr["allin"]["mean"],
                   lbr_mbb_allin_adjusted_ci95=lbr["allin"]["ci95"])
    shown = {"hands/s": row["hands_per_second"], "vs_random": row["mbb_vs_random"],
             "vs_call": row["mbb_vs_call"], "vs_equity": row["mbb_vs_equity"],
             "score": min(row["mbb_vs_call"], row["mbb_vs_random"], row["mbb_vs_allin"])}
    return Round(row, shown, results=results)


def final_evaluation(config, env, learner, agent, end: End) -> Final:
    """The last model's duplicate match against each baseline over ``final_eval_deals``, LBR
    against it and against the reference bots over the same deals, its preflop profile."""
    anchors, rows = anchor_names(config.anchors), end.rows
    params = to_host(learner.params(end.carry))
    final = evaluate(env, agent, params, end.keys.final, num_deals=config.final_eval_deals)
    summary = {f"mbb_vs_{name}": {"mean": r.mean, "ci95": r.ci95} for name, r in final.items()}
    lbr = None
    if config.lbr_hands:
        lbr = local_best_response(env, agent, params, end.keys.lbr, hands=config.lbr_hands)
        summary["lbr_mbb"] = {"mean": lbr["mean"], "ci95": lbr["ci95"]}
        summary["lbr_mbb_allin_adjusted"] = lbr["allin"]
        lbr["bots"] = {}
        # the reference bots as one bot (the index its parameter): one LBR program for both,
        # the same results as each bot's own (25 s against 16 s at 4 hands, under load)
        reference = bots_lib.one_of([bots_lib.make_bot(env, name) for name in LBR_REFERENCE_BOTS])
        for i, name in enumerate(LBR_REFERENCE_BOTS):   # the same deals (key) as the agent's
            r = local_best_response(env, reference, jnp.int32(i), end.keys.lbr, hands=config.lbr_hands)
            summary[f"lbr_mbb_{name}_bot"] = {"mean": r["mean"], "ci95": r["ci95"]}
            summary[f"lbr_mbb_allin_adjusted_{name}_bot"] = r["allin"]
            lbr["bots"][name] = r
    # how the agent plays, beside how much it wins: two of the three full-preset agents that
    # lost to the equity bot had collapsed to one preflop line whatever their cards
    # (docs/lab/holdem.md)
    profile = preflop_profile(env, agent.probs, params, end.keys.profile, num_deals=PROFILE_DEALS)
    ratings = league_lib.elo_list(to_host(league_lib.league_of(end.carry.pool)))
    summary.update({
        "final_eval_deals": config.final_eval_deals, "lbr_hands": config.lbr_hands,
        "hands_trained": int(np.asarray(end.carry.episodes)),
        "decisions_trained": int(np.asarray(end.carry.decisions)),
        "final_elo": ratings.get(rows[-1]["generation"]), "rounds": config.rounds,
        "loss": config.learner.loss, "parameters": param_count(config),
    })
    if config.exploiter_share > 0:
        summary["exploiters_frozen"] = int(np.asarray(end.carry.pool.exploiters.pool.added))
    return Final(summary, report=lambda s: report(config, anchors, s, rows, ratings, final, lbr, profile),
                 files=lambda rundir, s: write_plots(rundir, rows, ratings, anchors))


# -- plots and report ----------------------------------------------------------------------------


def write_plots(rundir, rows, ratings, anchors: Sequence[str]) -> None:
    """``mbb.png`` (each round's model against each baseline, 95% bars), ``elo.png`` (the
    pool's models, the first anchor at 0), ``lbr.png`` (LBR against the rounds' models where
    measured, under their margins: :func:`plot_lbr_curve`) and ``losses.png``, over rounds."""
    rounds = [r["round"] for r in rows]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name in BASELINES:
        ax.errorbar(rounds, [r[f"mbb_vs_{name}"] for r in rows], yerr=[r[f"mbb_vs_{name}_ci95"] for r in rows],
                    marker="o", capsize=3, label=f"vs {name}")
    ax.axhline(0.0, linestyle="--", color="k", linewidth=1)
    ax.set(title="Hold'em: the agent against the baselines (duplicate, 95% intervals)", xlabel="round",
           ylabel="mbb/hand")
    ax.set_yscale("symlog", linthresh=1000)
    save(fig, ax, rundir.plots / "mbb.png", legend_fontsize=8)
    gens = sorted(g for g in ratings if g >= 0)
    line_plot(rundir.plots / "elo.png", {"pool model": (gens, [ratings[g] for g in gens])},
              hlines={f"{anchors[0]} bot": 0.0, **{f"{n} bot": ratings[-1 - i] for i, n in enumerate(anchors)
                                                   if i and -1 - i in ratings}},
              title=f"Elo of each round's model ({anchors[0]} bot = 0)", xlabel="round (generation)", ylabel="Elo")
    measured = [r for r in rows if "lbr_mbb" in r]
    if measured:
        plot_lbr_curve(rundir.plots / "lbr.png", rows, measured)
    line_plot(rundir.plots / "losses.png",
              {k: (rounds, [r[k] for r in rows]) for k in ("policy_loss", "value_loss", "entropy")},
              title="PPO losses (per round)", xlabel="round", ylabel="loss")


def plot_lbr_curve(path, rows, measured) -> None:
    """LBR's winnings against the rounds' models (all-in adjusted, 95% intervals; as played,
    faint) under the same rounds' margins against the baselines, one x axis: what the agent
    gives away beside what it takes."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True)
    rounds = [r["round"] for r in rows]
    for name in BASELINES:
        top.plot(rounds, [r[f"mbb_vs_{name}"] for r in rows], marker="o", markersize=2, label=f"vs {name}")
    top.axhline(0.0, linestyle="--", color="k", linewidth=1)
    top.set_yscale("symlog", linthresh=1000)
    top.set(title="Hold'em: the agent's margins against the baselines", ylabel="mbb/hand")
    top.grid(alpha=0.3)
    top.legend(fontsize=7, ncol=3)
    x = [r["round"] for r in measured]
    bottom.errorbar(x, [r["lbr_mbb_allin_adjusted"] for r in measured],
                    yerr=[r["lbr_mbb_allin_adjusted_ci95"] for r in measured], marker="o", capsize=3,
                    label="LBR against the agent, all-in adjusted (95% interval)")
    bottom.plot(x, [r["lbr_mbb"] for r in measured], marker=".", alpha=0.4, label="as played")
    for (name, value), color in zip((("equity bot", LBR_EQUITY_BOT), ("random bot", LBR_RANDOM_BOT)), ("C2", "C3")):
        bottom.axhline(value, linestyle="--", linewidth=1, color=color, label=f"LBR against the {name}, adjusted")
    bottom.set(title="Local best response against the rounds' models, the same deals (lower is better)",
               xlabel="round", ylabel="mbb/hand")
    save(fig, bottom, path, legend_fontsize=7)


def report(config, anchors, summary, rows, ratings, final, lbr, profile) -> str:
    lc = config.learner
    loss = ("the Trinal-Clip loss (δ1 = %g, ε = %g; value target clipped to the chips each side put in)"
            % (lc.delta1, lc.clip_eps) if lc.loss == "trinal" else "the plain clipped PPO loss (ε = %g)" % lc.clip_eps)
    table = [[r["round"], r["hands"]] + [f"{r[f'mbb_vs_{b}']:+,.0f} ± {r[f'mbb_vs_{b}_ci95']:,.0f}" for b in BASELINES]
             + ["" if ratings.get(r["generation"]) is None else f"{ratings[r['generation']]:+.0f}"]
             + ([f"{r['lbr_mbb_allin_adjusted']:+,.0f} ± {r['lbr_mbb_allin_adjusted_ci95']:,.0f}"
                 if "lbr_mbb_allin_adjusted" in r else ""] if config.lbr_every else []) for r in rows]
    final_table = [[name, f"{r.mean:+,.0f} ± {r.ci95:,.0f}", f"{r.seat_mean[0]:+,.0f}", f"{r.seat_mean[1]:+,.0f}",
                    r.num_hands] for name, r in final.items()]
    text = (
        f"# Heads-up no-limit hold'em: AlphaHoldem-style PPO with Best-K self-play\n\n"
        f"The {config.network} pseudo-Siamese network ({summary['parameters']:,} parameters) trained by PPO with "
        f"{loss}, {lc.num_envs} games x {lc.num_steps} decisions an update, {config.updates_per_round} updates "
        f"a round, {config.rounds} rounds: {summary['hands_trained']:,} hands. Opponents per group of games and "
        f"update: an anchor ({', '.join(anchors)}) with probability {config.anchor_fraction:g}, else one of the "
        f"{config.best_k} best rated pool models. Seed {config.seed}; {summary['seconds']:.0f} s in all.\n\n"
        + (f"Exploiters (off by default, not yet measured): a share {config.exploiter_share:g} of the groups faced "
           f"one of the {summary['exploiters_frozen']} frozen exploiters once one was frozen (margin "
           f"{config.exploiter_margin_mbb:,.0f} mbb/hand, budget {config.exploiter_rounds} rounds).\n\n"
           if config.exploiter_share > 0 else "")
        + ("The equity bot is an anchor: the agent trained against it, so its result is not a held-out "
           "measure; local best response is.\n\n" if "equity" in anchors else "")
        + f"## Final evaluation\n\nDuplicate deals (each played twice, seats swapped), mbb/hand from the agent's "
        f"side, 95% interval over deals:\n\n"
        + markdown_table(["baseline", "mbb/hand", "agent on the button", "agent in the big blind", "hands"],
                         final_table))
    if lbr is not None:
        text += (f"\nLocal best response against the agent: **{lbr['mean']:+,.0f} ± {lbr['ci95']:,.0f}** mbb/hand "
                 f"over {lbr['hands']:,} hands (LBR on the button {lbr['seat_mean'][0]:+,.0f}, in the big blind "
                 f"{lbr['seat_mean'][1]:+,.0f}); lower is less exploitable. For scale, LBR over the same deals "
                 "wins " + " and ".join(f"{r['mean']:+,.0f} ± {r['ci95']:,.0f} against the {name} bot"
                                        for name, r in lbr["bots"].items()) + ".\n"
                 f"\nThe same hands all-in adjusted (an all-in before the river counted at its expected value "
                 f"over the board still to come: the same expectation, less of the cards' luck): "
                 f"**{lbr['allin']['mean']:+,.0f} ± {lbr['allin']['ci95']:,.0f}** against the agent, "
                 + " and ".join(f"{r['allin']['mean']:+,.0f} ± {r['allin']['ci95']:,.0f} against the {name} bot"
                                for name, r in lbr["bots"].items()) + ".\n")
    text += ("\n## The first decision of a hand\n\nThe agent's probabilities over "
             f"{PROFILE_DEALS:,} random deals, and for the strongest and the weakest fifth of them "
             "(preflop equity against a random hand): a sound player raises more and folds less with strong cards; "
             "one that ignores its cards shows the same numbers in both (`python -m jaxgames.holdem.profile`).\n\n"
             + profile_markdown(profile) + "\n")
    lbr_column = [f"LBR, adjusted ({config.round_lbr_hands:,} hands)"] if config.lbr_every else []
    text += ("\n## Rounds\n\n" + markdown_table(["round", "hands"] + [f"vs {b}" for b in BASELINES] + ["Elo"]
                                                 + lbr_column, table)
             + "\n![mbb/hand](plots/mbb.png)\n\n![Elo](plots/elo.png)\n\n"
             + ("![LBR](plots/lbr.png)\n\n" if any("lbr_mbb" in r for r in rows) else "")
             + "![losses](plots/losses.png)\n")
    return text
