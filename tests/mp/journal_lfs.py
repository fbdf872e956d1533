# The journal on LittleFS (os.VfsLfs2 over a RAM flash), with the power cut at every block write
# (program or erase) of two games, and of a torn-tail repair (the copy-and-rename): after each
# cut the flash is mounted as the cut left it and booted, and must hold every record a write
# returned for, and nothing broken. A cut program leaves half its bytes.
# Usage: micropython -X heapsize=512k journal_lfs.py (the RAM flash lives on the heap)
# Prints "ok lfs cuts=N scenario_ops=N repair_ops=N" last; any failure raises.

import gc
import os

from journal_check import HEAD, check, read, seqs, turn

from scoreboard.journal import Journal


class PowerCut(Exception):
    pass


class Flash:
    """A RAM NOR flash for VfsLfs2 that loses power after a set number of program/erase ops."""

    def __init__(self, blocks=48, size=512, data=None):
        self.n = blocks
        self.bs = size
        self.data = data if data is not None else bytearray(b"\xff" * (size * blocks))
        self.ops = 0
        self.cut_at = -1  # op number at which power goes; -1: never
        self.dead = False

    def _op(self):
        """False once the power is gone (later writes, e.g. from finalisers, change nothing)."""
        if self.dead:
            return False
        self.ops += 1
        if self.ops == self.cut_at:
            self.dead = True
            raise PowerCut()
        return True

    def readblocks(self, b, buf, off=0):
        a = b * self.bs + off
        try:
            buf[:] = self.data[a:a + len(buf)]
        except MemoryError:  # called from a finaliser, heap locked: copy without allocating
            for i in range(len(buf)):
                buf[i] = self.data[a + i]

    def writeblocks(self, b, buf, off=0):
        a = b * self.bs + off
        try:
            if not self._op():
                return
        except PowerCut:
            # cut mid-program: the first half of the bytes made it
            half = len(buf) // 2
            self.data[a:a + half] = buf[:half]
            raise
        self.data[a:a + len(buf)] = buf

    def ioctl(self, op, arg):
        if op == 4:
            return self.n
        if op == 5:
            return self.bs
        if op == 6:
            if self._op():
                a = arg * self.bs
                self.data[a:a + self.bs] = b"\xff" * self.bs
            return 0
        return None


MNT = "/chalk_lfs"
JD = MNT + "/journal"


def mount(flash):
    os.mount(os.VfsLfs2(flash), MNT)


def umount():
    try:
        os.umount(MNT)
    except OSError:
        pass


def lfs_scenario(flash, acked):
    """Two games with an acknowledge between; each seq a write returned, before the power went,
    goes into acked. (MicroPython turns a block device exception into an I/O error code for
    LittleFS, which may go on: so what counts is whether the flash was still alive.)"""

    def ack(seq):
        if flash.dead:
            raise PowerCut()
        acked.append(seq)

    j = Journal(JD)
    try:
        j.boot()
        ack(j.new_game(HEAD)[1])
        for i in range(8):
            ack(j.append(turn(i)))
        ack(j.end_game({"winner": 0}))
        ack(j.new_game(HEAD)[1])
        j.acknowledge(acked[-2])
        for i in range(8, 16):
            ack(j.append(turn(i)))
        j.close()
    except OSError:
        if not flash.dead:
            raise
        raise PowerCut()
    finally:
        if flash.dead:
            j.close()  # its file on the dead flash: closing writes nothing now


def after_cut(flash, acked, what):
    """Mount the flash as the cut left it and boot: acked seqs all there, nothing broken."""
    umount()
    mount(Flash(data=bytearray(flash.data)))
    j = Journal(JD)
    r = j.boot()
    check(r.errors == [], "%s: errors %r" % (what, r.errors))
    got = seqs(j.records_after(0))
    check(got == list(range(got[0] if got else 1, r.last_seq + 1)), "%s: gap %r" % (what, got))
    for s in acked:
        check(s in got or s <= (got[0] if got else 0) - 1, "%s: acked %d lost" % (what, s))
    check(r.last_seq >= (acked[-1] if acked else 0), "%s: last_seq %d" % (what, r.last_seq))
    check(r.last_seq <= (acked[-1] if acked else 0) + 1, "%s: seq from nowhere" % what)
    # the board carries on after the cut
    if r.header is None:
        j.new_game(HEAD)
    s = j.append(turn(7))
    j.close()
    j = Journal(JD)
    r = j.boot()
    check(r.errors == [] and r.last_seq == s and r.actions[-1] == turn(7), "%s: resume" % what)
    j.close()
    return r


def mode_lfs():
    umount()
    flash = Flash()
    os.VfsLfs2.mkfs(flash)
    base = bytearray(flash.data)
    mount(flash)
    full = []
    lfs_scenario(flash, full)
    total = flash.ops
    umount()
    cuts = 0
    for cut in range(1, total + 1):
        flash = Flash(data=bytearray(base))
        mount(flash)
        flash.cut_at = cut
        acked = []
        try:
            lfs_scenario(flash, acked)
        except PowerCut:
            pass
        after_cut(flash, acked, "cut at op %d" % cut)
        umount()
        cuts += 1
        gc.collect()
    # A torn tail (as a non-atomic filesystem could leave one) repaired under power cuts: the
    # copy-and-rename must leave either the old file or the repaired one.
    flash = Flash(data=bytearray(base))
    mount(flash)
    acked = []
    lfs_scenario(flash, acked)
    p = JD + "/g00002.jnl"
    good = read(p)
    with open(p, "ab") as f:
        f.write(b"99 A {\"a\":\"tu")
    torn = bytearray(flash.data)
    start = flash.ops
    j = Journal(JD)
    r = j.boot()
    check(len(r.repaired) == 1 and read(p) == good, "repair %r" % r.repaired)
    j.close()
    repair_ops = flash.ops - start
    umount()
    for cut in range(1, repair_ops + 1):
        flash = Flash(data=bytearray(torn))
        mount(flash)
        flash.cut_at = cut
        j = Journal(JD)
        try:
            j.boot()
            j.close()
        except (PowerCut, OSError):
            check(flash.dead, "repair failed with the power on")
        r = after_cut(flash, acked, "repair cut at op %d" % cut)
        umount()
        cuts += 1
        gc.collect()
    print("ok lfs cuts=%d scenario_ops=%d repair_ops=%d" % (cuts, total, repair_ops))


mode_lfs()
