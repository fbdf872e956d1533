# The hash chain over a game's journal records, and the board's signature of its head
# (docs/journal.md, docs/match-log.md). Shared by the board and the host: the board keeps the
# chain as it journals, the host recomputes it from what it archived or from a match log.
#
#     link_0 = SHA-256(32 zero bytes || canon(header record))
#     link_n = SHA-256(link_{n-1} || canon(record n))        every action, undo included, and
#                                                             the end record
#     sig    = ECDSA-P256-SHA256(board key, "chalk-head-2 " || device || " " || seq || " " || link)
#              (scoreboard/sign.py; older firmware: HMAC-SHA256 under a key from the host,
#              "chalk-head-1", which chalk still checks as legacy)
#
# A record is what the link sends as a `rec` payload: an action is its dict with "seq" and "t";
# a header is {"seq", "type": "H", "header": {...}}; an end is {"seq", "type": "E", "end":
# {...}}. The keys that carry the chain itself are not part of it: "link" on an action, and
# "head", "kid", "sig" in an end payload (where firmware with host-made keys put its signature).
#
# canon() is this module's own JSON writer: sorted keys, no spaces, integers only (no floats:
# their digits differ between ports), strings as raw UTF-8 with only '"', '\' and control
# characters escaped (\" \\ \b \f \n \r \t, others \u00XX): the bytes CPython's
# json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) writes.
# MicroPython dicts do not keep order and the two json modules differ in escapes, so nothing
# here relies on either. MicroPython has hashlib.sha256 (in hardware on the
# ESP32).

import binascii
import hashlib

from .journal import _END, _LAST, _RECS, _W, Journal, JournalError

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

ZERO = b"\x00" * 32
_CHAIN_KEYS = ("link", "sig", "head", "kid")  # never hashed in an end: they are the chain
_MAX_DEPTH = const(8)
_HEX = "0123456789abcdef"
# The escapes JSON has a short form for (as CPython's json writes them); other control
# characters are \u00XX.
_SHORT = '"\\\b\f\n\r\t'
_SHORT_AS = '"\\bfnrt'


# A value the canonical encoding does not take (a float, a non-string key, too deep). A plain
# ValueError: a class of its own would cost the board RAM for nothing.
CanonError = ValueError


def _str(s, out):
    # Over the UTF-8 bytes, not the characters: on MicroPython each character of a str taken
    # out of it is interned, so hashing players' names char by char would grow the qstr pool
    # by every letter ever seen (a pool that grows late, on a heap in pieces, finds no block).
    # Every byte that needs an escape is ASCII, so the bytes between two are whole characters.
    b = s.encode()
    out.append('"')
    start = 0
    n = len(b)
    for i in range(n):
        o = b[i]
        if o == 34 or o == 92 or o < 32:
            if i > start:
                out.append(b[start:i].decode())
            e = _SHORT.find(chr(o))
            if e >= 0:
                out.append("\\" + _SHORT_AS[e])
            else:
                out.append("\\u00" + _HEX[o >> 4] + _HEX[o & 15])
            start = i + 1
    if start < n:
        out.append(b[start:].decode() if start else s)
    out.append('"')


def _dump(obj, out, depth):
    t = type(obj)
    if t is str:
        _str(obj, out)
    elif obj is None:
        out.append("null")
    elif t is bool:
        out.append("true" if obj else "false")
    elif t is int:
        out.append(str(obj))
    elif depth >= _MAX_DEPTH:
        raise CanonError("nested deeper than %d" % _MAX_DEPTH)
    elif t is dict:
        keys = list(obj)
        for k in keys:
            if type(k) is not str:
                raise CanonError("keys must be strings, not %r" % (k,))
        keys.sort()
        out.append("{")
        for i in range(len(keys)):
            if i:
                out.append(",")
            _str(keys[i], out)
            out.append(":")
            _dump(obj[keys[i]], out, depth + 1)
        out.append("}")
    elif t is list or t is tuple:
        out.append("[")
        for i in range(len(obj)):
            if i:
                out.append(",")
            _dump(obj[i], out, depth + 1)
        out.append("]")
    else:
        raise CanonError("%s is not allowed in a chained record (integers, strings, true, "
                         "false, null, lists and objects only)" % t.__name__)


