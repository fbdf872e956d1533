"""`chalk serve`: one process that owns every board of a venue.

Each table (a board on a serial port) gets a Table: a thread that archives the board exactly as
`chalk archive` does (it is an archive.Follower: same resync, same guarantees) and, between
frames, carries out the commands other chalk commands send through the local API (web.py).
What the board sends is passed on to whoever listens (the web pages, `chalk watch`).

While it runs, a small file (`serve.json`, in the user's runtime directory or $CHALK_SERVE_FILE)
says where its API is and which ports it holds; `link.connect` reads it, so `chalk watch`, `new`,
`undo`, `test` and `service` talk to the board through the server instead of failing on a busy
port. The API's control token (for other machines) is in `serve.token` beside it, readable by its
owner only; commands on this computer reach the API on the loopback address and need none.
"""

import concurrent.futures
import http.client
import json
import os
import queue
import secrets
import socket
import tempfile
import threading
import time
import urllib.parse
import warnings

from chalk import views
from chalk.archive import Archive, Follower
from chalk.errors import ChalkError

ENV_FILE = "CHALK_SERVE_FILE"
DEFAULT_HTTP_PORT = 8421
# Commands a client may send a board through the server. `journal` and `ack` stay the
# archiver's: a client reading the journal would take the records the archive is waiting for.
FORWARDED = ("state", "new", "undo", "inject", "act", "service")


def serve_file():
    """Where a running `chalk serve` says where it is."""
    if os.environ.get(ENV_FILE):
        return os.environ[ENV_FILE]
    from platformdirs import user_runtime_dir

    try:
        with warnings.catch_warnings():  # no $XDG_RUNTIME_DIR (a service, cron): a fallback
            warnings.simplefilter("ignore")
            where = user_runtime_dir("chalk")
    except OSError:
        where = os.path.join(tempfile.gettempdir(), "chalk-%d" % os.getuid())
    return os.path.join(where, "serve.json")


def token_file(path):
    """The control token's file beside the serve file (owner-only)."""
    return os.path.splitext(path)[0] + ".token"


def _same_port(a, b):
    if a == b:
        return True
    if "://" in a or "://" in b:
        return False
    return os.path.realpath(a) == os.path.realpath(b)


# -- the server side -------------------------------------------------------------------------

