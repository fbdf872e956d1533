# Board configs, what every piece of the package shares: the error, the ESP32-WROOM-32's pin
# rules, the checks of one value, a switch entry, and the line names (docs/board-config.md). The
# pieces (pegs.py, pins.py, pockets.py, keypad.py) and the loader (__init__.py) import this and
# nothing of each other, so a board loads only the pieces its config needs. What a game's board
# takes (its buttons, pins, pockets, sensor) is the game's own board.py, found through the
# registry. Pure: no `machine`, no I/O. Runs on MicroPython and CPython.

import json

from .. import games


class BoardConfigError(ValueError):
    """A board config that cannot drive a board; `path` names the key ("timings.debounce_ms")."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


# -- the ESP32-WROOM-32 (ESP32-DevKitC) -----------------------------------------------------------

FREE_GPIOS = (4, 13, 14, 16, 17, 18, 19, 21, 22, 23, 25, 26, 27, 32, 33)
INPUT_ONLY = (34, 35, 36, 37, 38, 39)
FREE_TEXT = "4, 13, 14, 16-19, 21-23, 25-27, 32 or 33"
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

ADC1 = (32, 33, 34, 35, 36, 37, 38, 39)  # ADC2 cannot be read while Wi-Fi is on

# Lines read as one small int: 30 bits keeps it a MicroPython small int on the ESP32 (31-bit
# signed), so reading it never allocates.
MAX_SWITCH_LINES = 30

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


SWITCH_KEYS = ("pin", "pull", "active", "strapping_ok", "note")
PULLS = ("up", "down", "none")


# -- small helpers --------------------------------------------------------------------------------

def quote(value):
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
    return (" (did you mean %s?)" % quote(best[1])) if best else ""


def _join(path, key):
    if len(key) > 40:
        key = key[:37] + "..."
    return key if not path else path + "." + key


def check_keys(obj, known, path, what="key"):
    for key in sorted(obj):
        if key not in known:
            raise BoardConfigError(
                "%s: unknown %s%s; known: %s" % (_join(path, key), what, _hint(key, known),
                                                 ", ".join(known)), _join(path, key))


def expect_object(value, path, what="an object"):
    if type(value) is not dict:
        raise BoardConfigError("%s must be %s ({...}), not %s" % (path, what, quote(value)), path)
    return value


def require(obj, key, path, hint=""):
    if key not in obj:
        raise BoardConfigError("%s: missing required key %s%s"
                               % (path or "config", quote(key), hint), _join(path, key))
    return obj[key]


def expect_int(value, path, low, high):
    if type(value) is not int or value < low or value > high:
        raise BoardConfigError("%s must be an integer from %d to %d, not %s"
                               % (path, low, high, quote(value)), path)
    return value


def expect_bool(value, path):
    if type(value) is not bool:
        raise BoardConfigError("%s must be true or false, not %s" % (path, quote(value)), path)
    return value


def expect_str(value, path, allowed=None, empty=True):
    if type(value) is not str or (not empty and not value):
        raise BoardConfigError("%s must be a%s string, not %s"
                               % (path, "" if empty else " non-empty", quote(value)), path)
    if allowed is not None and value not in allowed:
        raise BoardConfigError("%s must be one of %s, not %s"
                               % (path, ", ".join(quote(a) for a in allowed), quote(value)), path)
    return value


# -- GPIO rules -----------------------------------------------------------------------------------

def check_gpio(path, gpio, direction, pull, strapping_ok):
    """Refuse a GPIO the ESP32-WROOM-32 cannot give to this use; `direction` is in/out/i2c."""
    if type(gpio) is not int:
        raise BoardConfigError("%s must be a GPIO number (an integer), not %s"
                               % (path, quote(gpio)), path)
    if gpio < 0 or gpio > 39:
        raise BoardConfigError("%s: GPIO %d does not exist: the ESP32 has GPIOs 0-39; use one of %s"
                               % (path, gpio, FREE_TEXT), path)
    if gpio in _ABSENT:
        raise BoardConfigError("%s: GPIO %d does not exist on the ESP32; use one of %s"
                               % (path, gpio, FREE_TEXT), path)
    if gpio in _FLASH:
        raise BoardConfigError(
            "%s: GPIO %d is forbidden: GPIOs 6-11 are wired to the module's SPI flash and using "
            "one crashes the board; use one of %s" % (path, gpio, FREE_TEXT), path)
    if gpio in _UART0:
        raise BoardConfigError(
            "%s: GPIO %d is UART0 %s, the USB serial line that carries the REPL and the link to "
            "chalk; use one of %s" % (path, gpio, _UART0[gpio], FREE_TEXT), path)
    if gpio in STRAPPING and strapping_ok is not True:
        raise BoardConfigError(
            "%s: GPIO %d is a strapping pin: %s. Use one of %s, or, if the wiring leaves it at "
            "its boot level at reset, add \"strapping_ok\": true to this entry"
            % (path, gpio, STRAPPING[gpio], FREE_TEXT), path)
    if gpio in INPUT_ONLY:
        if direction != "in":
            raise BoardConfigError(
                "%s: GPIO %d is input-only (GPIOs 34-39 have no output driver) and cannot drive "
                "%s; use one of %s" % (path, gpio, "an I2C line" if direction == "i2c"
                                       else "an output", FREE_TEXT), path)
        if pull != "none":
            raise BoardConfigError(
                "%s: GPIO %d has no internal pull-%s (GPIOs 34-39 are input-only, without pull "
                "resistors): set \"pull\": \"none\" and fit an external resistor (10 kOhm to 3.3 V "
                "or GND), or use one of %s" % (path, gpio, pull, FREE_TEXT), path)


# -- a switch (a button, a tilt pin, a pocket's beam) -------------------------------------------

def switch_entry(entry, path, kind):
    """A button or tilt-switch entry: {"pin", "pull", "active", "strapping_ok", "note"}."""
    entry = expect_object(entry, path)
    check_keys(entry, SWITCH_KEYS, path)
    gpio = require(entry, "pin", path)
    pull = expect_str(entry.get("pull", "up"), path + ".pull", PULLS)
    if "active" in entry:
        active = entry["active"]
        if type(active) is not int or active not in (0, 1):
            raise BoardConfigError("%s.active must be 0 (pressed/tilted reads low) or 1 (reads "
                                   "high), not %s" % (path, quote(active)), path + ".active")
    elif kind == "button" and pull != "none":
        active = 0 if pull == "up" else 1  # a button shorts its line to the opposite rail
    else:
        raise BoardConfigError(
            "%s: missing required key \"active\": say whether the line reads 1 (\"active\": 1) or "
            "0 (\"active\": 0) when the %s" % (path, "button is pressed" if kind == "button"
                                                else "beam is broken" if kind == "pocket"
                                                else "pin is tilted"), path + ".active")
    ok = expect_bool(entry.get("strapping_ok", False), path + ".strapping_ok")
    note = expect_str(entry.get("note", ""), path + ".note")
    check_gpio(path + ".pin", gpio, "in", pull, ok)
    return {"pin": gpio, "pull": pull, "active": active, "strapping_ok": ok, "note": note}


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


def spec(game):
    """What a board for `game` takes: its board.py (games/<game>/board.py, through the
    registry), or None for a game id the registry does not list."""
    return games.part(game, "board")


def spec_ids(sp, key):
    """A spec's ids under `key` (BUTTONS, PINS, POCKETS, COLOUR): () where it has none."""
    return getattr(sp, key, ())


