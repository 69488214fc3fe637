"""Writes the colab/*.ipynb notebooks from the cell lists below (keeps them reviewable as code).

    python colab/make_notebooks.py
"""

import json
import pathlib
import tomllib

HERE = pathlib.Path(__file__).parent
PYPROJECT = HERE.parent / "pyproject.toml"
URL_KEYS = ("Repository", "Source", "Homepage")


def project_url(pyproject: pathlib.Path = PYPROJECT) -> str | None:
    """The project's address from ``[project.urls]`` (Repository, Source or Homepage), or None.
    The one place it is written; the notebooks get it when they are generated."""
    urls = tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {})
    return next((urls[k] for k in URL_KEYS if urls.get(k)), None)


# Runs in the notebook (and, alone, in tests/test_notebooks.py): what to pip-install.
SOURCE_FN = '''def jaxgames_source(project_url):
    """``(pip target, folder to import from or None)``, the first there is of: JAXGAMES_REPO
    (a git address or a folder), a jaxgames wheel uploaded next to this notebook, the clone this
    notebook sits in, the project's address (pyproject.toml's [project.urls] when the notebook
    was generated)."""
    import glob, os, pathlib, re
    url = os.environ.get("JAXGAMES_REPO")
    wheels = glob.glob("jaxgames-*.whl")
    if not url and wheels:
        return max(wheels, key=os.path.getmtime), None
    here = pathlib.Path.cwd()
    for folder in ([] if url else [here, *list(here.parents)[:2]]):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and re.search(r'^name\\s*=\\s*"jaxgames"', pyproject.read_text(), re.M):
            return str(folder), str(folder)
    url = url or project_url
    if url:
        return (url if url.startswith("git+") or os.path.isdir(url) else "git+" + url), None
    raise SystemExit(
        "jaxgames is not installed and this notebook does not know where to get it: upload a "
        "jaxgames wheel (jaxgames-*.whl, made with `pip wheel --no-deps .` in a clone) next to "
        "this notebook, or set JAXGAMES_REPO to the project's git address "
        "(os.environ['JAXGAMES_REPO'] = 'https://...'), then run this cell again")'''


def install_cell(url: str | None) -> str:
    return f'''# Install jaxgames, unless it is importable already (a local checkout, CI).
import importlib, importlib.util, json, os, subprocess, sys
PROJECT_URL = {url!r}  # [project.urls] of pyproject.toml, written by colab/make_notebooks.py

{SOURCE_FN}

if importlib.util.find_spec("jaxgames") is None:
    target, folder = jaxgames_source(PROJECT_URL)
    print("installing jaxgames from", target)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *(["-e"] if folder else []), target],
                   check=True)
    if folder:  # an editable install is seen by new processes only
        sys.path.insert(0, folder)
    importlib.invalidate_caches()
import jax
print("jax", jax.__version__, "devices:", jax.devices())'''


INSTALL = install_cell(project_url())

RUNS_DIR = '''# Where runs are written. A path that cannot be written to stops here with the reason.
import pathlib
RUNS_DIR = pathlib.Path(os.environ.get("JAXGAMES_RUNS_DIR", "runs"))
try:
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    (RUNS_DIR / ".write-test").touch(); (RUNS_DIR / ".write-test").unlink()
except OSError as e:
    raise SystemExit(f"RUNS_DIR={RUNS_DIR} is not writable ({e}); set JAXGAMES_RUNS_DIR to a folder you own")'''


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text}


