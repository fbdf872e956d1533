"""Board configs: both bundled boards load; every way a config can be wrong is refused with a
message naming the key and the pin; line names and pin maps follow the sensor-trace contract."""

import copy
import json

import pytest

from scoreboard import boardconfig
from scoreboard.boardconfig import BoardConfigError
from tests.mpy import ROOT

BOARDS = ROOT / "firmware" / "boards"
FIVE = BOARDS / "five-pins.json"
SHOVE = BOARDS / "shove-hapenny.json"


def raw(path):
    return json.loads(path.read_text())


def changed(path, key, value):
    """The raw config at `path` with one dotted key set (value None: removed)."""
    cfg = raw(path)
    node = cfg
    keys = key.split(".")
    for k in keys[:-1]:
        node = node[k]
    if value is None:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return cfg


def refused(cfg):
    with pytest.raises(BoardConfigError) as info:
        boardconfig.load(cfg)
    return info.value


# -- the bundled boards ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", [FIVE, SHOVE], ids=["five-pins", "shove-hapenny"])
def test_bundled_configs_load_and_reload_unchanged(path):
    cfg = boardconfig.load(str(path))
    assert cfg["game"] == path.stem
    assert boardconfig.load(cfg) == cfg  # load is idempotent: the firmware may load twice
    assert boardconfig.load(raw(path)) == cfg
    assert cfg["link"] == {"test_mode": False}
    assert cfg["display"]["driver"] == "ssd1306" and cfg["display"]["addr"] == 60


def test_load_does_not_modify_its_input():
    cfg = raw(FIVE)
    before = copy.deepcopy(cfg)
    boardconfig.load(cfg)
    assert cfg == before


def test_defaults_are_filled():
    cfg = raw(FIVE)
    del cfg["timings"], cfg["link"], cfg["display"], cfg["game_config"]
    cfg["buttons"]["undo"] = {"pin": 18}
    out = boardconfig.load(cfg)
    assert out["timings"] == {k: d for k, d, _, _ in boardconfig.TIMINGS}
    assert out["link"] == {"test_mode": False}
    assert out["display"] == {"driver": "none"}
    assert out["buttons"]["undo"] == {"pin": 18, "pull": "up", "active": 0,
                                      "strapping_ok": False, "note": ""}
    assert out["game_config"]["target"] == 60  # the rules' own defaults


def test_five_pins_line_names():
    cfg = boardconfig.load(str(FIVE))
    names = boardconfig.line_names(cfg)
    buttons = ["btn.confirm", "btn.carom3", "btn.carom4", "btn.foul", "btn.undo", "btn.break"]
    assert names == buttons + ["pin.1", "pin.2", "pin.3", "pin.4", "pin.C"]
    assert boardconfig.switch_names(cfg) == names
    assert boardconfig.tilt_mask(cfg) == 0b11111 << 6
    assert boardconfig.active_low_mask(cfg) == 0b111111  # buttons to GND; tilt lines active high


def test_shove_line_names():
    cfg = boardconfig.load(str(SHOVE))
    names = boardconfig.line_names(cfg)
    assert names[:5] == ["btn.done", "btn.void", "btn.out_of_turn", "btn.undo", "btn.claim"]
    pegs = names[5:]
    assert len(pegs) == 54 and len(set(pegs)) == 54
    assert pegs[:4] == ["peg.0.1.1", "peg.0.1.2", "peg.0.1.3", "peg.0.2.1"]
    assert pegs[26:28] == ["peg.0.9.3", "peg.1.1.1"] and pegs[-1] == "peg.1.9.3"
    assert boardconfig.switch_names(cfg) == names[:5]
    assert boardconfig.tilt_mask(cfg) == 0


def test_line_order_is_the_games_not_the_files():
    cfg = raw(FIVE)
    cfg["buttons"] = dict(reversed(list(cfg["buttons"].items())))
    cfg["pins"] = dict(reversed(list(cfg["pins"].items())))
    assert boardconfig.line_names(boardconfig.load(cfg)) == \
        boardconfig.line_names(boardconfig.load(str(FIVE)))


def test_parse_peg():
    assert boardconfig.parse_peg("peg.0.1.1") == (0, 0)
    assert boardconfig.parse_peg("peg.1.9.3") == (1, 26)
    assert boardconfig.parse_peg("peg.0.5.2") == (0, 13)
    for bad in ("peg.2.1.1", "peg.0.0.1", "peg.0.10.1", "peg.0.1.4", "pin.1", "peg.0.1",
                "peg.a.1.1"):
        assert boardconfig.parse_peg(bad) is None


