# Chalk: every command a developer or CI needs. `make demo` and `make test` set up on their own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo test lint check-static bench fuzz mpy hardware deploy flash clean dist screenshots

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Chalk's main job: a whole traced game of each kind on the simulated board (the firmware on
# the MicroPython unix port), its screen, the scoresheet it kept, checked against the rules:
# every game of the registry with a bundled sample (bench/demo_games.py).
demo: setup
	$(BIN)/python bench/demo_games.py
	@echo
	$(BIN)/python bench/demo_serve.py

lint: setup
	$(BIN)/ruff check firmware host tests bench

# Firmware type-checked against the ESP32 port's API (micropython-esp32-stubs); hardware docs
# checked against the board configs.
check-static: lint
	$(BIN)/python -m chalk.build stubs build/mpy-stubs
	$(BIN)/mypy
	$(BIN)/python -m chalk.hardware check

test: check-static
	$(BIN)/pytest
	mkdir -p build && $(BIN)/python bench/bench.py --smoke > build/bench-smoke.txt || \
		{ cat build/bench-smoke.txt; echo "make test: the bench's smoke run failed"; exit 1; }
	@echo "bench smoke run: every section ran (build/bench-smoke.txt; goals are judged by make bench)"

# ESP32 bytecode of every firmware module (xtensawin), for `chalk deploy` or a frozen image.
mpy: setup
	$(BIN)/python -m chalk.build mpy build/mpy

# Put the firmware on a board (mpremote), or MicroPython itself (esptool):
#   make deploy PORT=/dev/ttyUSB0      make flash PORT=/dev/ttyUSB0 FIRMWARE=ESP32_GENERIC.bin
deploy: setup
	$(BIN)/chalk deploy --port $(or $(PORT),auto)

flash: setup
	$(BIN)/chalk flash --port $(or $(PORT),auto) $(FIRMWARE)

# Regenerate the pin maps and wiring diagrams in hardware/ from firmware/boards/*.json.
hardware: setup
	$(BIN)/python -m chalk.hardware generate

bench: setup
	$(BIN)/python bench/bench.py

# The board's command handler on MicroPython under 50,000 fuzzed commands (valid CRCs, hostile
# arguments, test mode on and off, every kind of board): no crash, no `internal` reply.
fuzz: setup
	$(BIN)/python -m tests.test_fuzz_handler --inputs 50000

# A wheel of chalk with the firmware, board configs and samples inside (setup.py): what a pub
# PC installs with `pipx install dist/chalk-*.whl`.
dist: setup
	rm -rf dist build/lib build/bdist.*
	$(BIN)/pip wheel --quiet --disable-pip-version-check --no-deps -w dist .
	@ls dist/*.whl

# docs/venue-tables.png and docs/venue-table.png: the scoreboard pages in headless Chromium.
screenshots: setup
	$(BIN)/python -m tests.browser docs

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis .ruff_cache
