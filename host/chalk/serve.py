"""`chalk serve`: one process that owns every board of a venue.

Each table (a board on a serial port) gets a Table: a thread that archives the board exactly as
`chalk archive` does (it is a follow.Follower: same resync, same guarantees) and, between
frames, carries out the commands other chalk commands send through the local API (web.py).
What the board sends is passed on to whoever listens (the web pages, `chalk watch`).

While it runs, a small file (`serve.json`, in the user's runtime directory or $CHALK_SERVE_FILE)
says where its API is and which ports it holds; `remote.connect` reads it, so `chalk watch`, `new`,
`undo`, `test` and `service` talk to the board through the server instead of failing on a busy
port. The API's control token (for other machines) is in `serve.token` beside it, readable by its
owner only; commands on this computer reach the API on the loopback address and need none.
"""

import concurrent.futures
import json
import os
import queue
import secrets
import threading
import time

from chalk import views
from chalk.errors import ChalkError
from chalk.follow import Follower
from chalk.remote import token_file
from chalk.store import Archive

DEFAULT_HTTP_PORT = 8421
# Commands a client may send a board through the server. `journal` and `ack` stay the
# archiver's: a client reading the journal would take the records the archive is waiting for.
FORWARDED = ("state", "new", "undo", "inject", "act", "service")


# -- the server side -------------------------------------------------------------------------

HEARTBEAT_S = 1.0  # the board sends a frame at least this often (docs/serial-protocol.md)
# A table is silent once no frame came for one heartbeat period and a half: one beat missed,
# with room for a board or a host that is a little late (a busy machine).
SILENT_S = 1.5 * HEARTBEAT_S
WATCH_S = 0.1  # how often the venue looks at every table's state (the pages learn of a change)
REFUSED_S = 8.0  # how long a refused entry stays on the table's card
BACKOFF = (0.1, 0.5)  # waits between reconnections: a board plugged back is found at once

# A table's states (docs/venue.md says what staff do in each).
SCORING = "scoring"
CATCHING_UP = "catching up"
SERVICE = "service"
SILENT = "silent"
STOPPED = "stopped"
NO_CONNECTION = "no connection"
STATES = (SCORING, CATCHING_UP, SERVICE, SILENT, STOPPED, NO_CONNECTION)


class BadRequest(ChalkError):
    """A client's command refused before it reaches the board (web.py answers 400)."""


def table_name_problem(name):
    """Why `name` cannot be a table's name, or None. A table is reached by its name in an
    address (/table/NAME) and in --table NAME=PORT: a "/" would make it two path segments and
    an "=" cannot be told from the one before the port, so both are refused, as are control
    characters, blanks at either end and names longer than 40 characters."""
    from chalk.text import text_problem

    if type(name) is not str or not name.strip():
        return "a table needs a name"
    if name != name.strip():
        return "a table name cannot begin or end with a blank"
    if len(name) > 40:
        return "a table name has at most 40 characters (%d given)" % len(name)
    for bad in ("/", "="):
        if bad in name:
            return "a table name cannot hold %r (it is part of the table's address)" % bad
    if name in (".", ".."):
        return "%r cannot be a table name" % name
    return text_problem(name)


def safe_table_name(text):
    """A table name made from a board's own name (a board config's `table` or `board`)."""
    from chalk.text import printable

    name = printable(str(text)).replace("/", "-").replace("=", "-").strip()[:40].strip()
    return name if name and table_name_problem(name) is None else "table"


def _texts(value):
    """Every str in a JSON value (keys too)."""
    if type(value) is str:
        yield value
    elif type(value) is dict:
        for k, v in value.items():
            yield k
            yield from _texts(v)
    elif type(value) in (list, tuple):
        for v in value:
            yield from _texts(v)


