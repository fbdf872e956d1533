"""LineHealth and PegGrid skip their loops over waiting lines until the earliest of them can end
(a scan of a bouncing, held or chattering line stays cheap on the chip). Checked here against a
plain model of the same rules that looks at every line at every scan: random levels (bounces,
bursts of chatter, holds long enough to be stuck, pegs in and out), the same events in the same
order, the same faulty lines after every scan.
"""

import random
from array import array

import pytest

from scoreboard.sense import CHATTER, FAULT, HEALTHY, PEG, STUCK, EventRing, LineHealth, PegGrid
from scoreboard.sense.events import elapsed


class PlainHealth:
    """Every line judged at every scan (docs/sensing.md: lock-out, chatter window, stuck)."""

    def __init__(self, count, stuck_ms, chatter_edges, window, debounce_ms):
        self.n = count
        self.stuck_ms = stuck_ms
        self.k = chatter_edges + 1 if chatter_edges > 0 else 0
        self.window = window
        self.db = debounce_ms
        self.lvl = [0] * count
        self.last = [0] * count
        self.on = [0] * count
        self.lock = [False] * count
        self.recent = [False] * count
        self.timing = [False] * count
        self.stuck = [False] * count
        self.chatter = [False] * count
        self.edges = [[] for _ in range(count)]  # edge times inside the window
        self.events = []

    def tick(self, t, raw):
        t &= 0x3FFFFFFF
        was = [s or c for s, c in zip(self.stuck, self.chatter)]
        old_stuck = list(self.stuck)
        old_chatter = list(self.chatter)
        for i in range(self.n):
            if self.recent[i] and elapsed(t, self.last[i]) >= self.window:
                self.recent[i] = False
                self.chatter[i] = False
                self.edges[i] = []
            if self.lock[i] and elapsed(t, self.last[i]) >= self.db:
                self.lock[i] = False
            level = raw >> i & 1
            if level != self.lvl[i] and not self.lock[i]:
                self.lvl[i] = level
                self.lock[i] = self.db > 0
                self.last[i] = t
                self.recent[i] = True
                if level:
                    self.on[i] = t
                    self.timing[i] = True
                else:
                    self.timing[i] = False
                    self.stuck[i] = False
                if self.k:
                    self.edges[i] = (self.edges[i] + [t])[-self.k:]
                    if len(self.edges[i]) >= self.k and elapsed(
                            t, self.edges[i][0]) < self.window:
                        self.chatter[i] = True
            if self.stuck_ms > 0 and self.timing[i] and elapsed(t, self.on[i]) >= self.stuck_ms:
                self.stuck[i] = True
                self.timing[i] = False
        for i in range(self.n):
            now = self.stuck[i] or self.chatter[i]
            if self.stuck[i] and not old_stuck[i]:
                self.events.append((FAULT, i, STUCK, t))
            if self.chatter[i] and not old_chatter[i]:
                self.events.append((FAULT, i, CHATTER, t))
            if was[i] and not now:
                self.events.append((FAULT, i, HEALTHY, t))

    def faulty(self):
        return sum(1 << i for i in range(self.n) if self.stuck[i] or self.chatter[i])


class PlainGrid:
    """Every hole judged at every scan: a hole reading differently for debounce_ms changes."""

    def __init__(self, debounce_ms):
        self.db = debounce_ms
        self.stable = [0, 0]
        self.since = {}
        self.events = []

    def tick(self, t, a, b):
        t &= 0x3FFFFFFF
        for side, raw in ((0, a), (1, b)):
            for i in range(27):
                key = (side, i)
                differs = (raw ^ self.stable[side]) >> i & 1
                if not differs:
                    self.since.pop(key, None)
                    continue
                self.since.setdefault(key, t)
                if elapsed(t, self.since[key]) >= self.db:
                    self.stable[side] ^= 1 << i
                    del self.since[key]
                    self.events.append((PEG, side * 27 + i, self.stable[side] >> i & 1, t))


def _drained(ring):
    out = []
    ev = array("i", [0, 0, 0, 0])
    while ring.pop_into(ev):
        out.append(tuple(ev))
    return out


def _levels(rng, lines, scans, hold_ms):
    """Levels a scan: lines that bounce, chatter in bursts, and now and then stay active long."""
    raw = 0
    out = []
    for s in range(scans):
        for i in range(lines):
            r = rng.random()
            if r < 0.04:  # an edge
                raw ^= 1 << i
            elif r < 0.05:  # a burst: the line toggles each scan for a while
                raw ^= 1 << i
            elif r < 0.052 and s % 97 == 0:  # held active (stuck, given long enough)
                raw |= 1 << i
        if rng.random() < 0.02:
            raw = 0  # all released
        out.append(raw)
    return out


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("debounce_ms", [0, 20])
def test_line_health_as_a_plain_scan_of_every_line(seed, debounce_ms):
    rng = random.Random(seed)
    lines = rng.choice([1, 5, 13, 27, 30])
    stuck_ms = rng.choice([0, 150, 600])
    edges = rng.choice([0, 3, 10])
    window = rng.choice([100, 400])
    ring = EventRing(4096)
    h = LineHealth(lines, stuck_ms=stuck_ms, chatter_edges=edges, chatter_window_ms=window,
                   ring=ring, debounce_ms=debounce_ms)
    ref = PlainHealth(lines, stuck_ms, edges, window, debounce_ms)
    t = rng.randint(0, 0x3FFFFFFF)  # wherever the clock is, its wrap included
    seen = []
    for raw in _levels(rng, lines, 3000, stuck_ms):
        t += rng.choice([1, 5, 5, 5, 7, 40])
        h.tick(t, raw)
        ref.tick(t, raw)
        seen += _drained(ring)
        assert h.faulty == ref.faulty(), "scan at %d" % t
        assert seen == ref.events
    # The model is not checked on silence: where the checks are on, faults come and go.
    if edges or stuck_ms:
        assert {e[2] for e in seen} & {STUCK, CHATTER} and HEALTHY in {e[2] for e in seen}


@pytest.mark.parametrize("seed", range(8))
def test_peg_grid_as_a_plain_scan_of_every_hole(seed):
    rng = random.Random(seed)
    db = rng.choice([25, 100, 300])
    ring = EventRing(4096)
    g = PegGrid(debounce_ms=db, ring=ring)
    ref = PlainGrid(db)
    t = rng.randint(0, 0x3FFFFFFF)
    a = b = 0
    seen = []
    for _ in range(4000):
        t += rng.choice([5, 5, 25, 60])
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            if rng.random() < 0.5:
                a ^= 1 << rng.randrange(27)
            else:
                b ^= 1 << rng.randrange(27)
        g.tick(t, a, b)
        ref.tick(t, a, b)
        seen += _drained(ring)
        assert seen == ref.events
        assert (g.side_bits(0), g.side_bits(1)) == tuple(ref.stable)
    assert len(seen) > 50  # pegs did settle, in and out
