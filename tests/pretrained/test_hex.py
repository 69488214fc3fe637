"""The shipped Hex agents, one per board size (7x7, 9x9, 11x11): hand-made matches replayed to a
position that one cell wins and every other cell loses, and a few games against random play
that each must still win; the exporter's card from a run folder (which parameters, the Wilson
interval from the wins). The agents search as they ship (their card's 200 Gumbel simulations,
the 11x11 one averaging its network over the half turn): with 16 simulations the 9x9 agent
missed the corner crossing (one visit per cell leaves the losing cells to the value network's
guess), and one compile serves both tests (the 11x11 agent's games take about 5 s).

(A position where one cell only stops the opponent's line does not test the agent: with the
rest of the board the opponent's, every move loses, and the 11x11 agent, rightly indifferent,
did not block.)

The search is deterministic (Gumbel with no noise at the root), so each position's answer is
the network's, whatever the key; the games against random depend on the random moves only
through their statistics: an agent that beats UCT in 95% or more of its games loses to random
play almost never, and the bar is 7 wins of 8 (its Wilson interval lies above a half). One
compiled search per board size, four games in a batch.
"""

from __future__ import annotations

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import pretrained
from jaxgames.hex import to_cell_name
from jaxgames.hex.agent import Agent
from jaxgames.hex.board import BLACK, WHITE
from jaxgames.pretrained import export
from jaxgames.pretrained import hex as hex_hook

NAMES = pretrained.names("hex")
AGENTS = {name: pretrained.load("hex", name) for name in NAMES}
BATCH = 4          # positions or games per call: one compile per agent


def test_a_shipped_agent_for_each_board_the_card_says():
    sizes = {name: agent.board_size for name, agent in AGENTS.items()}
    assert sorted(sizes.values()) == [7, 9, 11]
    for name, agent in AGENTS.items():
        card = pretrained.card("hex", name)
        assert isinstance(agent, Agent) and agent.run_dir is None and not agent.env.swap
        assert card["config"]["board_size"] == agent.board_size and f"{agent.board_size}x{agent.board_size}" in name
        assert agent.simulations == (card["config"]["eval_simulations"] or card["config"]["simulations"])
        baselines = card["evaluation"]["baselines"]
        assert next(iter(baselines)).startswith("uct-") and "measured" not in next(iter(baselines.values()))
        assert baselines["random"]["mean"] == 1.0 and baselines["random"]["measured"].startswith("at export")
        for result in baselines.values():
            assert result["games"] == card["evaluation"]["games"] >= 200
            assert result["low"] <= result["mean"] <= result["high"] and result["wins"] == round(result["mean"] * result["games"])


@functools.lru_cache(maxsize=None)
def searches(name: str):
    """``(batched policy, batched step, step)`` of the agent, jitted: compiled once per agent."""
    agent = AGENTS[name]
    policy = jax.jit(jax.vmap(agent.policy, in_axes=(None, 0, 0)))
    return policy, jax.jit(jax.vmap(agent.env.step)), jax.jit(agent.env.step)


def crossing_lines(n: int, row: int, col: int) -> tuple[list[int], list[int]]:
    """Black's stones down column ``col`` and White's along row ``row``, each line from edge to
    edge but for the cell where they cross: whoever takes that cell joins their two edges."""
    black = [r * n + col for r in range(n) if r != row]
    white = [row * n + c for c in range(n) if c != col]
    return black, white


def position(name: str, black: list[int], white: list[int]):
    """The state after Black's and White's stones, played alternately, Black first."""
    _, _, step = searches(name)
    state = AGENTS[name].env.init(jax.random.key(0))
    moves = [m for pair in zip(black, white + [None]) for m in pair if m is not None]
    assert len(moves) == len(black) + len(white)
    for m in moves:
        state = step(state, jnp.int32(m))
    assert not bool(state.terminated)
    return state