def check_request(cmd, args):
    """Refuse, before it is queued, a command no board could take: text that is not text (a
    lone surrogate: UTF-8 cannot carry it), a player's name a screen must not show (control
    characters), or a frame that cannot be made at all (too long, too deep)."""
    from chalk.text import text_problem
    from scoreboard import frames

    for text in _texts(args):
        for ch in text:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                raise BadRequest("%s: %s holds U+%04X, half of a character (a lone "
                                 "surrogate), which is not text" % (
                                     cmd, json.dumps(text)[:60], ord(ch)),
                                 "send names as UTF-8 text")
    if cmd == "new" and type(args.get("players")) is list:
        for p in args["players"]:
            for name in (p if type(p) is list else [p]):
                why = text_problem(name) if type(name) is str else None
                if why:
                    raise BadRequest("new: player %s: %s" % (json.dumps(name)[:60], why),
                                     "give plain names such as Ann and Bob")
    try:
        frames.encode(0, cmd, args).encode("utf-8")
    except frames.FrameTooLong as e:
        raise BadRequest("%s: the command is too long for the board (%s)" % (cmd, e))
    except (ValueError, TypeError, RecursionError) as e:
        raise BadRequest("%s: the board cannot be sent this: %s" % (cmd, e))


def _where(e):
    """file:line of the innermost frame of an exception (a bug's one-line report)."""
    import traceback

    tb = traceback.extract_tb(e.__traceback__)
    if not tb:
        return ""
    f = tb[-1]
    return " (at %s:%d)" % (os.path.basename(f.filename), f.lineno)


