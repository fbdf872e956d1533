# Shove ha'penny on the board's screen (16x8 text rows, display.py): both sides' beds and
# totals, whose turn (and partner), what is still needed.

from ...display import name


def rows(state, view, players):
    a, b = name(players, 0, "A"), name(players, 1, "B")
    beds = state["beds"]
    rows = [
        "%-5s%2d  %-5s%2d" % (a[:5], sum(beds[0]), b[:5], sum(beds[1])),
        # (one str a row: each new str is a look through the board's names, on the chip)
        "A %d%d%d%d%d%d%d%d%d" % tuple(beds[0]),
        "B %d%d%d%d%d%d%d%d%d" % tuple(beds[1]),
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


def short(rec):
    """A turn in a few characters ("A 010200000", "B 000000000 void"); None: the common text."""
    if rec.get("a") != "turn":
        return None
    return "%s %s%s" % ("AB"[rec["side"]], "".join(str(n) for n in rec["beds"]),
                        " void" if rec.get("void") else "")
