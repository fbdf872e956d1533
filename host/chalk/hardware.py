"""Board configs on the host: check them, and draw their pin maps and wiring diagrams.

The board configs in firmware/boards/ are the one source of truth for how a table is wired. The
pin map (hardware/<board>/pinmap.md) and the wiring diagram (hardware/<board>/wiring.svg) are
generated from them through scoreboard.boardconfig, the same module the firmware validates its
config with at boot, and committed; tests regenerate them and fail on any difference.

    python -m chalk.hardware generate        rewrite hardware/<board>/pinmap.md and wiring.svg
    python -m chalk.hardware check           exit 1 if a committed file is out of date
    python -m chalk.hardware board FILE...   check board config files as the firmware would
"""

import argparse
import json
import sys
from pathlib import Path

from chalk.errors import ChalkError
from scoreboard import boardconfig

ROOT = Path(__file__).resolve().parents[2]
BOARDS_DIR = ROOT / "firmware" / "boards"
HARDWARE_DIR = ROOT / "hardware"
GENERATOR = "python -m chalk.hardware generate"

# -- the ESP32-DevKitC V4 -------------------------------------------------------------------------
# Header pins by GPIO, as printed in Espressif's DevKitC V4 pin layout (J2 left, J3 right, pin 1
# at the end away from the USB socket) and the silkscreen label next to each.

DEVKITC = {
    36: ("J2-3", "VP"), 39: ("J2-4", "VN"), 34: ("J2-5", "IO34"), 35: ("J2-6", "IO35"),
    32: ("J2-7", "IO32"), 33: ("J2-8", "IO33"), 25: ("J2-9", "IO25"), 26: ("J2-10", "IO26"),
    27: ("J2-11", "IO27"), 14: ("J2-12", "IO14"), 12: ("J2-13", "IO12"), 13: ("J2-15", "IO13"),
    9: ("J2-16", "SD2"), 10: ("J2-17", "SD3"), 11: ("J2-18", "CMD"),
    23: ("J3-2", "IO23"), 22: ("J3-3", "IO22"), 1: ("J3-4", "TX"), 3: ("J3-5", "RX"),
    21: ("J3-6", "IO21"), 19: ("J3-8", "IO19"), 18: ("J3-9", "IO18"), 5: ("J3-10", "IO5"),
    17: ("J3-11", "IO17"), 16: ("J3-12", "IO16"), 4: ("J3-13", "IO4"), 0: ("J3-14", "IO0"),
    2: ("J3-15", "IO2"), 15: ("J3-16", "IO15"), 8: ("J3-17", "SD1"), 7: ("J3-18", "SD0"),
    6: ("J3-19", "CLK"),
}
POWER_3V3 = "J2-1"
POWER_5V = "J2-19"
GROUNDS = ("J2-14", "J3-1", "J3-7")

# 74HC165 (DIP-16) pins. Input A is D0 (shifted out last), H is D7 (first, right after the load).
HC165_INPUT_PIN = {"A": 11, "B": 12, "C": 13, "D": 14, "E": 3, "F": 4, "G": 5, "H": 6}


# -- checking a board config ----------------------------------------------------------------------

class BoardCheck:
    """What checking one board config found: `errors` (the firmware would refuse it) and
    `notes` (it loads, but the builder should know)."""

    def __init__(self, path, cfg, errors, notes):
        self.path = str(path)
        self.cfg = cfg
        self.errors = errors
        self.notes = notes

    @property
    def ok(self):
        return not self.errors

    def lines(self):
        """The report as lines of text, as `chalk board check` prints it."""
        if not self.ok:
            return ["error: %s" % e for e in self.errors]
        out = ["%s: ok: %s" % (self.path, summary(self.cfg))]
        out += ["note: %s" % n for n in self.notes]
        return out


def check_board(path):
    """Check a board config file with the firmware's own validation; never raises for a bad
    config (see BoardCheck.errors). The error text is the one the board would show at boot."""
    try:
        cfg = boardconfig.load(str(path))
    except boardconfig.BoardConfigError as e:
        return BoardCheck(path, None, [str(e)], [])
    return BoardCheck(path, cfg, [], advice(cfg))


def board_check(path):
    """Lines to print for a good config; ChalkError (with a hint) for one the board refuses."""
    result = check_board(path)
    if not result.ok:
        raise ChalkError(result.errors[0], hint="docs/board-config.md lists every key and the pin "
                         "rules of the ESP32-DevKitC")
    return result.lines()


def load(path):
    """A validated board config, or ChalkError with the firmware's message."""
    try:
        return boardconfig.load(str(path))
    except boardconfig.BoardConfigError as e:
        raise ChalkError(str(e), hint="fix the board config: docs/board-config.md")


def summary(cfg):
    parts = ["%s board %s" % (cfg["game"], json.dumps(cfg["board"])),
             "%d button%s" % (len(cfg["buttons"]), "" if len(cfg["buttons"]) == 1 else "s")]
    if "pins" in cfg:
        parts.append("%d tilt switches" % len(cfg["pins"]))
    if "pockets" in cfg:
        parts.append("%d pocket beam%s" % (len(cfg["pockets"]),
                                           "" if len(cfg["pockets"]) == 1 else "s"))
        if boardconfig.analog_names(cfg):
            parts.append("%d colour sensors" % len(boardconfig.analog_names(cfg)))
    if "pegs" in cfg:
        parts.append("%d peg holes on %d 74HC165s" % (boardconfig.SIDES * boardconfig.PEG_BITS,
                                                       cfg["pegs"]["chips"]))
    if "keypad" in cfg:
        parts.append("%d-key keypad (%dx%d matrix)" % (len(cfg["keypad"]["keys"]),
                                                       len(cfg["keypad"]["rows"]),
                                                       len(cfg["keypad"]["cols"])))
    parts.append("display %s" % cfg["display"]["driver"])
    parts.append("GPIOs %s" % ", ".join(str(r[0]) for r in boardconfig.pin_map(cfg)))
    return "; ".join(parts)


