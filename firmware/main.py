# Boot: load the board config, build the hardware layer, resume the game, run the loop.
#
# On an ESP32 the board config is /board.json and the hardware layer is hal.esp32. On the
# MicroPython unix port the same app runs as a simulated board:
#     micropython main.py BOARD.json FLASH_DIR [--trace FILE] [--virtual] [--test-mode]
#                         [--baud N] [--stretch F]
# --trace plays a sensor trace onto the virtual lines; --virtual runs on a virtual clock as fast
# as it can (for tests and demos) and prints a JSON summary instead of serving the link; --baud
# paces the link's writes as a UART of that speed would carry them (default: the pty's pace);
# --stretch makes every step of the loop F times as long, as slow as an ESP32 (docs/simulator.md).

import gc
import sys


def sim_main(argv):
    from scoreboard.hal.sim import SimBoard, VirtualClock
    from scoreboard.hal.simtrace import TracePlayer

    opts = {"--trace": None, "--baud": None, "--stretch": None}
    flags = []
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in opts:
            opts[a] = argv[i + 1]
            i += 2
            continue
        (flags if a.startswith("--") else pos).append(a)
        i += 1
    if len(pos) != 2:
        print("usage: micropython main.py BOARD.json FLASH_DIR [--trace FILE] [--virtual] "
              "[--test-mode] [--baud N] [--stretch F]")
        sys.exit(2)
    virtual = "--virtual" in flags
    board = SimBoard(pos[0], pos[1], VirtualClock() if virtual else None)
    if opts["--baud"]:
        board.baud = int(opts["--baud"])
    unload_config()
    intern_later()
    gc.collect()  # (here: no frame holds a module let go)
    if virtual:
        return run_virtual(board, opts["--trace"], "--test-mode" in flags)
    from scoreboard.serve import serve

    board.display.mirror = "screen.txt"  # the screen as text, for `chalk sim --show`
    trace = None
    if opts["--trace"]:
        trace = TracePlayer(board, open(opts["--trace"], "rb"))  # bytes: a bad line is named
    serve(board, trace=trace, test_mode=True if "--test-mode" in flags else None,
          stretch=int(opts["--stretch"] or 1))


def run_virtual(board, trace_path, test_mode):
    """Play a trace on a virtual clock, ticking every scan period; print a summary."""
    import json

    from scoreboard.app import App
    from scoreboard.hal.simtrace import TracePlayer

    app = App(board, test_mode=test_mode)
    app.boot()
    clock = board.clock
    step = board.cfg["timings"]["scan_ms"]
    if trace_path:
        with open(trace_path, "rb") as f:
            player = TracePlayer(board, f)
            while not player.done:
                clock.advance(step)
                player.poll()
                app.tick()
    for _ in range(board.cfg["timings"]["settle_ms"] // step + 1):
        clock.advance(step)
        app.tick()
    app.refresh()
    gc.collect()
    # One JSON object per line, streamed: the actions of a long game need not fit in RAM.
    for action in app.journal.actions():
        print(json.dumps({"action": action}))
    print(json.dumps({"state": app.game.state(), "game": app.game_id,
                      "config": app.game.config, "screen": app.display.rows,
                      "warnings": app.warnings(), "last_seq": app.journal.last_seq(),
                      "mem_free": gc.mem_free(), "mem_alloc": gc.mem_alloc()}))


def esp32_main():
    board = esp32_board()
    intern_later()
    gc.collect()  # the config's code freed (no frame here holds it)
    from scoreboard.serve import serve

    serve(board)


def esp32_board():
    from scoreboard import boardconfig
    from scoreboard.hal.esp32 import make_board

    board = make_board(boardconfig.load("/board.json"))
    boardconfig.unload()
    return board


def intern_later():
    """The names of the modules a board loads only in play, interned now (scoreboard/later.py)."""
    from scoreboard.later import intern_later

    intern_later()


def unload_config():
    """Let the board config package go (and every game's board.py): only start-up needs it, and
    its code frees RAM. (Collected here, after the call: no frame of this one holds the
    package, so the collection frees it.)"""
    sys.modules["scoreboard.boardconfig"].unload()
    gc.collect()


if sys.platform in ("linux", "darwin"):
    sim_main(sys.argv[1:])
else:
    esp32_main()
