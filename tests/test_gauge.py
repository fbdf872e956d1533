"""The board's heap and time gauge (docs/serial-protocol.md, `state`): free heap, the largest block
and the longest scan gap and step in the status reply, `chalk watch` and `chalk service`; a board
near the end of its heap says so on its screen and to the host, and keeps fewer blocks of its
game in RAM, long before it fails."""

import json
from pathlib import Path

import pytest

from chalk import watch
from scoreboard import gauge
from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, VirtualClock
from tests.longgames import board_config, endless, journal
from tests.mpy import micropython_path, run_mp

ROOT = Path(__file__).resolve().parent.parent


def reads(free, block):
    """A stand-in for gauge.measuring (CPython's gc tells no heap figures): these, at once."""
    def measuring(out):
        out[0] = free
        out[1] = block
        yield from ()
    return measuring


def long_app(tmp_path, n=330):
    head, actions = endless("five-pins", n, seed=6)
    flash = tmp_path / "flash"
    flash.mkdir()
    journal(flash, head, actions)
    cfg = board_config(ROOT, "five-pins", head, tmp_path / "board.json")
    app = App(SimBoard(str(cfg), str(flash), VirtualClock()))
    sent = []
    app.emit = lambda typ, payload: sent.append((typ, payload))
    app.boot()
    return app, sent, flash


def test_a_heap_near_its_end_is_said_plainly_and_the_game_keeps_less_in_ram(tmp_path,
                                                                           monkeypatch):
    app, sent, flash = long_app(tmp_path)
    blocks = app.game._codes
    assert not hasattr(blocks, "store")  # 3 blocks: all in RAM, no checkpoint file yet
    monkeypatch.setattr(gauge, "measuring", reads(7 * 1024 + 100, 1500))
    app.check_heap()
    assert app.heap_low
    warns = [p for t, p in sent if t == "warn"]
    assert warns[-1]["warning"] == "heap low: 7K free, 1K block"
    assert warns[-1]["heap"] == {"free": 7 * 1024 + 100, "block": 1500}
    assert "heap low: 7K free, 1K block" in app.warnings()
    app.refresh()
    assert "!heap low: 7K fr" in app.display.rows  # on the screen, in 16 columns
    codes = app.game._codes
    assert hasattr(codes, "store") and codes.RAM_BLOCKS == 2  # a checkpoint to flash at once
    assert sum(1 for b in codes._blocks if b is not None) <= 3
    assert (flash / "g00001.ckp").exists() and codes is not blocks
    st = app.status()
    assert st["mem_free"] == 7 * 1024 + 100 and st["mem_block"] == 1500
    # Said once, not at every measure; cleared when a later measure finds room again.
    app.check_heap()
    assert len([p for t, p in sent if t == "warn"]) == len(warns)
    monkeypatch.setattr(gauge, "measuring", reads(60 * 1024, 16384))
    app.check_heap()
    assert not app.heap_low and [p for t, p in sent if t == "warn"][-1]["warning"] == "heap ok"
    assert not any(w.startswith("heap low") for w in app.warnings())
    # The game is still whole: undo back across the blocks that went to flash.
    before = len(app.game)
    for _ in range(300):
        assert app.submit({"a": "undo"})
    assert len(app.game) == before - 300


def test_the_status_reply_carries_the_gauge_and_watch_shows_it(tmp_path, monkeypatch):
    app, _, _ = long_app(tmp_path, 50)
    monkeypatch.setattr(gauge, "measuring", reads(40960, 12288))
    app.check_heap()
    app.gap_ms = 7
    app.step_ms = 3
    st = app.status()
    assert {k: st[k] for k in ("mem_free", "mem_block", "gap_ms", "step_ms")} == {
        "mem_free": 40960, "mem_block": 12288, "gap_ms": 7, "step_ms": 3}
    assert app.gauge() == {"mem_free": 40960, "mem_block": 12288, "gap_ms": 7, "step_ms": 3,
                           "lost": 0}
    lines = watch.render(json.loads(json.dumps(st)))
    assert lines[-1] == ("board: 40 KB of heap free (largest block 12 KB), longest gap between "
                         "scans 7 ms, longest step 3 ms")
    # Samples the ring had no room for (the loop far behind): counted, and said in words.
    app.start_sampling()  # (five pins: edges only, no timer)
    for k in range(40):  # 40 changes, no tick to take them: the ring (32) fills
        app.board.lines.set(0, k & 1)
        app.sample_lines()
    assert app.status()["lost"] == app._s_lost > 0
    assert watch.render(json.loads(json.dumps(app.status())))[-1].endswith(
        "longest step 3 ms, %d input samples lost (the board fell behind: report it)"
        % app._s_lost)
    assert watch.one_line(st).endswith("| heap 40K free")
    assert watch.gauge_line({"mem_free": None}) is None and watch.gauge_line(None) is None
    app.service = True
    rows = app.service_rows()
    assert rows[-1] == "mem 40/12K 7ms"


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_the_largest_block_is_found_on_micropython_and_a_pieced_heap_shows_it():
    code = """
import gc
from scoreboard import gauge
free, block = gauge.measure()
print(free, block, gc.isenabled())
# A heap in pieces: filled with 1 KB blocks, then every other one freed.
keep = []
try:
    while True:
        keep.append(bytearray(1000))
except MemoryError:
    pass
keep.pop()
gc.collect()  # room for the loop below
for i in range(0, len(keep), 2):
    keep[i] = None
gc.collect()
free2 = gc.mem_free()
print(free2, gauge.largest_block(free2), gc.isenabled())
"""
    out = run_mp(code=code, heap="160k").stdout.split()
    free, block, on = int(out[0]), int(out[1]), out[2]
    assert on == "True" and 0 < block <= min(free, gauge.BLOCK_MAX)
    assert block >= min(free, gauge.BLOCK_MAX) * 15 // 16 - 64  # a fresh heap: one big block
    free2, block2, on2 = int(out[3]), int(out[4]), out[5]
    # In pieces: tens of KB free, no block much bigger than one freed 1 KB piece.
    assert on2 == "True" and free2 > 20000 and 900 <= block2 < 4096


def test_the_venue_says_the_gauge_and_a_heap_low_board_in_words():
    from chalk import views

    status = {"game": "five-pins", "state": None, "mem_free": 7 * 1024 + 100,
              "mem_block": 1500, "gap_ms": 9, "step_ms": 31,
              "warnings": ["heap low: 7K free, 1K block"]}
    v = views.view(status, table="bar")
    assert v["gauge"] == "board: 7 KB free (block 1 KB), scan gap 9 ms, step 31 ms"
    said = views.words(status)
    assert said["notices"] == ["Heap low: the board is short of memory (7 KB free, largest "
                               "block 1 KB). It keeps the score, but may refuse long requests; "
                               "restart the board after this game if it stays"]
    assert not said["warnings"]
    # a board that does not report it (older firmware, a port without gc.mem_free)
    assert views.view({"game": "five-pins", "mem_free": None}, table="bar")["gauge"] == ""
    assert views.gauge_words({"mem_free": True}) == ""
    assert views.view(dict(status, lost=3), table="bar")["gauge"].endswith(
        "step 31 ms, 3 input samples lost")
