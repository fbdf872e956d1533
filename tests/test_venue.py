"""The venue tells the room the truth: each table's state follows its board (frozen, in the
service view, unplugged, back again), a table never dies of its input, the archive's writers
take turns, and what an attacker or a broken client sends gets one line, never a 500.

Simulated boards and `chalk serve` on 127.0.0.1. Deadlines come from the board's heartbeat
(serve.HEARTBEAT_S, serve.SILENT_S) plus SLACK, room for a machine busy with other work; the
tests wait for the state to change, they never sleep for it."""

import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

from chalk import serve
from chalk.sim import Sim
from chalk.store import Archive, ArchiveError
from tests.browser import Served

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLACK = 1.0  # seconds a busy machine may add to a deadline
NOTICE = serve.SILENT_S + serve.WATCH_S + SLACK  # a fault to NOT SCORING on the API
BACK = serve.HEARTBEAT_S + SLACK  # the board's return to scoring again


def chalk(served, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "chalk.cli"] + list(args),
                          capture_output=True, env=served.env, cwd=ROOT, timeout=timeout)


def state(served, name):
    return served.get("/api/tables/" + urllib.parse.quote(name, safe=""))


def until_state(served, name, want, deadline_s, what=""):
    """Seconds until the table's state is `want` (its API answer, read every 20 ms); fails if
    it takes longer than deadline_s."""
    t0 = time.monotonic()
    while True:
        t = state(served, name)
        if t["state"] == want:
            return time.monotonic() - t0
        took = time.monotonic() - t0
        assert took <= deadline_s, "%s: table %s still %s after %.2f s (want %s): %s" % (
            what, name, t["state"], took, want, t["problem"])
        time.sleep(0.02)


def act(served, table, action, status=200):
    code, body = served.post("/api/tables/%s/request" % urllib.parse.quote(table, safe=""),
                             {"cmd": "act", "args": {"action": action}})
    assert code == status, body
    return body


def freeze(sim):
    os.killpg(sim.proc.pid, signal.SIGSTOP)


def thaw(sim):
    os.killpg(sim.proc.pid, signal.SIGCONT)


