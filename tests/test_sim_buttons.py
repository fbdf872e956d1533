"""Long presses on the simulated board act when the button is let go, so a button that jams
(reported stuck after stuck_ms) never acts: a jammed undo or done button must not undo a score.
"""

import pytest

from chalk.sim import run_virtual
from chalk.traces import Trace
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


def five_pins_opening():
    tr = Trace(seed=3)
    tr.wait(300)
    tr.press("confirm")  # P1 breaks
    tr.wait(1000)
    tr.pin_fall("C", tr.t, 1500)  # the centre pin alone: 8 (FP-9)
    tr.wait(4500)
    tr.press("confirm")
    return tr


def run(tr, tmp_path):
    p = tmp_path / "trace.jsonl"
    tr.write(p)
    actions, summary = run_virtual("five-pins", p)
    return [a["a"] for a in actions], summary


def test_a_long_press_of_confirm_undoes_when_released(tmp_path):
    tr = five_pins_opening()
    tr.long_press("confirm", hold=1500)
    kinds, summary = run(tr, tmp_path)
    assert kinds == ["break", "shot", "undo"]
    assert summary["state"]["scores"] == [0, 0] and summary["state"]["next"] == 0


def test_a_jammed_undo_button_is_reported_and_undoes_nothing(tmp_path):
    tr = five_pins_opening()
    tr.set("btn.undo", 1)  # jams: held far past long_ms and stuck_ms (60 s)
    tr.wait(70000)
    tr.set("btn.undo", 1)  # (still held: a record so the trace lasts that long)
    kinds, summary = run(tr, tmp_path)
    assert kinds == ["break", "shot"]
    assert summary["state"]["scores"] == [8, 0]
    assert "btn.undo stuck" in summary["warnings"]
    assert "!btn.undo stuck" in summary["screen"]


def test_a_jammed_button_freed_later_still_undoes_nothing(tmp_path):
    tr = five_pins_opening()
    tr.set("btn.undo", 1)
    tr.wait(65000)
    tr.set("btn.undo", 0)  # freed after it was reported stuck: its long press is dropped
    tr.wait(500)
    kinds, summary = run(tr, tmp_path)
    assert kinds == ["break", "shot"]
    assert "btn.undo stuck" not in summary["warnings"]
