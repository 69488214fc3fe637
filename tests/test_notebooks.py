"""Every colab notebook runs top to bottom (tiny budgets via environment variables)."""

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = pathlib.Path(__file__).resolve().parents[1]
TINY = {
    "ten_half.ipynb": {"JAXGAMES_NOTEBOOK_EPISODES": "20000"},
    "game2048.ipynb": {"JAXGAMES_NOTEBOOK_MOVES": "16000", "JAXGAMES_NOTEBOOK_ARGS":
                       "--patterns 0,1,2,3,4,5 --num-games 16 --updates-per-chunk 500 "
                       "--eval-games 8 --final-games 8 --final-games-deep 2"},
}


def run_notebook(name, tmp_path, env):
    nb = nbformat.read(REPO / "colab" / name, as_version=4)
    old = dict(os.environ)
    os.environ.update(env)
    os.environ["PYTHONPATH"] = str(REPO)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


@pytest.mark.parametrize("name", sorted(TINY))
def test_notebook_runs(name, tmp_path):
    nb = run_notebook(name, tmp_path, {**TINY[name], "JAXGAMES_RUNS_DIR": str(tmp_path / "runs")})
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, "the notebook showed no plot"
    assert list((tmp_path / "runs").glob("*/*/summary.json"))


def test_notebook_with_unwritable_runs_dir_fails_clearly(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CellExecutionError, match="not writable"):
        run_notebook("ten_half.ipynb", tmp_path,
                     {**TINY["ten_half.ipynb"], "JAXGAMES_RUNS_DIR": str(blocker / "runs")})