class Table(Follower):
    """A board at the venue: archived like `chalk archive`, shared with the API's clients, and
    watched: its state (STATES) follows what the board sends, frame by frame."""

    tick = 0.05  # a client's command waits at most this long for the archiver's loop

    def __init__(self, venue, name, port, db_path, idle=2.0, baud=None):
        super().__init__(None, port=port, say=self._note, stop=venue.stop, idle=idle,
                         baud=baud, backoff=BACKOFF)
        self.venue = venue
        self.name = name
        self.db_path = db_path
        self.requests = queue.Queue()
        self.info = None
        self.status = None
        self.log = []  # the last lines it said
        self.phase = "starting"  # starting, connecting, syncing (hello answered), live
        self.link = None  # the BoardLink of the session in progress
        self.trouble = None  # the last error that ended a session or the worker
        self.failure = None  # why the worker failed, while it waits to start again
        self.worker_restarts = 0
        self.refusal = None  # (until, rule, reason): an entry the board refused
        self._mode = (0.0, SCORING)  # (when, mode) the board last said it was in
        self._opened = time.monotonic()  # when the session in progress began
        self._dirty = False
        self._shown = None  # (state, why) of the last view made
        self.since = time.time()  # when the state last changed
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._main, name="table " + name, daemon=True)

    # -- the worker --------------------------------------------------------------------------
    def _note(self, text):
        self.log = (self.log + [text])[-20:]
        self.venue.say("%s: %s" % (self.name, text))

    def _main(self):
        """The table's worker: archive the board until the server stops. Whatever fails (a
        locked archive, a bug) is said in one line and the worker starts again by itself."""
        delay = BACKOFF[0]
        said = None
        while not self.venue.stop.is_set():
            try:
                with Archive(self.db_path, create=True) as db:
                    self.archive = db
                    self.failure = None
                    self.run()
                return
            except ChalkError as e:  # the archive refuses this board (a copied id, a lock)
                why = e.message + ("; hint: " + e.hint if e.hint else "")
            except Exception as e:  # a bug: said, never the end of the table
                why = "chalk serve failed: %s: %s%s" % (type(e).__name__, e, _where(e))
            finally:
                self.phase = "connecting"
                self.link = None
                self._fail_pending("the table %s is starting again" % self.name)
            self.worker_restarts += 1
            self.failure = why
            self.trouble = None
            self.venue.changed(self)
            if why != said:  # the same refusal again and again is said once
                self._note("%s; starting the table again" % why)
                said = why
            self.venue.stop.wait(delay)
            delay = min(delay * 2, 5.0)

    # -- the follower's hooks ----------------------------------------------------------------
    def _session(self, port):
        self.phase = "connecting"
        self._opened = time.monotonic()
        try:
            super()._session(port)
        except ChalkError as e:
            self.trouble = e
            raise
        finally:
            self.phase = "connecting"
            self.link = None
            self._fail_pending("lost the connection to the board of table %s" % self.name)

    def _report(self, res, rec):
        if not self.venue.quiet:  # a line per action and game: not with -q
            super()._report(res, rec)

    def _board(self, info, port):
        super()._board(info, port)
        self.info = dict(info, table=self.name)
        self.phase = "syncing"
        self.trouble = None
        self.failure = None
        self.venue.changed(self)

    def _set_clock(self, link):
        self.link = link
        super()._set_clock(link)

    def _sync(self, link):
        self.link = link
        super()._sync(link)
        self._refresh(link)
        if self.phase != "live":
            self.phase = "live"
            self.venue.changed(self)

    def _frame(self, link, f, syncing=False):
        need = super()._frame(link, f, syncing)
        self.venue.frame(self, f)
        if f.type == "warn" and type(f.payload.get("refused")) is str:
            self.refusal = (time.monotonic() + REFUSED_S, f.payload["refused"],
                            _reason(f.payload["refused"], f.payload.get("message")))
            self.venue.changed(self)
        # Every change the board makes ends with a state frame (after an action's rec, or a new
        # game's header): one refresh of the whole status per change.
        if f.type in ("state", "warn", "boot"):
            self._dirty = True
        return need

    def _between(self, link):
        from chalk.link import NoReply

        while True:
            try:
                cmd, args, timeout, fut, due = self.requests.get_nowait()
            except queue.Empty:
                break
            if not fut.set_running_or_notify_cancel():
                continue
            if time.monotonic() > due:  # waited out a reconnection: too late to carry out
                fut.set_exception(ChalkError(
                    "table %s: the board was not reachable within %g s" % (self.name, timeout),
                    "chalk serve reconnects by itself; try again"))
                continue
            try:
                fut.set_result(link.request(cmd, args, timeout=timeout))
            except NoReply as e:  # the board is silent: the state says so; the link stays
                fut.set_exception(e)
            except ChalkError as e:
                fut.set_exception(e)
                if not hasattr(e, "reason"):  # the port itself failed: a new session
                    raise
            except Exception as e:  # checked before it was queued: a bug, said
                fut.set_exception(ChalkError("chalk serve failed on %s: %s" % (cmd, e)))
                raise
        if self._dirty:
            self._refresh(link)

    def _refresh(self, link):
        from chalk.link import NoReply

        self._dirty = False
        try:
            status = link.request("state", timeout=self.reply)
        except NoReply:
            self._dirty = True  # asked again once the board answers
            return
        self.status = status
        if status.get("mode") in (SCORING, SERVICE):
            self._mode = (time.monotonic(), status["mode"])
        self.venue.changed(self)

    # -- the table's state -------------------------------------------------------------------
    @property
    def connected(self):
        """The board's session is up: commands go through (even while it is silent: they
        wait for it, or fail with no reply)."""
        return self.phase == "live"

    def condition(self, now=None):
        """(state, why): the table's state (one of STATES) and, unless it is scoring, why, in
        words for the staff."""
        now = time.monotonic() if now is None else now
        t = _quote(self.name)
        if self.failure is not None:
            return NO_CONNECTION, "Table %s: chalk serve hit a problem and is starting the " \
                "table again (%s)" % (t, self.failure)
        link = self.link
        if self.phase in ("syncing", "live") and link is not None:
            beat = link.beat
            mode = self._mode[1]
            if beat is not None and beat[0] >= self._mode[0]:
                mode = beat[1].get("mode", SCORING)
            if mode in ("repl", "stopped"):  # its last word: silence follows
                return STOPPED, _STOPPED % t
            heard = link.heard if link.heard is not None else self._opened
            if now - heard > SILENT_S and not _waiting(link):
                if _at_repl(link):
                    return STOPPED, _STOPPED % t
                return SILENT, _SILENT % t
            if mode == SERVICE:
                return SERVICE, _SERVICE % t
            if mode != SCORING:
                return STOPPED, "Table %s: the board says it is in %s mode, not scoring" % (
                    t, _quote(mode))
            if self.phase == "syncing":
                return CATCHING_UP, _CATCHING_UP % t
            return SCORING, None
        if self.phase == "syncing":
            return CATCHING_UP, _CATCHING_UP % t
        return _trouble(t, self.port, self.trouble)

    def _observe(self):
        state, why = self.condition()
        with self._lock:
            if self._shown is None or self._shown[0] != state:
                self.since = time.time()
            self._shown = (state, why)
        return state, why

    def check(self):
        """Called by the venue every WATCH_S: tell the pages when the state changed (a board
        fell silent or came back, showed its service view), or a refusal was long enough."""
        r = self.refusal
        if r is not None and time.monotonic() >= r[0]:
            self.refusal = None
            self.venue.changed(self)
            return
        if self.condition() != self._shown:
            self.venue.changed(self)

    def _fail_pending(self, message):
        """A session ended: the commands waiting for it that are still within their time wait
        for the next one (a moment's lock of the archive, a reconnection: a staff member's
        undo still goes through); the others fail, saying why."""
        now = time.monotonic()
        keep = []
        while True:
            try:
                item = self.requests.get_nowait()
            except queue.Empty:
                break
            if item[3].done():
                continue
            if now < item[4] and not self.venue.stop.is_set():
                keep.append(item)
            elif item[3].set_running_or_notify_cancel():
                item[3].set_exception(ChalkError(message, "see `chalk serve`'s output"))
        for item in keep:
            self.requests.put(item)

    def submit(self, cmd, args=None, timeout=5.0):
        """Queue a command for the board; a concurrent Future of its result dict."""
        fut = concurrent.futures.Future()
        args = args or {}
        try:
            if cmd not in FORWARDED:
                raise ChalkError("chalk serve does not pass %r to a board" % cmd,
                                 "the server archives the board itself")
            check_request(cmd, args)
            if not self.connected:
                state, why = self.condition()
                raise ChalkError("the board of table %s is not connected%s" % (
                    self.name, ": " + why if why else ""),
                    "chalk serve reconnects by itself; check the board's cable")
        except ChalkError as e:
            fut.set_exception(e)
            return fut
        # It waits for the board up to its timeout (and a reconnection's first backoff more):
        # past that it fails rather than act late.
        self.requests.put((cmd, args, timeout, fut, time.monotonic() + timeout + BACKOFF[0]))
        return fut

    @property
    def problem(self):
        state, why = self.condition()
        return why

    def view(self):
        state, why = self._observe()
        # Not scoring: the last status known, under a NOT SCORING banner that says why.
        try:
            v = views.view(self.status, self.name, scoring=state == SCORING, why=why)
        except Exception as e:  # a status no view can draw (a board's bug): said, not fatal
            v = views.view(None, self.name, scoring=False, why=why)
            v["headline"] = "the board's state cannot be shown (%s: %s)" % (
                type(e).__name__, str(e)[:80])
        v["state"] = state
        v["scoring"] = state == SCORING
        v["why"] = why or ""
        v["port"] = self.port
        v["device"] = (self.info or {}).get("device")
        v["since"] = self.since
        r = self.refusal
        v["refused"] = None if r is None else {
            "rule": r[1], "reason": r[2], "left": round(max(0.0, r[0] - time.monotonic()), 1)}
        return _isolated(v, [self.name] + _names((self.status or {}).get("players")))


