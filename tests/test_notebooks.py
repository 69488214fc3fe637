"""Every colab notebook runs top to bottom (tiny budgets via environment variables)."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_notebooks", REPO / "colab" / "make_notebooks.py")
make_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_notebooks)
TINY = {
    "ten_half.ipynb": {"JAXGAMES_NOTEBOOK_EPISODES": "20000"},
    "game2048.ipynb": {"JAXGAMES_NOTEBOOK_MOVES": "16000", "JAXGAMES_NOTEBOOK_ARGS":
                       "--patterns 0,1,2,3,4,5 --num-games 16 --updates-per-chunk 500 "
                       "--eval-games 8 --final-games 8 --final-games-deep 2"},
    "hex.ipynb": {"JAXGAMES_NOTEBOOK_ARGS":
                  "--board-size 3 --phase1 none --rounds 1 --updates-per-round 1 --games-per-update 2 "
                  "--simulations 2 --sgd-steps 1 --batch-size 4 --buffer-size 64 --uct-simulations 2 "
                  "--eval-games 2 --eval-simulations 2 --final-eval-games 2 --elo-games 0 --sgf-games 0"},
    # the learner's and the evaluations' sizes of tests/conftest.py's tiny hold'em run: the
    # suite's persistent compile cache then holds their programs
    "holdem.ipynb": {"JAXGAMES_NOTEBOOK_ARGS":
                     "--rounds 1 --updates-per-round 2 --num-envs 16 --num-steps 4 --opponent-groups 4 "
                     "--epochs 1 --minibatches 2 --eval-deals 4 --final-eval-deals 4 --lbr-hands 0 "
                     "--elo-deals 2"},
    # the Q♠ predictor alone, really evaluated against PIE, the rule bot and random (the combined
    # run with its stages is tests/train/test_train_hearts.py's, its stages' evaluations stood in
    # for); the hand against the rule bot with PIMC over 2 worlds, not the run's default 20 (the
    # cell took 12 s, 7 s with 2, on a 2-core Zen 4). Its kernel compiles with JAX's optimisations
    # (the suite's fast compiles, tests/conftest.py, off): its matches of trick searches run for
    # longer than those compiles save (the test 46 s against 55 s, on a 2-core Zen 4)
    "hearts.ipynb": {"JAXGAMES_NOTEBOOK_ARGS":
                     "--predictor qs --feature-sizes 1 --hearts-feature-sizes 1 --max-active 4 --stage-rounds 1 --rounds 1 "
                     "--updates-per-round 1 --games-per-update 2 --top-qs 20 --top-hearts 20 --eval-deals 2 "
                     "--final-eval-deals 2 --worlds 2", "JAX_DISABLE_MOST_OPTIMIZATIONS": "0"},
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


@pytest.mark.slow  # a Jupyter kernel running a whole pipeline per notebook
@pytest.mark.parametrize("name", sorted(TINY))
def test_notebook_runs(name, tmp_path):
    nb = run_notebook(name, tmp_path, {**TINY[name], "JAXGAMES_RUNS_DIR": str(tmp_path / "runs")})
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert images, "the notebook showed no plot"
    assert list((tmp_path / "runs").glob("*/*/summary.json"))
    if name == "hex.ipynb":  # a game against UCT drawn, and the position after playing the agent
        svgs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                if "image/svg+xml" in o.get("data", {})]
        assert len(svgs) == 2
        text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                       for o in c.get("outputs", []))
        assert "vs UCT-2: " in text and "playing agent colab-" in text and "you b2" in text
    if name == "holdem.ipynb":  # the curves drawn, the run's plots; the agent against the call bot, and you
        assert len(images) == 3
        text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                       for o in c.get("outputs", []))
        assert "round 1 (" in text and "(update 2, latest parameters) vs the call bot: " in text
        assert "call bot (seat 0): call 50\nagent's probabilities: " in text and "hand over: " in text
        assert "against agent colab-" in text and "Computer (agent): " in text and "your result: " in text
    if name == "hearts.ipynb":  # the curve and the TD error; the top features; a hand against the rule bot
        assert len(images) == 2
        markdown = "".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                           for o in c.get("outputs", []))
        assert "features that predict the most points" in markdown and "fewest" not in markdown
        text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                       for o in c.get("outputs", []))
        assert "(qs predictor, update 1, PIMC 2 worlds)" in text and "rule (0) passes " in text
        assert "Trick 13: " in text and "hand over, points: " in text


def test_notebook_with_unwritable_runs_dir_fails_clearly(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CellExecutionError, match="not writable"):
        run_notebook("ten_half.ipynb", tmp_path,
                     {**TINY["ten_half.ipynb"], "JAXGAMES_RUNS_DIR": str(blocker / "runs")})


def test_hex_notebook_with_a_wrong_run_folder_fails_clearly(tmp_path):
    with pytest.raises(CellExecutionError, match="JAXGAMES_HEX_RUN: .*nowhere: no such run folder"):
        run_notebook("hex.ipynb", tmp_path, {"JAXGAMES_RUNS_DIR": str(tmp_path / "runs"),
                                             "JAXGAMES_HEX_RUN": str(tmp_path / "nowhere")})
    assert not list((tmp_path / "runs").glob("hex/*"))  # nothing trained


def test_holdem_notebook_with_a_wrong_run_folder_fails_clearly(tmp_path):
    with pytest.raises(CellExecutionError, match="JAXGAMES_HOLDEM_RUN: .*nowhere: no such run folder"):
        run_notebook("holdem.ipynb", tmp_path, {"JAXGAMES_RUNS_DIR": str(tmp_path / "runs"),
                                                "JAXGAMES_HOLDEM_RUN": str(tmp_path / "nowhere")})
    assert not list((tmp_path / "runs").glob("holdem/*"))  # nothing trained


def test_hearts_notebook_with_a_wrong_run_folder_fails_clearly(tmp_path):
    with pytest.raises(CellExecutionError, match="JAXGAMES_HEARTS_RUN: .*nowhere: no such run folder"):
        run_notebook("hearts.ipynb", tmp_path, {"JAXGAMES_RUNS_DIR": str(tmp_path / "runs"),
                                                "JAXGAMES_HEARTS_RUN": str(tmp_path / "nowhere")})
    assert not list((tmp_path / "runs").glob("hearts/*"))  # nothing trained


# -- the install cell (no kernel needed) --------------------------------------------------------


def test_notebooks_are_generated_with_the_projects_address():
    for name, cells in make_notebooks.NOTEBOOKS.items():
        assert (REPO / "colab" / name).read_text() == make_notebooks.text(cells), \
            f"colab/{name} is stale: run python colab/make_notebooks.py"
    install = make_notebooks.INSTALL
    assert f"PROJECT_URL = {make_notebooks.project_url()!r}" in install
    assert "github.com/jaxgames/jaxgames" not in install


def test_project_url_comes_from_pyproject(tmp_path, monkeypatch):
    toml = tmp_path / "pyproject.toml"
    toml.write_text('[project]\nname = "jaxgames"\n\n[project.urls]\nHomepage = "https://h.example"\n'
                    'Repository = "https://git.example/o/jaxgames"\n\n[tool.x]\ny = "z"\n')
    assert make_notebooks.project_url(toml) == "https://git.example/o/jaxgames"
    toml.write_text('[project]\nname = "jaxgames"\n')
    assert make_notebooks.project_url(toml) is None


def test_install_cell_picks_its_source(tmp_path, monkeypatch):
    ns = {}
    exec(make_notebooks.SOURCE_FN, ns)
    source = ns["jaxgames_source"]
    monkeypatch.delenv("JAXGAMES_REPO", raising=False)
    work = tmp_path / "clone" / "colab"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    with pytest.raises(SystemExit, match=r"upload a jaxgames wheel .* or set JAXGAMES_REPO"):
        source(None)
    assert source("https://git.example/o/jaxgames") == ("git+https://git.example/o/jaxgames", None)
    (tmp_path / "clone" / "pyproject.toml").write_text('[project]\nname = "jaxgames"\n')
    assert source("https://git.example/o/jaxgames") == (str(tmp_path / "clone"),) * 2  # editable
    (work / "jaxgames-0.1.0-py3-none-any.whl").write_bytes(b"")
    assert source(None) == ("jaxgames-0.1.0-py3-none-any.whl", None)
    monkeypatch.setenv("JAXGAMES_REPO", "https://mirror.example/jaxgames.git")
    assert source(None) == ("git+https://mirror.example/jaxgames.git", None)


def test_install_cell_without_a_source_stops_with_what_to_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAXGAMES_REPO")}
    out = subprocess.run([sys.executable, "-S", "-c", make_notebooks.install_cell(None)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "set JAXGAMES_REPO" in out.stderr and "jaxgames-*.whl" in out.stderr
    assert "Traceback" not in out.stderr and list(tmp_path.iterdir()) == []
