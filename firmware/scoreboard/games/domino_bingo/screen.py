# Domino bingo on the scorepad's screen (16x8 text rows, display.py): big points per player.

from ...display import name


def rows(state, view, players):
    names = (name(players, 0, "P1"), name(players, 1, "P2"))
    rows = ["to %d  hand %d" % (view["to_win"] if view else 7, state["hands"] + 1)]
    for p in (0, 1):
        rows.append("%-8s %5d" % (names[p], state["big"][p]))
    if state["winner"] is not None:
        rows.append("WINNER " + names[state["winner"]])
    elif view and view.get("last"):
        rows.append("last +%d/+%d" % tuple(view["last"]))
    return rows
