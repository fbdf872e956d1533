# The foul list: one or more fouls in one shot from two buttons, shown on the OLED while it is
# chosen (docs/scoring-at-the-table.md). Shared by the referees of the pin and puck tables.
#
# "foul" opens the list with the cursor on the first (most used) code; each further "foul" moves
# the cursor down (after the last code it comes back to the first). "confirm" marks the code under
# the cursor (or takes its mark off) and closes the list; "undo" closes it and changes nothing;
# any other button closes it and then does its own job. A long "foul" clears every mark.

from ..sense import LONG, PRESS

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_ROWS = const(6)  # codes shown at once, around the cursor


class FoulList:
    def __init__(self, codes):
        self.codes = codes  # the list's order: the common ones first
        self.clear()

    def clear(self):
        self.marked = 0  # bit i = codes[i]
        self.cursor = -1  # -1 while the list is closed

    def button(self, name, kind):
        """A button press or long press; True when it was the list's to take (the referee then
        does nothing more with it)."""
        if self.cursor >= 0:
            cursor = self.cursor
            if name == "foul" and kind == PRESS:
                self.cursor = (cursor + 1) % len(self.codes)
                return True
            self.cursor = -1
            if name == "confirm" and kind == PRESS:
                self.marked ^= 1 << cursor  # mark it, or take its mark off
                return True
            if name == "undo":
                return True  # closes the list; nothing is undone
        if name != "foul":
            return False
        if kind == LONG:
            self.clear()  # no foul
        else:
            self.cursor = 0
        return True

    def mark(self, code):
        """Mark a code a sensor saw (e.g. the striker in a pocket)."""
        self.marked |= 1 << self.codes.index(code)

    def chosen(self):
        """The marked codes, in the list's order (the action's `fouls`)."""
        return [self.codes[i] for i in range(len(self.codes)) if self.marked >> i & 1]

    def summary(self):
        """For the status row: the one code marked, or how many; None for none."""
        codes = self.chosen()
        if len(codes) == 1:
            return codes[0]
        return "%d fouls" % len(codes) if codes else None

    def screen(self, who, warnings):
        """The list while it is open (8 rows of 16), else None. `who`: the shooter, e.g. " P1"."""
        cur = self.cursor
        if cur < 0:
            return None
        n = len(self.codes)
        marked = len(self.chosen())
        rows = [("FOUL %2d/%d%s" % (cur + 1, n, who)) + (" *%d" % marked if marked else "")]
        top = max(0, min(cur - 2, n - _ROWS))
        for i in range(top, min(n, top + _ROWS)):
            rows.append("%s%s%s" % (">" if i == cur else " ", "*" if self.marked >> i & 1 else " ",
                                    self.codes[i]))
        while len(rows) < 1 + _ROWS:
            rows.append("")
        rows.append("!" + warnings[0] if warnings else "foul:next conf:*")
        return rows
