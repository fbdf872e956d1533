# The board's end of the serial link (docs/serial-protocol.md).
#
# Link turns whatever arrives on the port into commands for a handler and sends its replies and
# the board's own frames back. It owns no I/O: `write(str)` sends text (sys.stdout.write on a
# board), and the app calls feed() with whatever it read, in any chunks. A command is answered by
# exactly one `ok` or `err` frame carrying the command's id; a corrupt line is dropped and
# counted, never half-applied. Runs unchanged on MicroPython and CPython.
#
# Long replies never hold the loop: with a `budget` (bytes a loop pass may write, about what the
# UART carries in a scan or two), frames wait in a queue and pump() writes at most that much per
# call, and a journal stream makes its next `rec` frame only when the queue has room. The main
# loop calls pump() between scans, so sensing never pauses for a resync, a big state reply or a
# burst of frames. Without a budget every frame is written at once (tests, tools).

import gc

from . import frames

# Commands the host may send and the checks of their arguments: linkargs.py.
from .linkargs import COMMANDS, TEST_ONLY  # noqa: F401 (COMMANDS: the host imports it here)

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_SPARE = ("rec", "before", "undid", "config")  # result keys a reply may go without (_ok)

# Commands that change something: a repeat of the last one (same id, same args: the host
# resending after a lost reply) gets the same reply again instead of being carried out twice.
_ONCE = ("new", "undo", "ack", "clock", "inject", "act", "service", "record")
# What the board sends on its own. `state` is also a command (the direction tells them apart).
EMIT_TYPES = ("rec", "state", "warn", "event", "boot", "beat", "line", "a", "sig")
# Frames only a board sends: one arriving here is an echo of our own, never answered (answering
# would ping-pong forever on a port that echoes).
_OWN = ("ok", "err", "rec", "warn", "event", "boot", "beat", "line", "a", "r", "sig")


_MESSAGE_MAX = const(300)  # an error message, clipped so its err frame always fits
_OUT_MAX = const(4096)  # characters of frames waiting for the wire (beyond: unsolicited dropped)
_HELD_MAX = const(32)  # frames the app sends during a journal stream, held until its ok
_WAITING_MAX = const(4)  # commands that arrive during a journal stream, run after its ok
# Journal records a stream reads and packs in one pass of the main loop (a record is one line
# read from flash, parsed, and its code checked): a few, so no step between two scans grows
# with the block being made (docs/serial-protocol.md).
_STREAM_STEPS = const(4)


class Refused(Exception):
    """A command the board will not carry out; its message is sent to the host in `err`."""


