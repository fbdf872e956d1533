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

import json


class BoardConfigError(ValueError):
    """A board config that cannot drive a board; `path` names the key ("timings.debounce_ms")."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


# -- the ESP32-WROOM-32 (ESP32-DevKitC) -----------------------------------------------------------

FREE_GPIOS = (4, 13, 14, 16, 17, 18, 19, 21, 22, 23, 25, 26, 27, 32, 33)
INPUT_ONLY = (34, 35, 36, 37, 38, 39)
_FREE_TEXT = "4, 13, 14, 16-19, 21-23, 25-27, 32 or 33"
_FLASH = (6, 7, 8, 9, 10, 11)
_ABSENT = (20, 24, 28, 29, 30, 31)
_UART0 = {1: "TX", 3: "RX"}
STRAPPING = {
    0: "held low at reset it starts the ROM bootloader instead of the firmware "
       "(the DevKitC's BOOT button is wired to it)",
    2: "it must be low or floating at reset, or flashing over USB fails",
    5: "its level at reset sets the SDIO timing and the chip drives it during boot",
    12: "high at reset it selects 1.8 V flash and a WROOM-32 (3.3 V flash) will not boot",
    15: "low at reset it silences the boot log and changes the SDIO timing",
}

# Lines read as one small int: 30 bits keeps it a MicroPython small int on the ESP32 (31-bit
# signed), so reading it never allocates.
MAX_SWITCH_LINES = 30

# -- games ----------------------------------------------------------------------------------------
# "buttons" is also the canonical order of the button lines. "menu" is a spare button any game may
# have (service screen, new game).

GAMES = {
    "shove-hapenny": {
        "sensor": "pegs",
        "buttons": ("done", "void", "out_of_turn", "undo", "claim", "menu"),
        "required": ("done",),
        "pins": (),
    },
    "five-pins": {
        "sensor": "pins",
        "buttons": ("confirm", "carom3", "carom4", "foul", "undo", "break", "menu"),
        "required": ("confirm",),
        "pins": ("1", "2", "3", "4", "C"),
    },
    # The scorepad: a 4x4 keypad and the OLED at the table's edge (docs/scorepad.md).
    "texas-42": {"sensor": "keypad", "buttons": ("menu",), "required": (), "pins": ()},
    "domino-bingo": {"sensor": "keypad", "buttons": ("menu",), "required": (), "pins": ()},
    "tally": {"sensor": "keypad", "buttons": ("menu",), "required": (), "pins": ()},
}
# Seven pins (SP-2): a tilt switch in each pin, buttons for what the switches cannot tell.
GAMES["seven-pins"] = {
    "sensor": "pins",
    "buttons": ("confirm", "carom", "called", "pocket", "foul", "undo", "break", "menu"),
    "required": ("confirm",),
    "pins": ("K", "S1", "S2", "S3", "S4", "M1", "M3"),
    "pockets": ("1", "2", "3", "4", "5", "6"),  # optional beams: object balls pocketed (SP-10)
}
# Novuss: the pucks pocketed are counted on buttons (own, opp) or by pocket sensors.
GAMES["novuss"] = {
    "sensor": "none",
    "buttons": ("confirm", "own", "opp", "foul", "undo", "start", "menu"),
    "required": ("confirm",),
    "pins": (),
    "pockets": ("1", "2", "3", "4"),  # optional beam + colour sensor in each corner pocket
    "colour": ("1", "2", "3", "4"),  # pockets that may carry a colour sensor
}
ADC1 = (32, 33, 34, 35, 36, 37, 38, 39)  # ADC2 cannot be read while Wi-Fi is on

# A 4x4 matrix keypad: rows driven low one at a time, columns read with pull-ups. Key i (row-major)
# is the line "key.<legend>" with its legend from "keys" (the common layout by default).
KEYPAD_ROWS = 4
KEYPAD_COLS = 4
KEY_LEGENDS = "123A456B789C*0#D"

SIDES = 2
BEDS = 9
HOLES = 3
PEG_BITS = BEDS * HOLES  # per side: bit (bed-1)*3 + (hole-1)
PEG_ORDERS = ("side-bed-hole", "bed-side-hole", "custom")

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
_SWITCH = ("pin", "pull", "active", "strapping_ok", "note")
# The SPI driver's names for the chain's three wires (SH/LD, CLK, QH), and the bus's MOSI
# output, which the 74HC165 does not use but the ESP32's SPI peripheral drives: by default the
# bus's own MOSI pin (SPI 1: GPIO 13, SPI 2: GPIO 23), left unconnected.
_SSD1306 = ("driver", "sda", "scl", "addr", "freq", "contrast", "flip", "strapping_ok")
_PULLS = ("up", "down", "none")


# -- small helpers --------------------------------------------------------------------------------

def _q(value):
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."  # a hostile value is not echoed whole


def _distance(a, b):
    # Levenshtein distance, for "did you mean" hints on misspelt keys.
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[len(b)]


def _hint(word, known):
    if len(word) > 40:
        return ""  # no key is that long: skip the quadratic distance for a hostile key
    best = None
    for k in known:
        d = _distance(word, k)
        if d <= max(1, len(k) // 3) and (best is None or d < best[0]):
            best = (d, k)
    return (" (did you mean %s?)" % _q(best[1])) if best else ""


def _join(path, key):
    if len(key) > 40:
        key = key[:37] + "..."
    return key if not path else path + "." + key


def _check_keys(obj, known, path, what="key"):
    for key in sorted(obj):
        if key not in known:
            raise BoardConfigError(
                "%s: unknown %s%s; known: %s" % (_join(path, key), what, _hint(key, known),
                                                 ", ".join(known)), _join(path, key))


def _obj(value, path, what="an object"):
    if type(value) is not dict:
        raise BoardConfigError("%s must be %s ({...}), not %s" % (path, what, _q(value)), path)
    return value


def _require(obj, key, path, hint=""):
    if key not in obj:
        raise BoardConfigError("%s: missing required key %s%s" % (path or "config", _q(key), hint),
                               _join(path, key))
    return obj[key]


def _int(value, path, low, high):
    if type(value) is not int or value < low or value > high:
        raise BoardConfigError("%s must be an integer from %d to %d, not %s"
                               % (path, low, high, _q(value)), path)
    return value


def _bool(value, path):
    if type(value) is not bool:
        raise BoardConfigError("%s must be true or false, not %s" % (path, _q(value)), path)
    return value


def _str(value, path, allowed=None, empty=True):
    if type(value) is not str or (not empty and not value):
        raise BoardConfigError("%s must be a%s string, not %s"
                               % (path, "" if empty else " non-empty", _q(value)), path)
    if allowed is not None and value not in allowed:
        raise BoardConfigError("%s must be one of %s, not %s"
                               % (path, ", ".join(_q(a) for a in allowed), _q(value)), path)
    return value


# -- GPIO rules -----------------------------------------------------------------------------------

def _check_gpio(path, gpio, direction, pull, strapping_ok):
    """Refuse a GPIO the ESP32-WROOM-32 cannot give to this use; `direction` is in/out/i2c."""
    if type(gpio) is not int:
        raise BoardConfigError("%s must be a GPIO number (an integer), not %s" % (path, _q(gpio)),
                               path)
    if gpio < 0 or gpio > 39:
        raise BoardConfigError("%s: GPIO %d does not exist: the ESP32 has GPIOs 0-39; use one of %s"
                               % (path, gpio, _FREE_TEXT), path)
    if gpio in _ABSENT:
        raise BoardConfigError("%s: GPIO %d does not exist on the ESP32; use one of %s"
                               % (path, gpio, _FREE_TEXT), path)
    if gpio in _FLASH:
        raise BoardConfigError(
            "%s: GPIO %d is forbidden: GPIOs 6-11 are wired to the module's SPI flash and using "
            "one crashes the board; use one of %s" % (path, gpio, _FREE_TEXT), path)
    if gpio in _UART0:
        raise BoardConfigError(
            "%s: GPIO %d is UART0 %s, the USB serial line that carries the REPL and the link to "
            "chalk; use one of %s" % (path, gpio, _UART0[gpio], _FREE_TEXT), path)
    if gpio in STRAPPING and strapping_ok is not True:
        raise BoardConfigError(
            "%s: GPIO %d is a strapping pin: %s. Use one of %s, or, if the wiring leaves it at "
            "its boot level at reset, add \"strapping_ok\": true to this entry"
            % (path, gpio, STRAPPING[gpio], _FREE_TEXT), path)
    if gpio in INPUT_ONLY:
        if direction != "in":
            raise BoardConfigError(
                "%s: GPIO %d is input-only (GPIOs 34-39 have no output driver) and cannot drive "
                "%s; use one of %s" % (path, gpio, "an I2C line" if direction == "i2c"
                                       else "an output", _FREE_TEXT), path)
        if pull != "none":
            raise BoardConfigError(
                "%s: GPIO %d has no internal pull-%s (GPIOs 34-39 are input-only, without pull "
                "resistors): set \"pull\": \"none\" and fit an external resistor (10 kOhm to 3.3 V "
                "or GND), or use one of %s" % (path, gpio, pull, _FREE_TEXT), path)


# -- sections -------------------------------------------------------------------------------------

def _switch(entry, path, kind):
    """A button or tilt-switch entry: {"pin", "pull", "active", "strapping_ok", "note"}."""
    entry = _obj(entry, path)
    _check_keys(entry, _SWITCH, path)
    gpio = _require(entry, "pin", path)
    pull = _str(entry.get("pull", "up"), path + ".pull", _PULLS)
    if "active" in entry:
        active = entry["active"]
        if type(active) is not int or active not in (0, 1):
            raise BoardConfigError("%s.active must be 0 (pressed/tilted reads low) or 1 (reads "
                                   "high), not %s" % (path, _q(active)), path + ".active")
    elif kind == "button" and pull != "none":
        active = 0 if pull == "up" else 1  # a button shorts its line to the opposite rail
    else:
        raise BoardConfigError(
            "%s: missing required key \"active\": say whether the line reads 1 (\"active\": 1) or "
            "0 (\"active\": 0) when the %s" % (path, "button is pressed" if kind == "button"
                                                else "beam is broken" if kind == "pocket"
                                                else "pin is tilted"), path + ".active")
    ok = _bool(entry.get("strapping_ok", False), path + ".strapping_ok")
    note = _str(entry.get("note", ""), path + ".note")
    _check_gpio(path + ".pin", gpio, "in", pull, ok)
    return {"pin": gpio, "pull": pull, "active": active, "strapping_ok": ok, "note": note}


def _buttons(value, game):
    spec = GAMES[game]
    buttons = _obj(value, "buttons")
    _check_keys(buttons, spec["buttons"], "buttons", "button for %s" % game)
    for name in spec["required"]:
        if name not in buttons:
            raise BoardConfigError("buttons: %s needs a %s button; add \"buttons\": {\"%s\": "
                                   "{\"pin\": N}}" % (game, _q(name), name), "buttons." + name)
    out = {}
    for name in buttons:
        out[name] = _switch(buttons[name], "buttons." + name, "button")
    return out


def _pins(value, game):
    ids = GAMES[game]["pins"]
    pins = _obj(value, "pins")
    _check_keys(pins, ids, "pins", "pin id for %s" % game)
    out = {}
    for pid in ids:
        if pid not in pins:
            raise BoardConfigError("pins: missing pin %s: %s needs a tilt switch in each of %s"
                                   % (_q(pid), game, ", ".join(ids)), "pins." + pid)
        out[pid] = _switch(pins[pid], "pins." + pid, "pin")
    return out


def _display(value):
    disp = _obj(value, "display")
    driver = _str(_require(disp, "driver", "display"), "display.driver", ("ssd1306", "none"))
    if driver == "none":
        _check_keys(disp, ("driver",), "display")
        return {"driver": "none"}
    _check_keys(disp, _SSD1306, "display")
    ok = _bool(disp.get("strapping_ok", False), "display.strapping_ok")
    out = {"driver": "ssd1306", "strapping_ok": ok}
    for key in ("sda", "scl"):
        gpio = _require(disp, key, "display")
        _check_gpio("display." + key, gpio, "i2c", "none", ok)
        out[key] = gpio
    addr = disp.get("addr", 60)
    if type(addr) is not int or addr not in (60, 61):
        raise BoardConfigError("display.addr must be 60 (0x3C) or 61 (0x3D), the SSD1306's I2C "
                               "addresses, not %s" % _q(addr), "display.addr")
    out["addr"] = addr
    out["freq"] = _int(disp.get("freq", 400000), "display.freq", 10000, 1000000)
    out["contrast"] = _int(disp.get("contrast", 207), "display.contrast", 0, 255)
    out["flip"] = _bool(disp.get("flip", False), "display.flip")
    return out


def _timings(value):
    t = _obj(value, "timings")
    _check_keys(t, [k for k, _, _, _ in TIMINGS], "timings")
    out = {}
    for key, default, low, high in TIMINGS:
        if key == "min_press_ms" and key not in t:
            default = out["debounce_ms"]  # a press must outlast a bounce, at the least
        out[key] = _int(t.get(key, default), "timings." + key, low, high)
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
    link = _obj(value, "link")
    _check_keys(link, ("test_mode",), "link")
    return {"test_mode": _bool(link.get("test_mode", False), "link.test_mode")}


def _game_config(game, value):
    gc = _obj(value, "game_config")
    # The rules module checks its own config; a firmware built without that game's rules skips it.
    try:
        from .rules import ConfigError, rules_for
        cls = rules_for(game)
    except (ImportError, ValueError):
        return dict(gc)
    try:
        return dict(cls(gc).config)
    except ConfigError as e:
        raise BoardConfigError("game_config: %s" % e, "game_config")


def _validate(raw):
    cfg = _obj(raw, "the board config", "a JSON object")
    _check_keys(cfg, _TOP, "")
    out = {"board": _str(_require(cfg, "board", ""), "board", empty=False),
           "description": _str(cfg.get("description", ""), "description")}
    game = _require(cfg, "game", "")
    if type(game) is not str or game not in GAMES:
        raise BoardConfigError("game: unknown game %s; known: %s"
                               % (_q(game), ", ".join(sorted(GAMES))), "game")
    out["game"] = game
    out["game_config"] = _game_config(game, cfg.get("game_config", {}))
    sensor = GAMES[game]["sensor"]
    # A scorepad's keypad does everything; its buttons are optional.
    out["buttons"] = _buttons(cfg.get("buttons", {}) if sensor == "keypad"
                              else _require(cfg, "buttons", ""), game)
    for key in ("pins", "pegs", "keypad"):
        if key in cfg and key != sensor:
            raise BoardConfigError("%s: a %s board has no %s (they belong to %s); remove it"
                                   % (key, game, {"pins": "tilt pins", "pegs": "peg holes",
                                                  "keypad": "keypad"}[key],
                                      ", ".join(g for g in sorted(GAMES)
                                                if GAMES[g]["sensor"] == key)), key)
    if sensor == "pins":
        out["pins"] = _pins(_require(cfg, "pins", ""), game)
    elif sensor == "keypad":
        # Loaded only for a board with that sensor, like boardpockets: the others keep the RAM.
        from . import boardkeypad
        out["keypad"] = boardkeypad.keypad(_require(cfg, "keypad", ""))
    elif sensor == "pegs":
        from . import boardpegs
        out["pegs"] = boardpegs.pegs(_require(cfg, "pegs", ""))
    if "pockets" in cfg:
        if not GAMES[game].get("pockets"):
            raise BoardConfigError("pockets: a %s board has no pocket sensors; remove it" % game,
                                   "pockets")
        # Loaded only for a board with pocket sensors: the other boards keep the RAM.
        from . import boardpockets
        out["pockets"] = boardpockets.pockets(cfg["pockets"], game)
        out["pocket_sensing"] = boardpockets.sensing(cfg.get("pocket_sensing", {}))
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


# -- line names -----------------------------------------------------------------------------------

def peg_name(side, bed, hole):
    return "peg.%d.%d.%d" % (side, bed, hole)


def peg_names():
    """All 54 peg lines: side 0 then 1, bed 1-9, hole 1-3."""
    return [peg_name(s, b, h) for s in range(SIDES) for b in range(1, BEDS + 1)
            for h in range(1, HOLES + 1)]


def parse_peg(name):
    """(side, bit) of "peg.<side>.<bed>.<hole>", bit = (bed-1)*3 + (hole-1); None if not a peg."""
    parts = name.split(".")
    if len(parts) != 4 or parts[0] != "peg":
        return None
    for p in parts[1:]:
        if len(p) != 1 or not p.isdigit():
            return None
    side, bed, hole = int(parts[1]), int(parts[2]), int(parts[3])
    if side >= SIDES or not 1 <= bed <= BEDS or not 1 <= hole <= HOLES:
        return None
    return side, (bed - 1) * HOLES + hole - 1


def switch_names(cfg):
    """Lines in the order of the Lines bitmap: buttons (game's order), then tilt pins."""
    names = ["btn." + b for b in GAMES[cfg["game"]]["buttons"] if b in cfg["buttons"]]
    if "pins" in cfg:
        names += ["pin." + p for p in GAMES[cfg["game"]]["pins"] if p in cfg["pins"]]
    if "pockets" in cfg:
        names += ["pocket." + p for p in GAMES[cfg["game"]]["pockets"] if p in cfg["pockets"]]
    return names


def analog_names(cfg):
    """The analog lines, in pocket order: "colour.<pocket>" for each pocket with a colour
    sensor (sensor-trace values 0..4095)."""
    if "pockets" not in cfg:
        return []
    return ["colour." + p for p in GAMES[cfg["game"]]["pockets"]
            if p in cfg["pockets"] and "colour" in cfg["pockets"][p]]


def line_names(cfg):
    """Every logical line of the board: buttons, tilt pins, pockets, then pegs, keys or colour
    sensors (sensor-trace names)."""
    names = switch_names(cfg)
    if "pegs" in cfg:
        names += peg_names()
    if "keypad" in cfg:
        names += key_names(cfg)
    return names + analog_names(cfg)


def key_names(cfg):
    """The keypad's lines, "key.<legend>", key i = row i // 4, column i % 4."""
    return ["key." + ch for ch in cfg["keypad"]["keys"]]


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


SECTIONS = {"btn": "buttons", "pin": "pins", "pocket": "pockets"}  # line kind -> config key


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
    """(gpio, key path) for every GPIO the config takes, in boardpins.uses()'s order."""
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
    (scoreboard/boardpins.py: their notes are text a board never needs in its RAM)."""
    from .boardpins import pin_map as rows

    return rows(cfg)
