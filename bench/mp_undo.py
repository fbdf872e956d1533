# Cost of an undo early and late in a long game, on MicroPython (or CPython).
# Usage: micropython mp_undo.py LOG EARLY LATE   -- LOG has at least LATE + block actions
# Prints {"early": us, "late": us, "early_max": us, "late_max": us, "block": K}: the mean (and
# the worst) time of Game.prepare({"a": "undo"}) undoing from EARLY + K actions down to EARLY
# (every offset in a checkpoint block), and likewise from LATE + K down to LATE.
import json
import sys

from scoreboard import matchlog
from scoreboard.rules.base import Codes

try:
    from time import ticks_diff, ticks_us
except ImportError:  # CPython
    from time import perf_counter_ns

    def ticks_us():
        return perf_counter_ns() // 1000

    def ticks_diff(a, b):
        return a - b


def undo_costs(game, stop):
    """Undo down to `stop` actions, timing each Game.prepare(undo): (mean us, worst us)."""
    undo = {"a": "undo"}
    total = 0
    worst = 0
    count = 0
    while len(game) > stop:
        t0 = ticks_us()
        pending = game.prepare(undo)
        dt = ticks_diff(ticks_us(), t0)
        game.push(pending)
        total += dt
        worst = dt if dt > worst else worst
        count += 1
    return total / count, worst


def main(path, early, late):
    K = Codes._BLOCK
    with open(path) as f:
        game = matchlog.replay_lines(f)
    if len(game) < late + K:
        raise SystemExit("the log keeps %d actions, %d needed" % (len(game), late + K))
    small = type(game)(game.config)
    for i in range(early + K):
        small.apply(game.decode(game._codes[i]))
    out = {"block": K}
    # every offset in a checkpoint block, from EARLY + K down to EARLY (and LATE likewise)
    out["early"], out["early_max"] = undo_costs(small, early)
    while len(game) > late + K:
        game.push(game.prepare({"a": "undo"}))
    out["late"], out["late_max"] = undo_costs(game, late)
    print(json.dumps(out))


main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
