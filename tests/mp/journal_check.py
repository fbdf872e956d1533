# Self-checking journal tests, for the MicroPython unix port (runs on CPython too).
# Usage: micropython journal_check.py MODE [DIR] [N]
#   roundtrip DIR   two games, reopen, records_after, acknowledge
#   offsets DIR     cut the journal at every byte offset of header, action and end records
#   flips DIR       flip every bit of a record in the middle of a game
#   big DIR N       boot an N-action game within this heap; prints timings and free memory
# (LittleFS power cuts: journal_lfs.py)
# The last line printed is "ok MODE key=value ..."; any failure raises (non-zero exit).

import gc
import os
import sys

from scoreboard.journal import Journal

try:
    from time import ticks_diff, ticks_ms
except ImportError:  # CPython
    from time import monotonic

    def ticks_ms():
        return int(monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b


HEAD = {"chalk": 1, "game": "shove-hapenny", "config": {"sides": 2, "per_side": 1},
        "players": ["Ann", "Bob"], "started": "2025-01-31T20:15:00"}


def turn(i):
    return {"a": "turn", "side": i % 2, "beds": [i % 3, 0, 1, 0, 0, 0, 0, 0, i % 2], "t": 1000 * i}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def wipe(d):
    try:
        names = os.listdir(d)
    except OSError:
        return
    for n in names:
        os.remove(d + "/" + n)
    os.rmdir(d)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def write(p, data):
    with open(p, "wb") as f:
        f.write(data)


def spans(data):
    """(start, end) of each line of data."""
    out = []
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        out.append((i, nl + 1))
        i = nl + 1
    return out


def seqs(recs):
    return [r[0] for r in recs]


def build(d):
    """Game 1 (3 actions, ended) and game 2 (3 actions, in progress); its records."""
    wipe(d)
    j = Journal(d)
    j.boot()
    j.new_game(HEAD)
    for i in range(3):
        j.append(turn(i))
    j.end_game({"winner": 0})
    j.new_game(HEAD)
    for i in range(3, 6):
        j.append(turn(i))
    recs = list(j.records_after(0))
    j.close()
    return recs, read(d + "/g00001.jnl"), read(d + "/g00002.jnl")


def expect_state(recs):
    """(header, actions) of the unfinished game at the end of recs, or (None, None)."""
    header = None
    actions = None
    for _s, k, p in recs:
        if k == "H":
            header, actions = p, []
        elif k == "A":
            actions.append(p)
        else:
            header, actions = None, None
    return header, actions


def cut_case(d, files, expect, what):
    """Boot a journal made of `files`; it must hold exactly `expect`, and keep working."""
    wipe(d)
    os.mkdir(d)
    for name in files:
        write(d + "/" + name, files[name])
    j = Journal(d)
    r = j.boot()
    check(r.errors == [], "%s: errors %r" % (what, r.errors))
    got = list(j.records_after(0))
    check(got == expect, "%s: records %r" % (what, seqs(got)))
    last = expect[-1][0] if expect else 0
    check(r.last_seq == last, "%s: last_seq %d" % (what, r.last_seq))
    header, actions = expect_state(expect)
    check(r.header == header and r.actions == actions, "%s: resumed %r" % (what, r.header))
    for name in os.listdir(d):
        data = read(d + "/" + name)
        check(name.endswith(".jnl") and data[-1:] == b"\n", "%s: %s left torn" % (what, name))
        check(files[name][:len(data)] == data, "%s: %s is not a prefix" % (what, name))
    if header is None:
        no, s = j.new_game(HEAD)
    else:
        s = j.append(turn(99))
    check(s == last + 1, "%s: next seq %d after %d" % (what, s, last))
    s2 = j.append(turn(100))
    j.close()
    j = Journal(d)
    r = j.boot()
    got = list(j.records_after(0))
    check(r.errors == [] and r.last_seq == s2, "%s: reboot %r %d" % (what, r.errors, r.last_seq))
    check(got[:len(expect)] == expect and seqs(got) == list(range(1, s2 + 1)),
          "%s: after append %r" % (what, seqs(got)))
    check(r.actions[-1] == turn(100), "%s: appended action not resumed" % what)
    j.close()


def mode_offsets(d):
    recs, g1, g2 = build(d + "-src")
    wipe(d + "-src")
    n1 = len(spans(g1))
    cases = 0
    # (label, file cut, the other files, records before the cut record)
    plans = []
    sp2 = spans(g2)
    plans.append(("last action", "g00002.jnl", g2, {"g00001.jnl": g1}, sp2[-1], recs[:-1]))
    plans.append(("game 2 header", "g00002.jnl", g2, {"g00001.jnl": g1}, sp2[0], recs[:n1]))
    sp1 = spans(g1)
    plans.append(("end record", "g00001.jnl", g1, {}, sp1[-1], recs[:n1 - 1]))
    plans.append(("game 1 header", "g00001.jnl", g1, {}, sp1[0], []))
    counts = []
    for label, name, data, others, span, before in plans:
        start, end = span
        full = recs[:len(before) + 1]
        for off in range(start, end + 1):
            files = dict(others)
            files[name] = data[:off]
            cut_case(d, files, full if off == end else before, "%s cut at %d" % (label, off))
            cases += 1
        counts.append("%s=%d" % (label.replace(" ", "_"), end - start + 1))
        gc.collect()
    wipe(d)
    print("ok offsets cases=%d %s" % (cases, " ".join(counts)))


def mode_flips(d):
    recs, g1, g2 = build(d + "-src")
    wipe(d + "-src")
    sp = spans(g2)
    start, end = sp[2]  # line 3 of game 2: its second action
    bad_seq = recs[len(spans(g1)) + 2][0]
    top = recs[-1][0]
    flips = 0
    for off in range(start, end):
        for bit in range(8):
            data = bytearray(g2)
            data[off] ^= 1 << bit
            wipe(d)
            os.mkdir(d)
            write(d + "/g00001.jnl", g1)
            write(d + "/g00002.jnl", bytes(data))
            j = Journal(d)
            r = j.boot()
            what = "flip byte %d bit %d" % (off, bit)
            check(len(r.errors) == 1, "%s: errors %r" % (what, r.errors))
            e = r.errors[0]
            check(e["file"] == "g00002.jnl" and e["line"] == 3 and e["seq"] == bad_seq,
                  "%s: reported %r" % (what, e))
            check(r.header is None and r.stopped == [2], "%s: game not stopped" % what)
            got = list(j.records_after(0))
            check(got == recs[:len(recs) - 2], "%s: records %r" % (what, seqs(got)))
            no, s = j.new_game(HEAD)
            check(no == 3 and s > top, "%s: new game %d at seq %d" % (what, no, s))
            j.close()
            flips += 1
        gc.collect()
    wipe(d)
    print("ok flips flips=%d" % flips)


def mode_roundtrip(d):
    wipe(d)
    j = Journal(d)
    r = j.boot()
    check(r.header is None and r.last_seq == 0, "empty journal")
    no, s = j.new_game(HEAD)
    check((no, s) == (1, 1), "first game %r" % ((no, s),))
    for i in range(5):
        check(j.append(turn(i)) == i + 2, "seq of action %d" % i)
    check(j.end_game({"winner": 1}) == 7, "end seq")
    no, s = j.new_game(HEAD)
    check((no, s) == (2, 8), "second game %r" % ((no, s),))
    j.append(turn(5))
    j.close()
    j = Journal(d)
    r = j.boot()
    check(r.game_no == 2 and r.actions == [turn(5)] and r.last_seq == 9, "resume %r" % r.actions)
    check(r.header["game_no"] == 2 and r.header["players"] == HEAD["players"], "header")
    check(j.append(turn(6)) == 10, "seq continues")
    check(seqs(j.records_after(5)) == [6, 7, 8, 9, 10], "records_after")
    check(list(j.actions(1)) == [turn(i) for i in range(5)], "actions of game 1")
    check(j.acknowledge(6) == [], "game 1 not fully acknowledged")
    check(j.acknowledge(9) == [1], "game 1 rotated")
    check(sorted(os.listdir(d)) == ["g00002.jnl"], "files %r" % os.listdir(d))
    st = j.stats()
    check(st["files"] == 1 and st["records"] == 3 and st["last_seq"] == 10, "stats %r" % st)
    j.end_game()
    check(j.acknowledge(11) == [], "the newest file stays: it carries the seq")
    j.close()
    j = Journal(d)
    r = j.boot()
    check(r.header is None and r.last_seq == 11, "after ack %d" % r.last_seq)
    check(j.new_game(HEAD) == (3, 12), "numbers continue")
    j.acknowledge(11)
    check(sorted(os.listdir(d)) == ["g00003.jnl"], "anchor rotated %r" % os.listdir(d))
    j.close()
    wipe(d)
    print("ok roundtrip")


def mode_big(d, n):
    wipe(d)
    j = Journal(d)
    j.boot()
    j.new_game(HEAD)
    t0 = ticks_ms()
    for i in range(n):
        j.append(turn(i))
    t_write = ticks_diff(ticks_ms(), t0)
    size = j.stats()["bytes"]
    j.close()
    # Fold as the rules would: keep a small summary per action, never the dicts.
    fold = [0, 0]
    low = [1 << 30]

    def on_action(a):
        fold[0] += 1
        if "beds" in a:
            fold[1] += a["beds"][0] + a["t"]
        if fold[0] % 100 == 0 and hasattr(gc, "mem_free"):
            gc.collect()  # live memory only: what boot holds while streaming
            free = gc.mem_free()
            if free < low[0]:
                low[0] = free
    gc.collect()
    free0 = gc.mem_free() if hasattr(gc, "mem_free") else 0
    j = Journal(d)
    t0 = ticks_ms()
    r = j.boot(on_action)
    t_boot = ticks_diff(ticks_ms(), t0)
    used = free0 - low[0] if free0 else 0
    want = 0
    for i in range(n):
        want += turn(i)["beds"][0] + turn(i)["t"]
    check(r.count == n and fold == [n, want] and r.errors == [], "fold %r" % fold)
    check(r.last_seq == n + 1 and j.append(turn(n)) == n + 2, "seq after boot")
    # the host's resync streams too
    low[0] = 1 << 30
    fold[0] = 0
    t0 = ticks_ms()
    for rec in j.records_after(0):
        on_action(rec[2])
    t_resync = ticks_diff(ticks_ms(), t0)
    check(fold[0] == n + 2, "records_after gave %d" % fold[0])
    j.close()
    wipe(d)
    print("ok big actions=%d bytes=%d write_ms=%d boot_ms=%d free=%d boot_used=%d"
          " resync_ms=%d resync_used=%d"
          % (n, size, t_write, t_boot, free0, used, t_resync, free0 - low[0] if free0 else 0))


def main(argv):
    mode = argv[1]
    if mode == "offsets":
        mode_offsets(argv[2])
    elif mode == "flips":
        mode_flips(argv[2])
    elif mode == "roundtrip":
        mode_roundtrip(argv[2])
    elif mode == "big":
        mode_big(argv[2], int(argv[3]))
    else:
        raise ValueError("unknown mode " + mode)


if __name__ == "__main__":
    main(sys.argv)