TEN_HALF = [
    md("# Ten-and-a-half (十点半): Monte Carlo control vs the exact optimum\n\n"
       "On-policy first-visit ε-greedy MC control and off-policy weighted-importance-sampling MC "
       "control, as in the source (§4.6), both jitted end to end. The exact solver gives the optimum "
       "every learned policy is measured against. Rules: `docs/rules/ten_half.md`."),
    code(INSTALL),
    code(RUNS_DIR),
    md("## Train both methods\n`EPISODES` defaults to the source's 500,000 per method (seconds on a CPU)."),
    code('''import time
from train import ten_half
EPISODES = int(os.environ.get("JAXGAMES_NOTEBOOK_EPISODES", 500_000))
RUN_NAME = f"colab-{int(time.time())}"
summary = ten_half.main(["--episodes", str(EPISODES), "--episodes-per-update", str(min(10_000, EPISODES // 10)),
                         "--runs-dir", str(RUNS_DIR), "--run-name", RUN_NAME, "--no-progress"])'''),
    md("## Compare with the optimum"),
    code('''for method in ("on_policy", "off_policy"):
    gap = summary["optimal_value"] - summary[f"{method}_value"]
    print(f"{method:10s}  value {summary[f'{method}_value']:+.4f}  gap to optimum {gap:.4f}  "
          f"agreement {summary[f'{method}_agreement']:.1%}")
print(f"optimum     value {summary['optimal_value']:+.4f}")'''),
    md("## Plots: learned best action per number of face cards, learning curves, max-Q"),
    code('''from IPython.display import Image, display
run = RUNS_DIR / "ten_half" / RUN_NAME
for name in ("policy", "learning_curve", "max_q"):
    display(Image(filename=str(run / "plots" / f"{name}.png")))'''),
]

GAME2048 = [
    md("# 2048: n-tuple network TD learning + expectimax, all in JAX\n\n"
       "Afterstate TD learning of the standard four 6-tuples read on 8 board symmetries, as the "
       "source describes; then greedy (1-ply) and expectimax (2-ply) play on the learned network. "
       "Rules: `docs/rules/game2048.md`."),
    code(INSTALL),
    code(RUNS_DIR),
    md("## Train\n`TRAIN_MOVES` defaults to the quick preset's budget (about 10 minutes on a "
       "2-core CPU, far less on a GPU runtime)."),
    code('''import time
from train import game2048
TRAIN_MOVES = int(os.environ.get("JAXGAMES_NOTEBOOK_MOVES", game2048.Config().train_moves))
EXTRA = os.environ.get("JAXGAMES_NOTEBOOK_ARGS", "").split()
RUN_NAME = f"colab-{int(time.time())}"
summary = game2048.main(["--train-moves", str(TRAIN_MOVES), "--runs-dir", str(RUNS_DIR),
                         "--run-name", RUN_NAME, "--no-progress"] + EXTRA)'''),
    md("## Learning curve and tile rates per search depth"),
    code('''from IPython.display import Image, display, SVG, Markdown
run = RUNS_DIR / "game2048" / RUN_NAME
for name in ("learning_curve", "tile_rates"):
    display(Image(filename=str(run / "plots" / f"{name}.png")))
display(Markdown((run / "report.md").read_text().split("![")[0]))'''),
    md("## Watch the learned player (1-ply) play a game"),
    code('''import jax, jax.numpy as jnp
import numpy as np
from jaxgames.game2048 import board as B, render
from jaxgames.game2048.ntuple import NTupleNetwork
from jaxgames.game2048.tables import load_tables
with np.load(run / "tables.npz") as saved:  # the network is described next to its weights
    net = NTupleNetwork(patterns=tuple(map(tuple, saved["patterns"].tolist())), base=int(saved["base"]))
    variant = str(saved["variant"])
weights = load_tables(run / "tables.npz", net, variant)

@jax.jit
def move(board, key):
    after, reward, legal = B.slide_all(board, variant)
    q = jnp.where(legal, reward + net.value(weights, after), -jnp.inf)
    a = jnp.argmax(q)
    return B.spawn(after[a], key, variant), legal.any()

board, key, alive, n = B.initial_board(jax.random.key(0), variant), jax.random.key(1), True, 0
while alive and n < 20_000:
    key, k = jax.random.split(key)
    nxt, alive = move(board, k)
    board = nxt if alive else board
    n += 1
print(f"{n - 1} moves")
display(SVG(render.render_svg(board)))'''),
]

