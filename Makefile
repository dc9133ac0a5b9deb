# Quizmaster developer tasks. Everything runs from a local virtualenv in .venv,
# (re)installed whenever pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip --disable-pip-version-check

.DEFAULT_GOAL := test

.PHONY: venv run test lint format bench clean

venv: $(STAMP)

# The interpreter is an order-only prerequisite: its timestamp (a symlink to the
# system Python) must not force a reinstall; only pyproject.toml does.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $@

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
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .benchmarks build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
