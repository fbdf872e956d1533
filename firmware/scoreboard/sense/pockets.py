# Pocket sensors (for the games whose board.py lists POCKETS): a beam across each pocket's
# throat, and where fitted (COLOUR) a reflective IR sensor beside it on an ADC1 pin, telling a
# red puck from a black one from the striker.
#
# Input per scan: one bit per pocket, 1 while its beam is broken (logical, as every line), and
# for pockets with a colour sensor its raw ADC reading (0..4095, more light reflected = higher).
# A passage is a run of the beam broken for at least min_ms (shorter: a flicker, ignored; the
# beam's own noise and a ball rattling in the jaws without dropping). While the beam is broken
# the highest colour reading is kept: the object is then in front of the sensor, and the empty
# throat behind it reads dark. When the beam clears, one POCKET event says what went in:
#   - no colour sensor: BALL (an object ball, or a puck of unknown colour);
#   - a reading below black_below: BLACK; below red_below: RED; above: STRIKER (the striker is
#     bare light wood, which reflects most);
#   - a passage of striker_ms or more is the STRIKER whatever the colour said: it is the larger
#     disc and takes longest to drop through the beam.
# The referee adds it to the shot being entered and shows it; the buttons put right what the
# sensor could not tell (a cue ball in a pocket breaks the beam like an object ball).
#
# Passages that cannot be missed: each beam also has an edge interrupt (hal Lines.on_edge, as
# the tilt switches have), and note_edge(i, t, level, colour) measures the run from the edges'
# own times: a passage that falls between two scans, or inside a long step of the main loop,
# is recorded (start, length, the colour read at the break) into a preallocated ring that the
# next tick() turns into POCKET events, in order. The scans still measure runs as before: a run
# the scans saw whole, during which the handler recorded no passage (its edges were dropped:
# the ESP32's schedule queue was full), counts from the scans; otherwise the handler's
# measurement decides, so a passage is never counted twice. While a beam is broken the scans
# go on reading its colour sensor, and the highest reading of the run wins.
#
# tick() and note_edge() only compare and store small ints in preallocated arrays: no
# allocation (proven under micropython.heap_lock() in tests/mp/sense_heaplock.py), so
# note_edge may run in an interrupt handler. A beam stuck broken is reported by LineHealth like
# any other line, and never produces a passage until it clears.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

from .events import POCKET, EventRing, elapsed

RED = const(0)
BLACK = const(1)
STRIKER = const(2)
BALL = const(3)  # no colour sensor on that pocket
WHAT = ("red", "black", "striker", "ball")
_TMASK = const(0x3FFFFFFF)
_THALF = const(0x1FFFFFFF)
_RING = const(16)  # passages the handler may record between two ticks


