# The service view (bring-up: every input's level and edge count) and the inputs' levels the
# `service` and `record` commands reply with: loaded only when asked for, so that a board at
# play keeps this code out of RAM (App.service_rows, App.lines_now). Runs on MicroPython and
# CPython.


def rows(app):
    """Service view: every switch line's level and edge count (bring-up, bad switches)."""
    raw = app.board.lines.read()
    rows = ["SERVICE  v edges"]
    cells = []
    for i, name in enumerate(app.board.lines.names):
        # Two lines a row, "name level edges" in 8 columns: 16 lines fit the screen.
        short = name[4:] if name.startswith("btn.") else name.replace(".", "")
        if len(short) > 4:
            short = short[:3] + short[-1:]  # carom3 -> car3, out_of_turn -> outn
            # (a slice: a str's character taken out by its index is interned for good)
        cells.append("%-4s%d%3d" % (short, (raw >> i) & 1,
                                    min(999, app.health.edge_count(i))))
    for i in range(0, len(cells), 2):
        rows.append("".join(cells[i:i + 2]))
    if app.grid is not None:
        rows.append("pegs %d+%d" % (_bits(app.grid.side_bits(0)),
                                    _bits(app.grid.side_bits(1))))
    an = app.board.analog
    if an is not None and app.cfg.get("pocket_sensing"):
        # Colour sensors: each pocket's reading now, to set the thresholds at bring-up.
        rows.append("col " + " ".join(str(an.read(i)) for i in range(an.count)))
    if app.keys is not None:
        # The keys held now (several: a chord, or a phantom key of the matrix) and the presses
        # taken so far.
        # (the keys the sampling timer read last: it alone drives the rows while it runs)
        raw = app._s_now[1] if app._sampling else app.board.keypad.scan()
        legends = app.cfg["keypad"]["keys"]
        rows.append("keys " + "".join(legends[i] for i in range(len(legends))
                                      if raw >> i & 1))
        rows.append("taken %d" % app.keys.presses)
    if app.heap[0] is not None:
        # The gauge: free heap and largest block (KB), the longest scan gap (ms).
        rows.append("mem %d/%dK %dms" % (app.heap[0] // 1024, app.heap[1] // 1024,
                                         app.gap_ms))
    return rows


def lines_now(app):
    """Every input's level now, and its edges."""
    raw = app.board.lines.read()
    out = {}
    for i, name in enumerate(app.board.lines.names):
        out[name] = {"v": (raw >> i) & 1, "edges": app.health.edge_count(i)}
    if app.grid is not None:
        out["pegs"] = [app.grid.side_bits(0), app.grid.side_bits(1)]
    an = app.board.analog
    if an is not None:
        pockets = [n[7:] for n in app.board.lines.names if n[:7] == "pocket."]
        for i, pid in enumerate(pockets):
            if "colour" in app.cfg["pockets"][pid]:
                out["colour." + pid] = {"v": an.read(i)}
    if app.keys is not None:
        for i, ch in enumerate(app.cfg["keypad"]["keys"]):
            out["key." + ch] = {"v": (app.keys.state >> i) & 1}
    return out


def _bits(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n
