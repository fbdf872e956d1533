# Input events and the ring that carries them from sense/ to the referee.
#
# An event is four small ints: (kind, id, value, t_ms). The ring keeps them in four parallel
# preallocated arrays, so pushing and popping never allocate (design: "no allocation in the
# scan path"). Times are a millisecond counter such as time.ticks_ms(), taken modulo 2**30:
# every interval in sense/ is a wrapped difference (see elapsed()), so a board may run for
# weeks; only intervals shorter than 2**29 ms (about 6 days) are measured, and timers are
# disarmed as soon as they fire, so a stale timestamp is never compared.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

# Event kinds. The id and value of each are documented in docs/sensing.md.
PRESS = const(1)  # id = button line, value = ms held; on release, held < long_ms
LONG = const(2)  # id = button line, value = ms held (>= long_ms); once per hold
LINE = const(3)  # id = button line, value = debounced level 0/1
PIN_DOWN = const(4)  # id = pin line (0..3 = pins '1'..'4', 4 = 'C'), value = t_ms it left its base
SHOT = const(5)  # id = SHOT_SETTLED / SHOT_CLOSED, value = pin-down mask of the window
PEG = const(6)  # id = side*27 + (bed-1)*3 + (hole-1), value = 0 empty / 1 peg present
FAULT = const(7)  # id = line (+ base), value = HEALTHY / STUCK / CHATTER
KEY = const(8)  # id = keypad key (row * 4 + column), value = 1; one per press (sense/keypad.py)
POCKET = const(9)  # id = pocket (0-based), value = what passed: pockets.RED/BLACK/STRIKER/BALL

# SHOT ids: how the window closed.
SHOT_SETTLED = const(0)  # every pin still for settle_ms
SHOT_CLOSED = const(1)  # close() called (a button)

# FAULT values.
HEALTHY = const(0)
STUCK = const(1)
CHATTER = const(2)

TMASK = const(0x3FFFFFFF)  # time is taken modulo 2**30, the ESP32's ticks_ms() period
_THALF = const(0x1FFFFFFF)
_SAT = const(0x3FFFFFFF)  # counters saturate here and stay small ints

_NAMES = ("?", "press", "long", "line", "pin_down", "shot", "peg", "fault", "key", "pocket")


def kind_name(kind):
    """A kind's name for logs and traces ("press", "shot", ...); "?" if unknown."""
    if 0 < kind < len(_NAMES):
        return _NAMES[kind]
    return "?"


def elapsed(now, then):
    """ms from `then` to `now` on the wrapping 2**30 counter; 0 if `then` is after `now`."""
    d = (now - then) & TMASK
    if d > _THALF:
        return 0
    return d


def ended(now, times, off, mask, limit, firsts, k):
    """The lines of `mask` (bit i: the time times[off + i]) whose time is `limit` ms or more
    before `now`; the earliest time of the others goes to firsts[k] (left as it is when none
    remain). For LineHealth's and PegGrid's waiting lines, which call this only once their
    set's firsts[k] says one can end. Allocates nothing."""
    out = 0
    i = 0
    most = -1
    while mask:
        if mask & 1:
            e = elapsed(now, times[off + i])
            if e >= limit:
                out |= 1 << i
            elif e > most:
                most = e
                firsts[k] = times[off + i]
        mask >>= 1
        i += 1
    return out


class EventRing:
    """A fixed ring of events. Full ring: the NEWEST event is dropped and counted in `dropped`.

    Dropping the newest never overwrites an event the reader has not seen, so what the
    referee reads is always a gap-free prefix of what happened; a nonzero `dropped` tells the
    app that input was lost (it should show a fault, not guess).
    """

    def __init__(self, capacity=32):
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self._cap = capacity
        self._kind = bytearray(capacity)
        self._id = array("i", [0] * capacity)
        self._val = array("i", [0] * capacity)
        self._t = array("i", [0] * capacity)
        self._head = 0  # index of the oldest unread event
        self._n = 0  # unread events
        self.dropped = 0  # events lost to a full ring (saturates at 2**30-1)
        self.pushed = 0  # events accepted (wraps at 2**30)

    def push(self, kind, ident, value, t):
        """Append one event; False (and dropped += 1) if the ring is full. Allocates nothing."""
        n = self._n
        if n >= self._cap:
            if self.dropped < _SAT:
                self.dropped += 1
            return False
        i = (self._head + n) % self._cap
        self._kind[i] = kind
        self._id[i] = ident
        self._val[i] = value
        self._t[i] = t
        self._n = n + 1
        self.pushed = (self.pushed + 1) & TMASK
        return True

    def __len__(self):
        return self._n

    def pending(self):
        """Unread events."""
        return self._n

    def capacity(self):
        return self._cap

    def peek_into(self, buf, i=0):
        """Copy the i-th unread event (0 = oldest) into buf[0..3]; False if there is none."""
        if i < 0 or i >= self._n:
            return False
        j = (self._head + i) % self._cap
        buf[0] = self._kind[j]
        buf[1] = self._id[j]
        buf[2] = self._val[j]
        buf[3] = self._t[j]
        return True

    def pop_into(self, buf):
        """Move the oldest event into buf[0..3] (kind, id, value, t); False if empty."""
        if self._n == 0:
            return False
        j = self._head
        buf[0] = self._kind[j]
        buf[1] = self._id[j]
        buf[2] = self._val[j]
        buf[3] = self._t[j]
        j += 1
        if j >= self._cap:
            j = 0
        self._head = j
        self._n -= 1
        return True

    def clear(self):
        self._head = 0
        self._n = 0

    def drain(self):
        """All unread events as (kind, id, value, t) tuples. Allocates: not for hot code."""
        out = []
        buf = [0, 0, 0, 0]
        while self.pop_into(buf):
            out.append((buf[0], buf[1], buf[2], buf[3]))
        return out
