# More checks of scoreboard.sense, run like sense_cases (CPython: tests/test_sense.py; the
# MicroPython unix port: tests/mp/sense_check.py): input as it comes at a pub table, contact
# bounce on every edge and spikes on long wires. A module of its own, so that each compiles in
# a small heap.

from scoreboard.sense import (
    CHATTER,
    CLOSING,
    FAULT,
    LINE,
    LONG,
    PIN_DOWN,
    PRESS,
    SHOT,
    SHOT_CLOSED,
    Buttons,
    LineHealth,
    TiltLatch,
)


def of(events, kind):
    return [e for e in events if e[0] == kind]


def check(cond, what, got=None):
    if not cond:
        raise AssertionError("%s (got %r)" % (what, got))


def on_between(a, b, bit=0):
    return lambda t: (1 << bit) if a <= t < b else 0


def scan(dev, t0, t1, raw_at, step=10):
    t = t0
    while t < t1:
        dev.tick(t, raw_at(t))
        t += step
    return t


def button_glitch_shorter_than_min_press_is_no_press():
    # min_press_ms defaults to debounce_ms: spikes of 1..19 ms at every phase of a 5 ms scan
    # are no press (a spike on a long wire); 20 ms and more are.
    for width in range(1, 40):
        for phase in range(5):
            b = Buttons(1, debounce_ms=20, long_ms=500)
            t = 0
            while t < 200:
                b.tick(t, 1 if 50 + phase <= t < 50 + phase + width else 0)
                t += 1 if t < 45 else 5
            presses = of(b.ring.drain(), PRESS)
            if width < 20:
                check(presses == [], "spike of %d ms at phase %d: no press" % (width, phase),
                      presses)
            elif width >= 30:
                check(len(presses) == 1, "%d ms at phase %d: a press" % (width, phase), presses)
    b = Buttons(1, debounce_ms=10, long_ms=500, min_press_ms=40)
    scan(b, 0, 300, lambda t: 1 if 10 <= t < 40 or 100 <= t < 150 else 0, step=5)
    ev = b.ring.drain()
    check(of(ev, PRESS) == [(PRESS, 0, 50, 150)], "held 30 < 40: none; 50: one", ev)
    check(len(of(ev, LINE)) == 4, "both still seen as levels", ev)


def button_dropout_in_a_hold_is_the_same_hold():
    # A spike to "released" of 1..19 ms in a held press, at every phase of a 5 ms scan: still
    # one press (a long press stays one LONG and never becomes a PRESS and a new press).
    for width in (1, 3, 7, 12, 19):
        for phase in range(5):
            b = Buttons(1, debounce_ms=20, long_ms=500)
            d0 = 300 + phase
            scan(b, 0, 1500, lambda t, d0=d0, w=width: 1 if 100 <= t < 900 and not d0 <= t < d0 + w
                 else 0, step=5)
            ev = b.ring.drain()
            check(of(ev, LONG) == [(LONG, 0, 500, 600)] and of(ev, PRESS) == [],
                  "long press cut %d ms at %d" % (width, d0), ev)
            b = Buttons(1, debounce_ms=20, long_ms=500)
            scan(b, 0, 1000, lambda t, d0=d0, w=width: 1 if 100 <= t < 400 and not d0 <= t < d0 + w
                 else 0, step=5)
            ev = b.ring.drain()
            check(of(ev, PRESS) == [(PRESS, 0, 300, 400)], "short press cut %d ms" % width, ev)
    # A real release is one: two presses 25 ms apart are two presses.
    b = Buttons(1, debounce_ms=20, long_ms=500)
    scan(b, 0, 1000, lambda t: 1 if 100 <= t < 200 or 225 <= t < 300 else 0, step=5)
    check(of(b.ring.drain(), PRESS) == [(PRESS, 0, 100, 200), (PRESS, 0, 75, 300)], "two")


