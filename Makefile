# The two commands: `make demo` runs the ten-and-a-half and 2048 quick presets and prints one summary table;
# `make test` runs the test suite. Both create .venv on first use (needs only python3 (3.11+) + make;
# PYTHON=python3.11 picks another interpreter).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# jax 0.10.1: 0.10.2 miscompiles on CPU (jax issue 39103).
JAX_PIN := jax[cpu]==0.10.1

.PHONY: demo test test-slow docs bench clean

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "jaxgames needs Python 3.11+ (jax 0.10.1 has no wheels for " + sys.version.split()[0] + "): make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q "$(JAX_PIN)" -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q "$(JAX_PIN)" -e ".[dev,bench]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(PY) -m train.demo

# Two workers, one test module each at a time (module-scoped fixtures compile once): most of
# the suite is XLA compilation, which runs on one core.
test: $(VENV)/.installed-dev
	$(PY) -m pytest -n 2 --dist loadfile --durations=15 -m "not slow"

# The tests too large for `make test` (process launches many times over): under 30 minutes.
test-slow: $(VENV)/.installed-dev
	$(PY) -m pytest -n 2 --dist loadfile --durations=15 -m slow

# The API reference from the docstrings (pdoc), after checking every docstring reference resolves:
# build/api/index.html.
docs: $(VENV)/.installed-dev
	$(PY) docs/api_reference.py --output build/api

# Every bench in bench/ once, at small settings (a smoke run of each, not the documented
# figures): those come from each bench's defaults, `python -m bench.<name>` (--help lists its options).
bench: $(VENV)/.installed-dev
	$(PY) -m bench.ten_half --episodes 50000 --python-episodes 20000
	$(PY) -m bench.rng
	$(PY) -m bench.game2048_env --batch 256 --steps 50 --repeats 2
	$(PY) -m bench.game2048_train --seconds 3
	$(PY) -m bench.hex_env --batch 256 --steps 50 --repeats 2
	$(PY) -m bench.hex_uct --size 7 --batch 8 --simulations 100 --peer-games 1
	$(PY) -m bench.hex_network --batches 1,32 --repeats 2 --calls 5
	$(PY) -m bench.hex_selfplay --size 5 --batch 16 --simulations 8 --no-pipeline
	$(PY) -m bench.hex_equal_time --agent az-7x7 --reference 200 --games 2
	$(PY) -m bench.arena --size 5 --games 4 --simulations 8 --uct-simulations 16 --repeats 1
	$(PY) -m bench.distributed --game ten_half --no-kill
	$(PY) -m bench.hand_eval --log2-batch 16 --repeats 3 --peer-hands 10000
	$(PY) -m bench.hand_eval_exhaustive --no-peer
	$(PY) -m bench.holdem_env --batch 256 --repeats 1 --peer-hands 100 --steps 20
	$(PY) -m bench.holdem_bots --quick
	$(PY) -m bench.holdem_network --sizes small --batch 64 --repeats 2 --steps 2
	$(PY) -m bench.holdem_train --num-envs 32 --num-steps 8 --updates 1 --repeats 1
	$(PY) -m bench.hearts_env --batch 128 --repeats 1 --peer-seconds 1
	$(PY) -m bench.hearts_bots --bots pie,rule,random --deals 2 --game-deals 0 --speed-batch 8 --no-honesty
	$(PY) -m bench.hearts_trick_search --batch 4 --maxn-batch 1

clean:
	rm -rf $(VENV) runs .pytest_cache
