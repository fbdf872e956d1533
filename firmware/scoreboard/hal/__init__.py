# The hardware layer: the only code that knows how a line is wired.
#
# Two implementations with one API: hal.esp32 (machine.Pin, Pin.irq, I2C, the 74HC165 chain) and
# hal.sim (virtual lines driven by tests and sensor traces). Both hand the layers above a `Board`:
#
#   board.cfg        the validated board config (boardconfig.load)
#   board.lines      Lines: read() -> int bitmap of buttons then tilt pins then pocket beams,
#                    LOGICAL (1 = pressed, tilted, beam broken); on_edge(callback) ->
#                    callback(line_index) on each edge of a tilt line or pocket beam (the sim
#                    also sets lines.edge_ms, the edge's own ms, during the call)
#   board.pegs       Pegs (a board with peg holes) or None: scan_into(arr) fills arr[0], arr[1]
#   board.keypad     Keypad (scorepad) or None: scan() -> int bitmap of the keys down
#   board.display    Display: fb (128x64 framebuf), text(), fill(), show(), contrast(), power()
#   board.clock      Clock: ticks_ms(), sleep_ms(), ticks_diff(), ticks_add()
#   board.storage    Storage: root directory of the journal
#   board.line_names every line name (boardconfig.line_names); board.problems: startup faults
#   board.baud       the link's UART speed (0: a pty); board.watchdog(ms): a started watchdog
#   board.nvs        the signing key's store apart from the filesystem: esp32.NVS's blob calls
#   board.random(n)  n bytes from the hardware random number generator
#   board.sampler(ms, cb) (optional) a started timer calling cb() every ms between two bytecodes
#                    of the main loop (machine.Timer's soft callback), for a keypad or pegs
#                    (lines with no edge interrupt); None or absent: the loop samples them
#
# This module holds what both share: clocks, storage, the board; the shift-register reader
# (hal/pegs.py: it takes callables, so the sim drives it with a modelled chain and the ESP32
# with machine.Pin) and the key matrix (hal/keypad.py) load only on a board that has them.
# It never imports `machine`. boardconfig is imported only while a board is being built, so an
# app short of RAM can drop that module once the board exists.

import os
import time

WIDTH = 128
HEIGHT = 64

# MicroPython's ticks wrap at 2**30 on every port; virtual clocks wrap the same way so that code
# using ticks_diff is tested against the wrap it meets on the board.
TICKS_PERIOD = 1 << 30
_TICKS_MAX = TICKS_PERIOD - 1
_TICKS_HALF = TICKS_PERIOD // 2


def ticks_diff(a, b):
    """a - b in ms, correct across the wrap (like time.ticks_diff)."""
    return ((a - b + _TICKS_HALF) & _TICKS_MAX) - _TICKS_HALF


def ticks_add(t, delta):
    return (t + delta) & _TICKS_MAX


class RealClock:
    """Wall-clock ticks: time.ticks_ms on MicroPython, time.monotonic on CPython."""

    def __init__(self):
        self._ticks = getattr(time, "ticks_ms", None)
        self._sleep = getattr(time, "sleep_ms", None)

    def ticks_ms(self):
        if self._ticks is not None:
            return self._ticks()
        return int(time.monotonic() * 1000) & _TICKS_MAX  # type: ignore[attr-defined]  # CPython

    def sleep_ms(self, ms):
        if self._sleep is not None:
            self._sleep(ms)
        else:
            time.sleep(ms / 1000)

    def ticks_diff(self, a, b):
        return ticks_diff(a, b)

    def ticks_add(self, t, delta):
        return ticks_add(t, delta)


class Storage:
    """The journal's directory (ESP32: /journal on LittleFS), created if missing."""

    def __init__(self, root):
        root = root.rstrip("/") or "/"
        self.root = root
        path = ""
        for part in root.split("/"):
            if not part:
                continue
            path += "/" + part if (path or root.startswith("/")) else part
            try:
                os.stat(path)
            except OSError:
                os.mkdir(path)

    def path(self, name):
        return self.root + "/" + name

    def listdir(self):
        return sorted(os.listdir(self.root))

    def free_bytes(self):
        st = os.statvfs(self.root)
        return (st[1] or st[0]) * st[4]  # fragment size (else block size) * blocks available


def framebuffer(buf, width=WIDTH, height=HEIGHT):
    """A MONO_VLSB FrameBuffer over buf (the SSD1306's page layout); a stand-in on CPython."""
    try:
        import framebuf
    except ImportError:
        from .pyframebuf import PyFrameBuffer
        return PyFrameBuffer(buf, width, height)
    return framebuf.FrameBuffer(buf, width, height, framebuf.MONO_VLSB)


class NullDisplay:
    """A board without a working display: draws into RAM, shows nothing, so play goes on."""

    def __init__(self, width=WIDTH, height=HEIGHT):
        self.width = width
        self.height = height
        self.buf = bytearray(width * height // 8)
        self.fb = framebuffer(self.buf, width, height)

    def fill(self, c):
        self.fb.fill(c)

    def text(self, s, x, y, c=1):
        self.fb.text(s, x, y, c)

    def show(self):
        pass

    def contrast(self, level):
        pass

    def power(self, on):
        pass

    def invert(self, on):
        pass


class Board:
    """What the layers above get from a hal: see the top of this module."""

    analog = None  # pockets' colour sensors: read(i) -> 0..4095, or None if none
    nvs = None  # esp32.NVS("chalk"), or the simulated board's (hal/simnvs.py)

    def __init__(self, cfg, lines, pegs, display, clock, storage):
        from .. import boardconfig

        self.cfg = cfg
        self.lines = lines
        self.pegs = pegs
        self.display = display
        self.clock = clock
        self.storage = storage
        self.keypad = None  # a hal Keypad on a scorepad, set by the hal that builds the board
        self.line_names = boardconfig.line_names(cfg)
        self.problems = []
        self.device_id = None  # unique per board (the archive tells boards apart by it)
        self.baud = 0  # the link's UART speed, which the main loop paces its writes to (0: none)

    def watchdog(self, timeout_ms):
        """A started watchdog (feed(), release()) the main loop feeds every scan, or None."""
        return None

    def random(self, n):
        """n bytes from the board's random number generator (the signing key is made of them)."""
        return os.urandom(n)