HEX = [
    md("# Hex: a policy-value network + MCTS trained by self-play, all in JAX\n\n"
       "The source's CNN and tree search (Zhang, Meng & Yang 2020) on `mctx`: phase 1 learns from "
       "random games labelled by plain UCT, then rounds of self-play of the newest model against "
       "one drawn from a pool of its past versions; after every round it plays plain UCT. Then "
       "you play it. Rules: `docs/rules/hex.md`; the pipeline: `docs/hex_training.md`."),
    code(INSTALL),
    code(RUNS_DIR),
    md("## Train\nThe `quick` preset: a 7x7 board, 24 self-play rounds from scratch with 64 "
       "simulations a move (13-14 minutes on a 2-core CPU split into one device per core, as "
       "`python -m train.hex` does; in this notebook's one process JAX keeps one CPU device, which "
       "takes longer; less on a GPU runtime). `JAXGAMES_NOTEBOOK_ARGS` adds flags of "
       "`python -m train.hex` (e.g. `--board-size 5 --rounds 3`); `JAXGAMES_HEX_RUN` skips the "
       "training and plays a run trained earlier (its folder, `runs/hex/<run>`)."),
    code('''import time
from train import hex as hex_train
from jaxgames.hex.agent import AgentError, load_agent
EXTRA = os.environ.get("JAXGAMES_NOTEBOOK_ARGS", "").split()
if os.environ.get("JAXGAMES_HEX_RUN"):
    RUN = pathlib.Path(os.environ["JAXGAMES_HEX_RUN"])
    try:  # a folder that is not a finished Hex run stops here with the reason
        print("playing the run in", RUN, "(no training):", load_agent(RUN).name)
    except AgentError as e:
        raise SystemExit(f"JAXGAMES_HEX_RUN: {e}")
else:
    RUN_NAME = f"colab-{int(time.time())}"
    summary = hex_train.main(["--runs-dir", str(RUNS_DIR), "--run-name", RUN_NAME, "--no-progress"] + EXTRA)
    RUN = RUNS_DIR / "hex" / RUN_NAME'''),
    md("## Win rate against plain UCT after every round (the source's figure 7), and the losses"),
    code('''from IPython.display import Image, Markdown, SVG, display
for name in ("win_rate", "losses"):
    if (RUN / "plots" / f"{name}.png").is_file():
        display(Image(filename=str(RUN / "plots" / f"{name}.png")))
if (RUN / "report.md").is_file():
    display(Markdown((RUN / "report.md").read_text().split("![")[0]))'''),
    md("## A game: the agent (Black) against plain UCT\nThe agent searches as in the run's evaluation "
       "(its `eval_simulations`, else `simulations`); UCT with the run's `uct_simulations`. The run "
       "also saved its last games against UCT as SGF in `sgf/` (HexGui's format)."),
    code('''import jax, jax.numpy as jnp
import numpy as np
from jaxgames.hex import from_cell_name, render_svg, to_cell_name
from jaxgames.search.uct import uct_policy
agent = load_agent(RUN)                 # config.json + the parameters in best/
env, n = agent.env, agent.board_size
uct_sims = json.loads((RUN / "config.json").read_text())["uct_simulations"]
uct = jax.jit(uct_policy(env, num_simulations=uct_sims))
step = jax.jit(env.step)
state, moves, key = env.init(jax.random.key(0)), [], jax.random.key(1)
while not bool(state.terminated):
    key, k = jax.random.split(key)
    action = agent.act(state, k) if int(state.current_player) == 0 else int(uct(None, state, k))
    moves.append(to_cell_name(action, n))
    state = step(state, jnp.int32(action))
winner = ["the agent (Black)", f"UCT-{uct_sims} (White)"][int(np.argmax(state.rewards))]
print(f"{agent.name} vs UCT-{uct_sims}: {' '.join(moves)}; {winner} wins")
display(SVG(render_svg(state)))'''),
    md("## Play the agent\nYou are Black (top to bottom), the agent White. `MY_MOVES` are your moves, "
       "cells such as `d4` (column letter, row number; a1 is the top-left); edit them and run the "
       "cell again. In a terminal: `python -m jaxgames.hex.play --opponent agent --checkpoint "
       "runs/hex/<run>`."),
    code('''print("playing", agent.name)
centre = to_cell_name((n // 2) * (n + 1), n)
MY_MOVES = [centre, "b2", "c3", "a1"]   # yours, as Black

state = env.init(jax.random.key(0))
for cell in MY_MOVES:
    if bool(state.terminated):
        break
    try:
        action = from_cell_name(cell, n)
    except ValueError as e:
        print(e); continue
    if not bool(state.legal_action_mask[action]):
        print(f"{cell} is taken; next"); continue
    state = step(state, jnp.int32(action))
    reply = None if bool(state.terminated) else agent.act(state)
    if reply is not None:
        state = step(state, jnp.int32(reply))
    print(f"you {cell}" + ("" if reply is None else f", agent {to_cell_name(reply, n)}"))
if bool(state.terminated):
    print("game over:", ["Black (you)", "White (the agent)"][int(np.argmax(state.rewards))], "wins")
else:
    _, value = agent.network.apply(agent.params, state.observation)
    print(f"your move; the agent's network gives you {float(value + 1) / 2:.0%} to win from here")
display(SVG(render_svg(state)))'''),
]