def switch_names(cfg):
    """Lines in the order of the Lines bitmap: buttons (the game's order), then tilt pins, then
    pocket beams."""
    sp = spec(cfg["game"])
    names = ["btn." + b for b in sp.BUTTONS if b in cfg["buttons"]]
    if "pins" in cfg:
        names += ["pin." + p for p in sp.PINS if p in cfg["pins"]]
    if "pockets" in cfg:
        names += ["pocket." + p for p in pocket_ids(cfg)]
    return names


def pocket_ids(cfg):
    """The ids of the pockets fitted with a beam, in the game's order (the Lines bitmap's and
    the analog lines')."""
    if "pockets" not in cfg:
        return []
    return [p for p in spec_ids(spec(cfg["game"]), "POCKETS") if p in cfg["pockets"]]


def analog_names(cfg):
    """The analog lines, in pocket order: "colour.<pocket>" for each pocket with a colour
    sensor (sensor-trace values 0..4095)."""
    return ["colour." + p for p in pocket_ids(cfg) if "colour" in cfg["pockets"][p]]


def key_names(cfg):
    """The keypad's lines, "key.<legend>", key i = row i // 4, column i % 4."""
    return ["key." + ch for ch in cfg["keypad"]["keys"]]


SECTIONS = {"btn": "buttons", "pin": "pins", "pocket": "pockets"}  # line kind -> config key
