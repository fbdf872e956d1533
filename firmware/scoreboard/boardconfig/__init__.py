# Board configs: which game a board plays and how its buttons, sensors and display are wired.
#
# load() checks a config against the ESP32-WROOM-32's pin rules and fills in every default. The
# firmware calls it at boot and the host CLI before deploying, so a bad config is refused with the
# same message in both places, naming the key and the pin and saying what to do. Pure: no
# `machine`, no I/O beyond reading the file it is given. Runs on MicroPython and CPython.
#
# Line names follow the sensor-trace contract: "btn.<name>", "pin.<id>", "peg.<side>.<bed>.<hole>".
# MicroPython dicts do not keep insertion order, so every ordering here is canonical (the game's
# button list, the pin ids, side/bed/hole), never the order of keys in the file.
#
# A package: this loader, common.py (the error, the pin rules, the checks every piece uses, the
# line names), and a piece per part of a board that only some boards have, loaded only for a
# config that has it: pegs.py, pockets.py, keypad.py, and pins.py (the pin map's notes, for the
# host's wiring docs). What a game's board takes is the game's board.py (games/<game>/, through
# the registry). Once the board is built the whole package can go (unload()).

import json

from .common import (  # noqa: F401 (the package's names: boardconfig.STRAPPING, ...)
    ADC1,
    BEDS,
    FREE_GPIOS,
    FREE_TEXT,
    HOLES,
    INPUT_ONLY,
    KEY_LEGENDS,
    KEYPAD_COLS,
    KEYPAD_ROWS,
    MAX_SWITCH_LINES,
    PEG_BITS,
    PEG_ORDERS,
    PULLS,
    SECTIONS,
    SIDES,
    STRAPPING,
    BoardConfigError,
    analog_names,
    check_gpio,
    check_keys,
    expect_bool,
    expect_int,
    expect_object,
    expect_str,
    key_names,
    parse_peg,
    peg_name,
    peg_names,
    pocket_ids,
    quote,
    require,
    spec,
    spec_ids,
    switch_entry,
    switch_names,
)

# (key, default, minimum, maximum)
TIMINGS = (
    ("debounce_ms", 20, 1, 1000),
    ("min_press_ms", 20, 0, 60000),  # missing: debounce_ms (the default above is its default)
    ("long_press_ms", 800, 1, 60000),
    ("min_fall_ms", 30, 0, 10000),
    ("settle_ms", 2000, 1, 600000),
    ("peg_debounce_ms", 300, 0, 60000),
    ("stuck_ms", 60000, 1, 3600000),
    ("chatter_edges", 10, 2, 10000),
    ("chatter_window_ms", 400, 1, 600000),
    ("scan_ms", 5, 1, 1000),
    ("peg_scan_ms", 25, 1, 10000),
    ("watchdog_ms", 8000, 0, 600000),
)

_TOP = ("board", "description", "game", "game_config", "buttons", "pins", "pegs", "keypad",
        "display", "timings", "link", "pockets", "pocket_sensing")
_SSD1306 = ("driver", "sda", "scl", "addr", "freq", "contrast", "flip", "strapping_ok")


# -- sections -------------------------------------------------------------------------------------

def _buttons(value, game, sp):
    buttons = expect_object(value, "buttons")
    check_keys(buttons, sp.BUTTONS, "buttons", "button for %s" % game)
    for name in sp.REQUIRED:
        if name not in buttons:
            raise BoardConfigError("buttons: %s needs a %s button; add \"buttons\": {\"%s\": "
                                   "{\"pin\": N}}" % (game, quote(name), name), "buttons." + name)
    out = {}
    for name in buttons:
        out[name] = switch_entry(buttons[name], "buttons." + name, "button")
    return out


def _pins(value, game, sp):
    ids = sp.PINS
    pins = expect_object(value, "pins")
    check_keys(pins, ids, "pins", "pin id for %s" % game)
    out = {}
    for pid in ids:
        if pid not in pins:
            raise BoardConfigError("pins: missing pin %s: %s needs a tilt switch in each of %s"
                                   % (quote(pid), game, ", ".join(ids)), "pins." + pid)
        out[pid] = switch_entry(pins[pid], "pins." + pid, "pin")
    return out


