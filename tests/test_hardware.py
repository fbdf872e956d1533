"""hardware/: the pin maps and wiring diagrams are generated from the board configs and must match
them (a moved button makes the check fail); board configs are checked on the host with the
firmware's own rules; the bills of materials agree with the configs they build."""

import csv
import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from chalk import hardware
from chalk.errors import ChalkError
from scoreboard import boardconfig
from tests.mpy import ROOT

BOARDS = ROOT / "firmware" / "boards"
HW = ROOT / "hardware"
CONFIGS = sorted(BOARDS.glob("*.json"))


def test_committed_pin_maps_and_diagrams_match_the_board_configs():
    stale = hardware.stale_files()
    assert stale == [], "out of date (run `make hardware`): %s" % stale


def test_every_board_config_has_a_pin_map_and_a_diagram():
    assert {p.stem for p in CONFIGS} >= {"five-pins", "shove-hapenny"}
    files = hardware.generated_files()
    for cfg in CONFIGS:
        for name in ("pinmap.md", "wiring.svg"):
            rel = "%s/%s" % (cfg.stem, name)
            assert rel in files and (HW / rel).is_file()


def copy_boards(tmp_path):
    boards = tmp_path / "boards"
    shutil.copytree(BOARDS, boards)
    return boards


def edit(boards, name, change):
    path = boards / name
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


def test_moving_a_button_makes_the_check_fail(tmp_path):
    boards = copy_boards(tmp_path)
    assert hardware.stale_files(boards, HW) == []  # the copy alone changes nothing

    def move(raw):
        assert raw["buttons"]["foul"]["pin"] != 23
        raw["buttons"]["foul"]["pin"] = 23  # a free GPIO: still a valid config

    edit(boards, "five-pins.json", move)
    stale = dict(hardware.stale_files(boards, HW))
    assert set(stale) == {"five-pins/pinmap.md", "five-pins/wiring.svg"}
    files = hardware.generated_files(boards)
    assert "| 23 | J3-2 (IO23) | `btn.foul` |" in files["five-pins/pinmap.md"]
    assert "GPIO23" in files["five-pins/wiring.svg"]


@pytest.mark.parametrize("change, stale", [
    (lambda raw: raw["pegs"].update(latch=27), {"pinmap.md", "wiring.svg"}),
    (lambda raw: raw["pegs"].update(order="bed-side-hole"), {"pinmap.md"}),
    (lambda raw: raw["buttons"]["void"].update(note="a new note"),
     {"pinmap.md", "wiring.svg"}),
    (lambda raw: raw["display"].update(addr=61), {"pinmap.md", "wiring.svg"}),
])
def test_any_wiring_change_makes_the_check_fail(tmp_path, change, stale):
    boards = copy_boards(tmp_path)
    edit(boards, "shove-hapenny.json", change)
    assert {rel.split("/")[1] for rel, _ in hardware.stale_files(boards, HW)} == stale


def test_a_missing_or_edited_file_is_reported(tmp_path):
    out = tmp_path / "hardware"
    assert set(hardware.write_generated(BOARDS, out)) == set(hardware.generated_files())
    assert hardware.stale_files(BOARDS, out) == []
    (out / "five-pins" / "wiring.svg").unlink()
    path = out / "shove-hapenny" / "pinmap.md"
    path.write_text(path.read_text().replace("GPIO", "gpio", 1))
    assert hardware.stale_files(BOARDS, out) == [
        ("five-pins/wiring.svg", "missing"),
        ("shove-hapenny/pinmap.md", "differs from its board config")]
    assert hardware.main(["check", "--out", str(out)]) == 1
    assert hardware.main(["generate", "--out", str(out)]) == 0
    assert hardware.main(["check", "--out", str(out)]) == 0


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_pin_map_lists_every_gpio_of_the_config(path):
    cfg = boardconfig.load(str(path))
    text = (HW / path.stem / "pinmap.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (J[23]-\d+) \([^)]*\) \| `([^`]+)` \|", text, re.M)
    expected = [(g, line) for g, line, _d, _p, _n in boardconfig.pin_map(cfg)]
    assert [(int(g), line) for g, _pin, line in rows] == expected
    for g, pin, _line in rows:
        assert hardware.DEVKITC[int(g)][0] == pin


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_wiring_diagram_is_valid_svg_naming_every_gpio_and_line(path):
    cfg = boardconfig.load(str(path))
    root = ET.fromstring((HW / path.stem / "wiring.svg").read_text().encode())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for gpio, line, _d, _p, _n in boardconfig.pin_map(cfg):
        assert "GPIO%d " % gpio in text and line in text


