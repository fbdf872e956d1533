# A long game on the board's heap: boot it from the journal, undo, answer `state`, then resync
# the whole journal over the link (every frame encoded, as the board sends it), as the board's
# main loop does it, a step at a time, after the boot main.py does (the config let go, the names
# of the modules loaded later interned).
#
# usage: micropython longgame_check.py BOARD.json FLASH_DIR [UNDOS]
# Prints one JSON line: what booted, the reply to each command, the heap after each stage.
# Runs against whatever firmware is on the path: .mpy files, a ROMFS image or frozen modules.

import gc
import json
import sys


def mem():
    gc.collect()
    return gc.mem_alloc()


def main(cfg, flash, undos):
    from scoreboard.hal.sim import SimBoard, VirtualClock

    board = SimBoard(cfg, flash, VirtualClock())
    sys.modules["scoreboard.boardconfig"].unload()  # as main.py does once the board is built
    from scoreboard.later import intern_later

    intern_later()  # (as main.py does at boot)
    gc.collect()
    # What a board run from ROMFS loads when its link starts and keeps (serve.py: the link's
    # stepwise work, the coder of a noisy line, the heap gauge), loaded now.
    import scoreboard.fec  # noqa: F401
    import scoreboard.gauge  # noqa: F401
    import scoreboard.linkwork  # noqa: F401
    from scoreboard.app import App
    from scoreboard.link import Link
    from scoreboard.serve import Handler

    sent = [0, 0, "", ""]  # characters, lines, the line being written, the last whole line

    def write(s):
        sent[0] += len(s)
        line = sent[2] + s
        nl = line.rfind("\n")
        if nl >= 0:
            sent[1] += s.count("\n")
            sent[3] = line[line.rfind("\n", 0, nl) + 1:nl + 1]
            line = line[nl + 1:]
        sent[2] = line

    app = App(board)
    handler = Handler(app)
    link = Link(write, handler, True, budget=57)  # 115200 baud, a 5 ms scan: as serve() paces
    app.emit = link.emit
    res = app.boot()
    out = {"count": res.count, "errors": len(res.errors), "booted": mem()}
    replies = {}

    def run(cid, cmd, args):
        reply = link.command(cid, cmd, args)
        steps = 0
        while link.busy():
            link.pump()
            app.tick()  # the loop's scans go on between the slices
            board.clock.advance(5)
            steps += 1
        last = link._last
        if reply is None and last is not None and last[0] == cid:
            reply = (last[3], last[4])  # a command done in steps (undo): its reply came later
        if reply is None and cmd != "journal":
            from scoreboard import frames

            f = frames.decode(sent[3])  # a command done in steps (state): its reply, written last
            if f is not None and f[1] in ("ok", "err") and f[2].get("id") == cid:
                reply = (f[1], f[2])
        return reply, steps

    for k in range(undos):
        reply, _ = run(10 + k, "undo", {})
        if reply is None or reply[0] != "ok":
            out["undo_failed"] = reply
            break
    out["undone"] = mem()
    reply, _ = run(2, "state", {})
    replies["state"] = reply[0] if reply else None
    out["state"] = app.game.state()
    out["len"] = len(app.game)
    out["stated"] = mem()
    before = sent[1]
    _, steps = run(3, "journal", {"after": 0})
    out["resync_frames"] = sent[1] - before
    out["resync_steps"] = steps
    from scoreboard import frames

    last = frames.decode(sent[3])
    out["resync_ok"] = last[2] if last is not None and last[1] == "ok" else sent[3][:200]
    out["resynced"] = mem()
    out["replies"] = replies
    out["link"] = link.stats()
    print(json.dumps(out))


# ARGV: given by a runner that exec()s this file after mounting a ROMFS image (sys.argv is
# read-only on MicroPython).
_args = globals().get("ARGV") or sys.argv[1:]
main(_args[0], _args[1], int(_args[2]) if len(_args) > 2 else 3)