class Table(Follower):
    """A board at the venue: archived like `chalk archive`, and shared with the API's clients."""

    tick = 0.05  # a client's command waits at most this long for the archiver's loop

    def __init__(self, venue, name, port, db_path, idle=2.0, baud=None):
        super().__init__(None, port=port, say=self._note, stop=venue.stop, idle=idle,
                         baud=baud)
        self.venue = venue
        self.name = name
        self.db_path = db_path
        self.requests = queue.Queue()
        self.info = None
        self.status = None
        self.connected = False
        self.since = time.time()  # when `connected` last changed
        self.problem = None
        self.log = []  # the last lines it said
        self._dirty = False
        self.thread = threading.Thread(target=self._main, name="table " + name, daemon=True)

    def _note(self, text):
        self.log = (self.log + [text])[-20:]
        self.venue.say("%s: %s" % (self.name, text))
        if "retrying" in text:
            self.problem = text.replace("; retrying", "")
            self._set_connected(False)

    def _main(self):
        try:
            with Archive(self.db_path, create=True) as db:
                self.archive = db
                self.run()
        except ChalkError as e:  # the archive refuses this board (a copied id, a locked file)
            self.problem = e.message
            self.venue.say("%s: %s%s" % (self.name, e.message,
                                         "; hint: " + e.hint if e.hint else ""))
            self._set_connected(False)
        finally:
            self._fail_pending("the table %s is not being served" % self.name)

    # -- the follower's hooks ----------------------------------------------------------------
    def _board(self, info, port):
        super()._board(info, port)
        self.info = dict(info, table=self.name)
        self.problem = "catching up with the board's journal"
        self.venue.changed(self)

    def _session(self, port):
        try:
            super()._session(port)
        finally:
            self._set_connected(False)
            self._fail_pending("lost the connection to the board of table %s" % self.name)

    def _sync(self, link):
        super()._sync(link)
        self.problem = None
        self._set_connected(True)
        self._refresh(link)

    def _frame(self, link, f, syncing=False):
        need = super()._frame(link, f, syncing)
        self.venue.frame(self, f)
        # Every change the board makes ends with a state frame (after an action's rec, or a new
        # game's header): one refresh of the whole status per change.
        if f.type in ("state", "warn", "boot"):
            self._dirty = True
        return need

    def _between(self, link):
        while True:
            try:
                cmd, args, timeout, fut = self.requests.get_nowait()
            except queue.Empty:
                break
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(link.request(cmd, args, timeout=timeout))
            except ChalkError as e:
                fut.set_exception(e)
                if not hasattr(e, "reason"):  # no reply at all: the connection is in doubt
                    raise
            except Exception as e:
                fut.set_exception(ChalkError("chalk serve failed on %s: %s" % (cmd, e)))
                raise
        if self._dirty:
            self._refresh(link)

    def _refresh(self, link):
        self._dirty = False
        self.status = link.request("state", timeout=self.reply)
        self.venue.changed(self)

    # -- for the API -------------------------------------------------------------------------
    def _set_connected(self, up):
        if up != self.connected:
            self.connected = up
            self.since = time.time()
            self.venue.changed(self)

    def _fail_pending(self, message):
        while True:
            try:
                _c, _a, _t, fut = self.requests.get_nowait()
            except queue.Empty:
                return
            if fut.set_running_or_notify_cancel():
                fut.set_exception(ChalkError(message, "see `chalk serve`'s output"))

    def submit(self, cmd, args=None, timeout=5.0):
        """Queue a command for the board; a concurrent Future of its result dict."""
        fut = concurrent.futures.Future()
        if cmd not in FORWARDED:
            fut.set_exception(ChalkError("chalk serve does not pass %r to a board" % cmd,
                                         "the server archives the board itself"))
        elif not self.connected:
            fut.set_exception(ChalkError(
                "the board of table %s is not connected%s" % (
                    self.name, ": " + self.problem if self.problem else ""),
                "chalk serve reconnects by itself; check the cable"))
        else:
            self.requests.put((cmd, args or {}, timeout, fut))
        return fut

    def view(self):
        why = None
        if not self.connected:
            why = "not scoring: %s" % (self.problem or "no connection to the board")
        # Not connected: the last status known, under a NOT SCORING banner.
        v = views.view(self.status, self.name, scoring=self.connected, why=why)
        v["port"] = self.port
        v["device"] = (self.info or {}).get("device")
        v["since"] = self.since
        return v


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

    def __init__(self, db_path, say=print):
        self.db_path = db_path
        self.say = say
        self.stop = threading.Event()
        self.tables = {}
        self._listeners = []  # (loop, asyncio.Queue, table name or None, kind)
        self._lock = threading.Lock()

    def add(self, name, port, idle=2.0, baud=None, start=False):
        """A new table (started at once with `start`, for a board found while serving)."""
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
            self.changed(t)
        return t

    def free_name(self, base):
        name, i = base, 2
        while name in self.tables:
            name, i = "%s-%d" % (base, i), i + 1
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

    def close(self, timeout=5.0):
        self.stop.set()
        for t in self.tables.values():
            if t.thread.is_alive():
                t.thread.join(timeout)

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


# -- the client side: a board through the server ---------------------------------------------

