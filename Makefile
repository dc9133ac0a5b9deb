# Quizmaster tasks. Everything runs from a local virtualenv in .venv: `make run`
# and `make play` install only what running needs (requirements.lock); `make test`
# and the other developer targets add the test tools (requirements-dev.lock).
# Either set is (re)installed whenever pyproject.toml or its lock file changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP  := $(VENV)/.installed-dev
PIP    := $(BIN)/python -m pip --disable-pip-version-check
ARGS   ?=

.DEFAULT_GOAL := help

.PHONY: help venv run play test lint format bench clean lock catalogs messages language

help:
	@echo "Quizmaster: make <target>"
	@echo "  play    a quiz in this terminal (options: make play ARGS='--questions 3 --seconds 20')"
	@echo "  run     the bot: Discord/Slack when their tokens are set, else a local console channel"
	@echo "  test    ruff, mypy, hadolint and pytest (installs the test tools)"
	@echo "  lint    ruff, mypy and hadolint only"
	@echo "  format  ruff format and fixes"
	@echo "  bench   the benchmarks (docs/benchmarks.md)"
	@echo "  lock    re-pin requirements.lock and requirements-dev.lock from pyproject.toml"
	@echo "  messages  re-extract bot/locale/messages.pot and merge it into every .po"
	@echo "  language  start a new language: make language CODE=it (docs/languages.md)"
	@echo "  venv    .venv with the test tools, without running anything"
	@echo "  clean   remove .venv and caches"
	@echo "After the first run the program is $(BIN)/quizmaster (try $(BIN)/quizmaster --help)."

venv: $(STAMP) catalogs

# The message catalogs: each .po compiles to its .mo whenever it changed (the
# package build does the same, hatch_build.py). Every target that runs the bot
# depends on this.
LOCALE := bot/locale
PO_FILES := $(wildcard $(LOCALE)/*/LC_MESSAGES/messages.po)
MO_FILES := $(PO_FILES:.po=.mo)
KEYWORDS := -k t -k tn:1,2 -k N_ -k described

catalogs: $(MO_FILES)

$(LOCALE)/%/LC_MESSAGES/messages.mo: $(LOCALE)/%/LC_MESSAGES/messages.po | $(RUN_STAMP)
	$(BIN)/pybabel -q compile -i $< -o $@ -l $*

messages: $(STAMP)
	$(BIN)/pybabel -q extract -F babel.cfg $(KEYWORDS) --no-location --sort-output \
	  --project=Quizmaster --copyright-holder="Quizmaster contributors" -o $(LOCALE)/messages.pot .
	$(BIN)/pybabel -q update -i $(LOCALE)/messages.pot -d $(LOCALE) -D messages \
	  --no-fuzzy-matching --ignore-obsolete

language: $(STAMP)
	@test -n "$(CODE)" || { echo "usage: make language CODE=<code>, e.g. CODE=it"; exit 2; }
	$(BIN)/pybabel -q init -i $(LOCALE)/messages.pot -d $(LOCALE) -D messages -l $(CODE)
	@echo "Now translate $(LOCALE)/$(CODE)/LC_MESSAGES/messages.po: the bot offers $(CODE) from the next start."

# The interpreter is an order-only prerequisite: its timestamp (a symlink to the
# system Python) must not force a reinstall; only pyproject.toml does.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installs the pinned set from a lock file, then the project itself; `pip check`
# fails when pyproject.toml asks for something the lock does not hold (run `make lock`).
# pip itself is not upgraded: the venv's own pip reads the lock files, and fetching
# a new one is most of a cold start's network time.
define INSTALL
	$(PIP) install --quiet -r $(1)
	$(PIP) install --quiet --no-deps -e .
	$(PIP) check
	touch $@
endef

$(RUN_STAMP): pyproject.toml requirements.lock | $(BIN)/python
	$(call INSTALL,requirements.lock)

# The dev set is a superset of the runtime set, so it stands for both.
$(STAMP): pyproject.toml requirements-dev.lock | $(BIN)/python
	$(call INSTALL,requirements-dev.lock)
	touch $(RUN_STAMP)

# Re-resolves pyproject.toml's ranges in throw-away virtualenvs and pins the result:
# requirements.lock (runtime: make run, make play, the Docker image) and
# requirements-dev.lock (with the test tools: make test).
LOCK_VENV := .lock-venv
lock:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet .
	{ echo "# Runtime dependencies, pinned: what make run and the Docker image install. Regenerate with 'make lock'."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | grep -v '^quizmaster'; } > requirements.lock
	$(LOCK_VENV)/bin/pip install --quiet '.[test]'
	{ echo "# Runtime and test dependencies, pinned: what 'make test' installs into .venv. Regenerate with 'make lock'."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | grep -v '^quizmaster'; } > requirements-dev.lock
	rm -rf $(LOCK_VENV)

run: $(RUN_STAMP) catalogs
	$(BIN)/quizmaster run

play: $(RUN_STAMP) catalogs
	$(BIN)/quizmaster play $(ARGS)

define LINT
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy bot
	$(BIN)/hadolint Dockerfile
endef

lint: $(STAMP) catalogs
	$(LINT)

test: $(STAMP) catalogs
	$(LINT)
	$(BIN)/pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) catalogs
	$(BIN)/python bench/answers.py
	$(BIN)/python bench/schedule.py
	$(BIN)/python bench/fanout.py
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/faults.py
	$(BIN)/python bench/boards.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/question_health.py
	$(BIN)/python bench/clicks.py
	$(BIN)/python bench/discord_clicks.py
	$(BIN)/python bench/discord_clicks.py --rate 10 --seconds 20 --instructions
	$(BIN)/python bench/texts.py
	$(BIN)/python bench/abuse.py
	$(BIN)/python bench/slack_clicks.py
	$(BIN)/python bench/slack_clicks.py --clicks 200 --connections 10 --instructions
	$(BIN)/python bench/close_cpu.py

clean:
	rm -rf $(VENV) $(LOCK_VENV) .mypy_cache .ruff_cache .pytest_cache .benchmarks build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
