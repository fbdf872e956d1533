# Board configs and the simulated hal, self-checking, for the MicroPython unix port (runs on
# CPython too, so the two can be compared line by line).
# Usage: micropython hal_check.py BOARDS_DIR FLASH_DIR
# Prints one JSON object per line: {"check": name, "value": ...}. Lines whose check starts with
# "mp." only appear on MicroPython (heap_lock). Any failure raises (non-zero exit).

import json
import sys

from scoreboard import boardconfig
from scoreboard.hal import ticks_diff
from scoreboard.hal.sim import SimBoard, TraceError, TracePlayer, VirtualClock
from scoreboard.hal.ssd1306 import SSD1306

if sys.implementation.name == "micropython":
    import micropython
else:
    micropython = None

boards, flash = sys.argv[1], sys.argv[2]


def out(check, value):
    print(json.dumps({"check": check, "value": value}))


def rejected(cfg):
    try:
        boardconfig.load(cfg)
    except boardconfig.BoardConfigError as e:
        return [str(e), e.path]
    raise AssertionError("accepted: %s" % json.dumps(cfg))


_NOARG = object()


def heap_locked(fn, arg=_NOARG):
    """fn() or fn(arg) with the heap locked: 'ok', or 'allocates' if it asked for memory."""
    ok = True
    micropython.heap_lock()
    try:
        if arg is _NOARG:
            fn()
        else:
            fn(arg)
    except MemoryError:
        ok = False
    micropython.heap_unlock()
    return "ok" if ok else "allocates"


# -- board configs --------------------------------------------------------------------------------
five = boardconfig.load(boards + "/five-pins.json")
shove = boardconfig.load(boards + "/shove-hapenny.json")
assert boardconfig.load(five) == five and boardconfig.load(shove) == shove
out("five.line_names", boardconfig.line_names(five))
out("shove.line_names", boardconfig.line_names(shove))
out("five.pin_map", [list(r) for r in boardconfig.pin_map(five)])
out("shove.pin_map", [list(r) for r in boardconfig.pin_map(shove)])
out("shove.chain_map", list(boardconfig.chain_map(shove)))


def variant(base, path, value):
    cfg = json.loads(json.dumps(base))
    node = cfg
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[k]
    if value is None:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return cfg


raw_five = json.loads(open(boards + "/five-pins.json").read())
raw_shove = json.loads(open(boards + "/shove-hapenny.json").read())
out("reject.flash", rejected(variant(raw_five, "buttons.undo.pin", 7)))
out("reject.pullup_34", rejected(variant(raw_five, "pins.1.pull", "up")))
out("reject.output_35", rejected(variant(raw_shove, "pegs.clock", 35)))
out("reject.twice", rejected(variant(raw_five, "pins.C.pin", 13)))
out("reject.unknown_key", rejected(variant(raw_five, "timings.debounse_ms", 20)))
out("reject.strapping", rejected(variant(raw_five, "buttons.undo.pin", 12)))
out("reject.range", rejected(variant(raw_five, "buttons.undo.pin", 40)))
out("reject.type", rejected(variant(raw_five, "buttons.undo.pin", "18")))
out("reject.game", rejected(variant(raw_five, "game", "snooker")))

# -- the simulated board --------------------------------------------------------------------------
clock = VirtualClock(start=(1 << 30) - 30)  # near the ticks wrap, as a board meets it
table = SimBoard(five, flash + "/five", clock)
edges = []
table.lines.on_edge(edges.append)
table.set_line("btn.confirm", 1)
table.set_line("pin.C", 1)
table.set_line("pin.1", 1)
table.set_line("pin.1", 0)
out("five.read", table.lines.read())
out("five.edges", edges)

trace = [
    '{"t": 0, "line": "pin.2", "v": 1}',
    '{"t": 35, "line": "pin.2", "v": 0}',
    "",
    '{"t": 60, "line": "btn.confirm", "v": 0}',
]
player = TracePlayer(table, trace)
seen = []
player.play(until=40, tick=lambda: seen.append([player.elapsed(), table.lines.read()]))
out("trace.until40", [seen, player.elapsed(), player.done])
player.play()
out("trace.end", [player.applied, table.lines.read(), player.done,
                  ticks_diff(clock.ticks_ms(), player.start)])
try:
    TracePlayer(table, ['{"t": 5, "line": "pin.1", "v": 1}', '{"t": 4, "line": "pin.1", "v": 0}'])\
        .play()
    raise AssertionError("a trace going backwards was played")
except TraceError as e:
    out("trace.backwards", [str(e), e.lineno])

board = SimBoard(shove, flash + "/shove", VirtualClock())
for name in ("peg.0.1.1", "peg.0.9.3", "peg.1.5.2"):
    board.set_line(name, 1)
arr = [0, 0]
board.pegs.scan_into(arr)
out("shove.scan", arr)

d = board.display
d.fill(0)
d.text("SIDE A  12", 0, 0)
d.text("bed 5", 16, 24)
d.show()
out("display.text", [d.as_text(), d.text_lines()])
lit = 0
for row in d.pixels():
    lit += row.count("#")
out("display.lit", lit > 0)

if micropython is not None:
    out("mp.sanity", heap_locked(lambda: [1, 2, 3]))
    out("mp.read", heap_locked(table.lines.read))
    out("mp.level", heap_locked(table.lines.level, 0))
    out("mp.scan_into", heap_locked(board.pegs.scan_into, arr))
    from array import array
    ints = array("i", [0, 0])
    out("mp.scan_into_array", heap_locked(board.pegs.scan_into, ints))
    out("mp.scan_result", [ints[0], ints[1]])

    class CountingI2C:
        def __init__(self):
            self.cmd = 0
            self.data = 0

        def writeto(self, addr, buf):
            self.cmd += len(buf)

        def writevto(self, addr, vec):
            self.data += len(vec[1])

    bus = CountingI2C()
    oled = SSD1306(bus)
    bus.data = 0
    out("mp.ssd1306_show", heap_locked(oled.show))
    out("mp.ssd1306_bytes", bus.data)
    bus.data = 0
    out("mp.ssd1306_show_page", heap_locked(oled.show_page, 7))  # a redraw, a page a pass
    out("mp.ssd1306_page_bytes", bus.data)
    # pixel text from MicroPython's own font
    out("mp.font_pixel", d.pixel(1, 1))

print("ok")
