# The foul list: one or more fouls in one shot from two buttons, shown on the OLED while it is
# chosen (docs/scoring-at-the-table.md). Shared by the referees of the pin and puck tables.
#
# "foul" opens the list with the cursor on the first (most used) code; each further "foul" moves
# the cursor down (after the last code it comes back to the first). "confirm" marks the code under
# the cursor (or takes its mark off) and closes the list; "undo" closes it and changes nothing;
# any other button closes it and then does its own job. A long "foul" clears every mark.
#
# After the fouls come the referee's rulings, marked the same way: VOID (the shot is void, FP-17)
# and what a table adds (a pin the switches counted that is not down, FP-22: offered only for a
# pin counted down). An entry not offered now is `hidden`: the cursor passes it by.

from ..sense import LONG, PRESS

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

VOID = "void"  # the ruling: a third party or force majeure spoilt the shot, nothing counts
_ROWS = const(6)  # codes shown at once, around the cursor


class FoulList:
    def __init__(self, codes, fouls=None):
        self.codes = codes  # the list's order: the common ones first
        self.fouls = len(codes) if fouls is None else fouls  # codes[:fouls] are fouls, then rulings
        self.hidden = 0  # bit i: codes[i] is not offered now (the referee sets it)
        self.clear()

    def clear(self):
        self.marked = 0  # bit i = codes[i]
        self.cursor = -1  # -1 while the list is closed

    def _next(self, i):
        """The first entry offered after entry i (wrapping), or -1 if none is."""
        n = len(self.codes)
        for k in range(1, n + 1):
            j = (i + k) % n
            if not self.hidden >> j & 1:
                return j
        return -1

    def button(self, name, kind):
        """A button press or long press; True when it was the list's to take (the referee then
        does nothing more with it)."""
        if self.cursor >= 0:
            cursor = self.cursor
            if name == "foul" and kind == PRESS:
                self.cursor = self._next(cursor)
                return True
            self.cursor = -1
            if name == "confirm" and kind == PRESS:
                if not self.hidden >> cursor & 1:
                    self.marked ^= 1 << cursor  # mark it, or take its mark off
                return True
            if name == "undo":
                return True  # closes the list; nothing is undone
        if name != "foul":
            return False
        if kind == LONG:
            self.clear()  # no foul
        else:
            self.cursor = self._next(-1)
        return True

    def mark(self, code):
        """Mark a code a sensor saw (e.g. the striker in a pocket)."""
        self.marked |= 1 << self.codes.index(code)

    def is_marked(self, code):
        """True if `code` is marked (and offered)."""
        i = self.codes.index(code)
        return bool((self.marked & ~self.hidden) >> i & 1)

    def chosen(self, first=0, end=None):
        """The marked codes offered, in the list's order (codes[first:end]: the fouls alone,
        say: the action's `fouls`)."""
        end = len(self.codes) if end is None else end
        m = self.marked & ~self.hidden
        return [self.codes[i] for i in range(first, end) if m >> i & 1]

    def summary(self, end=None):
        """For the status row: the one code marked (of codes[:end]), or how many; None."""
        codes = self.chosen(0, end)
        if len(codes) == 1:
            return codes[0]
        return "%d fouls" % len(codes) if codes else None

    def screen(self, who, warnings):
        """The list while it is open (8 rows of 16), else None. `who`: the shooter, e.g. " P1"."""
        cur = self.cursor
        if cur < 0:
            return None
        shown = [i for i in range(len(self.codes)) if not self.hidden >> i & 1]
        n = len(shown)
        at = shown.index(cur) if cur in shown else 0
        marked = len(self.chosen())
        # The header counts the fouls, or the rulings once the cursor is past the fouls.
        nf = len([i for i in shown if i < self.fouls])
        head = ("FOUL %2d/%d" % (at + 1, nf)) if cur < self.fouls else (
            "RULE %2d/%d" % (at + 1 - nf, n - nf))
        rows = [head + who + (" *%d" % marked if marked else "")]
        top = max(0, min(at - 2, n - _ROWS))
        for i in shown[top:top + _ROWS]:
            rows.append("%s%s%s" % (">" if i == cur else " ", "*" if self.marked >> i & 1 else " ",
                                    self.codes[i]))
        while len(rows) < 1 + _ROWS:
            rows.append("")
        rows.append("!" + warnings[0] if warnings else "foul:next conf:*")
        return rows
