# The longest gap between two scans of the board's main loop (serve()), on MicroPython.
#
# usage: micropython mp_gaps.py MPY_DIR MODE BOARD.json FLASH_DIR PACED
#        (MODE: resync | undos | redraw; MPY_DIR: the firmware as portable .mpy, as the sim has it)
#
# The loop runs for real (link, app, journal on files, rules) on a model clock: it moves with the
# CPU time this machine really takes, plus the time the board's I/O would take: every character
# the link writes costs what a 115200-baud UART (8N1) takes to send it, every I2C byte to the
# OLED what a 400 kHz bus takes (9 bits). Sleeping moves the clock at once. PACED 0 runs the link
# and the display as they were before the loop paced them (everything written within the
# command, the whole screen in one show()), for comparison. Prints one JSON object.

import sys

sys.path.insert(0, sys.argv[1])

import json  # noqa: E402
import time  # noqa: E402

from scoreboard import frames  # noqa: E402
from scoreboard.hal import ticks_add, ticks_diff  # noqa: E402
from scoreboard.hal.sim import SimBoard  # noqa: E402

BAUD = 115200
I2C_HZ = 400000


class ModelClock:
    def __init__(self):
        self.us = 0
        self.last = time.ticks_us()

    def _sync(self):
        now = time.ticks_us()
        self.us += time.ticks_diff(now, self.last)
        self.last = now

    def cost_us(self, us):
        self._sync()
        self.us += us

    def now_us(self):
        self._sync()
        return self.us

    def ticks_ms(self):
        return (self.now_us() // 1000) & 0x3FFFFFFF

    def sleep_ms(self, ms):
        self.cost_us(ms * 1000)

    def ticks_diff(self, a, b):
        return ticks_diff(a, b)

    def ticks_add(self, t, delta):
        return ticks_add(t, delta)


class ModelI2C:
    """An SSD1306's bus: each byte costs 9 bits at I2C_HZ (plus address and start/stop)."""

    def __init__(self, clock):
        self.clock = clock

    def writeto(self, addr, buf):
        self.clock.cost_us((len(buf) + 1) * 9 * 1000000 // I2C_HZ + 10)

    def writevto(self, addr, vector):
        n = 1
        for b in vector:
            n += len(b)
        self.clock.cost_us(n * 9 * 1000000 // I2C_HZ + 10)


class Host:
    """Stands in for the host: sends one command at a time, each once the last was answered,
    and ends the loop (CR Ctrl-C) after the last."""

    def __init__(self, clock, commands):
        self.clock = clock
        self.commands = list(commands)
        self.lines = frames.Lines()
        self.waiting = None
        self.stop = False
        self.prev = b""
        self.window = None  # (start us, end us) of the commands
        self.first = None  # when the loop first read
        self.sent = 0

    def write(self, s):
        self.clock.cost_us(len(s) * 10 * 1000000 // BAUD)
        self.sent += len(s)
        for line in self.lines.feed(s):
            try:
                f = frames.decode(line)
            except (frames.Corrupt, frames.WrongVersion):
                continue
            if f is not None and f[1] in ("ok", "err") and f[2].get("id") == self.waiting:
                self.waiting = None

    def read(self, limit=256):
        if self.waiting is not None:
            return b""
        if self.first is None:
            self.first = self.clock.now_us()
        if self.window is None and self.clock.now_us() - self.first < 100000:
            return b""  # the loop runs 100 ms first: the gap before the first command counts
        if not self.commands:
            # The last reply is in: the window ends here, and the loop runs 50 ms more, so the
            # gap the last command made is measured up to the scan after it.
            if self.window[1] is None:
                self.window = (self.window[0], self.clock.now_us())
            if self.clock.now_us() - self.window[1] < 50000:
                return b""
            self.stop = True
            return b"\r\x03"
        cid = 1000 - len(self.commands)
        cmd, args = self.commands.pop(0)
        if self.window is None:
            self.window = (self.clock.now_us(), None)
        self.waiting = cid
        return frames.encode(cid, cmd, args).encode()


def main(mode, cfg, flash, paced):
    from scoreboard import serve as serve_mod
    from scoreboard.app import App

    clock = ModelClock()
    board = SimBoard(cfg, flash, clock)
    board.baud = BAUD
    if mode == "redraw":
        from scoreboard.hal.ssd1306 import SSD1306

        board.display = SSD1306(ModelI2C(clock))
    if mode == "resync":
        commands = [("journal", {"after": 0})]
    elif mode == "undos":
        commands = [("act", {"action": {"a": "undo"}})] * 20
    else:  # redraw: service view on and off, each a whole new screen
        commands = [("service", {"on": i % 2 == 0}) for i in range(20)]

    # Gaps measured on the fly (no list: the heap is the board's): from the last scan before
    # the first command to the first scan after the last reply.
    from array import array

    st = {"prev": None, "gap": 0, "scans": 0, "host": None}
    hist = array("i", [0] * 101)  # gaps by whole ms (the last bucket: 100 ms or more)
    orig_scan = App.scan

    def scan(self, t):
        now = clock.now_us()
        prev = st["prev"]
        w = st["host"].window
        if prev is not None and w is not None and (w[1] is None or prev <= w[1]):
            if now - prev > st["gap"]:
                st["gap"] = now - prev
            st["scans"] += 1
            hist[min(100, (now - prev) // 1000)] += 1
        st["prev"] = now
        orig_scan(self, t)

    App.scan = scan
    # The loop's own scans, every pass (no sampling on edges, no rest): the gaps measured are
    # the loop's steps.
    App.start_sampling = lambda self, callback=None: None
    if not paced:
        serve_mod._budget = lambda board, step: None  # everything written within the command
        from scoreboard.display import Display

        orig_init = Display.__init__

        def init(self, hal):
            orig_init(self, hal)
            self._paged = False

        Display.__init__ = init
    host = Host(clock, commands)
    st["host"] = host
    try:
        serve_mod.serve(board, test_mode=True, stdin=host, write=host.write)
    except KeyboardInterrupt:
        pass
    start, end = host.window
    # The 99th percentile gap (whole ms): what the loop does, with rare outliers (this
    # machine's other work landing in a gap) left out.
    k = 0
    p99 = 0
    for ms in range(101):
        k += hist[ms]
        if k * 100 >= st["scans"] * 99:
            p99 = ms + 1
            break
    print(json.dumps({"gap_us": st["gap"], "scans": st["scans"], "p99_ms": p99,
                      "span_us": end - start, "chars": host.sent,
                      "scan_ms": board.cfg["timings"]["scan_ms"]}))

main(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1")
