# Texas 42 on the scorepad's screen (16x8 text rows, display.py): both sides' scores.

from ...display import name


def _sides42(players):
    # T42-1: side 0 = players 1 and 3, side 1 = players 2 and 4.
    if len(players) == 4:
        return ["%s&%s" % (str(players[0])[:3], str(players[2])[:3]),
                "%s&%s" % (str(players[1])[:3], str(players[3])[:3])]
    return [name(players, 0, "S1"), name(players, 1, "S2")]


def rows(state, view, players):
    names = _sides42(players)
    rows = ["to %d  hand %d" % (view["target"] if view else 250, state["hands"] + 1)]
    for s in (0, 1):
        rows.append("%-8s %5d" % (names[s][:8], state["scores"][s]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif view and view.get("last"):
        rows.append("last +%d/+%d" % tuple(view["last"]))
    return rows
