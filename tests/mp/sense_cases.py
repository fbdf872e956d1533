# Checks of scoreboard.sense that run unchanged on CPython (tests/test_sense.py) and on the
# MicroPython unix port (tests/mp/sense_check.py). Plain asserts, % formatting, no pytest.

from scoreboard.sense import (
    CHATTER,
    FAULT,
    HEALTHY,
    LINE,
    LONG,
    PEG,
    PIN_DOWN,
    PRESS,
    SHOT,
    SHOT_CLOSED,
    SHOT_SETTLED,
    STUCK,
    Buttons,
    EventRing,
    LineHealth,
    PegGrid,
    TiltLatch,
    kind_name,
    peg_id,
    peg_where,
    pins_text,
)

WRAP = 1 << 30


def of(events, kind):
    return [e for e in events if e[0] == kind]


def check(cond, what, got=None):
    if not cond:
        raise AssertionError("%s (got %r)" % (what, got))


def scan(dev, t0, t1, raw_at, step=10):
    """tick dev every `step` ms over [t0, t1) with raw_at(t); returns the last t + step."""
    t = t0
    while t < t1:
        dev.tick(t, raw_at(t))
        t += step
    return t


def on_between(a, b, bit=0):
    return lambda t: (1 << bit) if a <= t < b else 0


# -- event ring ----------------------------------------------------------------------------
def ring_overflow_counted():
    r = EventRing(4)
    for i in range(6):
        r.push(PEG, i, 1, 100 + i)
    check(len(r) == 4 and r.dropped == 2, "4 kept, 2 dropped", (len(r), r.dropped))
    buf = [0, 0, 0, 0]
    check(r.peek_into(buf, 3) and buf[1] == 3, "peek the 4th", buf)
    check(r.pop_into(buf) and buf == [PEG, 0, 1, 100], "oldest first (newest dropped)", buf)
    rest = r.drain()
    check([e[1] for e in rest] == [1, 2, 3], "drain the rest in order", rest)
    check(not r.pop_into(buf) and len(r) == 0, "empty ring pops nothing")
    check(r.push(LINE, 0, 1, 5), "room again after draining")
    check(kind_name(SHOT) == "shot" and kind_name(99) == "?", "kind names")


# -- buttons -------------------------------------------------------------------------------
def button_bounce_ignored():
    b = Buttons(2, debounce_ms=20, long_ms=500)
    # press at 100 with contact bounce for 12 ms, release at 300 with bounce for 10 ms
    bounce = {102: 0, 104: 1, 106: 0, 110: 1, 302: 1, 306: 1}
    t = 0
    while t < 400:
        raw = 1 if 100 <= t < 300 else 0
        raw = bounce.get(t, raw)
        b.tick(t, raw)
        t += 2
    ev = b.ring.drain()
    check(
        ev == [(LINE, 0, 1, 100), (LINE, 0, 0, 300), (PRESS, 0, 200, 300)],
        "one press, bounce ignored",
        ev,
    )


def button_short_vs_long_press():
    b = Buttons(2, debounce_ms=20, long_ms=500)
    scan(
        b, 0, 2000, lambda t: (1 if 100 <= t < 599 else 0) | (2 if 1000 <= t < 1800 else 0), step=1
    )
    ev = b.ring.drain()
    check(of(ev, PRESS) == [(PRESS, 0, 499, 599)], "held 499 ms: a PRESS", ev)
    check(of(ev, LONG) == [(LONG, 1, 500, 1500)], "held past long_ms: one LONG", ev)
    check(not [e for e in of(ev, PRESS) if e[1] == 1], "no PRESS after a LONG", ev)
    check(b.state() == 0, "all released")


def button_change_during_lockout_taken_after():
    # (min_press_ms=0: every debounced press counts; tests/mp/sense_table.py has the default)
    b = Buttons(1, debounce_ms=20, long_ms=0, min_press_ms=0)
    # a tap of 8 ms: the release falls inside the lock-out and is taken when it ends
    scan(b, 0, 100, on_between(10, 18), step=2)
    ev = b.ring.drain()
    check(ev == [(LINE, 0, 1, 10), (LINE, 0, 0, 30), (PRESS, 0, 20, 30)], "tap seen", ev)


