"""Pocket sensors (sense/pockets.py, boardconfig pockets): passages counted once, flickers
ignored, colour classified, and the counter allocation-free on MicroPython under heap_lock;
board configs refuse a colour sensor off the ADC1 pins, naming the pin."""

import json
from pathlib import Path

import pytest

from scoreboard import boardconfig
from scoreboard.sense import POCKET, EventRing
from scoreboard.sense.pockets import BALL, BLACK, RED, STRIKER, PocketCounter
from tests.conftest import report_micropython
from tests.mpy import micropython_path, run_mp

BOARDS = Path(__file__).resolve().parent.parent / "firmware" / "boards"


class Readings:
    def __init__(self, n):
        self.v = [0] * n

    def read(self, i):
        return self.v[i]


def events(ring):
    out = []
    buf = [0, 0, 0, 0]
    while ring.pop_into(buf):
        out.append(tuple(buf))
    return out


def run(counter, script, analog=None, step=5):
    """script: [(t_from, t_to, pocket, colour reading or None)] beam broken over [from, to)."""
    end = max(s[1] for s in script) + 50
    for t in range(0, end, step):
        raw = 0
        for a, b, i, colour in script:
            if a <= t < b:
                raw |= 1 << i
                if analog is not None and colour is not None:
                    analog.v[i] = colour
        if analog is not None and not raw:
            analog.v = [50] * len(analog.v)  # the empty throat reads dark
        counter.tick(t, raw, analog)
    return events(counter.ring)


def test_passages_counted_once_flickers_ignored():
    c = PocketCounter(6, min_ms=8, ring=EventRing(16))
    got = run(c, [(100, 130, 0, None), (300, 305, 1, None), (500, 540, 5, None),
                  (800, 830, 0, None)])
    assert [(k, i, v) for k, i, v, _t in got] == [(POCKET, 0, BALL), (POCKET, 5, BALL),
                                                  (POCKET, 0, BALL)]
    assert [c.passages[i] for i in range(6)] == [2, 0, 0, 0, 0, 1]
    assert got[0][3] == 130  # when the beam cleared


def test_colour_classes_and_the_striker_by_length():
    a = Readings(4)
    c = PocketCounter(4, 8, 60, 1200, 2800, colour_mask=0b0111, ring=EventRing(16))
    got = run(c, [(100, 130, 0, 600), (200, 230, 1, 2000), (300, 330, 2, 3500),
                  (400, 480, 0, 600), (600, 630, 3, 2000)], analog=a)
    assert [(i, v) for _k, i, v, _t in got] == [(0, BLACK), (1, RED), (2, STRIKER), (0, STRIKER),
                                                (3, BALL)]
    assert list(c.last) == [STRIKER, RED, STRIKER, BALL]


def test_a_beam_stuck_broken_never_counts_until_it_clears():
    c = PocketCounter(1, ring=EventRing(4))
    assert run(c, [(0, 100000, 0, None)], step=50)[:-1] == []


# -- the edge interrupt: passages between scans, or during a long step -----------------------

def test_a_passage_between_two_scans_is_caught_by_its_edges():
    """A ball drops through in 12 ms between scans 50 ms apart (a long step): only the edge
    handler sees it; it is counted once, at its own time, with the colour read at the break."""
    c = PocketCounter(2, 8, 60, 1200, 2800, colour_mask=0b10, ring=EventRing(16))
    c.tick(0, 0)
    c.note_edge(1, 13, 1, 2000)  # broken at 13 ms, the sensor reads a red puck
    c.note_edge(1, 25, 0)  # clear at 25
    c.note_edge(0, 30, 1)
    c.note_edge(0, 33, 0)  # a 3 ms flicker: not a passage
    c.tick(50, 0, Readings(2))
    assert events(c.ring) == [(POCKET, 1, RED, 25)]
    assert list(c.passages) == [0, 1]


def test_two_passages_of_one_pocket_inside_one_step_count_twice_in_order():
    c = PocketCounter(1, 8, 60, 1200, 2800, colour_mask=1, ring=EventRing(16))
    c.tick(0, 0)
    c.note_edge(0, 100, 1, 600)
    c.note_edge(0, 125, 0)
    c.note_edge(0, 140, 1, 3600)
    c.note_edge(0, 230, 0)  # 90 ms: the striker
    c.tick(400, 0, Readings(1))
    assert events(c.ring) == [(POCKET, 0, BLACK, 125), (POCKET, 0, STRIKER, 230)]


def test_a_passage_seen_by_scans_and_edges_counts_once():
    a = Readings(1)
    c = PocketCounter(1, 8, 60, 1200, 2800, colour_mask=1, ring=EventRing(16))
    c.tick(0, 0, a)
    c.note_edge(0, 3, 1, 100)  # the handler reads the throat before the puck fills it
    a.v[0] = 2200
    c.tick(5, 1, a)  # the scan sees the red puck in front of the sensor
    c.tick(10, 1, a)
    a.v[0] = 80
    c.note_edge(0, 31, 0)
    c.tick(35, 0, a)
    c.tick(40, 0, a)
    assert events(c.ring) == [(POCKET, 0, RED, 31)]  # once, the highest reading of the run
    assert c.passages[0] == 1


