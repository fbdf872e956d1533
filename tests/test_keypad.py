"""The scorepad's keypad: sense.Keypad (one key at a time, held keys and ghosts ignored,
debounce, a stuck key), the hal's matrix scan over the simulated matrix, on CPython and on the
MicroPython unix port, and the whole scorepad scan allocation-free under heap_lock."""

import pytest

from chalk.build import compile_firmware
from chalk.sim import SIM_HEAP
from tests.conftest import report_micropython
from tests.mp import keypad_cases as cases
from tests.mpy import MP_TESTS, ROOT, micropython_path, run_mp

needs_mp = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


@pytest.mark.parametrize("name, case", cases.CASES, ids=[n for n, _ in cases.CASES])
def test_on_cpython(name, case):
    case()


@needs_mp
def test_same_checks_on_micropython():
    out = run_mp(MP_TESTS / "keypad_check.py", heap=SIM_HEAP).stdout  # hal.sim is big
    assert "SUMMARY passed=%d failed=0" % len(cases.CASES) in out, out


@needs_mp
def test_scorepad_scan_allocates_nothing_under_heap_lock(tmp_path):
    mpy = tmp_path / "mpy"
    compile_firmware(mpy, arch=None)
    steps = 20000  # 100 s of 5 ms scans
    out = run_mp(MP_TESTS / "keypad_heaplock.py",
                 args=[mpy, ROOT / "firmware" / "boards" / "scorepad.json", tmp_path / "flash",
                       steps], heap=SIM_HEAP, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    got = {k: int(v) for k, v in (line.split() for line in out.stdout.splitlines())}
    assert got["STEPS"] == steps
    # 100 s: a clean press every 2 s for the first 30 s of each 100 s, one per cycle while
    # the held key is not down; chords and ghosts ignored; the held key stuck and freed.
    assert got["KEY"] >= 15, got
    assert got["IGNORED"] >= 15, got
    assert got["STUCK"] == 1 and got["HEALTHY"] >= 1, got
    assert got["DROPPED"] == 0 and got["GARBAGE"] == 0, got
    report_micropython("scorepad App.scan ticks under heap_lock (%d keys)" % got["KEY"], steps)
