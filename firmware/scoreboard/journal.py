# The write-ahead journal: every action is on flash before the rules see it, so after a power cut
# the board replays the current game's file and is exactly where it was (docs/journal.md).
#
# One directory, one append-only file per game (g00001.jnl, ...), one text line per record:
#     <seq> <type> <json payload> <crc32 of everything before this field, 8 hex digits>\n
# `seq` grows by one per record across all games, so the host can ask for "everything after N".
#
# Runs unchanged on MicroPython (unix port, ESP32 LittleFS) and CPython: only os functions both
# have, no truncate (MicroPython has none), files read in small chunks so a long game never has
# to fit in RAM at once.

import binascii
import json
import os
from array import array

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

HEADER = "H"  # payload: the match-log header plus "game_no"; always a file's first record
ACTION = "A"  # payload: the action dict, as given
END = "E"  # payload: {"winner": ...}; nothing follows it in that file
_KINDS = (HEADER, ACTION, END)

_CHUNK = const(512)  # read size: small enough for a 96 KB heap, big enough to keep syscalls few
MAX_LINE = 2048  # longest record; longer lines can only be damage (and are never buffered whole)
_SEP = (",", ":")
_EXT = ".jnl"
_TMP = ".tmp"

# What the journal remembers of each kept game file: one row of _W ints in an array, oldest
# first. Games the host has not archived yet pile up (a few hundred fit on flash), so a row costs
# 24 bytes where an object per file would cost ten times that on the heap.
_NO = const(0)  # game number (file g<no>.jnl)
_FIRST = const(1)  # first good seq (0: none)
_LAST = 2  # last good seq
_HI = const(3)  # highest seq the file may have used, damaged lines included
_END = 4  # byte offset just after the last good record
_RECS = 5  # good records
_W = 6


class JournalError(Exception):
    """Misuse of the journal (no game open, acknowledging the future) or a write it refused."""


def encode(seq, kind, payload):
    """One record line (bytes, newline included)."""
    body = ("%d %s %s" % (seq, kind, json.dumps(payload, separators=_SEP))).encode()
    return body + (" %08x\n" % (binascii.crc32(body) & 0xFFFFFFFF)).encode()


def decode(line):
    """(seq, kind, payload bytes) of a well-formed line, else a text saying what is wrong."""
    n = len(line)
    if n < 15 or line[n - 1] != 10 or line[n - 10] != 32:
        return "malformed line"
    crc = line[n - 9:n - 1]
    for c in crc:  # lowercase hex only: int(x, 16) alone would also take " +ab"
        if not (48 <= c <= 57 or 97 <= c <= 102):
            return "malformed checksum"
    if binascii.crc32(memoryview(line)[:n - 10]) & 0xFFFFFFFF != int(crc, 16):
        return "checksum mismatch"
    sp = line.find(b" ")
    if sp < 1 or sp + 3 >= n - 10 or line[sp + 2] != 32 or not line[:sp].isdigit():
        return "malformed seq or type"
    return int(line[:sp]), chr(line[sp + 1]), line[sp + 3:n - 10]


def _lines(f):
    """(start, end, line or None, ends_in_newline) for each line of an open binary file.

    Chunked, so memory stays at one chunk plus one line; a line longer than MAX_LINE is reported
    as None instead of being buffered (only damage makes one). Only the last line can lack \\n.
    """
    buf = b""
    pos = 0  # file offset of buf[0]
    skip = -1  # start of an overlong line being skipped
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        buf = buf + chunk if buf else chunk
        i = 0
        while True:
            nl = buf.find(b"\n", i)
            if nl < 0:
                break
            if skip >= 0:
                yield skip, pos + nl + 1, None, True
                skip = -1
            else:
                yield pos + i, pos + nl + 1, buf[i:nl + 1], True
            i = nl + 1
        if i:
            buf = buf[i:]
            pos += i
        if len(buf) > MAX_LINE:
            if skip < 0:
                skip = pos
            pos += len(buf)
            buf = b""
    if skip >= 0:
        yield skip, pos + len(buf), None, False
    elif buf:
        yield pos, pos + len(buf), buf, False


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _replace(src, dst):
    # LittleFS (and POSIX) rename replaces dst atomically. FAT refuses an existing dst: remove it
    # first; boot finishes that half-done swap (a .tmp with no .jnl is always complete).
    try:
        os.rename(src, dst)
    except OSError:
        os.remove(dst)
        os.rename(src, dst)


