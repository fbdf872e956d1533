# The main loop at rest (tests/test_rest.py): a simulated board plays a trace of a few presses
# for some seconds while the host says nothing. Prints one JSON object: the loop's passes, the
# sleeps an input ended (not their time), those the loop slept again after without a pass (none
# is right), the events and heartbeats it sent, and the longest the host went without a frame.
# With COMMAND, the host sends that command (no arguments) once, AT ms after the start.
#
#   micropython rest_check.py BOARD.json FLASH TRACE SECONDS [COMMAND AT]

import json
import select
import sys
import time

from heard import frames_in

from scoreboard import frames
from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, TracePlayer
from scoreboard.serve import serve


class Host:
    """Says nothing for `seconds`, then asks for the REPL; sleeps as serve.Stdin does."""

    def __init__(self, seconds, command=None, at=0):
        self.stop = False
        self._command = command
        self._at = at
        self._end = None
        self._seconds = seconds
        self._poll = select.poll()
        self._woken = None
        self.waits = 0
        self.woken_waits = 0  # sleeps that ended with the flag set (an input changed)
        self.woke = False  # the latest sleep did: the next pass must look at the lines
        self.late = 0  # sleeps an input ended that the loop went back to before a pass

    def watch(self, woken):
        self._woken = woken
        return woken.register(self._poll)

    def wait(self, ms):
        self.waits += 1
        if self.woke:
            self.late += 1
        self._poll.poll(ms)
        if self._woken is not None and self._woken.flag:
            self.woken_waits += 1
            self._woken.clear()
            self.woke = True
            return True
        return False

    def read(self, limit=256):
        now = time.ticks_ms()
        if self._end is None:
            self._end = time.ticks_add(now, int(self._seconds * 1000))
        if time.ticks_diff(now, self._end) >= 0:
            self.stop = True
            return b"\r\x03"
        start = time.ticks_add(self._end, -int(self._seconds * 1000))
        if self._command and time.ticks_diff(now, start) >= self._at:
            line = frames.encode(7, self._command, {})
            self._command = None
            return line.encode()
        return b""


def main(cfg, flash, trace, seconds, command=None, at=0):
    board = SimBoard(cfg, flash)
    player = TracePlayer(board, open(trace, "rb"))
    host = Host(seconds, command, at)
    passes = [0]
    tick = App.tick

    def counted(app):
        passes[0] += 1
        host.woke = False
        tick(app)

    App.tick = counted
    lines = frames.Lines(4096)
    sent = []
    heard = [None, 0]  # the latest frame's time, the longest time between two

    def write(s):
        for f in frames_in(lines, s):
            now = time.ticks_ms()
            if heard[0] is not None:
                heard[1] = max(heard[1], time.ticks_diff(now, heard[0]))
            heard[0] = now
            if f[1] in ("ok", "err", "sig"):
                sent.append(f[1])
            if f[1] in ("event", "beat"):
                sent.append(f[1] if f[1] == "beat" else f[2]["kind"])

    try:
        serve(board, trace=player, stdin=host, write=write)
    except KeyboardInterrupt:
        pass
    print(json.dumps({"passes": passes[0], "waits": host.waits, "woken": host.woken_waits,
                      "late": host.late, "sent": sent, "silence_ms": heard[1]}))


main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]),
     *((sys.argv[5], int(sys.argv[6])) if len(sys.argv) > 6 else ()))