def canon(obj):
    """The canonical bytes of a JSON value (see the top of this module)."""
    out = []
    _dump(obj, out, 0)
    return "".join(out).encode()


def record(seq, kind, payload):
    """The chained form of a journal record: kind "H", "A" or "E" and its payload."""
    if kind == "A":
        rec = {}
        for k in payload:
            # Only the link a log line carries is left out: any other key on an action line,
            # even one named like the chain's, is the action's and covered.
            if k != "link" and k != "seq":
                rec[k] = payload[k]
        rec["seq"] = seq
        return rec
    if kind == "H":
        return {"seq": seq, "type": "H", "header": payload}
    end = {}
    for k in payload:
        if k not in _CHAIN_KEYS:
            end[k] = payload[k]
    return {"seq": seq, "type": "E", "end": end}


class _Feed:
    # canon()'s pieces hashed as they come: no list of them and no joined copy, so a long
    # header or record asks the heap for no large block.
    def __init__(self, h):
        self.h = h

    def append(self, piece):
        self.h.update(piece.encode())


def step(prev, rec):
    """link_n from link_{n-1} (bytes; ZERO before the header) and record n (chained form)."""
    h = hashlib.sha256(prev)
    _dump(rec, _Feed(h), 0)
    return h.digest()


def hexlify(b):
    return binascii.hexlify(b).decode()


class Chain:
    """The chain of the game being journaled: feed it every record in order."""

    def __init__(self):
        self.link = ZERO
        self.seq = 0

    def reset(self):
        self.link = ZERO
        self.seq = 0

    def add(self, seq, kind, payload):
        self.link = step(self.link, record(seq, kind, payload))
        self.seq = seq
        return self.link