def button_muted_line_silent():
    b = Buttons(2, debounce_ms=20, long_ms=300)
    b.mute = 1
    scan(b, 0, 1000, lambda t: 1 if 100 <= t < 800 else 0)
    check(b.ring.drain() == [], "a muted (faulty) line sends nothing")
    b.mute = 0
    scan(b, 1000, 1200, on_between(1050, 1100, 1))
    check(of(b.ring.drain(), PRESS) == [(PRESS, 1, 50, 1100)], "other lines still work")


# -- tilt latch ----------------------------------------------------------------------------
def latch(**kw):
    args = {"count": 5, "min_fall_ms": 50, "settle_ms": 1000}
    args.update(kw)
    return TiltLatch(**args)


def tilt_fall_and_return_counts():
    # FP-19: pin '1' leaves the table for 100 ms and stands again: it still counts.
    p = latch()
    scan(p, 0, 3000, on_between(100, 200, 0))
    ev = p.ring.drain()
    check(of(ev, PIN_DOWN) == [(PIN_DOWN, 0, 100, 150)], "latched after min_fall_ms", ev)
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 1, 1200)], "SHOT after settle, pin 1", ev)
    check(pins_text(1 | 16) == "1C", "mask names")


def tilt_wobble_does_not_count():
    # FP-21: 30 ms off its base is a wobble, not a fall; the window still opens and closes.
    p = latch()
    scan(p, 0, 3000, on_between(100, 130, 4))
    ev = p.ring.drain()
    check(ev == [(SHOT, SHOT_SETTLED, 0, 1130)], "no PIN_DOWN, empty SHOT", ev)


def tilt_stays_latched_after_standing():
    # FP-19: latched for the whole window, however often it stands and falls again.
    p = latch()
    raw = lambda t: 1 if (100 <= t < 200 or 400 <= t < 500) else 0  # noqa: E731
    scan(p, 0, 600, raw)
    check(p.latched() == 1 and p.is_open(), "still latched while the window is open")
    scan(p, 600, 3000, raw)
    ev = p.ring.drain()
    check(len(of(ev, PIN_DOWN)) == 1 and of(ev, SHOT)[0][2] == 1, "one PIN_DOWN, mask 1", ev)


def tilt_window_closes_after_settle():
    # Settle counts from the last movement of any pin, wobbles included.
    p = latch()
    scan(p, 0, 1710, lambda t: (1 if 100 <= t < 200 else 0) | (2 if 700 <= t < 720 else 0))
    check(p.is_open() and of(p.ring.drain(), SHOT) == [], "still open 990 ms after 720")
    scan(p, 1710, 1800, lambda t: 0)
    ev = p.ring.drain()
    check(ev == [(SHOT, SHOT_SETTLED, 1, 1720)] and not p.is_open(), "closed at 720+1000", ev)


def tilt_window_closes_on_close():
    # A button closes the window at once (the referee calls the shot).
    p = latch(settle_ms=5000)
    scan(p, 0, 400, lambda t: (1 if t >= 100 else 0) | (8 if 120 <= t < 140 else 0))
    check(p.is_open(), "open while pins move")
    mask = p.close(400)
    ev = p.ring.drain()
    check(mask == 1 and ev[-1] == (SHOT, SHOT_CLOSED, 1, 400), "SHOT_CLOSED with pin 1", ev)
    check(p.close(410) == -1 and not p.is_open(), "no window: close() returns -1")


def tilt_close_mid_fall_counts_long_enough():
    p = latch(settle_ms=5000)
    scan(p, 0, 150, on_between(100, 1000, 2))  # last scan at 140: off for 40 ms
    check(p.latched() == 0, "not yet")
    check(p.close(160) == 4, "off 60 ms at close: counts")
    ev = p.ring.drain()
    check(ev == [(PIN_DOWN, 2, 100, 160), (SHOT, SHOT_CLOSED, 4, 160)], "events", ev)


def tilt_irq_short_fall_counts():
    # FP-19: a fall and return between two slow scans, seen only by the edge interrupt.
    p = latch()
    p.tick(0, 0)
    p.note_edge(2, 20, 1)
    p.note_edge(2, 90, 0)
    p.tick(200, 0)
    ev = p.ring.drain()
    check(ev == [(PIN_DOWN, 2, 20, 200)], "latched from the IRQ's times", ev)
    check(p.is_open(), "the movement opened the window")
    # the same scans without the interrupt see nothing
    q = latch()
    q.tick(0, 0)
    q.tick(200, 0)
    check(q.ring.drain() == [] and not q.is_open(), "scans alone miss it")


