# A board's names after boot, after a game played and after the host's commands: plays
# sensor-trace line changes on a simulated board (virtual clock) through its app and link (its
# frames written by Link.pump, as a live board's: nothing of the link's work loaded before it is
# needed), booted as main.py boots it (scoreboard/later.py: the modules loaded in play imported
# and let go), then sends
# it the link's commands;
# prints the qstr pool (micropython.qstr_info) at BOOTED (with the journal's last seq), PLAYED
# and ASKED (with the records the new game's play journaled). Run again on the same flash, it
# boots into what the last run left. (tests/test_qstr_pool.py)
# usage: play_names.py BOARD.json FLASH_DIR CHANGES.jsonl
import gc
import json
import sys

import micropython

from scoreboard.hal.sim import SimBoard, VirtualClock

cfg, flash, changes = sys.argv[1:4]
board = SimBoard(cfg, flash, VirtualClock())
board.display.mirror = "screen.txt"  # as main.py's live board: the screen as text at each show
sys.modules["scoreboard.boardconfig"].unload()
from scoreboard.later import intern_later  # noqa: E402

intern_later()
gc.collect()
from scoreboard.app import App  # noqa: E402
from scoreboard.link import Link  # noqa: E402
from scoreboard.serve import Handler  # noqa: E402

sent = []
app = App(board, test_mode=True)
handler = Handler(app)
link = Link(sent.append, handler, True)
app.emit = link.emit
app.boot()
clock = board.clock
step = board.cfg["timings"]["scan_ms"]
f = open(changes)  # read a change at a time: a long trace does not fit the heap at once
first = json.loads(f.readline())
app.tick()
link.pump()
print("BOOTED", app.journal.stats()["last_seq"])
micropython.qstr_info()
from scoreboard import frames  # noqa: E402


def spin(k):
    for _ in range(k):
        link.prepare()
        link.pump()
        handler.due(clock.ticks_ms())
        app.tick()
        link.pump()
        clock.advance(step)


# A new game (the one at boot closed, as the host starts a match), then the game played.
sent.clear()
link.feed(frames.encode(5000, "new", {"game": app.game_id, "config": app.game.config,
                                      "players": ["Ann", "Bob"]}).encode())
spin(100)
print("REPLY", "new", " ".join([line.split(" ")[2] for line in sent]))
started = app.journal.stats()["last_seq"]
t0 = clock.ticks_ms()
nxt = first
while nxt is not None:
    now = clock.ticks_diff(clock.ticks_ms(), t0)
    while nxt is not None and nxt["t"] <= now:
        board.set_line(nxt["line"], nxt["v"])
        line = f.readline()
        nxt = json.loads(line) if line.strip() else None
    app.tick()
    link.pump()
    sent.clear()
    clock.advance(step)
for _ in range(100):
    app.tick()
    link.pump()
    clock.advance(step)
print("PLAYED", app.journal.stats()["last_seq"] - started)
micropython.qstr_info()
n = 6000
for name, args in (("hello", {}), ("state", {}), ("journal", {"after": 0}),
                   ("journal", {"after": 3, "want": "5"}), ("ack", {"seq": 2}),
                   ("clock", {"ms": 1767225600000}), ("service", {"on": True}),
                   ("service", {"on": False}), ("record", {"on": True}), ("record", {"on": False}),
                   ("sign", {}), ("parity", {"nsym": 16}), ("state", {}), ("parity", {"nsym": 0}),
                   ("inject", {"events": [{"t": 0, "line": first["line"], "v": 1},
                                          {"t": 50, "line": first["line"], "v": 0}]}),
                   ("state", {})):
    n += 1
    sent.clear()
    link.feed(frames.encode(n, name, args).encode())
    spin(200)
    for line in sent:
        if "short of memory" in line:
            print("MEMORY", name)  # refused for want of a block: what this check is about
    parts = [line.split(" ") for line in sent]
    # (A coded frame, `z`, after the parity asked for: the type of the frame inside it.)
    print("REPLY", name, " ".join([p[6] if p[2] == "z" else p[2] for p in parts]))
print("ASKED", app.journal.stats()["last_seq"] - started)
micropython.qstr_info()