class Resume:
    """What boot() found. `header`/`game_no` are None when no game is in progress."""

    def __init__(self):
        self.header = None  # header payload of the unfinished game
        self.game_no = None
        self.actions = None  # its actions in order (list), unless boot() was given on_action
        self.count = 0  # number of those actions
        self.last_seq = 0  # the next record gets last_seq + 1
        self.errors = []  # damage: {"file", "line", "seq", "offset", "error"}; see docs
        self.repaired = []  # torn tails cut off: {"file", "offset", "bytes"}
        self.stopped = []  # game numbers stopped at their last good record by damage

    def ok(self):
        return not self.errors


def _name(no):
    return "g%05d%s" % (no, _EXT)


class Journal:
    def __init__(self, root):
        self.root = root.rstrip("/") or "/"
        self._t = array("i")  # rows of _W ints, one per kept file; the game in progress is last
        self._open = False  # the newest file holds a game in progress
        self._f = None  # that file, open for appending
        self._stopped = []  # game numbers stopped by damage (kept until acknowledged)
        self._seq = 0
        self._good = 0
        self._max_no = 0
        self._acked = 0
        self._booted = False
        self._broken = None  # why writing is refused until the next boot()

    def _path(self, name):
        return self.root + "/" + name if self.root != "/" else "/" + name

    def _row(self, no):
        """Offset of game no's row in the table, or -1."""
        t = self._t
        for b in range(0, len(t), _W):
            if t[b] == no:
                return b
        return -1

    # -- boot -------------------------------------------------------------------------------
    def boot(self, on_action=None):
        """Scan and verify every record, repair a torn tail; return a Resume.

        With `on_action`, each action of the game in progress is passed to it in order (streamed
        from flash, for games too long to hold as dicts) and Resume.actions stays None.
        """
        self.close()
        self._t = array("i")
        self._stopped = []
        self._seq = 0
        self._good = 0  # while booting: the last good seq of the files scanned so far
        self._max_no = 0
        self._acked = 0
        self._broken = None
        r = Resume()
        if not _exists(self.root):
            os.mkdir(self.root)
        nos = []
        for name in os.listdir(self.root):
            no = _game_no(name)
            if no is None:
                continue
            if name.endswith(_TMP):
                self._finish_swap(name)
            if no not in nos:
                nos.append(no)
        nos.sort()
        for no in nos:
            if _exists(self._path(_name(no))):
                self._scan(no, r)
        r.last_seq = self._seq
        self._booted = True
        if self._open:
            no = self._t[len(self._t) - _W]
            self._f = open(self._path(_name(no)), "ab")
            r.game_no = no
            r.header = self.header(no)
            if on_action is None:
                r.actions = []
                on_action = r.actions.append
            for action in self.actions():
                r.count += 1
                on_action(action)
        return r

    open = boot

    def _finish_swap(self, name):
        tmp = self._path(name)
        jnl = tmp[:-len(_TMP)] + _EXT
        if _exists(jnl):
            os.remove(tmp)  # a copy that never replaced its original: redo from the original
        else:
            os.rename(tmp, jnl)  # FAT fallback interrupted after the remove: the copy is complete

    def _scan(self, no, r):
        """Verify one file and add its row (a file that holds nothing is removed instead)."""
        name = _name(no)
        path = self._path(name)
        t = self._t
        # Seqs rise across files too. Compared with the last *good* seq of the files before, so
        # that a damaged file's estimate (_HI) cannot cast doubt on the files after it; of all of
        # them, as a damaged file with no good record has none (0) and would let the next file
        # start again from 1.
        prev = self._good
        first = last = hi = end = recs = 0
        finished = False
        line_no = 0
        bad = None  # (line_no, offset, reason) of the first damaged line
        after = 0  # newline-terminated lines from the damage on: seqs they may have used
        torn = -1  # offset of an unterminated tail
        size = 0
        with open(path, "rb") as f:
            for start, stop, line, nl in _lines(f):
                line_no += 1
                size = stop
                if not nl:
                    torn = start  # a write cut short: append() never returned for it
                    break
                rec = decode(line) if line is not None else "line too long"
                if bad is not None:
                    after += 1
                    if type(rec) is tuple and rec[0] > hi:
                        hi = rec[0]
                    continue
                if type(rec) is tuple:
                    rec = _check(rec, prev, recs, finished)
                if type(rec) is str:
                    bad = (line_no, start, rec)
                    after = 1
                    continue
                prev = last = hi = rec[0]
                if not recs:
                    first = last
                recs += 1
                end = stop
                if rec[1] == END:
                    finished = True
        if bad is not None:
            # Damage (bit rot, not a power cut): the game stops at its last good record; the
            # file stays untouched as evidence, and its seqs are never handed out again.
            # +1: a flipped newline can merge two records into one damaged line.
            base = last or self._seq
            if base + after + 1 > hi:
                hi = base + after + 1
            r.errors.append({"file": name, "line": bad[0], "seq": base + 1, "offset": bad[1],
                             "error": bad[2]})
        elif torn >= 0 or not recs:
            if torn >= 0:
                r.repaired.append({"file": name, "offset": torn, "bytes": size - torn})
            if not recs:
                os.remove(path)  # created, header torn or never written: new_game() never returned
                return
            self._cut(name, end)
        # Only the newest game may be unfinished: new_game() refuses while one is in progress.
        if self._open:
            b = len(t) - _W
            self._stop(r, t[b], {"file": _name(t[b]), "line": t[b + _RECS] + 1, "seq": None,
                                 "offset": t[b + _END],
                                 "error": "no end record, a later game exists"})
        if bad is not None:
            self._stop(r, no, None)
        if t and first and t[len(t) - _W] in self._stopped:
            # This file's first seq bounds what the damaged file before it can have used.
            b = len(t) - _W
            t[b + _HI] = max(t[b + _LAST], min(t[b + _HI], first - 1))
        t.extend((no, first, last, hi, end, recs))
        if last > self._good:
            self._good = last
        self._open = bad is None and not finished
        self._max_no = no
        if hi > self._seq:
            self._seq = hi

    def _stop(self, r, no, error):
        self._stopped.append(no)
        r.stopped.append(no)
        if error is not None:
            r.errors.append(error)

    def _cut(self, name, end):
        """Drop everything after byte `end`: copy the good prefix, flush, rename it over.

        MicroPython has no truncate. The rename is atomic on LittleFS, so a power cut leaves
        either the old file (torn tail and all: boot cuts it again) or the new one, never less.
        """
        path = self._path(name)
        tmp = path[:-len(_EXT)] + _TMP
        left = end
        with open(path, "rb") as src:
            with open(tmp, "wb") as dst:
                while left > 0:
                    chunk = src.read(_CHUNK if left > _CHUNK else left)
                    if not chunk:
                        break
                    dst.write(chunk)
                    left -= len(chunk)
                dst.flush()
        _replace(tmp, path)

    # -- writing ----------------------------------------------------------------------------
    def new_game(self, header):
        """Start a game file with `header` (+ "game_no"). Returns (game_no, seq)."""
        self._writable()
        if self._open:
            raise JournalError("game %d is still in progress: end_game() first"
                               % self._t[len(self._t) - _W])
        if type(header) is not dict:
            raise JournalError("a game header must be a dict")
        no = self._max_no + 1
        payload = dict(header)
        payload["game_no"] = no
        path = self._path(_name(no))
        line = self._line(HEADER, payload)
        self._t.extend((no, 0, 0, 0, 0, 0))  # before the write: nothing to allocate after it
        f = None
        try:
            f = open(path, "wb")
            f.write(line)
            f.flush()
        except Exception:
            self._t = self._t[:len(self._t) - _W]
            if f is not None:
                f.close()
                try:
                    os.remove(path)
                except OSError:
                    pass
            raise
        self._max_no = no
        self._open = True
        self._f = f
        seq = self._done(len(line), HEADER)
        self._rotate()
        return no, seq

    def append(self, action):
        """Write one action and flush it; returns its seq. Apply it only after this returns."""
        if type(action) is not dict:
            raise JournalError("an action must be a dict")
        return self._write(ACTION, action)

    def end_game(self, payload=None):
        """Close the game in progress with an end record ({"winner": ...}); returns its seq."""
        if payload is None:
            payload = {"winner": None}
        elif type(payload) is not dict:
            raise JournalError("an end payload must be a dict")
        seq = self._write(END, payload)
        self._f.close()
        self._f = None
        return seq

    def _writable(self):
        if not self._booted:
            raise JournalError("boot() the journal first")
        if self._broken is not None:
            raise JournalError("journal write failed earlier (%s): boot() again" % self._broken)

    def _line(self, kind, payload):
        # Encoding first: a payload json cannot serialise never leaves a trace on flash.
        line = encode(self._seq + 1, kind, payload)
        if len(line) > MAX_LINE:
            raise JournalError("record of %d bytes is longer than %d" % (len(line), MAX_LINE))
        return line

    def _write(self, kind, payload):
        self._writable()
        if not self._open:
            raise JournalError("no game in progress: new_game() first")
        line = self._line(kind, payload)
        try:
            self._f.write(line)
            self._f.flush()
        except Exception as e:
            self._recover(e)
            raise
        return self._done(len(line), kind)

    def _done(self, n, kind):
        """Account for a record just flushed to the newest file."""
        t = self._t
        b = len(t) - _W
        self._seq += 1
        if not t[b + _RECS]:
            t[b + _FIRST] = self._seq
        t[b + _LAST] = t[b + _HI] = self._seq
        t[b + _END] += n
        t[b + _RECS] += 1
        if kind == END:
            self._open = False
        return self._seq

    def _recover(self, e):
        # A failed write (flash full?) may have left part of a line: cut it off before anything
        # else is appended after it, or refuse writes until boot() does.
        try:
            self._f.close()
        except Exception:
            pass
        self._f = None
        t = self._t
        name = _name(t[len(t) - _W])
        try:
            self._cut(name, t[len(t) - _W + _END])
            self._f = open(self._path(name), "ab")
        except Exception:
            self._broken = repr(e)

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None
        self._open = False
        self._booted = False

    # -- reading ----------------------------------------------------------------------------
    def _records(self, no, end, after=0, kind=None):
        """(seq, type, payload) of game no's good records with seq > after, streamed."""
        with open(self._path(_name(no)), "rb") as f:
            for start, _stop, line, nl in _lines(f):
                t = self._t  # (rotation replaces the table)
                if self._open and t[len(t) - _W] == no:
                    end = t[len(t) - _W + _END]  # the game in progress grows meanwhile
                if start >= end:
                    break
                rec = decode(line) if nl and line is not None else "torn"
                if type(rec) is str:
                    raise JournalError("%s changed on flash since boot: %s at byte %d"
                                       % (_name(no), rec, start))
                if rec[0] > after and (kind is None or rec[1] == kind):
                    yield rec[0], rec[1], json.loads(rec[2])

    def records_after(self, seq):
        """Every kept good record with a seq above `seq`, oldest first, across game files.

        A generator reading one line at a time; close() it if you stop early, and do not
        acknowledge() while iterating. Records of a stopped game end at its last good one.
        """
        rows = array("i", self._t)  # a copy: rotation may replace the table meanwhile
        for b in range(0, len(rows), _W):
            if rows[b + _LAST] > seq:
                for rec in self._records(rows[b], rows[b + _END], seq):
                    seq = rec[0]  # boot() checked that seqs rise across files: they only rise
                    yield rec

    def actions(self, game_no=None):
        """The action dicts of a kept game (default: the one in progress), streamed in order."""
        b = self._game(game_no)
        if b < 0:
            return
        for rec in self._records(self._t[b], self._t[b + _END], 0, ACTION):
            yield rec[2]

    def header(self, game_no=None):
        """The header payload of a kept game (default: the one in progress), or None."""
        b = self._game(game_no)
        if b < 0 or not self._t[b + _RECS]:
            return None
        g = self._records(self._t[b], self._t[b + _END], 0, HEADER)
        try:
            for rec in g:
                return rec[2]
        finally:
            g.close()

    def _game(self, game_no):
        if game_no is None:
            return len(self._t) - _W if self._open else -1
        return self._row(game_no)

    # -- rotation ---------------------------------------------------------------------------
    def acknowledge(self, seq):
        """The host holds every record up to `seq`: delete the game files it covers.

        The game in progress is never deleted, nor the newest file: it carries the seq and game
        number on across a reboot. Returns the game numbers deleted.
        """
        if not self._booted:
            raise JournalError("boot() the journal first")
        if seq > self._seq:
            # The host is ahead of this journal (flash wiped? another board?): deleting on its
            # word could lose games it never saw.
            raise JournalError("acknowledged seq %d is beyond the last seq %d" % (seq, self._seq))
        if seq > self._acked:
            self._acked = seq
        return self._rotate()

    def _rotate(self):
        # Every file but the newest is finished or stopped (boot and new_game see to it).
        t = self._t
        last = len(t) - _W
        gone = []
        for b in range(0, last, _W):
            if t[b + _HI] <= self._acked:
                gone.append(t[b])
        if not gone:
            return gone
        keep = array("i")
        for b in range(0, len(t), _W):
            no = t[b]
            if b < last and t[b + _HI] <= self._acked:
                os.remove(self._path(_name(no)))
                if no in self._stopped:
                    self._stopped.remove(no)
            else:
                keep.extend(t[b:b + _W])
        self._t = keep
        return gone

    def last_seq(self):
        """The latest record's seq (stats()'s, without its look at every file and at the
        filesystem's free space: a walk of the whole flash on LittleFS)."""
        return self._seq

    def game_no(self):
        """The game in progress (stats()'s game_no), or None."""
        t = self._t
        return t[len(t) - _W] if self._open else None

    def stats(self):
        """Numbers for the status screen and the host: files, bytes, records, seqs."""
        t = self._t
        size = recs = 0
        for b in range(0, len(t), _W):
            recs += t[b + _RECS]
            if t[b] in self._stopped:
                size += os.stat(self._path(_name(t[b])))[6]  # damaged bytes included
            else:
                size += t[b + _END]
        try:
            st = os.statvfs(self.root)
            free = st[1] * st[4]  # fragment size * blocks free to us
        except (AttributeError, OSError):
            free = None
        return {
            "files": len(t) // _W,
            "free": free,
            "bytes": size,
            "records": recs,
            "first_seq": t[_FIRST] if t else 0,
            "last_seq": self._seq,
            "acked": self._acked,
            "game_no": t[len(t) - _W] if self._open else None,
            "games": [t[b] for b in range(0, len(t), _W)],
            "stopped": list(self._stopped),
        }


def _check(rec, prev, recs, finished):
    """rec if it may follow what came before it in its file, else why not."""
    seq, kind, payload = rec
    if seq <= prev:
        return "seq %d after %d" % (seq, prev)
    if kind not in _KINDS:
        return "unknown record type %s" % kind
    if finished:
        return "record after the end record"
    if (kind == HEADER) != (recs == 0):
        return "header not first" if kind == HEADER else "no header"
    if kind == HEADER:
        try:
            ok = type(json.loads(payload)) is dict
        except ValueError:
            ok = False
        if not ok:
            return "header payload is not a JSON object"
    return rec


def _game_no(name):
    """The game number of a journal file name (g00012.jnl or its .tmp), else None."""
    if name[:1] != "g" or not (name.endswith(_EXT) or name.endswith(_TMP)):
        return None
    digits = name[1:-4]
    if not digits or not digits.isdigit():
        return None
    return int(digits)