@pytest.fixture
def five(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim, \
            Served(tmp_path, [("window", sim.port)]) as served:
        served.wait_table("window", lambda t: t["state"] == "scoring")
        yield sim, served


# -- a table's state follows its board -------------------------------------------------------

def test_a_board_frozen_6_s_is_not_scoring_within_a_beat_and_scores_again_at_once(five):
    """The repro: kill -STOP the board, 6 s, kill -CONT. Before, the table stayed NOT SCORING
    for good and `undo` answered 503 until the board rebooted."""
    sim, served = five
    act(served, "window", {"a": "break", "player": 0})
    frozen = time.monotonic()
    freeze(sim)
    try:
        until_state(served, "window", "silent", NOTICE, "frozen")
        t = state(served, "window")
        assert "does not answer" in t["problem"] and "USB cable" in t["problem"]
        assert not t["view"]["scoring"] and t["view"]["why"] == t["problem"]
        while time.monotonic() - frozen < 6.0:  # the rest of the 6 s: NOT SCORING throughout
            assert state(served, "window")["state"] == "silent"
            time.sleep(0.1)
    finally:
        thaw(sim)
    until_state(served, "window", "scoring", BACK, "thawed")
    # No resync, no reboot: the same session, and the control API works at once.
    assert sim.boots == 1
    assert act(served, "window", {"a": "shot", "player": 0, "pins": "1"})["result"]["seq"]
    code, body = served.post("/api/tables/window/undo", {})
    assert code == 200, body
    served.wait_table("window", lambda t: t["view"]["rows"][0]["score"] == "0")


def test_chalk_watch_through_the_server_says_not_scoring_and_scores_again(five):
    import select

    sim, served = five
    watch = subprocess.Popen([sys.executable, "-m", "chalk.cli", "watch", "--port", "window"],
                             env=served.env, cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)

    def line(deadline_s):
        ready, _, _ = select.select([watch.stdout], [], [], deadline_s)
        assert ready, "chalk watch printed nothing in %.1f s" % deadline_s
        return watch.stdout.readline()

    try:
        assert "five-pins game" in line(30)
        freeze(sim)
        try:
            text = line(NOTICE)
            assert "NOT SCORING: Table window: the board does not answer" in text, text
        finally:
            thaw(sim)
        text = line(BACK)
        assert "five-pins game" in text and "NOT SCORING" not in text, text
    finally:
        watch.terminate()
        watch.wait(10)


def test_the_service_view_is_not_scoring_and_back(five):
    sim, served = five
    code, body = served.post("/api/tables/window/request", {"cmd": "service",
                                                            "args": {"on": True}})
    assert code == 200, body
    until_state(served, "window", "service", BACK, "service on")
    t = state(served, "window")
    assert "service view" in t["problem"] and "long press of undo" in t["problem"]
    assert not t["view"]["scoring"]
    # It stays so while the board sits in its service view (its beats say so).
    deadline = time.monotonic() + 2 * serve.HEARTBEAT_S
    while time.monotonic() < deadline:
        assert state(served, "window")["state"] == "service"
        time.sleep(0.1)
    code, body = served.post("/api/tables/window/request", {"cmd": "service",
                                                            "args": {"on": False}})
    assert code == 200, body
    until_state(served, "window", "scoring", BACK, "service off")


def test_a_board_unplugged_and_plugged_back(five):
    sim, served = five
    sim.cut = True
    try:
        until_state(served, "window", "silent", NOTICE, "unplugged")
        # Long enough for the server to give the connection up and try again and again.
        served.wait_table("window", lambda t: not t["connected"], timeout=60)
        assert state(served, "window")["state"] == "silent"
    finally:
        sim.cut = False
    # Found again by the next hello (resent every few tenths of a second), caught up.
    until_state(served, "window", "scoring", BACK + serve.BACKOFF[1], "plugged back")
    act(served, "window", {"a": "break", "player": 1})


def test_a_board_at_the_repl_is_stopped_and_says_what_to_do(five):
    sim, served = five
    os.write(sim._board_master, b"\r\x03")  # what mpremote sends: the app hands over
    until_state(served, "window", "stopped", BACK, "at the REPL")
    assert "reset button" in state(served, "window")["problem"]
    os.write(sim._board_master, b"\r\x04")  # a soft reset: the app starts again
    served.wait_table("window", lambda t: t["state"] == "scoring", timeout=60)


def test_a_table_whose_board_is_not_there_says_so(tmp_path):
    gone = str(tmp_path / "ttyUSB9")
    with Served(tmp_path, [("snug", gone)], args=["-q"]) as served:
        t = served.wait_table("snug", lambda t: t["problem"] and "no board" in t["problem"])
        assert t["state"] == "no connection" and not t["view"]["scoring"]
        assert "plug its USB cable back in" in t["problem"]
        code, body = served.post("/api/tables/snug/undo", {})
        assert code == 503 and "not connected" in body["error"]
        # -q: no line per action, but a problem is said (once), for the service's journal.
        served.wait_table("snug", lambda t: served.said("snug: no such port"))
        assert sum("no such port" in line for line in served.lines) == 1


# -- a table never dies of its input ---------------------------------------------------------

def _raw_post(served, path, body, headers=None, source=None):
    """A POST of raw bytes (what a broken or hostile client sends), from `source` (an address
    of this host) if given."""
    u = urllib.parse.urlsplit(served.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request("POST", path, body=body, headers=dict(
            {"Content-Type": "application/json"}, **(headers or {})))
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_no_request_kills_a_table(five):
    sim, served = five
    bad = [
        # A lone surrogate (valid JSON, not text): before, it ended the table's thread.
        (b'{"game": "five-pins", "players": ["Zo\\udceb", "Bob"]}', 400, "lone surrogate"),
        (b'{"game": "five-pins", "players": ["\\ud83d", "Bob"]}', 400, "lone surrogate"),
        ('{"game": "five-pins", "players": ["A\\u001b[2J", "Bob"]}'.encode(), 400,
         "control characters"),
        (b'{"game": "five-pins", "players": ["Zo\xeb", "Bob"]}', 400, "not UTF-8"),
        (b"[" * 100000 + b"]" * 100000, 400, "not JSON"),
        (b'{"a": ' * 5000 + b"1" + b"}" * 5000, 400, "not JSON"),
        (b'{"players": ' + b"[" * 20 + b"]" * 20 + b"}", 400, "cannot be sent"),
        (b'{"players": ["' + b"x" * 2000 + b'"]}', 400, "too long"),
        (b'{"x": "' + b"y" * (2 << 20) + b'"}', 413, "over"),
    ]
    for body, status, text in bad:
        code, data = _raw_post(served, "/api/tables/window/new", body)
        assert code == status, (body[:60], code, data[:300])
        answer = json.loads(data)
        assert text in answer["error"], (body[:60], answer)
        assert "\n" not in answer["error"] and "Traceback" not in answer["error"]
    code, data = _raw_post(served, "/api/tables/window/request",
                           b'{"cmd": "act", "args": {"action": {"a": "break", '
                           b'"player": 0, "x": "\\udc80"}}}')
    assert code == 400, data
    # The table lives on, never restarted: it scores, and every action reaches the archive.
    assert state(served, "window")["restarts"] == 0
    seq = act(served, "window", {"a": "break", "player": 0})["result"]["seq"]
    served.wait_table("window", lambda t: t["view"]["seq"] == seq and t["state"] == "scoring")
    assert not served.said("failed")


def test_chalk_new_refuses_a_name_from_a_terminal_that_is_not_utf8(five):
    """`chalk new --players $'Zo\\xeb' Bob`: the byte 0xeb is Latin-1's e-diaeresis; Python keeps
    it as a lone surrogate, which before crashed chalk new and, through the server, ended the
    table's thread."""
    sim, served = five
    for port in ("window", sim.port):
        r = chalk(served, "new", "--port", port, "--players", b"Zo\xeb", "Bob")
        err = r.stderr.decode()
        assert r.returncode == 1, err
        assert "Traceback" not in err and err.startswith("chalk: --players")
        assert "0xeb is not UTF-8" in err and len(err.splitlines()) == 2
    r = chalk(served, "new", "--port", "window", "--players", "Zoë", "B\u202eob")
    assert r.returncode == 0, r.stderr.decode()  # any Unicode is a name
    t = served.wait_table("window", lambda t: t["view"]["rows"] and
                          t["view"]["rows"][0]["name"] == "Zoë")
    assert state(served, "window")["restarts"] == 0 and t["state"] == "scoring"


def test_a_failing_worker_says_why_and_starts_again(tmp_path):
    said = []
    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=said.append)
    with Archive(venue.db_path, create=True):
        pass
    try:
        with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim:
            t = venue.add("window", sim.port)
            real = t._refresh
            calls = []

            def broken(link):
                calls.append(1)
                if len(calls) == 1:
                    raise KeyError("a bug")
                return real(link)

            t._refresh = broken
            venue.start()
            deadline = time.monotonic() + 60
            while not (t.worker_restarts and t.connected and t.view()["state"] == "scoring"):
                assert time.monotonic() < deadline, (said, t.condition())
                time.sleep(0.05)
            line = [s for s in said if "failed" in s][0]
            assert line.startswith("window: chalk serve failed: KeyError: 'a bug' (at ")
            assert line.endswith("; starting the table again") and "\n" not in line
            assert t.submit("state").result(10)["game"] == "five-pins"
    finally:
        venue.close()


def test_writers_of_one_archive_take_turns(tmp_path):
    """chalk serve's tables share one archive: with a lock wait far shorter than the others'
    transactions, none of them may find the file locked by another (before: "the archive is
    locked" ended a table at 28 boards)."""
    path = tmp_path / "a.sqlite3"
    with Archive(path, create=True):
        pass
    errors, done = [], []

    def writer(n):
        try:
            with Archive(path, create=True, wait=0.001) as db:
                bid = db.board({"device": "dev-%d" % n, "board": "b", "game": "five-pins"})
                for _ in range(40):
                    with db.transaction() as c:
                        c.execute("UPDATE boards SET last_seen = ? WHERE id = ?",
                                  (str(time.time()), bid))
                        time.sleep(0.001)  # a transaction that takes a while
                done.append(n)
        except ArchiveError as e:
            errors.append(e.message)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors and len(done) == 8


def test_an_archive_locked_by_another_program_holds_the_table_back_not_for_good(five):
    sim, served = five
    other = sqlite3.connect(str(served.tmp / "archive.sqlite3"), isolation_level=None)
    # The lock is taken once the table has written what its first sync brings (the records,
    # then the board's signature of its head, a moment later): else the table may be the one
    # caught in a write when the lock comes, with the command below waiting behind it.
    deadline = time.monotonic() + 60
    while other.execute("SELECT 1 FROM boards JOIN games ON games.board_id = boards.id JOIN heads "
                        "ON heads.game_id = games.id WHERE heads.seq = boards.last_seq "
                        "AND boards.last_seq > 0").fetchone() is None:
        assert time.monotonic() < deadline, "".join(served.lines[-10:])
        time.sleep(0.05)
    try:
        other.execute("BEGIN IMMEDIATE")  # another program writes, for longer than LOCK_WAIT
        seq = act(served, "window", {"a": "break", "player": 1})["result"]["seq"]
        deadline = time.monotonic() + 60
        while not served.said("starting the table again"):
            assert time.monotonic() < deadline, "".join(served.lines[-10:])
            time.sleep(0.05)
        assert served.said("is locked")
    finally:
        other.execute("ROLLBACK")
        other.close()
    served.wait_table("window", lambda t: t["state"] == "scoring" and t["view"]["seq"] == seq,
                      timeout=60)
    db = sqlite3.connect(str(served.tmp / "archive.sqlite3"))
    try:
        assert db.execute("SELECT max(last_seq) FROM boards").fetchone()[0] >= seq
    finally:
        db.close()


# -- the smaller doors -----------------------------------------------------------------------

def test_forwarded_headers_never_pass_the_host_only_check(tmp_path):
    """With FORWARDED_ALLOW_IPS=* in the environment, uvicorn's proxy headers would make any
    client 127.0.0.1 by saying so. A client of this host from 127.0.0.2 is "another
    machine": refused, whatever it claims."""
    with Served(tmp_path, [("window", str(tmp_path / "none"))],
                env={"FORWARDED_ALLOW_IPS": "*"}) as served:
        for headers in ({"X-Forwarded-For": "127.0.0.1"}, {"Forwarded": "for=127.0.0.1"},
                        {"X-Real-IP": "127.0.0.1", "X-Forwarded-For": "127.0.0.1, ::1"}):
            code, data = _raw_post(served, "/api/tables/window/undo", b"{}", headers,
                                   source="127.0.0.2")
            assert code == 403, (headers, data)
        code, data = _raw_post(served, "/api/tables/window/undo", b"{}")
        assert code == 503, data  # from the host itself: accepted, the board is not there


def _get(served, path, host):
    u = urllib.parse.urlsplit(served.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_the_host_header_never_reaches_a_page_and_odd_paths_are_404(tmp_path):
    from tests.test_stats import FIVE, store

    store(tmp_path / "archive.sqlite3", "dev-1", [FIVE])
    with Served(tmp_path, [("window", str(tmp_path / "none"))]) as served:
        for path in ("/", "/table/window", "/stats", "/stats/game/1", "/?tv"):
            code, page = _get(served, path, "evil.example:666")
            assert code == 200, path
            assert "evil.example" not in page, path
            assert 'href="/static/chalk.css"' in page, path
        for path in ("/stats/game/" + "9" * 30, "/stats/game/99999999999999999999",
                     "/stats/game/-1", "/stats/game/%D9%A1", "/stats/game/1e3",
                     "/stats/game/" + "1" * 5000, "/table/nowhere", "/api/tables/no%2Fwhere"):
            code, page = _get(served, path, "localhost")
            assert code == 404, (path[:40], code, page[:200])
            assert "Traceback" not in page


@pytest.mark.parametrize("item,text", [
    ("a/b=/dev/ttyUSB0", "cannot hold '/'"),
    ("bar=snug=/dev/ttyUSB0", 'more than one "="'),
    (" =/dev/ttyUSB0", "is not NAME=PORT"),
    ("..=/dev/ttyUSB0", "cannot be a table name"),
    ("a\x1b[2J=/dev/ttyUSB0", "control characters"),
    ("x" * 41 + "=/dev/ttyUSB0", "at most 40"),
])
def test_table_names_that_cannot_be_reached_are_refused(tmp_path, item, text):
    env = dict(os.environ, CHALK_SERVE_FILE=str(tmp_path / "serve.json"))
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "serve", "--db",
                        str(tmp_path / "a.sqlite3"), "--table", item], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=60)
    assert r.returncode == 1 and text in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "\x1b" not in r.stderr
    assert not (tmp_path / "serve.json").exists()


