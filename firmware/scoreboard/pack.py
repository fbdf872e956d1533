# Protocol 2's compact frames, the writing side (docs/serial-protocol.md; the grammar is in
# frames.py): an action with the state after it (`a`), journal records packed into base64
# blocks (`r`). Kept apart from frames.py so a board compiles and loads it in its own, smaller
# piece. Runs unchanged on MicroPython and CPython.

import binascii

from .canonjson import dumps

_NULL = "~"


def _value(v):
    t = type(v)
    if t is bool:
        return "y" if v else "n"
    if v is None:
        return _NULL
    if t is int:
        return str(v)
    if (t is list or t is tuple) and not [x for x in v if type(x) is not int]:
        for x in v:
            if not 0 <= x <= 9:
                return ".".join([str(x) for x in v]) + ("." if len(v) == 1 else "")
        # Trailing zeros are left out: the reader pads to the length of the game's state.
        end = len(v)
        while end and v[end - 1] == 0:
            end -= 1
        if not v:
            return "."
        # (The digits as bytes, one str made of them: each str made is a look through the
        # board's table of names.)
        b = bytearray(end)
        for i in range(end):
            b[i] = 48 + v[i]
        return b.decode()
    if (t is list or t is tuple) and v and type(v[0]) in (list, tuple):
        parts = [_value(x) for x in v]
        for p in parts:
            if "/" in p or "," in p or " " in p:
                return dumps(list(v))
        return "/".join(parts)
    text = dumps(v)
    if "," in text or " " in text:
        raise ValueError("no compact form")
    return text


def state_text(state):
    """The compact form of a state dict (values in sorted key order)."""
    return ",".join([_value(state[k]) for k in sorted(state)])


def action_text(p):
    """The text of an `a` frame from {"seq", "t", "code", "state"}."""
    code = p["code"]
    return "%d %d %s %s" % (p["seq"], p["t"], "u" if code == UNDO else str(code),
                            state_text(p["state"]))


UNDO = -1  # the code of {"a": "undo"}: "u" in an `a` frame, 0 in a block (codes go in + 1)


def pack_action(game, rec):
    """The code of a journal action record if the rules of `game` give it back exactly (every
    key, with seq and t beside) from the code alone, UNDO for an undo, else None: such a record
    travels as JSON."""
    if type(rec.get("t")) is not int or rec["t"] < 0 or type(rec.get("seq")) is not int:
        return None
    if len(rec) == 3 and rec.get("a") == "undo":
        return UNDO
    try:
        code = game.encode(rec)  # (the rules ignore keys they do not know: seq and t)
        if type(code) is not int or code < 0:
            return None
        back = _decoder(game).decode(code)
    except Exception:
        return None
    if len(back) + 2 != len(rec):
        return None
    for k in back:
        if k not in rec or not _same(rec[k], back[k]):
            return None
    return code


def _same(a, b):
    """a == b as the record's canonical bytes see it (its hash chain link is over them): types
    included, since 1 == True and [1] == [True] in Python, but a list and a tuple alike."""
    t = type(a)
    if t is list or t is tuple:
        if type(b) is not list and type(b) is not tuple:
            return False
        if len(a) != len(b):
            return False
        for i in range(len(a)):
            if not _same(a[i], b[i]):
                return False
        return True
    if t is not type(b):
        return False
    if t is dict:
        if len(a) != len(b):
            return False
        for k in a:
            if k not in b or not _same(a[k], b[k]):
                return False
        return True
    return a == b


# The class, config and instance of the last decoder made.
_DEC = [None, None, None]  # type: list


def _decoder(game):
    """A fresh instance of the game's rules (one kept at a time): decoding with it, not with the
    game that made the code, tells a code that stands alone from one that means something only
    to its game (an index into a table it keeps)."""
    if _DEC[0] is not type(game) or _DEC[1] != game.config:
        _DEC[2] = None
        _DEC[2] = type(game)(game.config)
        _DEC[0] = type(game)
        _DEC[1] = game.config
    return _DEC[2]


class Block:
    """Journal records of one game packed for an `r` frame: add() them while they follow on
    (consecutive seqs) and fit; text() is the frame's payload.

    The records go into one buffer shared by every Block (allocated once, never grown): a board
    sends each block before it packs the next, and a long resync then needs no new, ever larger
    bytearray per block from a fragmented heap."""

    LIMIT = 360  # bytes before base64 (about 60 records): short lines, small allocations

    def __init__(self, game_id, seq, limit=None):
        global _BUF
        if _BUF is None:
            _BUF = bytearray(Block.LIMIT + 20)  # + the two varints of one more record
        # A smaller block on a line that loses frames: one lost frame loses fewer records.
        self.limit = Block.LIMIT if limit is None or limit > Block.LIMIT else limit
        self.game = game_id
        self.first = seq
        self.last = seq - 1
        self._t = 0
        self._n = 0

    def add(self, seq, t, code):
        """Add a record; False (and nothing added) if it does not follow on or fit."""
        if seq != self.last + 1 or self._n > self.limit:
            return False
        d = t - self._t
        z = d << 1 if d >= 0 else ((-d) << 1) - 1
        if self._n + _size(z) + _size(code + 1) > Block.LIMIT + 20:  # (_BUF's size)
            return False  # (a t or code far beyond any game's: only damage makes one)
        n = _put(z, self._n)
        self._n = _put(code + 1, n)
        self._t = t
        self.last = seq
        return True

    def __len__(self):
        return self.last - self.first + 1

    def text(self):
        raw = bytes(memoryview(_BUF)[:self._n])  # type: ignore[arg-type]
        b64 = binascii.b2a_base64(raw).decode().strip()
        return "%s %d %s" % (self.game, self.first, b64)


_BUF = None  # the records of the Block being packed


def _size(v):
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


def _put(v, i):
    """LEB128 varint v into the shared buffer at i; the index after it."""
    while v >= 0x80:
        _BUF[i] = (v & 0x7F) | 0x80
        v >>= 7
        i += 1
    _BUF[i] = v
    return i + 1


def block_text(p):
    """An `r` payload from a Block (or, for tests, {"game", "first", "records": [(t, code)]})."""
    if not isinstance(p, Block):
        b = Block(p["game"], p["first"])
        for t, code in p["records"]:
            b.add(b.last + 1, t, code)
        p = b
    return p.text()
