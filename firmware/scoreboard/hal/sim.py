# A simulated board: the hal API over virtual lines, so the whole firmware runs (MicroPython unix
# port behind a pty, or CPython in tests) with no table at hand.
#
# Lines are set by name (`set_line("pin.C", 1)`, names per the sensor-trace contract, values
# logical) or by playing a sensor trace (TracePlayer). Pegs are read through a model of the
# 74HC165 chain, so the same shift-register code as on the board decodes them. The display keeps
# its pixels and the text drawn on it, as they were at the last show().

import json

from . import (
    HEIGHT,
    WIDTH,
    Board,
    Keypad,
    Pegs,
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


class ShiftChain:
    """Chained 74HC165s as the ESP32's three wires see them, fed from virtual peg bitmaps.

    `state` is the board's [side 0, side 1] list of logical peg bitmaps. load/clock/data are
    meant to be passed as bound methods, which calling does not allocate.
    """

    def __init__(self, chain_map, active, state):
        self._map = chain_map
        self._n = len(chain_map)
        self._reg = bytearray(self._n)
        self._inv = 0 if active else 1
        self._state = state
        self._pos = 0
        self._clk = 0
        self._ld = 1

    def load(self, v):
        if not v:
            m = self._map
            st = self._state
            inv = self._inv
            reg = self._reg
            for i in range(self._n):
                c = m[i]
                if c == 255:
                    reg[i] = 0  # unwired input tied to GND
                else:
                    reg[i] = ((st[c >> 5] >> (c & 31)) & 1) ^ inv
            self._pos = 0
        self._ld = v

    def clock(self, v):
        if v and not self._clk and self._ld:
            self._pos += 1
        self._clk = v

    def data(self):
        if self._pos < self._n:
            return self._reg[self._pos]
        return 0  # SER of the last chip tied to GND

    def readinto(self, buf):
        """An SPI read in mode 0, MSB first, as machine.SPI does it: each bit is sampled from QH
        at a rising clock edge, which then shifts the chain on."""
        for k in range(len(buf)):
            byte = 0
            for _ in range(8):
                byte = byte << 1 | self.data()
                self.clock(1)
                self.clock(0)
            buf[k] = byte


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
                chars = list(s)
                for k in range(len(chars)):
                    cx = ex + 8 * k
                    if cx >= x and cx + 8 <= x + w:
                        chars[k] = " "
                s = "".join(chars)
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
                    rows[r][col] = s[k]
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
        from .. import boardconfig

        cfg = boardconfig.load(cfg)
        lines = Lines(boardconfig.switch_names(cfg), boardconfig.edge_mask(cfg))
        self.peg_state = [0, 0]  # logical bitmaps, side 0 and side 1
        self.chain = None
        pegs = None
        if "pegs" in cfg:
            cmap = boardconfig.chain_map(cfg)
            active = cfg["pegs"]["active"]
            self.chain = ShiftChain(cmap, active, self.peg_state)
            if cfg["pegs"]["driver"] == "spi":
                from .spipegs import SpiPegs

                pegs = SpiPegs(self.chain, self.chain.load, cmap, 1 - active)
            else:
                pegs = Pegs(self.chain.load, self.chain.clock, self.chain.data, cmap, 1 - active)
        super().__init__(cfg, lines, pegs, Display(), clock or RealClock(), Storage(flash_dir))
        self.matrix = None
        self._nkeys = 0
        if "keypad" in cfg:
            from .simkeys import KeyMatrix  # only a scorepad pays for it in RAM

            self.matrix = KeyMatrix(len(cfg["keypad"]["rows"]), len(cfg["keypad"]["cols"]))
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


def _q(v):
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# -- sensor traces --------------------------------------------------------------------------------

class TraceError(ValueError):
    """A sensor-trace line that cannot be played; `lineno` counts from 1."""

    def __init__(self, lineno, message):
        super().__init__("trace line %d: %s" % (lineno, message))
        self.lineno = lineno


# The latest t a trace may have: 24 hours. No game lasts longer, and a virtual clock walking to
# t = 10**23 one scan at a time would never get there.
MAX_T = 24 * 3600 * 1000


def format_record(t, line, v):
    """One trace line (without newline), keys in the contract's order."""
    return '{"t": %d, "line": %s, "v": %d}' % (t, json.dumps(line), v)


def read_trace(lines, names):
    """Yield (t, line, v) from JSON Lines text, checking each against the contract.

    `names`: the board's line names. Blank lines are skipped; keys beyond t/line/v are ignored.
    Raises TraceError naming the line number for bad JSON, an unknown line name, t going
    backwards or v not 0/1.
    """
    from ..safejson import loads  # here: a board that plays no trace never loads it

    known = set(names)
    last = -1
    lineno = 0
    for raw in lines:
        lineno += 1
        if type(raw) is bytes:
            try:
                raw = raw.decode()
            except UnicodeError:
                raise TraceError(lineno, "not UTF-8 text: a trace is JSON Lines")
        raw = raw.strip()
        if lineno == 1 and raw.startswith("\ufeff"):
            raw = raw[1:].strip()  # a byte order mark some editors put first
        if not raw:
            continue
        try:
            rec = loads(raw)
        except ValueError as e:
            raise TraceError(lineno, "bad JSON (%s): %s" % (e, raw[:60]))
        if type(rec) is not dict:
            raise TraceError(lineno, "must be a JSON object {\"t\": ms, \"line\": name, \"v\": 0|1}"
                                     ", not %s" % raw[:60])
        for key in ("t", "line", "v"):
            if key not in rec:
                raise TraceError(lineno, "missing %s in %s" % (_q(key), raw[:60]))
        t, name, v = rec["t"], rec["line"], rec["v"]
        if type(t) is not int or t < 0 or t > MAX_T:
            raise TraceError(lineno, "t must be a whole number of ms from 0 to %d (24 hours), "
                             "not %s" % (MAX_T, _q(t)))
        if t < last:
            raise TraceError(lineno, "t goes backwards: %d after %d (a trace is in time order)"
                             % (t, last))
        if type(name) is not str or name not in known:
            raise TraceError(lineno, "unknown line name %s; known: %s"
                             % (_q(name), _summary(names)))
        if name[:7] == "colour.":  # an analog line: an ADC reading
            if type(v) is not int or not 0 <= v <= 4095:
                raise TraceError(lineno, "v of %s must be an ADC reading 0..4095, not %s"
                                 % (name, _q(v)))
        elif type(v) is not int or v not in (0, 1):
            raise TraceError(lineno, "v must be 0 or 1, not %s" % _q(v))
        last = t
        yield t, name, v


def _summary(names):
    out = [n for n in names if not n.startswith("peg.")]  # keys ("key.1" ...) are listed
    if len(out) != len(names):
        out.append("peg.<side 0-1>.<bed 1-9>.<hole 1-3>")
    return ", ".join(out)


def check_trace(lines, names):
    """Validate a whole trace; return its number of records (TraceError on the first bad line)."""
    n = 0
    for _ in read_trace(lines, names):
        n += 1
    return n


class TracePlayer:
    """Plays a sensor trace onto a SimBoard: a record's t is ms after `start` (default: now).

    poll() applies every record due by the board clock (for a real clock, call it from the main
    loop); play() drives a VirtualClock from record to record. Records are read lazily, so a bad
    line raises TraceError when the player reaches it.
    """

    def __init__(self, board, lines, start=None):
        self.board = board
        self.start = board.clock.ticks_ms() if start is None else start
        self.applied = 0
        self._records = read_trace(lines, board.line_names)
        self._next = None
        self._pull()

    def _pull(self):
        try:
            self._next = next(self._records)
        except StopIteration:
            self._next = None

    @property
    def done(self):
        return self._next is None

    def next_t(self):
        """The trace time of the next record, or None when the trace is over."""
        return None if self._next is None else self._next[0]

    def elapsed(self):
        clock = self.board.clock
        return clock.ticks_diff(clock.ticks_ms(), self.start)

    def poll(self):
        """Apply every record with t <= elapsed(); return how many."""
        now = self.elapsed()
        n = 0
        clock = self.board.clock
        while self._next is not None and self._next[0] <= now:
            t, name, v = self._next
            # Each change at its own ms, however late the poll: the scan that follows sees the
            # levels, the edge interrupt the exact time (as on the board).
            self.board.set_line(name, v, clock.ticks_add(self.start, t))
            n += 1
            self.applied += 1
            self._pull()
        return n

    def play(self, until=None, tick=None):
        """Advance the board's VirtualClock to each record in turn and apply it, up to trace time
        `until` (default: the whole trace; the clock then stops at `until`). tick(), if given,
        runs after each batch of records sharing a time, e.g. a sensing step."""
        clock = self.board.clock
        while self._next is not None and (until is None or self._next[0] <= until):
            wait = self._next[0] - self.elapsed()
            if wait > 0:
                clock.advance(wait)
            self.poll()
            if tick is not None:
                tick()
        if until is not None:
            wait = until - self.elapsed()
            if wait > 0:
                clock.advance(wait)
        return self.applied
