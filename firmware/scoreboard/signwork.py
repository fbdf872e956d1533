# The signer's work (scoreboard/sign.py): the key pair made at the first boot, and each job's
# arithmetic, stepped between scans, and the replies to `sign` and `key`. Loaded when asked
# or when there is work, with p256, and dropped when there is none.

import hashlib

from . import p256
from .chain import hexlify
from .signkeys import _KEEP, _KID, _PK, _SINCE, _SK, ENROL_TAG, HEAD_TAG, _put, key_id


def head_message(device, seq, link):
    """What the board signs for a chain head: its device id, the seq the chain ends at, the
    link there."""
    return ("%s %s %d " % (HEAD_TAG, device, seq)).encode() + link


def enrol_message(device, pub_hex, since, challenge):
    """What the board signs for its enrolment: its device id, public key, first game signed
    with that key, and the host's challenge (hex)."""
    return ("%s %s %s %d %s" % (ENROL_TAG, device, pub_hex, since, challenge)).encode()


def make(signer):
    """A new key pair: the first boot, or an NVS that lost its key. Its public half is worked
    out by the main loop (the "pub" job); until then the board signs nothing."""
    d = p256.private(signer.app.board.random)
    j = signer.app.journal
    games = j.games()
    since = j.game_no() or (games[len(games) - 1] + 1 if games else 1)
    nvs = signer.nvs
    _put(nvs, _PK, b"")  # an older public key is not this key's
    _put(nvs, _KID, b"")
    _put(nvs, _SINCE, since.to_bytes(4, "big"))
    _put(nvs, _SK, d.to_bytes(32, "big"))
    signer.d = d
    signer.since = since
    signer.pub = signer.kid = None


def head(signer, game_no=None):
    """The reply to `sign`: the signed head of a game the board holds (default: the one in
    progress, else the newest). Signed already: the signature; else {"pending": true},
    and a `sig` frame when it is ready."""
    j = signer.app.journal
    now = j.game_no()
    games = j.games()
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
    for r in signer._done:
        if r[0] == game_no and r[1] == seq:
            _idle(signer)
            return reply(signer, r)
    for q in signer._queue:
        if q[0] == "head" and q[1] == game_no:
            if q[2] == seq:
                break  # asked for already
            if game_no == now and q is not signer._queue[0]:
                q[2], q[3] = seq, link  # the game went on: its newer head instead
                break
    else:
        signer._add(["head", game_no, seq, link])
    out = {"device": signer.device, "game_no": game_no, "seq": seq, "pending": True}
    if link is not None:
        out["head"] = hexlify(link)
    return out


def _idle(signer):
    signer.unload()  # answered from what was kept: nothing to work on


def enrol(signer, challenge):
    """Signer.enrol: one enrolment at a time, the newest challenge's."""
    e = signer._enrol
    q = signer._queue
    if e is None or e[0] != challenge:
        for j in q:
            if j[0] == "enrol" and j is not q[0]:
                q.remove(j)
                break
        signer._add(["enrol", challenge])
        e = signer._enrol = [challenge, None]
    reply = e[1] or {"device": signer.device, "pending": True}
    if e[1] is not None:
        signer._enrol = None  # given: asked again, it is signed again (the same)
    _idle(signer)
    return reply


def start(signer, job):
    """The stepped computation of a job (a generator: its value is the job's result)."""
    if job[0] == "key":
        make(signer)
        if signer.pub is None and ["pub"] not in signer._queue:
            signer._queue.append(["pub"])
        return iter(())
    if not 1 <= signer.d < p256.N:
        make(signer)  # a damaged key in NVS: a new one (to be enrolled again)
        signer._queue.append(["pub"])
        raise ValueError("the key in NVS was damaged: a new key pair is being made")
    if job[0] == "pub":
        return p256.mul(signer.d)
    if job[0] == "enrol":
        if signer.pub is None:
            raise ValueError("no key yet")
        return p256.sign(signer.d, hashlib.sha256(enrol_message(
            signer.device, hexlify(signer.pub), signer.since, job[1])).digest())
    return _head(signer, job)


def _head(signer, job):
    if job[3] is None:
        # An older game kept on the board: its chain worked out again from its records, one
        # record a step.
        from .chain import ZERO, record, step

        link = ZERO
        for s, kind, payload in signer.app.journal.game_records(job[1]):
            link = step(link, record(s, kind, payload))
            job[2] = s
            yield
        job[3] = link
    return (yield from p256.sign(signer.d, hashlib.sha256(
        head_message(signer.device, job[2], job[3])).digest()))


def reply(signer, done):
    """The `sign` reply (and `sig` payload) of a signature kept as (game_no, seq, link, sig)."""
    return {"device": signer.device, "game_no": done[0], "seq": done[1],
            "head": hexlify(done[2]), "kid": signer.kid, "sig": done[3]}


def finished(signer, job, value):
    """Keep a job's result: the public key in NVS, the enrolment reply, or a head's signature
    (kept for repeats and sent in a `sig` frame). (Signer.step collected the heap just before:
    what is kept lands in one piece.)"""
    if job[0] == "pub":
        pk = value[0].to_bytes(32, "big") + value[1].to_bytes(32, "big")
        _put(signer.nvs, _PK, pk)
        signer.pub = pk
        signer.kid = key_id(pk)
        _put(signer.nvs, _KID, signer.kid.encode())
        return
    sig = "%064x%064x" % value
    if job[0] == "enrol":
        e = signer._enrol
        if e is not None and e[0] == job[1]:
            e[1] = {"device": signer.device, "pub": hexlify(signer.pub), "kid": signer.kid,
                    "since": signer.since, "challenge": job[1], "sig": sig}
        return
    done = signer._done
    kept = (job[1], job[2], job[3], sig)
    done.append(kept)
    if len(done) > _KEEP:
        # The heads of the game in progress go first: a finished game's end is asked for
        # again until the host has it.
        now = signer.app.journal.game_no()
        i = 0
        while i < len(done) - 1 and done[i][0] != now:
            i += 1
        done.pop(i if i < len(done) - 1 else 0)
    signer.app.emit("sig", reply(signer, kept))
