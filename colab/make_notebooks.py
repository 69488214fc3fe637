"""Writes the colab/*.ipynb notebooks from the cell lists below (keeps them reviewable as code).

    python colab/make_notebooks.py
"""

import json
import pathlib

HERE = pathlib.Path(__file__).parent

INSTALL = '''# Install jaxgames (skipped when it is already importable, e.g. in a local checkout).
import importlib.util, os, subprocess, sys
REPO_URL = os.environ.get("JAXGAMES_REPO", "https://github.com/jaxgames/jaxgames")
if importlib.util.find_spec("jaxgames") is None:
    if not os.path.isdir("jaxgames"):
        subprocess.run(["git", "clone", "--depth", "1", REPO_URL, "jaxgames"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", "jaxgames"], check=True)
    sys.path.insert(0, os.path.abspath("jaxgames"))
import jax
print("jax", jax.__version__, "devices:", jax.devices())'''

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

NOTEBOOKS = {"ten_half.ipynb": TEN_HALF}


def write(name, cells):
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"},
                                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{i}"
    (HERE / name).write_text(json.dumps(nb, indent=1) + "\n")


if __name__ == "__main__":
    for name, cells in NOTEBOOKS.items():
        write(name, cells)
