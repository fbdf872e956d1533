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
# never held up (and only in quiet moments: serve.py); each signature then goes to the host in
# a `sig` frame. Nonces are deterministic: the same head always gets the same signature, so one
# lost (with a reboot, or with the signer leaving RAM) is simply made again. The signer and
# its arithmetic (signwork.py, p256.py) are loaded when there is work and dropped from RAM when
# there is none.
#
# The board also keeps in its NVS the last record of its newest finished game ("last": game
# number, seq, link), so that the next game's header can name it (its "prev") even after the
# journal was erased: each board's games form one chain (scoreboard/chain.py). The app loads
# this module when it first needs it (App.signing): at the first boot, the first game's end,
# the first `sign` or `key`.

from .signkeys import (  # noqa: F401 (sign.key_id, sign.HEAD_TAG, ...: the signer's names)
    _KEEP,
    _KID,
    _LAST,
    _PK,
    _SINCE,
    _SK,
    ENROL_TAG,
    HEAD_TAG,
    _put,
    key_id,
)
from .signkeys import nvs_get as _get

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_QUEUE = const(4)  # signatures waiting at most


def _int(b):
    return int.from_bytes(b, "big")


class Signer:
    """The board's key and its queue of signatures; run() from the main loop between scans.
    Jobs: ["key"] (make the key pair), ["pub"] (work out its public key), ["head", game_no,
    seq, link] (link None: work it out again from the game's records), ["enrol", challenge]."""

    def __init__(self, app):
        self.app = app
        nvs = self.nvs = app.board.nvs
        self.device = app.board.device_id or ""
        self.kid = None
        self._queue = []
        self._gen = None  # the first job's work in progress
        self._fin = None  # its result, kept at the next step
        self._done = []  # recent head signatures: (game_no, seq, link, sig hex), newest last
        self._enrol = None  # [challenge, reply or None]
        sk = _get(nvs, _SK, 32)
        self.d = _int(sk) if sk is not None and len(sk) == 32 else 0
        if not self.d:
            self._queue.append(["key"])  # the first boot: a key pair of its own, made by the loop
        s = _get(nvs, _SINCE, 4)
        self.since = _int(s) if s is not None and len(s) == 4 else 0
        self.pub = _get(nvs, _PK, 64)
        if self.pub is not None and len(self.pub) == 64:
            self.kid = key_id(self.pub)
            if _get(nvs, _KID, 16) != self.kid.encode():
                _put(nvs, _KID, self.kid.encode())  # the hello reads it from there
        else:
            self.pub = None
            self._queue.append(["pub"])

    def ended(self, game_no, seq, link):
        """A game ended at record seq with `link`: kept as the next game's predecessor, and its
        end signed (the `sig` frame follows when it is ready)."""
        _put(self.nvs, _LAST, game_no.to_bytes(4, "big") + seq.to_bytes(4, "big") + link)
        self._add(["head", game_no, seq, link])  # (its work loaded by the next run())

    # -- requests (ValueError: refused, the link answers err) --------------------------------
    def head(self, game_no=None):
        """The reply to `sign`: the signed head of a game the board holds (default: the one in
        progress, else the newest). Signed already: the signature; else {"pending": true},
        and a `sig` frame when it is ready."""
        return self._work().head(self, game_no)

    def enrol(self, challenge):
        """The reply to `key`: the board's public key and its signature over the host's
        challenge; {"pending": true} until it is made (ask again with the same challenge)."""
        return self._work().enrol(self, challenge)

    def _add(self, job):
        if len(self._queue) >= _QUEUE:
            raise ValueError("the board is busy signing; ask again in a moment")
        self._queue.append(job)

    # -- the work, between scans -------------------------------------------------------------
    def busy(self):
        return bool(self._queue)

    def run(self, clock, budget_ms):
        """Step the work in hand for about budget_ms (a step is a point doubling or an addition,
        or four bits of an inversion: a few ms on an ESP32, some 20-60 us on the unix port).
        True while work is left."""
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
        """One step of the work in hand: the work's code loaded, a job started, a step of its
        arithmetic, the heap collected once it is done, its result kept (each a step of its
        own: on the chip a few ms at most)."""
        job = self._queue[0]
        work = None
        value = None
        try:
            # (A board deployed from .py sources may lack the RAM to compile the work: then
            # said in a warning, the job dropped, tried again when asked.)
            import sys

            work = sys.modules.get("scoreboard.signwork")
            if work is None:
                self._work()
                return
            if self._fin is not None:
                value = self._fin
                self._fin = None
                work.finished(self, job, value)
                value = None
            else:
                if self._gen is None:
                    self._gen = work.start(self, job)
                    return
                next(self._gen)
                return
        except StopIteration as e:
            value = e.value
        except Exception as e:  # never the main loop's end: the job is dropped and said
            self.app.emit("warn", {"warning": "signing (%s): %s" % (job[0], e)})
        self._gen = None
        if value is not None:
            import gc

            # The arithmetic's garbage gone first, so that what is kept lands in one piece;
            # the result kept at the next step.
            gc.collect()
            self._fin = value
            return
        self._queue.pop(0)
        if not self._queue:
            self.unload()  # the signer leaves RAM until the next signature

    def _work(self):
        import sys

        work = sys.modules.get("scoreboard.signwork")
        if work is None:
            import gc

            # Loaded into a collected heap: its pieces fill the holes there are, rather than
            # stranding among garbage that a collection later frees around them.
            gc.collect()
            from . import signwork as work  # (with p256: loaded while there is work)
        return work


    def unload(self):
        """Leave RAM while there is no work: the arithmetic, and this signer too (what it
        signed it signs again, the same, when asked again: RFC 6979)."""
        if self._queue or (self._enrol is not None and self._enrol[1] is not None):
            return  # (an enrolment's reply kept until the host has asked for it)
        if not _ROM:
            # (From a ROMFS partition the code stays in flash and the modules' objects take
            # 3 KB: kept, so that a signature's first step is no import, serve.py.)
            _drop(("signwork", "p256", "sign"))
        if self.app.signer is self:
            self.app.signer = None


_ROM = globals().get("__file__", "")[:5] == "/rom/"  # imported from a ROMFS partition


def _drop(names=("signwork", "p256")):
    import sys

    pkg = sys.modules.get("scoreboard")
    for name in names:
        sys.modules.pop("scoreboard." + name, None)
        if pkg is not None and hasattr(pkg, name):
            delattr(pkg, name)
