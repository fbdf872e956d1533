# The board's end of the serial link (docs/serial-protocol.md).
#
# Link turns whatever arrives on the port into commands for a handler and sends its replies and
# the board's own frames back. It owns no I/O: `write(str)` sends text (sys.stdout.write on a
# board), and the app calls feed() with whatever it read, in any chunks. A command is answered by
# exactly one `ok` or `err` frame carrying the command's id; a corrupt line is dropped and
# counted, never half-applied. Runs unchanged on MicroPython and CPython.
#
# Long work never holds the loop: with a `budget` (bytes a loop pass may write, about what the
# UART carries in a scan or two), the link works in steps, each bounded whatever the reply or
# the journal: feed() only gathers lines; step() (prepare(), or one within pump()) then decodes
# a command and runs it, makes a frame a slice at a time (linkwork.Dumper), works out a coded
# frame's parity a few bytes at a time (fec.Coder), collects the heap before a command that
# needs whole blocks, or reads and packs a record of a journal stream; pump() writes at most
# the budget per call. The main loop calls them between scans, so sensing never pauses for a
# resync, a big state reply or a burst of frames. Without a budget everything is done at once
# (tests, tools). A step the heap has no whole block for (a heap in pieces) is tried again a few
# times, then its command is answered that the board is short of memory (linkshort.py): never
# silence, which would have the host ask the same thing for ever.
#
# On a noisy line the host asks for coded frames (`parity`): every frame then goes out with
# Reed-Solomon parity after it (scoreboard/fec.py, docs/serial-protocol.md), which the host
# uses to correct what the line damaged. A clean line never asks, and pays nothing.

import gc

from . import frames

# Commands the host may send and the checks of their arguments: linkargs.py (COMMANDS: the
# host imports it here).
from .linkargs import COMMANDS, TEST_ONLY, check  # noqa: F401

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

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
_INBOX_MAX = const(8)  # lines gathered by feed() waiting for a step (beyond: dropped, resent)
# Steps in a row that find no whole block of heap before the work at hand is given up and its
# command answered that the board is short of memory (scoreboard/linkshort.py).
_SHORT_TRIES = const(3)
# Commands that need whole blocks of the heap: a collection first (in a step of its own).
_COLLECT = ("new", "undo", "act", "journal", "state", "parity")


def _steps():
    yield


_GENERATOR = type(_steps())  # a handler's command done in steps (a generator: _run)


def _through(steps):
    """A command done in steps, all of them now (a link without a budget): what it returns."""
    try:
        while True:
            next(steps)
    except StopIteration as e:
        return e.value


class Refused(Exception):
    """A command the board will not carry out; its message is sent to the host in `err`."""