def _display(value):
    disp = expect_object(value, "display")
    driver = expect_str(require(disp, "driver", "display"), "display.driver", ("ssd1306", "none"))
    if driver == "none":
        check_keys(disp, ("driver",), "display")
        return {"driver": "none"}
    check_keys(disp, _SSD1306, "display")
    ok = expect_bool(disp.get("strapping_ok", False), "display.strapping_ok")
    out = {"driver": "ssd1306", "strapping_ok": ok}
    for key in ("sda", "scl"):
        gpio = require(disp, key, "display")
        check_gpio("display." + key, gpio, "i2c", "none", ok)
        out[key] = gpio
    addr = disp.get("addr", 60)
    if type(addr) is not int or addr not in (60, 61):
        raise BoardConfigError("display.addr must be 60 (0x3C) or 61 (0x3D), the SSD1306's I2C "
                               "addresses, not %s" % quote(addr), "display.addr")
    out["addr"] = addr
    out["freq"] = expect_int(disp.get("freq", 400000), "display.freq", 10000, 1000000)
    out["contrast"] = expect_int(disp.get("contrast", 207), "display.contrast", 0, 255)
    out["flip"] = expect_bool(disp.get("flip", False), "display.flip")
    return out


def _timings(value):
    t = expect_object(value, "timings")
    check_keys(t, [k for k, _, _, _ in TIMINGS], "timings")
    out = {}
    for key, default, low, high in TIMINGS:
        if key == "min_press_ms" and key not in t:
            default = out["debounce_ms"]  # a press must outlast a bounce, at the least
        out[key] = expect_int(t.get(key, default), "timings." + key, low, high)
    if out["min_press_ms"] >= out["long_press_ms"]:
        raise BoardConfigError("timings.min_press_ms (%d) must be shorter than "
                               "timings.long_press_ms (%d)" % (out["min_press_ms"],
                                                               out["long_press_ms"]),
                               "timings.min_press_ms")
    if out["long_press_ms"] <= out["debounce_ms"]:
        raise BoardConfigError("timings.long_press_ms (%d) must be longer than "
                               "timings.debounce_ms (%d)" % (out["long_press_ms"],
                                                             out["debounce_ms"]),
                               "timings.long_press_ms")
    if 0 < out["watchdog_ms"] < 1000:
        raise BoardConfigError("timings.watchdog_ms (%d) must be 0 (off) or at least 1000: a "
                               "shorter watchdog reboots a board busy writing its journal"
                               % out["watchdog_ms"], "timings.watchdog_ms")
    return out


def _link(value):
    link = expect_object(value, "link")
    check_keys(link, ("test_mode",), "link")
    return {"test_mode": expect_bool(link.get("test_mode", False), "link.test_mode")}


def _game_config(game, value):
    gc = expect_object(value, "game_config")
    # The rules module checks its own config; a firmware built without that game's rules skips it.
    try:
        from gc import collect

        from ..rules import ConfigError, rules_for

        collect()  # the rules' code loads into a heap without the config's parsing garbage
        cls = rules_for(game)
    except (ImportError, ValueError):
        return dict(gc)
    try:
        return dict(cls(gc).config)
    except ConfigError as e:
        raise BoardConfigError("game_config: %s" % e, "game_config")


