"""A simulated board's world (its trace) applied late, as a busy machine's scheduler may wake
the thread that moves it (hal/simtimer.py), loses no press: the loop brings the world up to
now before each look at the lines (serve.py), so a change stamped with its own earlier time
never reaches the sensing layer after a look it came before; and the sensing layer's time goes
one way whatever comes late (App._drain). Before, a look at the lines between a change's time
and the late thread's wake judged the stale levels at the look's time, and the change came
after it, earlier: presses were lost, a line's bounce counted as edges, now and then a button
muted for good (a live board archived 7 of its 13 records)."""

import json
from pathlib import Path

import pytest

from chalk.traces import Trace
from tests.mpy import MP_TESTS, micropython_path, run_mp

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")


@pytest.mark.parametrize("late_ms", [150, 400])
def test_a_world_moved_late_loses_no_press(tmp_path, late_ms):
    tr = Trace(seed=9)
    tr.wait(300)
    presses = 12
    for _ in range(presses):
        tr.press("confirm", hold=100, after=80)  # with contact bounce on make and break
    tr.wait(300)
    trace = tmp_path / "trace.jsonl"
    tr.write(trace)
    flash = tmp_path / "flash"
    flash.mkdir()
    cfg = tmp_path / "board.json"
    data = json.loads((ROOT / "firmware" / "boards" / "five-pins.json").read_text())
    data["link"] = {"test_mode": True}  # every input event mirrored as an `event` frame
    cfg.write_text(json.dumps(data))
    seconds = (tr.t + 2 * late_ms + 1500) / 1000
    out = run_mp(MP_TESTS / "late_world.py", args=[cfg, flash, trace, seconds, late_ms],
                 heap="512k", timeout=180)
    r = json.loads(out.stdout.splitlines()[-1])
    assert r["applied"] == len(trace.read_text().splitlines()), r  # the whole trace played
    assert r["press"] == presses, r  # every press taken, once
    assert r["actions"] == 1 + presses, r  # the game's header; the break, then a shot a press


def test_the_sensing_layer_is_fed_in_time_order_whatever_is_noted_late(tmp_path):
    """A change noted after a later look (an edge's handler that ran after the loop's own look
    at the lines) reaches the sensing layer at the look's time, not before it."""
    from scoreboard.app import App
    from scoreboard.hal.sim import SimBoard, VirtualClock

    flash = tmp_path / "flash"
    flash.mkdir()
    clock = VirtualClock()
    app = App(SimBoard(str(ROOT / "firmware" / "boards" / "five-pins.json"), str(flash), clock))
    app.emit = lambda typ, payload: None
    app.boot()
    app.start_sampling()
    fed = []
    process = app._process
    app._process = lambda t, *a: (fed.append(t), process(t, *a))
    clock.advance(100)
    app.tick()  # the loop's look at t = 100: nothing changed
    look = clock.ticks_ms()
    i = app.board.lines.index("btn.confirm")
    app.board.lines.set(i, 1, clock.ticks_add(look, -3))  # stamped 3 ms before that look
    clock.advance(5)
    app.tick()
    assert fed and all(clock.ticks_diff(b, a) >= 0 for a, b in zip(fed, fed[1:])), fed
    assert clock.ticks_add(look, -3) not in fed[fed.index(look):], fed