def test_pin_map_rows():
    five = boardconfig.pin_map(boardconfig.load(str(FIVE)))
    assert [r[0] for r in five] == sorted(r[0] for r in five)
    assert all(len(r) == 5 for r in five)
    by_line = {r[1]: r for r in five}
    assert by_line["pin.1"][:4] == (34, "pin.1", "in", "none")
    assert "external pull resistor" in by_line["pin.1"][4]
    assert by_line["btn.confirm"][:4] == (13, "btn.confirm", "in", "up")
    assert by_line["display.sda"][:3] == (21, "display.sda", "i2c")
    assert len(five) == 6 + 5 + 2

    shove = {r[1]: r for r in boardconfig.pin_map(boardconfig.load(str(SHOVE)))}
    assert shove["pegs.load"][:3] == (25, "pegs.load", "out")
    assert shove["pegs.clock"][:3] == (26, "pegs.clock", "out")
    assert shove["pegs.data"][:4] == (34, "pegs.data", "in", "none")
    assert shove["pegs.mosi"][:3] == (23, "pegs.mosi", "out")  # the SPI bus drives it
    assert len(shove) == 5 + 4 + 2


def test_chain_map_orders():
    cfg = boardconfig.load(str(SHOVE))
    m = boardconfig.chain_map(cfg)
    assert len(m) == 56 and m[54] == m[55] == 255
    assert m[0] == 0 and m[26] == 26 and m[27] == 32 | 0 and m[53] == 32 | 26

    other = changed(SHOVE, "pegs.order", "bed-side-hole")
    m = boardconfig.chain_map(boardconfig.load(other))
    # bed 1: side 0 holes 1-3, side 1 holes 1-3; then bed 2 ...
    assert list(m[:9]) == [0, 1, 2, 32, 33, 34, 3, 4, 5]
    assert sorted(m[:54]) == sorted(boardconfig.chain_map(cfg)[:54])


def test_custom_peg_map():
    names = boardconfig.peg_names()
    custom = changed(SHOVE, "pegs.order", "custom")
    custom["pegs"]["map"] = [None, None] + list(reversed(names))
    m = boardconfig.chain_map(boardconfig.load(custom))
    assert m[0] == m[1] == 255 and m[2] == 32 | 26 and m[55] == 0

    custom["pegs"]["map"] = [None, "peg.0.1.2"] + list(reversed(names))[:53] + [None]
    err = refused(custom)
    assert "peg.0.1.2" in str(err) and "pegs.map[" in str(err)
    custom["pegs"]["map"] = [None] * 56
    assert "unwired" in str(refused(custom))
    custom["pegs"]["map"] = names
    assert "56 entries" in str(refused(custom))
    del custom["pegs"]["map"]
    assert "map" in str(refused(custom))
    assert "only read" in str(refused(changed(SHOVE, "pegs.map", names + [None, None])))


# -- refusals -------------------------------------------------------------------------------------

@pytest.mark.parametrize("gpio", [6, 7, 8, 9, 10, 11])
def test_flash_pins_are_forbidden(gpio):
    err = refused(changed(FIVE, "buttons.undo.pin", gpio))
    assert "GPIO %d" % gpio in str(err) and "flash" in str(err)
    assert err.path == "buttons.undo.pin"


def test_pull_up_on_input_only_pin_is_refused():
    err = refused(changed(FIVE, "pins.1.pull", "up"))
    msg = str(err)
    assert "pins.1.pin" in msg and "GPIO 34" in msg and "pull-up" in msg
    assert '"pull": "none"' in msg and "external" in msg
    # a button defaults to pull up, so one on GPIO 36 must say "none"
    err = refused(changed(FIVE, "buttons.undo.pin", 38))
    assert "GPIO 38" in str(err) and "buttons.undo" in str(err)
    assert "pull-down" in str(refused(changed(FIVE, "pins.2.pull", "down")))


@pytest.mark.parametrize("key,gpio", [("pegs.latch", 35), ("pegs.sck", 39), ("display.sda", 36),
                                      ("display.scl", 37)])
def test_outputs_on_input_only_pins_are_refused(key, gpio):
    path = SHOVE if key.startswith("pegs") else FIVE
    if key == "display.sda" and path == FIVE:
        path = SHOVE
    err = refused(changed(path, key, gpio))
    assert key in str(err) and "GPIO %d" % gpio in str(err) and "input-only" in str(err)


def test_shift_register_data_may_use_an_input_only_pin():
    cfg = boardconfig.load(changed(SHOVE, "pegs.miso", 39))
    assert cfg["pegs"]["miso"] == 39