def _validate(raw):
    cfg = expect_object(raw, "the board config", "a JSON object")
    check_keys(cfg, _TOP, "")
    out = {"board": expect_str(require(cfg, "board", ""), "board", empty=False),
           "description": expect_str(cfg.get("description", ""), "description")}
    game = require(cfg, "game", "")
    sp = spec(game) if type(game) is str else None
    if sp is None:
        from .. import games

        raise BoardConfigError("game: unknown game %s; known: %s"
                               % (quote(game), ", ".join(sorted(games.IDS))), "game")
    out["game"] = game
    out["game_config"] = _game_config(game, cfg.get("game_config", {}))
    sensor = sp.SENSOR
    # A scorepad's keypad does everything; its buttons are optional.
    out["buttons"] = _buttons(cfg.get("buttons", {}) if sensor == "keypad"
                              else require(cfg, "buttons", ""), game, sp)
    for key in ("pins", "pegs", "keypad"):
        if key in cfg and key != sensor:
            from .. import games

            raise BoardConfigError("%s: a %s board has no %s (they belong to %s); remove it"
                                   % (key, game, {"pins": "tilt pins", "pegs": "peg holes",
                                                  "keypad": "keypad"}[key],
                                      ", ".join(sorted(games.with_sensor(key)))), key)
    if sensor == "pins":
        out["pins"] = _pins(require(cfg, "pins", ""), game, sp)
    elif sensor == "keypad":
        # Loaded only for a board with that sensor, like pockets.py: the others keep the RAM.
        from .keypad import keypad

        out["keypad"] = keypad(require(cfg, "keypad", ""))
    elif sensor == "pegs":
        from .pegs import pegs

        out["pegs"] = pegs(require(cfg, "pegs", ""))
    if "pockets" in cfg:
        if not spec_ids(sp, "POCKETS"):
            raise BoardConfigError("pockets: a %s board has no pocket sensors; remove it" % game,
                                   "pockets")
        # Loaded only for a board with pocket sensors: the other boards keep the RAM.
        from .pockets import pockets, sensing

        out["pockets"] = pockets(cfg["pockets"], game)
        out["pocket_sensing"] = sensing(cfg.get("pocket_sensing", {}))
    elif "pocket_sensing" in cfg:
        raise BoardConfigError("pocket_sensing: no pockets to tune; add \"pockets\" or remove "
                               "it", "pocket_sensing")
    out["display"] = _display(cfg.get("display", {"driver": "none"}))
    out["timings"] = _timings(cfg.get("timings", {}))
    out["link"] = _link(cfg.get("link", {}))
    if len(switch_names(out)) > MAX_SWITCH_LINES:
        raise BoardConfigError("buttons and pins: %d lines, at most %d fit the line bitmap"
                               % (len(switch_names(out)), MAX_SWITCH_LINES), "buttons")
    _check_shared(out)
    return out


def _check_shared(cfg):
    seen = {}
    for gpio, path in _gpio_paths(cfg):
        if gpio in seen:
            raise BoardConfigError("GPIO %d is used twice: by %s and by %s; give each line its "
                                   "own GPIO" % (gpio, seen[gpio], path), path)
        seen[gpio] = path


def load(source):
    """A validated config, defaults filled, from a file path or a dict (not modified).

    Raises BoardConfigError naming the file (if any), the key and the pin. Loading an already
    loaded config gives the same config back.
    """
    where = None
    if type(source) is str:
        where = source
        try:
            with open(source) as f:
                text = f.read()  # both interpreters check the UTF-8 as they decode
        except OSError as e:
            raise BoardConfigError("%s: cannot read the board config (%s)" % (source, e))
        except UnicodeError:
            raise BoardConfigError("%s: not UTF-8 text: a board config is a JSON file" % source)
        if text.startswith("\ufeff"):
            text = text[1:]  # a byte order mark some editors put first
        try:
            source = _loads(text)
        except ValueError as e:
            raise BoardConfigError("%s: not valid JSON (%s)" % (where, e))
    try:
        return _validate(source)
    except BoardConfigError as e:
        if where is None:
            raise
        raise BoardConfigError("%s: %s" % (where, e), e.path)


def _loads(text):
    # json.loads with scoreboard.safejson's limits (nesting, NaN), inline: a separate module
    # would stay on a board's heap after boot, while this one is dropped (main.py).
    if text.count("[") + text.count("{") > 32 or "N" in text or "I" in text:
        level = 0
        quoted = esc = False
        for ch in text:
            if quoted:
                if esc:
                    esc = False
                elif ch == "\\":
                    esc = True
                elif ch == '"':
                    quoted = False
            elif ch == '"':
                quoted = True
            elif ch in "[{":
                level += 1
                if level > 32:
                    raise ValueError("nested deeper than 32 levels")
            elif ch in "]}":
                level -= 1
            elif ch in "NI":
                raise ValueError("NaN and Infinity are not JSON numbers")
    return json.loads(text)


# -- line names (switch_names, analog_names, pocket_ids, key_names: common.py) ---------------

