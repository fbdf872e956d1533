# Pocket sensors (seven-pins SP-10, Novuss NV-3): a beam across each pocket's throat, and on a
# Novuss board a reflective IR sensor beside it on an ADC1 pin, telling a red puck from a black
# one from the striker.
#
# Input per scan: one bit per pocket, 1 while its beam is broken (logical, as every line), and
# for pockets with a colour sensor its raw ADC reading (0..4095, more light reflected = higher).
# A passage is a run of the beam broken for at least min_ms (shorter: a flicker, ignored; the
# beam's own noise and a ball rattling in the jaws without dropping). While the beam is broken
# the highest colour reading is kept: the object is then in front of the sensor, and the empty
# throat behind it reads dark. When the beam clears, one POCKET event says what went in:
#   - no colour sensor: BALL (a seven-pins object ball, or a puck of unknown colour);
#   - a reading below black_below: BLACK; below red_below: RED; above: STRIKER (the striker is
#     bare light wood, which reflects most);
#   - a passage of striker_ms or more is the STRIKER whatever the colour said: it is the larger
#     disc and takes longest to drop through the beam.
# The referee adds it to the shot being entered and shows it; the buttons put right what the
# sensor could not tell (a cue ball in a seven-pins pocket breaks the beam like an object ball).
#
# tick() only compares and stores small ints in preallocated arrays: no allocation (proven
# under micropython.heap_lock() in tests/mp/sense_heaplock.py). A beam stuck broken is reported
# by LineHealth like any other line, and never produces a passage until it clears.

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
        self._peak = array("i", [0] * count)
        self.passages = array("i", [0] * count)  # passages counted per pocket (saturating)
        self.last = array("i", [-1] * count)  # what passed last, per pocket (display)

    def tick(self, t, raw, analog=None):
        """One scan: `raw` the pocket bits, `analog` an object whose read(i) gives pocket i's
        colour reading (None: no colour sensors). Allocates nothing."""
        lvl = self._lvl
        colour = self._colour if analog is not None else 0
        for i in range(self._count):
            b = 1 << i
            now = raw & b
            if now and not lvl & b:
                self._start[i] = t
                self._peak[i] = -1
            if now and colour & b:
                v = analog.read(i)
                if v > self._peak[i]:
                    self._peak[i] = v
            if lvl & b and not now:
                ms = elapsed(t, self._start[i])
                if ms >= self._min:
                    what = self._classify(i, ms)
                    self.last[i] = what
                    if self.passages[i] < 0x3FFFFFFF:
                        self.passages[i] += 1
                    self.ring.push(POCKET, i, what, t)
        self._lvl = raw & ((1 << self._count) - 1)

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
