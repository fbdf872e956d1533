# Five pins on the board's screen (16x8 text rows, display.py): the set, both scores and sets,
# who is on move, ball in hand, the last shot.

from ...display import name


def rows(state, view, players):
    names = (name(players, 0, "P1"), name(players, 1, "P2"))
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


def short(rec):
    """A shot in a few characters ("P1 12C c4 miss"); None: the common text."""
    if rec.get("a") != "shot":
        return None
    if rec.get("void"):
        return "P%d void" % (rec["player"] + 1)  # FP-17
    return "P%d %s%s%s" % (rec["player"] + 1, rec.get("pins") or "-",
                           " c%d" % rec["carom"] if rec.get("carom") else "",
                           " " + ",".join(rec["fouls"]) if rec.get("fouls") else "")