def test_pin_used_twice_names_both_users():
    err = refused(changed(FIVE, "pins.C.pin", 13))
    assert "GPIO 13" in str(err)
    assert "buttons.confirm.pin" in str(err) and "pins.C.pin" in str(err)
    err = refused(changed(SHOVE, "pegs.sck", 21))
    assert "display.sda" in str(err) and "pegs.sck" in str(err)


@pytest.mark.parametrize("key,path", [
    ("timings.debounse_ms", "timings.debounse_ms"),
    ("buttons.undo.pul", "buttons.undo.pul"),
    ("display.adress", "display.adress"),
    ("pegz", "pegz"),
    ("link.testmode", "link.testmode"),
])
def test_unknown_keys_are_named_by_path(key, path):
    base = SHOVE if key == "pegz" else FIVE
    err = refused(changed(base, key, 1))
    assert str(err).startswith(path + ": unknown")
    assert err.path == path


def test_unknown_key_suggests_the_near_one():
    msg = str(refused(changed(FIVE, "timings.debounse_ms", 20)))
    assert 'did you mean "debounce_ms"' in msg


def test_unknown_button_and_pin_id():
    err = refused(changed(FIVE, "buttons.done", {"pin": 4}))
    assert "buttons.done" in str(err) and "confirm" in str(err)
    err = refused(changed(FIVE, "pins.5", {"pin": 4, "active": 1}))
    assert "pins.5" in str(err)


def test_unknown_game():
    err = refused(changed(FIVE, "game", "snooker"))
    assert '"snooker"' in str(err) and "five-pins" in str(err) and err.path == "game"


@pytest.mark.parametrize("base,key", [
    (FIVE, "board"), (FIVE, "game"), (FIVE, "buttons"), (FIVE, "pins"), (SHOVE, "pegs"),
    (FIVE, "buttons.confirm"), (SHOVE, "buttons.done"), (FIVE, "pins.C"), (FIVE, "pins.C.active"),
    (FIVE, "buttons.undo.pin"), (SHOVE, "pegs.latch"), (SHOVE, "pegs.driver"),
    (FIVE, "display.scl"),
])
def test_missing_required_keys(base, key):
    err = refused(changed(base, key, None))
    last = key.split(".")[-1]
    assert last in str(err)
    assert err.path.endswith(last)


def test_active_is_required_without_a_pull_resistor():
    cfg = changed(FIVE, "buttons.undo.pull", "none")
    err = refused(cfg)
    assert "buttons.undo" in str(err) and "active" in str(err)
    cfg["buttons"]["undo"]["active"] = 0
    assert boardconfig.load(cfg)["buttons"]["undo"]["active"] == 0


@pytest.mark.parametrize("base,key,value", [
    (FIVE, "buttons.undo.pin", "18"), (FIVE, "buttons.undo.pin", 18.0),
    (FIVE, "buttons.undo.pin", True), (FIVE, "buttons.undo.pull", "high"),
    (FIVE, "buttons.undo.active", 2), (FIVE, "buttons.undo.strapping_ok", "yes"),
    (FIVE, "timings.debounce_ms", "20"), (FIVE, "timings.scan_ms", 0),
    (FIVE, "link.test_mode", 1), (FIVE, "display.addr", 0x3E), (FIVE, "display.flip", "no"),
    (FIVE, "buttons", []), (FIVE, "board", ""), (SHOVE, "pegs.chips", 6),
    (SHOVE, "pegs.driver", "mcp23017"), (SHOVE, "pegs.order", "zigzag"), (SHOVE, "pegs.active", 3),
    (FIVE, "game_config", [60]),
])
def test_wrong_types_and_values(base, key, value):
    err = refused(changed(base, key, value))
    assert str(err).startswith(key)
    assert err.path == key


def test_long_press_must_outlast_the_debounce():
    cfg = changed(FIVE, "timings.long_press_ms", 20)
    assert "long_press_ms" in str(refused(cfg))


@pytest.mark.parametrize("gpio", [40, 48, -1])
def test_pins_outside_0_to_39(gpio):
    err = refused(changed(FIVE, "buttons.undo.pin", gpio))
    assert "GPIO %d" % gpio in str(err) and "0-39" in str(err)


@pytest.mark.parametrize("gpio", [20, 24, 28, 31])
def test_gpios_the_esp32_does_not_have(gpio):
    assert "does not exist" in str(refused(changed(FIVE, "buttons.undo.pin", gpio)))


@pytest.mark.parametrize("gpio", [1, 3])
def test_the_usb_serial_pins_are_refused(gpio):
    assert "UART0" in str(refused(changed(FIVE, "buttons.undo.pin", gpio)))


