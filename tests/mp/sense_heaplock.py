# Prove the sensing hot paths allocate nothing: warm every component up, then run thousands of
# scans (buttons with bounce, short and long presses, a stuck and a chattering line; pin falls,
# returns, wobbles, interrupt-only falls, a removed pin, windows closed by settle and by
# close(); peg changes and glitches; event push/pop and ring overflow) between
# micropython.heap_lock() and heap_unlock(). Any allocation there raises MemoryError.
# A second run with the heap unlocked and the GC off checks that no garbage is left either.
# Prints KEY value lines that tests/test_sense.py asserts on, so it cannot pass vacuously.

from array import array

from heaplock import T0, drive, garbage, lock_is_real, locked

from scoreboard.sense import (
    FAULT,
    PEG,
    SHOT,
    Buttons,
    EventRing,
    LineHealth,
    PegGrid,
    TiltLatch,
)

WARM = 3000
STEPS = 12000  # 5 ms apart: 60 s of play

ring = EventRing(64)
small = EventRing(2)  # kept nearly full: overflow must be counted, not allocate
buttons = Buttons(4, 20, 1000, ring, min_press_ms=20)
health = LineHealth(4, 3000, 4, 200, ring, 20, debounce_ms=20)
tilt = TiltLatch(5, 50, 1000, ring)
pegs = PegGrid(50, ring)

buf = array("i", [0, 0, 0, 0])
counts = array("i", [0] * 16)  # [kind], SHOT by id at 8+id, FAULT by value at 10+value
field = array("i", [0, 0])  # max, min of every field of every event
at = 0


def step(k):
    global at
    at = k
    t = (T0 + k * 5) & 0x3FFFFFFF

    # Buttons: 0 = short press with a bounce, 1 = long press, 2 = stuck 5 s of every 10 s,
    # 3 = chatter for 300 ms: 5 ms spikes every 25 ms (each too short to be a press).
    ph = k % 400
    raw = 0
    if 10 <= ph < 40 and ph != 12:
        raw |= 1
    if 100 <= ph < 350:
        raw |= 2
    if k % 2000 < 1000:
        raw |= 4
    if 200 <= ph < 260 and ph % 5 == 0:
        raw |= 8
    health.tick(t, raw)
    buttons.mute = health.faulty
    buttons.tick(t, raw)

    # Pins: '1' falls 150 ms and stands again; 'C' wobbles 10 ms; '3' falls 100 ms between
    # scans (interrupt only); '2' lies 2 s and the shot is closed by a button while 'C' is
    # 10 ms into a fall (the close waits for it, FP-18); '4' moves while removed.
    ph = k % 1000
    raw = 0
    if 10 <= ph < 40:
        raw |= 1
    if 12 <= ph < 14:
        raw |= 16
    if ph == 50:
        tilt.note_edge(2, t - 2, 1)
    if ph == 70:
        tilt.note_edge(2, t - 2, 0)
    if 500 <= ph < 900:
        raw |= 2
    if 558 <= ph < 600:
        raw |= 16
    if ph == 300:
        tilt.set_removed(8)
    if 320 <= ph < 380:
        raw |= 8
    if ph == 400:
        tilt.set_removed(0)
    if not 50 <= ph < 70:  # the loop is busy for 100 ms: only the interrupt sees pin '3'
        tilt.tick(t, raw)
    if ph == 560:
        tilt.close(t)

    # Pegs: one hole at a time placed for 750 ms, plus a 15 ms glitch on another.
    ph = k % 300
    h = (k // 300) % 27
    s = 0
    if ph < 150:
        s = 1 << h
    if 200 <= ph < 203:
        s |= 1 << ((h + 5) % 27)
    if (k // 300) % 2:
        pegs.tick(t, 0, s)
    else:
        pegs.tick(t, s, 0)

    # The ring: drain into a preallocated buffer; overflow a small one.
    while ring.pop_into(buf):
        kind = buf[0]
        counts[kind] += 1
        if kind == SHOT:
            counts[8 + buf[1]] += 1
        elif kind == FAULT:
            counts[10 + buf[2]] += 1
        for j in range(4):
            if buf[j] > field[0]:
                field[0] = buf[j]
            if buf[j] < field[1]:
                field[1] = buf[j]
    small.push(PEG, 1, 1, t)
    small.push(PEG, 2, 1, t)
    small.pop_into(buf)


drive(step, 0, WARM)
print("WARM events=%d" % ring.pushed)
for j in range(16):
    counts[j] = 0
dropped0 = small.dropped

memerr = 1 if locked(step, WARM, STEPS) is not None else 0
print("LOCKED steps=%d memerr=%d at=%d" % (STEPS, memerr, at))

# The lock is real: the same lock makes an ordinary allocation fail.
print("LOCKCHECK %d" % lock_is_real())

# Every int the components keep must be a small int on the ESP32 too (31-bit: |v| < 2**30);
# the unix port's small ints are wider, so this is checked by value.
big = 0
for obj in (ring, small, buttons, health, tilt, pegs):
    for v in obj.__dict__.values():
        if isinstance(v, int):
            vals = (v,)
        elif isinstance(v, array):
            vals = v
        else:
            continue
        for x in vals:
            if not -(1 << 30) <= x < (1 << 30):
                big += 1
print("BIGINT %d" % big)
names = ("", "press", "long", "line", "pin_down", "shot", "peg", "fault")
for j in range(1, 8):
    print("COUNT %s %d" % (names[j], counts[j]))
print("COUNT shot_settled %d" % counts[8])
print("COUNT shot_closed %d" % counts[9])
print("COUNT fault_healthy %d" % counts[10])
print("COUNT fault_stuck %d" % counts[11])
print("COUNT fault_chatter %d" % counts[12])
print("DROPPED %d" % (small.dropped - dropped0))
print("FIELD max=%d min=%d" % (field[0], field[1]))

# Unlocked, GC off: the heap must end exactly where it started.
print("GARBAGE %d" % garbage(step, WARM + STEPS, 2000))
print("DONE")
