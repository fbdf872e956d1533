# The board's link at work between its scans (docs/serial-protocol.md): the steps of
# scoreboard/link.py's Link when it has a budget (the board's main loop), in a module of their
# own, loaded at the first step: a board compiles it in a piece of its heap of its own, and a
# tool or test without a budget never loads it. A step is one of: a slice of a frame being made
# (Dumper), of a coded frame's parity (scoreboard/fec.py) or of the code's table; a collection
# of the heap before a command that needs whole blocks; a line decoded and its command run; a
# record of a journal stream read and packed. Each is bounded whatever the reply or the
# journal, so the main loop's scans never wait long (docs/simulator.md, the ESP32's time).
# Runs unchanged on MicroPython and CPython.

import gc

from . import canonjson, frames

_DUMP_STEP = 2  # values a step of a frame being made (Dumper): each a few new strs, and a
# new str is a look through the board's table of names on the chip
_SPARE = ("rec", "before", "undid", "config")  # result keys a reply may go without


def _spareless(result):
    """A result without its spare keys (_SPARE), after a collection; None if it has none."""
    if type(result) is not dict:
        return None
    for k in _SPARE:
        if k in result:
            gc.collect()
            return {k: result[k] for k in result if k not in _SPARE}
    return None


class Dumper:
    """dumps() a slice at a time, for a board that must not spend a long step on one reply:
    step(n) writes up to n more values (a key and its value, or a list item) and says when it
    is done; text() is then the same text dumps() gives. Raises what dumps() raises."""

    def __init__(self, obj):
        self._out = []
        self._stack = []  # [container, its sorted keys (None: a list), next index, parts, depth]
        t = type(obj)
        if t is dict or t is list or t is tuple:
            self._push(obj, 0)
        else:
            canonjson.dump_into(obj, self._out, 0)

    def _push(self, obj, depth):
        if depth >= canonjson.MAX_DEPTH:
            raise ValueError("payload nested deeper than %d" % canonjson.MAX_DEPTH)
        if type(obj) is dict:
            self._stack.append([obj, sorted(obj), 0, ["{"], depth])
        else:
            self._stack.append([obj, None, 0, ["["], depth])

    def done(self):
        return not self._stack

    def step(self, n=12):
        st = self._stack
        while st and n > 0:
            top = st[-1]
            obj, keys, i, part, depth = top
            if i >= (len(obj) if keys is None else len(keys)):
                part.append("]" if keys is None else "}")
                st.pop()
                (st[-1][3] if st else self._out).append("".join(part))
                continue
            if i:
                part.append(",")
            top[2] = i + 1
            if keys is None:
                v = obj[i]
            else:
                k = keys[i]
                if type(k) is not str:
                    raise ValueError("payload keys must be strings, not %r" % (k,))
                canonjson.str_into(k, part)
                part.append(":")
                v = obj[k]
            t = type(v)
            if t is dict or t is list or t is tuple:
                self._push(v, depth + 1)
            else:
                canonjson.dump_into(v, part, depth + 1)
            n -= 1
        return not st

    def text(self):
        return "".join(self._out)


def step(link):
    """One step of the link's work (Link.step): what it was ("parity", "table", "frame",
    "collect", "load", "gauge", "command", "stream", "waiting"), or None if there was nothing
    to do."""
    coding = link._coding
    if coding is not None:
        if not coding.done():
            coding.step()
        elif not coding.hexed():
            coding.hex_step()  # the parity in hex, a few codewords a step
        else:
            from .fec import finish

            finish(link)  # its tail (the hex joined, the check): a step of its own
        return "parity"  # a slice of a coded frame's parity
    code = link._code
    if code is not None and not code.ready():
        code.build()
        return "table"  # a part of the code's table
    if link._jobs:
        _job(link)
        return "frame"  # a slice of a frame being made
    if link._doing is not None:
        # (Lines that come meanwhile wait in the inbox: one command at a time.)
        _doing(link)
        return "command"  # a step of a command the handler does in steps
    ready = link._ready
    if ready is not None:
        if not ready[3]:
            ready[3] = True
            gc.collect()  # a step of its own: whole blocks for what the command makes
            return "collect"
        if ready[3] is True and ready[1] in ("parity", "state"):
            ready[3] = 2
            if ready[1] == "parity":
                from . import fec  # noqa: F401  (the coder loaded in a step of its own)

                return "load"
            gauge = getattr(link.handler, "gauge", None)
            if gauge is not None:
                gauge()  # the heap measured after the collection, in a step of its own
            return "gauge"
        link._ready = None
        link._command(ready[0], ready[1], ready[2], True)
        if ready[1] == "journal" and link._stream is None:
            release(link)  # no stream after all (refused): what was held goes now
        return "command"
    if link._inbox:
        # The line stays first in the inbox until it is read and its command run (or queued):
        # a read the heap has no block for is tried again at the next step (Link.step).
        link._line(link._inbox[0])
        link._inbox.pop(0)
        return "command"  # a line decoded, and its command run (or queued)
    if link._stream is not None:
        if link._out_size - link._pos < link.budget:
            stream_step(link)
            return "stream"  # a record read and packed, or a block or record queued
        return None
    if link._waiting:
        cid, cmd, args = link._waiting.pop(0)
        link.command(cid, cmd, args)
        return "command"
    return None