def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find(port=None):
    """A RemoteBoard for `port` (None/auto, a table name or a port path) if a running
    `chalk serve` holds it, else None (the caller opens the port itself)."""
    path = serve_file()
    try:
        with open(path) as f:
            info = json.load(f)
        url, tables = info["url"], dict(info["tables"])
        pid = int(info["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid) or not tables:
        return None
    if port in (None, "auto"):
        if len(tables) > 1:
            raise ChalkError("chalk serve holds %d tables: %s" % (
                len(tables), ", ".join(sorted(tables))), "choose one with --port TABLE")
        name = next(iter(tables))
    elif port in tables:
        name = port
    else:
        name = next((n for n, p in tables.items() if _same_port(p, port)), None)
        if name is None:
            return None
    board = RemoteBoard(url, name)
    try:
        board.hello()
    except OSError:  # the server is not answering (stopped meanwhile): use the port directly
        return None
    return board


class RemoteBoard:
    """A board through `chalk serve`'s API, with BoardLink's interface (request, hello, poll,
    frames, info, port), so every command works the same either way."""

    def __init__(self, url, table, token=None):
        u = urllib.parse.urlsplit(url)
        self.host, self.http_port = u.hostname, u.port
        self.table = table
        self.token = token
        self.port = "table %s (via chalk serve at %s)" % (table, url)
        self.info = None
        self._frames = queue.Queue()
        self._stream = None  # the thread reading the server's stream of the board's frames
        self._conn = None
        self._stop = threading.Event()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _call(self, method, path, body=None, timeout=10.0):
        conn = http.client.HTTPConnection(self.host, self.http_port, timeout=timeout)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body),
                         headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(data or b"{}")
        except ValueError:
            raise ChalkError("chalk serve answered %s with HTTP %d" % (path, resp.status))

    def _table_path(self, what=""):
        return "/api/tables/%s%s" % (urllib.parse.quote(self.table, safe=""), what)

    def hello(self, timeout=5.0):
        status, data = self._call("GET", self._table_path(), timeout=timeout)
        if status != 200:
            raise ChalkError(data.get("error") or "chalk serve has no table %s" % self.table)
        if not data.get("connected"):
            raise ChalkError("the board of table %s is not connected to chalk serve%s" % (
                self.table, ": " + data["problem"] if data.get("problem") else ""),
                "chalk serve reconnects by itself; check the board's cable")
        self.info = data.get("info") or {}
        return self.info

    def request(self, cmd, args=None, timeout=5.0, retries=2, progress=()):
        from chalk.link import BoardError

        if cmd == "hello":
            return self.hello(timeout)
        self._listen()
        try:
            status, data = self._call("POST", self._table_path("/request"),
                                      {"cmd": cmd, "args": args or {}, "timeout": timeout},
                                      timeout=timeout + 10)
        except OSError as e:
            raise ChalkError("lost chalk serve (%s): %s" % (self.port, e),
                             "is chalk serve still running?")
        if status == 200:
            return data.get("result") or {}
        if data.get("reason"):
            raise BoardError(data.get("error"), data.get("hint"), data["reason"],
                             data.get("payload"))
        raise ChalkError(data.get("error") or "chalk serve refused %s (HTTP %d)" % (cmd, status),
                         data.get("hint"))

    # -- frames the board sends on its own, through the server's event stream ---------------
    def _listen(self):
        if self._stream is not None:
            return
        ready = threading.Event()
        self._stream = threading.Thread(target=self._read_stream, args=(ready,), daemon=True)
        self._stream.start()
        ready.wait(5.0)

    def _read_stream(self, ready):
        conn = self._conn = http.client.HTTPConnection(self.host, self.http_port, timeout=None)
        try:
            conn.request("GET", self._table_path("/frames"))
            resp = conn.getresponse()
            ready.set()
            data = []
            while not self._stop.is_set():
                line = resp.fp.readline()
                if not line:
                    break
                line = line.rstrip(b"\r\n")
                if line.startswith(b"data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    from chalk.link import Frame

                    f = json.loads(b"\n".join(data))
                    data = []
                    self._frames.put(Frame(f["n"], f["type"], f["payload"]))
        except (OSError, ValueError, http.client.HTTPException):
            pass
        finally:
            ready.set()
            conn.close()
            self._frames.put(None)

    def poll(self, timeout=0.0):
        self._listen()
        try:
            f = self._frames.get(timeout=timeout) if timeout != 0 else self._frames.get_nowait()
        except queue.Empty:
            return None
        if f is None:
            raise ChalkError("lost chalk serve (%s)" % self.port, "is chalk serve still running?")
        return f

    def frames(self, timeout=None):
        while True:
            f = self.poll(timeout)
            if f is None:
                return
            yield f

    def stats(self):
        return {}
