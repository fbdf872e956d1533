# Checks of the scorepad's keypad (sense.Keypad, hal.keypad over the simulated matrix) that run
# unchanged on CPython (tests/test_keypad.py) and on the MicroPython unix port (run_cases()).
# Plain asserts, % formatting, no pytest.

from scoreboard.hal.keypad import Keypad as Matrix
from scoreboard.hal.simkeys import KeyMatrix
from scoreboard.sense import FAULT, HEALTHY, KEY, STUCK, EventRing, Keypad

WRAP = 1 << 30


def check(cond, what, got=None):
    if not cond:
        raise AssertionError("%s (got %r)" % (what, got))


def run(pad, t0, t1, down_at, step=5):
    """Scan every `step` ms from t0 to t1; down_at(t) -> bitmap of keys down. Returns events."""
    ring = pad.ring
    out = []
    buf = [0, 0, 0, 0]
    t = t0
    while t < t1:
        pad.tick(t % WRAP, down_at(t))
        while ring.pop_into(buf):
            out.append((buf[0], buf[1], buf[2], buf[3]))
        t += step
    return out


def keys(events):
    return [e[1] for e in events if e[0] == KEY]


def case_one_press_one_key():
    pad = Keypad(16, 20, 0, EventRing(16))
    ev = run(pad, 0, 1000, lambda t: 1 << 5 if 100 <= t < 400 else 0)
    check(keys(ev) == [5], "a key held 300 ms gives one KEY", ev)
    check(ev[0][3] == 120, "KEY once the key was down for debounce_ms", ev)


def case_bounce_is_one_press():
    # Contact bounce on press and release: still one KEY.
    def down(t):
        if 100 <= t < 115:
            return 1 << 3 if (t // 5) % 2 else 0
        if 115 <= t < 300:
            return 1 << 3
        if 300 <= t < 315:
            return 1 << 3 if (t // 5) % 2 else 0
        return 0
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 1000, down)) == [3], "bounce gives one KEY")


def case_short_glitch_is_nothing():
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 500, lambda t: 1 if 100 <= t < 110 else 0)) == [],
          "10 ms glitch is no press")


def case_held_key_does_not_repeat():
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 20000, lambda t: 1 << 14 if t >= 100 else 0)) == [14],
          "a key held 20 s acts once")


def case_second_key_while_held_is_ignored():
    # 1 held, 2 pressed and released meanwhile, then 1 released: only 1 acted; the next clean
    # press of 2 acts.
    def down(t):
        v = 0
        if 100 <= t < 800:
            v |= 1
        if 300 <= t < 500:
            v |= 2
        if 1000 <= t < 1200:
            v |= 2
        return v
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 1500, down)) == [0, 1], "one key at a time")
    check(pad.ignored >= 1, "the chord was counted", pad.ignored)


def case_release_of_first_does_not_press_second():
    # 1 down, 2 joins, 1 let go while 2 is held: 2 never acts (it never went down alone on an
    # idle pad).
    def down(t):
        v = 0
        if 100 <= t < 400:
            v |= 1
        if 300 <= t < 700:
            v |= 2
        return v
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 1000, down)) == [0], "rolled-over key ignored")


def case_chord_pressed_together_never_acts():
    pad = Keypad(16, 20, 0, EventRing(16))
    check(keys(run(pad, 0, 1000, lambda t: 0b101 if 100 <= t < 400 else 0)) == [],
          "two keys at once: nothing")


def case_matrix_scan_reads_each_key():
    m = KeyMatrix(4, 4)
    pad = Matrix(m.rows, m.cols)
    check(pad.scan() == 0, "idle pad reads nothing")
    for k in range(16):
        m.down = 1 << k
        check(pad.scan() == 1 << k, "key %d read alone" % k, pad.scan())
    m.down = (1 << 0) | (1 << 5)  # two keys in different rows and columns: no ghost
    check(pad.scan() == (1 << 0) | (1 << 5), "two keys, no ghost", pad.scan())


def case_matrix_ghost_is_never_a_press():
    # Keys 1 (r0c0), 2 (r0c1) and 4 (r1c0) down: the matrix shows 5 (r1c1) too.
    m = KeyMatrix(4, 4)
    scan = Matrix(m.rows, m.cols)
    m.down = (1 << 0) | (1 << 1) | (1 << 4)
    check(scan.scan() == (1 << 0) | (1 << 1) | (1 << 4) | (1 << 5), "the ghost appears",
          scan.scan())
    pad = Keypad(16, 20, 0, EventRing(16))
    # The three keys go down one after another, 30 ms apart, then up together.

    def down(t):
        v = 0
        if 100 <= t < 600:
            v |= 1 << 0
        if 130 <= t < 600:
            v |= 1 << 1
        if 160 <= t < 600:
            v |= 1 << 4
        m.down = v
        return scan.scan()
    check(keys(run(pad, 0, 1000, down)) == [0], "only the first key acted, no ghost")


def case_stuck_key_reported_and_cleared():
    pad = Keypad(16, 20, 3000, EventRing(16))
    ev = run(pad, 0, 6000, lambda t: 1 << 9 if 100 <= t < 5000 else 0)
    faults = [(e[1], e[2]) for e in ev if e[0] == FAULT]
    check(keys(ev) == [9], "the press acted", ev)
    check(faults == [(9, STUCK), (9, HEALTHY)], "stuck then healthy", faults)


def case_wraps_with_the_clock():
    pad = Keypad(16, 20, 0, EventRing(16))
    t0 = WRAP - 200
    ev = run(pad, t0, t0 + 600, lambda t: 1 << 2 if t0 + 190 <= t < t0 + 400 else 0)
    check(keys(ev) == [2], "press across the wrap", ev)


CASES = [(name[5:], f) for name, f in sorted(globals().items()) if name.startswith("case_")]


def run_cases():
    failed = 0
    for name, f in CASES:
        try:
            f()
            print("PASS", name)
        except Exception as e:  # noqa: BLE001 - report and go on
            failed += 1
            print("FAIL", name, e)
    print("SUMMARY passed=%d failed=%d" % (len(CASES) - failed, failed))
