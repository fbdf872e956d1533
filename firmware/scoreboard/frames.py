# Serial link frames (docs/serial-protocol.md): the codec both ends share, pure, no I/O.
#
# A frame is one text line a person can read in any serial monitor:
#
#     ~c2 42 rec {"a":"turn","beds":[0,1,0,0,0,0,0,0,0],"seq":17,"side":0,"t":8123} c911a231
#     |   |  |   |                                                                  |
#     |   |  |   payload: a JSON object, compact, keys sorted            CRC32 of all before
#     |   |  type: [a-z][a-z0-9_]*, at most 16 characters                  the space, %08x
#     |   frame number: decimal, 0..999999999, no leading zero
#     marker "~c" and protocol version
#
# Version 2 adds two compact types whose payload is short text instead of JSON: `a`, one live
# action with the state after it (`17 8123 417 n,0,1,12.7,1,00,~`), and `r`, a block of journal
# records packed as binary in base64 (`<game id> 18 AQL0EgEB...`). A record goes compact only
# when the game's rules give it back exactly (see pack_action); anything else stays JSON.
#
# The marker starts the line: nothing MicroPython's REPL prints does ("~" is not a Python token
# a traceback or prompt begins with), so frames and REPL output share the port. A line without
# it is noise; a line with it that fails any check is corrupt. Every version of the protocol
# keeps this envelope (marker + version first, frame number second, CRC last), so a frame of
# another version is still recognised, with its CRC checked, and reported as such.
#
# Runs unchanged on MicroPython and CPython, and encodes the same bytes on both: MicroPython
# dicts do not keep insertion order, so keys are written sorted; strings are raw UTF-8
# (canonjson.py). The compact types' text is pack.py's, which this imports (never the other way).

import binascii
import json

from .canonjson import dump_into as _dump
from .canonjson import dumps  # noqa: F401 (frames.dumps: the link's canonical JSON)

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

VERSION = 2
MARKER = "~c"
MAX_LINE = 1024  # bytes of a frame line, without its line terminator
MAX_N = 999999999  # frame numbers (and command ids) wrap from here to 0
_MAX_TYPE = const(16)
_BMARKER = b"~c"
_MIN = const(14)  # len("~c1 0 01234567"): the shortest envelope (any version)

# MicroPython's crc32 takes a str as is (its bytes are UTF-8); CPython wants bytes.
try:
    binascii.crc32("")
    _CRC_STR = True
except TypeError:
    _CRC_STR = False

class Corrupt(ValueError):
    """A line that carries the marker but is not a whole, valid frame: drop it and count it."""


class FrameTooLong(ValueError):
    """A frame to send that would be longer than MAX_LINE bytes."""


class WrongVersion(Exception):
    """An intact frame of another protocol version. `n` is its frame number (None if it has no
    readable one); `newer` tells which side must be updated."""

    def __init__(self, version, n=None):
        self.version = version
        self.n = n
        self.newer = version > VERSION
        super().__init__("protocol v%d frame (this end speaks v%d)" % (version, VERSION))


# -- encoding --------------------------------------------------------------------------------

def _type_ok(typ):
    try:
        b = typ.encode()  # bytes: a str's characters taken out are interned (_text_ok)
    except UnicodeError:  # a lone surrogate (CPython)
        return False
    if not 0 < len(b) <= _MAX_TYPE or not 97 <= b[0] <= 122:
        return False
    for c in b:
        if not (97 <= c <= 122 or 48 <= c <= 57 or c == 95):
            return False
    return True