HOLDEM = [
    md("# Heads-up no-limit hold'em: AlphaHoldem-style PPO, all in JAX\n\n"
       "The source's pseudo-Siamese network on card and action tensors (Zhao et al. 2022), trained "
       "by PPO with the Trinal-Clip loss from one seat against fixed anchors (the call, all-in and "
       "random bots) and the K best of a rated pool of its past versions. After every round it "
       "plays five baselines in duplicate deals. Then it plays the call bot, and you. Rules: "
       "`docs/rules/holdem.md`; the pipeline: `docs/holdem_training.md`."),
    code(INSTALL),
    code(RUNS_DIR),
    md("## Train\nThe `quick` preset: the small dense network, 25 rounds of 20 updates (about 1.9 M "
       "hands; under 6 minutes on a 2-core CPU split into one device per core, as `python -m "
       "train.holdem` does; in this notebook's one process JAX keeps one CPU device, which takes "
       "longer; less on a GPU runtime). `JAXGAMES_NOTEBOOK_ARGS` adds flags of `python -m "
       "train.holdem` (e.g. `--rounds 5`); `JAXGAMES_HOLDEM_RUN` skips the training and plays a run "
       "trained earlier (its folder, `runs/holdem/<run>`)."),
    code('''import time
from train import holdem as holdem_train
from jaxgames.holdem.agent import AgentError, load_agent
EXTRA = os.environ.get("JAXGAMES_NOTEBOOK_ARGS", "").split()
if os.environ.get("JAXGAMES_HOLDEM_RUN"):
    RUN = pathlib.Path(os.environ["JAXGAMES_HOLDEM_RUN"])
    try:  # a folder that is not a finished hold'em run stops here with the reason
        print("playing the run in", RUN, "(no training):", load_agent(RUN).name)
    except AgentError as e:
        raise SystemExit(f"JAXGAMES_HOLDEM_RUN: {e}")
else:
    RUN_NAME = f"colab-{int(time.time())}"
    summary = holdem_train.main(["--runs-dir", str(RUNS_DIR), "--run-name", RUN_NAME, "--no-progress"] + EXTRA)
    RUN = RUNS_DIR / "holdem" / RUN_NAME'''),
    md("## mbb/hand against each baseline after every round\nFrom `metrics.jsonl` (duplicate deals, "
       "95% intervals; positive: the agent wins), then the run's own plots and its report."),
    code('''import io
import matplotlib.pyplot as plt
from IPython.display import Image, Markdown, display
BASELINES = ("random", "call", "allin", "fold", "equity")
rows = [json.loads(line) for line in (RUN / "metrics.jsonl").read_text().splitlines() if line.strip()] \\
    if (RUN / "metrics.jsonl").is_file() else []
if rows:
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    rounds = [r["round"] for r in rows]
    for b in BASELINES:
        ax.errorbar(rounds, [r[f"mbb_vs_{b}"] for r in rows], yerr=[r[f"mbb_vs_{b}_ci95"] for r in rows],
                    marker="o", capsize=3, label=f"vs {b}")
    ax.axhline(0.0, linestyle="--", color="k", linewidth=1)
    ax.set(xlabel="round", ylabel="mbb/hand", title="The agent against the baselines")
    ax.set_yscale("symlog", linthresh=1000)
    ax.legend(fontsize=8)
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    display(Image(data=png.getvalue()))
    last = rows[-1]
    print(f"round {last['round']} ({last['hands']:,} hands trained): "
          + ", ".join(f"vs {b} {last[f'mbb_vs_{b}']:+,.0f}" for b in BASELINES))
for name in ("mbb", "elo"):
    if (RUN / "plots" / f"{name}.png").is_file():
        display(Image(filename=str(RUN / "plots" / f"{name}.png")))
if (RUN / "report.md").is_file():
    display(Markdown((RUN / "report.md").read_text().split("![")[0]))'''),
    md("## The agent against the call bot\nA duplicate match (each deal played twice, the seats "
       "swapped), then one hand shown action by action (the call bot on the button, the agent in "
       "the big blind), with the agent's probabilities at its first decision."),
    code('''import jax, jax.numpy as jnp
import numpy as np
from jaxgames.holdem import ACTION_NAMES, action_text, bots, head_to_head, render_text
agent = load_agent(RUN)                 # config.json + the last round's parameters
env = agent.env
call_bot = bots.make_bot(env, "call")
match = head_to_head(env, agent, call_bot, jax.random.key(0), num_deals=200)
print(f"{agent.name} vs the call bot: {match}")

step = jax.jit(env.step)
state, key, first = env.init(jax.random.key(7)), jax.random.key(8), True
while not bool(state.terminated):
    key, k = jax.random.split(key)
    if int(state.current_player) == 1:   # the agent in the big blind: the call bot limps first
        if first:
            p = agent.action_probs(state)
            print("agent's probabilities:", ", ".join(f"{ACTION_NAMES[a]} {p[a]:.2f}" for a in np.flatnonzero(p)))
            first = False
        who, action = "agent (seat 1)", agent.act(state, k)
    else:
        who, action = "call bot (seat 0)", int(call_bot.policy(None, state, k))
    print(f"{who}: {action_text(state, action)}")
    state = step(state, jnp.int32(action))
print(render_text(state))'''),
    md("## Play the agent\nThe terminal game (`jaxgames.holdem.play`) with your actions written "
       "in `MY_ACTIONS` (a number or a name: `fold`, `check`, `call`, `half`, `pot`, `allin` ...; one "
       "that is not legal is refused and the next is read): edit them and run the cell again. In a "
       "terminal: `python -m jaxgames.holdem.play --opponent agent --run runs/holdem/<run>`."),
    code('''from jaxgames.holdem import play as holdem_play
MY_ACTIONS = ["call", "check"] * 20       # yours, in order, over both hands
result = holdem_play.play(MY_ACTIONS, sys.stdout, echo=True, opponent="agent", run=str(RUN), hands=2, seed=0)
print(f"your result: {result.total:+,.0f} chips over {result.hands} hands ({result.ended_by})")'''),
]

