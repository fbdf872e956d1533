"""Shared test setup: a record of what ran on MicroPython, printed at the end of every run."""

import os
import tempfile

import pytest

# Board keys made by `chalk sim` in tests go to a throw-away key store, never the user's.
os.environ.setdefault("CHALK_KEYS", os.path.join(tempfile.mkdtemp(prefix="chalk-keys-"),
                                                 "keys.json"))

MICROPYTHON_RUNS = []


def report_micropython(what, count):
    """Note that `count` items of `what` ran on the MicroPython unix port and agreed."""
    MICROPYTHON_RUNS.append((what, count))


def pytest_terminal_summary(terminalreporter):
    if not MICROPYTHON_RUNS:
        return
    terminalreporter.section("MicroPython runs (unix port, -X heapsize=96k)")
    for what, count in MICROPYTHON_RUNS:
        terminalreporter.write_line("%6d  %s" % (count, what))


@pytest.fixture(scope="session")
def chromium_paths():
    """(chromium, chromedriver) for the browser tests (tests/browser.py installs Debian's)."""
    from tests.browser import find_chromium

    paths, why = find_chromium()
    if paths is None:
        pytest.fail(why)
    return paths