def encode(n, typ, payload, version=VERSION, text=None):
    """One frame line, "\\n" included, as a str. `payload` must be a dict (or, for the compact
    types `a` and `r` of version 2, the dict their encoder takes, or their text); `text`: the
    payload's JSON already made (a board making a long reply a slice at a time: linkwork.py).

    Raises FrameTooLong if it would exceed MAX_LINE bytes, ValueError for anything else that
    cannot be a frame (a bad type name, a frame number out of range, a non-JSON value)."""
    if type(n) is not int or not 0 <= n <= MAX_N:
        raise ValueError("frame number must be 0..%d, not %r" % (MAX_N, n))
    if type(typ) is not str or not _type_ok(typ):
        raise ValueError("bad frame type %r" % (typ,))
    out = [MARKER, str(version), " ", str(n), " ", typ, " "]
    if text is not None:
        out.append(text)
    elif typ in COMPACT and version >= 2:
        made = type(payload) is not str
        if made:
            from . import pack  # the compact encoder, loaded on a board's first action

            payload = pack.action_text(payload) if typ == "a" else pack.block_text(payload)
        # (A block's text is its game id, a seq and base64: ASCII by construction, and a check
        # byte by byte is a long step on a board. An action's state may hold anything.)
        if not (made and typ == "r") and not _text_ok(payload):
            raise ValueError("bad %s frame text %r" % (typ, payload[:40]))
        out.append(payload)
    elif type(payload) is not dict:
        raise ValueError("a frame payload must be a dict")
    else:
        _dump(payload, out, 0)
    body = "".join(out)
    # Bytes are only needed for CPython's crc32, or to measure a str that might be too long.
    if _CRC_STR and len(body) * 4 <= MAX_LINE - 9:
        raw = body
        size = len(body)
    else:
        raw = body.encode()
        size = len(raw)
    if size + 9 > MAX_LINE:
        raise FrameTooLong("%s frame of %d bytes (at most %d)" % (typ, size + 9, MAX_LINE))
    return "%s %08x\n" % (body, binascii.crc32(raw) & 0xFFFFFFFF)


# -- decoding --------------------------------------------------------------------------------

def _digits(b, lo, hi):
    """The int of b[lo:hi] if it is a canonical decimal of at most 9 digits, else -1."""
    if hi <= lo or hi - lo > 9 or (b[lo] == 48 and hi - lo > 1):
        return -1
    v = 0
    for i in range(lo, hi):
        c = b[i]
        if not 48 <= c <= 57:
            return -1
        v = v * 10 + c - 48
    return v


def decode(line, whole=True):
    """Decode one line (bytes or str, line terminator optional).

    Returns (n, type, payload) for a valid frame of this protocol version; None for a line
    without the marker (REPL output, a partial line: not a frame); raises Corrupt for a line
    with the marker that is not a whole valid frame, and WrongVersion for an intact frame of
    another version. `whole` False: (n, type, None) once the envelope and the type hold, the
    payload not read (no JSON made: a board too short of memory to read a command can still
    answer it, scoreboard/link.py)."""
    if type(line) is str:
        line = line.encode()
    end = len(line)
    while end and line[end - 1] in (10, 13):
        end -= 1
    if line[:2] != _BMARKER:
        return None
    if end > MAX_LINE:
        raise Corrupt("longer than %d bytes" % MAX_LINE)
    if end < _MIN or line[end - 9] != 32:
        raise Corrupt("truncated or malformed")
    crc = 0
    for i in range(end - 8, end):
        c = line[i]
        if 48 <= c <= 57:
            crc = crc * 16 + c - 48
        elif 97 <= c <= 102:  # lowercase only, so a frame has exactly one spelling
            crc = crc * 16 + c - 87
        else:
            raise Corrupt("malformed checksum")
    body = end - 9
    if binascii.crc32(memoryview(line)[:body]) & 0xFFFFFFFF != crc:
        raise Corrupt("checksum mismatch")
    s1 = line.find(b" ", 2, body)
    version = _digits(line, 2, s1) if s1 > 0 else -1
    if version < 0:
        raise Corrupt("malformed version")
    s2 = line.find(b" ", s1 + 1, body)
    n = _digits(line, s1 + 1, s2) if s2 > 0 else -1
    if version != VERSION:
        raise WrongVersion(version, n if n >= 0 else None)
    if n < 0:
        raise Corrupt("malformed frame number")
    s3 = line.find(b" ", s2 + 1, body)
    if s3 < 0:
        raise Corrupt("no payload")
    try:
        typ = line[s2 + 1:s3].decode()
        text = line[s3 + 1:body].decode() if whole else ""
    except UnicodeError:
        raise Corrupt("not UTF-8")
    if not _type_ok(typ):
        raise Corrupt("malformed type")
    if not whole:
        return n, typ, None
    if typ in COMPACT:
        if not _text_ok(text):
            raise Corrupt("malformed %s text" % typ)
        return n, typ, text
    if text[:1] != "{":
        raise Corrupt("payload is not a JSON object")
    try:
        payload = json.loads(text)
    except (ValueError, RuntimeError):  # RuntimeError: CPython's RecursionError (deep nesting)
        raise Corrupt("payload is not JSON")
    if type(payload) is not dict:
        raise Corrupt("payload is not a JSON object")
    return n, typ, payload


