# A simulated board: the hal API over virtual lines, so the whole firmware runs (MicroPython unix
# port behind a pty, or CPython in tests) with no table at hand.
#
# Lines are set by name (`set_line("pin.C", 1)`, names per the sensor-trace contract, values
# logical) or by playing a sensor trace (TracePlayer). Pegs are read through a model of the
# 74HC165 chain, so the same shift-register code as on the board decodes them. The display keeps
# its pixels and the text drawn on it, as they were at the last show().


from . import (
    HEIGHT,
    WIDTH,
    Board,
    RealClock,
    Storage,
    ticks_add,
    ticks_diff,
)

# -- clocks ---------------------------------------------------------------------------------------

class VirtualClock:
    """Ticks that move only when told: advance(ms), or sleep_ms(ms) (which returns at once)."""

    def __init__(self, start=0):
        self._now = ticks_add(start, 0)

    def ticks_ms(self):
        return self._now

    def advance(self, ms):
        if ms < 0:
            raise ValueError("a clock cannot go back (advance by %d ms)" % ms)
        self._now = ticks_add(self._now, ms)

    def sleep_ms(self, ms):
        self.advance(ms)

    def ticks_diff(self, a, b):
        return ticks_diff(a, b)

    def ticks_add(self, t, delta):
        return ticks_add(t, delta)


# -- lines ----------------------------------------------------------------------------------------

class Lines:
    """Buttons then tilt pins (boardconfig.switch_names order) as one logical int bitmap."""

    def __init__(self, names, edge_mask=0):
        self.names = tuple(names)
        self.count = len(self.names)
        self.edge_mask = edge_mask
        self._bits = 0
        self._callback = None
        self.edge_ms = -1

    def read(self):
        return self._bits

    def level(self, index):
        """The logical level of one line (for an edge callback). Allocates nothing."""
        return (self._bits >> index) & 1

    def on_edge(self, callback):
        """callback(line_index) on every change of a tilt line or pocket beam; None to stop.
        Called at once
        from set(), where the board would schedule it from its pin interrupt. During the call,
        `edge_ms` is the edge's own time (ticks ms) when set() was given one, as the board's
        interrupt stamps the edge itself (a trace record's time, not the scan that applies
        it); else -1 (now)."""
        self._callback = callback

    def index(self, name):
        return self.names.index(name)

    def set(self, index, v, t=None):
        bit = 1 << index
        old = self._bits
        new = (old | bit) if v else (old & ~bit)
        if new != old:
            self._bits = new
            if self.edge_mask & bit and self._callback is not None:
                self.edge_ms = -1 if t is None else t
                self._callback(index)
                self.edge_ms = -1


# -- display --------------------------------------------------------------------------------------

try:
    from framebuf import MONO_VLSB as _MONO_VLSB
    from framebuf import FrameBuffer as _FrameBuffer

    PyFrameBuffer = None
except ImportError:  # CPython: loaded only where it is used, so MicroPython keeps no code of it
    from .pyframebuf import PyFrameBuffer  # type: ignore[assignment]

    _FrameBuffer = PyFrameBuffer  # type: ignore[misc, assignment]
    _MONO_VLSB = 0  # type: ignore[misc]


class _RecordingFrameBuffer(_FrameBuffer):
    # Remembers the text drawn, so tests and the sim can read the screen as text. A fill or a
    # fill_rect over a character's whole 8x8 cell wipes it.

    def __init__(self, buf, width, height):
        super().__init__(buf, width, height, _MONO_VLSB)
        self.drawn = []  # [x, y, text] in drawing order

    def text(self, s, x, y, c=1):
        s = str(s)
        super().text(s, x, y, c)
        self.drawn = [e for e in self.drawn if e[0] != x or e[1] != y]
        self.drawn.append([x, y, s])

    def fill(self, c):
        super().fill(c)
        self.drawn = []

    def fill_rect(self, x, y, w, h, c):
        super().fill_rect(x, y, w, h, c)
        kept = []
        for ex, ey, s in self.drawn:
            if ey >= y and ey + 8 <= y + h:
                # By slices, never a character taken out of s (list(s), s[k]): each would be a
                # new name in the qstr pool, for good (digits of a score, letters of a name).
                for k in range(len(s)):
                    cx = ex + 8 * k
                    if cx >= x and cx + 8 <= x + w:
                        s = s[:k] + " " + s[k + 1:]
            if s.strip():
                kept.append([ex, ey, s])
        self.drawn = kept

    def rect(self, x, y, w, h, c, f=False):
        if f:
            self.fill_rect(x, y, w, h, c)
        else:
            super().rect(x, y, w, h, c)

    def scroll(self, dx, dy):
        super().scroll(dx, dy)
        for e in self.drawn:
            e[0] += dx
            e[1] += dy