class ChainedJournal(Journal):
    """A journal that keeps the chain of its newest game's records (docs/journal.md), and the
    chain of games: each new game's header names its predecessor, the last record of the
    board's previous game, as "prev": {"game_no", "seq", "link"} (null for a board's first
    game), so a game left out of a set of logs, or given twice, shows (docs/league.md).

    `remembered`: (game number, seq, link) of the newest finished game as the board's NVS
    keeps it (sign.Signer.last), set before boot(): it carries the chain of games, and the game
    numbers, over a journal that was erased or put back."""

    def __init__(self, root):
        Journal.__init__(self, root)
        self.chain = Chain()
        self._made = None  # the record append() writes, worked out beforehand (make)
        self.last = None  # (game number, seq, link) of the newest finished game
        self.remembered = None

    def boot(self, on_action=None):
        r = Journal.boot(self, on_action)
        # The chain of the game in progress, rebuilt from its good records (a torn tail was
        # cut off by the boot: the chain goes on from the last whole record). A second pass
        # over the file, streamed like the first: the exact seqs, whatever they are. A record
        # the chain cannot take (a fraction, journaled by older firmware) raises JournalError:
        # the app then stops that game and plays on in a new one (App.boot).
        self.chain.reset()
        if r.game_no is not None:
            b = self._row(r.game_no)
            try:
                for seq, kind, payload in self._records(r.game_no, self._t[b + _END]):
                    self.chain.add(seq, kind, payload)
            except CanonError as e:
                raise JournalError("game %d cannot be chained: %s" % (r.game_no, e))
        try:
            self.last = self._newest_finished(r.game_no)
        except CanonError:
            self.last = None  # a finished game older firmware journaled with a fraction
        mem = self.remembered
        if mem is not None and (self.last is None or mem[0] > self.last[0]):
            self.last = mem  # the journal was erased, or an older one put back
        if self.last is not None and self.last[0] > self._max_no:
            self._max_no = self.last[0]  # game numbers go on from the board's last game
        return r

    def _newest_finished(self, open_no):
        t = self._t
        b = len(t) - _W
        if open_no is not None:
            b -= _W  # the file before the game in progress
        if b < 0:
            return None
        no, last = t[b], t[b + _LAST]
        mem = self.remembered
        if mem is not None and mem[0] == no and mem[1] == last:
            return mem  # what NVS keeps is this file's end: no pass over it
        if not t[b + _RECS]:
            return None
        link = ZERO
        for seq, kind, payload in self._records(no, t[b + _END]):
            if kind == "H":
                link = ZERO
            link = step(link, record(seq, kind, payload))
        return no, last, link

    def _link_of(self, prev, seq, kind, payload):
        # Worked out before the record is written: one the chain refuses never reaches flash.
        try:
            return step(prev, record(seq, kind, payload))
        except CanonError as e:
            raise JournalError("the record cannot be chained (%s): not written" % e)

    def new_game(self, header):
        """Start a game (Journal.new_game); `header` gets its "prev" here (the caller's dict:
        what it sends on is what was journaled)."""
        last = self.last
        header["prev"] = None if last is None else {
            "game_no": last[0], "seq": last[1], "link": hexlify(last[2])}
        payload = dict(header)
        payload["game_no"] = self._max_no + 1
        link = self._link_of(ZERO, self._seq + 1, "H", payload)
        no, seq = Journal.new_game(self, header)
        self.chain.link = link
        self.chain.seq = seq
        return no, seq

    def make(self, kind, payload):
        """A record worked out now, written later by append(action, made) if nothing was
        written meanwhile (a generator: its chain link and its line, a step each on a board;
        its value [seq, line, the link before, its link])."""
        seq = self._seq + 1
        prev = self.chain.link
        link = self._link_of(prev, seq, kind, payload)
        yield
        return [seq, Journal._line(self, kind, payload), prev, link]

    def append(self, action, made=None):
        """Journal.append, with `made` (make()) used if nothing was written since."""
        if made is not None and (made[0] != self._seq + 1 or made[2] != self.chain.link):
            made = None
        self._made = made
        try:
            return Journal.append(self, action)
        finally:
            self._made = None

    def _line(self, kind, payload):
        made = self._made
        return made[1] if made is not None else Journal._line(self, kind, payload)

    def games(self):
        """The numbers of the games kept, oldest first (without stats()' look at the files and
        at the filesystem's free space: a walk of the flash on LittleFS)."""
        t = self._t
        return [t[b] for b in range(0, len(t), _W)]

    def _write(self, kind, payload):
        made = self._made
        if made is not None:
            link = made[3]  # worked out beforehand (make), nothing written since
        else:
            link = self._link_of(self.chain.link, self._seq + 1, kind, payload)
        seq = Journal._write(self, kind, payload)
        self.chain.link = link
        self.chain.seq = seq
        if kind == "E":
            t = self._t
            self.last = (t[len(t) - _W], seq, link)
        return seq

    def stop_open(self):
        """Leave the game in progress as it is on flash, unfinished, and write no more to it:
        the app cannot play it on (a record it cannot read). Its file is kept, as a game stopped
        by damage is; the next new_game() starts a new file, and the next boot reports the old
        one as stopped ("no end record, a later game exists"). Returns its game number."""
        if not self._booted or not self._open:
            return None
        if self._f is not None:
            self._f.close()
            self._f = None
        no = self._t[len(self._t) - _W]
        self._open = False
        self._stopped.append(no)
        return no

    def game_records(self, game_no):
        """(seq, type, payload) of every good record of a kept game, streamed."""
        b = self._row(game_no)
        if b < 0:
            return iter(())
        return self._records(game_no, self._t[b + _END])

    def game_last(self, game_no):
        """The last good seq of a kept game, or None."""
        b = self._row(game_no)
        return self._t[b + _LAST] if b >= 0 and self._t[b + _RECS] else None
