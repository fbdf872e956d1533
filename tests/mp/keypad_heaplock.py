# Prove the scorepad's sensing step allocates nothing: App.scan(t) on the scorepad board (the
# hal's row-by-row matrix scan over the simulated key matrix, sense.Keypad's debounce, one key
# at a time, ghosts, a stuck key) runs between micropython.heap_lock() and heap_unlock() for
# thousands of 5 ms ticks of key activity. Any allocation there raises MemoryError. A second
# run with the heap unlocked and the GC off checks that no garbage is left either.
#
# usage: micropython keypad_heaplock.py MPY_DIR|- BOARD.json FLASH_DIR STEPS
# Prints KEY value lines that tests/test_keypad.py asserts on, so it cannot pass vacuously.

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
clock = board.clock
matrix = board.matrix
ring = app.ring
buf = array("i", [0, 0, 0, 0])
counts = array("i", [0] * 16)  # [kind]; FAULT by value at 9 + value
at = 0


def step(k):
    global at
    at = k
    clock.advance(5)
    # Every 2 s: key (k // 400) % 16 pressed 100 ms with a bounce; a chord of three keys that
    # ghosts a fourth for 200 ms; another key held while a second is tapped; every 100 s one key
    # held 70 s (stuck after 60 s).
    ph = k % 400
    key = (k // 400) % 16
    v = 0
    if 10 <= ph < 30 and ph != 12:
        v |= 1 << key
    if 100 <= ph < 140:
        v |= (1 << 0) | (1 << 1) | (1 << 4)
    if 200 <= ph < 300:
        v |= 1 << 15
        if 220 <= ph < 240:
            v |= 1 << 10
    if k % 20000 >= 6000:
        v = 1 << 7  # held 70 s of every 100 s
    matrix.down = v
    app.scan(clock.ticks_ms())
    while ring.pop_into(buf):
        kind = buf[0]
        counts[kind] += 1
        if kind == sense.FAULT:
            counts[9 + buf[2]] += 1


drive(step, 0, WARM)
for i in range(16):
    counts[i] = 0

locked_or_exit(step, WARM, STEPS, lambda: at)

print("KEY", counts[sense.KEY])
print("FAULT", counts[sense.FAULT])
print("STUCK", counts[9 + sense.STUCK])
print("HEALTHY", counts[9 + sense.HEALTHY])
print("IGNORED", app.keys.ignored)
print("DROPPED", ring.dropped)
print("STEPS", STEPS)

print("GARBAGE", garbage(step, WARM + STEPS, 2000))