def advice(cfg):
    """Things a valid config still asks of the builder (external resistors, risky pins)."""
    out = []
    for gpio, line, _d, pull, _note in boardconfig.pin_map(cfg):
        entry = _switch_entry(cfg, line)
        if entry is not None and pull == "none":
            out.append("GPIO %d (%s) has no internal pull resistor: fit the external 10 kOhm one "
                       "(%s)" % (gpio, line, _switch_wiring(line, entry)["resistor"]))
        if gpio in boardconfig.STRAPPING:
            out.append("GPIO %d (%s) is a strapping pin: %s; make sure the wiring leaves it at its "
                       "boot level at reset" % (gpio, line, boardconfig.STRAPPING[gpio]))
        if gpio in (36, 39) and line.startswith("pin."):
            out.append("GPIO %d (%s) takes an edge interrupt: keep Wi-Fi, Bluetooth and the ADC "
                       "off on this board (ESP32 erratum 3.11: GPIO 36/39 see short false pulses "
                       "while they run)"
                       % (gpio, line))
    if cfg["display"]["driver"] == "none":
        out.append("no display: the score shows only on the host")
    if cfg["link"]["test_mode"]:
        out.append("link.test_mode is on: the board accepts input events injected over USB; turn "
                   "it off on a table in play")
    return out


# -- wiring, in words -----------------------------------------------------------------------------

def _switch_entry(cfg, line):
    kind, _, key = line.partition(".")
    if kind == "btn":
        return cfg["buttons"][key]
    if kind == "pin":
        return cfg["pins"][key]
    if kind == "pocket":
        return cfg["pockets"][key]
    return None


def _switch_wiring(line, entry):
    """How a button or tilt switch is wired, from its pull and active level.

    A button is normally open; a tilt switch is closed while its pin stands (a ball switch such
    as the SW-520D, or a micro switch held down by the standing pin). The switch goes to the rail
    opposite its pull resistor, so the active level says which rail that is when the pull is an
    external one.
    """
    pull, active = entry["pull"], entry["active"]
    button = line.startswith("btn.")
    if pull == "up":
        rail = "GND"
    elif pull == "down":
        rail = "3V3"
    elif button:
        rail = "GND" if active == 0 else "3V3"
    else:
        rail = "GND" if active == 1 else "3V3"
    other = "3V3" if rail == "GND" else "GND"
    if pull == "none":
        resistor = "10 kOhm from the GPIO to %s" % other
    else:
        resistor = "internal pull-%s" % pull
    closed = 0 if rail == "GND" else 1
    if line.startswith("pocket."):
        # An IR break-beam receiver (e.g. Adafruit 2168, 3 mm/5 mm pair) has an open-collector
        # output: it pulls its line to GND while it sees the emitter and lets go when the beam is
        # broken, so with the pull-up the line reads 1 while something passes.
        return {"rail": "GND", "resistor": resistor,
                "what": "IR break-beam receiver, open-collector output (VCC to 3V3)",
                "reads": "reads %d when the beam is broken" % active,
                "external": pull == "none"}
    if button:
        what = "push button" if closed == active else "normally-closed push button"
        state = "pressed"
    else:
        what = ("tilt switch, closed while the pin stands" if closed != active
                else "tilt switch, closed while the pin is down")
        state = "tilted"
    return {"rail": rail, "resistor": resistor, "what": what,
            "reads": "reads %d when %s" % (active, state), "external": pull == "none"}


def _peg_sensor(active):
    if active == 1:
        return ("sensor (reed switch) from each input to 3V3; 10 kOhm pull-down from each input "
                "to GND: a peg in its hole reads 1")
    return ("sensor (reed switch) from each input to GND; 10 kOhm pull-up from each input to 3V3: "
            "a peg in its hole reads 0")


def _rows(cfg):
    """pin_map rows grouped for drawing: buttons, tilt switches, pegs, display."""
    by_line = {r[1]: r for r in boardconfig.pin_map(cfg)}
    groups = []
    buttons = [by_line[n] for n in boardconfig.switch_names(cfg) if n.startswith("btn.")]
    pins = [by_line[n] for n in boardconfig.switch_names(cfg) if n.startswith("pin.")]
    pockets = [by_line[n] for n in boardconfig.switch_names(cfg) if n.startswith("pocket.")]
    pockets += [by_line[n] for n in boardconfig.analog_names(cfg)]
    if buttons:
        groups.append(("buttons", buttons))
    if pins:
        groups.append(("pins", pins))
    if pockets:
        groups.append(("pockets", pockets))
    if "pegs" in cfg:
        rows = [by_line["pegs." + k] for k in ("load", "clock", "data")]
        if "pegs.mosi" in by_line:  # the SPI driver's MOSI: driven by the bus, not connected
            rows.append(by_line["pegs.mosi"])
        groups.append(("pegs", rows))
    if "keypad" in cfg:
        k = cfg["keypad"]
        groups.append(("keypad", [by_line["keypad.row%d" % (i + 1)] for i in range(len(k["rows"]))]
                       + [by_line["keypad.col%d" % (i + 1)] for i in range(len(k["cols"]))]))
    if cfg["display"]["driver"] == "ssd1306":
        groups.append(("display", [by_line["display.sda"], by_line["display.scl"]]))
    return groups


