# Keypad: the debounced keys of a scorepad's 4x4 matrix (docs/sensing.md, docs/scorepad.md).
#
# Fed one bitmap per scan (bit i = key i down, row-major; hal.keypad.Keypad.scan() drives the rows
# and reads the columns), it sends KEY (id = key, value = 1) into the event ring when ONE key goes
# down on an idle pad and stays down for debounce_ms. One key at a time:
#   - a key held down acts once, never repeats;
#   - a second key pressed while one is held is ignored, and so is the first one's release;
#     nothing acts again until every key is up (the pad is idle);
#   - two or more keys seen at once never act. Three keys on the corners of a rectangle make the
#     matrix show a fourth, phantom key (ghosting: a matrix without diodes cannot tell); those
#     scans have several keys down, so a ghost can never be taken for a press.
# A key held for stuck_ms (a jammed or shorted key) is reported as FAULT STUCK (id = base +
# key) and HEALTHY when the pad is idle again; stuck_ms = 0 turns that off. Allocates nothing.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from .events import FAULT, HEALTHY, KEY, STUCK, EventRing, elapsed

_TMASK = const(0x3FFFFFFF)
_SAT = const(0x3FFFFFFF)


class Keypad:
    def __init__(self, keys=16, debounce_ms=20, stuck_ms=0, ring=None, base=0, fault_base=0):
        if keys < 1 or keys > 30:
            raise ValueError("keypad: keys must be 1..30, got %d" % keys)
        self.ring = ring if ring is not None else EventRing(32)
        self._all = (1 << keys) - 1
        self._db = debounce_ms
        self._stuck = stuck_ms
        self._base = base  # KEY id = base + key
        self._fbase = fault_base  # FAULT id = fault_base + key
        self._cand = 0  # the latest scan
        self._since = 0  # when the latest scan started to differ from `state`
        self.state = 0  # debounced keys down
        self._down_t = 0  # when the pad stopped being idle
        self._stuck_key = -1  # key reported stuck, until the pad is idle
        self.ignored = 0  # scans that settled on several keys (chords, ghosts), saturating
        self.presses = 0  # KEY events sent, saturating

    def quiet(self, raw):
        """True if ticks with this bitmap would do nothing until it changes: nothing being
        debounced, no key down on its way to being stuck."""
        raw &= self._all
        return (raw == self._cand and raw == self.state
                and not (raw and self._stuck > 0 and self._stuck_key < 0))

    def tick(self, t, raw):
        """Feed one scan: t in ms, raw = bitmap of the keys down. Allocates nothing."""
        t &= _TMASK
        raw &= self._all
        if raw != self._cand:
            self._cand = raw  # a change: wait for it to hold still for debounce_ms
            self._since = t
        elif raw != self.state and elapsed(t, self._since) >= self._db:
            prev = self.state
            self.state = raw
            if raw == 0:
                if self._stuck_key >= 0:
                    self.ring.push(FAULT, self._fbase + self._stuck_key, HEALTHY, t)
                    self._stuck_key = -1
            elif prev == 0:
                self._down_t = t
                if raw & (raw - 1) == 0:  # exactly one key
                    k = 0
                    while raw >> k != 1:
                        k += 1
                    self.ring.push(KEY, self._base + k, 1, t)
                    if self.presses < _SAT:
                        self.presses += 1
                elif self.ignored < _SAT:
                    self.ignored += 1
            elif self.ignored < _SAT:
                self.ignored += 1  # keys added to or dropped from a chord: never act
        st = self.state
        if (self._stuck > 0 and st and self._stuck_key < 0
                and elapsed(t, self._down_t) >= self._stuck):
            k = 0
            while not (st >> k) & 1:
                k += 1
            self._stuck_key = k
            self.ring.push(FAULT, self._fbase + k, STUCK, t)

    def idle(self):
        """True when no key is down."""
        return self.state == 0