class Link:
    """One end of the link on the board.

    `handler` implements `cmd_<name>(args)` for the commands in COMMANDS: each returns a result
    dict (None counts as {}) or raises Refused(message); `cmd_journal` returns an iterable of
    record dicts instead, each sent as a `rec` frame before the `ok`. inject and act are refused
    here unless `test_mode` is on."""

    def __init__(self, write, handler, test_mode=False, budget=None):
        self._write = write
        self.handler = handler
        self.test_mode = bool(test_mode)
        self.budget = budget  # characters one pump() may write; None: write everything at once
        self._lines = frames.Lines()
        self._n = 0  # the number of the next frame this board sends
        self._last = None  # (id, cmd, args, reply type, reply payload) of the last _ONCE command
        self._out = []  # frame lines waiting for the wire, oldest first
        self._out_size = 0  # their characters
        self._pos = 0  # characters of _out[0] already written
        self._stream = None  # [id, records, after, last, count]: a journal being streamed
        self._done = None  # (id, args, ok payload) of the last journal stream finished
        self._held = []  # (type, payload) the app sent during a stream
        self._waiting = []  # (id, cmd, args) that arrived during a stream
        self._pumping = False
        self._stats = {"frames_in": 0, "frames_out": 0, "corrupt": 0, "noise": 0,
                       "ignored": 0, "refused": 0, "repeats": 0, "version": 0, "dropped": 0}

    # -- sending -----------------------------------------------------------------------------
    def _send(self, typ, payload, droppable=False):
        line = frames.encode(self._n, typ, payload)  # FrameTooLong before a number is used
        n = self._n
        self._n = frames.next_n(n)
        if droppable and self._out_size + len(line) > _OUT_MAX:
            # The wire is far behind: drop it, its number spent, so the host sees the gap
            # (and resyncs records from the journal) instead of the board waiting on the wire.
            self._stats["dropped"] += 1
            return n
        self._out.append(line)
        self._out_size += len(line)
        self._stats["frames_out"] += 1
        if self.budget is None:
            self.pump()
        return n

    def halt(self):
        """Drop everything waiting (a stream, held frames, queued commands and frames): the app
        is stopping. A frame cut short is ended with a line end, so the host drops it whole."""
        if self._stream is not None:
            close = getattr(self._stream[1], "close", None)
            if close is not None:
                close()
        if self._pos:
            self._write("\n")
        self._stream = None
        self._held = []
        self._waiting = []
        self._out = []
        self._out_size = 0
        self._pos = 0

    def busy(self):
        """True while frames wait for the wire or a journal stream is under way."""
        return bool(self._out) or self._stream is not None

    def count(self):
        """The number of the next frame this board sends (moves with every frame sent)."""
        return self._n

    def streaming(self):
        """True while a journal stream is under way."""
        return self._stream is not None

    def room(self):
        """Characters the queue takes before unsolicited frames are dropped."""
        return _OUT_MAX - self._out_size

    def pump(self, budget=None):
        """Write waiting frames, at most `budget` characters (default: the link's budget; None
        for both: all of them), going on with a journal stream as the queue empties. Returns
        the characters written. Call it once per loop pass."""
        if self._pumping:
            return 0  # a frame queued while pumping: the loop below sends it
        if budget is None:
            budget = self.budget
        self._pumping = True
        try:
            return self._pump(budget)
        finally:
            self._pumping = False

    def prepare(self):
        """Between scans: go on with a journal stream (a few records at most) while less than
        a pass's worth of frames waits for the wire. True if there was work to do."""
        if self._stream is None or self._pumping or self.budget is None:
            return False
        if self._out_size - self._pos >= self.budget:
            return False
        self._pumping = True
        try:
            for _ in range(_STREAM_STEPS):
                if self._stream is None or self._out_size - self._pos >= self.budget:
                    break
                self._stream_step()
        finally:
            self._pumping = False
        return True

    def _pump(self, budget):
        sent = 0
        steps = 0
        while True:
            # The stream reads and packs a record a step. Without a budget (tools, tests) it
            # runs as the wire empties; with one, at most _STREAM_STEPS records a call, while
            # less than a pass's worth waits (so the wire never idles while a block is made).
            if self._stream is not None and (
                    not self._out if budget is None else
                    steps < _STREAM_STEPS and self._out_size - self._pos < budget):
                steps += 1
                self._stream_step()
                continue
            if not self._out:
                if self._stream is not None:
                    return sent  # this pass's records are done: the next pass goes on
                if self._waiting:
                    cid, cmd, args = self._waiting.pop(0)
                    self.command(cid, cmd, args)
                    continue
                return sent
            line = self._out[0]
            size = len(line) - self._pos
            if budget is not None and size > budget - sent:
                size = budget - sent
                if size <= 0:
                    return sent
            if self._pos == 0 and size == len(line):
                self._write(line)
            else:
                self._write(line[self._pos:self._pos + size])
            sent += size
            self._pos += size
            if self._pos >= len(line):
                self._out.pop(0)
                self._out_size -= len(line)
                self._pos = 0

    def emit(self, typ, payload):
        """Send an unsolicited frame (a type of EMIT_TYPES); returns its frame number.

        A `boot` payload gets the protocol version and test mode added. Raises FrameTooLong if
        the payload does not fit in a frame."""
        if typ not in EMIT_TYPES:
            raise ValueError("unknown frame type %r (known: %s)" % (typ, ", ".join(EMIT_TYPES)))
        if typ == "boot":
            payload = dict(payload)
            payload["protocol"] = frames.VERSION
            payload["test_mode"] = self.test_mode
        if self._stream is not None:
            # A journal stream's rec frames are numbered one after the other up to its ok
            # (the host checks that none was lost): what the app sends meanwhile follows the ok.
            frames.encode(0, typ, payload)  # FrameTooLong now, as without a stream
            if len(self._held) < _HELD_MAX:
                self._held.append((typ, payload))
            else:
                self._stats["dropped"] += 1
            return None
        return self._send(typ, payload, True)

    def _err(self, cid, code, message, extra=None):
        payload = {"id": cid, "code": code, "error": message[:_MESSAGE_MAX]}
        if extra:
            for k in extra:
                payload[k] = extra[k]
        self._stats["refused"] += 1
        self._send("err", payload)
        return ("err", payload)

    def _ok(self, cid, result):
        payload = {"id": cid, "result": result}
        try:
            self._send("ok", payload)
        except (frames.FrameTooLong, MemoryError) as e:
            # A result's spare keys (a state reply's latest action, app.status()) are left out
            # rather than the reply not going at all, or the board failing on a heap that
            # play has left in pieces.
            spare = [k for k in _SPARE if k in result] if type(result) is dict else None
            payload = None
            if spare:
                result = {k: result[k] for k in result if k not in spare}
                gc.collect()
                return self._ok(cid, result)
            if type(e) is MemoryError:
                result = None
                gc.collect()
                return self._failed(cid, e)
            return self._err(cid, "too_long", "the reply does not fit in a frame: %s" % e)
        return ("ok", payload)

    # -- receiving ---------------------------------------------------------------------------
    def feed(self, data):
        """Take whatever arrived (bytes or str, partial or several lines, noise included)."""
        for line in self._lines.feed(data):
            self._line(line)

    def _line(self, line):
        try:
            f = frames.decode(line)
        except frames.WrongVersion as e:
            self._stats["version"] += 1
            if e.n is not None and self._stream is None:
                self._err(e.n, "version", "this board speaks serial protocol v%d, the command "
                          "was v%d" % (frames.VERSION, e.version), {"protocol": frames.VERSION})
            return
        except frames.Corrupt:
            self._stats["corrupt"] += 1
            return
        if f is None:
            self._stats["noise"] += 1
            return
        cid, cmd, args = f
        if cmd in _OWN:
            self._stats["ignored"] += 1
            return
        self._stats["frames_in"] += 1
        self.command(cid, cmd, args)

    def command(self, cid, cmd, args):
        """Carry out one decoded command and send its one reply; returns (type, payload), or
        None for a journal stream (its reply comes once pump() has sent its records) and for a
        command that waits for a stream to end."""
        if self._stream is not None:
            if cid == self._stream[0] and cmd == "journal":
                self._stats["repeats"] += 1  # the host resending the stream under way
            elif len(self._waiting) < _WAITING_MAX:
                self._waiting.append((cid, cmd, args))
            else:
                self._stats["dropped"] += 1  # unanswered: the host sends it again
            return None
        done = self._done
        if done is not None and done[0] == cid and done[1] == args and cmd == "journal":
            # The host resending a stream whose ok it lost: the ok again, not the stream (its
            # records came, or the host asks for the missing ones by `want`).
            self._stats["repeats"] += 1
            self._send("ok", done[2])
            return ("ok", done[2])
        last = self._last
        if last is not None and last[0] == cid and last[1] == cmd and last[2] == args:
            self._stats["repeats"] += 1
            self._send(last[3], last[4])
            return (last[3], last[4])
        reply = self._run(cid, cmd, args)
        if reply is not None and cmd in _ONCE:
            self._last = (cid, cmd, args, reply[0], reply[1])
        return reply

    def _run(self, cid, cmd, args):
        spec = COMMANDS.get(cmd)
        if spec is None:
            return self._err(cid, "unknown", "unknown command %s (known: %s)"
                             % (cmd, ", ".join(sorted(COMMANDS))))
        if cmd in TEST_ONLY and not self.test_mode:
            return self._err(cid, "test_mode", "%s is refused: input injection is off on this "
                             'board; enable it with "link": {"test_mode": true} in the board '
                             "config (or run the simulator in test mode)" % cmd)
        checked = {}
        for name, check, required, default in spec:
            if name not in args:
                if required:
                    return self._err(cid, "args", "%s needs %s" % (cmd, name))
                checked[name] = default
                continue
            what = check(args[name])
            if what is not None:
                return self._err(cid, "args", "%s: %s must be %s" % (cmd, name, what))
            checked[name] = args[name]
        for name in args:
            if name not in checked:
                known = ", ".join([s[0] for s in spec]) or "none"
                return self._err(cid, "args", "%s takes no argument %s (known: %s)"
                                 % (cmd, name, known))
        fn = getattr(self.handler, "cmd_" + cmd, None)
        if fn is None and cmd != "hello":
            return self._err(cid, "unsupported", "this firmware does not implement %s" % cmd)
        try:
            if cmd == "journal":
                want = checked["want"]
                self._stream = [cid, fn(checked), checked["after"], checked["after"], 0,
                                int(str(want), 16) if want else 0, 0, args]
                if self.budget is None:
                    self.pump()
                return None
            result = fn(checked) if fn is not None else None
        except Refused as e:
            return self._err(cid, "refused", str(e))
        except Exception as e:  # a handler's bug must not stop the link: report it instead
            return self._failed(cid, e)
        if result is None:
            result = {}
        elif type(result) is not dict:
            return self._err(cid, "internal", "%s returned %s, not a dict"
                             % (cmd, type(result).__name__))
        if cmd == "hello":
            result = dict(result)
            result["protocol"] = frames.VERSION
            result["test_mode"] = self.test_mode
        return self._ok(cid, result)

    def _failed(self, cid, e):
        rule = getattr(e, "rule", None)
        if type(rule) is str:  # a RuleError: the action broke a rule of the game
            return self._err(cid, "rule", str(e), {"rule": rule})
        if isinstance(e, MemoryError):
            # Not a bug of the command: the heap has no whole block for it now (a long game,
            # a fragmented heap). The board plays on; the host may ask again later.
            return self._err(cid, "refused", "the board is short of memory for that now: %s"
                             % e)
        return self._err(cid, "internal", "%s: %s" % (type(e).__name__, e))

    def _stream_step(self):
        """Queue the journal stream's next rec frame, or its final reply."""
        st = self._stream
        cid, records = st[0], st[1]
        reply = None
        try:
            rec = next(records)
            if rec is None:
                return  # a record packed into the block in hand: a step of work, nothing to send
            if type(rec) is not dict:  # a pack.Block: records packed for an `r` frame
                self._send("r", rec)
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
                    self._send("rec", rec)
                    st[3] = seq
                    st[4] += 1
                    st[6] += 1
                    return
                except frames.FrameTooLong as e:
                    reply = ("too_long", "journal record seq %d does not fit in a frame: %s"
                             % (seq, e), {"seq": seq})
        except StopIteration:
            pass
        except Refused as e:
            reply = ("refused", str(e), None)
        except Exception as e:
            reply = e
        self._stream = None
        close = getattr(records, "close", None)
        if close is not None:
            close()
        if reply is None:
            ok = self._ok(cid, {"last": st[3], "count": st[4], "records": st[6]})
            if ok[0] == "ok":
                self._done = (cid, st[7], ok[1])
        elif type(reply) is tuple:
            self._err(cid, reply[0], reply[1], reply[2])
        else:
            self._failed(cid, reply)
        held = self._held
        self._held = []
        for typ, payload in held:
            self._send(typ, payload, True)

    def stats(self):
        """Counters: frames_in (commands), frames_out, corrupt, noise (lines without the
        marker), ignored (frames that are not commands), refused (err replies), repeats
        (resent commands answered from the last reply), version (other protocol versions),
        dropped (frames not sent because the wire was far behind, and commands that came
        while more than a few waited for a journal stream)."""
        return dict(self._stats)