def _header(gpio):
    pin, label = DEVKITC[gpio]
    return "%s (%s)" % (pin, label)


def _chain_rows(cfg):
    """(chain bit, chip, input letter, chip pin, peg line or None) for every bit of the chain."""
    cmap = boardconfig.chain_map(cfg)
    names = boardconfig.peg_names()
    out = []
    for i, c in enumerate(cmap):
        letter = "HGFEDCBA"[i % 8]
        peg = None
        if c != 255:
            peg = names[(c >> 5) * boardconfig.PEG_BITS + (c & 31)]
        out.append((i, i // 8 + 1, letter, HC165_INPUT_PIN[letter], peg))
    return out


def _peg_words(name):
    side, bed, hole = name.split(".")[1:]
    return "side %s, bed %s, hole %s" % (side, bed, hole)


# -- the pin map ----------------------------------------------------------------------------------

def pinmap_markdown(cfg, source):
    """hardware/<board>/pinmap.md for a validated config; `source` names its JSON file."""
    md = []
    add = md.append
    add("<!-- Generated by `%s` from %s. Do not edit: change the board config and "
        "regenerate. -->" % (GENERATOR, source))
    add("")
    add("# Pin map: %s" % cfg["board"])
    add("")
    if cfg["description"]:
        add(cfg["description"] + ".")
        add("")
    add("Game `%s`. Controller: ESP32-DevKitC V4 (ESP32-WROOM-32). Wiring diagram: "
        "[wiring.svg](wiring.svg). Generated from [`%s`](../../%s)." % (cfg["game"], source,
                                                                      source))
    add("")
    add("## ESP32 GPIOs")
    add("")
    add("DevKitC header pins: J2 is the row that starts 3V3, EN, VP; J3 the row that starts GND, "
        "IO23, IO22. Pin 1 of each is at the antenna end, pin 19 next to the USB socket.")
    add("")
    add("| GPIO | DevKitC pin | line | direction | ESP32 pull | what it connects to |")
    add("|---:|---|---|---|---|---|")
    for gpio, line, direction, pull, note in boardconfig.pin_map(cfg):
        add("| %d | %s | `%s` | %s | %s | %s |" % (gpio, _header(gpio), line, direction,
                                                  pull, _cell(note)))
    add("")
    switches = [n for n in boardconfig.switch_names(cfg)]
    if switches:
        add("## Buttons and tilt switches")
        add("")
        add("| line | GPIO | part | other side to | pull resistor | logic |")
        add("|---|---:|---|---|---|---|")
        for name in switches:
            e = _switch_entry(cfg, name)
            w = _switch_wiring(name, e)
            add("| `%s` | %d | %s | %s | %s | %s |" % (name, e["pin"], w["what"], w["rail"],
                                                       w["resistor"], w["reads"]))
        add("")
    colours = boardconfig.analog_names(cfg)
    if colours:
        ps = cfg["pocket_sensing"]
        add("## Colour sensors")
        add("")
        add("A reflective IR sensor (TCRT5000 module, analog output AO) beside each pocket's beam, "
            "looking across the throat at the puck as it drops. Reading 0-4095: below %d black, "
            "below %d red, above that the striker (bare light wood); a passage of %d ms or more "
            "is the striker whatever the colour (`pocket_sensing` in the board config)."
            % (ps["black_below"], ps["red_below"], ps["striker_ms"]))
        add("")
        add("| line | GPIO (ADC1) | sensor pins |")
        add("|---|---:|---|")
        for name in colours:
            e = cfg["pockets"][name.split(".")[1]]
            add("| `%s` | %d, %s | VCC to 3V3, GND to GND, AO to the GPIO (DO not connected) |"
                % (name, e["colour"], _header(e["colour"])))
        add("")
    if "pegs" in cfg:
        p = cfg["pegs"]
        add("## 74HC165 chain")
        add("")
        add("%d chips. Chip 1 is the one whose QH goes to the ESP32; chip %d is the far end."
            % (p["chips"], p["chips"]))
        add("")
        spi = p["driver"] == "spi"
        if spi:
            add("Read by the ESP32's SPI %d peripheral (`machine.SPI`, mode 0, MSB first, %d Hz):"
                " the latch pulse loads every chip, then one SPI read of %d bytes clocks the "
                "whole chain in; chain bit 0 (chip 1's input H) arrives first, as bit 7 of the "
                "first byte. (The bit-banged fallback, pegs driver `\"74hc165\"` with `load`, "
                "`clock`, `data`, uses the same wires.)" % (p["spi"], p["baud"], p["chips"]))
            add("")
        names = ("latch", "sck", "miso") if spi else ("load", "clock", "data")
        add("| 74HC165 pin | connect to |")
        add("|---|---|")
        add("| SH/LD (1), every chip | GPIO %d, %s: `pegs.%s`%s |" % (
            p["load"], _header(p["load"]), names[0], " (latch)" if spi else ""))
        add("| CLK (2), every chip | GPIO %d, %s: `pegs.%s`%s |" % (
            p["clock"], _header(p["clock"]), names[1], " (SPI SCK)" if spi else ""))
        add("| QH (9), chip 1 | GPIO %d, %s: `pegs.%s`%s |" % (
            p["data"], _header(p["data"]), names[2], " (SPI MISO)" if spi else ""))
        add("| QH (9), chip k+1 | SER (10) of chip k |")
        add("| SER (10), chip %d | GND |" % p["chips"])
        add("| CLK INH (15), every chip | GND |")
        add("| /QH (7) | not connected |")
        if spi:
            add("| (none) | GPIO %d, %s: `pegs.mosi`, the SPI bus's MOSI: driven by the ESP32, "
                "leave it unconnected |" % (p["mosi"], _header(p["mosi"])))
        add("| VCC (16), every chip | 3V3, %s (never 5 V: QH drives an ESP32 input) |"
            % POWER_3V3)
        add("| GND (8), every chip | GND, with a 100 nF ceramic capacitor from VCC (16) to GND "
            "(8) right at each chip |")
        add("")
        add("Peg sensors: %s." % _peg_sensor(p["active"]))
        add("")
        add("| chain bit | chip | input | chip pin | peg line | peg hole |")
        add("|---:|---:|---|---:|---|---|")
        for bit, chip, letter, pin, peg in _chain_rows(cfg):
            if peg is None:
                add("| %d | %d | %s | %d | (unused) | no sensor: its pull resistor holds it "
                    "inactive |" % (bit, chip, letter, pin))
            else:
                add("| %d | %d | %s | %d | `%s` | %s |" % (bit, chip, letter, pin, peg,
                                                          _peg_words(peg)))
        add("")
    if "keypad" in cfg:
        k = cfg["keypad"]
        nr, nc = len(k["rows"]), len(k["cols"])
        add("## Keypad")
        add("")
        add("A %dx%d membrane (or key-switch) matrix keypad, no diodes. Its ribbon's %d pins are "
            "the rows, top first, then the columns, left first (check yours with a multimeter: "
            "a key joins its row and its column)." % (nr, nc, nr + nc))
        add("")
        add("| keypad pin | line | connect to | keys on it |")
        add("|---:|---|---|---|")
        for i, gpio in enumerate(k["rows"]):
            add("| %d | row %d | GPIO %d, %s: `keypad.row%d` (open drain) | %s |"
                % (i + 1, i + 1, gpio, _header(gpio), i + 1,
                   " ".join("`%s`" % ch for ch in k["keys"][i * nc:i * nc + nc])))
        for j, gpio in enumerate(k["cols"]):
            add("| %d | column %d | GPIO %d, %s: `keypad.col%d` (%s) | %s |"
                % (nr + j + 1, j + 1, gpio, _header(gpio), j + 1,
                   "internal pull-up" if k["pull"] == "up" else "10 kOhm pull-up to 3V3",
                   " ".join("`%s`" % k["keys"][r * nc + j] for r in range(nr))))
        add("")
        add("Key layout as seen from the front, with each key's sensor-trace line:")
        add("")
        add("| | " + " | ".join("column %d" % (j + 1) for j in range(nc)) + " |")
        add("|---|" + "---|" * nc)
        for i in range(nr):
            add("| row %d | " % (i + 1) + " | ".join(
                "`%s` (`key.%s`)" % (k["keys"][i * nc + j], k["keys"][i * nc + j])
                for j in range(nc)) + " |")
        add("")
        add("The firmware holds every row low and reads the columns: all 1 means no key is "
            "down. When a column reads 0 it pulls one row low at a time to find the key: a "
            "column then reads 0 when a key of that row is down. Three keys held on the "
            "corners of a rectangle make a fourth look pressed (no diodes); the firmware "
            "acts on one key at a time only, so such a ghost never counts.")
        add("")
    if cfg["display"]["driver"] == "ssd1306":
        d = cfg["display"]
        add("## Display")
        add("")
        add("SSD1306 128x64 I2C OLED at address 0x%02X, %d kHz%s." % (
            d["addr"], d["freq"] // 1000, ", mounted upside down (flip)" if d["flip"] else ""))
        add("")
        add("| OLED pin | connect to |")
        add("|---|---|")
        add("| GND | GND |")
        add("| VCC | 3V3, %s |" % POWER_3V3)
        add("| SCL | GPIO %d, %s |" % (d["scl"], _header(d["scl"])))
        add("| SDA | GPIO %d, %s |" % (d["sda"], _header(d["sda"])))
        add("")
    add("## Power")
    add("")
    add("| DevKitC pin | use |")
    add("|---|---|")
    add("| micro-USB socket | 5 V from a USB supply or the host computer; also the serial link |")
    add("| %s (3V3) | 3.3 V out to %s |" % (POWER_3V3, ", ".join(_users_3v3(cfg))))
    add("| %s (GND) | ground for every button, switch, chip and the display |"
        % ", ".join(GROUNDS))
    add("| %s (5V) | not connected (the board is powered through USB) |" % POWER_5V)
    add("")
    return "\n".join(md)


def _users_3v3(cfg):
    out = []
    if "pegs" in cfg:
        out.append("the 74HC165s and peg sensors")
    if cfg["display"]["driver"] == "ssd1306":
        out.append("the OLED")
    if "keypad" in cfg and cfg["keypad"]["pull"] == "none":
        out.append("the keypad's column pull-ups")
    for name in boardconfig.switch_names(cfg):
        w = _switch_wiring(name, _switch_entry(cfg, name))
        if w["external"] or w["rail"] == "3V3":
            out.append("pull resistors and switches")
            break
    return out or ["nothing"]


def _cell(text):
    return text.replace("|", "\\|")


# -- the wiring diagram ---------------------------------------------------------------------------

_FONT = "Helvetica, Arial, sans-serif"
_COLOURS = {"buttons": "#1a5fb4", "pins": "#c64600", "pegs": "#26a269", "display": "#813d9c",
            "keypad": "#a51d2d", "pockets": "#865e3c"}
_INK = "#222222"
_GREY = "#666666"
_PIN_X = 230  # right edge of the ESP32 box: every GPIO leaves here
_DEV_X = 470  # left edge of the devices
_ROW = 40


def _esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


class _Svg:
    def __init__(self):
        self.items = []
        self.right = 0
        self.bottom = 0

    def _grow(self, x, y):
        self.right = max(self.right, x)
        self.bottom = max(self.bottom, y)

    def text(self, x, y, s, size=12, anchor="start", weight=None, fill=_INK):
        extra = ""
        if anchor != "start":
            extra += ' text-anchor="%s"' % anchor
        if weight:
            extra += ' font-weight="%s"' % weight
        if fill != _INK:
            extra += ' fill="%s"' % fill
        if size != 12:
            extra += ' font-size="%d"' % size
        self.items.append('<text x="%d" y="%d"%s>%s</text>' % (x, y, extra, _esc(s)))
        width = int(len(s) * size * 0.58)
        self._grow(x + (width if anchor == "start" else width // 2 if anchor == "middle" else 0),
                   y + 4)

    def label(self, x, y, name, colour, info):
        """A wire's label: its line name in colour, then grey detail, as one text run."""
        self.items.append('<text x="%d" y="%d"><tspan font-weight="bold" fill="%s">%s</tspan>'
                          '<tspan dx="8" font-size="10" fill="%s">%s</tspan></text>'
                          % (x, y, colour, _esc(name), _GREY, _esc(info)))
        self._grow(x + int(len(name) * 7.5 + len(info) * 6), y + 4)

    def arrow(self, x1, y1, x2, y2, stroke=_INK):
        """A horizontal arrow from x1 to x2 (head at x2)."""
        self.line(x1, y1, x2, y2, stroke, 1.2)
        d = 4 if x2 < x1 else -4
        self.path("M %d %d L %d %d L %d %d" % (x2 + d, y2 - 3, x2, y2, x2 + d, y2 + 3), stroke,
                  1.2)

    def line(self, x1, y1, x2, y2, stroke=_INK, width=1.5):
        self.items.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"/>'
                          % (x1, y1, x2, y2, stroke, width))
        self._grow(max(x1, x2), max(y1, y2))

    def path(self, d, stroke=_INK, width=1.5, fill="none"):
        self.items.append('<path d="%s" stroke="%s" stroke-width="%s" fill="%s"/>'
                          % (d, stroke, width, fill))

    def rect(self, x, y, w, h, stroke=_INK, fill="#ffffff", rx=4, width=1.5):
        self.items.append('<rect x="%d" y="%d" width="%d" height="%d" rx="%d" stroke="%s" '
                          'stroke-width="%s" fill="%s"/>' % (x, y, w, h, rx, stroke, width, fill))
        self._grow(x + w, y + h)

    def dot(self, x, y, r=3, fill=_INK):
        self.items.append('<circle cx="%d" cy="%d" r="%d" fill="%s"/>' % (x, y, r, fill))

    def ring(self, x, y, r=3, stroke=_INK):
        self.items.append('<circle cx="%d" cy="%d" r="%d" stroke="%s" stroke-width="1.5" '
                          'fill="#ffffff"/>' % (x, y, r, stroke))

    def ground(self, x, y):
        """Ground symbol hanging from (x, y)."""
        self.line(x, y, x, y + 8)
        self.line(x - 8, y + 8, x + 8, y + 8)
        self.line(x - 5, y + 11, x + 5, y + 11)
        self.line(x - 2, y + 14, x + 2, y + 14)

    def rail(self, x, y, label):
        """A supply rail end at (x, y): GND symbol or a 3V3 tag."""
        if label == "GND":
            self.ground(x, y)
        else:
            self.line(x, y, x, y - 6)
            self.line(x - 7, y - 6, x + 7, y - 6)
            self.text(x, y - 10, label, size=10, anchor="middle")

    def resistor(self, x, y1, y2, stroke=_INK):
        """A vertical resistor (zigzag) from y1 down to y2."""
        mid = (y1 + y2) // 2
        top, bottom = mid - 10, mid + 10
        pts = ["M %d %d" % (x, y1), "L %d %d" % (x, top)]
        step = (bottom - top) / 6.0
        for i in range(6):
            pts.append("L %d %d" % (x + (5 if i % 2 == 0 else -5), int(top + step * (i + 0.5))))
        pts.append("L %d %d" % (x, bottom))
        pts.append("L %d %d" % (x, y2))
        self.path(" ".join(pts), stroke=stroke)

    def render(self, title):
        w, h = self.right + 20, self.bottom + 20
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d" font-family="%s" font-size="12" fill="%s">'
                % (w, h, w, h, _FONT, _INK))
        return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head,
                          "<title>%s</title>" % _esc(title),
                          '<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (w, h)]
                         + self.items + ["</svg>", ""])


def wiring_svg(cfg, source):
    """hardware/<board>/wiring.svg for a validated config: the ESP32 with its used GPIOs on the
    left, one straight wire per GPIO to its button, switch, shift-register chain or display."""
    svg = _Svg()
    groups = _rows(cfg)
    title = "Wiring: %s (%s)" % (cfg["board"], cfg["game"])
    svg.text(20, 28, title, size=18, weight="bold")
    svg.text(20, 48, "Generated from %s by %s. Left: ESP32 GPIO and DevKitC header pin."
             % (source, GENERATOR), size=11, fill=_GREY)

    # Lay out the rows: one wire per GPIO, grouped by device; a row with an external resistor
    # is taller to hold it; the chain and the display reserve room for their boxes.
    top = 70
    y = top + 72
    placed = []  # (group, pin_map row, wire y)
    spans = {}
    for group, rows in groups:
        start = y
        for row in rows:
            entry = _switch_entry(cfg, row[1])
            if entry is not None and entry["pull"] == "none":
                y += 34
            placed.append((group, row, y))
            y += _ROW
        if group == "pegs":
            y += 150
        elif group == "keypad":
            y += 40
        elif group == "display":
            y += 30
        spans[group] = (start, y)
        y += 18
    box_bottom = y + 56

    svg.rect(20, top, _PIN_X - 20, box_bottom - top, fill="#f6f6f6", rx=8, width=2)
    svg.text(34, top + 24, "ESP32-DevKitC", size=15, weight="bold")
    svg.text(34, top + 42, "ESP32-WROOM-32", size=11, fill=_GREY)
    for group, row, wy in placed:
        gpio = row[0]
        pin, label = DEVKITC[gpio]
        extra = "" if label == "IO%d" % gpio else " (%s)" % label
        svg.text(_PIN_X - 12, wy + 4, "GPIO%d  %s%s" % (gpio, pin, extra), anchor="end",
                 weight="bold")
        svg.dot(_PIN_X, wy, 4, _COLOURS[group])
    svg.text(34, box_bottom - 42, "3V3: %s" % POWER_3V3, size=11)
    svg.text(34, box_bottom - 27, "GND: %s" % ", ".join(GROUNDS), size=11)
    svg.text(34, box_bottom - 12, "power: micro-USB (5 V)", size=11)

    for group, row, wy in placed:
        gpio, line, direction, pull, _note = row
        colour = _COLOURS[group]
        entry = _switch_entry(cfg, line)
        if line.startswith("pocket.") or line.startswith("colour."):
            info = ("beam receiver OUT, external pull-up" if line.startswith("pocket.")
                    and entry["pull"] == "none" else "beam receiver OUT, internal pull-up"
                    if line.startswith("pocket.") else "ADC1 analog: IR reflective sensor OUT")
            svg.label(_PIN_X + 12, wy - 7, line, colour, info)
            svg.line(_PIN_X, wy, _DEV_X, wy, colour, 2)
            svg.ring(_DEV_X, wy, 3, colour)
            what = ("IR break-beam receiver OUT" if line.startswith("pocket.")
                    else "TCRT5000 reflective sensor AO")
            svg.text(_DEV_X + 12, wy + 4, "%s, pocket %s" % (what, line.split(".")[1]))
            svg.text(_DEV_X + 12, wy + 18, "sensor VCC to 3V3, GND to GND", size=10, fill=_GREY)
        elif entry is not None:
            w = _switch_wiring(line, entry)
            info = "external pull-%s" % ("up" if w["rail"] == "GND" else "down") \
                if w["external"] else w["resistor"]
            svg.label(_PIN_X + 12, wy - 7, line, colour, info)
            _draw_switch(svg, line, entry, w, wy, colour)
        else:
            info = {"in": "input", "out": "output", "i2c": "I2C"}[direction]
            svg.label(_PIN_X + 12, wy - 7, line, colour, info)
            svg.line(_PIN_X, wy, _DEV_X, wy, colour, 2)

    if "pegs" in spans:
        _draw_chain(svg, cfg, placed, spans["pegs"])
    if "keypad" in spans:
        _draw_keypad(svg, cfg, placed, spans["keypad"])
    if "display" in spans:
        _draw_display(svg, cfg, placed, spans["display"])
    _legend(svg, cfg, box_bottom + 28)
    return svg.render(title)


def _draw_switch(svg, line, entry, w, wy, colour):
    """Wire, external resistor if any, switch symbol, its rail, and a caption."""
    sx = _DEV_X  # left contact of the switch
    svg.line(_PIN_X, wy, sx, wy, colour, 2)
    if w["external"]:
        rx = _PIN_X + 190
        other = "3V3" if w["rail"] == "GND" else "GND"
        svg.dot(rx, wy, 3, colour)
        svg.resistor(rx, wy - 40, wy)
        svg.text(rx + 9, wy - 17, "10k", size=10)
        if other == "3V3":
            svg.rail(rx, wy - 40, "3V3")
        else:
            svg.text(rx, wy - 44, "GND", size=10, anchor="middle")
    svg.ring(sx, wy, 3, colour)
    svg.ring(sx + 36, wy, 3, colour)
    if line.startswith("btn."):  # push button: a bar over two contacts
        svg.line(sx - 2, wy - 9, sx + 38, wy - 9, _INK, 2)
        svg.line(sx + 18, wy - 9, sx + 18, wy - 17, _INK, 2)
    else:  # tilt switch: a lever, drawn open (the pin is down)
        svg.line(sx + 3, wy - 1, sx + 34, wy - 13, _INK, 2)
    svg.line(sx + 39, wy, sx + 60, wy)
    if w["rail"] == "GND":
        svg.ground(sx + 60, wy)
    else:
        svg.line(sx + 60, wy, sx + 60, wy - 10)
        svg.line(sx + 53, wy - 10, sx + 67, wy - 10)
        svg.text(sx + 60, wy - 14, "3V3", size=10, anchor="middle")
    kind, _, key = line.partition(".")
    caption = ("button %s" % key) if kind == "btn" else ("pin %s: %s" % (key, w["what"]))
    svg.text(sx + 84, wy, caption)
    sub = w["reads"]
    if entry["note"]:
        sub += "; " + entry["note"]
    svg.text(sx + 84, wy + 14, sub, size=10, fill=_GREY)


def _draw_chain(svg, cfg, placed, span):
    p = cfg["pegs"]
    colour = _COLOURS["pegs"]
    y0, y1 = span
    x, width = _DEV_X, 400
    svg.rect(x, y0 - 24, width, y1 - y0 + 10, stroke=colour, fill="#f3fbf5")
    labels = {"pegs.load": "SH/LD (pin 1) of every chip", "pegs.clock": "CLK (pin 2) of every chip",
              "pegs.data": "QH (pin 9) of chip 1", "pegs.mosi": "SPI MOSI: not connected"}
    if p["driver"] == "spi":
        labels["pegs.load"] += " (latch)"
        labels["pegs.clock"] += " (SPI %d SCK)" % p["spi"]
        labels["pegs.data"] += " (SPI MISO)"
    last = y0
    for group, row, wy in placed:
        if group == "pegs":
            svg.dot(x, wy, 3, colour)
            svg.text(x + 10, wy + 4, labels[row[1]])
            last = wy
    ty = last + 32
    svg.text(x + 10, ty, "74HC165 x %d, daisy-chained" % p["chips"], size=13, weight="bold",
             fill=colour)
    # The chain: chip 1 next to the ESP32; each chip's QH feeds the SER of the one before it.
    n = p["chips"]
    cw, gap = 34, 14
    while n * (cw + gap) > width - 70 and cw > 18:
        cw -= 2
        gap = max(6, gap - 1)
    cy = ty + 14
    for i in range(n):
        cx = x + 12 + i * (cw + gap)
        svg.rect(cx, cy, cw, 24, stroke=colour, fill="#ffffff", rx=2, width=1.2)
        svg.text(cx + cw // 2, cy + 16, str(i + 1), size=11, anchor="middle")
        if i:
            svg.arrow(cx, cy + 12, cx - gap, cy + 12, colour)
    ex = x + 12 + n * (cw + gap) - gap
    svg.line(ex, cy + 12, ex + 14, cy + 12)
    svg.ground(ex + 14, cy + 12)
    svg.text(ex + 22, cy + 10, "SER", size=9, fill=_GREY)
    notes = ("arrows: QH (9) of chip k+1 to SER (10) of chip k",
             "every chip: CLK INH (15) and GND (8) to GND, VCC (16) to 3V3",
             "100 nF ceramic from VCC to GND at every chip",
             "inputs A-H: the 54 peg sensors, bit by bit in pinmap.md",
             "each sensor to %s, 10k %s on each input" % (
                 ("3V3", "pull-down") if p["active"] == 1 else ("GND", "pull-up")))
    for i, text in enumerate(notes):
        svg.text(x + 10, cy + 44 + 15 * i, text, size=11)


def _draw_keypad(svg, cfg, placed, span):
    k = cfg["keypad"]
    colour = _COLOURS["keypad"]
    y0, y1 = span
    x = _DEV_X
    svg.rect(x, y0 - 24, 400, y1 - y0 + 10, stroke=colour, fill="#fbf3f3")
    for group, row, wy in placed:
        if group == "keypad":
            svg.dot(x, wy, 3, colour)
            n = int(row[1][-1])
            svg.text(x + 10, wy + 4, ("row %d" if "row" in row[1] else "column %d") % n,
                     weight="bold")
    # The key grid, rows top to bottom, as on the pad.
    nr, nc = len(k["rows"]), len(k["cols"])
    size = 30
    gx, gy = x + 150, y0 + 8
    svg.text(gx, gy - 12, "%dx%d matrix keypad, no diodes" % (nr, nc), size=13, weight="bold",
             fill=colour)
    for i in range(nr):
        for j in range(nc):
            cx, cy = gx + j * (size + 6), gy + i * (size + 6)
            svg.rect(cx, cy, size, size, stroke=colour, fill="#ffffff", rx=4, width=1.2)
            svg.text(cx + size // 2, cy + 20, k["keys"][i * nc + j], size=14, anchor="middle",
                     weight="bold")
    notes = ("rows: open drain, all low while idle, then one at a time",
             "columns: %s; a key joins its row and column" % (
                 "internal pull-ups" if k["pull"] == "up" else "10k pull-ups to 3V3"))
    for i, text in enumerate(notes):
        svg.text(gx, gy + nr * (size + 6) + 14 + 15 * i, text, size=11)


def _draw_display(svg, cfg, placed, span):
    d = cfg["display"]
    colour = _COLOURS["display"]
    y0, y1 = span
    x = _DEV_X
    svg.rect(x, y0 - 24, 400, y1 - y0 + 10, stroke=colour, fill="#f8f3fb")
    last = y0
    for group, row, wy in placed:
        if group == "display":
            svg.dot(x, wy, 3, colour)
            svg.text(x + 10, wy + 4, row[1].split(".")[1].upper(), weight="bold")
            last = wy
    svg.text(x + 70, y0 + 4, "SSD1306 OLED 0.96 in, 128x64, I2C", size=13, weight="bold",
             fill=colour)
    svg.text(x + 70, y0 + 20, "address 0x%02X, %d kHz%s" % (
        d["addr"], d["freq"] // 1000, ", mounted upside down" if d["flip"] else ""), size=11)
    svg.text(x + 10, last + 26, "VCC to 3V3, GND to GND", size=11)


def _legend(svg, cfg, y):
    svg.text(20, y, "Legend", weight="bold")
    x = 84
    shown = [("buttons", "buttons")] if cfg["buttons"] else []
    if "pins" in cfg:
        shown.append(("pins", "tilt switches"))
    if "pegs" in cfg:
        shown.append(("pegs", "74HC165 chain"))
    if "pockets" in cfg:
        shown.append(("pockets", "pocket sensors"))
    if "keypad" in cfg:
        shown.append(("keypad", "keypad matrix"))
    if cfg["display"]["driver"] == "ssd1306":
        shown.append(("display", "I2C display"))
    for group, label in shown:
        svg.line(x, y - 4, x + 24, y - 4, _COLOURS[group], 3)
        svg.text(x + 30, y, label, size=11)
        x += 48 + len(label) * 7
    svg.text(20, y + 20, "Every ground symbol is one of the DevKitC's GND pins; 3V3 is its 3.3 V "
             "pin (%s). Pin maps, parts and assembly: hardware/README.md." % POWER_3V3, size=11,
             fill=_GREY)


# -- all boards -----------------------------------------------------------------------------------

def board_files(boards_dir=BOARDS_DIR):
    return sorted(Path(boards_dir).glob("*.json"))


def _source_name(path):
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return "firmware/boards/" + path.name


def generated_files(boards_dir=BOARDS_DIR):
    """{"<board>/pinmap.md": text, "<board>/wiring.svg": text} for every board config; <board>
    is the config's file name without .json. ChalkError if a config is invalid."""
    out = {}
    files = board_files(boards_dir)
    if not files:
        raise ChalkError("no board configs (*.json) in %s" % boards_dir)
    for path in files:
        cfg = load(path)
        source = _source_name(path)
        out["%s/pinmap.md" % path.stem] = pinmap_markdown(cfg, source)
        out["%s/wiring.svg" % path.stem] = wiring_svg(cfg, source)
    return out


def stale_files(boards_dir=BOARDS_DIR, hardware_dir=HARDWARE_DIR):
    """[(relative path, reason)] for each generated file that is missing or differs."""
    hardware_dir = Path(hardware_dir)
    out = []
    for rel, text in sorted(generated_files(boards_dir).items()):
        path = hardware_dir / rel
        if not path.exists():
            out.append((rel, "missing"))
        elif path.read_text(encoding="utf-8") != text:
            out.append((rel, "differs from its board config"))
    return out


def write_generated(boards_dir=BOARDS_DIR, hardware_dir=HARDWARE_DIR):
    """Write every generated file; return the relative paths that changed."""
    hardware_dir = Path(hardware_dir)
    changed = []
    for rel, text in sorted(generated_files(boards_dir).items()):
        path = hardware_dir / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        from chalk import atomic

        atomic.write_file(path, text)
        changed.append(rel)
    return changed


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chalk.hardware",
                                description="Pin maps and wiring diagrams from board configs.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write hardware/<board>/pinmap.md and wiring.svg")
    c = sub.add_parser("check", help="fail if a generated file is out of date")
    for s in (g, c):
        s.add_argument("--boards", default=str(BOARDS_DIR), help="board config directory")
        s.add_argument("--out", default=str(HARDWARE_DIR), help="hardware directory")
    b = sub.add_parser("board", help="check board config files as the firmware would")
    b.add_argument("files", nargs="+")
    args = p.parse_args(argv)
    try:
        if args.command == "generate":
            changed = write_generated(args.boards, args.out)
            for rel in changed:
                print("wrote %s" % (Path(args.out) / rel))
            print("%d file(s) changed" % len(changed))
            return 0
        if args.command == "check":
            stale = stale_files(args.boards, args.out)
            for rel, why in stale:
                print("%s: %s" % (Path(args.out) / rel, why), file=sys.stderr)
            if stale:
                print("run `make hardware` and commit the result", file=sys.stderr)
                return 1
            return 0
        status = 0
        for f in args.files:
            result = check_board(f)
            for line in result.lines():
                print(line, file=sys.stdout if result.ok else sys.stderr)
            status = status or (0 if result.ok else 1)
        return status
    except ChalkError as e:
        print("chalk: %s" % e.message, file=sys.stderr)
        if e.hint:
            print("chalk: hint: %s" % e.hint, file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main())
