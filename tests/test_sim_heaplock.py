"""The app's sensing step allocates nothing on MicroPython: App.scan(t) for both boards, and the
tilt edge callback (app._edge), run under micropython.heap_lock() for thousands of ticks of line
activity on the unix port, from the same portable .mpy the simulated board loads (SIM_HEAP).
Events must come out of it (presses, long presses, pin falls, shots, pegs, stuck and chattering
lines), so the proof cannot pass on an idle board."""

import pytest

from chalk.build import compile_firmware
from chalk.sim import SIM_HEAP
from tests.conftest import report_micropython
from tests.mpy import MP_TESTS, ROOT, micropython_path, run_mp

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

STEPS = 20000  # 5 ms apart: 100 s of play, past stuck_ms (60 s)


@pytest.fixture(scope="module")
def mpy(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpy")
    compile_firmware(out, arch=None)
    return out


def run(board, mpy, tmp_path, *extra):
    cfg = ROOT / "firmware" / "boards" / (board + ".json")
    out = run_mp(MP_TESTS / "app_heaplock.py", args=[mpy, cfg, tmp_path / "flash", STEPS]
                 + list(extra), heap=SIM_HEAP, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "MEMORY_ERROR" not in out.stdout
    got = dict(line.split() for line in out.stdout.splitlines())
    return {k: int(v) for k, v in got.items()}


@pytest.mark.parametrize("board", ["five-pins", "shove-hapenny"])
def test_recording_line_changes_allocates_nothing(board, mpy, tmp_path):
    # chalk record's mode: every change noted by the scan and the edge callback, heap locked.
    got = run(board, mpy, tmp_path, "record")
    assert got["STEPS"] == STEPS and got["GARBAGE"] == 0
    assert got["RECORDED"] > STEPS // 100 and got["RECORD_DROPPED"] == 0


@pytest.mark.parametrize("board", ["five-pins", "shove-hapenny", "seven-pins", "novuss"])
def test_app_scan_allocates_nothing(board, mpy, tmp_path):
    got = run(board, mpy, tmp_path)
    assert got["STEPS"] == STEPS
    # Buttons: presses, a long press, debounced levels; one line stuck then freed, one chattering.
    assert got["PRESS"] > 0 and got["LONG"] > 0 and got["LINE"] > 0
    assert got["STUCK"] >= 1 and got["CHATTER"] >= 1 and got["HEALTHY"] >= 2
    passages = STEPS // 200 + STEPS // 800  # one each second, one long every 4 s
    if board in ("seven-pins", "novuss"):
        # Pocket beams: every passage counted once, the 3 ms flickers never.
        assert got["POCKET"] == passages
    else:
        assert got["POCKET"] == 0
    if board == "novuss":
        # Colour: the reading of the passage tells black, red and the striker (bare wood); the
        # 100 ms passages are the striker by their length.
        assert got["POCKET_BLACK"] > 0 and got["POCKET_RED"] > 0 and got["POCKET_BALL"] == 0
        assert got["POCKET_STRIKER"] > STEPS // 800
    elif board == "seven-pins":
        assert got["POCKET_BALL"] == passages  # no colour sensors: object balls
    if board in ("five-pins", "seven-pins"):
        assert got["PIN_DOWN"] > 0 and got["SHOT"] > 0
        # Falls that happened while no scan ran: only the edge callback saw them (FP-19).
        assert got["EDGE_ONLY_PIN_DOWN"] > 0
        assert got["PEG"] == 0
    elif board == "shove-hapenny":
        assert got["PEG"] > 0
        assert got["PIN_DOWN"] == 0 and got["SHOT"] == 0
    assert got["DROPPED"] == 0
    assert got["GARBAGE"] == 0
    events = sum(got[k] for k in ("PRESS", "LONG", "LINE", "PIN_DOWN", "SHOT", "PEG", "FAULT",
                                  "POCKET"))
    report_micropython("App.scan ticks of the %s board under heap_lock (%d events)"
                       % (board, events), STEPS)