def test_chain_table_wires_every_peg_exactly_once():
    cfg = boardconfig.load(str(BOARDS / "shove-hapenny.json"))
    text = (HW / "shove-hapenny" / "pinmap.md").read_text()
    pegs = re.findall(r"^\| \d+ \| \d \| [A-H] \| \d+ \| `(peg\.\d\.\d\.\d)` \|", text, re.M)
    assert sorted(pegs) == sorted(boardconfig.peg_names())
    # Chain bit 0 is input H (pin 6) of chip 1: the first bit out after the load pulse.
    assert re.search(r"^\| 0 \| 1 \| H \| 6 \| `peg\.0\.1\.1` \|", text, re.M)
    assert len(re.findall(r"\(unused\)", text)) == cfg["pegs"]["chips"] * 8 - 54


# -- board configs checked on the host --------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda raw: raw["buttons"]["confirm"].update(pin=6), "GPIO 6 is forbidden"),
    (lambda raw: raw["pins"]["1"].update(pull="up"), "GPIO 34 has no internal pull-up"),
    (lambda raw: raw["buttons"]["foul"].update(pin=13), "GPIO 13 is used twice"),
    (lambda raw: raw["buttons"]["undo"].update(pin=12), "GPIO 12 is a strapping pin"),
    (lambda raw: raw["display"].update(sda=35), "GPIO 35 is input-only"),
])
def test_board_check_refuses_what_the_firmware_refuses(tmp_path, change, message):
    boards = copy_boards(tmp_path)
    edit(boards, "five-pins.json", change)
    path = boards / "five-pins.json"
    result = hardware.check_board(path)
    assert not result.ok and message in result.errors[0]
    with pytest.raises(boardconfig.BoardConfigError) as firmware:
        boardconfig.load(str(path))
    assert result.errors == [str(firmware.value)]  # word for word what the board would say
    assert result.lines() == ["error: " + str(firmware.value)]
    with pytest.raises(ChalkError) as err:
        hardware.board_check(path)
    assert message in err.value.message and err.value.hint
    assert hardware.main(["board", str(path)]) == 1
    with pytest.raises(ChalkError):
        hardware.generated_files(boards)  # nothing is drawn from a bad config


def test_board_check_passes_the_bundled_configs_with_advice(capsys):
    lines = hardware.board_check(BOARDS / "five-pins.json")
    assert lines[0].endswith("ok: five-pins board \"five-pins\"; 6 buttons; 5 tilt switches; "
                             "display ssd1306; GPIOs 13, 14, 16, 17, 18, 19, 21, 22, 25, 32, 33, "
                             "34, 35")
    notes = "\n".join(lines[1:])
    for gpio in (34, 35):
        assert "GPIO %d (pin." % gpio in notes  # input-only: an external pull-up is needed
    # No edge interrupt sits on GPIO 36/39, where the ESP32 erratum gives spurious pulses.
    assert "Wi-Fi" not in notes
    shove = hardware.check_board(BOARDS / "shove-hapenny.json")
    assert shove.ok and shove.notes == [] and "54 peg holes on 7 74HC165s" in shove.lines()[0]
    assert hardware.main(["board", str(BOARDS / "shove-hapenny.json")]) == 0
    assert "ok:" in capsys.readouterr().out


