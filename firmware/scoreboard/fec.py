# Forward error correction for the frames a board sends on a noisy line (docs/serial-protocol.md,
# "Coded frames"): Reed-Solomon over GF(2^8), the field's usual parameters (the primitive
# polynomial x^8+x^4+x^3+x^2+1, 0x11d; generator 2; first consecutive root 1 = 2^0), systematic,
# so the frame's own text goes on the wire as it is and the parity follows it. The host corrects
# what the line damaged (chalk/fec.py); the board only encodes. Loaded when the host first asks
# for coding: a board on a clean line never carries it.
#
# The work is sliced: Code builds its table a part a call, and Coder computes the parity of a
# frame a few bytes a call, so no step of the main loop grows with a frame (the link writes the
# frame's text while the parity is being worked out). Nothing here allocates per byte: the
# remainders are small ints (24 bits each, also on a 32-bit port), the table one array.
# Runs unchanged on MicroPython and CPython.

import binascii
from array import array

PRIM = 0x11D
NSYM_MIN = 2  # parity symbols per codeword (even: each pair corrects one symbol)
NSYM_MAX = 32
SPAN_MIN = 16  # data bytes per codeword
SPAN_MAX = 223  # + 32 parity = 255 symbols, the longest codeword of GF(2^8)
# A step's size, each about 10-20 us of the unix port's Python here, 2-3 ms on the chip (under
# the 10 ms step budget: bench/bench_esp32.py): table ints a step of Code.build(), and the
# bytes a step of Coder.step() takes, WORK over the remainder's chunks (the work per byte).
_TABLE_STEP = 24
WORK = 60
HEX_STEP = 2  # codewords' parity written in hex a step (a long frame has dozens)


