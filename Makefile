# The two commands: `make demo` runs the ten-and-a-half and 2048 quick presets and prints one summary table;
# `make test` runs the test suite. Both create .venv on first use (needs only python3 (3.11+) + make;
# PYTHON=python3.11 picks another interpreter).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# jax 0.10.1: 0.10.2 miscompiles on CPU (jax issue 39103).
JAX_PIN := jax[cpu]==0.10.1

.PHONY: demo test bench clean

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
	$(PY) -m pytest -n 2 --dist loadfile

bench: $(VENV)/.installed-dev
	$(PY) -m bench.ten_half
	$(PY) -m bench.game2048_env

clean:
	rm -rf $(VENV) runs .pytest_cache