def tilt_irq_wobbles_between_scans_do_not_count():
    # FP-21: three short rocks inside one long scan gap are wobbles, not one long fall.
    p = latch()
    p.tick(0, 0)
    for t0 in (20, 60, 100, 140):
        p.note_edge(1, t0, 1)
        p.note_edge(1, t0 + 10, 0)
    p.tick(200, 0)
    check(p.ring.drain() == [] and p.is_open(), "movement, no fall")


def tilt_irq_start_time_used_when_still_off():
    # The IRQ saw pin '2' leave at 10; the scan at 40 sees it off: the run starts at 10.
    p = latch()
    p.tick(0, 0)
    p.note_edge(1, 10, 1)
    scan(p, 40, 200, lambda t: 2)
    ev = p.ring.drain()
    check(of(ev, PIN_DOWN) == [(PIN_DOWN, 1, 10, 60)], "latched at 60 (scans alone: 90)", ev)


def tilt_irq_edge_just_after_scan_read():
    # The pin leaves at 10, after the scan of t=10 read the lines: that scan takes the edge
    # (movement), the next sees the pin off and still starts the run at 10.
    p = latch()
    p.tick(0, 0)
    p.note_edge(1, 10, 1)
    p.tick(10, 0)
    scan(p, 20, 200, lambda t: 2)
    ev = p.ring.drain()
    check(of(ev, PIN_DOWN) == [(PIN_DOWN, 1, 10, 60)], "run starts at the edge", ev)


def tilt_irq_without_level_toggles():
    p = latch()
    p.tick(0, 0)
    p.note_edge(3, 20)
    p.note_edge(3, 90)
    p.tick(200, 0)
    check(p.ring.drain() == [(PIN_DOWN, 3, 20, 200)], "level-less edges: 70 ms run counts")
    p.close(205)
    p.ring.drain()
    scan(p, 210, 400, lambda t: 0)
    p.note_edge(3, 410)
    p.note_edge(3, 420)
    p.tick(430, 0)
    check(p.ring.drain() == [] and p.is_open(), "a 10 ms level-less wobble does not")


def tilt_removed_pin_ignored():
    # FP-23: a pin removed from its spot never counts and its line opens no window.
    p = latch()
    p.set_removed(16)
    scan(p, 0, 2000, on_between(100, 600, 4))
    check(p.ring.drain() == [] and not p.is_open(), "removed 'C': nothing")
    scan(p, 2000, 2100, lambda t: 16)  # lying where it was put
    p.set_removed(0)  # spot free again, set up lying: adopted, not a fall
    scan(p, 2100, 3000, lambda t: 16 if t < 2500 else 0)
    check(p.ring.drain() == [] and not p.is_open(), "put back: still nothing")
    scan(p, 3000, 5000, on_between(3100, 3300, 4))
    check(of(p.ring.drain(), SHOT) == [(SHOT, SHOT_SETTLED, 16, 4300)], "counts again")


def tilt_removed_while_latched_leaves_mask():
    p = latch()
    scan(p, 0, 300, lambda t: 1 | 2 if t >= 100 else 0)
    p.set_removed(2)
    scan(p, 300, 2000, lambda t: 3)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 1, 1100)], "removed pin left the mask", ev)


def tilt_lying_pin_not_counted_twice():
    # A pin lying from the last shot does not count in the next; set up again, it can.
    p = latch()
    scan(p, 0, 1500, lambda t: 1 if t >= 100 else 0)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 1, 1100)], "first shot", ev)
    scan(p, 1500, 3500, lambda t: 1 | (2 if 2000 <= t < 2100 else 0))
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 2, 3100)], "second shot: only pin 2", ev)
    scan(p, 3500, 5000, lambda t: 1 if t < 4000 else 0)  # the referee stands pin 1 up
    check(p.ring.drain() == [] and not p.is_open(), "standing a pin up opens no window")
    scan(p, 5000, 7000, on_between(5100, 5200, 0))
    check(of(p.ring.drain(), SHOT) == [(SHOT, SHOT_SETTLED, 1, 6200)], "falls again: counts")


def tilt_lying_at_boot_not_counted():
    p = latch()
    scan(p, 0, 3000, lambda t: 4)
    check(p.ring.drain() == [] and not p.is_open(), "lying at the first scan: no fall")


