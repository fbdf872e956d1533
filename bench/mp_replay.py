# Replay timing and heap figures on MicroPython (or CPython, for comparison).
# Usage: micropython mp_replay.py LOG REPS MODE   (MODE: time | heap)
# Prints one JSON object.
import gc
import json
import sys

from scoreboard import matchlog

try:
    from time import ticks_diff, ticks_us
except ImportError:  # CPython: the process's CPU time, so other programs on a busy machine
    # do not count against the replay (MicroPython's figure is wall time)
    from time import process_time_ns

    def ticks_us():
        return process_time_ns() // 1000

    def ticks_diff(a, b):
        return a - b


def replay(path, on_step=None):
    with open(path) as f:
        return matchlog.replay_lines(f, on_step)


def main(path, reps, mode):
    gc.collect()
    if mode == "time":
        count = [0]

        def one(n, rec, state):
            count[0] += 1

        replay(path, one)
        n = count[0]
        t0 = ticks_us()
        for _ in range(reps):
            replay(path)
        us = ticks_diff(ticks_us(), t0)
        print(json.dumps({"actions": n, "reps": reps, "us": us}))
        return
    # heap: the live heap (after a collection) before the replay and at every action of it.
    base = gc.mem_alloc()
    peak = [base]

    def step(n, rec, state):
        gc.collect()
        a = gc.mem_alloc()
        if a > peak[0]:
            peak[0] = a

    replay(path, step)
    print(json.dumps({"base": base, "peak": peak[0],
                      "free_at_peak": gc.mem_free() + gc.mem_alloc() - peak[0]}))


main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