class Link:
    """One end of the link on the board.

    `handler` implements `cmd_<name>(args)` for the commands in COMMANDS: each returns a result
    dict (None counts as {}) or raises Refused(message); `cmd_journal` returns an iterable of
    record dicts instead, each sent as a `rec` frame before the `ok`. inject and act are refused
    here unless `test_mode` is on."""

    Refused = Refused  # (for linkwork.py, which does not import this module)

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
        self._inbox = []  # lines feed() gathered, waiting for a step (with a budget)
        self._jobs = []  # frames being made a slice a step: [type, payload, droppable, work]
        self._ready = None  # (id, cmd, args) to run once the heap is collected (with a budget)
        self._doing = None  # [id, cmd, args, generator]: a command done a step at a time
        self._code = None  # the fec.Code the host asked for; None: plain frames
        self._coding = None  # the fec.Coder of the coded frame whose parity is being made
        self._fails = 0  # steps in a row that found no whole block of heap
        self._stats = {"frames_in": 0, "frames_out": 0, "corrupt": 0, "noise": 0,
                       "ignored": 0, "refused": 0, "repeats": 0, "version": 0, "dropped": 0}

    # -- sending -----------------------------------------------------------------------------
    def _send(self, typ, payload, droppable=False):
        """Queue a frame; its number, or None while it is still being made (with a budget:
        numbers are given as frames are finished, in the order they go out)."""
        if self.budget is None:
            line = frames.encode(self._n, typ, payload)  # FrameTooLong before a number is used
            return self._queue(line, droppable)
        self._jobs.append([typ, payload, droppable, None])
        return None

    def _queue(self, line, droppable):
        """Number spent, the finished frame line queued for the wire (coded if asked)."""
        n = self._n
        self._n = frames.next_n(n)
        if droppable and self._out_size + len(line) > _OUT_MAX:
            # The wire is far behind: drop it, its number spent, so the host sees the gap
            # (and resyncs records from the journal) instead of the board waiting on the wire.
            self._stats["dropped"] += 1
            return n
        if self._code is not None:
            from .fec import start

            start(self, n, line)  # a coded frame: inside a `z` frame, its parity after it
        else:
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
        if self._pos or self._coding is not None:
            self._write("\n")
        self._stream = None
        self._held = []
        self._waiting = []
        self._inbox = []
        self._jobs = []
        self._ready = None
        self._doing = None
        self._coding = None
        self._fails = 0
        self._out = []
        self._out_size = 0
        self._pos = 0

    def busy(self):
        """True while frames wait for the wire (or are being made), commands for a step, or a
        journal stream is under way."""
        return bool(self._out or self._jobs or self._inbox or self._waiting) or \
            self._stream is not None or self._ready is not None or self._coding is not None \
            or self._doing is not None

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
        for both: all of them). With a budget, a step of the link's work (step()) goes first
        while less than that waits for the wire, so the wire never idles while a frame is made.
        Returns the characters written. Call it once per loop pass."""
        if self._pumping:
            return 0  # a frame queued while pumping: the loop below sends it
        if budget is None:
            budget = self.budget
        if budget is not None and self.budget is not None and \
                self._out_size - self._pos < budget:
            self.step()
        self._pumping = True
        try:
            return self._pump(budget)
        finally:
            self._pumping = False

    def step(self):
        """One step of the link's work (with a budget), bounded whatever the frame or the
        journal (scoreboard/linkwork.py): what it was (a word: linkwork.step), or None if
        there was nothing to do."""
        if self._pumping or self.budget is None:
            return None
        if not (self._jobs or self._inbox or self._waiting) and self._coding is None and \
                self._ready is None and self._stream is None and self._doing is None and \
                (self._code is None or self._code.ready()):
            return None  # nothing to do (most passes): not even the import below
        try:
            from .linkwork import shed, step
        except MemoryError:
            # No room to load the link's work now: tried again at the next step (commands wait
            # in the inbox), the board plays on.
            return self._dropped(None)
        self._pumping = True
        try:
            done = step(self)
            self._fails = 0
            return done
        except MemoryError:
            # No whole block for this step's work now (a heap in pieces): the step is dropped
            # and tried again at the next, after a collection; the board plays on.
            return self._dropped(shed)
        finally:
            self._pumping = False

    def _dropped(self, shed):
        # A step the heap had no block for. A few in a row, and the work at hand is given up,
        # its command answered that the board is short of memory (linkwork.shed; without the
        # link's work, linkshort.starved): a heap in pieces can stay so, and a command must
        # not go unanswered for good. A MemoryError never leaves a step.
        self._stats["dropped"] += 1
        self._fails += 1
        gc.collect()
        done = self._fails >= _SHORT_TRIES
        if done:
            self._fails = 0
        try:
            if shed is not None:
                shed(self, done)
            elif done:
                from .linkshort import starved

                starved(self)
        except MemoryError:
            self._stats["dropped"] += 1
        return "dropped"

    def flush(self):
        """Make and write everything waiting now (the app stopping: its last beat)."""
        from .linkwork import flush

        flush(self)

    def prepare(self):
        """Between scans: a step of the link's work, while less than a pass's worth of frames
        waits for the wire. What it was (true), or None if there was no work to do."""
        if self.budget is None or self._out_size - self._pos >= self.budget:
            return None
        return self.step()

    def _pump(self, budget):
        sent = 0
        while True:
            if budget is None and not self._out:
                # Without a budget (tools, tests) the stream and the commands that waited for
                # it run as the wire empties.
                if self._stream is not None:
                    from .linkwork import stream_step

                    stream_step(self)
                    continue
                if self._waiting:
                    cid, cmd, args = self._waiting.pop(0)
                    self.command(cid, cmd, args)
                    continue
                return sent
            if not self._out:
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
        try:
            return self._emit(typ, payload)
        except MemoryError:
            # No block for it now, on a heap play has left in pieces: dropped as a frame the
            # wire had no room for, its number spent (while no journal stream numbers the
            # frames), so the host sees the gap and resyncs what it carried from the journal
            # (an action's record is journaled before its frame is made). The board plays on.
            self._stats["dropped"] += 1
            ready = self._ready
            if self._stream is None and not (ready is not None and ready[1] == "journal"):
                self._n = frames.next_n(self._n)
            return None

    def _emit(self, typ, payload):
        if typ not in EMIT_TYPES:
            raise ValueError("unknown frame type %r (known: %s)" % (typ, ", ".join(EMIT_TYPES)))
        if typ == "boot":
            payload = dict(payload)
            payload["protocol"] = frames.VERSION
            payload["test_mode"] = self.test_mode
        ready = self._ready
        if self._stream is not None or (ready is not None and ready[1] == "journal"):
            # A journal stream's rec frames are numbered one after the other up to its ok
            # (the host checks that none was lost): what the app sends meanwhile (or once the
            # stream is asked for) follows the ok.
            frames.encode(0, typ, payload)  # FrameTooLong now, as without a stream
            if len(self._held) < _HELD_MAX:
                self._held.append((typ, payload))
            else:
                self._stats["dropped"] += 1
            return None
        if self.budget is not None and not self._jobs and self._coding is None and typ != "a":
            # Nothing being made before it: the app's frame is made now, in the app's step,
            # and numbered at once (FrameTooLong now, as without a budget).
            return self._queue(frames.encode(self._n, typ, payload), True)
        # (An action's `a` frame is made in a step of the link's own, after the app's step
        # that journaled the action: a state's text is a long part of it. Without a compact
        # text it goes as its record and state, linkwork._job.)
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
        if self.budget is not None:
            self._send("ok", payload)  # made a slice a step; too long: see _unmade
            return ("ok", payload)
        try:
            self._send("ok", payload)
        except (frames.FrameTooLong, MemoryError) as e:
            # A result's spare keys (a state reply's latest action, app.status()) are left out
            # rather than the reply not going at all, or the board failing on a heap that
            # play has left in pieces.
            from .linkwork import _spareless

            payload = None
            result = _spareless(result)
            if result is not None:
                return self._ok(cid, result)
            if type(e) is MemoryError:
                return self._failed(cid, e)
            return self._err(cid, "too_long", "the reply does not fit in a frame: %s" % e)
        return ("ok", payload)

    # -- receiving ---------------------------------------------------------------------------
    def feed(self, data):
        """Take whatever arrived (bytes or str, partial or several lines, noise included).
        With a budget the lines wait for a step each (at most _INBOX_MAX of them)."""
        for line in self._lines.feed(data):
            if self.budget is None:
                self._line(line)
            elif len(self._inbox) < _INBOX_MAX:
                self._inbox.append(line)
            else:
                self._stats["dropped"] += 1  # unanswered: the host sends it again

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
        self.command(cid, cmd, args, self.budget is not None)

    def command(self, cid, cmd, args, defer=False):
        """Carry out one decoded command and send its one reply; returns (type, payload), or
        None for a journal stream (its reply comes once pump() has sent its records), for a
        command that waits for a stream to end, and (`defer`: a line fed with a budget) for
        one that needs the heap collected first: it runs at a later step."""
        if self._stream is not None:
            if cid == self._stream[0] and cmd == "journal":
                self._stats["repeats"] += 1  # the host resending the stream under way
            elif cmd == "parity":
                return self._run(cid, cmd, args)  # the line's coding changes now
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
        if defer and cmd in _COLLECT and self._ready is None:
            self._ready = [cid, cmd, args, False]  # a step collects the heap, the next runs it
            return None
        return self._command(cid, cmd, args)

    def _command(self, cid, cmd, args, collected=False):
        try:
            reply = self._run(cid, cmd, args, collected)
        except MemoryError as e:
            # (The handler's own failures are answered in _run: this is the command's reading
            # or its reply finding no block.) Kept like any reply: never carried out twice.
            reply = self._failed(cid, e)
        return self._kept(cid, cmd, args, reply)

    def _kept(self, cid, cmd, args, reply):
        """`reply`, kept as the last one if the command is one a resend must not repeat."""
        if reply is not None and cmd in _ONCE:
            self._last = (cid, cmd, args, reply[0], reply[1])
        return reply

    def _run(self, cid, cmd, args, collected=False):
        checked = check(cmd, args, self.test_mode)
        if type(checked) is tuple:  # (code, message): the command or an argument refused
            return self._err(cid, checked[0], checked[1])
        if cmd == "parity":
            from .fec import parity

            return parity(self, cid, checked)
        fn = getattr(self.handler, "cmd_" + cmd, None)
        if fn is None and cmd != "hello":
            return self._err(cid, "unsupported", "this firmware does not implement %s" % cmd)
        try:
            if cmd in _COLLECT and not collected:
                gc.collect()  # whole blocks for what the command makes (a record, a reply)
            if cmd == "journal":
                want = checked["want"]
                self._stream = [cid, fn(checked), checked["after"], checked["after"], 0,
                                int(str(want), 16) if want else 0, 0, args]
                if self.budget is None:
                    self.pump()
                return None
            result = fn(checked) if fn is not None else None
            if type(result) is _GENERATOR:
                # A command the handler does in steps: with a budget, a step of the link's a
                # step of it (linkwork.py), its reply once it returns; else all of it now.
                if self.budget is not None:
                    self._doing = [cid, cmd, args, result]
                    return None
                result = _through(result)
        except Refused as e:
            return self._err(cid, "refused", str(e))
        except Exception as e:  # a handler's bug must not stop the link: report it instead
            return self._failed(cid, e)
        return self._done_with(cid, cmd, args, result)

    def _done_with(self, cid, cmd, args, result):
        """The reply to a command the handler returned `result` for (a stepped one's too)."""
        if result is None:
            result = {}
        elif type(result) is not dict:
            return self._err(cid, "internal", "%s returned %s, not a dict"
                             % (cmd, type(result).__name__))
        if cmd == "hello":
            result = dict(result)
            result["protocol"] = frames.VERSION
            result["test_mode"] = self.test_mode
            if self._code is not None:
                result["parity"] = self._code.name  # the board codes its frames (absent: plain)
        return self._ok(cid, result)

    def _failed(self, cid, e):
        rule = getattr(e, "rule", None)
        if type(rule) is str:  # a RuleError: the action broke a rule of the game
            return self._err(cid, "rule", str(e), {"rule": rule})
        if isinstance(e, MemoryError):
            # Not a bug of the command: the heap has no whole block for it now (a long game,
            # a fragmented heap). The board plays on; the host may ask for less (linkshort.py
            # adds the heap's figures; with no room even for that, these words alone).
            try:
                from .linkshort import short

                return short(self, cid, e)
            except MemoryError:
                pass
            return self._err(cid, "refused", "the board is short of memory for that now: %s"
                             % e)
        return self._err(cid, "internal", "%s: %s" % (type(e).__name__, e))

    def stats(self):
        """Counters: frames_in (commands), frames_out, corrupt, noise (lines without the
        marker), ignored (frames that are not commands), refused (err replies), repeats
        (resent commands answered from the last reply), version (other protocol versions),
        dropped (frames not sent because the wire was far behind, and commands that came
        while more than a few waited for a journal stream), and, once the host asked for
        coding, coded (frames sent with parity: scoreboard/fec.py)."""
        return dict(self._stats)
