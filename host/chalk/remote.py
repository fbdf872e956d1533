"""Reaching a board: on its port, or through the `chalk serve` that holds it.

While `chalk serve` runs, a small file (`serve.json`, in the user's runtime directory or
$CHALK_SERVE_FILE) says where its API is and which ports it holds; connect() reads it, so
`chalk watch`, `new`, `undo`, `test` and `service` talk to the board through the server
(RemoteBoard, with BoardLink's interface) instead of failing on a busy port. Above both the
wire (chalk/link.py) and the server (chalk/serve.py, which writes the file): neither imports
this module's callers, so no import goes round in a circle.
"""

import http.client
import json
import os
import queue
import socket
import tempfile
import threading
import urllib.parse
import warnings

from chalk.errors import ChalkError
from chalk.link import BAUD, ENV_PORT, BoardError, BoardLink, Frame, open_port, resolve_port

ENV_FILE = "CHALK_SERVE_FILE"


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

    def condition(self):
        """(state, why) of the table as the server sees it (serve.STATES); `chalk watch` shows
        it as NOT SCORING. A server that does not answer is said so."""
        try:
            status, data = self._call("GET", self._table_path(), timeout=5.0)
        except (OSError, ChalkError, http.client.HTTPException):
            return "server gone", "chalk serve does not answer: is it still running?"
        if status != 200:
            return "server gone", data.get("error") or "chalk serve has no table %s" % self.table
        return data.get("state", "scoring"), data.get("problem")

    def request(self, cmd, args=None, timeout=5.0, retries=2, progress=()):
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


def connect(port=None, baud=BAUD, timeout=5.0):
    """Resolve the port (--port, $CHALK_PORT, auto), open it and say hello: a ready BoardLink.
    While `chalk serve` holds the board, the board is reached through it instead (RemoteBoard)."""
    remote = find(port or os.environ.get(ENV_PORT))
    if remote is not None:
        return remote
    port = resolve_port(port)
    ser = open_port(port, baud)
    link = BoardLink(ser, port)
    try:
        link.hello(timeout)
    except BaseException:
        ser.close()
        raise
    return link
