# The board's signing on MicroPython: how long a signature takes, and the longest gap between
# two scans of the main loop (serve()) while it signs.
#
# usage: micropython mp_sign.py MPY_DIR time
#        micropython mp_sign.py MPY_DIR gaps BOARD.json FLASH_DIR SIGNATURES
#
# time: one ECDSA P-256 signature (RFC 6979 A.2.5's key and message) and one public key, each
# stepped to its end as the main loop steps them; the longest single step. gaps: the real loop
# (link, app, journal on files, the signer) on a model clock that moves with this machine's CPU
# time plus what a 115200-baud UART takes to send what the link writes; a host asks the board
# to sign its head after each of SIGNATURES shots, waiting for each `sig` frame. Prints JSON.

import sys

sys.path.insert(0, sys.argv[1])

import json  # noqa: E402
import time  # noqa: E402

BAUD = 115200


def timing():
    import hashlib

    from scoreboard import p256

    x = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
    h = hashlib.sha256(b"sample").digest()
    out = {}
    for name, gen in (("pub", lambda: p256.mul(x)), ("sign", lambda: p256.sign(x, h))):
        best = None
        for _ in range(3):
            g = gen()
            steps = 0
            longest = 0
            t0 = time.ticks_us()
            try:
                while True:
                    a = time.ticks_us()
                    next(g)
                    d = time.ticks_diff(time.ticks_us(), a)
                    longest = d if d > longest else longest
                    steps += 1
            except StopIteration:
                pass
            total = time.ticks_diff(time.ticks_us(), t0)
            if best is None or total < best[0]:
                best = (total, steps, longest)
        out[name + "_us"], out[name + "_steps"], out[name + "_step_us"] = best
    return out


class ModelClock:
    def __init__(self):
        self.us = 0
        self.last = time.ticks_us()

    def cost_us(self, us):
        self.now_us()
        self.us += us

    def now_us(self):
        now = time.ticks_us()
        self.us += time.ticks_diff(now, self.last)
        self.last = now
        return self.us

    def ticks_ms(self):
        return (self.now_us() // 1000) & 0x3FFFFFFF

    def sleep_ms(self, ms):
        self.cost_us(ms * 1000)

    def ticks_diff(self, a, b):
        from scoreboard.hal import ticks_diff

        return ticks_diff(a, b)

    def ticks_add(self, t, delta):
        from scoreboard.hal import ticks_add

        return ticks_add(t, delta)


class Host:
    """Sends a shot, then `sign`, and waits for the board's `sig` frame; SIGNATURES times; then
    ends the loop (CR Ctrl-C)."""

    def __init__(self, clock, n):
        from scoreboard import frames

        self.frames = frames
        self.clock = clock
        self.lines = frames.Lines()
        self.todo = []
        for i in range(n):
            self.todo.append(("act", {"action": {"a": "shot", "player": i % 2, "pins": "",
                                                 "carom": 0, "fouls": []}}))
            self.todo.append(("sign", {}))
        self.todo.insert(0, ("act", {"action": {"a": "break", "player": 0}}))
        self.waiting = None  # a command id, or "sig"
        self.stop = False
        self.window = None
        self.first = None
        self.signed = 0

    def write(self, s):
        self.clock.cost_us(len(s) * 10 * 1000000 // BAUD)
        for line in self.lines.feed(s):
            try:
                f = self.frames.decode(line)
            except (self.frames.Corrupt, self.frames.WrongVersion):
                continue
            if f is None:
                continue
            if f[1] in ("ok", "err") and f[2].get("id") == self.waiting:
                pending = f[1] == "ok" and f[2]["result"].get("pending")
                self.waiting = "sig" if pending else None
            elif f[1] == "sig" and self.waiting == "sig":
                self.waiting = None
                self.signed += 1

    def read(self, limit=256):
        if self.waiting is not None:
            return b""
        now = self.clock.now_us()
        if self.first is None:
            self.first = now
        if self.window is None and now - self.first < 300000:
            return b""  # the board's own key pair made first (its first boot)
        if not self.todo:
            if self.window[1] is None:
                self.window = (self.window[0], now)
            if now - self.window[1] < 50000:
                return b""
            self.stop = True
            return b"\r\x03"
        cid = 1000 - len(self.todo)
        cmd, args = self.todo.pop(0)
        if self.window is None:
            self.window = (now, None)
        self.waiting = cid
        return self.frames.encode(cid, cmd, args).encode()


def gaps(cfg, flash, n):
    from scoreboard import serve as serve_mod
    from scoreboard.app import App
    from scoreboard.hal.sim import SimBoard

    clock = ModelClock()
    board = SimBoard(cfg, flash, clock)
    board.baud = BAUD
    st = {"prev": None, "gap": 0, "scans": 0}
    host = Host(clock, n)
    orig_scan = App.scan

    def scan(self, t):
        now = clock.now_us()
        prev = st["prev"]
        w = host.window
        if prev is not None and w is not None and (w[1] is None or prev <= w[1]):
            if now - prev > st["gap"]:
                st["gap"] = now - prev
            st["scans"] += 1
        st["prev"] = now
        orig_scan(self, t)

    App.scan = scan
    try:
        serve_mod.serve(board, test_mode=True, stdin=host, write=host.write)
    except KeyboardInterrupt:
        pass
    return {"gap_us": st["gap"], "scans": st["scans"], "signed": host.signed,
            "span_us": host.window[1] - host.window[0],
            "scan_ms": board.cfg["timings"]["scan_ms"]}


if sys.argv[2] == "time":
    print(json.dumps(timing()))
else:
    print(json.dumps(gaps(sys.argv[3], sys.argv[4], int(sys.argv[5]))))
