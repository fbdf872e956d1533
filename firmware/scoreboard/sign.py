# The board's own signing key and what it signs (docs/league.md, docs/match-log.md).
#
# At its first boot the board makes an ECDSA P-256 key pair (scoreboard/p256.py): the private
# key from its hardware random number generator (board.random), kept in board.nvs (the ESP32's
# NVS partition), never sent over the link; only the public key, its name (kid) and the device
# id are. It signs, with SHA-256 and RFC 6979 nonces:
#
#   a chain head    "chalk-head-2 <device> <seq> " || link_seq (32 bytes)
#                   (at every game's end on its own, and the head of any game it holds when
#                   the host asks: `sign`)
#   an enrolment    "chalk-enrol-1 <device> <public key hex> <since> <challenge hex>"
#                   (`key`: a fresh challenge from the host, so a key enters a key store only
#                   from the board that holds it; `since`: the first game signed with it)
#
# A signature is a few hundred steps of big-number arithmetic (about 1 ms each on an ESP32):
# the Signer queues the work and the main loop steps it between scans (serve.py), so a scan is
# never held up; each signature then goes to the host in a `sig` frame, and is kept for a
# repeat of the request. Nonces are deterministic: the same head always gets the same
# signature, so one lost with a reboot is simply made again.
#
# The board also keeps in its NVS the last record of its newest finished game ("last": game
# number, seq, link), so that the next game's header can name it (its "prev") even after the
# journal was erased: each board's games form one chain (scoreboard/chain.py).

import hashlib

from . import p256
from .chain import hexlify

HEAD_TAG = "chalk-head-2"
ENROL_TAG = "chalk-enrol-1"
_SK = "sk"  # the private key, 32 bytes big-endian
_PK = "pk"  # its public key X || Y, 64 bytes (worked out once, then kept)
_SINCE = "since"  # the game number in progress when the key was made, 4 bytes
_LAST = "last"  # the newest finished game: game number (4), seq (4), link (32)
_KEEP = 4  # signatures kept for repeats of a request
_QUEUE = 4  # signatures waiting at most


def key_id(pub):
    """A board key's public name: 16 hex digits of SHA-256("chalk-p256 " || X || Y)."""
    h = hashlib.sha256(b"chalk-p256 ")
    h.update(pub)
    return hexlify(h.digest())[:16]


def head_message(device, seq, link):
    """What the board signs for a chain head: its device id, the seq the chain ends at, the
    link there."""
    return ("%s %s %d " % (HEAD_TAG, device, seq)).encode() + link


def enrol_message(device, pub_hex, since, challenge):
    """What the board signs for its enrolment: its device id, public key, first game signed
    with that key, and the host's challenge (hex)."""
    return ("%s %s %s %d %s" % (ENROL_TAG, device, pub_hex, since, challenge)).encode()


def sig_hex(r, s):
    return "%064x%064x" % (r, s)


def _u32(b, i):
    return int.from_bytes(b[i:i + 4], "big")


def _get(nvs, key, size):
    """The bytes kept under `key` in the board's NVS (at most `size`), or None if none are."""
    buf = bytearray(size)
    try:
        n = nvs.get_blob(key, buf)
    except OSError:
        return None  # not there (or longer than asked for: not ours)
    return bytes(buf[:n])


def _put(nvs, key, value):
    """Keep `value` under `key`, committed to flash before this returns."""
    nvs.set_blob(key, value)
    nvs.commit()


def remembered(nvs):
    """(game number, seq, link) of the board's newest finished game as its NVS keeps it, or
    None (chain.ChainedJournal.remembered)."""
    b = _get(nvs, _LAST, 40)
    if b is None or len(b) != 40:
        return None
    return _u32(b, 0), _u32(b, 4), b[8:40]


class Busy(Exception):
    """More signatures asked for than wait at once: ask again once one is done."""


class Gone(Exception):
    """A signature of a game the board no longer holds."""


