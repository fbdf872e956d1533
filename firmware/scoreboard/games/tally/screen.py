# A tally on the scorepad's screen (16x8 text rows, display.py): each player's count.

from ...display import name


def rows(state, view, players):
    counts = state["counts"]
    head = view["kind"] if view else "tally"
    if view and view.get("target"):
        head += " to %d" % view["target"]
    rows = [head]
    names = [name(players, i, "P%d" % (i + 1)) for i in range(len(counts))]
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
