# The board's command handler under fuzzed commands, on MicroPython (heap as on the simulated
# board): the real App, Handler and Link of scoreboard.serve on a simulated board with a virtual
# clock, fed framed commands (valid CRCs, hostile arguments) from a file, test mode on or off per
# command. Between commands the loop runs as the board's does: injected line changes fall due,
# the app scans, the link streams. A crash of the interpreter is a crash; every reply's code is
# counted, and each `internal` reply is printed with the command that caused it.
#
# usage: micropython handler_fuzz.py MPY_DIR BOARD.json FLASH_DIR INPUTS (the firmware as
# portable .mpy, as the simulated board has it)
# INPUTS: one command a line, "t <frame>" (test mode on) or "n <frame>" (off).
# Prints "at N" every 500 inputs (where a crash happened), "internal N <message>" lines, then
# one JSON line {"inputs": N, "codes": {code: count}, "frames": N, "actions": N}.

import sys

sys.path.insert(0, sys.argv[1])

import gc  # noqa: E402
import json  # noqa: E402

from scoreboard.hal.sim import SimBoard, VirtualClock  # noqa: E402
from scoreboard.link import Link  # noqa: E402
from scoreboard.serve import Handler  # noqa: E402

cfg, flash, inputs = sys.argv[2], sys.argv[3], sys.argv[4]
board = SimBoard(cfg, flash, VirtualClock(0))
# As main.py does: the config's code is needed at start-up only (it frees the board's RAM).
sys.modules["scoreboard.boardconfig"].unload()
gc.collect()
handler = None
link = None
codes = {}
counted = [0, 0]  # frames out, input number
last = []  # the `internal` replies of the input being fed


def write(line):
    # What the board writes to its UART: classified as it goes, never kept (a long journal
    # stream is thousands of frames).
    counted[0] += 1
    if " ok {" in line[:22]:
        codes["ok"] = codes.get("ok", 0) + 1
    elif " err {" in line[:22]:
        body = json.loads(line[line.index("{"):line.rindex("}") + 1])
        code = body.get("code")
        codes[code] = codes.get(code, 0) + 1
        if code == "internal":
            last.append(body.get("error"))


def boot():
    global handler, link
    from scoreboard.app import App

    app = App(board)
    handler = Handler(app)
    link = Link(write, handler, True)
    app.emit = link.emit
    app.boot()
    return app


app = boot()
n = 0
with open(inputs, "rb") as f:
    for raw in f:
        n += 1
        if n % 500 == 0:
            print("at", n)
            # The host archives what the board journaled and acknowledges it, as `chalk
            # archive` does, so finished games rotate out (a board's heap holds a row per
            # kept game: docs/journal.md).
            if not link.streaming():
                app.journal.acknowledge(app.journal.stats()["last_seq"])
        link.test_mode = raw[:1] == b"t"
        try:
            link.feed(raw[2:])
        except MemoryError:  # as serve() does: the command is dropped, the host resends it
            gc.collect()
            codes["dropped"] = codes.get("dropped", 0) + 1
        for _step in range(3):  # the main loop between commands: scans, due events, the stream
            board.clock.advance(5)
            now = board.clock.ticks_ms()
            if handler.pending:
                handler.due(now)
            app.tick()
            link.pump(None)
        for e in last:
            print("internal", n, e, raw[2:120])
        del last[:]
        if n % 2000 == 0:
            # A power cut now and then: the journal fuzzed so far must boot again.
            board.clock.advance(1000)
            app.journal.close()
            app = handler = link = None  # the board's RAM holds one app, as after a reset
            gc.collect()
            app = boot()
print(json.dumps({"inputs": n, "codes": codes, "frames": counted[0],
                  "actions": app.journal.stats()["last_seq"]}))
