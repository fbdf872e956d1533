"""The host end of the serial link (docs/serial-protocol.md): find and open the board's port,
send commands and match their replies, collect what the board sends on its own.

Ports are opened with serial.serial_for_url, so a test can pass `loop://` or a pseudo-terminal
path, and a simulated board is just another path. Every failure a user can meet comes out as a
ChalkError with one line saying what happened and a hint saying what to do.
"""

import collections
import errno
import os
import random
import time

import serial
from serial.tools import list_ports

from chalk import compact, fec
from chalk.errors import ChalkError
from scoreboard import frames
from scoreboard.link import COMMANDS, EMIT_TYPES

BAUD = 115200
ENV_PORT = "CHALK_PORT"
READ_TIMEOUT = 0.05  # one read's wait: short, so deadlines and resends stay accurate
# A line's bytes, at most: a coded frame (a frame of 1024 bytes and its parity) is longer than
# frames.MAX_LINE; frames.decode still refuses a plain one past that.
LINE_MAX = 4096

# USB ids of the bridges ESP32 boards carry (and Espressif's own USB, on S2/S3/C3/C6).
BRIDGES = {
    (0x10C4, 0xEA60): "CP210x",
    (0x1A86, 0x7523): "CH340",
    (0x1A86, 0x55D4): "CH9102",
}
ESPRESSIF_VID = 0x303A

_MOD = frames.MAX_N + 1
_DEPLOY = "try `chalk deploy` (it copies the Chalk app onto the board), or reset the board"

Port = collections.namedtuple("Port", "device description vid pid bridge board")
Port.__doc__ = "A serial port seen on this computer; `board` is True for an ESP32 USB bridge."

Frame = collections.namedtuple("Frame", "n type payload")
Frame.__doc__ = "A frame from the board: its frame number, type and payload dict."


class BoardError(ChalkError):
    """The board answered a command with `err`: `reason` is its code ("refused", "args", ...)
    and `payload` the whole err payload."""

    def __init__(self, message, hint=None, reason=None, payload=None):
        super().__init__(message, hint)
        self.reason = reason
        self.payload = payload or {}


class NoReply(ChalkError):
    """A command got no reply (after its resends): a noisy line or a board that is not there."""


# -- finding a port --------------------------------------------------------------------------

def bridge_of(vid, pid):
    """The name of an ESP32 USB bridge from its USB ids, or None."""
    if vid == ESPRESSIF_VID:
        return "Espressif USB"
    return BRIDGES.get((vid, pid))


def ports():
    """Every serial port seen, likely boards first."""
    seen = []
    for p in list_ports.comports():
        bridge = bridge_of(p.vid, p.pid)
        desc = p.description if p.description and p.description != "n/a" else ""
        seen.append(Port(p.device, desc, p.vid, p.pid, bridge, bridge is not None))
    seen.sort(key=lambda p: (not p.board, p.device))
    return seen


def describe(port):
    """One port as a user reads it: `/dev/ttyUSB0 (CP210x, likely a board)`."""
    bits = []
    if port.bridge:
        bits.append("%s, likely a board" % port.bridge)
    elif port.description:
        bits.append(port.description)
    if port.vid is not None:
        bits.append("%04x:%04x" % (port.vid, port.pid or 0))
    return port.device + (" (%s)" % ", ".join(bits) if bits else "")


def _seen(listing):
    if not listing:
        return "no serial ports seen: is the board plugged in, with a data cable (not a " \
               "charge-only one)?"
    return "ports seen: " + "; ".join(describe(p) for p in listing)


def resolve_port(arg=None, env=None, listing=None):
    """The port to use: `arg` (--port), else $CHALK_PORT, else "auto": the only board attached.

    `env` and `listing` stand in for os.environ and ports() in tests."""
    env = os.environ if env is None else env
    port = arg or env.get(ENV_PORT) or "auto"
    if port != "auto":
        return port
    listing = ports() if listing is None else listing
    boards = [p for p in listing if p.board]
    if len(boards) == 1:
        return boards[0].device
    if not boards:
        raise ChalkError("no Chalk board found (no ESP32 USB bridge among the serial ports)",
                         _seen(listing) + "; give the port with --port or $%s" % ENV_PORT)
    raise ChalkError("%d boards attached: %s" % (len(boards), ", ".join(describe(p)
                                                                        for p in boards)),
                     "choose one with --port or $%s" % ENV_PORT)


# -- opening a port --------------------------------------------------------------------------

