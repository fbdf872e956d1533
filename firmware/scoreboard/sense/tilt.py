# The pin-fall latch of a table with a tilt switch in each pin (`count` pins; FP-18..FP-23 say
# what a fall is, and a table with more pins latches the same way).
#
# Input: one bit per pin, 1 while its tilt switch says the base is off the table (FP-18).
# An "off-run" is a stretch during which a pin stays off its base. A pin is DOWN when one of
# its off-runs lasts min_fall_ms or more inside the current shot window; it stays latched for
# that window even if it stands again (FP-19). A shorter run is a wobble and never counts
# (FP-21). Pins removed from their spot (FP-23, set_removed) are ignored entirely.
#
# The shot window opens on the first movement of a pin that leaves its base (a pin being stood
# up again opens nothing: that is the referee resetting the figure), or with open(t). It closes
# when no pin has moved for settle_ms, or with close(t); then SHOT carries the mask of latched
# pins (bit 0..3 = pins '1'..'4', bit 4 = 'C') and the latch starts afresh. Pins lying off
# their base when a window opens or closes are "spent": that run already happened (or counted),
# so only a new run, after the pin has stood min_fall_ms in one go, can count again (a switch
# dropout of a pin lying on the cloth is not the figure being set up).
#
# Closing with a pin mid-fall (FP-18): a pin that left its base before close(t) but has not yet
# been off min_fall_ms is given the rest of min_fall_ms to be latched. close() then returns
# CLOSING and the window stays open for those pins only: each one that stays off min_fall_ms is
# latched, one that stands again sooner was a wobble (FP-21). A pin whose contact rattled less
# than min_fall_ms before close(t) is waited for too (a toppling pin bounces on its base, and
# its counting run may start just after t). When none is left to wait for, or 2 x min_fall_ms
# after the close, the window shuts and SHOT (SHOT_CLOSED) carries the mask. Any other pin that
# leaves its base after close(t) is not this shot's: it opens the next window.
#
# Scans and interrupts. tick(t, raw) measures runs from scans: a run starts at the first scan
# that sees the pin off and ends at the first scan that sees it standing. A fall and return
# between two scans is invisible to scans, so an edge interrupt may call note_edge(line, t,
# level) with the pin's logical level read in the handler. The handler side keeps its own
# run measurement per pin, from edge timestamps: a 0->1 edge starts a run, a 1->0 edge ends
# it, and a finished run of min_fall_ms or more is recorded (start time + a counter). The next
# scan combines the two, OR-wise:
#   - a run the handler recorded counts (unless the pin is latched already or spent);
#   - when the handler saw a pin come back, its measurement alone decides that run (the
#     scans' estimate is only used for a return no edge reported);
#   - when a scan first sees a pin off and the handler saw it leave after the previous scan,
#     the run starts at the handler's time, not the scan's (the IRQ saw it go at t0 < t1);
#   - when a scan sees a pin still off after the handler saw it stand and leave again, the run
#     restarts at the handler's time of leaving (not for a spent pin: a pin lying on the cloth
#     must be seen standing by a scan before it can fall again, so switch noise never counts);
#   - any handler edge counts as movement (opens the window, holds off settling).
# Pass the level read in the handler: on the ESP32, Pin.irq handlers are scheduled and run a
# little after the edge, so t is when the handler ran and the level is the true level then;
# runs measured that way are off by at most the handler's delay. level=-1 (unknown) makes the
# handler assume each edge toggles the level; a dropped edge then inverts its idea of the level
# until a scan with no edge on that pin re-aligns it, so prefer passing the level.
# Callers read t before the lines. note_edge only stores small ints into preallocated arrays
# (its frame fits MicroPython's C-stack limit too), so it may run in any interrupt context. A
# handler that runs while tick() is reading the same pin can at worst lose that edge's
# timestamp; the level is still seen by the next scan.

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from array import array

from .events import PIN_DOWN, SHOT, SHOT_CLOSED, SHOT_SETTLED, EventRing, elapsed

_TMASK = const(0x3FFFFFFF)
_THALF = const(0x1FFFFFFF)
CLOSING = const(-2)  # close(): waiting for pins mid-fall; SHOT (SHOT_CLOSED) follows

# The default pin names: line i is PIN_NAMES[i], SHOT mask bit i. A tuple of names, not "1234C":
# a character taken out of a str by its index is a new name in the board's qstr pool, for good.
PIN_NAMES = ("1", "2", "3", "4", "C")


