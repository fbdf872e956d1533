# Line health: a stuck or chattering sensor is reported, and play goes on from the others
# (design, "Sensing"). Fed the same raw bitmaps as the debouncers, up to 30 lines.
#
# Edges are judged as the button debouncer takes them (debounce_ms, P. Hinch's scheme): a line's
# first edge counts at once, then its changes are ignored for debounce_ms, and a level that
# changed during that lock-out is taken at the first scan after it. So contact bounce inside the
# lock-out is never counted as chatter, while a line that really toggles faster than a hand can
# (or spikes again and again) still is. debounce_ms = 0 counts every change between scans.
#
# - stuck: active (1) continuously for stuck_ms or more -> FAULT value STUCK.
# - chatter: more than chatter_edges edges (changes between scans) within chatter_window_ms
#   (a sliding window over the line's latest edges) -> FAULT value CHATTER.
# - healthy again: a stuck line goes inactive; a chattering line has no edge for
#   chatter_window_ms -> FAULT value HEALTHY, once the line is neither stuck nor chattering.
# stuck_ms = 0 or chatter_edges = 0 turns that check off (a peg sits in its hole for hours; a
# knocked-down pin lies on the cloth until the figure is set up, so give pins a long stuck_ms).
#
# `faulty` is the bitmap of lines now stuck or chattering, for others to read: e.g.
# `buttons.mute = health.faulty`, or `tilt.set_removed(removed | health.faulty)`.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

from .events import CHATTER, FAULT, HEALTHY, STUCK, EventRing, elapsed, ended

_TMASK = const(0x3FFFFFFF)
_SAT = const(0x3FFFFFFF)


class LineHealth:
    def __init__(
        self, count, stuck_ms=0, chatter_edges=0, chatter_window_ms=1000, ring=None, base=0,
        debounce_ms=0,
    ):
        if count < 1 or count > 30:
            raise ValueError("health: count must be 1..30, got %d" % count)
        self.ring = ring if ring is not None else EventRing(32)
        self._all = (1 << count) - 1
        self._count = count
        self._stuck_ms = stuck_ms
        self._window = chatter_window_ms
        self._base = base  # FAULT id = base + line
        self._db = debounce_ms
        self._lock = 0  # lines waiting out their bounce since their last counted edge
        k = chatter_edges + 1 if chatter_edges > 0 else 0
        self._k = k  # edge times kept per line: a chatter is k edges inside the window
        self._et = array("i", [0] * max(1, count * k))  # per line, a ring of its last k edges
        self._ei = array("i", [0] * count)  # next slot in each line's ring
        self._en = array("i", [0] * count)  # edges in each ring that are inside the window
        self._last = array("i", [0] * count)  # time of each line's latest edge
        self._on = array("i", [0] * count)  # when each active line went active
        self._edges = array("i", [0] * count)  # edges ever seen (saturating), for audits
        self._lvl = 0
        self._recent = 0  # lines with an edge less than chatter_window_ms ago
        self._timing = 0  # active lines not yet stuck
        # The earliest time of each set's lines (_last of the recent and of the locked, _on of
        # the timing), or earlier: no line of a set can end before its first does, so a tick
        # skips the set's loop until then (a scan of a bouncing or held line stays cheap).
        self._firsts = array("i", [0, 0, 0])  # recent, locked, timing
        self.stuck = 0
        self.chatter = 0
        self.faulty = 0  # stuck | chatter

    def quiet(self, raw):
        """True if ticks with these levels would do nothing until they change: no edge inside
        the chatter window, no bounce, no active line on its way to being stuck."""
        return ((raw & self._all) == self._lvl and not (self._recent | self._lock)
                and not (self._timing and self._stuck_ms > 0))

    def tick(self, t, raw):
        """Feed one scan: t in ms, raw = bitmap of the lines (1 = active). No allocation."""
        t &= _TMASK
        raw &= self._all
        stuck = self.stuck
        chatter = self.chatter
        old_stuck = stuck
        old_chatter = chatter
        recent = self._recent
        last = self._last
        firsts = self._firsts
        if recent and elapsed(t, firsts[0]) >= self._window:
            # Edges older than the window forgotten; a quiet line stops chattering.
            m = ended(t, last, 0, recent, self._window, firsts, 0)
            recent &= ~m
            chatter &= ~m
            i = 0
            while m:
                if m & 1:
                    self._en[i] = 0
                m >>= 1
                i += 1
        lock = self._lock
        if lock and elapsed(t, firsts[1]) >= self._db:
            lock &= ~ended(t, last, 0, lock, self._db, firsts, 1)  # their bounce time is over
        ch = (raw ^ self._lvl) & ~lock
        raw = self._lvl ^ ch  # the debounced levels: what the checks below judge
        self._lvl = raw
        if self._db > 0 and ch:
            if not lock:
                firsts[1] = t
            lock |= ch
        self._lock = lock
        timing = self._timing
        if ch and not recent:
            firsts[0] = t
        m = ch
        i = 0
        while m:
            if m & 1:
                b = 1 << i
                if self._edges[i] < _SAT:
                    self._edges[i] += 1
                last[i] = t
                recent |= b
                if raw & b:
                    if not timing:
                        firsts[2] = t
                    self._on[i] = t
                    timing |= b
                else:
                    timing &= ~b
                    stuck &= ~b
                if self._k and self._chatters(i, t):
                    chatter |= b
            m >>= 1
            i += 1
        if self._stuck_ms > 0 and timing and elapsed(t, firsts[2]) >= self._stuck_ms:
            m = ended(t, self._on, 0, timing, self._stuck_ms, firsts, 2)
            stuck |= m
            timing &= ~m
        self._recent = recent
        self._timing = timing
        self.stuck = stuck
        self.chatter = chatter
        old = old_stuck | old_chatter
        self.faulty = stuck | chatter
        self._report(t, stuck & ~old_stuck, chatter & ~old_chatter, old & ~self.faulty)

    def _chatters(self, i, t):
        # Store this edge in line i's ring; True if its last k edges all lie inside the window.
        k = self._k
        j = self._ei[i]
        self._et[i * k + j] = t
        j += 1
        if j >= k:
            j = 0
        self._ei[i] = j
        n = self._en[i]
        if n < k:
            n += 1
            self._en[i] = n
        return n >= k and elapsed(t, self._et[i * k + j]) < self._window

    def _report(self, t, new_stuck, new_chatter, cleared):
        m = new_stuck | new_chatter | cleared
        i = 0
        while m:
            if m & 1:
                if (new_stuck >> i) & 1:
                    self.ring.push(FAULT, self._base + i, STUCK, t)
                if (new_chatter >> i) & 1:
                    self.ring.push(FAULT, self._base + i, CHATTER, t)
                if (cleared >> i) & 1:
                    self.ring.push(FAULT, self._base + i, HEALTHY, t)
            m >>= 1
            i += 1

    def status(self, line):
        """HEALTHY, STUCK or CHATTER (stuck wins if both)."""
        if (self.stuck >> line) & 1:
            return STUCK
        if (self.chatter >> line) & 1:
            return CHATTER
        return HEALTHY

    def edge_count(self, line):
        """Edges seen on a line since start (saturating): 0 flags a sensor that never fired."""
        return self._edges[line]
