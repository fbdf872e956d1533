# Board configs: the pocket sensors of a board whose game has pockets (its board.py: POCKETS;
# docs/board-config.md).
#
# A piece of its own so that boards without pockets never load it. A pocket entry is a switch
# entry (the beam receiver's line) plus, where the game's board.py lists the pocket under COLOUR,
# "colour": the ADC1 GPIO of the pocket's reflective colour sensor. Runs on MicroPython and
# CPython.

from .common import (
    ADC1,
    SWITCH_KEYS,
    BoardConfigError,
    check_gpio,
    check_keys,
    expect_int,
    expect_object,
    spec,
    spec_ids,
    switch_entry,
)

_POCKET = SWITCH_KEYS + ("colour",)
# pocket_sensing: (key, default, minimum, maximum); see sense/pockets.py
POCKET_SENSING = (
    ("min_ms", 8, 1, 1000),
    ("striker_ms", 60, 1, 10000),
    ("black_below", 1200, 0, 4095),
    ("red_below", 2800, 0, 4096),
)


def pockets(value, game):
    sp = spec(game)
    ids = spec_ids(sp, "POCKETS")
    pockets = expect_object(value, "pockets")
    check_keys(pockets, ids, "pockets", "pocket for %s" % game)
    if not pockets:
        raise BoardConfigError("pockets: list the pockets fitted with a beam (%s), or leave the "
                               "key out" % ", ".join(ids), "pockets")
    out = {}
    for pid in ids:
        if pid not in pockets:
            continue
        path = "pockets." + pid
        entry = expect_object(pockets[pid], path)
        check_keys(entry, _POCKET, path)
        sw = dict(entry)
        sw.pop("colour", None)
        out[pid] = switch_entry(sw, path, "pocket")
        if "colour" in entry:
            gpio = entry["colour"]
            cpath = path + ".colour"
            if pid not in spec_ids(sp, "COLOUR"):
                raise BoardConfigError("%s: a %s board has no colour sensors (only %s pockets "
                                       "tell one colour from another); remove it"
                                       % (cpath, game, _colour_games()), cpath)
            check_gpio(cpath, gpio, "in", "none", False)
            if gpio not in ADC1:
                raise BoardConfigError(
                    "%s: GPIO %d cannot read an analog colour sensor: use an ADC1 pin, GPIO "
                    "32-39 (ADC2 pins cannot be read while Wi-Fi is on)" % (cpath, gpio), cpath)
            out[pid]["colour"] = gpio
    return out


def sensing(value):
    ps = expect_object(value, "pocket_sensing")
    check_keys(ps, [k for k, _, _, _ in POCKET_SENSING], "pocket_sensing")
    out = {}
    for key, default, low, high in POCKET_SENSING:
        out[key] = expect_int(ps.get(key, default), "pocket_sensing." + key, low, high)
    if out["black_below"] > out["red_below"]:
        raise BoardConfigError("pocket_sensing.black_below (%d) must not be above red_below (%d)"
                               % (out["black_below"], out["red_below"]),
                               "pocket_sensing.black_below")
    return out


def _colour_games():
    """The games whose pockets may carry a colour sensor, for a message."""
    from .. import games

    return " and ".join(g for g in games.IDS if spec_ids(spec(g), "COLOUR"))
