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
# signature, so one lost with a reboot is simply made again. p256 is loaded with the first
# piece of work, not at boot.
#
# The board also keeps in its NVS the last record of its newest finished game ("last": game
# number, seq, link), so that the next game's header can name it (its "prev") even after the
# journal was erased: each board's games form one chain (scoreboard/chain.py).

import hashlib

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


def _get(nvs, key, size):
    # The bytes kept under `key` in the board's NVS (at most `size`), or None.
    buf = bytearray(size)
    try:
        n = nvs.get_blob(key, buf)
    except OSError:
        return None  # not there (or longer than asked for: not ours)
    return bytes(buf[:n])


def _put(nvs, key, value):
    nvs.set_blob(key, value)
    nvs.commit()  # on flash before this returns


def _int(b):
    return int.from_bytes(b, "big")


def remembered(nvs):
    """(game number, seq, link) of the board's newest finished game as its NVS keeps it, or
    None (chain.ChainedJournal.remembered)."""
    b = _get(nvs, _LAST, 40)
    if b is None or len(b) != 40:
        return None
    return _int(b[0:4]), _int(b[4:8]), b[8:40]


class Signer:
    """The board's key and its queue of signatures; run() from the main loop between scans.
    Jobs: ["pub"] (work out the public key), ["head", game_no, seq, link] (link None: work it
    out again from the game's records), ["enrol", challenge]."""

    def __init__(self, app):
        self.app = app
        nvs = self.nvs = app.board.nvs
        self.device = app.board.device_id or ""
        self.kid = None
        self._queue = []
        self._gen = None  # the first job's work in progress
        self._done = []  # recent head signatures (reply payloads), newest last
        self._enrol = None  # [challenge, reply or None]
        sk = _get(nvs, _SK, 32)
        self.d = _int(sk) if sk is not None and len(sk) == 32 else 0
        if not self.d:
            self._make()
        s = _get(nvs, _SINCE, 4)
        self.since = _int(s) if s is not None and len(s) == 4 else 0
        self.pub = _get(nvs, _PK, 64)
        if self.pub is not None and len(self.pub) == 64:
            self.kid = key_id(self.pub)
        else:
            self.pub = None
            self._queue.append(["pub"])

    def _make(self):
        # The first boot (or an NVS that lost its key): a new key pair. Its public half is
        # worked out by the main loop (the "pub" job); until then the board signs nothing.
        from . import p256

        d = p256.private(self.app.board.random)
        st = self.app.journal.stats()
        games = st["games"]
        since = st["game_no"] or (games[len(games) - 1] + 1 if games else 1)
        _put(self.nvs, _PK, b"")  # an older public key is not this key's
        _put(self.nvs, _SINCE, since.to_bytes(4, "big"))
        _put(self.nvs, _SK, d.to_bytes(32, "big"))
        self.d = d
        self.since = since
        self.pub = self.kid = None

    def ended(self, game_no, seq, link):
        """A game ended at record seq with `link`: kept as the next game's predecessor, and its
        end signed (the `sig` frame follows when it is ready)."""
        _put(self.nvs, _LAST, game_no.to_bytes(4, "big") + seq.to_bytes(4, "big") + link)
        self._add(["head", game_no, seq, link])

    # -- requests (ValueError: refused, the link answers err) --------------------------------
    def head(self, game_no=None):
        """The reply to `sign`: the signed head of a game the board holds (default: the one in
        progress, else the newest). Signed already: the signature; else {"pending": true},
        and a `sig` frame when it is ready."""
        j = self.app.journal
        st = j.stats()
        now = st["game_no"]
        games = st["games"]
        if game_no is None:
            if not games:
                raise ValueError("no game on the board yet")
            game_no = now if now is not None else games[len(games) - 1]
        link = None
        if game_no == now:
            seq, link = j.chain.seq, j.chain.link
        elif j.last is not None and j.last[0] == game_no:
            seq, link = j.last[1], j.last[2]
        elif game_no in games:
            seq = j.game_last(game_no)  # its link is worked out again from its records
        else:
            raise ValueError("game %d is not on the board (rotated out once archived)" % game_no)
        for r in self._done:
            if r["game_no"] == game_no and r["seq"] == seq:
                return r
        for q in self._queue:
            if q[0] == "head" and q[1] == game_no:
                if q[2] == seq:
                    break  # asked for already
                if game_no == now and q is not self._queue[0]:
                    q[2], q[3] = seq, link  # the game went on: its newer head instead
                    break
        else:
            self._add(["head", game_no, seq, link])
        out = {"device": self.device, "game_no": game_no, "seq": seq, "pending": True}
        if link is not None:
            out["head"] = hexlify(link)
        return out

    def enrol(self, challenge):
        """The reply to `key`: the board's public key and its signature over the host's
        challenge; {"pending": true} until it is made (ask again with the same challenge)."""
        e = self._enrol
        if e is None or e[0] != challenge:
            for q in self._queue:
                if q[0] == "enrol" and q is not self._queue[0]:
                    self._queue.remove(q)  # one enrolment at a time: the newest
                    break
            self._add(["enrol", challenge])
            e = self._enrol = [challenge, None]
        return e[1] or {"device": self.device, "pending": True}

    def _add(self, job):
        if len(self._queue) >= _QUEUE:
            raise ValueError("the board is busy signing; ask again in a moment")
        self._queue.append(job)

    # -- the work, between scans -------------------------------------------------------------
    def busy(self):
        return bool(self._queue)

    def run(self, clock, budget_ms):
        """Step the work in hand for about budget_ms (a step is a point doubling and an
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
        job = self._queue[0]
        try:
            if self._gen is None:
                self._gen = self._start(job)
            next(self._gen)
            return
        except StopIteration as e:
            value = e.value
        except Exception as e:  # never the main loop's end: the job is dropped and said
            value = None
            self.app.emit("warn", {"warning": "signing (%s): %s" % (job[0], e)})
        self._gen = None
        self._queue.pop(0)
        if value is not None:
            self._finished(job, value)

    def _start(self, job):
        from . import p256

        if not 1 <= self.d < p256.N:
            self._make()  # a damaged key in NVS: a new one (to be enrolled again)
            self._queue.append(["pub"])
            raise ValueError("the key in NVS was damaged: a new key pair is being made")
        if job[0] == "pub":
            return p256.mul(self.d)
        if job[0] == "enrol":
            if self.pub is None:
                raise ValueError("no key yet")
            return p256.sign(self.d, hashlib.sha256(enrol_message(
                self.device, hexlify(self.pub), self.since, job[1])).digest())
        return self._sign_head(p256, job)

    def _sign_head(self, p256, job):
        if job[3] is None:
            # An older game kept on the board: its chain worked out again from its records,
            # one record a step.
            from .chain import ZERO, record, step

            link = ZERO
            for s, kind, payload in self.app.journal.game_records(job[1]):
                link = step(link, record(s, kind, payload))
                job[2] = s
                yield
            job[3] = link
        return (yield from p256.sign(self.d, hashlib.sha256(
            head_message(self.device, job[2], job[3])).digest()))

    def _finished(self, job, value):
        if job[0] == "pub":
            pk = value[0].to_bytes(32, "big") + value[1].to_bytes(32, "big")
            _put(self.nvs, _PK, pk)
            self.pub = pk
            self.kid = key_id(pk)
            return
        sig = "%064x%064x" % value
        if job[0] == "enrol":
            if self._enrol is not None and self._enrol[0] == job[1]:
                self._enrol[1] = {"device": self.device, "pub": hexlify(self.pub),
                                  "kid": self.kid, "since": self.since, "challenge": job[1],
                                  "sig": sig}
            return
        out = {"device": self.device, "game_no": job[1], "seq": job[2],
               "head": hexlify(job[3]), "kid": self.kid, "sig": sig}
        done = self._done
        done.append(out)
        if len(done) > _KEEP:
            # The heads of the game in progress go first: a finished game's end is asked for
            # again until the host has it.
            now = self.app.journal.stats()["game_no"]
            i = 0
            while i < len(done) - 1 and done[i]["game_no"] != now:
                i += 1
            done.pop(i if i < len(done) - 1 else 0)
        self.app.emit("sig", out)
