# The longest gap between two scans of the board's main loop (serve()), on MicroPython.
#
# usage: micropython mp_gaps.py MPY_DIR MODE BOARD.json FLASH_DIR PACED
#        (MODE: resync | undos | redraw; MPY_DIR: the firmware as portable .mpy, as the sim has it)
#
# The loop runs for real (link, app, journal on files, rules) on a model clock: it moves with the
# CPU time this machine really takes, plus the time the board's I/O would take: every character
# the link writes costs what a 115200-baud UART (8N1) takes to send it, every I2C byte to the
# OLED what a 400 kHz bus takes (9 bits). Sleeping moves the clock at once. PACED 0 runs the link
# and the display as they were before the loop paced them (everything written within the
# command, the whole screen in one show()), for comparison. Prints one JSON object.

import sys

sys.path.insert(0, sys.argv[1])

import json  # noqa: E402

import mp_loop  # noqa: E402  (beside this script: the loop benches' shared start-up)

I2C_HZ = 400000


class ModelI2C:
    """An SSD1306's bus: each byte costs 9 bits at I2C_HZ (plus address and start/stop)."""

    def __init__(self, clock):
        self.clock = clock

    def writeto(self, addr, buf):
        self.clock.cost_us((len(buf) + 1) * 9 * 1000000 // I2C_HZ + 10)

    def writevto(self, addr, vector):
        n = 1
        for b in vector:
            n += len(b)
        self.clock.cost_us(n * 9 * 1000000 // I2C_HZ + 10)


def main(mode, cfg, flash, paced):
    from scoreboard import serve as serve_mod

    board, clock = mp_loop.board(cfg, flash)
    if mode == "redraw":
        from scoreboard.hal.ssd1306 import SSD1306

        board.display = SSD1306(ModelI2C(clock))
    if mode == "resync":
        commands = [("journal", {"after": 0})]
    elif mode == "undos":
        commands = [("act", {"action": {"a": "undo"}})] * 20
    else:  # redraw: service view on and off, each a whole new screen
        commands = [("service", {"on": i % 2 == 0}) for i in range(20)]

    from array import array

    hist = array("i", [0] * 101)  # gaps by whole ms (the last bucket: 100 ms or more)
    if not paced:
        serve_mod._budget = lambda board, step: None  # everything written within the command
        from scoreboard.display import Display

        orig_init = Display.__init__

        def init(self, hal):
            orig_init(self, hal)
            self._paged = False

        Display.__init__ = init
    # The loop runs 100 ms first: the gap before the first command counts.
    host = mp_loop.Host(clock, commands, 100000)
    st = mp_loop.run(board, host, hist)
    start, end = host.window
    # The 99th percentile gap (whole ms): what the loop does, with rare outliers (this
    # machine's other work landing in a gap) left out.
    k = 0
    p99 = 0
    for ms in range(101):
        k += hist[ms]
        if k * 100 >= st["scans"] * 99:
            p99 = ms + 1
            break
    print(json.dumps({"gap_us": st["gap_us"], "scans": st["scans"], "p99_ms": p99,
                      "span_us": end - start, "chars": host.sent,
                      "scan_ms": board.cfg["timings"]["scan_ms"]}))

main(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1")