def _doing(link):
    """The next step of a command its handler does in steps (a generator, Link._run); its
    reply once it returns, or its error."""
    cid, cmd, args, steps = link._doing
    try:
        next(steps)
        return
    except StopIteration as e:
        link._doing = None
        result = e.value
    except link.Refused as e:
        link._doing = None
        link._kept(cid, cmd, args, link._err(cid, "refused", str(e)))
        return
    except Exception as e:  # as Link._run: reported, never a stopped link
        link._doing = None
        link._kept(cid, cmd, args, link._failed(cid, e))
        return
    link._kept(cid, cmd, args, link._done_with(cid, cmd, args, result))


def shed(link, done):
    """What a step the heap had no block for worked on (Link.step, after a collection), so
    that the same step does not fail at every pass for good (a heap in pieces can stay so).
    Coding is given up at once: the frames go plain (`hello` says so; the host asks again if
    it still wants parity), and a coded frame whose parity cannot be finished ends as a line
    the host drops (its number spent). Any other step is tried again at the next pass until
    `done` (a few in a row found no block): then the work at hand is given up with an answer
    the host can act on (scoreboard/linkshort.py)."""
    if link._coding is not None:
        link._coding = None
        link._out.append("\n")
        link._out_size += 1
        link._code = None
    elif link._code is not None and not link._code.ready():
        link._code = None
    elif done:
        from .linkshort import give_up

        give_up(link, _unmade, end_stream, release)  # (linkshort does not import this module)


def flush(link, steps=2000):
    """Make and write everything waiting now, at most `steps` steps (Link.flush)."""
    while steps and link.busy():
        steps -= 1
        link.step()
        link._pumping = True
        try:
            link._pump(None if link.budget is None else 4096)
        finally:
            link._pumping = False


def _job(link):
    """A step of making the oldest frame waiting: a slice of its JSON, or its line once whole
    (then numbered and queued)."""
    job = link._jobs[0]
    typ, payload = job[0], job[1]
    try:
        if typ == "a" and type(payload) is dict:
            # An action's compact text (its state's values), then its line: two steps.
            from .pack import action_text

            job[1] = action_text(payload)
            job[3] = payload  # (kept for its record, should the text not make a frame)
            return
        if typ == "r" and job[3] is None and type(payload) is not str:
            # A block's text (its records in base64), then its line: two steps.
            from .pack import block_text

            job[3] = block_text(payload)
            return
        if job[3] is None and type(payload) is dict and typ not in frames.COMPACT:
            job[3] = Dumper(payload)
            return
        if type(job[3]) is Dumper and not job[3].done():
            job[3].step(_DUMP_STEP)
            return  # (the line itself, once the text is whole: a step of its own)
        if type(job[3]) is Dumper:
            line = frames.encode(link._n, typ, payload, text=job[3].text())
        elif typ == "r" and type(job[3]) is str:
            line = frames.encode(link._n, typ, None, text=job[3])  # (made here: ASCII)
        else:
            line = frames.encode(link._n, typ, payload)
    except (frames.FrameTooLong, MemoryError) as e:
        link._jobs.pop(0)
        _unmade(link, typ, payload, job[2], e)
        return
    except ValueError as e:  # a value no frame carries: a bug of whoever sent it
        link._jobs.pop(0)
        if typ == "a" and type(job[3]) is dict:
            payload = job[3]  # (its text made, refused: the action as it came)
        if typ == "a" and type(payload) is dict and "rec" in payload:
            # No compact form after all (a state value with "," or a space): the action goes
            # as its record and the state after it, in JSON, in its place.
            link._jobs.insert(0, ["state", {"seq": payload["seq"], "state": payload["state"]},
                                  job[2], None])
            link._jobs.insert(0, ["rec", payload["rec"], job[2], None])
        elif typ == "ok":
            link._err(payload["id"], "internal", "ValueError: %s" % e)
        else:
            link._stats["dropped"] += 1
        return
    link._jobs.pop(0)
    link._queue(line, job[2])