def pins_text(mask, names=PIN_NAMES):
    """'12C' for a mask (match-log form of the `pins` field). Allocates: not for hot code."""
    out = ""
    for i in range(len(names)):
        if (mask >> i) & 1:
            out += names[i]
    return out


class TiltLatch:
    def __init__(self, count=5, min_fall_ms=50, settle_ms=3000, ring=None, auto_open=True):
        if count < 1 or count > 30:
            raise ValueError("tilt: count must be 1..30, got %d" % count)
        self.ring = ring if ring is not None else EventRing(32)
        self._all = (1 << count) - 1
        self._count = count
        self._min = min_fall_ms
        self._settle = settle_ms
        self._auto = 1 if auto_open else 0
        self._lvl = 0  # levels at the previous scan (removed pins read 0)
        self._prev_t = 0  # time of the previous scan
        self._off = array("i", [0] * count)  # start of the current run of each pin off its base
        self._fall = array("i", [0] * count)  # start of the run that made a pin fall this scan
        self._latched = 0  # pins down in this window
        self._spent = 0  # pins off their base whose current run may not count
        self._stand = 0  # spent pins seen standing, not yet for min_fall_ms (set up again?)
        self._removed = 0  # FP-23
        self._resync = self._all  # pins whose level the next scan adopts silently
        self._open = 0
        self._move_t = 0  # last movement of any pin, while the window is open
        self._wait = 0  # closing: pins off their base at close(), not yet down (FP-18)
        self._late = 0  # closing: pins that left their base after close(): the next window's
        self._close_t = 0
        self._closing = 0
        self.windows = 0  # windows closed so far
        # Written by note_edge (interrupt side), read by tick.
        self._irq_used = 0  # note_edge was ever called: scans also look at the arrays below
        self._i_all = 0  # edges the handler noted (wraps); _s_all: as many as tick has seen
        self._s_all = 0
        self._i_lv = bytearray(count)  # handler's idea of the level
        self._i_run = array("i", [0] * count)  # handler's start of the current run
        self._i_fs = array("i", [0] * count)  # start of the latest run >= min_fall_ms
        self._i_fn = array("i", [0] * count)  # count of such runs (wraps)
        self._i_en = array("i", [0] * count)  # count of edges (wraps)
        self._i_t = array("i", [0] * count)  # time of the latest edge
        # What the scans have already taken from the handler.
        self._s_fn = array("i", [0] * count)
        self._s_en = array("i", [0] * count)

    # -- interrupt side ----------------------------------------------------------------------
    def note_edge(self, line, t, level=-1):
        """Record an edge of `line` at t ms; level = logical level read in the handler, or -1.

        Safe in a hard IRQ: no allocation, only small ints into preallocated arrays.
        """
        t &= _TMASK
        was = self._i_lv[line]
        if level < 0:
            level = 1 - was
        if level:
            if not was:
                self._i_run[line] = t
        elif was:
            r = self._i_run[line]
            if self._min <= ((t - r) & _TMASK) <= _THALF:
                self._i_fs[line] = r
                self._i_fn[line] = (self._i_fn[line] + 1) & _TMASK
        self._i_lv[line] = level
        self._i_t[line] = t
        self._i_en[line] = (self._i_en[line] + 1) & _TMASK
        self._irq_used = 1
        self._i_all = (self._i_all + 1) & _TMASK

    # -- scan side ---------------------------------------------------------------------------
    def quiet(self, raw):
        """True if ticks with these levels would do nothing until they change or an edge comes:
        no shot window open or closing, no pin off its base that could still count."""
        raw &= self._all & ~self._removed
        return (raw == self._lvl and not (self._open | self._closing | self._resync | self._stand)
                and not raw & ~(self._latched | self._spent) and self._i_all == self._s_all)

    def tick(self, t, raw):
        """Feed one scan: t in ms (read before the lines), raw = bitmap, 1 = off its base."""
        t &= _TMASK
        self._s_all = self._i_all
        raw &= self._all & ~self._removed
        if self._resync:
            self._adopt(t, raw)
        lvl = self._lvl
        latched = self._latched
        spent = self._spent
        use_irq = self._irq_used
        todo = (raw ^ lvl) | (raw & ~(latched | spent))
        if use_irq:
            todo = self._all & ~self._removed
        moved = 0
        departed = 0
        fell = 0
        stand = self._stand
        i = 0
        while todo:
            if todo & 1:
                b = 1 << i
                c = raw & b
                start = -1
                edges = 0
                if use_irq:
                    n = self._i_en[i]
                    if n != self._s_en[i]:
                        self._s_en[i] = n
                        edges = 1
                        moved |= b
                    n = self._i_fn[i]
                    if n != self._s_fn[i]:
                        self._s_fn[i] = n
                        if not (latched | spent) & b:
                            start = self._i_fs[i]  # a run the handler measured, maybe unseen
                if (lvl ^ c) & b:
                    moved |= b
                    if c:  # a scan sees it off its base for the first time
                        departed |= b
                        self._off[i] = t
                        if self._i_lv[i] and self._since(self._i_run[i], t):
                            # The handler saw it leave earlier (possibly just after the
                            # previous scan read the lines, so that edge was taken then).
                            self._off[i] = self._i_run[i]
                    else:  # standing again
                        # The handler, if it saw the return, measured this run exactly (and
                        # recorded it above if long enough); else the scans' estimate decides.
                        if (
                            start < 0
                            and not (edges and not self._i_lv[i])
                            and not (latched | spent) & b
                        ):
                            if elapsed(t, self._off[i]) >= self._min:
                                start = self._off[i]
                        if spent & b:
                            # A lying pin seen standing: set up again only once it has stood
                            # min_fall_ms (below); a switch dropout is not a new fall.
                            stand |= b
                            self._off[i] = t
                elif edges:
                    if not c:
                        departed |= b  # left and came back between two scans
                    elif not spent & b and self._i_lv[i] and self._since(self._i_run[i], t):
                        departed |= b  # stood and left again between two scans
                        self._off[i] = self._i_run[i]
                    # A spent (lying) pin's edges are movement only: it must be seen standing
                    # by a scan before a new run can count, so switch noise while it lies on
                    # the cloth never makes a second fall.
                if use_irq and not edges and self._i_lv[i] != (1 if c else 0):
                    # re-align the handler's idea of the level (missed or level-less edges)
                    self._i_run[i] = self._off[i] if c else t
                    self._i_lv[i] = 1 if c else 0
                if start < 0 and c and not (latched | spent) & b:
                    if elapsed(t, self._off[i]) >= self._min:
                        start = self._off[i]  # still off, long enough already
                if start >= 0:
                    fell |= b
                    self._fall[i] = start
            todo >>= 1
            i += 1
        if stand:  # lying pins seen standing: set up again after min_fall_ms standing
            m = stand
            i = 0
            while m:
                if m & 1:
                    b = 1 << i
                    if raw & b or not spent & b:
                        stand &= ~b  # off again: still lying (or no longer spent)
                    else:
                        e = self._i_t[i]
                        if use_irq and 0 < ((e - self._off[i]) & _TMASK) <= _THALF and (
                            ((t - e) & _TMASK) <= _THALF
                        ):  # the handler saw it leave and return since: it stands from then
                            self._off[i] = e
                        if elapsed(t, self._off[i]) >= self._min:
                            spent &= ~b
                            stand &= ~b
                m >>= 1
                i += 1
        self._stand = stand
        if departed and not self._open and self._auto:
            self._open = 1
        if moved:
            self._move_t = t
        if self._closing:
            self._late |= departed & ~self._wait
            fell &= ~self._late
        if fell:
            if self._open:
                latched |= fell
                m = fell
                i = 0
                while m:
                    if m & 1:
                        self.ring.push(PIN_DOWN, i, self._fall[i], t)
                    m >>= 1
                    i += 1
            else:
                spent |= fell & raw  # fell with no window open: it may not count later
        self._lvl = raw
        self._prev_t = t
        self._latched = latched
        self._spent = spent
        if self._closing:
            # Still waited for: moving since before the close, not yet down. A pin that rattles
            # back onto its base and off again is still the same fall, so the wait lasts until
            # every such pin is down, or 2 x min_fall_ms (a pin that stood: a wobble, FP-21).
            self._wait &= ~latched
            if not self._wait or elapsed(t, self._close_t) >= 2 * self._min:
                self._shut(t, SHOT_CLOSED)
        elif self._open and not moved and elapsed(t, self._move_t) >= self._settle:
            self._shut(t, SHOT_SETTLED)

    def _since(self, s, t):
        """True if time s is after the previous scan and not after t."""
        return ((s - self._prev_t) & _TMASK) <= _THALF and ((t - s) & _TMASK) <= _THALF

    def _adopt(self, t, raw):
        # Take the current level of pins just (re)included without calling it movement: a pin
        # lying at boot or when its spot is freed (FP-23) is not a fall.
        m = self._resync
        self._resync = 0
        self._lvl = (self._lvl & ~m) | (raw & m)
        self._spent = (self._spent & ~m) | (raw & m)
        i = 0
        while m:
            if m & 1:
                self._off[i] = t
                self._i_lv[i] = (raw >> i) & 1
                self._i_run[i] = t
                self._s_fn[i] = self._i_fn[i]
                self._s_en[i] = self._i_en[i]
            m >>= 1
            i += 1

    def _shut(self, t, how):
        # A pin still off whose run is already long enough counts (close by button mid-fall).
        latched = self._latched
        late = self._late
        m = self._lvl & ~(latched | self._spent | late)
        i = 0
        while m:
            if m & 1 and elapsed(t, self._off[i]) >= self._min:
                latched |= 1 << i
                self.ring.push(PIN_DOWN, i, self._off[i], t)
            m >>= 1
            i += 1
        self.ring.push(SHOT, how, latched, t)
        self._spent |= self._lvl & ~late  # pins lying now were counted or missed: not again
        self._latched = 0
        self._open = 0
        self._closing = 0
        self._wait = 0
        self._late = 0
        if late:  # left their base after the close: they open the next window
            self._open = 1
            self._move_t = t
        self.windows = (self.windows + 1) & _TMASK
        return latched

    # -- control (from the referee or a button) ---------------------------------------------
    def open(self, t):
        """Open a shot window now (e.g. the ball was struck). False if one was open already."""
        if self._open or self._closing:
            return False
        self._open = 1
        self._move_t = t & _TMASK
        self._spent |= self._lvl  # a pin already off its base did not fall in this shot
        return True

    def close(self, t, wait=True):
        """Close the window and push SHOT (id SHOT_CLOSED): returns its mask, or -1 if none was
        open, or CLOSING if a pin that left its base (or rattled on it) less than min_fall_ms
        before t is not yet down: the window shuts once every such pin is down, 2 x min_fall_ms
        after t at the latest (FP-18; wait=False: now)."""
        if not self._open:
            return -1
        t &= _TMASK
        if self._closing:
            return CLOSING
        # Pins that left their base after t (t may be a little in the past: a button's release
        # is confirmed later) are not this shot's: they open the next window.
        late = 0
        skip = self._latched | self._spent | self._removed
        i = 0
        while i < self._count:
            b = 1 << i
            if not skip & b:
                since = -1
                if self._lvl & b:
                    since = self._off[i]
                elif self._irq_used and self._i_lv[i]:
                    since = self._i_run[i]
                if since >= 0 and 0 < ((since - t) & _TMASK) <= _THALF:
                    late |= b
            i += 1
        self._late = late
        wait_for = 0
        if wait and self._min > 0:
            # Off its base (as the last scan or, since, the handler saw it), not down yet, and
            # off for less than min_fall_ms (a longer run is latched by _shut right now); or
            # rattling on its base (an edge less than min_fall_ms ago): a toppling pin's
            # contact bounces, and the run that counts may start just after t.
            skip |= late
            i = 0
            while i < self._count:
                b = 1 << i
                if not skip & b:
                    since = -1
                    if self._lvl & b:
                        since = self._off[i]
                    elif self._irq_used and self._i_lv[i]:
                        since = self._i_run[i]
                    if since >= 0 and elapsed(t, since) < self._min:
                        wait_for |= b
                    elif self._irq_used and ((t - self._i_t[i]) & _TMASK) < self._min:
                        wait_for |= b  # rattled on its base in the last min_fall_ms up to t
                i += 1
        if wait_for:
            self._closing = 1
            self._wait = wait_for
            self._close_t = t
            return CLOSING
        return self._shut(t, SHOT_CLOSED)

    def closing(self):
        """True while a close() waits for pins mid-fall."""
        return self._closing == 1

    def set_removed(self, mask):
        """Pins removed from their spot (FP-23), bit i = line i; they never count.

        A pin removed while latched leaves the window's mask; a pin put back is adopted at its
        current level at the next scan (standing it up is not a movement).
        """
        mask &= self._all
        back = self._removed & ~mask
        self._removed = mask
        self._latched &= ~mask
        self._lvl &= ~mask
        self._spent &= ~mask
        self._resync |= back

    def removed(self):
        return self._removed

    def latched(self):
        """Pins down in the current window (bit i = line i)."""
        return self._latched

    def is_open(self):
        return self._open == 1

    def levels(self):
        """Levels at the last scan (1 = off its base; removed pins read 0)."""
        return self._lvl
