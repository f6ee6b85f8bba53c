# `make run` and `make test` work on a fresh machine: the first call creates .venv and installs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint format bench clean mutate

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Vigil needs Python 3.11+")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/vigil $(ARGS)

# tests run in parallel, two workers per core (many wait on processes, terminals and sockets)
JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) * 2 )))

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) $(PYTEST_ARGS)

# Mutation testing of the permission decisions (SCOPE=all: the whole permission room); see tests/mutation/
mutate: $(STAMP)
	VIGIL_MUTATE_SCOPE=$(SCOPE) $(BIN)/python -m tests.mutation --again inf --cache .venv/mutation-measure.pickle

lint: $(STAMP)
	$(BIN)/ruff check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
