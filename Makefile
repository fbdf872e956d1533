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

# Chalk's main job: a whole traced game of each kind on the simulated board (the firmware on
# the MicroPython unix port), its screen, the scoresheet it kept, checked against the rules.
demo: setup
	$(BIN)/chalk sim --virtual --sheet --board shove-hapenny \
		--trace host/chalk/samples/traces/shove-hapenny.jsonl
	@echo
	$(BIN)/chalk sim --virtual --sheet --board five-pins \
		--trace host/chalk/samples/traces/five-pins.jsonl

lint: setup
	$(BIN)/ruff check firmware host tests bench

test: lint
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache
