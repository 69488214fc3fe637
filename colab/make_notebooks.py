"""Writes the colab/*.ipynb notebooks from the cell lists below (keeps them reviewable as code).

    python colab/make_notebooks.py
"""

import json
import pathlib
import re

HERE = pathlib.Path(__file__).parent
PYPROJECT = HERE.parent / "pyproject.toml"
URL_KEYS = ("Repository", "Source", "Homepage")


def project_url(pyproject: pathlib.Path = PYPROJECT) -> str | None:
    """The project's address from ``[project.urls]`` (Repository, Source or Homepage), or None.
    The one place it is written; the notebooks get it when they are generated."""
    try:
        import tomllib
        urls = tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {})
    except ImportError:  # Python 3.10: the one table we need, read plainly
        table = re.search(r"^\[project\.urls\]\s*$(.*?)(?=^\[|\Z)", pyproject.read_text(), re.M | re.S)
        urls = dict(re.findall(r'^\s*"?([\w.-]+)"?\s*=\s*"([^"]+)"', table.group(1), re.M)) if table else {}
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

NOTEBOOKS = {"ten_half.ipynb": TEN_HALF, "game2048.ipynb": GAME2048}


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
