# The peg grid of a board with peg holes (SH-2): 9 beds x 3 holes per side = 27 sensors per side,
# each side one 27-bit int (two ints, not one 54-bit int: 54 bits would not be a small int on the
# ESP32, and a big int allocates). Bit (bed-1)*3 + (hole-1); event id = side*27 + that bit.
#
# Debounce: a hole must read its new value on every scan for debounce_ms before its stable
# value changes (a peg wiggled in its hole or a finger brushing the sensor is not a score).
# Each stable change pushes PEG (value 1 = peg present). The grid starts empty, so pegs already
# in place at boot arrive as PEG events after debounce_ms; reset() adopts a known state
# silently instead. The referee compares the stable grid with the score the rules computed
# and shows any disagreement; this layer only reports what the holes say.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

from .events import PEG, EventRing, elapsed, ended

_TMASK = const(0x3FFFFFFF)
BEDS = const(9)
HOLES = const(3)
PER_SIDE = const(27)
_SIDE_MASK = const(0x7FFFFFF)  # 27 bits


def hole_bit(bed, hole):
    """Bit index of (bed 1..9, hole 1..3) within a side's bitmap."""
    return (bed - 1) * 3 + (hole - 1)


def peg_id(side, bed, hole):
    """PEG event id of a hole."""
    return side * PER_SIDE + (bed - 1) * 3 + (hole - 1)


def peg_where(ident):
    """(side, bed, hole) of a PEG event id. Allocates a tuple: not for hot code."""
    side = ident // PER_SIDE
    r = ident - side * PER_SIDE
    return side, r // 3 + 1, r % 3 + 1


class PegGrid:
    def __init__(self, debounce_ms=100, ring=None):
        self.ring = ring if ring is not None else EventRing(64)
        self._db = debounce_ms
        self._stable = array("i", [0, 0])  # per side: debounced bitmap
        self._pend = array("i", [0, 0])  # per side: holes reading differently, waiting
        self._since = array("i", [0] * (2 * PER_SIDE))  # when each waiting hole changed
        # Per side, the earliest _since of its waiting holes, or earlier: no hole is done
        # waiting before it, so a tick skips the loop over them until then.
        self._first = array("i", [0, 0])

    def quiet(self, side0_bits, side1_bits):
        """True if ticks with these bitmaps would do nothing: no hole waiting out its
        debounce."""
        return ((side0_bits & _SIDE_MASK) == self._stable[0] and not self._pend[0]
                and (side1_bits & _SIDE_MASK) == self._stable[1] and not self._pend[1])

    def tick(self, t, side0_bits, side1_bits):
        """Feed one scan: t in ms, one 27-bit int per side (1 = peg present). No allocation."""
        t &= _TMASK
        self._side(t, 0, side0_bits & _SIDE_MASK)
        self._side(t, 1, side1_bits & _SIDE_MASK)

    def _side(self, t, side, raw):
        stable = self._stable[side]
        diff = raw ^ stable
        # A hole back at its stable value stops waiting; a hole newly different starts.
        pend = self._pend[side] & diff
        new = diff & ~pend
        off = side * PER_SIDE
        since = self._since
        if new and not pend:
            self._first[side] = t
        i = 0
        while new:
            if new & 1:
                since[off + i] = t
                pend |= 1 << i
            new >>= 1
            i += 1
        # Holes that have held their new value for debounce_ms change.
        if pend and elapsed(t, self._first[side]) >= self._db:
            m = ended(t, since, off, pend, self._db, self._first, side)
            stable ^= m
            pend ^= m
            i = 0
            while m:
                if m & 1:
                    self.ring.push(PEG, off + i, (stable >> i) & 1, t)
                m >>= 1
                i += 1
        self._stable[side] = stable
        self._pend[side] = pend

    # -- reading the grid (not hot; may allocate) --------------------------------------------
    def side_bits(self, side):
        """Stable 27-bit bitmap of a side (bit (bed-1)*3 + (hole-1), 1 = peg present)."""
        return self._stable[side]

    def pending(self, side):
        """Holes of a side whose reading differs from the stable value, still being debounced."""
        return self._pend[side]

    def count(self, side, bed):
        """Holes filled in a bed (0..3)."""
        v = (self._stable[side] >> ((bed - 1) * 3)) & 7
        return (v & 1) + ((v >> 1) & 1) + (v >> 2)

    def beds(self, side):
        """Holes filled per bed, beds 1..9, as a list of 9 ints (the rules' `beds` shape)."""
        return [self.count(side, bed) for bed in range(1, BEDS + 1)]

    def reset(self, side0_bits=0, side1_bits=0):
        """Adopt a known grid silently (e.g. after a power cut, once the referee agrees)."""
        self._stable[0] = side0_bits & _SIDE_MASK
        self._stable[1] = side1_bits & _SIDE_MASK
        self._pend[0] = 0
        self._pend[1] = 0
