# What the scoreboard shows: the score, whose turn, the last action, and any warning (a peg
# mismatch, a stuck sensor). Rendered as text rows (16 columns x 8 rows fill a 128x64 SSD1306
# with the 8x8 font), so the simulated board can show exactly the same screen as text. What a
# game shows is its own screen.py (games/<game>/screen.py, found through the registry).

import json

COLS = 16
ROWS = 8


def name(players, i, default):
    """Side i's name as a screen shows it: at most 6 characters, a pair as "Ann&Cy"."""
    p = players[i] if i < len(players) else None
    if type(p) is list:
        p = "&".join(str(x)[:3] for x in p)
    return (str(p) if p else default)[:6]


def generic_rows(state, view, players):
    """A game without a screen.py: each state key on a row."""
    rows = []
    for k in state:
        rows.append(("%s %s" % (k, state[k]))[:COLS])
    return rows


def short(screen_part, rec):
    """The latest action in a few characters (the foot of the screen, `last` in status): the
    game's own text (its screen.short), else the kind alone or the record cut to 16."""
    text = screen_part.short(rec) if hasattr(screen_part, "short") else None
    if text is not None:
        return text
    a = rec.get("a")
    return json.dumps(rec)[:16] if a not in ("undo", "start", "break") else a


def screen(screen_part, state, view=None, players=(), status=None, warnings=()):
    """The 8 text rows to show: the game's rows (its screen.rows; the state's keys for a game
    without one), then a status line and warnings at the foot (warnings win the space: a
    mismatch must be seen)."""
    rows = getattr(screen_part, "rows", generic_rows)(state, view, list(players))
    return compose(rows, status, warnings)


def compose(rows, status=None, warnings=()):
    """The game's `rows` with the status line and the warnings at the foot, cut to the
    screen (8 rows of 16 columns): warnings win the space, a mismatch must be seen."""
    # (Each new str is a look through the board's names: only what can show is made.)
    foot = ["!" + w for w in warnings[:ROWS]]
    if status:
        # A status longer than a row (a scorepad's entry) takes two.
        if len(status) > COLS:
            cut = status.rfind(" ", 0, COLS + 1)
            cut = cut if cut > 0 else COLS
            foot[0:0] = [status[:cut], status[cut:].strip()]
        else:
            foot.insert(0, status)
    rows = rows[: ROWS - len(foot)] + foot
    return [r if len(r) <= COLS else r[:COLS] for r in rows[:ROWS]]


class Display:
    """Draws text rows on a hal display (anything with `fb` (a FrameBuffer), `show()`, and
    optionally `text_lines(rows)` for the simulated board's text view)."""

    def __init__(self, hal_display):
        self.hal = hal_display
        self.rows = []
        # A display that can send one page at a time (the SSD1306) is redrawn a page per loop
        # pass by step(), so a redraw never keeps the loop from its scans; others at once.
        # A text row is one page (8 pixels high): only the rows that changed are drawn again
        # and only their pages sent.
        self._paged = getattr(hal_display, "show_page", None) is not None
        self._todo = 0  # pages of the current redraw still to send, a bit each
        self._page = 0

    def show(self, rows):
        old = self.rows
        if rows == old:
            return  # an unchanged screen costs no I2C traffic
        self.rows = rows
        fb = self.hal.fb
        todo = 0
        if len(old) != len(rows) or not self._paged:
            fb.fill(0)
            for i in range(len(rows)):
                fb.text(rows[i], 0, i * 8, 1)
            todo = (1 << self.hal.pages) - 1 if self._paged else 0
        else:
            for i in range(len(rows)):
                if rows[i] != old[i]:
                    fb.fill_rect(0, i * 8, self.hal.width, 8, 0)
                    fb.text(rows[i], 0, i * 8, 1)
                    todo |= 1 << i
        if self._paged:
            self._todo |= todo & ((1 << self.hal.pages) - 1)
        else:
            self.hal.show()

    def step(self):
        """Send the next page of a redraw in progress (one per call); False when none is left."""
        todo = self._todo
        if not todo:
            return False
        p = self._page
        while not todo >> p & 1:
            p = (p + 1) % self.hal.pages
        self.hal.show_page(p)
        self._todo = todo & ~(1 << p)
        self._page = (p + 1) % self.hal.pages
        return True
