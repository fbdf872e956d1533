# Input injection (the `inject` command, test mode only; docs/serial-protocol.md): events fed
# as if they came from the hardware. All or nothing: every event is checked against this board
# (its line, kind, id and value) before the first is queued or handed to the app. Loaded only
# when a board in test mode is asked to inject. Runs on MicroPython and CPython.

from .link import Refused


def inject(handler, args):
    app = handler.app
    now = app.clock.ticks_ms()
    todo = []
    for e in args["events"]:
        if "line" in e:
            if not hasattr(app.board, "set_line"):
                raise Refused("line changes can be injected on a simulated board only; "
                              "inject input events (kind, id, value) instead")
            _check_line(app.board, e["line"], e["v"])
            todo.append((0, e["line"], e["v"], e.get("t", 0)))
        else:
            kind = _kind(e["kind"])
            ident = _ident(app, kind, e["id"])
            _check_value(app, kind, e["value"])
            todo.append((kind, ident, e["value"], 0))
    lines = 0
    for kind, a, b, t in todo:
        if kind:
            app.on_event(kind, a, b, now)
        else:
            handler.pending.append([app.clock.ticks_add(now, t), a, b])
            lines += 1
    # In time order, changes at the same ms in the order given (MicroPython's sort is not
    # stable: the position breaks ties, so a colour set with its beam's break comes first).
    pending = handler.pending
    order = {}
    for k in range(len(pending)):
        order[id(pending[k])] = k
    pending.sort(key=lambda p: (app.clock.ticks_diff(p[0], now), order[id(p)]))
    return {"events": len(args["events"]), "queued": lines}


def _kind(k):
    from . import sense

    if type(k) is int:
        if 0 < k < 10 and sense.kind_name(k) != "?":
            return k
        raise Refused("unknown input event kind %d (kinds 1..9: docs/sensing.md)" % k)
    for i in range(1, 10):  # every kind sense.kind_name knows (KEY 8, POCKET 9)
        if sense.kind_name(i) == k:
            return i
    raise Refused("unknown input event kind %s" % _quote(k))


def _quote(v):
    from .frames import dumps

    return dumps(v)[:40]


def _check_line(board, name, v):
    """A line of this board (sensor-trace name), else Refused naming it."""
    if name[:7] == "colour.":
        an = board.analog
        if an is None or name[7:] not in an._ids:
            raise Refused("unknown line %s: this board has no such colour sensor" % _quote(name))
        return
    if v not in (0, 1):
        raise Refused("line %s: v must be 0 or 1" % _quote(name))
    try:
        board._locate(name)
    except ValueError as e:
        raise Refused(str(e))


def _ids(app, kind):
    """The ids an input event of `kind` may carry on this board: a list of names (index =
    id), or a count for kinds whose ids have no names; 0 for a kind this board has not."""
    from . import sense

    names = app.board.lines.names
    if kind in (sense.PRESS, sense.LONG, sense.LINE):
        return names[:app.nbtn]
    if kind == sense.PIN_DOWN:
        return [n for n in names if n[:4] == "pin."]
    if kind == sense.SHOT:
        return 2 if app.tilt is not None else 0
    if kind == sense.PEG:
        return 54 if app.grid is not None else 0
    if kind == sense.KEY:
        return ["key." + c for c in app.cfg["keypad"]["keys"]] if app.keys is not None else []
    if kind == sense.POCKET:
        return [n for n in names if n[:7] == "pocket."]
    return 0  # FAULT: checked by _ident


def _ident(app, kind, ident):
    """The int id of an input event (a line name taken too), else Refused."""
    from . import sense

    if kind == sense.FAULT:
        if type(ident) is int and _fault_id(app, ident):
            return ident
        raise Refused("fault event id %s is no line of this board" % _quote(ident))
    ids = _ids(app, kind)
    what = sense.kind_name(kind)
    if type(ids) is int:
        if type(ident) is int and 0 <= ident < ids:
            return ident
        raise Refused("%s event id must be 0..%d on this board, not %s"
                      % (what, ids - 1, _quote(ident)) if ids else
                      "this board has no %s events" % what)
    if type(ident) is str:
        for i in range(len(ids)):
            if ids[i] == ident or ids[i][ids[i].find(".") + 1:] == ident:
                return i
    elif 0 <= ident < len(ids):
        return ident
    raise Refused("%s event id %s is not one of this board's %s" % (
        what, _quote(ident), ", ".join(ids) if ids else "(none)"))


def _fault_id(app, ident):
    from .app import _KEY_FAULT_BASE, _PEG_FAULT_BASE

    if 0 <= ident < app.board.lines.count:
        return True
    if app.grid is not None and _PEG_FAULT_BASE <= ident < _PEG_FAULT_BASE + 54:
        return True
    return app.keys is not None and 0 <= ident - _KEY_FAULT_BASE < len(app.cfg["keypad"]["keys"])


def _check_value(app, kind, value):
    from . import sense

    if kind in (sense.LINE, sense.PEG):
        ok = value in (0, 1)
    elif kind == sense.SHOT:
        ok = 0 <= value < 1 << len(_ids(app, sense.PIN_DOWN))
    elif kind == sense.FAULT:
        ok = value in (sense.HEALTHY, sense.STUCK, sense.CHATTER)
    elif kind == sense.POCKET:
        ok = 0 <= value <= 3  # sense.pockets: RED, BLACK, STRIKER, BALL
    elif kind == sense.KEY:
        ok = value == 1
    else:  # PRESS, LONG: ms held; PIN_DOWN: the ms the pin left its base
        ok = 0 <= value < 1 << 30
    if not ok:
        raise Refused("%s event value %d is out of range" % (sense.kind_name(kind), value))