def _group_of(path):
    try:
        import grp

        return grp.getgrgid(os.stat(path).st_gid).gr_name
    except (ImportError, OSError, KeyError):
        return None


def _open_error(port, e):
    code = getattr(e, "errno", None)
    text = str(e)
    is_url = "://" in port
    if code == errno.ENOENT or (code is None and not is_url and not os.path.exists(port)):
        return ChalkError("no such port: %s" % port, _seen(ports()))
    if code in (errno.EACCES, errno.EPERM):
        group = _group_of(port)
        if group and group != "root":
            return ChalkError(
                "permission denied on %s (it belongs to group %s)" % (port, group),
                "join that group: sudo usermod -aG %s $USER, then log out and back in "
                "(the serial group is dialout on Debian/Ubuntu, uucp on Arch)" % group)
        return ChalkError(
            "permission denied on %s" % port,
            "join the serial group: sudo usermod -aG dialout $USER (the group is dialout on "
            "Debian/Ubuntu, uucp on Arch), then log out and back in")
    if code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK) or "lock" in text.lower():
        return ChalkError(
            "port %s is busy: another program has it open" % port,
            "close mpremote, a serial monitor (screen, minicom, picocom, Thonny, the Arduino "
            "IDE) or another chalk, then try again")
    if code in (errno.EISDIR, errno.ENOTTY) or (
            code is None and not is_url and os.path.exists(port)):
        what = "a directory" if os.path.isdir(port) else "not a terminal device"
        return ChalkError("%s is not a serial port (%s)" % (port, what),
                          "give the board's port, e.g. /dev/ttyUSB0; " + _seen(ports()))
    return ChalkError("cannot open %s: %s" % (port, text), _seen(ports()))


def open_port(port, baud=BAUD, timeout=READ_TIMEOUT):
    """Open a port (a device path, a pseudo-terminal or a pyserial URL such as loop://).

    `timeout` is the wait of one read. A device is locked for this process, so two programs
    never read one board. Failures come out as ChalkError."""
    kwargs = {"baudrate": baud, "timeout": timeout}
    if "://" not in port:
        kwargs["exclusive"] = True
    try:
        ser = serial.serial_for_url(port, **kwargs)
    except ValueError as e:  # an unknown URL scheme or a setting the port refuses
        raise ChalkError("cannot open %s: %s" % (port, e),
                         "give a device path such as /dev/ttyUSB0, or a pyserial URL")
    except OSError as e:  # serial.SerialException is an OSError, errno set when the OS gave one
        raise _open_error(port, e)
    # What the board sent while nobody had the port open is stale (a boot frame from before the
    # records the host is about to ask for, say): the journal, not the buffer, is the history.
    try:
        ser.reset_input_buffer()
    except (OSError, AttributeError):
        pass
    return ser


def version_error(version, port):
    """The ChalkError for a board that speaks another protocol version."""
    if version > frames.VERSION:
        return ChalkError(
            "the board on %s speaks serial protocol v%d; this chalk speaks v%d"
            % (port, version, frames.VERSION),
            "upgrade chalk (pip install --upgrade chalk) to talk to this board")
    return ChalkError(
        "the board on %s speaks serial protocol v%d, older than this chalk's v%d"
        % (port, version, frames.VERSION),
        "deploy the firmware that comes with this chalk: `chalk deploy` (or reflash the board)")


# -- talking to a board ----------------------------------------------------------------------