def line_names(cfg):
    """Every logical line of the board: buttons, tilt pins, pockets, then pegs, keys or colour
    sensors (sensor-trace names)."""
    names = switch_names(cfg)
    if "pegs" in cfg:
        names += peg_names()
    if "keypad" in cfg:
        names += key_names(cfg)
    return names + analog_names(cfg)


def tilt_mask(cfg):
    """Bitmap of the tilt-switch lines within the Lines bitmap (they get edge interrupts)."""
    mask = 0
    for i, name in enumerate(switch_names(cfg)):
        if name.startswith("pin."):
            mask |= 1 << i
    return mask


def edge_mask(cfg):
    """Bitmap of the Lines with an edge interrupt: all of them (buttons, tilt switches, pocket
    beams), so no change is missed between two looks and a table at rest needs none."""
    return (1 << len(switch_names(cfg))) - 1


def active_low_mask(cfg):
    """Bitmap of the Lines whose pressed/tilted level is 0 (the hal inverts these)."""
    mask = 0
    for i, name in enumerate(switch_names(cfg)):
        kind, _, key = name.partition(".")
        entry = cfg[SECTIONS[kind]][key]
        if entry["active"] == 0:
            mask |= 1 << i
    return mask


def chain_map(cfg):
    """bytes, one per bit of the 74HC165 chain in reading order: side << 5 | peg bit, 255 unused.

    Bit 0 is the first bit read after the load pulse: input H (D7) of the chip whose QH feeds the
    ESP32's data pin; bit 7 is its input A (D0); bit 8 is input H of the next chip up the chain.
    """
    pegs = cfg["pegs"]
    n = pegs["chips"] * 8
    m = bytearray(b"\xff" * n)
    order = pegs["order"]
    if order == "custom":
        for i, name in enumerate(pegs["map"]):
            if name is not None:
                side, bit = parse_peg(name)
                m[i] = side << 5 | bit
        return bytes(m)
    for i in range(SIDES * PEG_BITS):
        if order == "side-bed-hole":
            side, bit = i // PEG_BITS, i % PEG_BITS
        else:  # bed-side-hole: bed 1 side 0 holes 1-3, bed 1 side 1 holes 1-3, bed 2 ...
            side = (i % (SIDES * HOLES)) // HOLES
            bit = (i // (SIDES * HOLES)) * HOLES + i % HOLES
        m[i] = side << 5 | bit
    return bytes(m)


def _gpio_paths(cfg):
    """(gpio, key path) for every GPIO the config takes, in pins.uses()'s order."""
    rows = []
    for name in switch_names(cfg):
        kind, _, key = name.partition(".")
        section = SECTIONS[kind]
        e = cfg[section][key]
        rows.append((e["pin"], "%s.%s.pin" % (section, key)))
        if "colour" in e:
            rows.append((e["colour"], "%s.%s.colour" % (section, key)))
    if "pegs" in cfg:
        p = cfg["pegs"]
        spi = p["driver"] == "spi"
        for key, wire in (("load", "latch"), ("clock", "sck"), ("data", "miso")):
            rows.append((p[key], "pegs." + (wire if spi else key)))
        if spi:
            rows.append((p["mosi"], "pegs.mosi"))
    if "keypad" in cfg:
        for key in ("rows", "cols"):
            for i, gpio in enumerate(cfg["keypad"][key]):
                rows.append((gpio, "keypad.%s[%d]" % (key, i)))
    d = cfg["display"]
    if d["driver"] == "ssd1306":
        rows.append((d["sda"], "display.sda"))
        rows.append((d["scl"], "display.scl"))
    return rows


def pin_map(cfg):
    """Rows (gpio, line, direction, pull, note), sorted by GPIO, for pin maps and wiring docs
    (boardconfig/pins.py: their notes are text a board never needs in its RAM)."""
    from .pins import pin_map as rows

    return rows(cfg)


def unload():
    """Let the whole package go, with every game's board.py it loaded: once the board is built
    nothing needs them, and their code frees the board's RAM (main.py)."""
    import sys

    from .. import games

    for name in [n for n in sys.modules if n.startswith("scoreboard.boardconfig.")]:
        games.forget(name)
    for g in games.IDS:
        games.forget("scoreboard.games.%s.board" % games.module_name(g))
    games.forget("scoreboard.boardconfig")
