"""Static checks of the firmware: it type-checks against the ESP32 port's API (so a call the board
lacks fails before it reaches a table), and it imports only what MicroPython on the ESP32 has,
with `machine` confined to the hal. Each check is also shown failing on a deliberately bad file,
so it cannot pass by checking nothing."""

import ast
import subprocess
import sys
from importlib import metadata

import pytest

from chalk import build
from tests.mpy import ROOT

FIRMWARE = ROOT / "firmware"

# Modules of the MicroPython ESP32 port (ESP32_GENERIC image) that the firmware may import.
# Checked below against the ESP32 stubs, so nothing CPython-only slips in here.
MICROPYTHON_ESP32 = {
    "_thread", "array", "asyncio", "binascii", "builtins", "cmath", "collections", "deflate",
    "errno", "framebuf", "gc", "hashlib", "heapq", "io", "json", "math", "micropython", "os",
    "platform", "random", "re", "select", "struct", "sys", "time", "uctypes", "vfs",
}
# Hardware access: only the hal may touch it, so everything else runs on the simulated board.
HAL_ONLY = {"machine", "esp", "esp32", "network", "bluetooth", "neopixel", "onewire", "dht"}
# CPython habits MicroPython does not have at run time (no, not even behind TYPE_CHECKING).
NEVER = {"dataclasses", "enum", "typing", "typing_extensions", "pathlib", "abc", "__future__",
         "functools", "itertools"}
NOT_FIRMWARE = {"manifest.py"}  # firmware/manifest.py is run by MicroPython's build on CPython


def firmware_files(root):
    return sorted(p for p in root.rglob("*.py")
                  if "__pycache__" not in p.parts and p.relative_to(root).as_posix()
                  not in NOT_FIRMWARE)


def _catches_import_error(handler):
    names = []
    t = handler.type
    for node in (t.elts if isinstance(t, ast.Tuple) else [t]):
        if isinstance(node, ast.Name):
            names.append(node.id)
    return "ImportError" in names


def imports(tree):
    """(line, module, fallback) for every import; `fallback` marks an import inside an
    `except ImportError:` handler, which only runs where the first choice is missing (CPython)."""
    fallback_nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None \
                and _catches_import_error(node):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    fallback_nodes.add(id(sub))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append((node.lineno, alias.name, id(node) in fallback_nodes))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the scoreboard package
                continue
            out.append((node.lineno, node.module, id(node) in fallback_nodes))
    return out


def import_problems(root):
    """Every import under `root` that MicroPython on the ESP32 cannot satisfy, as messages."""
    problems = []
    for path in firmware_files(root):
        rel = path.relative_to(root).as_posix()
        in_hal = rel.startswith("scoreboard/hal/")
        for line, module, fallback in imports(ast.parse(path.read_text(), str(path))):
            top = module.split(".")[0]
            where = "%s:%d: import %s" % (rel, line, module)
            if top == "scoreboard":
                continue
            if top in NEVER:
                problems.append("%s: MicroPython has no %s" % (where, top))
            elif top in HAL_ONLY:
                if not in_hal:
                    problems.append("%s: hardware modules belong in scoreboard/hal/ only" % where)
            elif top not in MICROPYTHON_ESP32 and not fallback:
                problems.append("%s: not a module of MicroPython's ESP32 port" % where)
    return problems


def test_firmware_imports_only_what_the_esp32_port_has():
    files = firmware_files(FIRMWARE)
    assert len(files) >= 20 and FIRMWARE / "main.py" in files
    assert import_problems(FIRMWARE) == []