def next_n(n):
    """The frame number after n (they wrap from MAX_N to 0)."""
    return 0 if n >= MAX_N else n + 1


# -- compact frames (version 2) ---------------------------------------------------------------
#
# `a`: SEQ T CODE STATE -- the journal seq and t (ms) of an action, its code as the game's rules
# pack it (Game.encode), and the state after it: the values of the state dict in sorted key
# order, joined by ",". A value is written as: an int in decimal; None as "~"; True/False as
# "y"/"n"; a list of ints as its digits when every one is 0..9, trailing zeros left out ("12"
# for [1,2,0,0], "" for [0,0]), else dotted ("12.7", "12." for one); an empty list as "."; a
# list of lists as those joined by "/"; anything else as compact JSON. The reader needs the
# game's rules for the action and the shape of its state (Unpacker): lists of digits are padded
# to the length they have in the game's initial state.
#
# `r`: GAME SEQ0 DATA -- journal records SEQ0, SEQ0+1, ... of one game, each two unsigned LEB128
# varints, the zigzag of t minus the previous record's t (0 before the first) and the code, the
# bytes in base64. Headers, ends and records that do not pack travel as JSON `rec` frames.
#
# Writing them is scoreboard/pack.py; reading them back (host only, so the board does not carry
# the code) is chalk/compact.py.

COMPACT = ("a", "r")
def _text_ok(text):
    # (startswith, not text[0]: a str's character taken out by its index is a new name in the
    # board's qstr pool, for good; the first digit of an `a` frame's seq was one, mid-game.)
    if type(text) is not str or not text or text.startswith("{") or len(text) > MAX_LINE:
        return False
    # Over the bytes, not the characters: each character of a str iterated is a new str (on
    # MicroPython, interned: its pool grows, and on a heap in pieces may find no block).
    for c in text.encode():
        if not 32 <= c <= 126:
            return False
    return True


# -- lines -----------------------------------------------------------------------------------

class Lines:
    """Assembles whole lines from bytes as they arrive (any chunking; "\\n", "\\r\\n" or "\\r").

    feed() yields each complete, non-empty line without its terminator. A line longer than
    MAX_LINE is not buffered whole: it is cut to MAX_LINE + 1 bytes, which decode() rejects
    as corrupt (with the marker) or ignores as noise (without), so memory stays bounded."""

    def __init__(self, limit=MAX_LINE):
        self._limit = limit + 1
        self._buf = bytearray()

    def feed(self, data):
        if type(data) is str:
            data = data.encode()
        i = 0
        size = len(data)
        while i < size:
            j = data.find(b"\n", i)
            r = data.find(b"\r", i)
            if r >= 0 and (j < 0 or r < j):
                j = r
            stop = size if j < 0 else j
            room = self._limit - len(self._buf)
            if room > 0 and stop > i:
                self._buf.extend(data[i:stop if stop - i <= room else i + room])
            if j < 0:
                return
            i = j + 1
            if self._buf:
                line = bytes(self._buf)
                self._buf = bytearray()
                yield line

    def pending(self):
        """Bytes of an unfinished line held so far."""
        return len(self._buf)
