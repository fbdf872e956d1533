"""Shared test setup: a record of what ran on MicroPython, printed at the end of every run."""

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