@pytest.mark.parametrize("gpio,why", [(0, "bootloader"), (2, "flashing"), (5, "SDIO"),
                                      (12, "1.8 V"), (15, "boot log")])
def test_strapping_pins_need_strapping_ok(gpio, why):
    cfg = changed(FIVE, "buttons.undo.pin", gpio)
    msg = str(refused(cfg))
    assert "GPIO %d is a strapping pin" % gpio in msg and why in msg and "strapping_ok" in msg
    cfg["buttons"]["undo"]["strapping_ok"] = True
    assert boardconfig.load(cfg)["buttons"]["undo"]["pin"] == gpio


def test_strapping_ok_on_pegs_and_display():
    cfg = changed(SHOVE, "pegs.latch", 2)
    assert "pegs.latch" in str(refused(cfg))
    cfg["pegs"]["strapping_ok"] = True
    assert boardconfig.load(cfg)["pegs"]["latch"] == 2
    cfg = changed(FIVE, "display.scl", 15)
    assert "display.scl" in str(refused(cfg))
    cfg["display"]["strapping_ok"] = True
    assert boardconfig.load(cfg)["display"]["scl"] == 15


def test_a_sensor_section_of_the_other_game_is_refused():
    cfg = raw(FIVE)
    cfg["pegs"] = raw(SHOVE)["pegs"]
    err = refused(cfg)
    assert err.path == "pegs" and "shove-hapenny" in str(err)
    cfg = raw(SHOVE)
    cfg["pins"] = raw(FIVE)["pins"]
    assert refused(cfg).path == "pins"


def test_game_config_is_checked_by_the_rules():
    err = refused(changed(FIVE, "game_config.target", -1))
    assert str(err).startswith("game_config:") and "target" in str(err)
    err = refused(changed(SHOVE, "game_config.overflow", "sometimes"))
    assert "overflow" in str(err)


def test_errors_from_a_file_name_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(changed(FIVE, "pins.C.pin", 7)))
    err = refused(str(p))
    assert str(err).startswith(str(p) + ": pins.C.pin: GPIO 7")
    assert err.path == "pins.C.pin"
    p.write_text("{not json")
    assert "not valid JSON" in str(refused(str(p))) and str(p) in str(refused(str(p)))
    assert "cannot read" in str(refused(str(tmp_path / "missing.json")))
    p.write_text("[1, 2]")
    assert "JSON object" in str(refused(str(p)))


def test_the_bit_banged_peg_driver_stays_a_fallback():
    """pegs driver "74hc165" (load/clock/data, any three GPIOs) still loads; the SPI driver's
    keys are refused with it, and its wires' names with "spi"."""
    cfg = changed(SHOVE, "pegs", {"driver": "74hc165", "load": 25, "clock": 26, "data": 34,
                                  "chips": 7})
    p = boardconfig.load(cfg)["pegs"]
    assert (p["driver"], p["load"], p["clock"], p["data"]) == ("74hc165", 25, 26, 34)
    assert "mosi" not in p
    cfg["pegs"]["spi"] = 2
    assert "pegs.spi is read only with" in str(refused(cfg))
    spi = changed(SHOVE, "pegs.load", 27)
    assert 'pegs.load belongs to the bit-banged driver "74hc165"' in str(refused(spi))


def test_spi_peg_driver_defaults_and_its_mosi_pin():
    p = boardconfig.load(str(SHOVE))["pegs"]
    assert (p["driver"], p["spi"], p["baud"], p["latch"], p["sck"], p["miso"], p["mosi"]) == \
        ("spi", 2, 1000000, 25, 26, 34, 23)
    cfg = changed(SHOVE, "pegs.mosi", None)
    cfg["pegs"]["spi"] = 1
    # SPI 1's own MOSI is GPIO 13, which a button has: the bus would drive it
    err = refused(cfg)
    assert "GPIO 13" in str(err) and "pegs.mosi" in str(err)
    assert "pegs.baud" in str(refused(changed(SHOVE, "pegs.baud", 50000000)))
    assert "pegs.mosi" in str(refused(changed(SHOVE, "pegs.mosi", 36)))  # input-only


@pytest.mark.parametrize("path", sorted((ROOT / "firmware" / "boards").glob("*.json")),
                         ids=lambda p: p.stem)
def test_the_gpio_check_sees_every_gpio_of_the_pin_map(path):
    # A board checks its GPIOs (one line each) without the pin map's notes in its RAM: both
    # lists must name the same GPIOs under the same key paths, in the same order.
    from scoreboard.boardconfig import pins as boardpins

    cfg = boardconfig.load(str(path))
    assert boardconfig._gpio_paths(cfg) == [(r[0], r[5]) for r in boardpins.uses(cfg)]
