# Button debouncer: up to 30 lines kept as one int bitmap (30 bits keeps it a small int on the
# ESP32, so the scan allocates nothing).
#
# Debounce as in P. Hinch's micropython-async: the first edge acts at once, then the line's
# further edges are ignored for debounce_ms. After that the line is compared again, so a level
# that changed during the lock-out is taken at the first scan after it. debounce_ms only hides
# contact bounce: a spike still gives LINE events.
#
# Minimum press (min_press_ms, default debounce_ms): a press counts only if a scan at least
# min_press_ms after it was accepted still sees the line pressed. A spike on a long wire, shorter
# than that, gives no PRESS (and no LONG). Presses act on release, so this costs no latency.
# The same holds for a release: a press ends only when a scan min_press_ms after the release
# still sees the line released; a dropout shorter than that in a held press is the same hold
# (else a long press of undo cut by a spike would be a short press and then a new one). PRESS is
# pushed then, with the release's time and the ms held up to it.
#
# Events (to the ring): LINE on every accepted change (value 0/1); PRESS on release when held
# less than long_ms (value = ms held); LONG once when held for long_ms (value = ms held). A hold
# that gave LONG gives no PRESS. long_ms = 0 turns LONG off (every press is a PRESS).

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

from .events import LINE, LONG, PRESS, EventRing, elapsed

_TMASK = const(0x3FFFFFFF)
MAX_LINES = const(30)


class Buttons:
    def __init__(self, count, debounce_ms=20, long_ms=1000, ring=None, base=0, min_press_ms=-1):
        if count < 1 or count > MAX_LINES:
            raise ValueError("buttons: count must be 1..%d, got %d" % (MAX_LINES, count))
        self.ring = ring if ring is not None else EventRing(32)
        self._all = (1 << count) - 1
        self._count = count
        self._db = debounce_ms
        self._long = long_ms
        self._min = debounce_ms if min_press_ms < 0 else min_press_ms
        self._short = 0  # held lines not yet held min_press_ms (a release now is a glitch)
        self._up = 0  # released lines whose release has not lasted min_press_ms yet
        self._rel = array("i", [0] * count)  # when each of those was released
        self._base = base  # event id = base + line
        self._state = 0  # debounced levels
        self._lock = 0  # lines waiting out their bounce
        self._edge = array("i", [0] * count)  # time of each line's last accepted edge
        self._down = array("i", [0] * count)  # time each held line was pressed
        self._done = 0  # held lines that give no PRESS on release (LONG fired, or muted)
        # Lines whose events are not sent (e.g. LineHealth.faulty): a stuck or chattering
        # button must not act, and play goes on from the others.
        self.mute = 0

    def state(self):
        """Debounced levels, bit i = line i (1 = pressed)."""
        return self._state

    def pressed(self, line):
        return (self._state >> line) & 1

    def quiet(self, raw):
        """True if ticks with these levels would do nothing until they change: no line held
        that could still give LONG, nothing waiting out its bounce or its minimum press."""
        held = self._state & ~self._done
        return ((raw & self._all) == self._state and not (self._lock | self._up | self._short)
                and not (held and self._long > 0))

    def tick(self, t, raw):
        """Feed one scan: t in ms, raw = bitmap of the lines (1 = pressed). Allocates nothing."""
        t &= _TMASK
        raw &= self._all
        lock = self._lock
        if lock:  # end the lock-out of lines whose bounce time is over
            m = lock
            i = 0
            while m:
                if m & 1 and elapsed(t, self._edge[i]) >= self._db:
                    lock ^= 1 << i
                m >>= 1
                i += 1
        state = self._state
        mute = self.mute & self._all
        up = self._up
        done = self._done | ((state | up) & mute)  # a hold muted at any moment: no PRESS / LONG
        short = self._short
        m = (raw ^ state) & ~lock
        i = 0
        while m:
            if m & 1:
                b = 1 << i
                state ^= b
                lock |= b
                self._edge[i] = t
                if not mute & b:
                    self.ring.push(LINE, self._base + i, (state >> i) & 1, t)
                if state & b:
                    if up & b:  # back before its release was confirmed: the same hold
                        up &= ~b
                        done |= mute & b
                    else:
                        self._down[i] = t
                        done = (done & ~b) | (mute & b)
                        short |= b
                elif short & b:  # let go before min_press_ms: a spike, no press
                    done &= ~b
                    short &= ~b
                else:  # a release, confirmed once it has lasted min_press_ms (below)
                    up |= b
                    self._rel[i] = t
            m >>= 1
            i += 1
        if up:  # released min_press_ms or more ago and still released: PRESS (at the release)
            m = up & ~raw
            i = 0
            while m:
                if m & 1 and elapsed(t, self._rel[i]) >= self._min:
                    b = 1 << i
                    if not done & b:
                        r = self._rel[i]
                        self.ring.push(PRESS, self._base + i, elapsed(r, self._down[i]), r)
                    done &= ~b
                    up &= ~b
                m >>= 1
                i += 1
        self._up = up
        if short:  # read pressed min_press_ms or more after the press: a real press
            m = short & raw
            i = 0
            while m:
                if m & 1 and elapsed(t, self._down[i]) >= self._min:
                    short &= ~(1 << i)
                m >>= 1
                i += 1
        self._short = short
        if self._long > 0:
            m = state & ~(done | short)
            i = 0
            while m:
                if m & 1:
                    held = elapsed(t, self._down[i])
                    if held >= self._long:
                        self.ring.push(LONG, self._base + i, held, t)
                        done |= 1 << i
                m >>= 1
                i += 1
        self._state = state
        self._lock = lock
        self._done = done
