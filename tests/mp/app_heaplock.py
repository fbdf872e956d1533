# Prove the app's whole sensing step allocates nothing: App.scan(t) (hal lines read, line health,
# buttons, the tilt latch, the pocket beams and colour sensors, the 74HC165 peg scan and the peg
# grid) and the tilt edge callback
# (app._edge, called by the simulated hal on every tilt-line change as the board's pin
# interrupt would) run between micropython.heap_lock() and heap_unlock() for thousands of
# 5 ms ticks of line activity. Any allocation there raises MemoryError.
# A second run with the heap unlocked and the GC off checks that no garbage is left either.
#
# usage: micropython app_heaplock.py MPY_DIR|- BOARD.json FLASH_DIR STEPS [record]
# With `record`, the host's record mode is on: every line change is also noted into the
# recorder's rings (scan and edge callback) and drained here, locked too.
# Prints KEY value lines that tests/test_sim_heaplock.py asserts on, so it cannot pass vacuously.

import sys
from array import array

from heaplock import T0, drive, garbage, locked_or_exit

if sys.argv[1] != "-":
    sys.path.insert(0, sys.argv[1])  # the firmware as portable .mpy, as the simulated board has it

from scoreboard import sense
from scoreboard.app import App
from scoreboard.hal.sim import SimBoard, VirtualClock

STEPS = int(sys.argv[4])
WARM = 2000

board = SimBoard(sys.argv[2], sys.argv[3], VirtualClock(T0))
app = App(board)
app.boot()
RECORD = len(sys.argv) > 5 and sys.argv[5] == "record"
if RECORD:
    from scoreboard.record import Recorder

    app.recorder = Recorder(app)
    recbuf = array("i", [0, 0, 0])
    recorded = array("i", [0])
clock = board.clock
lines = board.lines
ring = app.ring
nbtn = app.nbtn
npins = sum(1 for n in lines.names if n.startswith("pin."))
npk = sum(1 for n in lines.names if n.startswith("pocket."))
analog = board.analog.values if board.analog is not None else None
shove = board.pegs is not None
peg_state = board.peg_state

buf = array("i", [0, 0, 0, 0])
counts = array("i", [0] * 32)  # [kind]; FAULT by value at 16 + value; edge-only PIN_DOWN at 20;
# POCKET by what passed at 24 + value
at = 0


def step(k):
    global at
    at = k
    clock.advance(5)

    # Buttons: 0 = short press with a bounce, 1 = long press, 2 = stuck 70 s of every 100 s,
    # 3 = chattering for 500 ms of every 10 s (an edge every 10 ms: ~25 the debouncer takes).
    ph = k % 400
    lines.set(0, 1 if 10 <= ph < 40 and ph != 12 else 0)
    lines.set(1, 1 if 100 <= ph < 350 else 0)
    lines.set(2, 1 if k % 20000 < 14000 else 0)
    ph = k % 2000
    lines.set(3, 1 if 200 <= ph < 300 and ph % 2 else 0)

    busy = False
    if npins:
        # Pins (each change calls app._edge through the hal's edge callback): '1' falls 100 ms
        # and stands; 'C' wobbles 10 ms; '2' lies 2 s; '3' falls 50 ms while the loop is busy
        # (no scans for 100 ms: only the edge callback can see that fall, FP-19); then 5.5 s
        # of calm, so the shot window settles.
        ph = k % 2000
        lines.set(nbtn + 0, 1 if 10 <= ph < 30 else 0)
        lines.set(nbtn + 4, 1 if 40 <= ph < 42 else 0)
        lines.set(nbtn + 1, 1 if 500 <= ph < 900 else 0)
        busy = 100 <= ph < 120
        lines.set(nbtn + 2, 1 if 105 <= ph < 115 else 0, clock.ticks_ms() - 1)  # its own ms
    if npk:
        # Pocket beams (seven-pins, novuss): pocket 0 passes something for 30 ms every second,
        # with the colour sensor reading a black, a red, then bare wood (the striker); the last
        # pocket flickers for 3 ms (shorter than min_ms: ignored); a long passage of 100 ms
        # (the striker by its size) every 4 s, never while the loop is busy: beams are scanned,
        # not interrupt-driven, so a passage shorter than a stall of the loop would be missed.
        ph = k % 200
        if analog is not None:
            analog[0] = (600, 2000, 3600)[(k // 200) % 3] if 5 <= ph < 11 else 100
        lines.set(nbtn + npins, 1 if 5 <= ph < 11 or 300 <= k % 800 < 320 else 0)
        lines.set(nbtn + npins + npk - 1, 1 if ph == 50 else 0)
    if shove:
        # Pegs: one hole at a time in for 750 ms, alternating sides, plus a 15 ms glitch.
        ph = k % 300
        h = (k // 300) % 27
        s = 0
        if ph < 150:
            s = 1 << h
        if 200 <= ph < 203:
            s |= 1 << ((h + 5) % 27)
        side = (k // 300) % 2
        peg_state[side] = s
        peg_state[1 - side] = 0

    if not busy:
        app.scan(clock.ticks_ms())
    if RECORD:
        rec = app.recorder
        while rec.scan_ring.pop_into(recbuf) or rec.edge_ring.pop_into(recbuf):
            recorded[0] += 1
    while ring.pop_into(buf):
        kind = buf[0]
        counts[kind] += 1
        if kind == sense.FAULT:
            counts[16 + buf[2]] += 1
        elif kind == sense.PIN_DOWN and buf[1] == 2:
            counts[20] += 1
        elif kind == sense.POCKET:
            counts[24 + buf[2]] += 1


drive(step, 0, WARM)  # everything lazily set up is set up now
for i in range(32):
    counts[i] = 0

locked_or_exit(step, WARM, STEPS, lambda: at)

for name, i in (("PRESS", sense.PRESS), ("LONG", sense.LONG), ("LINE", sense.LINE),
                ("PIN_DOWN", sense.PIN_DOWN), ("SHOT", sense.SHOT), ("PEG", sense.PEG),
                ("FAULT", sense.FAULT), ("POCKET", sense.POCKET)):
    print(name, counts[i])
print("STUCK", counts[16 + sense.STUCK])
print("CHATTER", counts[16 + sense.CHATTER])
print("HEALTHY", counts[16 + sense.HEALTHY])
print("EDGE_ONLY_PIN_DOWN", counts[20])
for i, what in enumerate(("RED", "BLACK", "STRIKER", "BALL")):
    print("POCKET_" + what, counts[24 + i])
print("DROPPED", ring.dropped)
if RECORD:
    print("RECORDED", recorded[0])
    print("RECORD_DROPPED", app.recorder.scan_ring.dropped + app.recorder.edge_ring.dropped)
print("STEPS", STEPS)

# The same work with the heap unlocked and the GC off must leave nothing behind.
print("GARBAGE", garbage(step, WARM + STEPS, 2000))