HEARTS = [
    md("# Hearts: Sturtevant & White's learned player, TD(λ) on AND-ed features, all in JAX\n\n"
       "A linear value over AND-combinations of boolean atoms (\"we hold the Q♠\", \"left is void in "
       "spades\" ...) read at the leaves of max^n over the rest of the current trick (\"Feature "
       "construction for reinforcement learning in Hearts\", 2006). A `combined` run trains the Q♠ "
       "predictor and the hearts predictor as two stages, keeps their features of largest weight and "
       "trains on over those. Then the learned player plays honestly, inside PIMC (worlds dealt from "
       "what its seat has seen), three seats against the rule bot. Rules: `docs/rules/hearts.md`; the "
       "pipeline: `docs/hearts_training.md`."),
    code(INSTALL),
    code(RUNS_DIR),
    md("## Train\nA small combined run: the stages of 2 rounds each, then 3 rounds of the combined "
       "value, 4 updates of 8 self-play games a round, over AND-combinations of 1 and 2 atoms (a few "
       "minutes on a 2-core CPU, mostly compiling; the `quick` preset, `python -m train.hearts`, "
       "trains stages of 1,600 games and 2,400 games of the combined player). `JAXGAMES_NOTEBOOK_ARGS` adds flags of `python -m train.hearts` "
       "(e.g. `--rounds 6`); `JAXGAMES_HEARTS_RUN` skips the training and plays a run trained earlier "
       "(its folder, `runs/hearts/<run>`)."),
    code('''import time
from train import hearts as hearts_train
from jaxgames.hearts.agent import AgentError, load_agent
SMALL = ("--feature-sizes 1 2 --hearts-feature-sizes 1 2 --max-active 8 --stage-rounds 2 --rounds 3 "
         "--updates-per-round 4 --games-per-update 8 --top-qs 400 --top-hearts 200 --eval-deals 2 "
         "--final-eval-deals 4 --imperfect-deals 0").split()
EXTRA = os.environ.get("JAXGAMES_NOTEBOOK_ARGS", "").split()
if os.environ.get("JAXGAMES_HEARTS_RUN"):
    RUN = pathlib.Path(os.environ["JAXGAMES_HEARTS_RUN"])
    try:  # a folder that is not a finished Hearts run stops here with the reason
        print("playing the run in", RUN, "(no training):", load_agent(RUN).name)
    except AgentError as e:
        raise SystemExit(f"JAXGAMES_HEARTS_RUN: {e}")
else:
    RUN_NAME = f"colab-{int(time.time())}"
    summary = hearts_train.main(SMALL + ["--runs-dir", str(RUNS_DIR), "--run-name", RUN_NAME, "--no-progress"]
                                + EXTRA)
    RUN = RUNS_DIR / "hearts" / RUN_NAME'''),
    md("## The learning curve\nPoints per hand of the learned player (perfect information, the trick "
       "search on the real cards) against PIE after every round, over 14 seatings of the same deals "
       "(lower is better; 6.5 is break-even), through the run's phases: the Q♠ stage, the hearts "
       "stage, the combined value (`metrics.jsonl` of each)."),
    code('''import io
import matplotlib.pyplot as plt
from IPython.display import Image, Markdown, display

def rows(folder):
    path = folder / "metrics.jsonl"
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()] if path.is_file() else []

phases = [(f"{stage} stage", RUN / "stages" / "hearts" / stage) for stage in ("qs", "hearts")] + [("combined", RUN)]
fig, ax = plt.subplots(figsize=(7.5, 4.5))
done = 0
for label, folder in phases:
    r = rows(folder)
    if not r:
        continue
    games = [done + x["games"] for x in r]
    ax.plot(games, [x["points_learned_vs_pie"] for x in r], marker="o", label=f"learned ({label})")
    ax.plot(games, [x["points_pie"] for x in r], marker="x", linestyle=":", color="grey",
            label="PIE" if label == phases[-1][0] else None)
    done = games[-1]
ax.axhline(6.5, linestyle="--", color="k", linewidth=1)
ax.set(xlabel="training games (all phases)", ylabel="points per hand (lower is better)",
       title="The learned player against PIE")
ax.legend(fontsize=8)
png = io.BytesIO()
fig.savefig(png, format="png", dpi=100, bbox_inches="tight")
plt.close(fig)
display(Image(data=png.getvalue()))
if (RUN / "plots" / "td_error.png").is_file():
    display(Image(filename=str(RUN / "plots" / "td_error.png")))'''),
    md("## The report and the features the value weighs most\n`report.md`: the final evaluation against "
       "PIE, the rule bot and random, then the features that predict the most points (each selected "
       "feature is marked by the predictor it comes from)."),
    code('''report = (RUN / "report.md").read_text().split("![")[0] if (RUN / "report.md").is_file() else ""
display(Markdown(report.split("\\n## The 20 features that predict the fewest")[0]))'''),
    md("## A hand: the agent in three seats against the rule bot\nStandard Hearts (passing, the 2♣ "
       "leads, hearts broken), the moon on: the rule bot in seat 0, the agent in seats 1 to 3. The agent "
       "is honest: at each card it deals worlds consistent with what its seat has seen (PIMC, the run's "
       "`worlds`) and searches the trick in each with the learned value; it passes by the bots' rule "
       "(the source's variant has no passing)."),
    code('''import jax, jax.numpy as jnp
import numpy as np
from jaxgames.hearts import Hearts, bots, card_name, tricks
env = Hearts(variant="standard")
agent = load_agent(RUN, env=env)     # config.json, selection.npz and the newest checkpoint's weights
rule = bots.make_bot(env, "rule")
print(agent.name)
policies = {0: jax.jit(rule.policy)}
step = jax.jit(env.step)
state, key, passes = env.init(jax.random.key(5)), jax.random.key(6), []
while not bool(state.terminated):
    key, k = jax.random.split(key)
    seat = int(state.current_player)
    action = int(policies[0](None, state, k)) if seat == 0 else agent.act(state, k)
    if int(state.leader) < 0:            # passing
        passes.append((seat, card_name(action)))
    state = step(state, jnp.int32(action))
WHO = ["rule (0)", "agent (1)", "agent (2)", "agent (3)"]
for seat in range(4):
    print(f"{WHO[seat]} passes", " ".join(c for s, c in passes if s == seat))
for i, (leader, cards, taker) in enumerate(tricks(state)):
    shown = ", ".join(f"{WHO[(leader + j) % 4]} {card_name(c)}" for j, c in enumerate(cards))
    print(f"Trick {i + 1:2d}: {shown} -> {WHO[taker]}")
points = [int(p) for p in np.asarray(state.points)]
print("hand over, points:", ", ".join(f"{WHO[s]} {points[s]}" for s in range(4)),
      f"(the agent's seats {sum(points[1:]) / 3:.2f} a seat, the rule bot {points[0]})")'''),
    md("## Play the agent\nIn a terminal: `python -m jaxgames.hearts.play --opponent agent --run "
       "runs/hearts/<run>` (you take one seat, the agent the three others; `--variant paper` for the "
       "source's game, `--worlds N` for its worlds a card)."),
]

NOTEBOOKS = {"ten_half.ipynb": TEN_HALF, "game2048.ipynb": GAME2048, "hex.ipynb": HEX,
             "holdem.ipynb": HOLDEM, "hearts.ipynb": HEARTS}


def build(cells) -> dict:
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"},
                                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{i}"
    return nb


def text(cells) -> str:
    return json.dumps(build(cells), indent=1) + "\n"


if __name__ == "__main__":
    for name, cells in NOTEBOOKS.items():
        (HERE / name).write_text(text(cells))
