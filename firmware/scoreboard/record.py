# Recording at the table: every raw line change, with the board's own ms, for `chalk record`.
#
# While recording is on, the sensing step and the tilt-line edge callback note each change of a
# line into preallocated rings (ints into arrays: no allocation, safe in an interrupt handler),
# and the main loop drains them between scans into `line` frames (docs/serial-protocol.md), which
# the host writes as a sensor trace (docs/sensor-trace.md). Buttons and pegs are seen by the
# scan (its ms), tilt lines and pocket beams by their edge callback (the ms of the edge, as the
# tilt latch and the pocket counter take them), so a replay of the recording sees what the
# board saw. (Analog colour
# sensors and a scorepad's keys are not switch lines: they are not recorded.)

from array import array

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_TMASK = const(0x3FFFFFFF)
_HALF = const(0x1FFFFFFF)


class ChangeRing:
    """(t, line, v) triples in a fixed ring with one writer and one reader: the writer moves
    only `_w`, the reader only `_r`, so an interrupt that writes while the loop reads loses
    nothing. Full: the newest change is dropped and counted."""

    def __init__(self, capacity):
        self._cap = capacity
        self._buf = array("i", [0] * (3 * capacity))
        self._w = 0
        self._r = 0
        self.dropped = 0

    def push(self, t, line, v):
        """Allocates nothing."""
        w = self._w
        nxt = w + 1
        if nxt >= self._cap:
            nxt = 0
        if nxt == self._r:
            if self.dropped < _TMASK:
                self.dropped += 1
            return
        b = self._buf
        k = 3 * w
        b[k] = t
        b[k + 1] = line
        b[k + 2] = v
        self._w = nxt

    def peek_t(self):
        """The t of the oldest change, or -1 if none."""
        if self._r == self._w:
            return -1
        return self._buf[3 * self._r]

    def pop_into(self, out):
        if self._r == self._w:
            return False
        k = 3 * self._r
        b = self._buf
        out[0] = b[k]
        out[1] = b[k + 1]
        out[2] = b[k + 2]
        r = self._r + 1
        self._r = 0 if r >= self._cap else r
        return True


class Recorder:
    """The line changes of one board while recording is on. `names(i)`: a line id's name."""

    def __init__(self, app, capacity=64):
        self.app = app
        self.scan_ring = ChangeRing(capacity)  # buttons and pegs, written by App.scan
        self.edge_ring = ChangeRing(capacity)  # tilt lines, pocket beams: the edge callback
        lines = app.board.lines
        # The scan sees every switch line without an edge interrupt (the buttons).
        self._mask = ((1 << lines.count) - 1) & ~lines.edge_mask
        self._btn_prev = lines.read() & self._mask
        self._pegs_prev = array("i", [0, 0])
        if app.grid is not None:
            self._pegs_prev[0] = app._pegbuf[0]
            self._pegs_prev[1] = app._pegbuf[1]
        self._out = array("i", [0, 0, 0])
        self.sent = 0
        self._dropped_told = 0

    def scan(self, t, raw):
        """Note the switch lines the scan reads that changed since the last one. Allocates
        nothing."""
        ch = (raw & self._mask) ^ self._btn_prev
        if ch:
            self._btn_prev ^= ch
            i = 0
            while ch:
                if ch & 1:
                    self.scan_ring.push(t, i, (raw >> i) & 1)
                ch >>= 1
                i += 1

    def pegs(self, t, side, bits, base):
        """Note the peg holes of one side that changed. Allocates nothing."""
        prev = self._pegs_prev
        ch = bits ^ prev[side]
        if ch:
            prev[side] = bits
            i = 0
            while ch:
                if ch & 1:
                    self.scan_ring.push(t, base + i, (bits >> i) & 1)
                ch >>= 1
                i += 1

    def edge(self, t, line, v):
        """A tilt line's or a pocket beam's edge (from the edge callback). Allocates nothing."""
        self.edge_ring.push(t, line, v)

    def drain(self, emit, limit=16):
        """Send up to `limit` changes, oldest first across both rings, as `line` frames."""
        out = self._out
        a, b = self.scan_ring, self.edge_ring
        n = 0
        while n < limit:
            ta, tb = a.peek_t(), b.peek_t()
            if ta < 0 and tb < 0:
                break
            if tb < 0 or (ta >= 0 and ((ta - tb) & _TMASK) > _HALF):
                ring = a  # a's change is older than b's (wrapped difference)
            elif ta < 0:
                ring = b
            else:
                ring = a if ta == tb else b
            ring.pop_into(out)
            emit("line", {"t": out[0], "line": self.app.line_name(out[1]), "v": out[2]})
            n += 1
        self.sent += n
        lost = a.dropped + b.dropped
        if lost != self._dropped_told:
            self._dropped_told = lost
            emit("warn", {"warning": "record: %d line changes lost (the link was too slow)"
                          % lost, "lost": lost})
        return n