_SILENT = "Table %s: the board does not answer \u2014 check its USB cable and that it has power"
_STOPPED = "Table %s: the scoreboard app on the board has stopped \u2014 press the board's " \
    "reset button (or unplug it and plug it back in)"
_SERVICE = "Table %s: the board shows its service view \u2014 a long press of undo on the " \
    "board goes back to the game"
_CATCHING_UP = "Table %s: catching up with the games the board kept meanwhile"


def _quote(text):
    from chalk.text import isolate, printable

    return isolate(printable(text))


def _trouble(t, port, e):
    """(state, why) of a table whose board cannot be reached, from the error that says why."""
    from chalk.link import NoReply

    if e is None:
        return NO_CONNECTION, "Table %s: connecting to the board on %s" % (t, _quote(port))
    text = e.message
    if isinstance(e, NoReply):
        if "REPL" in (e.hint or ""):
            return STOPPED, _STOPPED % t
        return SILENT, _SILENT % t
    if text.startswith("no such port"):
        return NO_CONNECTION, "Table %s: no board on %s \u2014 plug its USB cable back in" % (
            t, _quote(port))
    if text.startswith("permission denied"):
        return NO_CONNECTION, "Table %s: chalk serve may not open %s \u2014 add its user " \
            "to the dialout group (docs/venue.md)" % (t, _quote(port))
    if "is busy" in text:
        return NO_CONNECTION, "Table %s: another program holds %s \u2014 close it (a serial " \
            "monitor, mpremote, chalk archive)" % (t, _quote(port))
    if text.startswith("lost the connection"):
        return NO_CONNECTION, "Table %s: the board's USB connection was lost \u2014 check " \
            "its cable" % t
    return NO_CONNECTION, "Table %s: cannot reach the board: %s" % (t, _quote(text))


