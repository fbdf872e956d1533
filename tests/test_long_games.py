"""A 10,000-action game of every game boots, undoes and resyncs within the heap that stands for
an ESP32's 96 KB: the board's RAM does not grow with the game (checkpoint files, rules/base.py
Codes, spill.py).

The figure is a 32-bit one, measured once on a 32-bit build of MicroPython's unix port with the
firmware frozen (the ESP32's word size; frozen code stays out of the heap as on the board's
flash) and on this suite's 64-bit port with the firmware in a ROMFS image: MEASURED below and
docs/simulator.md. The suite cannot build a 32-bit port (no registry carries MicroPython's
source), so it runs the 64-bit one at the heap that corresponds to 96 KB on 32 bits: the ROMFS
image (read into the heap on this port; mapped from flash on a board) plus 96 KB times the
game's 64-bit / 32-bit ratio. A game whose heap grew with its length fails here."""

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import pytest

from scoreboard.rules import new_game
from tests.conftest import report_micropython
from tests.longgames import ALL, board_config, endless, journal
from tests.mpy import MP_TESTS, micropython_path, run_mp

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

ESP32_KB = 96
# game -> (KB the 32-bit build needs, firmware frozen; KB the 64-bit port needs beyond its ROMFS
# image): the smallest -X heapsize that boots a 10,000-action game, undoes 3 actions, answers
# `state` and resyncs the whole journal over the link (tests/mp/longgame_check.py), to 1 KB.
MEASURED = {
    "shove-hapenny": (76, 165),
    "five-pins": (68, 147),
    "seven-pins": (73, 228),
    "novuss": (68, 151),
    "texas-42": (60, 139),
    "domino-bingo": (68, 146),
    "tally": (64, 144),
}
UNDOS = 3


def limit_kb(game):
    """The 64-bit heap beyond the image that stands for 96 KB on 32 bits, for this game."""
    need32, need64 = MEASURED[game]
    return int(math.ceil(ESP32_KB * need64 / need32))


@pytest.fixture(scope="module")
def romfs(tmp_path_factory):
    """The firmware as a ROMFS image of portable .mpy (what `chalk deploy` makes)."""
    from mpremote.romfs import make_romfs

    from chalk.build import compile_firmware

    tmp = tmp_path_factory.mktemp("romfs")
    mpy = tmp / "mpy"
    compile_firmware(mpy, arch=None)
    shutil.copytree(str(mpy / "scoreboard"), str(tmp / "src" / "lib" / "scoreboard"))
    img = tmp / "romfs.img"
    with contextlib.redirect_stdout(io.StringIO()):  # make_romfs prints the tree
        img.write_bytes(make_romfs(str(tmp / "src"), mpy_cross=False))
    return img


def run_long_game(romfs, cfg, flash, heap_kb):
    code = ("import vfs, sys\nvfs.mount(vfs.VfsRom(open(%r, 'rb').read()), '/rom')\n"
            "sys.path.insert(0, '/rom/lib')\nexec(open(%r).read(), {'ARGV': [%r, %r, '%d'], "
            "'__name__': '__main__'})\n" % (str(romfs), str(MP_TESTS / "longgame_check.py"),
                                              str(cfg), str(flash), UNDOS))
    return run_mp(code=code, heap="%dk" % heap_kb, check=False, timeout=600)


@pytest.mark.parametrize("game", ALL)
def test_a_10000_action_game_boots_undoes_and_resyncs_in_the_heap_of_a_96k_esp32(
        game, romfs, tmp_path):
    head, actions = endless(game, 10000, seed=1)
    flash = tmp_path / "flash"
    flash.mkdir()
    journal(flash, head, actions)
    cfg = board_config(ROOT, game, head, tmp_path / "board.json")
    image_kb = romfs.stat().st_size // 1024 + 1
    heap = image_kb + limit_kb(game)
    out = run_long_game(romfs, cfg, flash, heap)
    assert out.returncode == 0, "%s at -X heapsize=%dk:\n%s%s" % (game, heap, out.stdout[-2000:],
                                                                   out.stderr[-2000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["count"] == 10000 and r["errors"] == 0 and "undo_failed" not in r
    want = new_game(game, head["config"])
    for _seq, _t, action in actions:
        want.apply(action)
    for _ in range(UNDOS):
        want.apply({"a": "undo"})
    assert r["state"] == want.state() and r["len"] == len(want)
    assert r["replies"]["state"] == "ok"
    # The whole journal came back over the link: 10,000 actions, the header, 3 undos.
    assert isinstance(r["resync_ok"], dict), "the resync failed at -X heapsize=%dk: %s" % (
        heap, r["resync_ok"])
    assert r["resync_ok"]["result"]["records"] == 10001 + UNDOS
    assert (flash / "g00001.ckp").exists()  # the blocks RAM does not keep are on flash
    report_micropython("-X heapsize (KB) a 10,000-action %s game boots, undoes and resyncs in "
                       "(ROMFS image %d KB + %d KB: 96 KB on 32 bits)" % (game, image_kb,
                                                                          limit_kb(game)), heap)


def test_the_check_boots_as_main_py_does():
    # The check interns the names of the modules a board loads later, as main.py does at boot:
    # skipping it leaves the table of names to grow at the first import in play, on a heap a
    # long boot left in pieces (a lottery at the limit, not a measure of the game's heap). Both
    # call the one list (scoreboard/later.py), which names modules that are there.
    from scoreboard import later

    for path in (ROOT / "firmware" / "main.py", MP_TESTS / "longgame_check.py",
                 ROOT / "bench" / "mp_esp32.py"):
        assert "from scoreboard.later import intern_later" in path.read_text(), path
    for name in later.LATER:
        assert (ROOT / "firmware" / "scoreboard" / (name.replace(".", "/") + ".py")).exists()
