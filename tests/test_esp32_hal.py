"""hal/esp32.py executed, every line: the ESP32 hardware layer runs against a test-only fake
`machine` (tests/fake_machine) on the MicroPython unix port and on CPython, through the boot of
each board, a scan, an IRQ edge, a peg read over SPI and bit-banged, an OLED frame, a colour
sensor's ADC, a keypad scan and the failure paths. MicroPython here has no sys.settrace, so
the line coverage is measured on CPython with the standard library's `trace`, running the very
same script."""

import json
import os
import subprocess
import sys

from tests.conftest import report_micropython
from tests.mpy import FIRMWARE, MP_TESTS, ROOT, micropython_path

FAKE = ROOT / "tests" / "fake_machine"
SCRIPT = MP_TESTS / "esp32_hal_check.py"
BOARDS = ROOT / "firmware" / "boards"
ESP32 = FIRMWARE / "scoreboard" / "hal" / "esp32.py"

TRACED = r"""
import json, sys, trace
sys.argv = [%(script)r, %(boards)r, %(journal)r]
t = trace.Trace(count=1, trace=0)
g = {"__name__": "__main__"}
t.runctx(compile(open(%(script)r).read(), %(script)r, "exec"), g, g)
ran = sorted(line for (path, line), n in t.results().counts.items() if path == %(esp32)r)
print(json.dumps(ran), file=sys.stderr)
"""


def executable_lines(path):
    """Line numbers that hold code (what a line-coverage tool counts), from the compiled module."""
    code = compile(path.read_text(), str(path), "exec")
    lines = set()
    stack = [code]
    while stack:
        c = stack.pop()
        lines.update(line for _, _, line in c.co_lines() if line)  # (0: the module prologue)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_lines"))
    return lines


def expected(out):
    five, spi, banged = out["five"], out["shove_spi"], out["shove_banged"]
    assert five["device"] == "esp32-240ac4010203" and five["problems"] == []
    assert five["pull_13"] == [1, 2] and five["pull_34"] == [1, None]  # pull-up; none on 34-39
    # Every line has an edge interrupt: the six buttons and the five tilt pins.
    assert five["irq_gpios"] == [13, 14, 16, 17, 18, 19, 25, 32, 33, 34, 35]
    assert five["edges"] == [10, 10, 0]  # pin C rose and fell (line 10), confirm (line 0)
    assert five["irqs_off"] == [True] * 11
    assert five["read"] == 1 and five["level_0"] == 1 and five["index_C"] == 10
    assert five["oled"]["transactions"] == 9  # the window command, then one per page
    assert five["oled"]["bytes"] == 8 * 129 and five["oled"]["lit"] > 50
    assert five["oled_errors"] == 2  # a whole frame and a page, both on a failing bus
    assert five["wdt"][0] == 8000 and five["wdt"][1] > 8000 and five["wdt"][2] == 3
    # NVS blobs back as written and committed; 32 random bytes drawn with the radio turned on
    # and off again; a radio already on stays on; no network module: drawn all the same.
    assert five["nvs"] == [[1, 2], 1, 32, 1, 1, True, 1, 4]
    assert out["dark"]["null"] and out["dark"]["problem"].startswith(
        "display: no SSD1306 answers at I2C address 0x3C")
    assert spi["spi"] == [2, 1000000, 0, 0, 8, 0, 26, 23, 34] and spi["pegs"] == [0b101, 1 << 26]
    assert spi["null_display"] and spi["latch_mode"][0] == 3
    assert banged == {"pegs": [1 << 13, 0b11], "spi": 0}
    nov = out["novuss"]
    assert nov["read0"] == 0xABCD >> 4 and nov["atten"] == 3 and nov["count"] >= 1
    # A pocket's beam has an edge interrupt: a passage between two scans is counted (POCKET 9,
    # pocket 0, RED 0) at the time its beam cleared.
    assert nov["pocket_irq"] and nov["passage"] == [[9, 0, 0, 1020]]
    # Sampled on its edges: a press taken while the loop did no tick counts; no timer needed.
    assert nov["edge_sampled"][0] == 0
    assert nov["edge_sampled"][1] == [[1, nov["edge_sampled"][2], 50]]  # PRESS, held 50 ms
    pad = out["scorepad"]
    assert pad["idle"] == 0 and pad["down"] == 1 << (1 * 4 + 2) and pad["row_mode"] == 7
    # The key matrix is sampled by machine.Timer(0) every 5 ms: key "6" (index 6) taken once.
    assert pad["timer"][:4] == [0, 5, 1, True] and pad["timer"][4] == [[8, 6, 1]]


def test_the_esp32_hal_runs_on_the_unix_port_against_the_fake_machine(tmp_path):
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(FAKE), str(FIRMWARE), ".frozen"]))
    out = subprocess.run([micropython_path(), "-X", "heapsize=1024k", str(SCRIPT), str(BOARDS),
                          str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    expected(json.loads(out.stdout))
    report_micropython("hal/esp32.py boots, scans, IRQ edge, SPI and bit-banged pegs, OLED "
                       "frame, on the fake machine", 1)


def test_every_line_of_the_esp32_hal_is_executed(tmp_path):
    code = TRACED % {"script": str(SCRIPT), "boards": str(BOARDS), "journal": str(tmp_path),
                     "esp32": str(ESP32)}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FAKE), str(FIRMWARE)]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    expected(json.loads(out.stdout))
    ran = set(json.loads(out.stderr.strip().splitlines()[-1]))
    want = executable_lines(ESP32)
    missed = sorted(want - ran)
    report_micropython("%% of hal/esp32.py lines executed (%d of %d; CPython trace, same "
                       "script)" % (len(want & ran), len(want)), 100 * len(want & ran) // len(want))
    assert missed == [], "hal/esp32.py lines never executed: %s" % missed