def test_when_the_edges_are_lost_the_scans_still_count():
    """The ESP32 drops an edge when its schedule queue is full: a run the scans saw whole, of
    which the handler recorded nothing, counts from the scans; a lost clear edge does not leave
    the handler out of step for the next passage."""
    c = PocketCounter(1, ring=EventRing(16))
    for t, raw in ((0, 0), (5, 1), (10, 1), (15, 1), (20, 0)):  # no edge at all
        c.tick(t, raw)
    assert events(c.ring) == [(POCKET, 0, BALL, 20)]
    c.note_edge(0, 101, 1)  # the break is seen, its clear is lost
    for t, raw in ((105, 1), (110, 1), (115, 0)):
        c.tick(t, raw)
    assert events(c.ring) == [(POCKET, 0, BALL, 115)]
    c.note_edge(0, 201, 1)
    c.note_edge(0, 220, 0)  # the next passage, between two scans 100 ms apart
    c.tick(300, 0)
    assert events(c.ring) == [(POCKET, 0, BALL, 220)]
    assert c.passages[0] == 3


def test_a_full_handler_ring_counts_what_it_lost():
    c = PocketCounter(1, ring=EventRing(64))
    for k in range(40):
        c.note_edge(0, 10 * k, 1)
        c.note_edge(0, 10 * k + 9, 0)
    c.tick(1000, 0)
    assert len(events(c.ring)) == 15 and c.lost == 25  # a ring of 16 keeps 15


def test_bad_size_refused():
    for n in (0, 9):
        with pytest.raises(ValueError):
            PocketCounter(n)


def _novuss():
    return json.loads((BOARDS / "novuss.json").read_text())


@pytest.mark.parametrize("gpio", [4, 25, 27, 13])
def test_colour_sensor_off_adc1_is_refused_naming_the_pin(gpio):
    cfg = _novuss()
    cfg["pockets"]["2"]["colour"] = gpio
    for k in cfg["buttons"].values():
        if k["pin"] == gpio:
            k["pin"] = 27 if gpio != 27 else 4
    with pytest.raises(boardconfig.BoardConfigError) as e:
        boardconfig.load(cfg)
    assert e.value.path == "pockets.2.colour"
    assert "GPIO %d" % gpio in str(e.value) and "ADC1" in str(e.value)


@pytest.mark.parametrize("change, path, words", [
    (lambda c: c["pockets"]["1"].update(colour=33), None, "GPIO 33 is used twice"),
    (lambda c: c["pockets"].update({"5": {"pin": 27, "active": 1}}), "pockets.5", "unknown"),
    (lambda c: c["pockets"]["1"].update(colour=9), "pockets.1.colour", "GPIO 9 is forbidden"),
    (lambda c: c["pockets"]["1"].pop("active"), "pockets.1.active", "beam is broken"),
    (lambda c: c["pocket_sensing"].update(black_below=3000), "pocket_sensing.black_below",
     "red_below"),
    (lambda c: c.update(pockets={}), "pockets", "leave the key out"),
])
def test_pocket_config_errors(change, path, words):
    cfg = _novuss()
    change(cfg)
    with pytest.raises(boardconfig.BoardConfigError) as e:
        boardconfig.load(cfg)
    assert words in str(e.value)
    if path:
        assert e.value.path == path


def test_colour_only_on_novuss_and_pockets_only_on_pocket_games():
    cfg = json.loads((BOARDS / "seven-pins.json").read_text())
    cfg["pockets"]["1"]["colour"] = 32
    cfg["pins"]["M3"]["pin"] = 4
    with pytest.raises(boardconfig.BoardConfigError) as e:
        boardconfig.load(cfg)
    assert "no colour sensors" in str(e.value)
    five = json.loads((BOARDS / "five-pins.json").read_text())
    five["pockets"] = {"1": {"pin": 4, "active": 1}}
    with pytest.raises(boardconfig.BoardConfigError) as e:
        boardconfig.load(five)
    assert e.value.path == "pockets"


def test_line_names_of_the_pocket_boards():
    nov = boardconfig.load(str(BOARDS / "novuss.json"))
    assert boardconfig.line_names(nov)[-8:] == ["pocket.1", "pocket.2", "pocket.3", "pocket.4",
                                                "colour.1", "colour.2", "colour.3", "colour.4"]
    seven = boardconfig.load(str(BOARDS / "seven-pins.json"))
    assert boardconfig.switch_names(seven)[-9:] == [
        "pin.K", "pin.S1", "pin.S2", "pin.S3", "pin.S4", "pin.M1", "pin.M3", "pocket.1",
        "pocket.2"]
    assert boardconfig.analog_names(seven) == []
    assert boardconfig.load(nov) == nov  # loading a loaded config gives it back