class PocketCounter:
    def __init__(self, count, min_ms=8, striker_ms=60, black_below=1200, red_below=2800,
                 colour_mask=0, ring=None):
        if count < 1 or count > 8:
            raise ValueError("pockets: count must be 1..8, got %d" % count)
        self.ring = ring if ring is not None else EventRing(16)
        self._count = count
        self._min = min_ms
        self._striker = striker_ms
        self._black = black_below
        self._red = red_below
        self._colour = colour_mask  # pockets with a colour sensor
        self._lvl = 0
        self._start = array("i", [0] * count)
        self._peak = array("i", [-1] * count)
        self.passages = array("i", [0] * count)  # passages counted per pocket (saturating)
        self.last = array("i", [-1] * count)  # what passed last, per pocket (display)
        self._seen = array("i", [0] * count)  # handler passages when the scans saw a break
        # Written by note_edge (interrupt side), read by tick.
        self._i_lv = bytearray(count)  # the handler's idea of each beam
        self._i_run = array("i", [0] * count)  # start of the run the handler is timing
        self._i_col = array("i", [0] * count)  # colour read at that break (-1: none)
        self._i_n = array("i", [0] * count)  # passages the handler recorded (wraps)
        self._r_pk = bytearray(_RING)  # the ring of recorded passages: pocket,
        self._r_t = array("i", [0] * _RING)  # when the beam cleared,
        self._r_ms = array("i", [0] * _RING)  # how long it was broken,
        self._r_col = array("i", [0] * _RING)  # the colour read at the break
        self._r_w = 0  # moved by the handler only
        self._r_r = 0  # moved by tick only
        self.lost = 0  # passages the ring had no room for (saturating)
        # True once the board samples its lines on their edges (App.start_sampling): the ticks
        # then run over samples taken earlier, behind the handler, so the handler alone counts
        # passages, with the colour read at the beam's break.
        self.edges_only = False

    # -- interrupt side ----------------------------------------------------------------------
    def note_edge(self, i, t, level, colour=-1):
        """An edge of pocket i's beam at t ms; level = the beam's logical level read in the
        handler (1 = broken); colour = its colour sensor's reading then (-1: none). Allocates
        nothing: safe in an interrupt handler."""
        t &= _TMASK
        if level:
            # A break (or a break after a clear the handler never saw: timed afresh).
            self._i_run[i] = t
            self._i_col[i] = colour
            self._i_lv[i] = 1
            return
        if not self._i_lv[i]:
            return  # a clear without its break: nothing to time
        self._i_lv[i] = 0
        ms = (t - self._i_run[i]) & _TMASK
        if ms < self._min or ms > _THALF:
            return  # a flicker
        w = self._r_w
        nxt = w + 1 if w + 1 < _RING else 0
        if nxt == self._r_r:
            if self.lost < 0x3FFFFFFF:
                self.lost += 1
            return
        self._r_pk[w] = i
        self._r_t[w] = t
        self._r_ms[w] = ms
        self._r_col[w] = self._i_col[i]
        self._i_n[i] = (self._i_n[i] + 1) & _TMASK
        self._r_w = nxt

    def quiet(self, raw):
        """True if ticks with these levels would do nothing until they change or the edge
        handler records a passage (while a beam stays broken the sampling timer keeps its
        colour's peak)."""
        return (raw & ((1 << self._count) - 1)) == self._lvl and self._r_r == self._r_w

    def tick(self, t, raw, analog=None):
        """One scan: `raw` the pocket bits, `analog` an object whose read(i) gives pocket i's
        colour reading (None: no colour sensors). Allocates nothing."""
        lvl = self._lvl
        colour = self._colour if analog is not None else 0
        r = self._r_r
        while r != self._r_w:  # the passages the edge handler recorded, in order
            i = self._r_pk[r]
            v = self._r_col[r]
            if v > self._peak[i]:
                self._peak[i] = v
            self._passage(i, self._r_ms[r], self._r_t[r])
            r = r + 1 if r + 1 < _RING else 0
            self._r_r = r
        if self.edges_only:
            self._lvl = raw & ((1 << self._count) - 1)
            return
        for i in range(self._count):
            b = 1 << i
            now = raw & b
            if now and not lvl & b:
                self._start[i] = t
                self._seen[i] = self._i_n[i]
                self._peak[i] = -1  # (the handler's colour of this break goes in its ring)
            if now and colour & b:
                v = analog.read(i)
                if v > self._peak[i]:
                    self._peak[i] = v
            if lvl & b and not now:
                ms = elapsed(t, self._start[i])
                if ms >= self._min and self._i_n[i] == self._seen[i]:
                    # The scans saw the whole run and the handler recorded none: its edges were
                    # lost (or there is no handler), so the scans' measurement counts.
                    self._passage(i, ms, t)
                if self._i_lv[i] and ((self._start[i] - self._i_run[i]) & _TMASK) <= _THALF:
                    self._i_lv[i] = 0  # the handler missed this run's clear: in step again
        self._lvl = raw & ((1 << self._count) - 1)

    def _passage(self, i, ms, t):
        what = self._classify(i, ms)
        self._peak[i] = -1
        self.last[i] = what
        if self.passages[i] < 0x3FFFFFFF:
            self.passages[i] += 1
        self.ring.push(POCKET, i, what, t)

    def _classify(self, i, ms):
        if not self._colour >> i & 1:
            return BALL
        if ms >= self._striker:
            return STRIKER
        v = self._peak[i]
        if v < 0:
            return BALL  # the sensor was never read in the run (no analog given)
        if v < self._black:
            return BLACK
        if v < self._red:
            return RED
        return STRIKER