def test_any_other_table_name_is_reached_by_page_api_and_commands(tmp_path):
    name = "Zoë's #1 & 50% ?+ b\u202eX"
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim, \
            Served(tmp_path, [(name, sim.port)]) as served:
        served.wait_table(urllib.parse.quote(name, safe=""), lambda t: t["connected"])
        quoted = urllib.parse.quote(name, safe="")
        code, page = _get(served, "/table/" + quoted, "localhost")
        assert code == 200 and "Zoë" in page
        assert state(served, name)["name"] == name
        r = chalk(served, "undo", "--port", name)
        assert r.returncode == 1 and "nothing to undo" in r.stderr.decode()
        act(served, name, {"a": "break", "player": 0})
        r = chalk(served, "undo", "--port", name)
        assert r.returncode == 0, r.stderr.decode()


def test_serve_on_every_address_prints_an_address_a_tv_can_open(tmp_path):
    with Served(tmp_path, [("window", str(tmp_path / "none"))],
                args=["--host", "0.0.0.0"]) as served:
        host = urllib.parse.urlsplit(served.url).hostname
        assert host not in ("0.0.0.0", "::", "")
        socket.inet_aton(host)  # an address, not a name that may not resolve
        assert served.get("/api/tables")["tables"][0]["table"] == "window"