class Signer:
    """The board's key and its queue of signatures. run() from the main loop between scans."""

    def __init__(self, app):
        self.app = app
        self.nvs = app.board.nvs
        self.device = app.board.device_id or ""
        self.pub = None  # X || Y, once known
        self.kid = None
        self.since = 0
        self.made = False  # the key pair was made at this boot
        self._queue = []  # jobs waiting: [kind, game_no, seq, link] or ["enrol", challenge]
        self._job = None
        self._gen = None
        self._done = []  # recent head signatures (reply payloads), newest last
        self._enrol = None  # [challenge, reply or None]
        sk = _get(self.nvs, _SK, 32)
        d = int.from_bytes(sk, "big") if sk is not None and len(sk) == 32 else 0
        if not 1 <= d < p256.N:
            d = self._make()
        self.d = d
        s = _get(self.nvs, _SINCE, 4)
        self.since = _u32(s, 0) if s is not None and len(s) == 4 else 0
        pk = _get(self.nvs, _PK, 64)
        if pk is not None and len(pk) == 64:
            self._set_pub(pk)
        else:
            self._queue.append(["pub"])

    def _make(self):
        # The first boot (or an NVS that lost its key): a new key pair. Its public half is worked
        # out by the main loop (the "pub" job); until then the board signs nothing.
        d = p256.private(self.app.board.random)
        st = self.app.journal.stats()
        games = st["games"]
        since = st["game_no"] or (games[len(games) - 1] + 1 if games else 1)
        nvs = self.nvs
        _put(nvs, _PK, b"")  # an older public key is not this key's
        _put(nvs, _SINCE, since.to_bytes(4, "big"))
        _put(nvs, _SK, d.to_bytes(32, "big"))
        self.made = True
        return d

    def _set_pub(self, pk):
        self.pub = pk
        self.kid = key_id(pk)

    # -- the chain of games ------------------------------------------------------------------
    def ended(self, game_no, seq, link):
        """A game ended at record seq with `link`: kept as the next game's predecessor, and its
        end signed (the `sig` frame follows when it is ready)."""
        _put(self.nvs, _LAST, game_no.to_bytes(4, "big") + seq.to_bytes(4, "big") + link)
        self._add(["head", game_no, seq, link])

    # -- requests ----------------------------------------------------------------------------
    def head(self, game_no=None):
        """The signed head of a game the board holds (default: the one in progress): the reply
        to `sign`. Signed already: the signature; else {"pending": true} and a `sig` frame
        when it is ready. Raises Gone or Busy."""
        j = self.app.journal
        st = j.stats()
        now = st["game_no"]
        if game_no is None:
            game_no = now
            if game_no is None:
                games = st["games"]
                if not games:
                    raise Gone("no game on the board yet")
                game_no = games[len(games) - 1]
        seq = link = None
        if game_no == now:
            seq, link = j.chain.seq, j.chain.link
        elif j.last is not None and j.last[0] == game_no:
            seq, link = j.last[1], j.last[2]
        elif game_no in st["games"]:
            seq = j.game_last(game_no)  # its link is worked out again from its records
        else:
            raise Gone("game %d is no longer on the board (rotated out once archived)"
                       % game_no)
        for r in self._done:
            if r["game_no"] == game_no and r["seq"] == seq:
                return r
        job = ["head", game_no, seq, link]
        if not self._waiting(job):
            if game_no == now:
                # A newer head of the game in progress replaces one still waiting.
                for q in self._queue:
                    if q[0] == "head" and q[1] == game_no and q is not self._job:
                        self._queue.remove(q)
                        break
            self._add(job)
        out = {"device": self.device, "game_no": game_no, "pending": True}
        if seq is not None:
            out["seq"] = seq
        if link is not None:
            out["head"] = hexlify(link)
        return out

    def enrol(self, challenge):
        """The reply to `key`: the board's public key and its signature over the host's
        challenge; {"pending": true} until it is made (ask again with the same challenge)."""
        e = self._enrol
        if e is not None and e[0] == challenge:
            return e[1] if e[1] is not None else {"device": self.device, "pending": True}
        for q in self._queue:
            if q[0] == "enrol":
                self._queue.remove(q)
                break
        self._enrol = [challenge, None]
        self._add(["enrol", challenge])
        return {"device": self.device, "pending": True}

    def _waiting(self, job):
        for q in self._queue:
            if q[0] == job[0] and q[1] == job[1] and q[2] == job[2]:
                return True
        return False

    def _add(self, job):
        if len(self._queue) >= _QUEUE:
            raise Busy("the board is busy signing; ask again in a moment")
        self._queue.append(job)

    # -- the work, between scans -------------------------------------------------------------
    def busy(self):
        return bool(self._queue)

    def run(self, clock, budget_ms):
        """Step the signatures in hand for about budget_ms (a step is a point doubling and an
        addition: about 1 ms on an ESP32, 30 us on the unix port). True while work is left."""
        start = clock.ticks_ms()
        while self._queue:
            self.step()
            if clock.ticks_diff(clock.ticks_ms(), start) >= budget_ms:
                break
        return bool(self._queue)

    def finish(self):
        """Do all the work in hand now (tests, the virtual board)."""
        while self._queue:
            self.step()

    def step(self):
        if self._gen is None:
            self._job = self._queue[0]
            self._gen = self._start(self._job)
        try:
            next(self._gen)
        except StopIteration as e:
            job = self._job
            self._end()
            self._finished(job, e.value)
        except Exception as e:  # never the main loop's end: the job is dropped and said
            job = self._job
            self._end()
            if job[0] == "enrol":
                self._enrol = None
            self.app.emit("warn", {"warning": "signing %s: %s" % (job[0], e)})

    def _end(self):
        if self._job in self._queue:
            self._queue.remove(self._job)
        self._job = None
        self._gen = None

    def _start(self, job):
        kind = job[0]
        if kind == "pub":
            return p256.public(self.d)
        if kind == "enrol":
            msg = enrol_message(self.device, hexlify(self.pub), self.since, job[1])
            return p256.sign(self.d, hashlib.sha256(msg).digest())
        return self._sign_head(job)

    def _sign_head(self, job):
        if job[3] is None:
            # An older game kept on the board: its chain worked out again from its records,
            # one record a step.
            from . import chain

            j = self.app.journal
            link = chain.ZERO
            seq = None
            for s, kind, payload in j.game_records(job[1]):
                link = chain.step(link, chain.record(s, kind, payload))
                seq = s
                yield
            if seq is None:
                raise Gone("game %d has no records" % job[1])
            job[2] = seq
            job[3] = link
        rs = yield from p256.sign(self.d, hashlib.sha256(
            head_message(self.device, job[2], job[3])).digest())
        return rs

    def _finished(self, job, value):
        kind = job[0]
        if kind == "pub":
            x, y = value
            pk = x.to_bytes(32, "big") + y.to_bytes(32, "big")
            _put(self.nvs, _PK, pk)
            self._set_pub(pk)
            return
        if kind == "enrol":
            if self._enrol is not None and self._enrol[0] == job[1]:
                self._enrol[1] = {"device": self.device, "pub": hexlify(self.pub),
                                  "kid": self.kid, "since": self.since, "challenge": job[1],
                                  "sig": sig_hex(value[0], value[1])}
            return
        out = {"device": self.device, "game_no": job[1], "seq": job[2],
               "head": hexlify(job[3]), "kid": self.kid, "sig": sig_hex(value[0], value[1])}
        self._done.append(out)
        if len(self._done) > _KEEP:
            self._done.pop(0)
        self.app.emit("sig", out)
