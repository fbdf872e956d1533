"""Coded frames, the host's side (docs/serial-protocol.md, "Coded frames"): on a noisy line the
host asks the board to send every frame with Reed-Solomon parity after it (the `fec` command),
and corrects here what the line damaged, with a maintained decoder (reedsolo). The board's
encoder is its own code (scoreboard/fec.py); both use GF(2^8) with 0x11d, generator 2, first
root 2^0, which are reedsolo's defaults.

A coded frame is one line, a frame of type `z` under the protocol's envelope:

    ~c2 42 z 16/96 ~c2 42 rec {"a":"turn",...} 1683ecd7 5b0e...c1 9a3f00d2
    |              |                                    |         |
    |              the frame itself, as the board       parity    CRC-32 of all before,
    |              would send it uncoded                (hex)     as in every frame
    the code: 16 parity symbols per codeword of at most 96 data bytes

The data the parity covers is the line up to the end of the frame inside it (the envelope's
prefix included), interleaved over ceil(len / 96) codewords (byte i in codeword i % m). A line
whose check fails is corrected from its length alone: byte damage keeps a line's length, and the
length, with the code, tells where the data ends and the parity begins. Bytes that cannot be in
a frame (control bytes, or any non-ASCII byte at first) and parity characters that are not hex
are erasures, which cost the code half what an error does. A frame corrected is accepted only if
its own CRC holds, so a miscorrection is never taken for a frame.
"""

import binascii

import reedsolo

from scoreboard import frames
from scoreboard.fec import NSYM_MAX, NSYM_MIN, SPAN_MAX, SPAN_MIN

_MARK = b"~c%d " % frames.VERSION
_HEXDIGITS = frozenset(b"0123456789abcdef")


