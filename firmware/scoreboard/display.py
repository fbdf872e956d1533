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


def seven_pins_rows(state, view, players):
    names = (_name(players, 0, "P1"), _name(players, 1, "P2"))
    rows = ["7 pins from %d" % view["start"] if view else "7 pins"]
    for p in (0, 1):
        mark = ">" if state["next"] == p else " "
        rows.append("%s%-6s %4d" % (mark, names[p], state["totals"][p]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif state["next"] is None:
        rows.append("press break")
    last = view.get("last") if view else None
    if last:
        rows.append("last %+d %s" % (last["change"], names[last["player"]]))
    return rows


def novuss_rows(state, view, players):
    names = (_name(players, 0, "A"), _name(players, 1, "B"))
    rows = ["novuss  left owe"]
    for s in (0, 1):
        mark = ">" if state["next"] == s else " "
        rows.append("%s%-6s %3d %3d" % (mark, names[s], state["left"][s], state["debt"][s]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif state["next"] is None:
        rows.append("press start")
    return rows


def _sides42(players):
    # T42-1: side 0 = players 1 and 3, side 1 = players 2 and 4.
    if len(players) == 4:
        return ["%s&%s" % (str(players[0])[:3], str(players[2])[:3]),
                "%s&%s" % (str(players[1])[:3], str(players[3])[:3])]
    return [_name(players, 0, "S1"), _name(players, 1, "S2")]


def texas_42_rows(state, view, players):
    names = _sides42(players)
    rows = ["to %d  hand %d" % (view["target"] if view else 250, state["hands"] + 1)]
    for s in (0, 1):
        rows.append("%-8s %5d" % (names[s][:8], state["scores"][s]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif view and view.get("last"):
        rows.append("last +%d/+%d" % tuple(view["last"]))
    return rows


def domino_bingo_rows(state, view, players):
    names = (_name(players, 0, "P1"), _name(players, 1, "P2"))
    rows = ["to %d  hand %d" % (view["to_win"] if view else 7, state["hands"] + 1)]
    for p in (0, 1):
        rows.append("%-8s %5d" % (names[p], state["big"][p]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif view and view.get("last"):
        rows.append("last +%d/+%d" % tuple(view["last"]))
    return rows


def tally_rows(state, view, players):
    counts = state["counts"]
    head = view["kind"] if view else "tally"
    if view and view.get("target"):
        head += " to %d" % view["target"]
    rows = [head]
    names = [_name(players, i, "P%d" % (i + 1)) for i in range(len(counts))]
    if len(counts) <= 4:
        for i, c in enumerate(counts):
            rows.append("%-8s %5d" % (names[i], c))
    else:
        for i in range(0, len(counts), 2):
            cells = ["%-4s%3d" % (names[j][:4], counts[j]) for j in range(i, min(i + 2,
                                                                               len(counts)))]
            rows.append(" ".join(cells))
    w = state["winner"]
    if w == "draw":
        rows.append("DRAW")
    elif w is not None:
        rows.append("WINNER " + names[w])
    return rows


def generic_rows(state, view, players):
    rows = []
    for k in state:
        rows.append(("%s %s" % (k, state[k]))[:COLS])
    return rows


RENDER = {"shove-hapenny": shove_rows, "five-pins": five_pins_rows, "texas-42": texas_42_rows,
          "domino-bingo": domino_bingo_rows, "tally": tally_rows}
RENDER["seven-pins"] = seven_pins_rows
RENDER["novuss"] = novuss_rows


def screen(game_id, state, view=None, players=(), status=None, warnings=()):
    """The 8 text rows to show: the game's rows, then a status line and warnings at the foot
    (warnings win the space: a mismatch must be seen)."""
    rows = RENDER.get(game_id, generic_rows)(state, view, list(players))
    foot = ["!" + w for w in warnings]
    if status:
        # A status longer than a row (a scorepad's entry) takes two.
        if len(status) > COLS:
            cut = status.rfind(" ", 0, COLS + 1)
            cut = cut if cut > 0 else COLS
            foot[0:0] = [status[:cut], status[cut:].strip()]
        else:
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