def health_bounce_is_not_chatter():
    # Five presses 300 ms apart, each edge rattling 1-5 ms (seen by 1 ms scans): 6 raw edges a
    # press, but the debouncer takes 2. Judged on those, the line is healthy ...
    bounce = (0, 2, 3, 6, 8)  # a press edge and its rattles, relative ms

    def raw(t):
        k = t % 300
        if t >= 1500 or k > 150:
            return 0
        level = 0
        for d in bounce:
            if k >= d:
                level ^= 1
        for d in bounce:
            if k >= 90 + d:
                level ^= 1
        return level

    h = LineHealth(1, stuck_ms=60000, chatter_edges=12, chatter_window_ms=1000, debounce_ms=20)
    scan(h, 0, 2000, raw, step=1)
    check(h.ring.drain() == [] and h.faulty == 0, "bouncy presses: healthy")
    check(h.edge_count(0) == 10, "the debouncer's 10 edges", h.edge_count(0))
    # ... counted raw (debounce_ms=0) it chatters, as it used to.
    h = LineHealth(1, stuck_ms=60000, chatter_edges=12, chatter_window_ms=1000)
    scan(h, 0, 2000, raw, step=1)
    check(CHATTER in [e[2] for e in of(h.ring.drain(), FAULT)], "raw: chatter")
    # A line that really toggles every 25 ms is still chattering with the lock-out.
    h = LineHealth(1, stuck_ms=60000, chatter_edges=12, chatter_window_ms=1000, debounce_ms=20)
    scan(h, 0, 1000, lambda t: (t // 25) % 2, step=5)
    check(h.status(0) == CHATTER, "a chattering line", h.faulty)



def tilt_close_waits_for_a_pin_mid_fall():
    # FP-18: pin 1 left its base 10 ms before close(); it is given the rest of min_fall_ms.
    p = TiltLatch(5, min_fall_ms=50, settle_ms=5000)
    scan(p, 0, 100, on_between(20, 80, 1), step=5)  # pin 2 fell and stood: down
    scan(p, 100, 200, on_between(190, 999, 0), step=5)
    check(p.close(200) == CLOSING and p.closing(), "close waits", p.latched())
    # pin 4 leaves after the close: not this shot's
    scan(p, 200, 300, lambda t: 1 | (8 if t >= 210 else 0), step=5)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_CLOSED, 3, 240)], "pin 1 down at 190+50", ev)
    check((PIN_DOWN, 0, 190, 240) in ev, "pin 1 from 190", ev)
    check(p.is_open() and not p.closing(), "pin 4 opened the next window")
    check(p.close(400) == 8, "pin 4 is the next shot's", p.latched())
    # A pin rocking across the close (FP-21): off 10 ms before, back 15 ms after: nothing.
    p = TiltLatch(5, min_fall_ms=50, settle_ms=5000)
    scan(p, 0, 100, on_between(20, 80, 2), step=5)
    scan(p, 100, 200, lambda t: 16 if 190 <= t < 215 else 0, step=5)
    check(p.close(200) == CLOSING, "waits for C")
    scan(p, 200, 400, lambda t: 16 if t < 215 else 0, step=5)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_CLOSED, 4, 300)], "C stood at 215: a wobble", ev)
    # The handler saw a pin leave after the last scan: waited for too.
    p = TiltLatch(5, min_fall_ms=50, settle_ms=5000)
    scan(p, 0, 100, on_between(20, 80, 1), step=5)
    p.note_edge(2, 97, 1)
    check(p.close(98) == CLOSING, "handler's pin 3 waited for")
    scan(p, 100, 200, lambda t: 4, step=5)
    ev = p.ring.drain()
    check(of(ev, SHOT) == [(SHOT, SHOT_CLOSED, 6, 150)], "pin 3 down at 97+50 (scan 150)", ev)
    check(p.close(300, wait=False) == -1, "nothing open")



def tilt_lying_pin_glitch_is_not_a_fall():
    # A pin lying on the cloth whose switch drops out for a few ms (a scan sees it standing once)
    # has not been set up again: lying on, it is no new fall (FP-19, FP-21). Set up for
    # min_fall_ms or more, it can fall again.
    for irq in (False, True):
        p = TiltLatch(5, min_fall_ms=50, settle_ms=1000)
        raw = lambda t: 0 if t < 100 or 2000 <= t < 2004 or 4000 <= t < 4060 else 1  # noqa: E731
        t = 0
        prev = 0
        while t < 6000:
            v = raw(t)
            if irq and v != prev:
                p.note_edge(0, t, v)
            prev = v
            p.tick(t, v)
            t += 1 if 1995 <= t < 2010 else 5
        ev = p.ring.drain()
        check(of(ev, PIN_DOWN) == [(PIN_DOWN, 0, 100, 150), (PIN_DOWN, 0, 4060, 4110)],
              "down at 100, not after the glitch at 2000; again after standing 60 ms", ev)


CASES = [
    ("button_glitch_shorter_than_min_press_is_no_press",
     button_glitch_shorter_than_min_press_is_no_press),
    ("button_dropout_in_a_hold_is_the_same_hold", button_dropout_in_a_hold_is_the_same_hold),
    ("health_bounce_is_not_chatter", health_bounce_is_not_chatter),
    ("tilt_close_waits_for_a_pin_mid_fall", tilt_close_waits_for_a_pin_mid_fall),
    ("tilt_lying_pin_glitch_is_not_a_fall", tilt_lying_pin_glitch_is_not_a_fall),
]
