"""The scorepad's keypad: sense.Keypad (one key at a time, held keys and ghosts ignored,
debounce, a stuck key), the hal's matrix scan over the simulated matrix, on CPython and on the
MicroPython unix port, and the whole scorepad scan allocation-free under heap_lock."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalk.build import compile_firmware
from chalk.sim import SIM_HEAP
from scoreboard.sense import EventRing, Keypad
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


# -- properties ------------------------------------------------------------------------------------

DEBOUNCE = 20
SEGMENT = st.tuples(st.integers(1, 12).map(lambda n: n * 5),  # how long, 5..60 ms
                    st.one_of(st.just(0), st.integers(0, 15).map(lambda k: 1 << k),
                              st.integers(1, 0xFFFF)))


@settings(max_examples=150, deadline=None)
@given(segments=st.lists(SEGMENT, min_size=1, max_size=60))
def test_a_key_acts_only_when_alone_on_an_idle_pad_for_debounce_ms(segments):
    pad = Keypad(16, DEBOUNCE, 0, EventRing(256))
    scans = []  # (t, raw) every 5 ms
    t = 0
    for ms, raw in segments + [(100, 0)]:
        for _ in range(ms // 5):
            scans.append((t, raw))
            t += 5
    events = []
    buf = [0, 0, 0, 0]
    for t, raw in scans:
        pad.tick(t, raw)
        while pad.ring.pop_into(buf):
            events.append((buf[1], buf[3]))
    # Runs of equal scans; a run is taken (debounced) once it has lasted debounce_ms.
    runs = []
    for t, raw in scans:
        if runs and runs[-1][2] == raw:
            runs[-1][1] = t
        else:
            runs.append([t, t, raw])
    taken = [r for r in runs if r[1] - r[0] >= DEBOUNCE]
    # Each KEY: its key alone for debounce_ms up to the event, and the run taken before it was
    # an idle pad (or there was none); never two KEYs without an idle pad taken between them.
    raw_at = dict(scans)
    for key, at in events:
        assert all(raw_at[x] == 1 << key for x in range(at - DEBOUNCE, at + 1, 5)), (key, at)
        earlier = [r for r in taken if r[0] < at - DEBOUNCE]
        assert earlier == [] or earlier[-1][2] == 0, (key, at, earlier[-1])
    for (_, a), (_, b) in zip(events, events[1:]):
        idle = [x for x, r in scans if a < x < b and r == 0]
        runs = 0
        best = 0
        for x in range(a, b, 5):
            runs = runs + 5 if raw_at[x] == 0 else 0
            best = max(best, runs)
        assert idle and best > DEBOUNCE, (a, b)
    # And a single key held for debounce_ms + a scan right after debounce_ms of idle always acts.
    for i in range(1, len(segments)):
        (ms0, r0), (ms1, r1) = segments[i - 1], segments[i]
        if r0 == 0 and ms0 > DEBOUNCE and r1 and r1 & (r1 - 1) == 0 and ms1 > DEBOUNCE:
            start = sum(m for m, _ in segments[:i])
            assert any(k == r1.bit_length() - 1 and start <= at <= start + ms1
                       for k, at in events), (i, segments)