MP_CODE = """
import micropython
from array import array
from scoreboard.sense import EventRing
from scoreboard.sense.pockets import PocketCounter

class A:
    def __init__(self):
        self.v = array('i', [0, 0, 0, 0])
    def read(self, i):
        return self.v[i]

a = A()
ring = EventRing(8)
c = PocketCounter(4, 8, 60, 1200, 2800, 15, ring)
buf = array('i', [0, 0, 0, 0])

def drive(k0, n):
    for k in range(k0, k0 + n):
        t = (k * 5 + (1 << 30) - 5000) & 0x3FFFFFFF
        ph = k % 40
        p = (k // 40) % 4
        raw = (1 << p) if 5 <= ph < 5 + 2 + (k // 160) % 20 else 0
        if ph == 30:
            raw |= 8  # a 5 ms flicker on pocket 4
        a.v[p] = (500, 2000, 3500, 100)[(k // 40) % 4]
        c.tick(t, raw, a)
        while ring.pop_into(buf):
            seen[buf[2]] += 1

def edges(k0, n):
    # Passages between scans 50 ms apart: only the edge handler times them.
    for k in range(k0, k0 + n):
        t = (k * 50 + (1 << 30) - 5000) & 0x3FFFFFFF
        p = k % 4
        c.note_edge(p, t + 3, 1, a.v[p])
        c.note_edge(p, (t + 3 + 9 + k % 30) & 0x3FFFFFFF, 0)
        c.tick((t + 49) & 0x3FFFFFFF, 0, a)
        while ring.pop_into(buf):
            seen[4] += 1

def locked():
    micropython.heap_lock()
    try:
        drive(1000, 20000)
        edges(0, 2000)
    except MemoryError as e:
        micropython.heap_unlock()
        return e
    micropython.heap_unlock()
    return None

seen = array('i', [0, 0, 0, 0, 0])
drive(0, 1000)
edges(0, 10)
for i in range(5):
    seen[i] = 0
err = locked()
print('ERR' if err else 'OK', seen[0], seen[1], seen[2], seen[3], ring.dropped, seen[4])
"""


@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_pocket_counter_allocates_nothing_under_heap_lock():
    out = run_mp(code=MP_CODE).stdout.split()
    assert out[0] == "OK", out
    red, black, striker, ball = (int(x) for x in out[1:5])
    assert red > 0 and black > 0 and striker > 0 and ball == 0
    # One passage of 10 to 105 ms every 200 ms, each counted once; the 5 ms flickers never.
    assert red + black + striker == 20000 // 40
    assert int(out[6]) == 2000  # every passage the edge handler timed, none lost
    assert int(out[5]) == 0
    report_micropython("PocketCounter ticks under heap_lock (passages classified)", 20000)


def test_esp32_hal_reads_pocket_beams_and_adc1_colour(monkeypatch, tmp_path):
    """hal.esp32 against a stand-in for `machine`: the beams are lines like any switch, the
    colour sensors machine.ADC on their ADC1 pins at 11 dB, read as 0..4095."""
    import sys
    import types

    import scoreboard.hal
    from tests.test_hal_sim import FakeMachine

    fake = FakeMachine()
    adcs = {}

    class ADC:
        ATTN_11DB = 3

        def __init__(self, pin, atten=None):
            adcs[pin.gpio] = self
            self.atten = atten
            self.u16 = 0

        def read_u16(self):
            return self.u16

    mod = types.ModuleType("machine")
    mod.Pin, mod.I2C, mod.ADC = fake.Pin, fake.I2C, ADC
    mod.unique_id = lambda: b"\x24\x0a\xc4\x01\x02\x03"
    monkeypatch.setitem(sys.modules, "machine", mod)
    nvs = types.ModuleType("esp32")  # the signing key's NVS: only handed to the signer
    nvs.NVS = lambda namespace: {}
    monkeypatch.setitem(sys.modules, "esp32", nvs)
    sys.modules.pop("scoreboard.hal.esp32", None)
    try:
        import scoreboard.hal.esp32 as esp32

        board = esp32.make_board(str(BOARDS / "novuss.json"), journal=str(tmp_path / "j"))
        assert sorted(adcs) == [32, 33, 34, 35] and all(a.atten == 3 for a in adcs.values())
        names = board.lines.names
        assert names[-4:] == ("pocket.1", "pocket.2", "pocket.3", "pocket.4")
        assert fake.modes[4] == (1, 2)  # pocket 1's beam: input with the internal pull-up
        fake.levels[25] = 1  # pocket 3's receiver lets go: beam broken, active high
        assert board.lines.read() >> names.index("pocket.3") & 1
        adcs[34].u16 = 2000 << 4
        assert board.analog.count == 4 and board.analog.read(2) == 2000
        assert board.analog.read(0) == 0
    finally:
        sys.modules.pop("scoreboard.hal.esp32", None)
        if hasattr(scoreboard.hal, "esp32"):
            del scoreboard.hal.esp32