def hand_made(name: str) -> tuple[list, list[int], list[int]]:
    """Four positions, the agent to move in each, the one right answer of each, and the
    agent's colour: two lines that cross at an empty cell (through the centre, and near a
    corner), Black's from top to bottom and White's from left to right. Whoever moves wins by
    taking the crossing, and any other cell loses at once: the only good move, as Black and as
    White (one more Black stone, in the corner away from the lines, puts White to move)."""
    n = AGENTS[name].board_size
    cases = []
    for row, col in ((n // 2, n // 2), (n - 2, 1)):
        black, white = crossing_lines(n, row, col)
        corner = n - 1 if col < n // 2 else 0     # (0, n-1) or (0, 0): on neither line
        cases += [(black, white, row * n + col, BLACK), (black + [corner], white, row * n + col, WHITE)]
    states = [position(name, b, w) for b, w, _, _ in cases]
    for state, (*_, colour) in zip(states, cases):
        assert int(state.current_player) == colour
    return states, [c[2] for c in cases], [c[3] for c in cases]


def stack(states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


@pytest.mark.parametrize("name", NAMES)
def test_it_takes_the_one_cell_that_wins(name):
    """A hand-made match's last move: the agent answers each position with the one cell that
    does not lose, which wins: the game ends with the agent's colour the winner."""
    agent = AGENTS[name]
    policy, vstep, _ = searches(name)
    states, answers, colours = hand_made(name)
    batch = stack(states)
    actions = np.asarray(policy(agent.params, batch, jax.random.split(jax.random.key(0), BATCH)))
    n = agent.board_size
    cells = lambda actions: [to_cell_name(int(a), n) for a in actions]   # noqa: E731
    assert actions.tolist() == answers, f"{name}: played {cells(actions)}, the answers are {cells(answers)}"
    after = vstep(batch, jnp.asarray(actions, jnp.int32))
    assert np.asarray(after.terminated).all()
    rewards = np.asarray(after.rewards)
    for i, colour in enumerate(colours):
        assert rewards[i, colour] == 1 and rewards[i, 1 - colour] == -1


def play_against_random(name: str, colour: int, seed: int) -> np.ndarray:
    """``BATCH`` games of the agent (``colour``) against uniform random play, in step: every
    game at the same move has the same player to move. Returns the agent's results [BATCH]
    (the rewards summed: a finished game's later steps reward nothing)."""
    agent = AGENTS[name]
    policy, vstep, _ = searches(name)
    rng = np.random.default_rng(seed)
    keys = jax.random.split(jax.random.key(seed), BATCH)
    state = jax.vmap(agent.env.init)(keys)
    total = np.zeros(BATCH)
    for ply in range(agent.board_size ** 2):
        done = np.asarray(state.terminated)
        if done.all():
            break
        mover = int(np.asarray(state.current_player)[~done][0])
        if mover == colour:
            actions = np.asarray(policy(agent.params, state, jax.random.split(jax.random.fold_in(keys[0], ply), BATCH)))
        else:
            legal = np.asarray(state.legal_action_mask)
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in legal])
        state = vstep(state, jnp.asarray(actions, jnp.int32))
        total += np.asarray(state.rewards)[:, colour]
    assert np.asarray(state.terminated).all()
    return total


@pytest.mark.parametrize("name", NAMES)
def test_it_still_beats_random_play(name):
    rewards = np.concatenate([play_against_random(name, BLACK, 1), play_against_random(name, WHITE, 2)])
    wins = int((rewards > 0).sum())
    assert wins >= 7, f"{name} won {wins} of {len(rewards)} games against random play"


def test_the_card_from_a_run_folder(tmp_path, monkeypatch):
    """A run folder as the pipeline leaves it (config.json, summary.json, best/ written by the
    training's checkpoint manager) exported and loaded back: best/'s parameters, the summary's
    win rate with a Wilson interval from its wins, the colours only when best/ is the last
    round's; a summary of another round's best/ and --which latest are refused; a baseline
    measured at export joins the summary's, marked (the match itself stubbed: no compile)."""
    from train.common.checkpoint import Checkpointer

    name = next(n for n, a in AGENTS.items() if a.board_size == 7)
    card, agent = pretrained.card("hex", name), AGENTS[name]
    config = {**card["config"], "rounds": 3, "updates_per_round": 2, "phase1": "none"}
    run = tmp_path / "runs" / "hex" / "r"
    writer = Checkpointer(run / "best", keep=1)
    writer.save(3 * 2, agent.params, jax.random.key(0), json.dumps(config), extra={"vs_uct": 1.0})
    writer.close()
    (run / "config.json").write_text(json.dumps(config))
    summary = {"board_size": 7, "win_rate_vs_uct": 0.9, "win_rate_as_black": 1.0, "win_rate_as_white": 0.8,
               "eval_games": 10, "uct_simulations": 50, "rounds": 3, "best_model_round": 3,
               "best_model_win_rate_vs_uct": 0.9, "self_play_games": 768, "phase1_games": 0, "seconds": 12.5}
    (run / "summary.json").write_text(json.dumps(summary))
    root = tmp_path / "agents"
    export.export(game="hex", run=run, name="t", command="python -m train.hex", commit="abc", cpu="a CPU", root=root)
    made = pretrained.card("hex", "t", root=root)
    result = made["evaluation"]["baselines"]["uct-50"]
    assert made["checkpoint"] == "best/6" and made["games_trained"] == 768 and made["training_seconds"] == 12.5
    assert (result["wins"], result["games"], result["as_black"], result["as_white"]) == (9, 10, 1.0, 0.8)
    assert result["low"] == pytest.approx(0.596, abs=1e-3) and result["high"] == pytest.approx(0.982, abs=1e-3)
    for x, y in zip(jax.tree_util.tree_leaves(pretrained.load("hex", "t", root=root).params),
                    jax.tree_util.tree_leaves(agent.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # best/ of an earlier round: its own figures, without the last round's colours
    cards = hex_hook.card_fields(config, {**summary, "best_model_round": 2, "best_model_win_rate_vs_uct": 0.5})
    assert "as_black" not in cards["evaluation"]["baselines"]["uct-50"]
    (run / "summary.json").write_text(json.dumps({**summary, "best_model_round": 2}))
    with pytest.raises(ValueError, match="its final evaluation of best/ is of the parameters of update 4"):
        export.export(game="hex", run=run, name="u", command="c", commit="c", cpu="c", root=root)
    with pytest.raises(ValueError, match="ships its best/ parameters"):
        export.export(game="hex", run=run, name="u", command="c", commit="c", cpu="c", root=root, which="latest")
    # --measure: a baseline the run did not play, over the summary's games, marked as such
    (run / "summary.json").write_text(json.dumps(summary))
    played = []

    def measure(player, *, baselines, deals, seed):
        played.append((player.board_size, baselines, deals, seed))
        return {"baselines": {b: hex_hook.win_result(0.5, deals) for b in baselines}}

    monkeypatch.setattr(hex_hook, "measure", measure)
    export.export(game="hex", run=run, name="m", command="c", commit="c", cpu="c", root=root, measure=("random",),
                  measure_seed=7)
    baselines = pretrained.card("hex", "m", root=root)["evaluation"]["baselines"]
    assert played == [(7, ["random"], 10, 7)] and list(baselines) == ["uct-50", "random"]
    assert baselines["random"]["measured"] == "at export, seed 7" and "measured" not in baselines["uct-50"]
    with pytest.raises(ValueError, match="--measure uct-50: the run's summary measured it already"):
        export.export(game="hex", run=run, name="n", command="c", commit="c", cpu="c", root=root, measure=("uct-50",))


def test_evaluate_refuses_an_odd_number_of_games(capsys):
    from jaxgames.pretrained import __main__ as cli

    assert cli.main(["--evaluate", "hex", NAMES[0], "--deals", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "half its games as Black: give an even number of games (--deals), got 3" in err[0]
