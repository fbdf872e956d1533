# Chalk: every command a developer or CI needs. `make demo` and `make test` set up on their own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Chalk's main job: replay a bundled match of each game and print its scoresheet.
demo: setup
	$(BIN)/chalk replay --sheet host/chalk/samples/shove-hapenny.jsonl
	@echo
	$(BIN)/chalk replay --sheet host/chalk/samples/five-pins.jsonl

lint: setup
	$(BIN)/ruff check firmware host tests bench

test: lint
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache
