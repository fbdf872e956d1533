# Board configs: the peg chain of a board with peg holes (docs/board-config.md): the 74HC165s read
# over SPI or bit-banged, their order and map. A piece of its own so that boards without pegs
# never load it. Runs on MicroPython and CPython.

from .common import (
    PEG_BITS,
    PEG_ORDERS,
    SIDES,
    BoardConfigError,
    check_gpio,
    check_keys,
    expect_bool,
    expect_int,
    expect_object,
    expect_str,
    parse_peg,
    peg_names,
    quote,
    require,
)

_PEGS = ("driver", "load", "clock", "data", "chips", "order", "map", "active", "strapping_ok",
         "latch", "sck", "miso", "mosi", "spi", "baud")
# The SPI driver's names for the chain's three wires (SH/LD, CLK, QH), and the bus's MOSI
# output, which the 74HC165 does not use but the ESP32's SPI peripheral drives: by default the
# bus's own MOSI pin (SPI 1: GPIO 13, SPI 2: GPIO 23), left unconnected.
_SPI_WIRES = (("latch", "load", "out"), ("sck", "clock", "out"), ("miso", "data", "in"))
_SPI_MOSI = {1: 13, 2: 23}


def pegs(value):
    pegs = expect_object(value, "pegs")
    check_keys(pegs, _PEGS, "pegs")
    driver = expect_str(require(pegs, "driver", "pegs"), "pegs.driver", ("spi", "74hc165"))
    chips = expect_int(pegs.get("chips", 7), "pegs.chips", 7, 16)
    order = expect_str(pegs.get("order", "side-bed-hole"), "pegs.order", PEG_ORDERS)
    active = pegs.get("active", 1)
    if type(active) is not int or active not in (0, 1):
        raise BoardConfigError("pegs.active must be 1 (a peg in its hole reads high) or 0 (reads "
                               "low), not %s" % quote(active), "pegs.active")
    ok = expect_bool(pegs.get("strapping_ok", False), "pegs.strapping_ok")
    out = {"driver": driver, "chips": chips, "order": order, "active": active,
           "strapping_ok": ok}
    if driver == "spi":
        # machine.SPI reads the chain in one call; the wires keep their bit-banged names too
        # (load, clock, data), which the wiring docs and the simulated chain use.
        for key, other in (("load", "latch"), ("clock", "sck"), ("data", "miso")):
            if key in pegs and pegs[key] != pegs.get(other):  # (a loaded config has both)
                raise BoardConfigError("pegs.%s belongs to the bit-banged driver \"74hc165\"; "
                                       "with \"spi\" the wire is pegs.%s" % (key, other),
                                       "pegs." + key)
        for key, alias, direction in _SPI_WIRES:
            gpio = require(pegs, key, "pegs")
            check_gpio("pegs." + key, gpio, direction, "none", ok)
            out[key] = gpio
            out[alias] = gpio
        bus = expect_int(pegs.get("spi", 2), "pegs.spi", 1, 2)
        out["spi"] = bus
        out["baud"] = expect_int(pegs.get("baud", 1000000), "pegs.baud", 10000, 10000000)
        mosi = pegs.get("mosi", _SPI_MOSI[bus])
        check_gpio("pegs.mosi", mosi, "out", "none", ok)
        out["mosi"] = mosi
    else:
        for key in ("latch", "sck", "miso", "mosi", "spi", "baud"):
            if key in pegs:
                raise BoardConfigError("pegs.%s is read only with \"driver\": \"spi\"" % key,
                                       "pegs." + key)
        for key, direction in (("load", "out"), ("clock", "out"), ("data", "in")):
            gpio = require(pegs, key, "pegs")
            check_gpio("pegs." + key, gpio, direction, "none", ok)
            out[key] = gpio
    if order == "custom":
        out["map"] = _peg_map(require(pegs, "map", "pegs", " (a list naming the peg on each "
                                                            "bit of the chain)"), chips)
    elif "map" in pegs:
        raise BoardConfigError("pegs.map is only read with \"order\": \"custom\"; remove it or set "
                               "the order to custom", "pegs.map")
    return out


def _peg_map(value, chips):
    if type(value) is not list or len(value) != chips * 8:
        raise BoardConfigError("pegs.map must be a list of %d entries (one per bit of %d chips, "
                               "first bit read first), each a peg name or null"
                               % (chips * 8, chips), "pegs.map")
    seen = {}
    for i, name in enumerate(value):
        path = "pegs.map[%d]" % i
        if name is None:
            continue
        if type(name) is not str or parse_peg(name) is None:
            raise BoardConfigError("%s must be a peg name such as \"peg.0.1.1\" or null, not %s"
                                   % (path, quote(name)), path)
        if name in seen:
            raise BoardConfigError("%s: %s is also on pegs.map[%d]; each peg sits on one bit"
                                   % (path, name, seen[name]), path)
        seen[name] = i
    if len(seen) != SIDES * PEG_BITS:
        missing = [n for n in peg_names() if n not in seen]
        raise BoardConfigError("pegs.map leaves %d peg(s) unwired, first %s; every peg needs a bit"
                               % (len(missing), missing[0]), "pegs.map")
    return list(value)