def test_board_check_on_a_file_that_is_not_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    result = hardware.check_board(path)
    assert not result.ok and "not valid JSON" in result.errors[0] and str(path) in result.errors[0]


# -- bills of materials and the build guide ---------------------------------------------------

BOM_COLUMNS = ["part", "quantity", "example part number", "rough cost EUR", "notes"]


def bom(board):
    with open(HW / board / "bom.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == BOM_COLUMNS
    out = []
    for row in rows[1:]:
        assert len(row) == len(BOM_COLUMNS), row
        part, qty, _pn, cost, _notes = row
        assert int(qty) >= 1 and float(cost) >= 0, row
        out.append(row)
    return out


def quantity(rows, pattern):
    found = [int(r[1]) for r in rows if re.search(pattern, r[0], re.I)
             and not r[0].lower().startswith("(alternative")]
    assert len(found) == 1, "%s: %d rows" % (pattern, len(found))
    return found[0]


def test_bom_agrees_with_the_shove_hapenny_config():
    cfg = boardconfig.load(str(BOARDS / "shove-hapenny.json"))
    rows = bom("shove-hapenny")
    chips = cfg["pegs"]["chips"]
    assert quantity(rows, r"74HC165") == chips
    assert quantity(rows, r"100 nF") >= chips
    assert quantity(rows, r"resistor network") == chips
    assert quantity(rows, r"reed switch") >= 54
    assert quantity(rows, r"push button") == len(cfg["buttons"])
    assert quantity(rows, r"ESP32-DevKitC") == 1
    assert quantity(rows, r"SSD1306") == 1


def test_bom_agrees_with_the_five_pins_config():
    cfg = boardconfig.load(str(BOARDS / "five-pins.json"))
    rows = bom("five-pins")
    assert quantity(rows, r"tilt switch") >= len(cfg["pins"])
    external = [p for p in cfg["pins"].values() if p["pull"] == "none"]
    assert quantity(rows, r"resistor 10 kOhm") == len(external)
    assert quantity(rows, r"push button") == len(cfg["buttons"])
    assert quantity(rows, r"ESP32-DevKitC") == 1
    assert quantity(rows, r"SSD1306") == 1


def test_bom_agrees_with_the_seven_pins_config():
    cfg = boardconfig.load(str(BOARDS / "seven-pins.json"))
    rows = bom("seven-pins")
    assert quantity(rows, r"tilt switch") >= len(cfg["pins"]) == 7
    external = [e for sec in ("pins", "pockets") for e in cfg[sec].values()
                if e["pull"] == "none"]
    assert quantity(rows, r"resistor 10 kOhm") == len(external)
    assert quantity(rows, r"break-beam") == 6  # every pocket, wired together in twos of three
    assert quantity(rows, r"push button") == len(cfg["buttons"])
    assert quantity(rows, r"ESP32-DevKitC") == 1 and quantity(rows, r"SSD1306") == 1


def test_bom_agrees_with_the_novuss_config():
    cfg = boardconfig.load(str(BOARDS / "novuss.json"))
    rows = bom("novuss")
    assert quantity(rows, r"break-beam") == len(cfg["pockets"]) == 4
    assert quantity(rows, r"reflective IR") == len(boardconfig.analog_names(cfg)) == 4
    assert all(e["colour"] in boardconfig.ADC1 for e in cfg["pockets"].values())
    assert quantity(rows, r"push button") == len(cfg["buttons"])
    assert quantity(rows, r"ESP32-DevKitC") == 1 and quantity(rows, r"SSD1306") == 1


def test_build_guide_links_resolve():
    text = (HW / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 6
    for link in local:
        assert (HW / link).resolve().exists(), link
    for board in ("shove-hapenny", "five-pins", "seven-pins", "novuss"):
        for name in ("pinmap.md", "wiring.svg", "bom.csv"):
            assert "%s/%s" % (board, name) in text