class Display:
    """The SSD1306's API over a RAM frame buffer; reads back what the last show() put on screen."""

    def __init__(self, width=WIDTH, height=HEIGHT):
        self.width = width
        self.height = height
        self.buf = bytearray(width * height // 8)
        self.fb = _RecordingFrameBuffer(self.buf, width, height)
        self._shown = bytearray(len(self.buf))
        self._shown_text = []
        self.shows = 0
        self.contrast_level = 0xCF
        self.powered = True
        self.inverted = False

    def fill(self, c):
        self.fb.fill(c)

    def text(self, s, x, y, c=1):
        self.fb.text(s, x, y, c)

    mirror = None  # a file path: each show() writes the screen there as text (chalk sim)

    def show(self):
        self._shown[:] = self.buf
        self._shown_text = [(e[0], e[1], e[2]) for e in self.fb.drawn]
        self.shows += 1
        if self.mirror is not None:
            with open(self.mirror, "w") as f:
                f.write(self.as_text() + "\n")

    def contrast(self, level):
        self.contrast_level = level & 0xFF

    def power(self, on):
        self.powered = bool(on)

    def invert(self, on):
        self.inverted = bool(on)

    # -- reading the screen back (what a person at the table would see) --------------------------

    def texts(self):
        """[(x, y, text)] on screen, in drawing order."""
        return list(self._shown_text) if self.powered else []

    def as_text(self):
        """The screen as text: one row per 8-pixel band, a column per 8 pixels."""
        cols = self.width // 8
        rows = [[" "] * cols for _ in range(self.height // 8)]
        for x, y, s in self.texts():
            r = (y + 4) // 8
            if not 0 <= r < len(rows):
                continue
            for k in range(len(s)):
                col = (x + 4) // 8 + k
                if 0 <= col < cols:
                    rows[r][col] = s[k:k + 1]  # a slice: s[k] would intern it (fill_rect)
        lines = ["".join(r).rstrip() for r in rows]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def text_lines(self):
        """The non-blank rows of as_text(), stripped."""
        return [line.strip() for line in self.as_text().split("\n") if line.strip()]

    def pixel(self, x, y):
        if not self.powered:
            return 0
        return (self._shown[(y >> 3) * self.width + x] >> (y & 7)) & 1

    def pixels(self):
        """The screen as rows of '#' (lit) and '.' (dark)."""
        return ["".join("#" if self.pixel(x, y) else "." for x in range(self.width))
                for y in range(self.height)]


# -- the board ------------------------------------------------------------------------------------

class SimBoard(Board):
    """A board whose lines are virtual. cfg: a config path or dict; flash_dir: the journal's
    directory; clock: VirtualClock for tests, RealClock (the default) for a live simulation."""

    def __init__(self, cfg, flash_dir, clock=None):
        # The screen's buffers (2 KB that live as long as the board) first, while the heap is
        # in one piece: loading the config leaves it in pieces.
        display = Display()
        from .. import boardconfig

        cfg = boardconfig.load(cfg)
        lines = Lines(boardconfig.switch_names(cfg), boardconfig.edge_mask(cfg))
        self.peg_state = [0, 0]  # logical bitmaps, side 0 and side 1
        self.chain = None
        pegs = None
        if "pegs" in cfg:
            cmap = boardconfig.chain_map(cfg)
            active = cfg["pegs"]["active"]
            from .simchain import ShiftChain

            self.chain = ShiftChain(cmap, active, self.peg_state)
            if cfg["pegs"]["driver"] == "spi":
                from .spipegs import SpiPegs

                pegs = SpiPegs(self.chain, self.chain.load, cmap, 1 - active)
            else:
                from .pegs import Pegs

                pegs = Pegs(self.chain.load, self.chain.clock, self.chain.data, cmap, 1 - active)
        super().__init__(cfg, lines, pegs, display, clock or RealClock(), Storage(flash_dir))
        self.matrix = None
        self._nkeys = 0
        if "keypad" in cfg:
            from .simkeys import KeyMatrix  # only a scorepad pays for it in RAM

            self.matrix = KeyMatrix(len(cfg["keypad"]["rows"]), len(cfg["keypad"]["cols"]))
            from .keypad import Keypad

            self.keypad = Keypad(self.matrix.rows, self.matrix.cols)
            self._nkeys = len(cfg["keypad"]["keys"])
        self.device_id = _device_id(flash_dir)
        if "pockets" in cfg:
            from .simanalog import Analog  # only boards with colour sensors load it

            self.analog = Analog(cfg)
        # self.baud stays 0: a pty carries what it is given; main.py --baud sets a UART's pace
        # What moves the table's lines while the board runs (a trace being played, changes
        # injected by the host): a thread of its own moves it when a change is due
        # (hal/simtimer.py), so the world goes on during a long step of the main loop, as a
        # real table does.
        self.world = []
        self.moving = False  # move_world runs (hal/simtimer.py)

    @property
    def nvs(self):  # type: ignore[override]  # (Board's plain attribute, made on demand here)
        # Where the board keeps the signing key it makes at its first boot (scoreboard/sign.py):
        # a file of its flash standing for the ESP32's NVS partition, never sent over the link.
        # Loaded when the app first asks (at boot); it holds nothing in RAM between calls.
        from .simnvs import SimNVS

        return SimNVS(self.storage.root)

    def watchdog(self, timeout_ms):
        from .simwatchdog import SimWatchdog  # loaded by the main loop only: no RAM otherwise

        return SimWatchdog(timeout_ms)

    def sampler(self, period_ms, callback):
        from .simtimer import sampler  # run by the world's thread (or the loop, on CPython)

        return sampler(self, period_ms, callback)

    def _locate(self, name):
        # (None, line index) for a button or tilt line, (side, bit) for a peg: line_names lists
        # the 27 pegs of side 0 then side 1 after the switch lines.
        try:
            i = self.line_names.index(name)
        except ValueError:
            from .simtrace import _q

            raise ValueError("unknown line %s; this board has %s" % (_q(name), known_lines(self)))
        n = self.lines.count
        if i < n:
            return None, i
        if self.matrix is not None:
            return "key", i - n  # the keys follow the switch lines (boardconfig.line_names)
        return (i - n) // 27, (i - n) % 27

    def set_line(self, name, v, t=None):
        """Set a line by its contract name to a logical value, 0 or 1 (an analog colour line:
        its ADC reading, 0..4095); t: when it changed (ticks ms; default now), for the edge
        interrupt of a tilt line."""
        if self.analog is not None and name[:7] == "colour.":
            self.analog.set(name, v)
            return
        if v is not True and v is not False and (type(v) is not int or v not in (0, 1)):
            from .simtrace import _q

            raise ValueError("line %s: v must be 0 or 1, not %s" % (name, _q(v)))
        side, i = self._locate(name)
        if side is None:
            self.lines.set(i, v, t)
        elif side == "key":
            m = self.matrix
            m.down = (m.down | 1 << i) if v else (m.down & ~(1 << i))
        elif v:
            self.peg_state[side] |= 1 << i
        else:
            self.peg_state[side] &= ~(1 << i)

    def line(self, name):
        if self.analog is not None and name[:7] == "colour.":
            return self.analog.get(name)
        side, i = self._locate(name)
        if side is None:
            return (self.lines.read() >> i) & 1
        if side == "key":
            return (self.matrix.down >> i) & 1
        return (self.peg_state[side] >> i) & 1


def _device_id(flash_dir):
    # A simulated board's identity lives on its flash, as a chip id lives in its silicon.
    path = flash_dir.rstrip("/") + "/device_id"
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        import os

        ident = "sim-" + "".join("%02x" % b for b in os.urandom(6))
        with open(path, "w") as f:
            f.write(ident + "\n")
        return ident


def known_lines(board):
    """The lines of a board, summarised for messages."""
    names = list(board.lines.names)
    if board.pegs is not None:
        names.append("peg.<side 0-1>.<bed 1-9>.<hole 1-3>")
    if board.keypad is not None:
        names += [n for n in board.line_names if n.startswith("key.")]
    return ", ".join(names)


# The sensor-trace player and reader live in hal/simtrace.py, loaded by a board that plays a
# trace (or a host that checks one): found here when first asked for.
_TRACE = ("TraceError", "MAX_T", "format_record", "read_trace", "check_trace", "TracePlayer")


def __getattr__(name):
    if name not in _TRACE:
        raise AttributeError(name)
    from . import simtrace

    return getattr(simtrace, name)