def _waiting(link):
    """Bytes from the board wait in the port, unread (the table's worker is busy): it is not
    silent."""
    try:
        return link.ser.in_waiting > 0
    except Exception:
        return False


def _at_repl(link):
    said = [ln for ln in list(link.noise)[-5:] if ln.strip()]
    return any(">>>" in ln or "Traceback" in ln or "MicroPython" in ln
               or "KeyboardInterrupt" in ln for ln in said)


def _reason(rule, message):
    """A refusal's reason in the board's words, without the rule id in front or the action and
    state quoted after it (RuleError's text)."""
    text = str(message or "")
    if text.startswith(rule + ": "):
        text = text[len(rule) + 2:]
    return text.split("; action ", 1)[0].split("; state ", 1)[0].strip() or "refused"


def _names(players):
    out = []
    for p in players if type(players) is list else []:
        if type(p) is list:
            out += [str(x) for x in p]
        elif p:
            out.append(str(p))
    return out


_IDS = ("table", "port", "device", "game", "kind", "state")  # identifiers, not text shown


def _isolated(v, names):
    """The view with every name that could reorder the text around it (a right-to-left
    override, say) isolated wherever it is quoted."""
    from chalk.text import isolate

    swaps = [(n, isolate(n)) for n in names if n and isolate(n) != n]
    if not swaps:
        return v
    swaps.sort(key=lambda s: -len(s[0]))

    def fix(x):
        if type(x) is str:
            for n, iso in swaps:
                x = x.replace(n, iso)
            return x
        if type(x) is list:
            return [fix(y) for y in x]
        if type(x) is dict:
            return {k: y if k in _IDS else fix(y) for k, y in x.items()}
        return x

    return fix(v)


def probe_name(port, baud=None):
    """The name of the board on `port` for a table given only by its port: its board config's
    name, or None when it does not answer now."""
    from chalk.link import BAUD, BoardLink, open_port

    try:
        with BoardLink(open_port(port, baud or BAUD), port) as link:
            info = link.hello(3.0)
            return info.get("table") or info.get("board") or None
    except ChalkError:
        return None