def tilt_explicit_open_without_auto():
    p = latch(auto_open=False)
    scan(p, 0, 500, on_between(100, 1000, 0))  # pin 1 off before the shot
    check(p.ring.drain() == [] and not p.is_open(), "no window without open()")
    check(p.open(500) and not p.open(505), "open once")
    scan(p, 500, 2500, lambda t: (1 if t < 1000 else 0) | (4 if 600 <= t < 700 else 0))
    ev = p.ring.drain()
    # pin 1 put back at 1000 is movement too: the window settles 1000 ms after it
    check(
        ev == [(PIN_DOWN, 2, 600, 650), (SHOT, SHOT_SETTLED, 4, 2000)],
        "only the pin that fell after open()",
        ev,
    )


def tilt_time_wraps():
    # t_ms wraps at 2**30 like the ESP32's ticks_ms(): intervals still measure right.
    p = latch()
    base = WRAP - 100
    scan(p, base, base + 3000, lambda t: 1 if base + 50 <= t < base + 200 else 0)
    ev = p.ring.drain()
    check(of(ev, PIN_DOWN) == [(PIN_DOWN, 0, base + 50, 0)], "fall across the wrap", ev)
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 1, 1100)], "settle across the wrap", ev)


def tilt_irq_lying_pin_noise_never_counts():
    # A pin lying on the cloth whose switch rattles, or that the referee stands up, is not a
    # new fall (only a pin seen standing by a scan can fall again).
    p = latch()
    p.tick(0, 0)
    p.note_edge(0, 100, 1)
    scan(p, 110, 1500, lambda t: 1)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_SETTLED, 1, 1110)], "first shot: pin 1 down", ev)
    scan(p, 1500, 1600, lambda t: 1)
    for t0 in (1610, 1700, 1800):  # rattling: 'stands' 5 ms, 'off' 80 ms, between scans
        p.note_edge(0, t0, 0)
        p.note_edge(0, t0 + 5, 1)
    p.tick(1900, 1)
    check(p.ring.drain() == [] and not p.is_open(), "rattle while lying: nothing")
    p.note_edge(0, 2000, 0)  # the referee stands it up: the old run ends, 1900 ms long
    scan(p, 2010, 4000, lambda t: 0)
    check(p.ring.drain() == [] and not p.is_open(), "set up: no window, no fall")


# -- peg grid ------------------------------------------------------------------------------
def pegs_debounced():
    # SH-2: 54 holes, two 27-bit sides; a hole must hold its new reading for debounce_ms.
    g = PegGrid(debounce_ms=100)
    b21 = 1 << 3  # bed 2, hole 1
    b93 = 1 << 26  # bed 9, hole 3

    def raw(t):
        s0 = b21 if t >= 0 else 0
        if 20 <= t < 70:
            s0 |= 1 << 5  # a brush on bed 2 hole 3 for 50 ms: ignored
        if t >= 200 and not 240 <= t < 250:
            s0 |= 1 << 6  # bed 3 hole 1, one flicker: its wait restarts at 250
        return s0

    t = 0
    while t < 600:
        g.tick(t, raw(t), b93 if t >= 300 else 0)
        t += 10
    ev = g.ring.drain()
    check(ev == [(PEG, 3, 1, 100), (PEG, 6, 1, 350), (PEG, 53, 1, 400)], "stable changes", ev)
    check(peg_id(1, 9, 3) == 53 and peg_where(53) == (1, 9, 3), "ids")
    check(g.side_bits(0) == b21 | (1 << 6) and g.side_bits(1) == b93, "stable bitmaps")
    check(g.count(0, 2) == 1 and g.count(1, 9) == 1 and g.count(0, 1) == 0, "counts")
    check(g.beds(0) == [0, 1, 1, 0, 0, 0, 0, 0, 0], "beds", g.beds(0))
    while t < 800:  # bed 2's peg pulled
        g.tick(t, 1 << 6, b93)
        t += 10
    check(g.ring.drain() == [(PEG, 3, 0, 700)], "peg pulled")


