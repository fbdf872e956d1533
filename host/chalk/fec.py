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