class Venue:
    """Every table served, and whoever listens to them (the web's event streams)."""

    def __init__(self, db_path, say=print, quiet=False):
        self.db_path = db_path
        self.say = say
        self.quiet = quiet  # no line per game and action (problems are always said)
        self.stop = threading.Event()
        self.tables = {}
        self._listeners = []  # (loop, asyncio.Queue, table name or None, kind)
        self._lock = threading.Lock()
        self._watcher = None

    def add(self, name, port, idle=2.0, baud=None, start=False):
        """A new table (started at once with `start`, for a board found while serving)."""
        why = table_name_problem(name)
        if why:
            raise ChalkError("table %s: %s" % (json.dumps(name)[:60], why),
                             "name it with --table NAME=PORT, e.g. --table window=/dev/ttyUSB0")
        with self._lock:
            if name in self.tables:
                raise ChalkError("two tables named %r" % name,
                                 "name them with --table NAME=PORT")
            t = Table(self, name, port, self.db_path, idle=idle, baud=baud)
            tables = dict(self.tables)
            tables[name] = t
            self.tables = tables  # replaced whole: readers in other threads see one or the other
        if start:
            t.thread.start()
            self._watch()
            self.changed(t)
        return t

    def free_name(self, base):
        base = safe_table_name(base)
        name, i = base, 2
        while name in self.tables:
            name, i = "%s-%d" % (base[:36], i), i + 1
        return name

    def discover(self, listing, probe, idle=2.0, baud=None):
        """Serve every board in `listing` (chalk.link.Port rows; board=True ones) not served
        yet, named by probe(port) (the board's config name) or the port's own name. Returns the
        tables added (started)."""
        held = {t.port for t in self.tables.values()}
        added = []
        for p in listing:
            if p.board and p.device not in held and not self.stop.is_set():
                base = probe(p.device) or os.path.basename(p.device.rstrip("/")) or "table"
                t = self.add(self.free_name(base), p.device, idle=idle, baud=baud, start=True)
                self.say("%s: a board on %s, now served" % (t.name, p.device))
                added.append(t)
        return added

    def start(self):
        for t in self.tables.values():
            t.thread.start()
        self._watch()

    def _watch(self):
        """The thread that watches every table's state between the boards' frames: a board
        that falls silent is shown NOT SCORING, one that speaks again scoring, at once."""
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watching, name="table states",
                                             daemon=True)
            self._watcher.start()

    def _watching(self):
        while not self.stop.wait(WATCH_S):
            for t in list(self.tables.values()):
                try:
                    t.check()
                except Exception as e:  # never the end of the watching
                    self.say("%s: cannot tell its state: %s%s" % (t.name, e, _where(e)))

    def close(self, timeout=5.0):
        self.stop.set()
        for t in self.tables.values():
            if t.thread.is_alive():
                t.thread.join(timeout)
        if self._watcher is not None:
            self._watcher.join(timeout)

    # -- listeners: asyncio queues fed from the tables' threads -------------------------------
    def listen(self, loop, q, table=None, kind="view"):
        item = (loop, q, table, kind)
        with self._lock:
            self._listeners.append(item)
        return item

    def unlisten(self, item):
        with self._lock:
            if item in self._listeners:
                self._listeners.remove(item)

    def _send(self, table, kind, data):
        with self._lock:
            targets = [x for x in self._listeners
                       if x[3] == kind and x[2] in (None, table.name)]
        for loop, q, _t, _k in targets:
            try:
                loop.call_soon_threadsafe(_offer, q, data)
            except RuntimeError:  # its loop has closed
                pass

    def changed(self, table):
        self._send(table, "view", table.view())

    def frame(self, table, f):
        self._send(table, "frame", {"n": f.n, "type": f.type, "payload": f.payload})


def _offer(q, data):
    try:
        q.put_nowait(data)
    except Exception:  # a full queue: a client that stopped reading loses frames, not us
        pass


def write_serve_file(path, url, token, tables):
    """Say where the API is: the serve file (readable by all: the commands of any user on this
    computer reach the API on the loopback address, which needs no token) and, beside it, the
    token for other machines, readable by the owner only. Written aside and renamed."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, mode=0o700, exist_ok=True)
    for target, mode, text in (
            (token_file(path), 0o600, token + "\n"),
            (path, 0o644, json.dumps({"pid": os.getpid(), "url": url,
                                      "tables": {t.name: t.port for t in tables}}))):
        tmp = target + ".%d.tmp" % os.getpid()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)


def remove_serve_file(path):
    try:
        with open(path) as f:
            if json.load(f).get("pid") != os.getpid():
                return  # another server's now
        os.remove(path)
        os.remove(token_file(path))
    except (OSError, ValueError):
        pass


def new_token():
    return secrets.token_urlsafe(24)
