# Sensor traces on a simulated board (docs/sensor-trace.md): the reader that checks each line
# against the contract, and the player that sets a SimBoard's lines from a trace. Loaded by a
# board that plays a trace and by the host tools that check one (hal.sim finds these names
# here), so a simulated board that plays none keeps the RAM for play.

import json


def _q(v):
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


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
