# Seven pins on the board's screen (16x8 text rows, display.py): both totals counting down,
# who is on move, the last shot's change.

from ...display import name


def rows(state, view, players):
    names = (name(players, 0, "P1"), name(players, 1, "P2"))
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


def short(rec):
    """A shot in a few characters ("P1 K S2 miss", "P1 void"); None: the common text."""
    if rec.get("a") != "shot":
        return None
    if rec.get("void"):
        return "P%d void" % (rec["player"] + 1)  # SP-9, as FP-17: nothing counts
    return "P%d %s%s" % (rec["player"] + 1, " ".join(rec["pins"]) or "-",
                         " " + ",".join(rec["fouls"]) if rec.get("fouls") else "")
