"""Record at the table, replay at the desk: a real board's line changes as a sensor trace.

The board reports every raw line change with its own ms while its `record` mode is on
(docs/serial-protocol.md); TraceRecorder writes them as a sensor trace (docs/sensor-trace.md):
t counts from the moment recording started, lines already active then are written at t 0, and
the board goes on scoring meanwhile. `chalk sim --trace FILE` replays the file.
"""

import os
import time

from chalk import remote
from chalk.errors import ChalkError
from scoreboard.hal import ticks_diff
from scoreboard.hal.simtrace import format_record


def _peg_names(pegs):
    for side in (0, 1):
        bits = pegs[side]
        for i in range(27):
            if bits >> i & 1:
                yield "peg.%d.%d.%d" % (side, i // 3 + 1, i % 3 + 1)


class TraceRecorder:
    """Writes the line changes of a board (a BoardLink) to `out`, a text file."""

    def __init__(self, board, out):
        self.board = board
        self.out = out
        self.t0 = None
        self.last = 0
        self.changes = 0
        self.lost = 0  # changes the board had no room for
        self.frames_lost = 0  # frames lost on the line (gaps in the board's frame numbers)

    def start(self, timeout=5.0):
        res = self.board.request("record", {"on": True}, timeout=timeout)
        self.t0 = res["t"]
        lines = res.get("lines") or {}
        for name in sorted(k for k in lines if k != "pegs"):
            if lines[name]["v"]:
                self._write(0, name, 1)
        for name in _peg_names(lines.get("pegs") or [0, 0]):
            self._write(0, name, 1)
        return res

    def _write(self, t, name, v):
        self.out.write(format_record(t, name, v) + "\n")
        self.out.flush()
        self.changes += 1

    def take(self, f):
        """Handle one unsolicited frame; True if it was a line change."""
        if f.type == "warn" and type(f.payload.get("lost")) is int:
            self.lost = f.payload["lost"]
            return False
        if f.type != "line":
            return False
        p = f.payload
        if type(p.get("t")) is not int or type(p.get("line")) is not str or \
                p.get("v") not in (0, 1):
            return False
        # The board's ms wrap at 2**30 like ticks_ms(); a change can never be before the start,
        # nor (merged from two rings) before the one written last.
        t = max(ticks_diff(p["t"], self.t0), self.last)
        self.last = t
        self._write(t, p["line"], p["v"])
        return True

    def run(self, stop=None, seconds=None, on_change=None):
        """Take frames until `stop` (an Event) is set, `seconds` pass, or Ctrl-C."""
        end = None if seconds is None else time.monotonic() + seconds
        try:
            while (stop is None or not stop.is_set()) and (end is None or
                                                          time.monotonic() < end):
                f = self.board.poll(0.1)
                if f is not None and self.take(f) and on_change is not None:
                    on_change(self.changes)
        except KeyboardInterrupt:
            pass

    def finish(self, timeout=5.0):
        """Turn recording off on the board (the board goes back to scoring only)."""
        self.board.request("record", {"on": False}, timeout=timeout)


def record(port, path, seconds=None, stop=None, say=None):
    """`chalk record`: the board's line changes into `path`, until Ctrl-C (or `seconds`).

    The trace is written to PATH.part and renamed PATH at the end, so PATH is never half a
    file; what was recorded up to a lost connection is kept. Returns the number of changes."""
    path = os.fspath(path)
    part = path + ".part"
    try:
        out = open(part, "w", encoding="utf-8")
    except OSError as e:
        raise ChalkError("cannot write %s: %s" % (path, e.strerror or e),
                         "give a path in a directory you can write to")
    rec = None
    try:
        with out, remote.connect(port) as board:
            rec = TraceRecorder(board, out)
            rec.start()
            if say:
                say("recording the lines of the board on %s into %s; Ctrl-C to stop"
                    % (board.port, path))
            try:
                rec.run(stop=stop, seconds=seconds)
            finally:
                rec.frames_lost = board.stats()["lost"]
                try:
                    rec.finish()
                except ChalkError:
                    pass  # the board is gone: it turns recording off when it reboots
    except OSError as e:  # the disk full (or gone) under the trace: no half file is left
        rec = None
        from chalk import atomic

        raise atomic.problem(path, e) from None
    finally:
        if rec is not None and rec.t0 is not None:
            os.replace(part, path)  # a whole trace up to here, even after a lost connection
        else:
            try:
                os.remove(part)  # no board, or it refused: no file at all
            except OSError:
                pass
    if rec.lost and say:
        say("warning: the board lost %d line changes (the link was too slow)" % rec.lost)
    if rec.frames_lost and say:
        say("warning: %d frames from the board were lost on the line: the trace may miss "
            "changes" % rec.frames_lost)
    return rec.changes
