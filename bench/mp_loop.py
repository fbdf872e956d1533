# The start-up the main-loop benches on MicroPython share (mp_gaps.py, mp_sign.py): a simulated
# board on a model clock, a host that drives its link one command at a time, and the real loop
# (serve()) run with the longest gap between two of its scans measured over the host's commands.
#
# The model clock moves with the CPU time this machine really takes, plus the time the board's
# I/O would take (what a caller charges with cost_us: every character the link writes costs what
# a 115200-baud UART, 8N1, takes to send it). Sleeping moves the clock at once.
#
# Imported by a bench script once it has put the firmware (MPY_DIR) on sys.path; MicroPython
# puts the script's own folder there, so this module is found beside it.

import time

from scoreboard import frames
from scoreboard.hal import ticks_add, ticks_diff

BAUD = 115200
RESEND_US = 2000000  # a command unanswered this long (model time) is sent again


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


def board(cfg, flash):
    """A simulated board on a new model clock, its UART at BAUD: (board, clock)."""
    from scoreboard.hal.sim import SimBoard

    clock = ModelClock()
    b = SimBoard(cfg, flash, clock)
    b.baud = BAUD
    return b, clock


class Host:
    """Stands in for the host: lets the loop run `warmup_us` alone, then sends one command at a
    time, each once the last was answered, and ends the loop (CR Ctrl-C) 50 ms after the last
    reply, so the gap the last command made is measured up to the scan after it. `window`: the
    (start, end) model-clock us of the commands. A subclass may wait for more than the reply
    (frame())."""

    def __init__(self, clock, commands, warmup_us):
        self.clock = clock
        self.commands = list(commands)
        self.warmup_us = warmup_us
        self.lines = frames.Lines()
        self.waiting = None  # the id of the command whose reply is awaited
        self.stop = False
        self.window = None
        self.first = None  # when the loop first read
        self.sent = 0  # characters the board wrote
        self.last = None  # the command awaited, and when it was sent
        self.asked = 0
        self.resent = 0  # commands sent again (their reply never came)

    def write(self, s):
        self.clock.cost_us(len(s) * 10 * 1000000 // BAUD)
        self.sent += len(s)
        for line in self.lines.feed(s):
            try:
                f = frames.decode(line)
            except (frames.Corrupt, frames.WrongVersion):
                continue
            if f is not None:
                self.frame(f)

    def frame(self, f):
        """A frame the board sent: the reply to the command awaited ends the wait."""
        if f[1] in ("ok", "err") and f[2].get("id") == self.waiting:
            self.waiting = None

    def read(self, limit=256):
        if self.waiting is not None:
            # A command whose reply never came (a board short of heap drops a step's work: the
            # host sends it again, as chalk does after its timeout): sent again, counted.
            if type(self.waiting) is int and self.clock.now_us() - self.asked > RESEND_US:
                self.resent += 1
                self.asked = self.clock.now_us()
                return frames.encode(self.waiting, self.last[0], self.last[1]).encode()
            return b""
        now = self.clock.now_us()
        if self.first is None:
            self.first = now
        if self.window is None and now - self.first < self.warmup_us:
            return b""
        if not self.commands:
            if self.window[1] is None:
                self.window = (self.window[0], now)
            if now - self.window[1] < 50000:
                return b""
            self.stop = True
            return b"\r\x03"
        cid = 1000 - len(self.commands)
        cmd, args = self.commands.pop(0)
        if self.window is None:
            self.window = (now, None)
        self.waiting = cid
        self.last = (cmd, args)
        self.asked = now
        return frames.encode(cid, cmd, args).encode()


def run(board, host, hist=None):
    """The real loop (serve(), test mode) with `host` on its link, until the host ends it, its
    lines scanned on every pass (no sampling on edges: the gaps measured are the loop's steps;
    sampled, App.scan would not run and no gap would be seen). The gaps between scans are
    measured on the fly (no list: the heap is the board's) from the last
    scan before the first command to the first scan after the last reply: {"gap_us": the
    longest, "scans": how many}; `hist` (an array of 101 ints), if given, counts them by whole
    ms (its last entry: 100 ms or more)."""
    from scoreboard import serve as serve_mod
    from scoreboard.app import App

    clock = host.clock
    st = {"prev": None, "gap_us": 0, "scans": 0}
    orig_scan = App.scan

    def scan(self, t):
        now = clock.now_us()
        prev = st["prev"]
        w = host.window
        if prev is not None and w is not None and (w[1] is None or prev <= w[1]):
            if now - prev > st["gap_us"]:
                st["gap_us"] = now - prev
            st["scans"] += 1
            if hist is not None:
                hist[min(100, (now - prev) // 1000)] += 1
        st["prev"] = now
        orig_scan(self, t)

    App.scan = scan
    orig_sampling = App.start_sampling
    App.start_sampling = lambda self, callback=None: None
    try:
        serve_mod.serve(board, test_mode=True, stdin=host, write=host.write)
    except KeyboardInterrupt:
        pass
    finally:
        App.scan = orig_scan
        App.start_sampling = orig_sampling
    return {"gap_us": st["gap_us"], "scans": st["scans"]}