class Code:
    """nsym parity symbols per codeword of at most span data bytes; name "nsym/span"."""

    __slots__ = ("nsym", "span", "name")

    def __init__(self, nsym, span):
        if type(nsym) is not int or type(span) is not int or nsym % 2 or \
                not NSYM_MIN <= nsym <= NSYM_MAX or not SPAN_MIN <= span <= SPAN_MAX or \
                nsym + span > 255:
            raise ValueError("no such code %r/%r" % (nsym, span))
        self.nsym = nsym
        self.span = span
        self.name = "%d/%d" % (nsym, span)

    def __eq__(self, other):
        return isinstance(other, Code) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "Code(%s)" % self.name

    @classmethod
    def parse(cls, text):
        """The Code of a name ("16/96"), or None if it names none."""
        if type(text) is bytes:
            text = text.decode("ascii", "replace")
        if type(text) is not str or text.count("/") != 1:
            return None
        a, b = text.split("/")
        if not (a.isdigit() and b.isdigit() and len(a) <= 3 and len(b) <= 3):
            return None
        try:
            return cls(int(a), int(b))
        except ValueError:
            return None

    def parity_chars(self, size):
        """Hex characters of the parity of `size` bytes of data."""
        return 2 * self.nsym * ((size + self.span - 1) // self.span)


_CODECS = {}


def _codec(nsym):
    c = _CODECS.get(nsym)
    if c is None:
        c = _CODECS[nsym] = reedsolo.RSCodec(nsym, nsize=255, fcr=0, prim=0x11D, generator=2)
    return c


def _parity(code, data):
    """The parity (bytes) the board sends for `data`, codeword by codeword (for wrap())."""
    m = (len(data) + code.span - 1) // code.span or 1
    rs = _codec(code.nsym)
    out = bytearray()
    for j in range(m):
        cw = bytes(data[j::m])
        out += bytes(rs.encode(cw))[len(cw):]
    return bytes(out)


def wrap(line, code):
    """The coded line (bytes, no line end) a board sends for a frame line: what the board's own
    encoder makes (tests, and a reference for it)."""
    if type(line) is str:
        line = line.encode()
    line = line.rstrip(b"\r\n")
    n = line.split(b" ", 2)[1]
    data = _MARK + n + b" z " + code.name.encode() + b" " + line
    body = data + b" " + binascii.hexlify(_parity(code, data))
    return body + b" %08x" % (binascii.crc32(body) & 0xFFFFFFFF)


def _inner(data, code):
    """The frame inside the data of a coded line (bytes), if the prefix names this code, the
    same frame number as the frame inside, and that frame's own check holds; else None."""
    if data[:len(_MARK)] != _MARK:
        return None
    parts = data.split(b" ", 4)
    if len(parts) < 5 or parts[2] != b"z" or parts[3] != code.name.encode():
        return None
    inner = parts[4]
    if inner[:len(_MARK)] != _MARK or inner.split(b" ", 2)[1:2] != [parts[1]]:
        return None
    try:
        if frames.decode(inner) is None:
            return None
    except (frames.Corrupt, frames.WrongVersion):
        return None
    return inner


def unwrap(line):
    """(frame inside, Code) of an intact coded line (its envelope's check holds), else None."""
    if line[:len(_MARK)] != _MARK or len(line) < 24 or line[-9:-8] != b" ":
        return None
    parts = line.split(b" ", 4)
    if len(parts) < 5 or parts[2] != b"z":
        return None
    try:
        crc = int(line[-8:], 16)
    except ValueError:
        return None
    if binascii.crc32(line[:-9]) & 0xFFFFFFFF != crc:
        return None
    code = Code.parse(parts[3])
    if code is None:
        return None
    body = line[:-9]
    cut = body.rfind(b" ")
    data = body[:cut]
    if len(body) - cut - 1 != code.parity_chars(len(data)):
        return None
    inner = _inner(data, code)
    return (inner, code) if inner is not None else None


def layout(size, code):
    """The data length of a coded line of `size` bytes (line end not counted) under `code`, or
    None when no frame is that long."""
    m = 1
    while True:
        d = size - 10 - 2 * code.nsym * m
        if d < len(_MARK) + 14:
            return None
        if (d + code.span - 1) // code.span == m:
            return d
        if (d + code.span - 1) // code.span < m:
            return None
        m += 1


def repair(line, codes):
    """(frame inside, Code, symbols corrected) of a damaged coded line, trying each of `codes`,
    or None when it cannot be corrected (or is no coded frame at all)."""
    for code in codes:
        d = layout(len(line), code)
        if d is None:
            continue
        got = _correct(line, d, code)
        if got is not None:
            return got[0], code, got[1]
    return None


def _correct(line, d, code):
    nsym = code.nsym
    m = (d + code.span - 1) // code.span
    data = line[:d]
    par = line[d + 1:d + 1 + 2 * nsym * m]
    psym = bytearray(nsym * m)
    perase = set()
    for i in range(nsym * m):
        hi, lo = par[2 * i], par[2 * i + 1]
        if hi in _HEXDIGITS and lo in _HEXDIGITS:
            psym[i] = int(par[2 * i:2 * i + 2], 16)
        else:
            perase.add(i)
    rs = _codec(nsym)
    # First the bytes no frame has as erasures (any byte outside printable ASCII), then only
    # the control bytes (a name in UTF-8 has bytes above 127), then none.
    for suspect in (lambda b: b < 32 or b > 126, lambda b: b < 32 or b == 127, None):
        out = bytearray(d)
        fixed = 0
        for j in range(m):
            cw = bytearray(data[j::m])
            k = len(cw)
            erase = [i for i in range(k) if suspect is not None and suspect(cw[i])]
            erase += [k + i - j * nsym for i in range(j * nsym, (j + 1) * nsym) if i in perase]
            cw += psym[j * nsym:(j + 1) * nsym]
            if len(erase) > nsym:
                break
            try:
                msg, _full, errata = rs.decode(cw, erase_pos=erase or None)
            except reedsolo.ReedSolomonError:
                break
            out[j::m] = msg
            fixed += len(errata)
        else:
            inner = _inner(bytes(out), code)
            if inner is not None:
                return inner, fixed
    return None


# The codes the host asks for, by the share of bytes the line damages (measured: a frame of
# 500 bytes and one of 50, both noise models, fail to be corrected less than once in a few
# hundred at the top of each band; tests/test_coded_frames.py).
LEVELS = ((0.002, Code(8, 200)), (0.008, Code(12, 160)), (0.02, Code(16, 96)),
          (0.04, Code(24, 96)), (None, Code(32, 96)))
OFF_S = 60.0  # seconds without a damaged byte before the host asks for plain frames again
_WINDOW = 24000  # bytes the rate is judged over (halved beyond: recent bytes weigh most)
_ASK_EVERY = 0.4  # seconds at least between two `parity` commands not yet answered
# Seconds no code is asked for once the board turned one down for want of memory (its table, a
# coded frame's parity: docs/serial-protocol.md), or was asked for plain frames to spare its
# heap: then asked again, in case its heap has room by now (once a minute, never at every
# request).
HOLD_S = 60.0


class Coding:
    """The host's end of coded frames on one connection (BoardLink): how badly the line
    damages bytes, the code to ask the board for (None: plain frames, on a clean line), the
    code the board uses now, and the repair of damaged lines, including one cut in two by a
    byte the line turned into a line end."""

    def __init__(self, clock):
        self._clock = clock
        self.board = None  # the code the board sends with now (None: plain frames)
        self.ok = True  # the board takes `parity` (older firmware answers `unknown`)
        self.asked = {}  # command id -> the code a `parity` command asked for
        self._sent = None  # when the last `parity` went, and what it asked for
        self._bytes = 0.0
        self._errors = 0.0
        # Plain lines: [whole, damaged, bytes]. A damaged plain line tells only that one of its
        # bytes at least was hit: the share of lines hit, over their length, tells the rate.
        self._plain = [0.0, 0.0, 0.0]
        self._damaged = 0  # damaged lines since the last clean spell (a long one counts 2)
        self._last_error = None  # when a damaged byte was last seen
        self._frag = None  # the last line nothing could read (the first half of a cut one?)
        self._recent = []  # codes asked for or seen lately: a repair tries each
        self._held = None  # no code asked for until then (a board short of memory for one)
        self.repaired = 0  # lines corrected
        self.symbols = 0  # bytes corrected in them

    def note(self, size, errors, plain=False):
        """A line of `size` bytes came, `errors` of them damaged (`plain`: a frame without
        parity, whole or not; its errors are at least one if it was damaged)."""
        self._bytes += size
        self._errors += errors
        if plain:
            self._plain[1 if errors else 0] += 1
            self._plain[2] += size
        if errors:
            # A damaged line long enough to be a reply or a block counts twice: one is enough
            # to ask for parity (a short glitch once is not).
            self._damaged += 2 if size >= 64 else 1
            self._last_error = self._clock()
        if self._bytes > _WINDOW:
            self._bytes /= 2
            self._errors /= 2
        if self._plain[2] > _WINDOW:
            for i in range(3):
                self._plain[i] /= 2

    def rate(self):
        """The share of bytes the line damages, as far as it has been seen."""
        rate = self._errors / max(self._bytes, 1000.0)
        whole, damaged, size = self._plain
        if damaged >= 2 and size:
            # p from the share of plain lines hit: 1 - (1 - p) ** length = share.
            share = damaged / (whole + damaged)
            length = size / (whole + damaged)
            p = 1 - (1 - share) ** (1 / length) if share < 1 else 0.05
            rate = max(rate, p)
        return rate

    def want(self):
        """The code to ask for now: None on a clean line (no damage seen, or none for OFF_S),
        or while held (hold())."""
        if self._held is not None and self._clock() < self._held:
            return None
        if self._last_error is None or self._damaged < 2:
            return None
        if self._clock() - self._last_error > OFF_S:
            self._damaged = 0
            return None
        rate = self.rate()
        for top, code in LEVELS:
            if top is None or rate <= top:
                return code
        return LEVELS[-1][1]

    def due(self):
        """The code to ask for, if the board is not using it and no request for it is on its
        way: (True, code or None); else (False, None). A stronger code at once; a weaker one
        only two bands down (a rate near a band's edge does not switch back and forth)."""
        want = self.want()
        if not self.ok or want == self.board:
            return False, None
        if want is not None and self.board is not None and want.nsym < self.board.nsym:
            rank = [c for _, c in LEVELS]
            if self.board in rank and rank.index(self.board) - rank.index(want) < 2:
                return False, None
        sent = self._sent
        if sent is not None and sent[1] == want and self._clock() - sent[0] < _ASK_EVERY:
            return False, None
        return True, want

    def sent(self, cid, code):
        self.asked[cid] = code
        if len(self.asked) > 16:
            self.asked.pop(next(iter(self.asked)))
        self._sent = (self._clock(), code)
        self._remember(code)

    def answered(self, cid, typ, payload):
        """True if this is the reply to a `parity` command (then taken: the board's code)."""
        if cid not in self.asked:
            return False
        self.asked.pop(cid)
        if typ == "ok":
            result = payload.get("result") if type(payload.get("result")) is dict else {}
            self.set_board(Code.parse(result.get("parity")))
        elif payload.get("code") in ("unknown", "unsupported", "args"):
            self.ok = False  # firmware before coded frames: plain frames it is
        elif payload.get("code") == "refused":
            self.hold()  # no room for the code's table: asked again in a while, not at once
        return True

    def hold(self, seconds=HOLD_S):
        """Ask for no code for `seconds`: a board short of memory for one (its table, or a
        coded frame's parity) gets plain frames, asked for with the next request if it codes
        now, and is asked for a code again only after that."""
        self._held = self._clock() + seconds

    def plain(self):
        """An intact plain frame came. From a board that codes its frames (neither restarted
        nor asked for plain ones), it means the board gave coding up, its heap having no block
        for it (scoreboard/linkwork.py shed): it is taken as plain, and not asked for a code
        again at once (it would give it up again: held)."""
        if self.board is None:
            return
        if None not in self.asked.values():
            self.hold()
        self.board = None

    def set_board(self, code):
        if code is not None and self.board is None:
            self._plain = [0.0, 0.0, 0.0]  # from now on the corrections count the damage
        self.board = code
        self._remember(code)

    def _remember(self, code):
        if code is not None:
            if code in self._recent:
                self._recent.remove(code)
            self._recent.insert(0, code)
            del self._recent[4:]

    def codes(self):
        """The codes a damaged line may be in (the board's first)."""
        out = [self.board] if self.board is not None else []
        return out + [c for c in self._recent if c != self.board]

    def repair(self, line):
        """The frames (bytes) a damaged line holds once corrected, as [(frame, code, fixed)]:
        the line itself; a line cut in two by a byte turned into a line end (joined with the
        line before, that byte an erasure); two lines run together (a line end turned into
        another byte: cut where the first one's check ends). [] when nothing could be."""
        codes = self.codes()
        if not codes:
            return []
        got = repair(line, codes)
        if got is not None:
            self._frag = None
            return [got]
        frag = self._frag
        self._frag = line
        if frag is not None and len(frag) + len(line) < 8192:
            got = repair(frag + b"\x00" + line, codes)
            if got is not None:
                self._frag = None
                return [got]
        # Two lines run together: the byte before the second one's marker was the first one's
        # line end. The marker also begins the frame inside a coded one: each place is tried.
        j = line.find(_MARK, 1)
        tries = 0
        while j > 0 and tries < 4:
            tries += 1
            first = repair(line[:j - 1], codes) or unwrap_code(line[:j - 1])
            if first is not None:
                self._frag = None
                rest = line[j:]
                second = unwrap_code(rest) or repair(rest, codes)
                return [first] + ([second] if second is not None else [])
            j = line.find(_MARK, j + 1)
        return []


def unwrap_code(line):
    """unwrap() as repair() answers: (frame, code, 0), or None."""
    u = unwrap(line)
    return (u[0], u[1], 0) if u is not None else None