def test_a_sample_trace_by_name(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "sim", "--virtual", "--board",
                        "five-pins", "--trace", "five-pins", "--flash", str(tmp_path / "f")],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    assert "trace" in r.stdout and '"winner"' in r.stdout
    r = subprocess.run([sys.executable, "-m", "chalk.cli", "sim", "--virtual", "--trace",
                        "five-pinz"], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=60)
    assert r.returncode == 1 and "no sensor trace five-pinz" in r.stderr
    assert "shove-hapenny" in r.stderr and "Traceback" not in r.stderr


# -- names in a view -------------------------------------------------------------------------

def test_a_bidi_override_in_a_name_cannot_reverse_the_rest_of_a_line(tmp_path):
    from tests.browser import sample_status

    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    t = venue.add("window", "/dev/null")
    evil = "\u202eBob"
    t.status = sample_status("five-pins", 2, players=["Ann", evil])
    v = t.view()
    shown = [v["on_move"], v["rows"][1]["name"]]
    assert any(evil in s for s in shown)
    for s in shown:
        if evil in s:
            assert "\u2068" + evil + "\u2069" in s  # isolated: FSI ... PDI
    assert v["table"] == "window"


def test_a_state_no_view_can_draw_never_breaks_the_pages(tmp_path):
    from chalk import web
    from tests.test_serve import LAN, _call

    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    t = venue.add("window", "/dev/null")
    t.status = {"game": "five-pins", "players": 7, "state": {"scores": "x", "sets": None}}
    v = t.view()
    assert "cannot be shown" in v["headline"] and v["table"] == "window"
    app = web.create_app(venue)
    for path in ("/", "/table/window", "/api/tables", "/api/tables/window"):
        assert _call(app, "GET", path, LAN)[0] == 200, path


def test_an_entry_the_board_refuses_is_on_the_table_for_a_few_seconds(tmp_path):
    """A refusal at the table (the keypad's entry, a button) comes as a warn frame; the host's
    own `act` is answered with the error instead. Shown with its rule id and reason, for
    REFUSED_S seconds, then gone by itself (the venue's watcher takes it back)."""
    from chalk.link import Frame

    pushed = []
    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    t = venue.add("bar", "/dev/null")
    venue.changed = lambda table: pushed.append(table.view())
    t._frame(None, Frame(7, "warn", {
        "refused": "DB-6", "message": 'DB-6: the points of a hand add up to 162 at most '
        '(trump 2); action {"a": "hand", "points": [150, 40]}; state {"big": [0, 0]}'}))
    refused = pushed[-1]["refused"]
    assert refused["rule"] == "DB-6" and 0 < refused["left"] <= serve.REFUSED_S
    assert refused["reason"] == "the points of a hand add up to 162 at most (trump 2)"
    t.refusal = (time.monotonic() - 0.01,) + t.refusal[1:]  # its time is up
    t.check()
    assert pushed[-1]["refused"] is None
