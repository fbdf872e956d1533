# The board's link when its heap has no whole block for its work (docs/serial-protocol.md,
# "Short of memory"): the answer a command gets then, and the work given up once a few steps in
# a row found no block (Link.step, linkwork.shed). A heap left in pieces by a long game can stay
# so for good: a step that fails at every pass must end in an answer the host can act on (ask
# for less), never in silence. Loaded only then: a board whose heap has room never carries it
# (main.py interns its names at boot). Runs unchanged on MicroPython and CPython.

import gc

from . import frames

# The words of that answer, made beforehand: the error path must not need the block the
# command lacked. The heap's figures follow them when the gauge has room to measure.
SHORT = "the board is short of memory for that now: ask for less"
_MESSAGE_MAX = 300  # (as link.py's: a message clipped so that its frame always fits)
_HELD_MAX = 32  # (as link.py's: frames held during a journal stream)


def short(link, cid, e=None, measure=True):
    """The answer to a command the heap has no whole block for now: `err` code `refused`, the
    words of SHORT and the heap's figures, in words and as `heap` {"free", "block"} (gauge.py;
    null where the port does not tell, or unmeasured: `measure` False, the link's work having
    had no room to load), by which a host knows to ask for less. A small payload whose words
    are made beforehand, its frame made at once (not a slice a step: those steps may be what
    finds no block), unless a coded frame's parity is being made (then it follows it). During
    a journal stream another command's answer follows the stream's ok, as the frames the app
    sends meanwhile do."""
    free = block = None
    if measure:
        try:
            from .gauge import measure as gauge

            free, block = gauge()
        except MemoryError:
            gc.collect()  # (no room even to measure: the figures stay unknown)
    payload = {"id": cid, "code": "refused", "error": SHORT,
               "heap": {"free": free, "block": block}}
    try:
        why = "" if e is None else str(e)
        if free is not None and block is not None:
            why = "%s%s%d KB free, largest block %d KB" % (why, "; " if why else "",
                                                           free // 1024, block // 1024)
        if why:
            payload["error"] = ("%s (%s)" % (SHORT, why))[:_MESSAGE_MAX]
    except MemoryError:
        pass  # (the words alone: the figures are in `heap`)
    link._stats["refused"] += 1
    st = link._stream
    if st is not None and st[0] != cid:
        if len(link._held) < _HELD_MAX:
            link._held.append(("err", payload))
        else:
            link._stats["dropped"] += 1
    elif link._coding is None:
        link._queue(frames.encode(link._n, "err", payload), False)
    else:
        link._send("err", payload)
    return ("err", payload)


def _refuse(link, line, measure=True):
    # A line the heap had no block to read, a few steps in a row: read no further than its
    # envelope (its id and type: no JSON made), and answered if it is a command (not noise,
    # a damaged line or an echo of a board's frame).
    from .linkargs import COMMANDS

    try:
        f = frames.decode(line, False)
    except (frames.Corrupt, frames.WrongVersion):
        f = None
    if f is not None and f[1] in COMMANDS:
        short(link, f[0], None, measure)
    else:
        link._stats["dropped"] += 1


def starved(link):
    """The link's work found no room to load, a few steps in a row: the oldest command
    waiting is answered that the board is short of memory (the heap not measured: loading
    the gauge would need room too); with no command waiting, the oldest frame waiting to be made (a
    slice a step: the work that did not load) is dropped, its number spent (the host sees the
    gap)."""
    if link._inbox:
        _refuse(link, link._inbox.pop(0), False)
    elif link._jobs:
        link._jobs.pop(0)
        link._n = frames.next_n(link._n)


def give_up(link, unmade, end_stream, release):
    """The work at hand given up for want of heap, a few steps in a row having found no block
    for it: the one linkwork.step() takes next, in its order (linkwork.shed passes its own
    unmade, end_stream and release). A frame not made is dropped (unmade: a reply answered
    short, a journal stream ended short, anything else its number spent, the host seeing the
    gap); a command is answered short; a journal stream ends short (the records it sent stay
    valid: the host keeps them, and asks for less)."""
    w = link._doing or link._ready
    if link._jobs:
        job = link._jobs.pop(0)
        unmade(link, job[0], job[1], job[2], MemoryError())
    elif w is not None:
        link._doing = link._ready = None
        close = getattr(w[3], "close", None)  # a command done in steps: its generator
        if close is not None:
            close()
        short(link, w[0])
        release(link)  # (a journal asked for: what the app sent meanwhile goes now)
    elif link._inbox:
        _refuse(link, link._inbox.pop(0))
    elif link._stream is not None:
        end_stream(link, MemoryError())
    elif link._waiting:
        short(link, link._waiting.pop(0)[0])
