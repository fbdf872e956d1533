# What the scoreboard shows: the score, whose turn, the last action, and any warning (a peg
# mismatch, a stuck sensor). Rendered as text rows (16 columns x 8 rows fill a 128x64 SSD1306
# with the 8x8 font), so the simulated board can show exactly the same screen as text.

COLS = 16
ROWS = 8


def _name(players, i, default):
    p = players[i] if i < len(players) else None
    if type(p) is list:
        p = "&".join(str(x)[:3] for x in p)
    return (str(p) if p else default)[:6]


def shove_rows(state, view, players):
    a, b = _name(players, 0, "A"), _name(players, 1, "B")
    beds = state["beds"]
    rows = [
        "%-5s%2d  %-5s%2d" % (a[:5], sum(beds[0]), b[:5], sum(beds[1])),
        "A " + "".join(str(n) for n in beds[0]),
        "B " + "".join(str(n) for n in beds[1]),
    ]
    if state["winner"] is not None:
        rows.append("WINNER " + (a, b)[state["winner"]])
    elif state["next"] is None:
        rows.append("press start")
    else:
        side = state["next"]
        who = (a, b)[side]
        if view and view.get("partner") and len(players) > 2:
            who += str(view["partner"][side] + 1)
        rows.append("next " + who + (" (skip)" if state["skip"][1 - side] else ""))
    if view and "needed" in view:
        rows.append("need %d / %d" % tuple(view["needed"]))
    rows.append("turns %d" % state["turns"])
    return rows


def five_pins_rows(state, view, players):
    names = (_name(players, 0, "P1"), _name(players, 1, "P2"))
    rows = ["set %d" % state["set"] + ("  to %d" % view["target"] if view else "")]
    for p in (0, 1):
        mark = ">" if state["next"] == p else " "
        rows.append("%s%-6s %3d  %d" % (mark, names[p], state["scores"][p], state["sets"][p]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif state["next"] is None:
        rows.append("press break")
    elif state["ball_in_hand"]:
        rows.append("ball in hand")
    last = view.get("last") if view else None
    if last:
        rows.append("last %+d %s" % (last["points"] + last.get("penalty", 0),
                                      names[last["to"]]))
    return rows


def generic_rows(state, view, players):
    rows = []
    for k in state:
        rows.append(("%s %s" % (k, state[k]))[:COLS])
    return rows


RENDER = {"shove-hapenny": shove_rows, "five-pins": five_pins_rows}


def screen(game_id, state, view=None, players=(), status=None, warnings=()):
    """The 8 text rows to show: the game's rows, then a status line and warnings at the foot
    (warnings win the space: a mismatch must be seen)."""
    rows = RENDER.get(game_id, generic_rows)(state, view, list(players))
    foot = ["!" + w for w in warnings]
    if status:
        foot.insert(0, status)
    rows = rows[: ROWS - len(foot)] + foot
    return [r[:COLS] for r in rows[:ROWS]]


class Display:
    """Draws text rows on a hal display (anything with `fb` (a FrameBuffer), `show()`, and
    optionally `text_lines(rows)` for the simulated board's text view)."""

    def __init__(self, hal_display):
        self.hal = hal_display
        self.rows = []
        # A display that can send one page at a time (the SSD1306) is redrawn a page per loop
        # pass by step(), so a redraw never keeps the loop from its scans; others at once.
        self._paged = getattr(hal_display, "show_page", None) is not None
        self._todo = 0  # pages of the current redraw still to send
        self._page = 0

    def show(self, rows):
        if rows == self.rows:
            return  # an unchanged screen costs no I2C traffic
        self.rows = rows
        fb = self.hal.fb
        fb.fill(0)
        for i, r in enumerate(rows):
            fb.text(r, 0, i * 8, 1)
        if self._paged:
            self._todo = self.hal.pages
            self._page = 0
        else:
            self.hal.show()

    def step(self):
        """Send the next page of a redraw in progress (one per call); False when none is left."""
        if not self._todo:
            return False
        self.hal.show_page(self._page)
        self._page += 1
        self._todo -= 1
        return True
