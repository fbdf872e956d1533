# Board configs: the pocket sensors of seven-pins and novuss boards (docs/board-config.md).
#
# Split from boardconfig so that boards without pockets never load it. A pocket entry is a switch
# entry (the beam receiver's line) plus, on a novuss board, "colour": the ADC1 GPIO of the
# pocket's reflective colour sensor. Runs on MicroPython and CPython.

from .boardconfig import (
    _SWITCH,
    ADC1,
    GAMES,
    BoardConfigError,
    _check_gpio,
    _check_keys,
    _int,
    _obj,
    _switch,
)

_POCKET = _SWITCH + ("colour",)
# pocket_sensing: (key, default, minimum, maximum); see sense/pockets.py
POCKET_SENSING = (
    ("min_ms", 8, 1, 1000),
    ("striker_ms", 60, 1, 10000),
    ("black_below", 1200, 0, 4095),
    ("red_below", 2800, 0, 4096),
)


def pockets(value, game):
    ids = GAMES[game].get("pockets", ())
    pockets = _obj(value, "pockets")
    _check_keys(pockets, ids, "pockets", "pocket for %s" % game)
    if not pockets:
        raise BoardConfigError("pockets: list the pockets fitted with a beam (%s), or leave the "
                               "key out" % ", ".join(ids), "pockets")
    out = {}
    for pid in ids:
        if pid not in pockets:
            continue
        path = "pockets." + pid
        entry = _obj(pockets[pid], path)
        _check_keys(entry, _POCKET, path)
        sw = dict(entry)
        sw.pop("colour", None)
        out[pid] = _switch(sw, path, "pocket")
        if "colour" in entry:
            gpio = entry["colour"]
            cpath = path + ".colour"
            if pid not in GAMES[game].get("colour", ()):
                raise BoardConfigError("%s: a %s board has no colour sensors (only novuss "
                                       "pockets tell a red from a black); remove it"
                                       % (cpath, game), cpath)
            _check_gpio(cpath, gpio, "in", "none", False)
            if gpio not in ADC1:
                raise BoardConfigError(
                    "%s: GPIO %d cannot read an analog colour sensor: use an ADC1 pin, GPIO "
                    "32-39 (ADC2 pins cannot be read while Wi-Fi is on)" % (cpath, gpio), cpath)
            out[pid]["colour"] = gpio
    return out


def sensing(value):
    ps = _obj(value, "pocket_sensing")
    _check_keys(ps, [k for k, _, _, _ in POCKET_SENSING], "pocket_sensing")
    out = {}
    for key, default, low, high in POCKET_SENSING:
        out[key] = _int(ps.get(key, default), "pocket_sensing." + key, low, high)
    if out["black_below"] > out["red_below"]:
        raise BoardConfigError("pocket_sensing.black_below (%d) must not be above red_below (%d)"
                               % (out["black_below"], out["red_below"]),
                               "pocket_sensing.black_below")
    return out