# -- line health ---------------------------------------------------------------------------
def health_stuck_reported_and_cleared():
    h = LineHealth(3, stuck_ms=1000, chatter_edges=4, chatter_window_ms=200, base=10)
    scan(h, 0, 3000, lambda t: (1 if t < 1500 else 0) | (4 if 2000 <= t < 2100 else 0))
    ev = h.ring.drain()
    check(ev == [(FAULT, 10, STUCK, 1000), (FAULT, 10, HEALTHY, 1500)], "stuck, then ok", ev)
    check(h.faulty == 0 and h.edge_count(1) == 0 and h.edge_count(2) == 2, "audit counts")


def health_chatter_reported_and_cleared():
    h = LineHealth(3, stuck_ms=1000, chatter_edges=4, chatter_window_ms=200)

    def raw(t):
        v = 0
        if t < 100 and (t // 10) % 2:
            v |= 2  # line 1 toggles every 10 ms for 100 ms
        if 50 <= t < 150:
            v |= 4  # line 2: a normal press
        return v

    t = 0
    while t < 160:
        h.tick(t, raw(t))
        t += 10
    check(h.faulty == 2 and h.status(1) == CHATTER, "line 1 chattering", h.faulty)
    while t < 400:
        h.tick(t, raw(t))
        t += 10
    ev = h.ring.drain()
    check(ev == [(FAULT, 1, CHATTER, 50), (FAULT, 1, HEALTHY, 300)], "chatter then ok", ev)
    check(h.faulty == 0, "healthy")


def health_mutes_stuck_button():
    # Play goes on from the other buttons while one is stuck.
    ring = EventRing(32)
    b = Buttons(2, debounce_ms=20, long_ms=0, ring=ring)
    h = LineHealth(2, stuck_ms=500, ring=ring)
    t = 0
    while t < 2000:
        raw = 1 | (2 if 1000 <= t < 1100 else 0)
        h.tick(t, raw)
        b.mute = h.faulty
        b.tick(t, raw)
        t += 10
    b.tick(t, 0)  # the stuck button comes free
    ev = ring.drain()
    check(of(ev, PRESS) == [(PRESS, 1, 100, 1100)], "only the good button's press", ev)
    check(of(ev, FAULT) == [(FAULT, 0, STUCK, 500)], "stuck reported", ev)


CASES = [
    ("ring_overflow_counted", ring_overflow_counted),
    ("button_bounce_ignored", button_bounce_ignored),
    ("button_short_vs_long_press", button_short_vs_long_press),
    ("button_change_during_lockout_taken_after", button_change_during_lockout_taken_after),
    ("button_muted_line_silent", button_muted_line_silent),
    ("tilt_fall_and_return_counts", tilt_fall_and_return_counts),
    ("tilt_wobble_does_not_count", tilt_wobble_does_not_count),
    ("tilt_stays_latched_after_standing", tilt_stays_latched_after_standing),
    ("tilt_window_closes_after_settle", tilt_window_closes_after_settle),
    ("tilt_window_closes_on_close", tilt_window_closes_on_close),
    ("tilt_close_mid_fall_counts_long_enough", tilt_close_mid_fall_counts_long_enough),
    ("tilt_irq_short_fall_counts", tilt_irq_short_fall_counts),
    ("tilt_irq_wobbles_between_scans_do_not_count", tilt_irq_wobbles_between_scans_do_not_count),
    ("tilt_irq_start_time_used_when_still_off", tilt_irq_start_time_used_when_still_off),
    ("tilt_irq_edge_just_after_scan_read", tilt_irq_edge_just_after_scan_read),
    ("tilt_irq_without_level_toggles", tilt_irq_without_level_toggles),
    ("tilt_irq_lying_pin_noise_never_counts", tilt_irq_lying_pin_noise_never_counts),
    ("tilt_removed_pin_ignored", tilt_removed_pin_ignored),
    ("tilt_removed_while_latched_leaves_mask", tilt_removed_while_latched_leaves_mask),
    ("tilt_lying_pin_not_counted_twice", tilt_lying_pin_not_counted_twice),
    ("tilt_lying_at_boot_not_counted", tilt_lying_at_boot_not_counted),
    ("tilt_explicit_open_without_auto", tilt_explicit_open_without_auto),
    ("tilt_time_wraps", tilt_time_wraps),
    ("pegs_debounced", pegs_debounced),
    ("health_stuck_reported_and_cleared", health_stuck_reported_and_cleared),
    ("health_chatter_reported_and_cleared", health_chatter_reported_and_cleared),
    ("health_mutes_stuck_button", health_mutes_stuck_button),
]
