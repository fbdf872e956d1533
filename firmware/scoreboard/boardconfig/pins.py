# Board configs: every GPIO a config takes, with what it is wired to, for the pin maps and wiring
# diagrams in hardware/ (host/chalk/hardware.py). A piece of its own so that a board, which needs
# only the GPIO numbers (boardconfig._gpio_paths), never loads these notes.
# Runs on MicroPython and CPython.

from .common import KEYPAD_COLS, switch_names


def uses(cfg):
    """(gpio, line, direction, pull, note, key path) for every GPIO the config takes."""
    rows = []
    for name in switch_names(cfg):
        kind, _, key = name.partition(".")
        if kind == "btn":
            e, path = cfg["buttons"][key], "buttons.%s.pin" % key
            what = "button %s" % key
        elif kind == "pocket":
            e, path = cfg["pockets"][key], "pockets.%s.pin" % key
            what = "beam across pocket %s" % key
        else:
            e, path = cfg["pins"][key], "pins.%s.pin" % key
            what = "tilt switch in pin %s" % key
        note = "%s, active %s" % (what, "low" if e["active"] == 0 else "high")
        if e["pull"] == "none":
            note += ", external pull resistor"
        if e["note"]:
            note += "; " + e["note"]
        rows.append((e["pin"], name, "in", e["pull"], note, path))
        if kind == "pocket" and "colour" in e:
            rows.append((e["colour"], "colour." + key, "adc", "none",
                         "reflective IR colour sensor at pocket %s, analog (ADC1)" % key,
                         "pockets.%s.colour" % key))
    if "pegs" in cfg:
        p = cfg["pegs"]
        spi = p["driver"] == "spi"
        rows.append((p["load"], "pegs.load", "out", "none",
                     "74HC165 SH/LD (pin 1) of every chip: low loads the holes"
                     + ("; the latch, pulsed before each SPI read" if spi else ""),
                     "pegs.latch" if spi else "pegs.load"))
        rows.append((p["clock"], "pegs.clock", "out", "none",
                     "74HC165 CLK (pin 2) of every chip; CLK INH (pin 15) to GND"
                     + ("; SPI %d SCK" % p["spi"] if spi else ""),
                     "pegs.sck" if spi else "pegs.clock"))
        rows.append((p["data"], "pegs.data", "in", "none",
                     "74HC165 QH (pin 9) of the first chip; each QH feeds the next chip's SER"
                     + ("; SPI %d MISO" % p["spi"] if spi else ""),
                     "pegs.miso" if spi else "pegs.data"))
        if spi:
            rows.append((p["mosi"], "pegs.mosi", "out", "none",
                         "SPI %d MOSI: driven by the bus, not connected (the 74HC165 takes no "
                         "data)" % p["spi"], "pegs.mosi"))
    if "keypad" in cfg:
        k = cfg["keypad"]
        n = KEYPAD_COLS
        for r, gpio in enumerate(k["rows"]):
            rows.append((gpio, "keypad.row%d" % (r + 1), "out", "none",
                         "keypad row %d (keys %s): open drain, low while idle, then in turn"
                         % (r + 1, " ".join(k["keys"][r * n:r * n + n])),
                         "keypad.rows[%d]" % r))
        for c, gpio in enumerate(k["cols"]):
            rows.append((gpio, "keypad.col%d" % (c + 1), "in", k["pull"],
                         "keypad column %d (keys %s): reads low when a key of the driven row "
                         "is down%s" % (c + 1, " ".join(k["keys"][r * n + c]
                                                          for r in range(len(k["rows"]))),
                                        "" if k["pull"] == "up" else
                                        ", external 10 kOhm pull-up to 3.3 V"),
                         "keypad.cols[%d]" % c))
    d = cfg["display"]
    if d["driver"] == "ssd1306":
        rows.append((d["sda"], "display.sda", "i2c", "none",
                     "SSD1306 SDA, I2C address 0x%02X" % d["addr"], "display.sda"))
        rows.append((d["scl"], "display.scl", "i2c", "none", "SSD1306 SCL", "display.scl"))
    return rows


def pin_map(cfg):
    """Rows (gpio, line, direction, pull, note), sorted by GPIO, for pin maps and wiring docs."""
    rows = [(g, line, d, pull, note) for g, line, d, pull, note, _ in uses(cfg)]
    rows.sort(key=lambda r: r[0])
    return rows