def mul(a, b):
    """a * b in GF(2^8) (0x11d), by shifts: no table."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a & 0x100:
            a ^= PRIM
    return r


def generator(nsym):
    """The generator polynomial (x - 2^0)(x - 2^1)...(x - 2^(nsym-1)), highest degree first:
    nsym + 1 coefficients, the first 1."""
    g = [1]
    root = 1
    for _ in range(nsym):
        out = g + [0]
        for j in range(len(g)):
            out[j + 1] ^= mul(g[j], root)
        g = out
        root = mul(root, 2)
    return g


class Code:
    """A code: `nsym` parity symbols per codeword of at most `span` data bytes. Its table holds,
    for each value f of the feedback byte, f times the generator's coefficients, packed three
    bytes to an int (the remainder's chunks): 256 * ceil(nsym / 3) ints. build() makes it a part
    a call; ready() says when it is whole."""

    def __init__(self, nsym, span):
        if type(nsym) is not int or not NSYM_MIN <= nsym <= NSYM_MAX or nsym % 2:
            raise ValueError("nsym must be 0 (plain frames) or an even number from %d to %d "
                             "(parity symbols a codeword)" % (NSYM_MIN, NSYM_MAX))
        if type(span) is not int or not SPAN_MIN <= span <= SPAN_MAX or span + nsym > 255:
            raise ValueError("span must be from %d to %d (data bytes a codeword), with nsym + "
                             "span at most 255" % (SPAN_MIN, SPAN_MAX))
        self.nsym = nsym
        self.span = span
        self.chunks = (nsym + 2) // 3
        self.name = "%d/%d" % (nsym, span)
        self._table = None  # made at the first step of build()
        # Made a part a step: the generator (a root a step), the rows of the eight powers of
        # two (a row a step; every other row is a sum, XOR, of them), then the table's rows.
        self._g = [1]
        self._root = 1
        self._basis = []
        self._next = 1  # the next table row to fill (row 0 is all zeros)

    def ready(self):
        return self._next >= 256

    def build(self):
        """One step of making the table; True once it is whole."""
        c = self.chunks
        if self._table is None:
            self._table = array("I", bytes(4 * 256 * c))
            return False
        if len(self._g) <= self.nsym:
            g = self._g
            out = g + [0]
            for j in range(len(g)):
                out[j + 1] ^= mul(g[j], self._root)
            self._g = out
            self._root = mul(self._root, 2)
            return False
        if len(self._basis) < 8:
            g = self._g
            v = 1 << len(self._basis)
            row = [mul(g[j + 1], v) for j in range(self.nsym)] + [0] * (3 * c - self.nsym)
            self._basis.append([(row[3 * i] << 16) | (row[3 * i + 1] << 8) | row[3 * i + 2]
                                for i in range(c)])
            return False
        t = self._table
        f = self._next
        stop = f + _TABLE_STEP // c
        stop = stop if stop < 256 else 256
        basis = self._basis
        while f < stop:
            low = f & -f  # the lowest bit set: row f = row (f - low) ^ row low
            b = 0
            while (1 << b) != low:
                b += 1
            rest = (f - low) * c
            row = basis[b]
            for i in range(c):
                t[f * c + i] = t[rest + i] ^ row[i]
            f += 1
        self._next = f
        if f >= 256:
            self._basis = self._g = None
        return f >= 256

    def layout(self, size):
        """(codewords, parity characters) of a coded frame whose data is `size` bytes."""
        m = (size + self.span - 1) // self.span
        return m, 2 * self.nsym * m


class Coder:
    """A coded frame being made from a frame line (its number n, and the line, "\\n" at the
    end): its text (the `z` frame up to the parity: the envelope's prefix, the code, the frame)
    goes on the wire at once, while step() works out the parity over its bytes, interleaved over
    m = ceil(len / span) codewords: byte i belongs to codeword i % m, so a burst of damage is
    shared out among them. tail() is the rest of the line once done(): the parity, codeword by
    codeword, in lowercase hex, then the envelope's CRC."""

    def __init__(self, code, n, line):
        self.code = code
        self.text = "~c2 %d z %s %s" % (n, code.name, line[:-1] if line[-1:] == "\n" else line)
        self.data = self.text.encode()  # the bytes on the wire
        self.m = (len(self.data) + code.span - 1) // code.span or 1
        # One remainder per codeword: `chunks` ints of 24 bits, the most significant first
        # (made at the first step: a step of their own, for a long frame's many codewords).
        self._r = None
        self._i = 0
        self._hex = []  # type: list  # the codewords' parity in hex so far (hex_step)

    def done(self):
        return self._i >= len(self.data)

    def hexed(self):
        """True once every codeword's parity is written in hex (after done())."""
        return len(self._hex) >= self.m

    def hex_step(self, n=HEX_STEP):
        """Write the next n codewords' parity in hex (a long frame's, a few a step); True once
        all are."""
        out = self._hex
        regs = self._r or ()
        nsym2 = 2 * self.code.nsym
        k = len(out)
        stop = k + n if k + n < self.m else self.m
        while k < stop:
            out.append("".join(["%06x" % v for v in regs[k]])[:nsym2])
            k += 1
        return k >= self.m

    def step(self, n=None):
        """Take up to n more bytes (default: a step's worth, WORK over the chunks); True once
        every byte is in."""
        if self._r is None:
            self._r = [[0] * self.code.chunks for _ in range(self.m)]
            if n is None:
                return not self.data  # (a step's work: the next takes the bytes)
        if n is None:
            n = WORK // self.code.chunks
        data = self.data
        i = self._i
        stop = i + n if i + n < len(data) else len(data)
        t = self.code._table
        c = self.code.chunks
        m = self.m
        regs = self._r
        last = c - 1
        while i < stop:
            r = regs[i % m]
            f = ((r[0] >> 16) ^ data[i]) * c
            for k in range(last):
                r[k] = (((r[k] & 0xFFFF) << 8) | (r[k + 1] >> 16)) ^ t[f + k]
            r[last] = ((r[last] & 0xFFFF) << 8) ^ t[f + last]
            i += 1
        self._i = i
        return i >= len(data)

    def hex(self):
        while not self.hexed():
            self.hex_step(self.m)
        return "".join(self._hex)

    def tail(self):
        par = self.hex()
        crc = binascii.crc32(b" " + par.encode(), binascii.crc32(self.data)) & 0xFFFFFFFF
        return " %s %08x\n" % (par, crc)


def ask(code, nsym, span, whole):
    """The code a `parity` command asks for (nsym 0: None, plain frames), the one in use kept
    when it is the same; `whole`: its table made now (else a part a step, by the link)."""
    if nsym == 0:
        return None
    if code is not None and code.nsym == nsym and code.span == span:
        return code
    code = Code(nsym, span)
    while whole and not code.build():
        pass
    return code


def name(code):
    return code.name if code is not None else None


def encode(code, line, n=0):
    """The coded line of a frame line at once (tools and tests; the board slices it)."""
    while not code.ready():
        code.build()
    c = Coder(code, n, line)
    c.step(len(c.data))
    return c.text + c.tail()


def parity(link, cid, args):
    """The host asks for coded frames (nsym parity symbols per codeword of at most `span`
    data bytes), or for plain ones again (nsym 0). The change holds for every frame made
    after it, its own reply included; during a journal stream that reply follows the
    stream's ok (its frames are numbered one after the other). A board short of memory for
    the code's table refuses, and goes on as it was."""
    try:
        link._code = ask(link._code, args["nsym"], args["span"], link.budget is None)
    except ValueError as e:
        return link._err(cid, "args", "parity: %s" % e)
    except MemoryError as e:
        return link._failed(cid, e)
    payload = {"id": cid, "result": {"parity": name(link._code)}}
    if link._stream is not None:
        link._held.append(("ok", payload))
        return ("ok", payload)
    return link._ok(cid, payload["result"])


def start(link, n, line):
    """A coded frame on the link's queue (scoreboard/link.py): its text goes on the wire at once,
    its tail once the parity is made (link.step(); without a budget, now)."""
    try:
        coder = Coder(link._code, n, line)
    except MemoryError:
        # No block for the coded frame's text now (a heap in pieces): the frame goes plain and
        # the code is given up, as for a parity the heap cannot finish (linkwork.shed), so the
        # frame still reaches the host, and `hello` no longer names a code.
        link._code = None
        link._out.append(line)
        link._out_size += len(line)
        return
    link._coding = coder
    link._out.append(coder.text)
    link._out_size += len(coder.text)
    link._stats["coded"] = link._stats.get("coded", 0) + 1
    if link.budget is None:
        coder.step(len(coder.data))
        finish(link)


def finish(link):
    """The parity of the link's coded frame is made: its tail (parity, check) goes after it."""
    tail = link._coding.tail()
    link._coding = None
    link._out.append(tail)
    link._out_size += len(tail)
