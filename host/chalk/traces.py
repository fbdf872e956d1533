"""Sensor traces (docs/sensor-trace.md): build them from table moves, or from a match log.

A trace is what the board's lines did, `{"t": ms, "line": name, "v": 0|1}` per change. The
builder plays the people at the table: presses with contact bounce, pins that fall (and some that
stand up again, FP-19), pins that only wobble (FP-21), pegs put in and pulled. `from_matchlog`
turns a whole match log into the trace a scorer would produce for it, so a simulated board can
be checked against the rules: replaying the trace must give the log's final state. What a scorer
does at each game's table is that game's (chalk/games/: trace); Trace is the shared vocabulary.
"""

import json
import random

from chalk import games
from scoreboard import matchlog


class Trace:
    def __init__(self, seed=1, bounce=True, bounce_ms=None):
        self.t = 0
        self.records = []
        self.rng = random.Random(seed)
        self.bounce = bounce
        # (lo, hi): every edge of a press, a pin and a peg rattles two or four times, lo..hi ms
        # apart (a worn contact); None: presses get the fixed bounce below, pins and pegs none.
        self.bounce_ms = bounce_ms

    def edge(self, t, line, v):
        """An edge to `v` at t with random contact bounce; returns when it has settled."""
        self.at(t, line, v)
        if self.bounce_ms is None:
            return t
        lo, hi = self.bounce_ms
        for k in range(self.rng.choice((2, 4))):
            t += self.rng.randint(lo, hi)
            self.at(t, line, v if k % 2 else 1 - v)
        return t

    def at(self, t, line, v):
        self.records.append((t, line, v))

    def wait(self, ms):
        self.t += ms

    def set(self, line, v):
        self.at(self.t, line, v)

    def press(self, button, hold=90, after=150):
        """A button press with contact bounce on make and break."""
        line = "btn." + button
        t = self.t
        if self.bounce_ms is not None:
            self.edge(t, line, 1)
            self.edge(t + hold, line, 0)
            self.t = t + hold + after
            return
        if self.bounce:
            self.at(t, line, 1)
            self.at(t + 2, line, 0)
            self.at(t + 3, line, 1)
        else:
            self.at(t, line, 1)
        self.at(t + hold, line, 0)
        if self.bounce:
            self.at(t + hold + 1, line, 1)
            self.at(t + hold + 3, line, 0)
        self.t = t + hold + after

    def key(self, legend, hold=110, after=180):
        """A scorepad key press (line "key.<legend>"), with contact bounce on make and break."""
        line = "key." + legend
        t = self.t
        if self.bounce:
            self.at(t, line, 1)
            self.at(t + 3, line, 0)
            self.at(t + 5, line, 1)
        else:
            self.at(t, line, 1)
        self.at(t + hold, line, 0)
        if self.bounce:
            self.at(t + hold + 2, line, 1)
            self.at(t + hold + 4, line, 0)
        self.t = t + hold + after

    def keys(self, text, gap=(120, 400)):
        """Keys typed one after another, at a person's pace."""
        for ch in text:
            self.key(ch)
            self.wait(self.rng.randint(*gap))

    def long_press(self, button, hold=1200, after=200):
        self.press(button, hold=hold, after=after)

    def pin_fall(self, pin, at, down_for=None):
        """A pin leaves its base at `at`; stands again after `down_for` ms (None: stays down)."""
        self.edge(at, "pin." + pin, 1)
        if down_for is not None:
            self.edge(at + down_for, "pin." + pin, 0)

    def wobble(self, pin, at, ms=12):
        """A pin rocks without losing contact long enough to count (FP-21)."""
        self.edge(at, "pin." + pin, 1)
        self.edge(at + ms, "pin." + pin, 0)

    def pocket(self, n, at, colour=None, ms=30):
        """Something drops through pocket n's beam at `at` for `ms`; a colour sensor beside it
        reads `colour` (an ADC reading) while it passes, the dark throat (80) after."""
        if colour is not None:
            self.at(at, "colour.%d" % n, colour)
            self.at(at + ms, "colour.%d" % n, 80)
        self.at(at, "pocket.%d" % n, 1)
        self.at(at + ms, "pocket.%d" % n, 0)

    def lines(self):
        out = sorted(self.records, key=lambda r: r[0])
        return [json.dumps({"t": t, "line": line, "v": v}) for t, line, v in out]

    def write(self, path):
        from chalk import atomic

        atomic.write_file(path, "\n".join(self.lines()) + "\n")


def keypad_keys(game, action):
    """The keys a scorer types on a scorepad for one action (docs/scorepad.md)."""
    if action["a"] == "undo":
        return "D#"
    g = games.get(game)
    if not g.keypad:
        raise ValueError("no keys for %s action %r" % (game, action["a"]))
    return g.keys(action)


def from_matchlog(lines, seed=1, bounce_ms=None):
    """The sensor trace of a match log's actions (header excluded) as a Trace; bounce_ms=(lo, hi)
    rattles every press, pin and peg edge (Trace)."""
    log = matchlog.read(lines)
    if log.problems:
        raise ValueError("bad match log: %s" % log.problems[0][1])
    actions = [matchlog.strip_meta(r) for _, r in log.actions]
    for a in actions:
        a.pop("t", None)
    tr = Trace(seed, bounce_ms=bounce_ms)
    tr.wait(500)
    games.get(log.header["game"]).trace(tr, log.header, actions)
    tr.wait(3000)
    return tr
