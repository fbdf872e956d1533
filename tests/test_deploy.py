"""`chalk deploy`: the app onto an empty simulated board with mpremote, over its pseudo-terminal.

A simulated board started without firmware on an empty flash directory boots to the bare
MicroPython REPL, like a fresh ESP32 with MicroPython and no app. `chalk deploy` copies the app
with mpremote (which writes into the flash directory, the micropython process's filesystem),
resets the board, and from then on it is a Chalk board.
"""

import os
import re

import pytest

from chalk import build, cli, deploy, remote
from chalk.errors import ChalkError
from chalk.sim import SIM_HEAP, Sim

ROOT = build.ROOT
SCENARIO = ROOT / "tests" / "scenarios" / "five-pins" / "fp-7-break-first.json"


def chalk(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def empty_board(tmp_path):
    flash = tmp_path / "flash"
    sim = Sim("five-pins", flash=flash, test_mode=True, install_firmware=False)
    sim.start()
    yield sim
    sim.stop()


def expected_files():
    mods = [rel.with_suffix(".mpy").as_posix() for rel in build.sources()]
    return ["lib/" + m for m in mods] + ["board.json", "main.py"]


def test_deploy_onto_an_empty_board_then_it_plays(empty_board, capsys):
    sim = empty_board
    assert sorted(os.listdir(sim.flash)) == []
    code, out, err = chalk(capsys, "deploy", "--port", sim.port, "--arch", "none",
                           "--board", "five-pins")
    assert code == 0, out + err
    lines = out.splitlines()
    files = expected_files()
    assert lines[0] == ("deploying %d files (portable bytecode) to the filesystem of %s (no ROMFS "
                        "partition on this board)" % (len(files), sim.port))
    progress = [ln for ln in lines if ln.startswith("[")]
    assert progress == ["[%d/%d] %s" % (i + 1, len(files), f) for i, f in enumerate(files)]
    assert lines[-1] == ("the board answers: Chalk firmware 0.1.0, board five-pins, game "
                         "five-pins, test mode")
    # The board's flash now holds what a real board's filesystem would.
    for f in files:
        assert (sim.flash / f).is_file(), f
    assert (sim.flash / "board.json").read_bytes() == (
        ROOT / "firmware" / "boards" / "five-pins.json").read_bytes()
    assert sim.boots == 2  # the reset: the micropython process ended and booted again
    # The board made its own key pair at its first boot (in its NVS, not on the filesystem the
    # deploy wrote); its public half was enrolled in the key store, the board signing a fresh
    # challenge. The private half is nowhere else.
    from chalk.keys import KeyStore, default_path
    from scoreboard import sign

    pub = (sim.flash / "nvs" / "pk").read_bytes()
    device = (sim.flash / "device_id").read_text().strip()
    entry = KeyStore().board_key(device)
    assert entry["kid"] == sign.key_id(pub) and entry["pub"] == pub.hex()
    assert "board %s: key %s kept in" % (device, entry["kid"]) in out
    assert "enrolled over USB on %s" % sim.port in out
    assert (sim.flash / "nvs" / "sk").read_bytes().hex() not in default_path().read_text()
    # ... and it plays: a shared scenario passes over the link.
    code, out, err = chalk(capsys, "test", SCENARIO, "--port", sim.port)
    assert code == 0, out + err
    assert out.splitlines()[-1] == "1 scenarios: 1 passed, 0 failed"

    # Deploying again keeps the journal and the board config, copies nothing that is the same,
    # and removes files the new copy does not have (a stale .py would shadow the new .mpy).
    with remote.connect(sim.port) as board:
        game_no = board.request("state")["game_no"]
    stale = sim.flash / "lib" / "scoreboard" / "gone.py"
    stale.write_text("raise ImportError('stale')\n")
    old_key = sim.flash / "board.key"  # the host-made key older firmware signed with
    old_key.write_text("00" * 32 + "\n")
    code, out, err = chalk(capsys, "deploy", "--port", sim.port, "--arch", "none")
    assert code == 0, out + err
    # All but board.json (not sent this time).
    assert out.count("(unchanged)") == len(files) - 1
    assert not stale.exists() and not old_key.exists()
    assert "key %s is already kept" % entry["kid"] in out  # the same key: made once
    with remote.connect(sim.port) as board:
        assert board.request("state")["game_no"] == game_no


@pytest.fixture
def roomy_board(tmp_path):
    # Compiling every module from .py source on the board (the compiler's parse trees, and a
    # qstr pool that doubles as it fills) needs more heap than running the .mpy bytecode
    # `chalk deploy` copies by default: at the ESP32-sized heap the compile is a lottery of
    # where the pool's next block lands (docs/deploy.md).
    sim = Sim("five-pins", flash=tmp_path / "flash", test_mode=True, install_firmware=False,
              heap="256k")
    sim.start()
    yield sim
    sim.stop()


def test_source_deploy_replaces_the_bytecode(roomy_board, capsys):
    sim = roomy_board
    code, out, err = chalk(capsys, "deploy", "--port", sim.port, "--source",
                           "--board", ROOT / "firmware" / "boards" / "five-pins.json")
    assert code == 0, out + err
    assert "(.py sources)" in out.splitlines()[0]
    assert (sim.flash / "lib" / "scoreboard" / "app.py").is_file()
    assert not list((sim.flash / "lib").rglob("*.mpy"))
    assert "the board answers: Chalk firmware 0.1.0" in out


def test_a_board_without_a_config_needs_board(empty_board, capsys):
    code, out, err = chalk(capsys, "deploy", "--port", empty_board.port, "--arch", "none")
    assert code == 1
    assert err.splitlines() == [
        "chalk: the board on %s has no /board.json and no --board was given"
        % empty_board.port,
        "chalk: hint: give its config: chalk deploy --board five-pins (or shove-hapenny, or a "
        ".json path)"]
    assert not (empty_board.flash / "main.py").exists()


def test_a_bad_board_config_is_refused_before_anything_is_copied(empty_board, capsys,
                                                                 tmp_path):
    cfg = (ROOT / "firmware" / "boards" / "five-pins.json").read_text()
    bad = tmp_path / "mine.json"
    bad.write_text(cfg.replace('"pin": 13', '"pin": 7'))
    code, out, err = chalk(capsys, "deploy", "--port", empty_board.port, "--board", bad)
    assert code == 1
    assert err.startswith("chalk: bad board config %s: buttons.confirm.pin: GPIO 7" % bad)
    assert "nothing was copied" in err
    assert os.listdir(empty_board.flash) == []


def test_mpremote_failing_is_quoted(empty_board, capsys):
    # A file where the package directory should be: the board's os.ilistdir fails.
    (empty_board.flash / "lib").mkdir()
    (empty_board.flash / "lib" / "scoreboard").write_text("not a directory")
    code, out, err = chalk(capsys, "deploy", "--port", empty_board.port, "--arch", "none",
                           "--board", "five-pins")
    assert code == 1
    first = err.splitlines()[0]
    # The board's own words: "OSError: 20" on the unix port, "[Errno 20] ENOTDIR" on an ESP32.
    assert re.fullmatch(r"chalk: mpremote failed on %s: OSError: (20|\[Errno 20\] ENOTDIR)"
                        % re.escape(empty_board.port), first), err
    assert "chalk: hint: is another program using the port" in err


def test_a_board_that_does_not_answer(tmp_path, capsys):
    master, slave = os.openpty()  # a port with nothing behind it
    try:
        port = os.ttyname(slave)
        with pytest.raises(ChalkError) as e:
            deploy.stop_app(port, timeout=1.0)
        assert e.value.message == ("the board on %s does not answer: no MicroPython prompt "
                                   "after Ctrl-C" % port)
        assert "chalk flash" in e.value.hint
    finally:
        os.close(master)
        os.close(slave)
    code, out, err = chalk(capsys, "deploy", "--port", tmp_path / "ttyNOPE", "--board",
                           "five-pins")
    assert code == 1 and err.startswith("chalk: no such port: %s" % (tmp_path / "ttyNOPE"))


def test_the_mpremote_command_line():
    files = [(ROOT / "x.mpy", "lib/scoreboard/x.mpy"), (ROOT / "firmware" / "main.py",
                                                        "main.py")]
    cmd = deploy.mpremote_command("/dev/ttyUSB0", files)
    assert cmd[1:6] == ["-m", "mpremote", "connect", "/dev/ttyUSB0", "resume"]
    assert cmd[6] == "exec"
    assert cmd[8:] == ["+", "fs", "cp", str(ROOT / "x.mpy"), ":lib/scoreboard/x.mpy",
                       "+", "fs", "cp", str(ROOT / "firmware" / "main.py"), ":main.py"]
    script = cmd[7]
    compile(script, "prepare", "exec")  # valid Python (MicroPython runs it)
    assert "'lib/scoreboard'" in script and "board.json" in script


def test_staging_compiles_for_the_esp32_by_default(tmp_path):
    files = deploy.stage(tmp_path, ROOT / "firmware" / "boards" / "five-pins.json")
    remote = [r for _, r in files]
    # No signing key is staged: the board makes its own.
    assert remote == expected_files()
    app = tmp_path / "lib" / "scoreboard" / "app.mpy"
    assert app.read_bytes()[:1] == b"M"  # an .mpy file


def test_an_app_that_does_not_start_is_reported(empty_board, capsys):
    # The board keeps its own /board.json, and that one is bad: the app stops at boot.
    cfg = (ROOT / "firmware" / "boards" / "five-pins.json").read_text()
    (empty_board.flash / "board.json").write_text(cfg.replace('"pin": 13', '"pin": 7'))
    code, out, err = chalk(capsys, "deploy", "--port", empty_board.port, "--arch", "none")
    assert code == 1
    assert out.splitlines()[-1] == "resetting the board"
    first = err.splitlines()[0]
    assert first.startswith("chalk: the app did not start after the deploy on %s: "
                            % empty_board.port), err
    assert "GPIO 7" in first
    assert "deploy a good one with --board CONFIG" in err


def test_deploy_into_the_romfs_partition_of_a_board_that_has_one(tmp_path, capsys):
    """A board whose MicroPython has a ROMFS partition (simulated: chalk/simrom.py) gets the
    package as one ROMFS image, imported from /rom/lib in place; board.json and main.py go to
    the filesystem (the board's key is in its NVS). Without a partition, or with --romfs no, the
    .mpy files go to /lib."""
    # The simulated partition's image is read into the heap (chalk/simrom.py; on a board it is
    # flash): the board's own heap (SIM_HEAP) plus the image's ~96 KB.
    heap = "%dk" % (int(SIM_HEAP.rstrip("k")) + 96)
    sim = Sim("five-pins", flash=tmp_path / "flash", test_mode=True, install_firmware=False,
              romfs=256 * 1024, heap=heap)
    sim.start()
    try:
        code, out, err = chalk(capsys, "deploy", "--port", sim.port, "--arch", "none",
                               "--board", "five-pins")
        assert code == 0, out + err
        lines = out.splitlines()
        n = len(build.sources())
        assert lines[0] == ("deploying %d modules (portable bytecode) into the board's ROMFS "
                            "partition, run in place from flash; 2 files to the filesystem, on %s"
                            % (n, sim.port))
        assert "ROMFS image written" in lines
        assert lines[-1].startswith("the board answers: Chalk firmware 0.1.0, board five-pins")
        assert (sim.flash / "romfs.img").read_bytes()[:3] == b"\xd2\xcd\x31"
        assert not (sim.flash / "lib" / "scoreboard").exists()  # nothing of it on the filesystem
        assert (sim.flash / "main.py").is_file() and (sim.flash / "board.json").is_file()
        assert len((sim.flash / "nvs" / "sk").read_bytes()) == 32  # its own key, in its NVS
        # the app runs from ROMFS: its modules come from /rom/lib
        with remote.connect(sim.port) as board:
            assert board.request("state")["game"] == "five-pins"
        deploy.stop_app(sim.port)
        cmd = [__import__("sys").executable, "-m", "mpremote", "connect", sim.port, "resume",
               "exec", "import scoreboard.app; print('from', scoreboard.app.__file__)"]
        said = __import__("subprocess").run(cmd, capture_output=True, text=True, timeout=60)
        assert "from /rom/lib/scoreboard/app.mpy" in said.stdout, said.stdout + said.stderr
        # --romfs no: back to .mpy files on the filesystem, said so
        code, out, err = chalk(capsys, "deploy", "--port", sim.port, "--arch", "none",
                               "--romfs", "no")
        assert code == 0, out + err
        assert out.splitlines()[0] == ("deploying %d files (portable bytecode) to the filesystem "
                                       "of %s" % (n + 1, sim.port))  # + main.py
        assert (sim.flash / "lib" / "scoreboard" / "app.mpy").is_file()
    finally:
        sim.stop()


def test_romfs_yes_on_a_board_without_a_partition_is_refused(empty_board, capsys):
    code, out, err = chalk(capsys, "deploy", "--port", empty_board.port, "--arch", "none",
                           "--board", "five-pins", "--romfs", "yes")
    assert code == 1
    assert err.splitlines()[0] == "chalk: the board on %s has no ROMFS partition" % \
        empty_board.port
    assert "chalk: hint: flash a MicroPython image with one" in err
    assert not (empty_board.flash / "main.py").exists()  # nothing half-copied
