"""The Hex pipeline behind ``python -m train.hex`` (the source: Zhang, Meng & Yang 2020, sec. 2):
phase 1, supervised training on random games labelled by plain UCT; phase 2, rounds of
self-play against a pool of past models (``train/algos/alphazero.py``); after every round an
arena evaluation against plain UCT (both colours, equal numbers) and games against the pool
models for an Elo list; plots, SGF of evaluation games, the report.

The pipeline's carry is the learner's (``AZCarry``); its league holds the pool and the results
table of the Elo list (fixed player 0: plain UCT, the evaluation's opponent), so both are
checkpointed with everything else and ``--resume`` is exact. The league's hook
(``league.after_round``) runs between rounds: it promotes the newest model, records its
evaluation, plays it against the most recent pool models and rates every member.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import arena as arena_lib
from jaxgames.hex import network as hex_network
from jaxgames.hex.agent import agent_apply
from jaxgames.hex.sgf import to_sgf
from jaxgames.search import mcts
from jaxgames.search.uct import uct_policy
from train.algos import alphazero as az
from train.algos import league as league_lib
from train.common import Display, init_distributed, to_host
from train.common.config import check_int32, check_memory
from train.common.plots import line_plot, plt, save
from train.common.rundir import markdown_table
from train.common.skeleton import Chunk, End, Final, Keys, Pipeline, Round, league_hook, run_pipeline

GAME = "hex"
UCT = 0   # the league's fixed player 0: plain UCT, the evaluation's opponent (Elo 0)

#: the full preset's self-play search (``train/hex.py`` builds its preset from it; the self-play
#: benchmark ``bench/hex_selfplay.py`` measures it without importing the entry module)
FULL_SELF_PLAY = {"board_size": 11, "games_per_update": 128, "simulations": 64, "search": "gumbel"}


def phase1_rounds(config) -> int:
    """Rounds of phase 1: one with UCT labels (the source's supervised start), else none."""
    return 1 if config.phase1 == "uct" else 0


def num_rounds(config) -> int:
    return phase1_rounds(config) + config.rounds


def num_models(config) -> int:
    """Models the pool receives and keeps: one per round (phase 1's too), plus the initial
    network when there is no phase 1."""
    return num_rounds(config) + (1 - phase1_rounds(config))


def pool_capacity(config) -> int:
    """Models the pool keeps: ``pool_size``, or every model of the run (0)."""
    return config.pool_size or num_models(config)


def decay_rounds(config) -> int:
    """Rounds the step size's cosine spans: phase 1's and ``lr_decay_rounds`` self-play rounds
    (0: the run's own, so the cosine ends with the run)."""
    return phase1_rounds(config) + (config.lr_decay_rounds or config.rounds)


def eval_simulations(config) -> int:
    """Simulations of the agent in evaluation games (0 in the config: as in self-play)."""
    return config.eval_simulations or config.simulations


def rung_simulations(config, rung: int) -> int:
    """Simulations of plain UCT on ``rung`` of the run's ladder (``uct_ladder``); without a
    ladder, ``uct_simulations`` (rung 0, the only one)."""
    return config.uct_ladder[rung] if config.uct_ladder else config.uct_simulations


def climb(rung: int, wins: int, games: int, *, rungs: int, threshold: float) -> int:
    """The ladder's rung after a round evaluation of ``wins`` in ``games`` against plain UCT on
    ``rung`` (of ``rungs``): one up when the lower end of the win rate's 95% Wilson interval is
    above ``threshold`` (the agent has beaten this rung, not merely been lucky on it), else the
    same; never past the top, never down."""
    low = arena_lib.wilson(wins, games)[0] if games else 0.0
    return min(rung + 1, rungs - 1) if low > threshold else rung


def current_rung(carry) -> int:
    """The carry's rung of the UCT ladder (0 without a ladder)."""
    return 0 if carry.rung is None else int(to_host(carry.rung))


def memory(config) -> tuple[dict[str, int], dict[str, int]]:
    """``(held, passing)`` bytes for :func:`train.common.config.check_memory`, from the
    sizes of the network (:func:`param_count`) and of a game's state: all along the
    network with its average and optimizer state, the league (a pool of ``pool_capacity``
    models, one per round, and its results table, quadratic in them) and the replay
    buffer; for a while the largest of an update's games and searches (an mctx tree node
    holds six [A] rows and a state, a plain-UCT node a state and three [A] rows), an SGD
    minibatch's activations, or an evaluation's games (every game of an arena at once,
    each with the trees of both players). The largest arrays only: a lower bound."""
    n, az = config.board_size, config.learner
    actions, state, obs = _game_sizes(n)
    params = 4 * param_count(config)
    position = obs + 5 * actions + 4          # obs, policy float32 [A], legal [A], value
    node = 24 * actions + 20 + state          # an mctx tree node
    uct_node = 12 * actions + state           # a plain-UCT tree node
    models = pool_capacity(config)
    agent_tree = (eval_simulations(config) + 1) * node
    uct_simulations = max(config.uct_ladder or (config.uct_simulations,))   # the ladder's top rung
    uct_tree = (uct_simulations + 1) * uct_node
    held = {
        "the network, its average and optimizer state (network size)": 3 * params,
        "the league's pool of past models and their results table (rounds, network size)":
            models * params + 2 * 4 * (1 + models) ** 2,
        "the replay buffer (buffer_size)": az.buffer_size * position,
    }
    passing = {
        "an update's self-play games and searches (games_per_update, simulations)":
            az.games_per_update * (n * n * position + (config.simulations + 1) * node),
        "an SGD minibatch's activations (batch_size)": az.batch_size * 3 * 4 * _activations(config),
        "the games against UCT (eval_games, final_eval_games, sgf_games, eval_simulations, "
        "uct_simulations)": max(config.eval_games, config.final_eval_games, config.sgf_games) * (agent_tree + uct_tree),
        "the Elo games (elo_games, eval_simulations)": config.elo_games * 2 * agent_tree,
    }
    if config.phase1 == "uct":
        passing["phase 1's UCT labels (games_per_update, phase1_simulations)"] = (
            az.games_per_update * (az.phase1_simulations + 1) * uct_node)
    if az.anchor_fraction > 0:
        anchor = uct_simulations if config.uct_ladder else az.anchor_simulations
        passing["the UCT anchor's searches (games_per_update, anchor_simulations)"] = (
            az.games_per_update * (anchor + 1) * uct_node)
    return held, passing


def network(config):
    """The run's policy-value network (``jaxgames/hex/network.py``)."""
    return hex_network.make(config.board_size, kind=config.network, **hex_network.size_options(
        config.network, resnet_blocks=config.resnet_blocks, resnet_channels=config.resnet_channels))


def param_count(config) -> int:
    """Parameters of the run's network (abstract: nothing is computed)."""
    return hex_network.num_params(jax.eval_shape(network(config).init, jax.random.key(0)))


def _activations(config) -> int:
    """Floats of one position's forward activations (the largest layers)."""
    n = config.board_size
    if config.network == "source":
        return sum(side * side * f for f, (_, side) in zip(hex_network.SOURCE_FILTERS, hex_network.conv_sizes(n))) \
            + hex_network.SOURCE_HIDDEN
    return n * n * config.resnet_channels * (3 + 6 * config.resnet_blocks)


@functools.lru_cache(maxsize=None)
def _game_sizes(board_size: int) -> tuple[int, int, int]:
    """``(actions, bytes of a state, bytes of an observation)`` of Hex on this board."""
    env = jaxgames.make("hex", board_size=board_size)
    state = jax.eval_shape(lambda: env.init(jax.random.key(0)))
    obs = jax.eval_shape(lambda s: env.observe(s, s.current_player), state)
    nbytes = lambda tree: sum(math.prod(x.shape) * x.dtype.itemsize  # noqa: E731
                              for x in jax.tree_util.tree_leaves(tree))
    return env.num_actions, nbytes(state), nbytes(obs)


def extendable_fields(config) -> frozenset[str]:
    """``rounds`` when nothing computed so far depends on it: the pool's size is set and the
    step size's cosine (if any) spans a set number of rounds (``--resume`` may then raise it)."""
    fixed = config.pool_size > 0 and (not config.lr_decay or config.lr_decay_rounds > 0)
    return frozenset({"rounds"}) if fixed else frozenset()


def check_run(config) -> None:
    """The config's checks beyond single fields (ValueError in one line): the ladder, the
    starting network, the int32 counters and the memory bound."""
    ladder = config.uct_ladder
    if any(s < 1 for s in ladder) or any(b <= a for a, b in zip(ladder, ladder[1:])):
        raise ValueError(f"uct_ladder must be ascending simulation counts >= 1, got {' '.join(map(str, ladder))}")
    if not 0.0 < config.ladder_threshold < 1.0:
        raise ValueError(f"ladder_threshold must be in (0, 1), got {config.ladder_threshold}")
    if config.init_from:
        check_init_from(config)
    updates = num_rounds(config) * config.updates_per_round
    check_int32("the updates ((phase 1 +) rounds x updates_per_round)", updates,
                "the learner counts its updates in an int32")
    check_int32("the games ((phase 1 +) rounds x updates_per_round x games_per_update)",
                updates * config.learner.games_per_update, "the learner counts its games in an int32")
    check_memory(*memory(config))


def initial_agent(config):
    """The trained agent ``init_from`` names: a shipped agent, else a run folder (its best/)."""
    from jaxgames import pretrained   # orbax and the package data: only a warm start needs them
    from jaxgames.hex.agent import load_agent

    if config.init_from in pretrained.names(GAME):
        return pretrained.load(GAME, config.init_from)
    return load_agent(config.init_from)


def check_init_from(config) -> None:
    """ValueError in one line unless ``init_from`` reads as a network of this run's board and
    kind (names the shipped agents when it is neither one of them nor a run folder)."""
    from jaxgames import pretrained
    try:
        agent = initial_agent(config)
    except ValueError as e:
        shipped = ", ".join(pretrained.names(GAME))
        raise ValueError(f"init_from {config.init_from!r}: {e} (a shipped agent: {shipped}; or a run folder)") from None
    ours = (config.board_size, config.network, hex_network.size_options(
        config.network, resnet_blocks=config.resnet_blocks, resnet_channels=config.resnet_channels))
    theirs = (agent.board_size, agent.network_kind, dict(agent.sizes))
    if ours != theirs:
        raise ValueError(f"init_from {config.init_from!r} is a {theirs[0]}x{theirs[0]} {theirs[1]} network "
                         f"{theirs[2] or ''}, this run trains a {ours[0]}x{ours[0]} {ours[1]} {ours[2] or ''}: "
                         f"give the run its --board-size and --network".replace("  ", " "))


def build(config):
    """``(env, network, learner, agent_policy, uct_policy)`` for ``config``."""
    env = jaxgames.make("hex", board_size=config.board_size)
    net = network(config)
    init_fn = net.init
    if config.init_from:   # a warm start: every run's key gets the same trained network
        start = jax.tree_util.tree_map(np.asarray, initial_agent(config).params)
        init_fn = lambda key: jax.tree_util.tree_map(jnp.asarray, start)  # noqa: E731

    def self_play_search(apply_fn):
        return functools.partial(
            mcts.search, env, apply_fn, num_simulations=config.simulations, kind=config.search,
            dirichlet_fraction=config.dirichlet_fraction, dirichlet_alpha=config.dirichlet_alpha)

    n = config.board_size
    learner = az.make(config.learner, env, (init_fn, net.apply), self_play_search, max_moves=n * n,
                      pool_capacity=pool_capacity(config), num_fixed=1,
                      phase1_updates=phase1_rounds(config) * config.updates_per_round,
                      decay_updates=decay_rounds(config) * config.updates_per_round if config.lr_decay else 0,
                      symmetry=az.reverse_cells(n * n) if config.augment else None,
                      ladder=tuple(config.uct_ladder))
    agent = mcts.mcts_policy(env, agent_apply(net.apply, n, config.eval_symmetry),
                             num_simulations=eval_simulations(config), kind=config.search)
    uct = uct_policy(env, num_simulations=rung_simulations(config, 0))
    return env, net, learner, agent, uct


def game_recorder(env, policies, num_games: int, max_moves: int):
    """``record(params, key) -> int32 [num_games, max_moves]``, jitted: the actions of games
    between two policies, the first half with policy 0 as Black, the rest with policy 1 as
    Black; -1 after the end."""
    half = num_games // 2
    black = jnp.concatenate([jnp.zeros(half, jnp.int32), jnp.ones(num_games - half, jnp.int32)])

    def game(params, black_policy, key):
        def body(state, k):
            done = state.terminated | state.truncated
            who = jnp.where(state.current_player == 0, black_policy, 1 - black_policy)
            a0 = policies[0](params[0], state, k)
            a1 = policies[1](params[1], state, k)
            action = jnp.where(who == 0, a0, a1).astype(jnp.int32)
            nxt = env.step(state, action)
            return nxt, jnp.where(done, -1, action)

        _, actions = jax.lax.scan(body, env.init(key), jax.random.split(key, max_moves))
        return actions

    @jax.jit
    def record(params, key):
        return jax.vmap(game, in_axes=(None, 0, 0))(params, black, jax.random.split(key, num_games))

    return record


@functools.lru_cache(maxsize=2)
def _compiled(key_config):
    """What a run compiles, shared by the runs of one process with the same settings (the
    fields that change results): the learner, the arenas and the game recorder. The games
    against UCT come per rung of the ladder, ``versus(rung) -> (round arena, final arena,
    recorder)``: UCT's simulation count is static (its tree's size), so each rung compiles its
    own programs, once, when the run first stands on it (a handful of rungs: simpler than one
    search sized for the top rung that stops early, and no bigger a tree than the rung needs)."""
    env, net, learner, agent, _ = build(key_config)

    @functools.lru_cache(maxsize=None)
    def versus(rung: int):
        uct = uct_policy(env, num_simulations=rung_simulations(key_config, rung))
        uct_arena = arena_lib.Arena(env, [agent, uct], num_games=key_config.eval_games)
        final_arena = (arena_lib.Arena(env, [agent, uct], num_games=key_config.final_eval_games)
                       if key_config.final_eval_games else uct_arena)
        recorder = (game_recorder(env, [agent, uct], key_config.sgf_games, key_config.board_size ** 2)
                    if key_config.sgf_games else None)
        return uct_arena, final_arena, recorder

    pool_arena = (arena_lib.Arena(env, [agent, agent], num_games=key_config.elo_games)
                  if key_config.elo_games else None)
    return learner, versus, pool_arena, jax.jit(learner.init)


def score_against(metrics, opponents) -> float | None:
    """The newest model's mean result (+1 a win, -1 a loss) over a chunk's self-play updates
    whose ``opponent_generation`` satisfies ``opponents``; None when the chunk had none."""
    picked = (metrics["phase"] == 2) & opponents(metrics["opponent_generation"])
    return float(metrics["newest_score"][picked].mean()) if picked.any() else None


#: the summary's figures of the best model (``best_model_<key>``)
BEST_MODEL_KEYS = ("win_rate_vs_uct", "win_rate_vs_uct_ci95", "win_rate_vs_uct_low", "win_rate_vs_uct_high")


def versus_uct(res) -> dict:
    """The agent's results against plain UCT (policy 0 of the arena result ``res``): its win
    rate with its 95% Wilson interval (``_low``, ``_high``; asymmetric about the rate, so
    ``_ci95`` is half its width, not rate ± ``_ci95``), and per colour."""
    rate, low, high = res.win_rate(0)
    return {"win_rate_vs_uct": rate, "win_rate_vs_uct_ci95": (high - low) / 2,
            "win_rate_vs_uct_low": low, "win_rate_vs_uct_high": high,
            "win_rate_as_black": float(res.seat_mean[0, 0] + 1) / 2,
            "win_rate_as_white": float(res.seat_mean[0, 1] + 1) / 2}


def train(config, *, stop_after_chunks: int | None = None) -> dict:
    """Train, evaluate and write the run folder; returns the summary (the same on every
    process of a multi-host run, where process 0 alone writes)."""
    init_distributed()   # first: before the pipeline uses JAX
    return run_pipeline(pipeline(config), config, stop_after_chunks=stop_after_chunks)


def pipeline(config) -> Pipeline:
    """The run's own parts (``train/common/skeleton.py`` runs them): the learner, each round's
    evaluation against plain UCT, the league's hook and the final evaluation."""
    learner, versus, pool_arena, init = _compiled(config.build_key())

    def pool_games(newest, other, key):
        return pool_arena(to_host([newest, other]), key).returns[:, 0]

    n = config.board_size
    league = league_hook(get=lambda carry: carry.league, put=lambda carry, league: carry.replace(league=league),
                         params=learner.params, fixed=lambda res: {UCT: res.returns[:, 0]},
                         play=pool_games if pool_arena is not None else None, opponents=config.elo_opponents)
    return Pipeline(
        game=GAME, keys=Keys.of(config.seed), init=init, update=learner.update, params=learner.params,
        num_updates=num_rounds(config) * config.updates_per_round, chunk_size=config.updates_per_round,
        evaluate=functools.partial(evaluate_round, config, learner, versus),
        league=ladder_hook(config, league) if config.uct_ladder else league,
        final=functools.partial(final_evaluation, config, learner, versus),
        # with a ladder, best/ keeps the model of the highest rung, of its rounds the best
        # against it: a rung is climbed only once a model has beaten the one below
        best_metric="ladder" if config.uct_ladder else "vs_uct", restore_best=True,
        display=Display(enabled=config.progress, desc=f"hex {n}x{n} games",
                        units_per_update=config.learner.games_per_update,
                        show=lambda s: f"{s['games/s']:.1f} games/s  loss {s['loss']:.3f}  vs UCT {s['vs_uct']:.0%}"))


def ladder_hook(config, league):
    """The league's hook, then the UCT ladder's rule (:func:`climb`) on the round's evaluation:
    the carry's rung, which the anchor plays on in the next chunk and the next round is
    evaluated against, checkpointed with the carry (so ``--resume`` goes on from it)."""
    def hook(step, carry, rnd: Round, keys: Keys):
        carry, info = league(step, carry, rnd, keys)
        wins = round(rnd.row["win_rate_vs_uct"] * config.eval_games)
        rung = climb(current_rung(carry), wins, config.eval_games, rungs=len(config.uct_ladder),
                     threshold=config.ladder_threshold)
        return carry.replace(rung=jnp.int32(rung)), info

    return hook


def evaluate_round(config, learner, versus, c: Chunk) -> Round:
    """The round's row: its training figures and the newest model against plain UCT (on the
    ladder's current rung, where there is a ladder)."""
    rung = current_rung(c.carry)
    # evaluations take the parameters as NumPy: an arena is not sharded, so it runs on this
    # process's first device (fed arrays spread over the mesh, it would run whole on every
    # device of it); every process gets the same results
    res = versus(rung)[0]([to_host(learner.params(c.carry)), None], c.keys.round(c.step))
    m, units = c.metrics, config.learner.games_per_update
    # round 0 ends phase 1 (the source's supervised model), rounds 1.. are self-play
    row = {"round": c.step // config.updates_per_round - phase1_rounds(config), "phase": int(m["phase"][-1]),
           "games": int(m["games"][-1]), "games_per_second": units * len(m["phase"]) / max(c.seconds, 1e-9),
           "loss": float(m["loss"].mean()), "value_loss": float(m["value_loss"].mean()),
           "policy_loss": float(m["policy_loss"].mean()), "l2": float(m["l2"].mean()),
           "self_play_score": score_against(m, lambda g: g >= 0),
           "anchor_score": score_against(m, lambda g: g == az.ANCHOR_GENERATION),
           "misrouted": int(m["misrouted"].sum()), "buffer_size": int(m["buffer_size"][-1]),
           **versus_uct(res), "uct_simulations": rung_simulations(config, rung), "seconds": c.seconds}
    rate = res.win_rate(0)[0]
    # "ladder": the rung first, then the rate (2 * rung + rate: any rate on a higher rung ranks above)
    return Round(row, {"games/s": row["games_per_second"], "loss": row["loss"], "vs_uct": rate,
                       "ladder": 2.0 * rung + rate}, results=res)


def final_evaluation(config, learner, versus, end: End) -> Final:
    """The last model and the best (``best/``: the agent ``load_agent`` and
    ``jaxgames.hex.play`` take) against plain UCT over the same games, the Elo list, SGF; with a
    ladder, UCT on the rung the run ends on."""
    rows, units = end.rows, config.learner.games_per_update
    rung = current_rung(end.carry)
    _, arena, recorder = versus(rung)
    params = to_host(learner.params(end.carry))
    final = versus_uct(arena([params, None], end.keys.final))
    if end.best_step in (None, end.step):
        best_model, best_round = final, rows[-1]["round"]
    elif end.best_params is None:       # best/ unreadable: said on stderr, left out
        best_model, best_round = dict.fromkeys(BEST_MODEL_KEYS), None
    else:
        best_model = versus_uct(arena([to_host(end.best_params), None], end.keys.final))
        best_round = end.best_step // config.updates_per_round - phase1_rounds(config)
    ratings = league_lib.elo_list(to_host(end.carry.league))
    actions = to_host(recorder([params, None], end.keys.sgf)) if config.sgf_games else None
    summary = {
        "board_size": config.board_size, **final,
        "uct_simulations": rung_simulations(config, rung), "agent_simulations": eval_simulations(config),
        "eval_games": config.final_eval_games or config.eval_games,
        "round_eval_games": config.eval_games, "rounds": num_rounds(config),
        "self_play_rounds": config.rounds,
        "self_play_games": sum(units * config.updates_per_round for r in rows if r["phase"] == 2),
        "phase1_games": sum(units * config.updates_per_round for r in rows if r["phase"] == 1),
        "final_elo": ratings.get(rows[-1]["generation"]),
        "best_win_rate_vs_uct": max(r["win_rate_vs_uct"] for r in rows),
        "best_model_round": best_round, **{f"best_model_{k}": best_model[k] for k in BEST_MODEL_KEYS},
    }
    if config.uct_ladder:   # the rung the run ends on (0-based), the final evaluation's opponent
        summary.update(uct_ladder=list(config.uct_ladder), uct_rung=rung)

    def files(rundir, summary):
        if actions is not None:
            write_sgf(rundir.path / "sgf", actions, config)
        write_plots(rundir, rows, ratings)

    return Final(summary, report=lambda summary: report(config, summary, rows, ratings), files=files)


def write_sgf(folder, actions, config) -> None:
    """The recorded games ``actions`` int32 [G, max_moves] as ``folder/game<i>.sgf``, the
    first half with the agent as Black."""
    folder.mkdir(exist_ok=True)
    for i, moves in enumerate(actions):
        black, white = ("agent", "uct") if i < config.sgf_games // 2 else ("uct", "agent")
        text = to_sgf([int(a) for a in moves if a >= 0], config.board_size, {"PB": black, "PW": white})
        (folder / f"game{i + 1}.sgf").write_text(text + "\n")


def interval(r: dict, key: str = "win_rate_vs_uct") -> str:
    """``r[key]`` and its 95% interval, in percent: '100% (34%–100%)'."""
    return f"{r[key]:.0%} ({r[key + '_low']:.0%}–{r[key + '_high']:.0%})"


def write_plots(rundir, rows, ratings) -> None:
    """``win_rate.png`` (each round's model against UCT, asymmetric 95% Wilson bars),
    ``losses.png`` and ``elo.png``, all over rounds: generation g of the pool is round g's model
    (round 0: phase 1's, or the initial network when there is no phase 1)."""
    rounds = [r["round"] for r in rows]
    rate = np.array([r["win_rate_vs_uct"] for r in rows])
    bars = np.array([[r["win_rate_vs_uct"] - r["win_rate_vs_uct_low"] for r in rows],
                     [r["win_rate_vs_uct_high"] - r["win_rate_vs_uct"] for r in rows]])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.errorbar(rounds, rate, yerr=np.maximum(bars, 0.0), marker="o", capsize=3,
                label="win rate vs plain UCT (95% Wilson interval)")
    ax.axhline(0.5, linestyle="--", color="k", linewidth=1, label="even (50%)")
    ax.set(title="Hex: the newest model against plain UCT", xlabel="round", ylabel="win rate", ylim=(0, 1))
    save(fig, ax, rundir.plots / "win_rate.png")
    line_plot(rundir.plots / "losses.png",
              {k: (rounds, [r[k] for r in rows]) for k in ("loss", "value_loss", "policy_loss")},
              title="Hex training losses (eq. (3), per round)", xlabel="round", ylabel="loss")
    gens = sorted(g for g in ratings if g >= 0)
    line_plot(rundir.plots / "elo.png", {"model": (gens, [ratings[g] for g in gens])},
              hlines={"plain UCT": 0.0}, title="Elo of each round's model (plain UCT = 0)",
              xlabel="round", ylabel="Elo")


def report(config, summary, rows, ratings) -> str:
    def colour(name):   # the final evaluation's rate with one colour, over its half of the games
        rate, games = summary[f"win_rate_as_{name}"], summary["eval_games"] // 2
        low, high = arena_lib.wilson(round(rate * games), games)
        return f"{rate:.0%} ({low:.0%}–{high:.0%})"

    ladder = config.uct_ladder
    rung_sims = "the ladder rung's"
    table = [[r["round"], "1 (UCT labels)" if r["phase"] == 1 else "2 (self-play)",
              *([r["uct_simulations"]] if ladder else []), interval(r),
              f"{r['win_rate_as_black']:.0%} / {r['win_rate_as_white']:.0%}",
              "" if ratings.get(r["generation"]) is None else f"{ratings[r['generation']]:+.0f}",
              r["loss"], r["value_loss"], r["policy_loss"]] for r in rows]
    n, lc = config.board_size, config.learner
    return (
        f"# Hex {n}x{n}: reinforcement learning against a pool of past models\n\n"
        f"Phase 1: {phase1_rounds(config)} round(s) of random games "
        f"labelled by plain UCT ({lc.phase1_simulations} simulations; value targets: "
        f"{'the game results' if lc.phase1_value == 'result' else 'the UCT root win rates'}). Phase 2: "
        f"{config.rounds} rounds of self-play ({lc.games_per_update} games per update, "
        f"{config.updates_per_round} updates per round, {config.simulations} {config.search} "
        f"simulations per move; policy targets from "
        f"the newest model's search) "
        f"against a model drawn from the pool"
        + ("" if not lc.anchor_fraction else
           f" (in a share {lc.anchor_fraction:g} of the updates, plain UCT with "
           f"{rung_sims if ladder else lc.anchor_simulations} simulations instead)")
        + f". After every round the "
        f"newest model ({eval_simulations(config)} simulations, no noise) plays {config.eval_games} "
        f"games against plain UCT ({rung_sims if ladder else config.uct_simulations} simulations), half as Black; "
        + ("" if not ladder else
           f"UCT's simulations climb the ladder {', '.join(f'{s:,}' for s in ladder)} one rung after a round "
           f"whose win rate's 95% interval lies above {config.ladder_threshold:.0%}; the run ends on "
           f"{summary['uct_simulations']:,} (rung {summary['uct_rung'] + 1} of {len(ladder)}), the final "
           f"evaluation's opponent; ")
        + f"the "
        f"Elo list also counts {config.elo_games} games against each pool model "
        f"{'' if not config.elo_opponents else f'of the {config.elo_opponents} most recent '}(UCT = 0). "
        f"Seed {config.seed}; {summary['seconds']:.0f} s in all.\n\n"
        f"Final win rate against UCT over {summary['eval_games']} games: "
        f"**{summary['win_rate_vs_uct']:.0%}** (95% Wilson interval {summary['win_rate_vs_uct_low']:.0%} "
        f"to {summary['win_rate_vs_uct_high']:.0%}; {colour('black')} as Black, {colour('white')} as "
        f"White, each over half the games). "
        + ("" if summary["best_model_round"] is None else
           f"The run's best model (round {summary['best_model_round']}, the best against UCT in the "
           f"rounds' evaluations; kept in `best/`, the agent `jaxgames.hex.play` and `load_agent` "
           f"take) over the same games: **{summary['best_model_win_rate_vs_uct']:.0%}** "
           f"(95% interval {summary['best_model_win_rate_vs_uct_low']:.0%} to "
           f"{summary['best_model_win_rate_vs_uct_high']:.0%}). ")
        + "The source reports 80% after ten rounds on 11x11 (20 games per model).\n\n"
        + markdown_table(["round", "phase", *(["UCT simulations"] if ladder else []), "vs UCT (95% Wilson interval)",
                          "as Black / White", "Elo", "loss", "value loss", "policy loss"], table)
        + "\n![win rate](plots/win_rate.png)\n\n![losses](plots/losses.png)\n\n![Elo](plots/elo.png)\n"
    )
