# More checks of scoreboard.sense, run like sense_cases (CPython: tests/test_sense.py; the
# MicroPython unix port: tests/mp/sense_check.py): input as it comes at a pub table, contact
# bounce on every edge and spikes on long wires. A module of its own, so that each compiles in
# a small heap.

from scoreboard.sense import CHATTER, FAULT, LINE, PRESS, Buttons, LineHealth


def of(events, kind):
    return [e for e in events if e[0] == kind]


def check(cond, what, got=None):
    if not cond:
        raise AssertionError("%s (got %r)" % (what, got))


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


CASES = [
    ("button_glitch_shorter_than_min_press_is_no_press",
     button_glitch_shorter_than_min_press_is_no_press),
    ("health_bounce_is_not_chatter", health_bounce_is_not_chatter),
]
