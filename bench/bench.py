"""`make bench`: speed and memory figures, printed (never asserted: a busy machine is no bug).

Rules replay: actions per second on CPython and on the MicroPython unix port, of a 500- and a
10,000-action match, and the heap a 500-action match needs on MicroPython (live peak, and the
smallest -X heapsize that replays it); the cost of an undo late in a long game against early.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk import games  # noqa: E402
from chalk.randomgame import random_match  # noqa: E402
from scoreboard import matchlog  # noqa: E402
from tests.mpy import run_mp  # noqa: E402

MATCH = 500
LONG = 10000
# Low accuracy keeps the game going for 500 actions; undos exercise the refold. Each game's
# (config, accuracy) for a 500- and a 10,000-action game is its host module's (chalk/games/).
CONFIGS = {g.id: g.bench for g in games.every() if g.random_config is not None}
LONG_CONFIGS = {g.id: g.long_bench for g in games.every() if g.random_config is not None}
# (a game whose random player cannot last 10,000 actions has its long rows left out, said so)
LONG_HEAP = "512k"  # a 10,000-action game on this 64-bit port
UNDO_EARLY, UNDO_LATE = 100, 10000
# `bench.py --smoke` (part of `make test`): every section at small sizes, no goal judged, so a
# bench that breaks fails CI instead of breaking unseen.
SMOKE = "--smoke" in sys.argv
if SMOKE:
    MATCH, LONG, UNDO_EARLY, UNDO_LATE = 60, 300, 20, 200


def cpython(path, reps, script="mp_replay.py", args=None):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / script), str(path)]
                         + [str(a) for a in (args or [reps, "time"])],
                         capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "firmware")})
    return json.loads(out.stdout)


def best_rate(run, tries=3):
    """Actions a second, the best of `tries` runs (a busy machine only ever slows a run); None
    if it fails (MicroPython out of heap)."""
    best = None
    for _ in range(tries):
        r = run()
        if r is None:
            return None
        rate = r["actions"] * r["reps"] / (r["us"] / 1e6)
        best = rate if best is None or rate > best else best
    return best


def game_of(game, n, configs, seeds=100, shorter=False):
    """A random game lasting n actions (the first seed that does); else the longest one found
    with `shorter`, or None."""
    cfg, acc = configs[game]
    best = None
    for seed in range(seeds):
        head, actions = random_match(game, seed=seed, max_actions=n, config=cfg, accuracy=acc)
        if len(actions) == n:
            return head, actions
        if best is None or len(actions) > len(best[1]):
            best = (head, actions)
    return best if shorter else None


def micropython(path, reps, mode, heap="96k"):
    out = run_mp(ROOT / "bench" / "mp_replay.py", args=[path, reps, mode], heap=heap,
                 check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def smallest_heap(path):
    """Bisect the smallest MicroPython heap (KiB) that replays the match."""
    lo, hi = 4, 96
    while lo < hi:
        mid = (lo + hi) // 2
        if micropython(path, 1, "time", heap="%dk" % mid) is not None:
            hi = mid
        else:
            lo = mid + 1
    return lo


def main():
    print("Chalk benchmarks (2-core machine; figures vary with load)")
    print()
    print("rules replay (read line by line, parse, apply; the best of 3 runs)")
    print("%-14s %8s %14s %8s %14s" % ("game", "actions", "CPython act/s", "goal",
                                       "MicroPy act/s"))
    heaps = []
    with tempfile.TemporaryDirectory() as tmp:
        for game in CONFIGS:
            for n, configs in ((MATCH, CONFIGS), (LONG, LONG_CONFIGS)):
                found = game_of(game, n, configs, 100 if n == MATCH else 10, True)
                if found is None or (n == LONG and len(found[1]) < n // 2):
                    print("%-14s %8d   (no random game lasts that long)" % (game, n))
                    continue
                head, actions = found
                path = Path(tmp) / ("%s-%d.jsonl" % (game, n))
                with open(path, "w") as f:
                    matchlog.write(f, head, actions)
                reps = 20 if n == MATCH else 2
                heap = "96k" if n == MATCH else LONG_HEAP
                cp = best_rate(lambda p=path, r=reps: cpython(p, r))
                mp_reps = max(1, reps // 4)
                mp = best_rate(lambda p=path, r=mp_reps, h=heap: micropython(p, r, "time", heap=h))
                note = ""
                if mp is None:  # out of heap at 96k: the game's own tables
                    mp = best_rate(lambda p=path, r=mp_reps: micropython(p, r, "time",
                                                                        heap=LONG_HEAP))
                    note = " (-X heapsize=%s: not in 96k)" % LONG_HEAP
                print("%-14s %8d %14.0f %8s %14s%s" % (game, len(actions), cp, ">= 50000",
                                                      "%.0f" % mp if mp else "failed", note))
                if n == MATCH and not note:
                    heaps.append((game, micropython(path, 1, "heap"), smallest_heap(path)))
        print()
        print("heap of a %d-action replay on MicroPython" % MATCH)
        print("%-14s %14s %14s %12s" % ("game", "heap base B", "heap peak B", "min heap"))
        for game, heap, low in heaps:
            print("%-14s %14d %14d %10dk" % (game, heap["base"], heap["peak"], low))
        print("heap base: live MicroPython heap after imports; heap peak: the largest live heap")
        print("after any action of the replay; min heap: smallest -X heapsize that replays it.")
        print()
        print("undo cost, Game.prepare({\"a\":\"undo\"}) at action %d vs at %d (mean over every "
              "position in a checkpoint block)" % (UNDO_LATE, UNDO_EARLY))
        print("%-14s %-11s %10s %10s %10s %12s %8s" % ("game", "runtime", "early us", "late us",
                                                      "late max", "late/early", "goal"))
        for game in CONFIGS:
            found = game_of(game, UNDO_LATE + 600, LONG_CONFIGS, 10, shorter=True)
            if found is not None and len(found[1]) < UNDO_LATE + 130:
                found = None  # too short to undo late in a checkpoint block
            if found is None:
                print("%-14s (no random game lasts %d actions)" % (game, UNDO_LATE + 600))
                continue
            head, actions = found
            path = Path(tmp) / ("%s-undo.jsonl" % game)
            with open(path, "w") as f:
                matchlog.write(f, head, actions)
            args = [UNDO_EARLY, UNDO_LATE]
            mp = run_mp(ROOT / "bench" / "mp_undo.py", args=[path] + args, heap=LONG_HEAP,
                        check=False)
            for name, r in (("CPython", cpython(path, 0, "mp_undo.py", args)),
                            ("MicroPython", json.loads(mp.stdout) if mp.returncode == 0
                             else None)):
                if r is None:
                    print("%-14s %-11s (out of heap at -X heapsize=%s: the game's own tables)"
                          % (game, name, LONG_HEAP))
                    continue
                print("%-14s %-11s %10.1f %10.1f %10d %12.2f %8s" % (
                    game, name, r["early"], r["late"], r["late_max"], r["late"] / r["early"],
                    "<= 2"))
        print("(each undo refolds from the checkpoint kept every %d actions: at most %d steps, "
              "however long the game)" % (128, 127))


if __name__ == "__main__":
    main()
    # The board (sensing tick, actions/s, heap, journal recovery), the main loop's longest
    # pause in sensing, and the host archive.
    from bench import bench_archive, bench_board, bench_gaps, bench_serve

    if SMOKE:
        bench_board.smoke()
        bench_gaps.smoke()
        bench_archive.smoke()
        bench_serve.smoke()
    print()
    bench_board.main()
    print()
    bench_gaps.main()
    print()
    bench_archive.main()
    print()
    bench_serve.main()
    print()
    # (each at its small sizes in the smoke run, as the sections above)
    __import__("bench.bench_league").bench_league.main(SMOKE)  # a league over MQTT
    __import__("bench.bench_sign").bench_sign.main(SMOKE)  # the board's own signatures
    __import__("bench.bench_esp32", None, None, ["main"]).main(SMOKE)  # the ESP32's budget
