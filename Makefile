# Quizmaster developer tasks. Everything runs from a local virtualenv in .venv,
# (re)installed whenever pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip --disable-pip-version-check

.DEFAULT_GOAL := test

.PHONY: venv run test lint format bench clean lock

venv: $(STAMP)

# The interpreter is an order-only prerequisite: its timestamp (a symlink to the
# system Python) must not force a reinstall; only pyproject.toml does.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installs the pinned set from the lock file, then the project itself; `pip check`
# fails when pyproject.toml asks for something the lock does not hold (run `make lock`).
$(STAMP): pyproject.toml requirements-dev.lock | $(BIN)/python
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements-dev.lock
	$(PIP) install --quiet --no-deps -e .
	$(PIP) check
	touch $@

# Re-resolves pyproject.toml's ranges in throw-away virtualenvs and pins the result:
# requirements.lock (runtime, the Docker image) and requirements-dev.lock (with tests).
LOCK_VENV := .lock-venv
lock:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet .
	{ echo "# Runtime dependencies, pinned: what the Docker image installs. Regenerate with 'make lock'."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | grep -v '^quizmaster'; } > requirements.lock
	$(LOCK_VENV)/bin/pip install --quiet '.[test]'
	{ echo "# Runtime and test dependencies, pinned: what 'make' installs into .venv. Regenerate with 'make lock'."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | grep -v '^quizmaster'; } > requirements-dev.lock
	rm -rf $(LOCK_VENV)

run: $(STAMP)
	$(BIN)/quizmaster run

define LINT
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy bot
	$(BIN)/hadolint Dockerfile
endef

lint: $(STAMP)
	$(LINT)

test: $(STAMP)
	$(LINT)
	$(BIN)/pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/answers.py
	$(BIN)/python bench/schedule.py
	$(BIN)/python bench/fanout.py
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/faults.py
	$(BIN)/python bench/boards.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/clicks.py
	$(BIN)/python bench/discord_clicks.py

clean:
	rm -rf $(VENV) $(LOCK_VENV) .mypy_cache .ruff_cache .pytest_cache .benchmarks build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
