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


def gaps(cfg, flash, n):
    import mp_loop  # beside this script: the loop benches' shared start-up

    class Host(mp_loop.Host):
        """Sends a shot, then `sign`, and waits for the board's `sig` frame; `n` times."""

        def __init__(self, clock, n):
            commands = [("act", {"action": {"a": "break", "player": 0}})]
            for i in range(n):
                commands.append(("act", {"action": {"a": "shot", "player": i % 2, "pins": "",
                                                    "carom": 0, "fouls": []}}))
                commands.append(("sign", {}))
            # The board's own key pair is made first (its first boot): 300 ms alone.
            mp_loop.Host.__init__(self, clock, commands, 300000)
            self.signed = 0
            self.signing = None  # the id of the `sign` whose `sig` is awaited

        def frame(self, f):
            if f[1] in ("ok", "err") and f[2].get("id") == self.waiting:
                pending = f[1] == "ok" and f[2]["result"].get("pending")
                if pending:
                    self.signing = self.waiting
                    self.asked = self.clock.now_us()
                self.waiting = "sig" if pending else None
            elif f[1] == "sig" and self.waiting == "sig":
                self.waiting = None
                self.signed += 1

        def read(self, limit=256):
            if self.waiting == "sig" and self.clock.now_us() - self.asked > mp_loop.RESEND_US:
                # No `sig` yet: a board short of heap drops a signature's job (said in a warn)
                # and signs when asked again, as chalk asks again.
                self.waiting = self.signing
                self.asked -= 2 * mp_loop.RESEND_US  # (sent again at once, below)
            return mp_loop.Host.read(self, limit)

    board, clock = mp_loop.board(cfg, flash)
    host = Host(clock, n)
    st = mp_loop.run(board, host)
    return {"gap_us": st["gap_us"], "scans": st["scans"], "signed": host.signed,
            "resent": host.resent,
            "span_us": host.window[1] - host.window[0],
            "scan_ms": board.cfg["timings"]["scan_ms"]}


if sys.argv[2] == "time":
    print(json.dumps(timing()))
else:
    print(json.dumps(gaps(sys.argv[3], sys.argv[4], int(sys.argv[5]))))
