"""`make bench`: speed and memory figures, printed (never asserted: a busy machine is no bug).

Rules replay: actions per second on CPython and on the MicroPython unix port, and the heap a
500-action match needs on MicroPython (live peak, and the smallest -X heapsize that replays it).
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk.randomgame import random_match  # noqa: E402
from scoreboard import matchlog  # noqa: E402
from tests.mpy import run_mp  # noqa: E402

MATCH = 500
# Low accuracy keeps the game going for 500 actions; undos exercise the refold.
CONFIGS = {"shove-hapenny": ({}, 0.025), "five-pins": ({"target": 400, "sets": 3}, 0.5)}
CONFIGS["seven-pins"] = ({"start": 100000}, 0.5)
CONFIGS["novuss"] = ({}, 0.01)


def cpython(path, reps):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "mp_replay.py"), str(path),
                          str(reps), "time"], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "firmware")})
    return json.loads(out.stdout)


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
    print("rules replay of a %d-action match (read line by line, parse, apply)" % MATCH)
    print("%-14s %16s %16s %14s %14s %12s" % ("game", "CPython act/s", "MicroPy act/s",
                                                "heap base B", "heap peak B", "min heap"))
    with tempfile.TemporaryDirectory() as tmp:
        for game, (cfg, acc) in CONFIGS.items():
            # The first seed whose game lasts the whole 500 actions.
            for seed in range(100):
                head, actions = random_match(game, seed=seed, max_actions=MATCH, config=cfg,
                                             accuracy=acc)
                if len(actions) == MATCH:
                    break
            path = Path(tmp) / (game + ".jsonl")
            with open(path, "w") as f:
                matchlog.write(f, head, actions)
            cp = cpython(path, 20)
            mp = micropython(path, 5, "time")
            heap = micropython(path, 1, "heap")
            print("%-14s %16.0f %16.0f %14d %14d %10dk" % (
                game, cp["actions"] * cp["reps"] / (cp["us"] / 1e6),
                mp["actions"] * mp["reps"] / (mp["us"] / 1e6),
                heap["base"], heap["peak"], smallest_heap(path)))
    print()
    print("heap base: live MicroPython heap after imports; heap peak: the largest live heap")
    print("after any action of the replay; min heap: smallest -X heapsize that replays it.")


if __name__ == "__main__":
    main()
    # The board (sensing tick, actions/s, heap, journal recovery), the main loop's longest
    # pause in sensing, and the host archive.
    from bench import bench_archive, bench_board, bench_gaps, bench_serve

    print()
    bench_board.main()
    print()
    bench_gaps.main()
    print()
    bench_archive.main()
    print()
    bench_serve.main()
