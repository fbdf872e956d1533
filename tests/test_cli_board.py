"""The board commands of `chalk`: ports, watch, new and flash, as a user runs them.

watch and new run against a simulated board over its pseudo-terminal; flash runs the real
esptool against a pseudo-terminal with nothing behind it (no chip can be flashed here), which
exercises its argument building and its failure path for real.
"""

import io
import os
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from chalk import cli, deploy, link, remote, watch
from chalk.commands import new as new_cmd
from chalk.errors import ChalkError
from chalk.sim import Sim

PY = sys.executable


def chalk(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def five_pins(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
        yield sim


@pytest.fixture
def shove(tmp_path):
    with Sim("shove-hapenny", flash=tmp_path / "flash", test_mode=True) as sim:
        yield sim


def wait_for(board, pred, timeout=60.0):  # an upper bound only
    """Poll the board's unsolicited frames until pred(frame) holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        f = board.poll(0.1)
        if f is not None and pred(f):
            return f
    raise AssertionError("the board did not send the frame expected")


# -- ports -----------------------------------------------------------------------------------

def fake_ports(monkeypatch, *entries):
    listed = [SimpleNamespace(device=d, description=desc, vid=vid, pid=pid)
              for d, desc, vid, pid in entries]
    monkeypatch.setattr(link.list_ports, "comports", lambda: listed)


def test_ports_lists_boards_first(monkeypatch, capsys):
    fake_ports(monkeypatch, ("/dev/ttyS0", "n/a", None, None),
               ("/dev/ttyUSB0", "CP2102 USB to UART Bridge Controller", 0x10C4, 0xEA60))
    code, out, err = chalk(capsys, "ports")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        "device        description                           USB bridge  board?",
        "/dev/ttyUSB0  CP2102 USB to UART Bridge Controller  CP210x      likely",
        "/dev/ttyS0    -                                     -           -",
        "chalk uses /dev/ttyUSB0 when no --port is given",
    ]


def test_ports_without_a_board_or_any_port(monkeypatch, capsys):
    fake_ports(monkeypatch, ("/dev/ttyS0", "n/a", None, None))
    code, out, err = chalk(capsys, "ports")
    assert code == 0
    assert "none of these looks like an ESP32 board" in out.splitlines()[-1]
    fake_ports(monkeypatch)
    code, out, err = chalk(capsys, "ports")
    assert code == 1 and out == ""
    assert err.splitlines()[0] == "chalk: no serial ports found"
    assert "data USB cable" in err and "chalk sim" in err


# -- watch -----------------------------------------------------------------------------------

def test_watch_once_shows_score_move_last_action_and_a_sensor_warning(five_pins, capsys):
    with remote.connect(five_pins.port) as board:
        board.request("new", {"game": "five-pins", "players": ["Ann", "Bob"]})
        board.request("act", {"action": {"a": "break", "player": 0}})
        after = board.request("act", {"action": {"a": "shot", "player": 0, "pins": "12"}})
        # pin C chattering: 14 short wobbles in 700 ms, an edge every 25 ms (over
        # chatter_edges 10 in 400 ms, counted as the debouncer takes them)
        events = [{"t": 25 * i, "line": "pin.C", "v": (i + 1) % 2} for i in range(28)]
        board.request("inject", {"events": events})
        wait_for(board, lambda f: f.type == "warn" and f.payload.get("fault") == "chatter")
    score = after["state"]["scores"]
    code, out, err = chalk(capsys, "watch", "--once", "--port", five_pins.port)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("five-pins, game ") and lines[0].endswith(
        ", set 1 on %s" % five_pins.port)
    assert lines[2:5] == ["       score  sets",
                          "  Ann  %5d     0" % score[0],
                          "> Bob  %5d     0" % score[1]]
    assert "on move: Bob" in lines
    assert "last: Ann: pins 1 and 2 — 4 points" in lines  # in words, with the name
    assert "! Pin C's switch chatters (flickers on and off): it is ignored until it works " \
        "again; check it and its wiring" in lines


def test_watch_once_shows_a_peg_mismatch(shove, capsys):
    with remote.connect(shove.port) as board:
        board.request("new", {"game": "shove-hapenny", "players": ["Ann", ["Bob", "Cy"]]})
        board.request("act", {"action": {"a": "start", "side": 0}})
        # a turn scored from the buttons, with no peg put in: the pegs disagree with the score
        board.request("act", {"action": {"a": "turn", "side": 0,
                                         "beds": [0, 2, 0, 0, 0, 0, 0, 0, 0]}})
    code, out, err = chalk(capsys, "watch", "--once", "--port", shove.port)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].endswith(", turn 1 on %s" % shove.port)
    assert lines[2:5] == ["            1 2 3 4 5 6 7 8 9  total",
                          "  Ann       . 2 . . . . . . .      2",
                          "> Bob & Cy  . . . . . . . . .      0"]
    assert "on move: Bob & Cy" in lines and "last: Ann: 2 in bed 2" in lines
    # The mismatch says what to do, and why done is ignored meanwhile.
    assert "! A (Ann): put 2 pegs in bed 2 (the score there is 2)" in lines
    assert "! Pressing done scores nothing until the pegs match the score (SH-2): put them " \
        "right first" in lines


def test_watch_redraws_in_place_on_a_terminal(five_pins):
    with remote.connect(five_pins.port) as board:
        board.request("new", {"game": "five-pins", "players": ["Ann", "Bob"]})
        board.request("inject", {"events": [{"t": 0, "line": "btn.undo", "v": 1},
                                            {"t": 100, "line": "btn.undo", "v": 0}]})
        wait_for(board, lambda f: f.type == "warn" and f.payload.get("refused") == "LOG")
    out = io.StringIO()
    failed = []

    def run():
        try:
            watch.watch(five_pins.port, out=out, tty=True)
        except ChalkError as e:
            failed.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60  # upper bounds only: each loop waits for an event
    while watch.CLEAR not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    five_pins.power_cut()  # the board reboots: a boot frame, and the screen is redrawn
    while "(the board restarted)" not in out.getvalue() and time.monotonic() < deadline + 60:
        time.sleep(0.05)
    five_pins.stop()  # the cable is gone for good
    t.join(10)
    text = out.getvalue()
    screens = text.split(watch.CLEAR)[1:]
    assert len(screens) >= 2
    assert "! refused: nothing to undo" in screens[0]
    assert "to start: the break (FP-7)" in screens[0]
    assert "watching %s; Ctrl-C to stop" % five_pins.port in screens[0]
    assert "(the board restarted)" in screens[-1]
    assert failed and failed[0].message.startswith("lost the connection to the board on %s"
                                                   % five_pins.port)


def test_watch_prints_one_line_per_change_and_one_line_when_the_board_is_gone(five_pins):
    proc = subprocess.Popen([PY, "-m", "chalk.cli", "watch", "--port", five_pins.port],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert "five-pins game " in first and "set 1: P1 0 (0) - P2 0 (0)" in first
        five_pins.power_cut()
        second = proc.stdout.readline()
        while " NOT SCORING: " in second:  # a reboot slower than the heartbeat, under load
            second = proc.stdout.readline()
        assert second.rstrip().endswith("| (the board restarted)")
        five_pins.stop()
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    err = err.splitlines()
    assert err[0].startswith("chalk: lost the connection to the board on %s: "
                             % five_pins.port)
    assert err[1].startswith("chalk: hint: is the cable unplugged?")


# -- new -------------------------------------------------------------------------------------

def header_of_last_game(port):
    with remote.connect(port) as board:
        recs = board.journal_since(0)
    return [r for r in recs if r.get("type") == "H"][-1]["header"]


def test_new_starts_a_game_with_config_and_players(five_pins, capsys):
    code, out, err = chalk(capsys, "new", "--port", five_pins.port, "--config", "target=30",
                           "sets=1", "--players", "Ann", "Bob")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("new game ") and lines[0].endswith(
        " started on %s" % five_pins.port)
    assert "  Ann      0     0" in lines and "to start: the break (FP-7)" in lines
    head = header_of_last_game(five_pins.port)
    # The header says exactly what is played: the rest of the config is the rules' defaults.
    assert head["config"] == {"target": 30, "sets": 1, "pin_foul_penalty": 0}
    assert head["players"] == ["Ann", "Bob"]
    # Without --config and --players: the same config and players, a fresh game.
    code, out, err = chalk(capsys, "new", "--port", five_pins.port)
    assert code == 0, err
    head2 = header_of_last_game(five_pins.port)
    assert head2["game_no"] == head["game_no"] + 1
    assert head2["config"] == {"target": 30, "sets": 1, "pin_foul_penalty": 0}
    assert head2["players"] == ["Ann", "Bob"]
    # JSON config, a side of two
    code, out, err = chalk(capsys, "new", "--port", five_pins.port, "--config",
                           '{"pin_foul_penalty": 2}', "--players", "Ann,Bob", "Cy")
    assert code == 0, err
    head3 = header_of_last_game(five_pins.port)
    assert head3["config"] == {"target": 60, "sets": 3, "pin_foul_penalty": 2}
    assert head3["players"] == [["Ann", "Bob"], "Cy"]


def test_new_with_a_config_the_board_cannot_play_is_refused(five_pins, capsys):
    with remote.connect(five_pins.port) as board:
        before = board.request("state")["game_no"]
    code, out, err = chalk(capsys, "new", "--port", five_pins.port, "--config", "target=0")
    assert (code, out) == (1, "")
    assert err == "chalk: the board refused new: config target=0 must be an integer >= 1\n"
    code, out, err = chalk(capsys, "new", "--port", five_pins.port, "--config", "overflow=claim")
    assert err.startswith('chalk: the board refused new: unknown config key "overflow" for '
                          'five-pins')
    code, out, err = chalk(capsys, "new", "--port", five_pins.port, "--game", "shove-hapenny")
    assert err == ("chalk: the board refused new: this board plays five-pins, not "
                   "shove-hapenny\n")
    with remote.connect(five_pins.port) as board:
        assert board.request("state")["game_no"] == before  # nothing started


def test_new_config_and_player_arguments():
    assert new_cmd.parse_config(None) is None
    assert new_cmd.parse_config(["target=60", "overflow=claim", "x=true"]) == {
        "target": 60, "overflow": "claim", "x": True}
    assert new_cmd.parse_config(['{"sets": 5}']) == {"sets": 5}
    with pytest.raises(ChalkError, match="is not KEY=VALUE"):
        new_cmd.parse_config(["target"])
    with pytest.raises(ChalkError, match="not valid JSON"):
        new_cmd.parse_config(["{target: 1}"])
    assert new_cmd.parse_players(["Ann", "Bob, Cy"]) == ["Ann", ["Bob", "Cy"]]


def test_board_commands_without_a_board(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CHALK_PORT", raising=False)
    fake_ports(monkeypatch)
    code, out, err = chalk(capsys, "watch", "--once")
    assert code == 1
    assert err.startswith("chalk: no Chalk board found")
    code, out, err = chalk(capsys, "new", "--port", tmp_path / "ttyNONE")
    assert code == 1 and err.startswith("chalk: no such port: %s" % (tmp_path / "ttyNONE"))


# -- flash -----------------------------------------------------------------------------------

@pytest.fixture
def image(tmp_path):
    p = tmp_path / "ESP32_GENERIC-v1.24.bin"
    p.write_bytes(bytes([0xE9]) + bytes(4095))
    return p


@pytest.fixture
def empty_port():
    master, slave = os.openpty()  # a serial port with no chip behind it
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


def test_flash_command_lines(image):
    base = [PY, "-m", "esptool", "--chip", "esp32", "--port", "/dev/ttyUSB0", "--baud", "460800"]
    assert deploy.esptool_commands("/dev/ttyUSB0", image) == [
        base + ["write-flash", "-z", "0x1000", str(image)]]
    assert deploy.esptool_commands("/dev/ttyUSB0", image, erase=True, baud=115200,
                                   connect_attempts=2) == [
        base[:-1] + ["115200", "--connect-attempts", "2", "erase-flash"],
        base[:-1] + ["115200", "--connect-attempts", "2", "write-flash", "-z", "0x1000",
                     str(image)]]
    s3 = deploy.esptool_commands("/dev/ttyACM0", image, chip="esp32s3")[0]
    assert s3[4] == "esp32s3" and s3[-3:] == ["-z", "0x0", str(image)]


def test_flash_refuses_a_missing_or_wrong_file(tmp_path, capsys, empty_port):
    code, out, err = chalk(capsys, "flash", "--port", empty_port, tmp_path / "nope.bin")
    assert code == 1 and out == ""
    assert err.splitlines()[0] == "chalk: no firmware image %s" % (tmp_path / "nope.bin")
    assert "micropython.org/download/ESP32_GENERIC" in err
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"\x7fELF")
    code, out, err = chalk(capsys, "flash", "--port", empty_port, elf)
    assert err.splitlines()[0] == "chalk: %s is not a .bin firmware image" % elf
    html = tmp_path / "firmware.bin"
    html.write_text("<html>404</html>")
    code, out, err = chalk(capsys, "flash", "--port", empty_port, html)
    assert code == 1
    assert err.splitlines()[0] == ("chalk: %s is not an ESP32 firmware image (it does not "
                                   "start with byte 0xe9)" % html)


@pytest.mark.parametrize("erase", [False, True])
def test_flash_with_no_chip_answering_quotes_esptool(image, empty_port, erase):
    argv = [PY, "-m", "chalk.cli", "flash", "--port", empty_port, str(image),
            "--connect-attempts", "1"] + (["--erase"] if erase else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Connecting..." in proc.stdout  # esptool's own output, streamed
    err = proc.stderr.splitlines()
    assert err[0] == ("chalk: esptool could not %s the board on %s: Failed to connect to "
                      "ESP32: No serial data received." % ("erase" if erase else "flash",
                                                          empty_port))
    assert err[1].startswith("chalk: hint: hold the board's BOOT button")
    assert "data cable" in err[1] and len(err) == 2
