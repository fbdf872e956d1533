"""`chalk board check`: the firmware's config rules, run on the host before a deploy."""

import json
import subprocess
import sys
from pathlib import Path

BOARDS = Path(__file__).resolve().parent.parent / "firmware" / "boards"


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_bundled_boards_pass_with_advice():
    r = chalk("board", "check", *sorted(BOARDS.glob("*.json")))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(": ok: ") == len(list(BOARDS.glob("*.json")))
    assert "GPIO 34 (pin.1) has no internal pull resistor" in r.stdout


def test_a_forbidden_pin_is_named_with_exit_1(tmp_path):
    cfg = json.loads((BOARDS / "five-pins.json").read_text())
    cfg["buttons"]["foul"]["pin"] = 9
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(cfg))
    r = chalk("board", "check", p)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("chalk: %s: buttons.foul.pin: GPIO 9 is forbidden" % p)


def test_a_pull_up_on_an_input_only_pin_is_refused(tmp_path):
    cfg = json.loads((BOARDS / "five-pins.json").read_text())
    cfg["pins"]["1"]["pull"] = "up"
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(cfg))
    r = chalk("board", "check", p)
    assert r.returncode == 1 and "GPIO 34" in r.stderr and "pull" in r.stderr
