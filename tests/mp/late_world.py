# A simulated board whose world (its trace) moves late (tests/test_late_world.py): the thread
# that applies the trace wakes only every LATE ms, as a busy machine's scheduler may let it,
# and applies what came due meanwhile, each change stamped with its own time, while the host
# keeps the loop looking at the lines (a `hello` every 20 ms). Prints one JSON object: the
# press events and actions the board sent.
#
#   micropython late_world.py BOARD.json FLASH TRACE SECONDS LATE

import json
import select
import sys
import time

from heard import frames_in

from scoreboard import frames
from scoreboard.hal import simtimer
from scoreboard.hal.sim import SimBoard, TracePlayer
from scoreboard.serve import serve

LATE = int(sys.argv[5])


class LateTimer(simtimer.SimTimer):
    """The world's thread, waking every LATE ms whatever is due."""

    def __init__(self, period_ms, callback, due=None):
        super().__init__(LATE, callback, None)


simtimer.SimTimer = LateTimer


class Host:
    """A `hello` every 20 ms for `seconds`, then asks for the REPL."""

    def __init__(self, seconds):
        self.stop = False
        self._end = None
        self._seconds = seconds
        self._next = None
        self._n = 0
        self._poll = select.poll()

    def wait(self, ms):
        self._poll.poll(min(ms, 20))
        return False

    def read(self, limit=256):
        now = time.ticks_ms()
        if self._end is None:
            self._end = time.ticks_add(now, int(self._seconds * 1000))
            self._next = now
        if time.ticks_diff(now, self._end) >= 0:
            self.stop = True
            return b"\r\x03"
        if time.ticks_diff(now, self._next) >= 0:
            self._next = time.ticks_add(now, 20)
            self._n = self._n % 900 + 1
            return frames.encode(self._n, "hello", {}).encode()
        return b""


def main(cfg, flash, trace, seconds):
    board = SimBoard(cfg, flash)
    player = TracePlayer(board, open(trace, "rb"))
    lines = frames.Lines(4096)
    sent = {"press": 0, "actions": 0}

    def write(s):
        for f in frames_in(lines, s):
            if f[1] == "event" and f[2].get("kind") == "press":
                sent["press"] += 1
            elif f[1] in ("a", "rec"):
                sent["actions"] += 1

    try:
        serve(board, trace=player, stdin=Host(seconds), write=write)
    except KeyboardInterrupt:
        pass
    sent["applied"] = player.applied
    print(json.dumps(sent))


main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]))