def _unmade(link, typ, payload, droppable, e):
    """A frame that does not fit in a frame, or in the heap now."""
    if typ == "ok":
        # A reply: without its spare keys, else an error in its place (as Link._ok does).
        result = _spareless(payload["result"])
        if result is not None:
            link._jobs.insert(0, ["ok", {"id": payload["id"], "result": result}, droppable,
                                  None])
        elif type(e) is MemoryError:
            link._failed(payload["id"], e)
        else:
            link._err(payload["id"], "too_long", "the reply does not fit in a frame: %s" % e)
        return
    if typ in ("rec", "r") and link._stream is not None and type(e) is MemoryError:
        # A frame of the stream the heap has no block for: the stream ends with the board
        # short of memory (the host keeps the records before it, and asks for less), rather
        # than going on without the records it carried, or failing so at every block.
        end_stream(link, e)
        return
    if typ == "rec" and link._stream is not None and type(payload) is dict:
        # A journal record of the stream: the stream ends with the error (as without a
        # budget), the records before it stay valid.
        end_stream(link, ("too_long", "journal record seq %s does not fit in a frame: %s"
                          % (payload.get("seq"), e), {"seq": payload.get("seq")}))
        return
    link._n = frames.next_n(link._n)  # its number spent: the host sees the gap
    link._stats["dropped"] += 1


# -- the journal stream (both with a budget and without) ------------------------------------

def stream_step(link):
    """Queue the journal stream's next rec frame, or its final reply."""
    st = link._stream
    records = st[1]
    reply = None
    try:
        rec = next(records)
        if rec is None:
            return  # a record packed into the block in hand: a step of work, nothing to send
        if type(rec) is not dict:  # a pack.Block: records packed for an `r` frame
            link._send("r", rec)
            st[3] = rec.last
            st[4] += 1
            st[6] += len(rec)
            return
        seq = rec.get("seq")
        if type(seq) is not int:
            reply = ("internal", "journal record without a seq", None)
        elif st[5] and not st[5] >> (seq - st[2] - 1):
            pass  # past the highest record the host asked for: the stream ends here
        elif st[5] and not st[5] >> (seq - st[2] - 1) & 1:
            return  # a record the host has ("want": bit i is seq after + 1 + i)
        else:
            try:
                link._send("rec", rec)  # (with a budget, too long ends it in _unmade)
                st[3] = seq
                st[4] += 1
                st[6] += 1
                return
            except frames.FrameTooLong as e:
                reply = ("too_long", "journal record seq %d does not fit in a frame: %s"
                         % (seq, e), {"seq": seq})
    except StopIteration:
        pass
    except link.Refused as e:
        reply = ("refused", str(e), None)
    except Exception as e:
        reply = e
    end_stream(link, reply)


def end_stream(link, reply):
    """The stream's last frame: its ok (None), an err (code, message, extra), or the
    exception that stopped it; then what the app sent meanwhile."""
    st = link._stream
    cid, records = st[0], st[1]
    link._stream = None
    close = getattr(records, "close", None)
    if close is not None:
        close()
    if reply is None:
        ok = link._ok(cid, {"last": st[3], "count": st[4], "records": st[6]})
        if ok[0] == "ok":
            link._done = (cid, st[7], ok[1])
    elif type(reply) is tuple:
        link._err(cid, reply[0], reply[1], reply[2])
    else:
        link._failed(cid, reply)
    release(link)


def release(link):
    """What the app sent during a stream goes after it."""
    held = link._held
    link._held = []
    for typ, payload in held:
        link._send(typ, payload, True)
