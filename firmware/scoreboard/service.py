# The service view (bring-up: every input's level and edge count) and the inputs' levels the
# `service` and `record` commands reply with: loaded only when asked for, so that a board at
# play keeps this code out of RAM (App.service_rows, App.lines_now). Runs on MicroPython and
# CPython.


def rows(app):
    """Service view: every switch line's level and edge count (bring-up, bad switches)."""
    out = []
    for _ in parts(app, out):
        pass
    return out


_SHORT = [None, None]  # type: list  # the board's line names, and their short forms (made once)


def parts(app, out=None):
    """The service view made a part at a time (a generator: each `yield` ends a part, a row of
    two lines at most), so that a board with many lines never spends one long step on it; the
    rows are shown at the end, or added to `out`."""
    lines = app.board.lines
    names = lines.names
    if _SHORT[0] is not names:
        short = []
        for i in range(len(names)):
            short.append(_short(names[i]))
            if i % 4 == 3:
                yield  # (the names' short forms, made once: a few a part)
        _SHORT[1] = short
        _SHORT[0] = names
    short = _SHORT[1]
    raw = lines.read()
    health = app.health
    rows = ["SERVICE  v edges"]
    n = len(names)
    for i in range(0, n, 2):
        # Two lines a row, "name level edges" in 8 columns: 16 lines fit the screen.
        row = "%-4s%d%3d" % (short[i], (raw >> i) & 1, min(999, health.edge_count(i)))
        if i + 1 < n:
            row += "%-4s%d%3d" % (short[i + 1], (raw >> i + 1) & 1,
                                  min(999, health.edge_count(i + 1)))
        rows.append(row)
        yield
    if app.grid is not None:
        rows.append("pegs %d+%d" % (_bits(app.grid.side_bits(0)),
                                    _bits(app.grid.side_bits(1))))
    an = app.board.analog
    if an is not None and app.cfg.get("pocket_sensing"):
        # Colour sensors: each pocket's reading now, to set the thresholds at bring-up.
        rows.append("col " + " ".join([str(an.read(i)) for i in range(an.count)]))
    if app.keys is not None:
        yield
        # The keys held now (several: a chord, or a phantom key of the matrix) and the presses
        # taken so far.
        # (the keys the sampling timer read last: it alone drives the rows while it runs)
        raw = app._s_now[1] if app._sampling else app.board.keypad.scan()
        legends = app.cfg["keypad"]["keys"]
        rows.append("keys " + "".join([legends[i] for i in range(len(legends))
                                       if raw >> i & 1]))
        rows.append("taken %d" % app.keys.presses)
    if app.heap[0] is not None:
        # The gauge: free heap and largest block (KB), the longest scan gap (ms).
        rows.append("mem %d/%dK %dms" % (app.heap[0] // 1024, app.heap[1] // 1024,
                                         app.gap_ms))
    if out is None:
        yield
        app.display.show(rows)
    else:
        out.extend(rows)


def _short(name):
    """A line's name in 4 columns: carom3 -> car3, out_of_turn -> outn."""
    short = name[4:] if name.startswith("btn.") else name.replace(".", "")
    if len(short) > 4:
        short = short[:3] + short[-1:]
        # (a slice: a str's character taken out by its index is interned for good)
    return short


def lines_now(app):
    """Every input's level now, and its edges."""
    out = {}
    for _ in lines_parts(app, out):
        pass
    return out


def lines_parts(app, out):
    """lines_now() into `out` a part at a time (a generator: each `yield` ends a part, a few
    lines), for a reply made between scans (serve.py's `service` and `record`)."""
    raw = app.board.lines.read()
    names = app.board.lines.names
    health = app.health
    for i in range(len(names)):
        out[names[i]] = {"v": (raw >> i) & 1, "edges": health.edge_count(i)}
        if i % 4 == 3:
            yield
    if app.grid is not None:
        out["pegs"] = [app.grid.side_bits(0), app.grid.side_bits(1)]
    an = app.board.analog
    if an is not None:
        yield
        pockets = [n[7:] for n in names if n[:7] == "pocket."]
        for i in range(len(pockets)):
            if "colour" in app.cfg["pockets"][pockets[i]]:
                out["colour." + pockets[i]] = {"v": an.read(i)}
    if app.keys is not None:
        keys = app.cfg["keypad"]["keys"]
        state = app.keys.state
        for i in range(len(keys)):
            if i % 4 == 0:
                yield
            out["key." + keys[i]] = {"v": (state >> i) & 1}


def _bits(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n
