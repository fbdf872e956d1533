"""chalk deploy and an ESP32's heap: the firmware as .mpy files (or sources) on the filesystem of
an ESP32 whose heap cannot hold it with a long game is refused with one line saying what to do,
before anything is copied; a board with the room, a ROMFS partition, or another port goes on."""

import pytest

from chalk import deploy
from chalk.errors import ChalkError


class Stop(Exception):
    """Raised where the copy would start: the deploy got that far."""


@pytest.fixture
def board(monkeypatch, tmp_path):
    state = {"heap": ("esp32", 110 * 1024), "romfs": 0, "copied": False}
    monkeypatch.setattr(deploy, "stop_app", lambda port, timeout=5.0: None)
    monkeypatch.setattr(deploy, "romfs_partitions", lambda port: state["romfs"])
    monkeypatch.setattr(deploy, "board_heap", lambda port: state["heap"])

    def copy(*args, **kwargs):
        state["copied"] = True
        raise Stop()

    monkeypatch.setattr(deploy, "mpremote_command", copy)
    state["keys"] = str(tmp_path / "keys.json")
    return state


def run(board, **kw):
    lines = []
    deploy.deploy("/dev/ttyUSB9", out=lines.append, keys=board["keys"], **kw)
    return lines


def test_mpy_files_on_an_esp32_too_small_for_them_are_refused(board):
    with pytest.raises(ChalkError) as e:
        run(board)
    msg = str(e.value)
    assert "110 KB of heap" in msg and "%d KB" % deploy.MPY_HEAP_KB in msg
    assert "xtensawin bytecode files on its filesystem" in msg
    assert "nothing was copied" in msg and "ROMFS" in e.value.hint
    assert not board["copied"]


def test_sources_are_refused_likewise(board):
    with pytest.raises(ChalkError, match="sources on its filesystem needs"):
        run(board, mode="source")
    assert not board["copied"]


@pytest.mark.parametrize("heap, romfs", [(("esp32", 180 * 1024), 0),  # room enough
                                         (("esp32", 60 * 1024), 1),  # ROMFS: no heap for code
                                         (("linux", 96 * 1024), 0),  # the simulated board
                                         ((None, None), 0)])  # no answer: not judged
def test_a_board_with_room_or_rom_or_another_port_goes_on(board, heap, romfs):
    board["heap"] = heap
    board["romfs"] = romfs
    with pytest.raises(Stop):
        run(board)
    assert board["copied"]


def test_the_heap_query_reads_the_boards_answer(monkeypatch):
    monkeypatch.setattr(deploy, "_stream", lambda cmd, out, idle=None, what=None: (
        0, [">>> ", "chalk-heap esp32 171008", ""]))
    assert deploy.board_heap("/dev/ttyUSB0") == ("esp32", 171008)
    monkeypatch.setattr(deploy, "_stream", lambda cmd, out, idle=None, what=None: (
        1, ["Traceback", "chalk-heap esp32 lots"]))
    assert deploy.board_heap("/dev/ttyUSB0") == (None, None)
