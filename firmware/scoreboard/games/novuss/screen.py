# Novuss on the board's screen (16x8 text rows, display.py): pucks left and owed per side.

from ...display import name


def rows(state, view, players):
    names = (name(players, 0, "A"), name(players, 1, "B"))
    rows = ["novuss  left owe"]
    for s in (0, 1):
        mark = ">" if state["next"] == s else " "
        rows.append("%s%-6s %3d %3d" % (mark, names[s], state["left"][s], state["debt"][s]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif state["next"] is None:
        rows.append("press start")
    return rows


def short(rec):
    """A shot in a few characters ("A 2+1 opp_first", "A void"); None: the common text."""
    if rec.get("a") != "shot":
        return None
    if rec.get("void"):
        return "%s void" % "AB"[rec["side"]]  # NV-6, as FP-17: nothing counts
    return "%s %d+%d%s" % ("AB"[rec["side"]], rec.get("own", 0), rec.get("opp", 0),
                           " " + ",".join(rec["fouls"]) if rec.get("fouls") else "")