def test_the_import_check_fails_on_bad_firmware(tmp_path):
    (tmp_path / "scoreboard" / "hal").mkdir(parents=True)
    (tmp_path / "scoreboard" / "app.py").write_text(
        "import machine\n"
        "import itertools\n"
        "from dataclasses import dataclass\n"
        "from typing import List\n"
        "import pathlib\n"
        "import collections.abc\n"
        "import sqlite3\n"
        "from . import hal\n"
        "try:\n"
        "    from micropython import const\n"
        "except ImportError:\n"
        "    import warnings\n")
    (tmp_path / "scoreboard" / "hal" / "board.py").write_text("import machine\nfrom esp32 import "
                                                              "NVS\nimport json\n")
    (tmp_path / "manifest.py").write_text("import glob\n")
    problems = import_problems(tmp_path)
    text = "\n".join(problems)
    assert "scoreboard/app.py:1: import machine: hardware modules belong" in text
    for bad in ("itertools", "dataclasses", "typing", "pathlib"):
        assert "import %s: MicroPython has no %s" % (bad, bad) in text
    assert "import sqlite3: not a module" in text
    assert "warnings" not in text  # a CPython fallback behind `except ImportError`
    assert "hal/board.py" not in text and "glob" not in text
    assert len(problems) == 6


def test_the_allowlist_is_the_esp32_port_s():
    # Every module allowed above has a stub in micropython-esp32-stubs (or its stdlib).
    have = set()
    for dist in build.STUB_DISTS:
        for f in metadata.files(dist) or []:
            parts = list(f.parts)
            if parts[0] == "stdlib":
                parts = parts[1:]
            if not parts or not parts[-1].endswith(".pyi"):
                continue
            have.add(parts[0][:-4] if len(parts) == 1 else parts[0])
    missing = sorted((MICROPYTHON_ESP32 | HAL_ONLY) - have)
    assert missing == [], "not in the ESP32 port: %s" % missing
    assert not (NEVER & MICROPYTHON_ESP32)


# -- mypy against the ESP32 stubs -------------------------------------------------------------

@pytest.fixture(scope="module")
def stubs():
    return build.esp32_stubs(build.STUBS_DIR)


def mypy(*files):
    """The same invocation as `make check-static`: mypy with pyproject.toml's [tool.mypy]."""
    return subprocess.run([sys.executable, "-m", "mypy", *map(str, files)], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=600)


def test_firmware_type_checks_against_the_esp32_api(stubs):
    proc = mypy()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_mypy_accepts_the_esp32_api_used_correctly(stubs, tmp_path):
    good = tmp_path / "good.py"
    good.write_text(
        "import time\n"
        "import machine\n"
        "from micropython import const\n"
        "_N = const(3)\n"
        "def f(cb):\n"
        "    p = machine.Pin(4, machine.Pin.IN, machine.Pin.PULL_UP)\n"
        "    p.irq(handler=cb, trigger=machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING)\n"
        "    i2c = machine.I2C(0, scl=machine.Pin(22), sda=machine.Pin(21), freq=400000)\n"
        "    i2c.writeto(0x3C, b'\\x00')\n"
        "    return time.ticks_diff(time.ticks_ms(), 0) + p.value() + _N\n")
    proc = mypy(good)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_fails_a_call_the_esp32_lacks(stubs, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import json\n"
        "import time\n"
        "import machine\n"
        "def f():\n"
        "    machine.Pin(4).nonexistent()\n"
        "    machine.Pin(4, machine.Pin.IN, machine.Pin.PULL_SIDEWAYS)\n"
        "    time.monotonic()\n"
        "    return json.dumps({}, indent=2)\n")
    proc = mypy(bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert 'bad.py:5: error: "Pin" has no attribute "nonexistent"' in out
    assert 'bad.py:6: error: "type[Pin]" has no attribute "PULL_SIDEWAYS"' in out
    assert 'bad.py:7: error: Module has no attribute "monotonic"' in out  # CPython has it
    assert 'bad.py:8: error: Unexpected keyword argument "indent"' in out


def test_mypy_fails_an_import_the_esp32_lacks(stubs, tmp_path):
    bad = tmp_path / "imports.py"
    bad.write_text("import itertools\nimport dataclasses\n")
    proc = mypy(bad)
    assert proc.returncode == 1
    assert 'module named "itertools"' in proc.stdout
    assert 'module named "dataclasses"' in proc.stdout
