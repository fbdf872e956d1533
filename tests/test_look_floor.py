"""While only a timer of the sensing layer runs (a bounce, a press not yet confirmed, a pin's
fall, a shot window settling), the loop sleeps until the next moment one can end, but never
less than 20 ms (App.rest_ms, docs/sensing.md): ends close together are judged at one look.
A later look changes when an event is sent, never what it is: presses and falls with contact
bounce, judged at the loop's own pace, give the same input events, and the same game, as when
the lines are looked at every scan period; a line's change and a press keep their own times, a
timer's own event (a pin down, a shot settled) carries the look's (within a look of it)."""

from pathlib import Path

import pytest

from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, VirtualClock
from scoreboard.sense import LINE, PRESS

ROOT = Path(__file__).resolve().parent.parent
CFG = ROOT / "firmware" / "boards" / "five-pins.json"
SCAN_MS = 5
LOOK_MS = 20  # app._LOOK_MS
END_MS = 6000


def script():
    """(time ms, line, level): the break, then two shots (pins falling with bounce, confirm
    pressed with bounce on make and break) and a quick press between them."""
    changes = []

    def press(at, line, hold=120):
        for dt, v in ((0, 1), (2, 0), (4, 1), (hold, 0), (hold + 3, 1), (hold + 6, 0)):
            changes.append((at + dt, "btn." + line, v))

    def fall(at, pin, lie=400):
        for dt, v in ((0, 1), (3, 0), (6, 1), (lie, 0)):
            changes.append((at + dt, "pin." + pin, v))

    press(200, "break")
    fall(700, "1")
    fall(712, "3", lie=500)
    press(2900, "confirm")
    press(3300, "carom3", hold=35)
    fall(3600, "C", lie=300)
    press(5200, "confirm")
    return sorted(changes)


def play(tmp_path, paced):
    flash = tmp_path / ("paced" if paced else "scanned")
    flash.mkdir()
    clock = VirtualClock()
    board = SimBoard(str(CFG), str(flash), clock)
    app = App(board)
    app.emit = lambda typ, payload: None
    app.boot()
    app.start_sampling()
    seen = []
    on_event = app.on_event

    def noted(kind, ident, value, t):
        seen.append((kind, ident, value, t))
        on_event(kind, ident, value, t)

    app.on_event = noted
    naps = []
    todo = script()
    start = clock.ticks_ms()

    def now():
        return clock.ticks_diff(clock.ticks_ms(), start)

    while now() < END_MS:
        nap = app.rest_ms() if paced else SCAN_MS
        if paced:
            naps.append(nap)
        look = now() + nap
        # The changes before the next look come in on their edges (each ends the sleep, as the
        # edge handler's flag does on the board): the loop looks at once after one.
        woken = False
        while todo and todo[0][0] <= look:
            at, line, v = todo.pop(0)
            clock.advance(at - now())
            board.set_line(line, v, clock.ticks_ms())
            woken = True
        if not woken:
            clock.advance(look - now())
        app.tick()
        while app._drawing is not None:
            app.tick()  # the screen's parts, a pass each, at once
    return seen, (app.journal.last_seq(), app.game.state()), naps


def test_a_later_look_changes_when_an_event_is_sent_never_what_it_is(tmp_path):
    scanned, scanned_seq, _ = play(tmp_path, paced=False)
    paced, paced_seq, naps = play(tmp_path, paced=True)
    assert len(scanned) >= 15, scanned  # the lines' changes, the presses, the falls, the shots
    assert [e[:3] for e in paced] == [e[:3] for e in scanned]
    for (kind, _, _, t), (_, _, _, was) in zip(paced, scanned):
        if kind in (LINE, PRESS):
            assert t == was, (paced, scanned)  # at its own time, whenever the look came
        else:
            assert abs(t - was) <= LOOK_MS + SCAN_MS, (paced, scanned)
    assert paced_seq == scanned_seq and scanned_seq[0] >= 3  # the same actions, the same game
    # The loop slept between its looks, never less than LOOK_MS while a timer ran, and far
    # fewer looks than a scan period's.
    timers = [n for n in naps if n not in (0, 50, 1000)]
    assert timers and min(timers) >= LOOK_MS, sorted(set(naps))
    assert len(naps) < END_MS // SCAN_MS // 4, len(naps)


@pytest.mark.parametrize("gone", [0, 1, 17, 19, 20, 21, 39])
def test_the_next_look_is_at_the_next_end_or_twenty_ms_on(tmp_path, gone):
    clock = VirtualClock()
    app = App(SimBoard(str(CFG), str(tmp_path), clock))
    app.emit = lambda typ, payload: None
    app.boot()
    app.start_sampling()
    i = app.board.lines.index("btn.confirm")
    app.board.lines.set(i, 1, clock.ticks_ms())  # pressed: its bounce and min press run
    app.tick()
    while app.rest_ms() == 0:
        app.tick()
    clock.advance(gone)
    app.tick()
    while app.rest_ms() == 0:
        app.tick()
    gone = clock.ticks_diff(clock.ticks_ms(), app._s_change)
    nxt = min(e for e in app._ends if e >= gone) - gone + 1
    assert app.rest_ms() == max(nxt, LOOK_MS)