class BoardLink:
    """Commands and replies over an open serial object (one request at a time).

    Frames the board sends on its own (rec, state, warn, event, boot) are queued in order and
    read with poll() or frames(). Counters (stats()): frames received, corrupt lines, noise
    lines, frames lost (gaps in the board's frame numbers), restarts of the board, stale
    replies (to earlier requests), echoes of our own commands, and queue overflows."""

    def __init__(self, ser, port=None, first_id=None, queue_max=10000):
        self.ser = ser
        self.port = port or getattr(ser, "port", None) or "the port"
        if ser.timeout is None or ser.timeout > READ_TIMEOUT:
            ser.timeout = READ_TIMEOUT
        self._lines = frames.Lines(LINE_MAX)
        # Coded frames on a noisy line (docs/serial-protocol.md): the board is asked for them
        # once damaged frames are seen, and for plain ones again on a clean line.
        self.coding = fec.Coding(time.monotonic)
        self._unpack = compact.Unpacker()  # compact frames (v2) back into rec/state payloads
        # A fresh random id per session: a late reply to a previous session never matches.
        self._next_id = first_id if first_id is not None else random.randint(1, 10 ** 8)
        self._queue = collections.deque()
        self._arrived = {}  # frames heard, by the type they came as (progress of a request)
        self._queue_max = queue_max
        self._pending = None  # id of the request waiting for its reply
        self._reply = None
        self._expect = None  # the board's next frame number, once one frame was seen
        self._fresh = True
        self.noise = collections.deque(maxlen=20)  # the last lines that were not frames
        self.info = None  # the board's hello result
        self.on_line = None  # on_line(line bytes, [(type, payload)] or a reason): chalk watch --raw
        self.beat = None  # (time.monotonic(), payload) of the board's last heartbeat
        self.heard = None  # time.monotonic() of the last frame from the board
        self._counts = {"frames": 0, "corrupt": 0, "noise": 0, "lost": 0, "restarts": 0,
                        "stale": 0, "echo": 0, "overflow": 0, "repaired": 0}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.ser.close()

    def stats(self):
        return dict(self._counts)

    # -- the wire ----------------------------------------------------------------------------
    def _lost(self, e):
        return ChalkError("lost the connection to the board on %s: %s" % (self.port, e),
                          "is the cable unplugged? plug it back in and run the command again; "
                          "nothing is lost, the archive catches up from the board's journal")

    def _write(self, data):
        if self._fresh:
            data = b"\n" + data  # ends whatever partial line the board may hold from before
            self._fresh = False
        try:
            self.ser.write(data)
        except (serial.SerialException, OSError) as e:
            raise self._lost(e)

    def _read_chunk(self):
        try:
            waiting = self.ser.in_waiting
            data = self.ser.read(waiting or 1)
        except (serial.SerialException, OSError) as e:
            raise self._lost(e)
        for line in self._lines.feed(data):
            self._take(line)

    def _take(self, line):
        c = self.coding
        if line[:4] == b"~c%d " % frames.VERSION and b" z " in line[:24]:
            u = fec.unwrap(line)
            if u is not None:  # an intact coded frame: the frame inside it
                c.note(len(line) + 1, 0)
                c.set_board(u[1])
                return self._take_frame(u[0], frames.decode(u[0]))
        try:
            f = frames.decode(line)
        except frames.WrongVersion as e:
            raise version_error(e.version, self.port)
        except frames.Corrupt as e:
            f = e
        if f is not None and not isinstance(f, frames.Corrupt):
            c.note(len(line) + 1, 0, True)
            if f[0] == self._expect and f[1] in EMIT_TYPES + ("ok", "err", "r"):
                # A board that coded its frames and sends this one plain (the next by its
                # number: no restart between, not an echo of a command) gave coding up.
                c.plain()
            return self._take_frame(line, f)
        # Damaged, or not a frame at all: a coded frame the line damaged is corrected here.
        fixed = c.repair(line)
        for inner, code, n in fixed:
            self._counts["repaired"] += 1
            c.repaired += 1
            c.symbols += n
            c.note(len(line) + 1, max(n, 1))
            c.set_board(code)
            self._take_frame(inner, frames.decode(inner))
        if fixed:
            return
        if f is not None:
            self._counts["corrupt"] += 1
            # A damaged coded frame that could not be corrected: more than its code corrects.
            c.note(len(line) + 1, 1 + (c.board.nsym // 2 if c.board is not None else 0),
                   c.board is None)
            if self.on_line:
                self.on_line(line, "corrupt: %s" % f)
            return
        self._counts["noise"] += 1
        self.noise.append(line.decode("utf-8", "replace"))
        if self.on_line:
            self.on_line(line, "not a frame")

    def _take_frame(self, line, f):
        n, typ, payload = f
        if typ in COMMANDS and typ not in EMIT_TYPES:  # our own command: a port that echoes
            self._counts["echo"] += 1
            return
        self._count(n, typ)
        # By the type it came as: a journal stream's records come as `r` blocks or `rec` frames;
        # a live action as an `a` frame (its rec and state), which is no progress of a stream.
        kind = "rec" if typ == "r" else typ
        self._arrived[kind] = self._arrived.get(kind, 0) + 1
        self.heard = time.monotonic()
        if typ == "beat":  # kept, not queued: an idle board sends one a second while it runs
            self.beat = (self.heard, payload)
            return
        if typ == "boot":
            self.beat = None  # what the board said before it restarted no longer holds
            self.coding.set_board(None)  # a board starts with plain frames
            self._unpack.learn(payload.get("game"), payload.get("config"))
        if typ in ("ok", "err") and type(payload.get("id")) is not int:
            self._counts["stale"] += 1  # a reply naming no request
            return
        if typ in frames.COMPACT or typ == "rec":
            try:
                parts = self._unpack.expand(typ, payload)
            except Exception as e:  # whatever a board (or a cable) sends: counted, never fatal
                self._counts["corrupt"] += 1
                self.noise.append("unreadable %s frame %d: %s" % (typ, n, e))
                if self.on_line:
                    self.on_line(line, "unreadable: %s" % e)
                return
            if self.on_line:
                self.on_line(line, parts)
            for typ, payload in parts:
                self._queue_frame(Frame(n, typ, payload))
            return
        if self.on_line:
            self.on_line(line, [(typ, payload)])
        if typ in ("ok", "err"):
            if self.coding.answered(payload.get("id"), typ, payload):
                return  # the reply to a `parity` command this link sent on its own
            if self._pending is not None and payload.get("id") == self._pending:
                self._reply = Frame(n, typ, payload)
            else:
                self._counts["stale"] += 1
            return
        self._queue_frame(Frame(n, typ, payload))

    def _queue_frame(self, frame):
        if len(self._queue) >= self._queue_max:
            self._queue.popleft()
            self._counts["overflow"] += 1
        self._queue.append(frame)

    def _count(self, n, typ):
        self._counts["frames"] += 1
        if typ == "boot":
            if self._expect is not None:
                self._counts["restarts"] += 1
        elif self._expect is not None and n != self._expect:
            gap = (n - self._expect) % _MOD
            if gap < _MOD // 2:
                self._counts["lost"] += gap
            else:  # numbers went back: the board restarted and its boot frame was lost
                self._counts["restarts"] += 1
                self.coding.set_board(None)
        self._expect = frames.next_n(n)

    # -- requests ----------------------------------------------------------------------------
    def _tune(self):
        """Ask the board for the frames the line needs (coded, with more or less parity, or
        plain again), as the line's damage is measured: sent on its own beside a request, its
        reply taken by _take (Coding.answered)."""
        due, code = self.coding.due()
        if not due:
            return
        cid = self._new_id()
        args = {"nsym": code.nsym, "span": code.span} if code is not None else {"nsym": 0}
        self.coding.sent(cid, code)
        self._write(frames.encode(cid, "parity", args).encode())

    def _new_id(self):
        cid = self._next_id
        self._next_id = frames.next_n(cid) or 1
        return cid

    def request(self, cmd, args=None, timeout=5.0, retries=2, progress=(), until=None):
        """Send a command and return the result dict of its `ok` reply.

        Without a reply the same frame (same id) is sent again `retries` times, spread over
        `timeout` seconds: the board answers a repeat of a state-changing command from its last
        reply instead of carrying it out twice. Frames of a type in `progress` arriving
        meanwhile push the deadline on (a long journal stream). `until(queue)`: a test of the
        frames queued that makes the reply unneeded (what was asked for has come); then None
        is returned without waiting for it. An `err` reply raises BoardError with the board's
        message; no reply at all raises NoReply."""
        reply = self._exchange(cmd, args, timeout, retries, progress, until)
        if reply is None:
            return None
        result = reply.payload.get("result")
        if result is None:
            return {}
        if type(result) is not dict:
            raise BoardError("the board on %s answered %s with a result that is not an object "
                             "(frame %d)" % (self.port, cmd, reply.n), "a firmware problem: "
                             "`chalk deploy`", "malformed", reply.payload)
        return result

    def _exchange(self, cmd, args, timeout, retries, progress, until=None):
        cid = self._new_id()
        data = frames.encode(cid, cmd, args or {}).encode()
        interval = timeout / (retries + 1)
        now = time.monotonic()
        deadline = now + timeout
        resend = now + interval
        self._pending = cid
        self._reply = None
        seen = self._seen(progress)
        try:
            self._tune()
            self._write(data)
            while self._reply is None:
                self._read_chunk()
                self._tune()  # the line may have just shown damage: ask for parity at once
                now = time.monotonic()
                if progress and self._seen(progress) != seen:
                    seen = self._seen(progress)
                    resend = now + interval
                    deadline = max(deadline, resend)
                if self._reply is not None:
                    break
                if until is not None and until(self._queue):
                    return None
                if now >= deadline:
                    raise self._no_reply(cmd)
                if now >= resend:
                    self._tune()
                    self._write(data)
                    resend = now + interval
        finally:
            self._pending = None
        reply = self._reply
        self._reply = None
        if reply.type == "err":
            raise self._refused(cmd, reply.payload)
        return reply

    def _seen(self, types):
        """Frames of these types heard so far (as they came: see _take_frame)."""
        return sum(self._arrived.get(t, 0) for t in types)

    def _no_reply(self, cmd):
        hint = _DEPLOY
        said = [line for line in self.noise if line.strip()]
        if said:
            last = said[-1].strip()
            if any(">>>" in s or "Traceback" in s or "MicroPython" in s for s in said):
                hint = ("the board is at the MicroPython REPL, so the Chalk app is not running "
                        "(last line: %r); %s" % (last[:60], _DEPLOY))
            else:
                hint = "the board printed %r; %s" % (last[:60], _DEPLOY)
        return NoReply("no reply from the board on %s: is the Chalk firmware running?"
                       % self.port, hint)

    def _refused(self, cmd, payload):
        code = payload.get("code")
        message = payload.get("error") or "no reason given"
        if code == "version" and type(payload.get("protocol")) is int:
            e = version_error(payload["protocol"], self.port)
            return BoardError(e.message, e.hint, code, payload)
        hints = {
            "test_mode": 'set "link": {"test_mode": true} in the board config and deploy it, '
                         "or start the simulator in test mode",
            "unknown": "the board's firmware is older than this chalk: `chalk deploy`",
            "unsupported": "the board's firmware is older than this chalk: `chalk deploy`",
            "internal": "a firmware bug: please report it with this message",
        }
        hint = hints.get(code)
        if code == "refused" and isinstance(payload.get("heap"), dict):
            hint = ("the board is short of memory (its heap in pieces after a long game): ask "
                    "again in a moment, or restart it (power cycle) if it goes on")
        return BoardError("the board refused %s: %s" % (cmd, message), hint, code, payload)

    def hello(self, timeout=5.0, retries=2):
        """Ask the board who it is; checks its protocol version. Returns the hello result.
        `retries`: resends of the same request within `timeout` (more for a noisy line)."""
        info = self.request("hello", timeout=timeout, retries=retries)
        if info.get("protocol") != frames.VERSION:
            v = info.get("protocol")
            raise version_error(v if type(v) is int else 0, self.port)
        self.info = info
        self.coding.set_board(fec.Code.parse(info.get("parity")))
        self._unpack.learn(info.get("game"), info.get("config"))
        return info

    def journal_since(self, seq, timeout=5.0, attempts=4):
        """Every journal record after `seq` (a list of rec payloads, by seq, no duplicates).

        The board streams them as `rec` frames before its `ok`; when frames were lost on the
        way, the records up to the first loss are kept and the rest asked for again."""
        got = {}
        after = seq
        for _ in range(attempts):
            before = len(self._queue)
            reply = self._exchange("journal", {"after": after}, timeout, 2, ("rec",))
            recs = self._take_recs(before)
            for f in recs:
                s = f.payload.get("seq")
                if type(s) is int and s > seq:
                    got[s] = f.payload
            result = reply.payload.get("result") or {}
            count = result.get("count", 0)
            # The stream is the `count` frames just before the ok: find the first one missing.
            by_n = {f.n: f for f in recs}
            start = (reply.n - count) % _MOD
            missing = None
            for i in range(count):
                if (start + i) % _MOD not in by_n:
                    missing = i
                    break
            if missing is None:
                return [got[s] for s in sorted(got)]
            if missing:
                after = by_n[(start + missing - 1) % _MOD].payload["seq"]
        raise ChalkError("the journal from the board on %s kept losing frames (%d lost so far)"
                         % (self.port, self._counts["lost"]),
                         "check the USB cable, then run the command again: records already "
                         "archived are kept")

    def _take_recs(self, start):
        """Remove and return the rec frames queued from index `start` on."""
        keep = collections.deque()
        recs = []
        for i, f in enumerate(self._queue):
            if i >= start and f.type == "rec":
                recs.append(f)
            else:
                keep.append(f)
        self._queue = keep
        return recs

    # -- what the board sends on its own -----------------------------------------------------
    def poll(self, timeout=0.0):
        """The next unsolicited frame, waiting up to `timeout` seconds (None: forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._pending is None:
            self._tune()
        while not self._queue:
            self._read_chunk()
            if self._queue:
                break
            if deadline is not None and time.monotonic() >= deadline:
                return None
        return self._queue.popleft()

    def frames(self, timeout=None):
        """Yield unsolicited frames as they come; stop after `timeout` seconds without one."""
        while True:
            f = self.poll(timeout)
            if f is None:
                return
            yield f
