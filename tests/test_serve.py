"""`chalk serve`: one process owns the boards, archives them as `chalk archive` does, and the
other commands reach a served board through its API. Simulated boards, 127.0.0.1 only."""

import asyncio
import json
import os
import select
import subprocess
import sys
import time

import pytest

from chalk import serve, verify, views, web
from chalk.sim import Sim
from chalk.store import Archive
from tests.browser import Served

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chalk(served, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "chalk.cli"] + [str(a) for a in args],
                          capture_output=True, text=True, env=served.env, cwd=ROOT,
                          timeout=timeout)


def _line(proc, timeout=60.0):
    """The next line a process prints (an upper bound on the wait, not a pace)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no line from %s in %d s" % (proc.args, timeout)
    return proc.stdout.readline()


def act(served, table, action):
    status, body = served.post("/api/tables/%s/request" % table,
                               {"cmd": "act", "args": {"action": action}})
    assert status == 200, body
    return body["result"]


def test_commands_reach_a_served_board_through_chalk_serve(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim, \
            Served(tmp_path, [("window", sim.port)]) as served:
        served.wait_table("window", lambda t: t["connected"])
        sfile, tfile = tmp_path / "serve.json", tmp_path / "serve.token"
        assert oct(sfile.stat().st_mode & 0o777) == "0o644"  # any local user's commands
        assert oct(tfile.stat().st_mode & 0o777) == "0o600"  # the token: its owner only
        token = tfile.read_text().strip()
        assert len(token) >= 24 and token not in sfile.read_text()
        # The port is the server's: the commands go through it, by port, by name or alone.
        r = chalk(served, "new", "--port", sim.port, "--players", "Ann", "Bob")
        assert r.returncode == 0, r.stderr
        assert "via chalk serve" in r.stdout and "Ann" in r.stdout
        r = chalk(served, "watch", "--once")
        assert r.returncode == 0, r.stderr
        assert "five-pins" in r.stdout and "Bob" in r.stdout
        r = chalk(served, "undo", "--port", "window")
        assert r.returncode == 1
        assert "nothing to undo" in r.stderr and "Traceback" not in r.stderr
        # `chalk watch` follows the board through the server's stream of its frames.
        watch = subprocess.Popen([sys.executable, "-m", "chalk.cli", "watch"], env=served.env,
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        try:
            first = _line(watch)
            assert "to start: the break" in first, first + watch.stderr.read()
            act(served, "window", {"a": "break", "player": 0})
            second = _line(watch)  # the next change the board reported
            assert "on move: Ann" in second, second
        finally:
            watch.terminate()
            watch.wait(10)
        r = chalk(served, "undo", "--port", "window")
        assert r.returncode == 0, r.stderr
        assert "undone" in r.stdout
        r = chalk(served, "service", "--once", "--port", "window")
        assert r.returncode == 0, r.stderr
        assert "btn.confirm" in r.stdout
        chalk(served, "service", "--off", "--port", "window")
        r = chalk(served, "test", os.path.join(ROOT, "tests", "scenarios", "five-pins"),
                  "--port", "window")
        assert r.returncode == 0, r.stdout + r.stderr
        assert " 0 failed" in r.stdout
        # A port the server does not hold is opened directly, as before.
        r = chalk(served, "watch", "--once", "--port", str(tmp_path / "no-such-port"))
        assert r.returncode != 0 and "no such port" in r.stderr
    assert served.proc.returncode == 0
    assert not (tmp_path / "serve.json").exists()  # gone with the server: commands go direct
    assert not (tmp_path / "serve.token").exists()


def test_serve_archives_every_table_exactly_as_chalk_archive(tmp_path):
    with Sim("five-pins", flash=tmp_path / "fp", test_mode=True, keys="") as fp, \
            Sim("shove-hapenny", flash=tmp_path / "sh", test_mode=True, keys="") as sh, \
            Served(tmp_path, [("window", fp.port), ("snug", sh.port)]) as served:
        for name in ("window", "snug"):
            served.wait_table(name, lambda t: t["connected"])
        status, body = served.post("/api/tables/window/new", {
            "game": "five-pins", "players": ["Ann", "Bob"]})
        assert status == 200, body
        status, body = served.post("/api/tables/snug/new", {
            "game": "shove-hapenny", "players": ["Cy", "Di"]})
        assert status == 200, body
        act(served, "window", {"a": "break", "player": 1})
        act(served, "window", {"a": "shot", "player": 1, "pins": "12"})
        act(served, "snug", {"a": "start", "side": 0})
        last = act(served, "snug", {"a": "turn", "side": 0, "beds": [1, 2, 0, 0, 0, 0, 0, 0, 0]})
        served.wait_table("snug", lambda t: t["view"]["seq"] == last["seq"])
        tables = {t["table"]: t for t in served.get("/api/tables")["tables"]}
        assert [r["score"] for r in tables["snug"]["rows"]] == ["3", "0"]
        assert tables["window"]["rows"][1]["name"] == "Bob"
        assert served.stop() == 0
        # Everything the boards journaled is in the archive; `chalk archive --once` against the
        # same file finds nothing new, and `chalk verify` agrees with the boards' states.
        db = tmp_path / "archive.sqlite3"
        for port in (fp.port, sh.port):
            r = chalk(served, "archive", "--once", "--port", port, "--db", db)
            assert r.returncode == 0, r.stderr
            assert "archived 0 new records" in r.stdout
        r = chalk(served, "verify", "--all", "--db", db)
        # Both tables' games under way: signed by their boards up to seq N, not finished.
        assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
        assert "BROKEN" not in r.stdout and r.stdout.count("IN PROGRESS") == 2
    with Archive(db) as a:
        games = a.games()
        played = [g for g in games if g["actions"]]
        assert {g["game"] for g in played} >= {"five-pins", "shove-hapenny"}
        assert any(json.loads(line)["a"] == "turn" for g in played
                   for _s, _t, line in a.actions(g["id"]))


def test_journal_and_ack_stay_with_the_archiver(tmp_path):
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim, \
            Served(tmp_path, [("window", sim.port)]) as served:
        served.wait_table("window", lambda t: t["connected"])
        for cmd in ("journal", "ack", "clock"):
            status, body = served.post("/api/tables/window/request",
                                       {"cmd": cmd, "args": {"after": 0}})
            assert status == 503 and "does not pass" in body["error"]


# -- who may control a board -----------------------------------------------------------------

def _call(app, method, path, client, headers=(), body=b""):
    """One HTTP request straight into the ASGI app, as from `client` (host, port)."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": client,
             "server": ("127.0.0.1", 8421),
             "headers": [(b"host", b"pub-pc:8421")] + [(k.lower().encode(), v.encode())
                                                       for k, v in headers]}
    sent = []
    got = [False]

    async def receive():
        if not got[0]:
            got[0] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)

    async def send(msg):
        sent.append(msg)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, data


@pytest.fixture
def app(tmp_path):
    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    venue.add("window", "/dev/null")  # never started: not connected
    return web.create_app(venue, token="s3cret-token")


JSON = [("content-type", "application/json")]
LAN = ("192.168.1.20", 50000)
HOST = ("127.0.0.1", 50000)


def test_pages_are_for_everyone_control_only_for_the_host_or_the_token(app):
    for path in ("/", "/table/window", "/api/tables", "/api/tables/window",
                 "/static/chalk.js", "/static/chalk.css"):
        status, _ = _call(app, "GET", path, LAN)
        assert status == 200, path
    undo = "/api/tables/window/undo"
    assert _call(app, "POST", undo, LAN, JSON)[0] == 403
    assert _call(app, "POST", undo, LAN, JSON + [("authorization", "Bearer wrong")])[0] == 403
    # Past the door, the board is simply not connected (503): the request was accepted.
    status, data = _call(app, "POST", undo, LAN, JSON + [("authorization",
                                                          "Bearer s3cret-token")])
    assert status == 503 and b"not connected" in data
    assert _call(app, "POST", undo, HOST, JSON)[0] == 503
    assert _call(app, "POST", undo, ("::1", 1), JSON)[0] == 503
    # A page from another site in the host's own browser cannot drive it: no JSON without
    # asking first (plain forms are refused), and a cross-origin request carries Origin.
    assert _call(app, "POST", undo, HOST, [("content-type", "text/plain")])[0] == 403
    assert _call(app, "POST", undo, HOST, JSON + [("origin", "http://evil.example")])[0] == 403
    assert _call(app, "GET", undo, HOST)[0] == 405
    assert _call(app, "GET", "/api/tables/nowhere", LAN)[0] == 404


def test_player_names_are_never_markup_in_the_page(tmp_path):
    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    t = venue.add("<script>alert(1)<\\script><b>", "/dev/null")
    t.phase = "live"
    t.status = {"game": "five-pins", "game_no": 1, "last_seq": 3,
                "players": ["<b>Ann</b>", "</script><img src=x onerror=alert(2)>"],
                "state": {"scores": [1, 2], "sets": [0, 0], "set": 1, "next": 0, "breaker": 0,
                          "ball_in_hand": False, "winner": None}}
    app = web.create_app(venue)
    status, html = _call(app, "GET", "/", LAN)
    assert status == 200
    text = html.decode()
    assert "<b>Ann" not in text and "<img" not in text and "<script>alert" not in text
    assert text.count("</script>") == 2  # the page's own two script elements
    initial = text.split('id="initial">')[1].split("</script>")[0]
    assert json.loads(initial)[0]["rows"][0]["name"] == "<b>Ann</b>"


# -- the generic view: any game from its state alone ----------------------------------------

@pytest.mark.parametrize("game,state,players,scores,on_move", [
    ("tally", {"counts": [3, 5, 1], "winner": None}, ["A", "B", "C"], ["3", "5", "1"],
     "in play"),
    ("novuss", {"left": [8, 6], "debt": [0, 1], "next": 1, "winner": None}, ["A", "B"],
     ["8", "6"], "on move: B"),
    ("seven-pins", {"totals": [300, 245], "next": 0, "winner": None}, ["A", "B"],
     ["300", "245"], "on move: A"),
    ("texas-42", {"scores": [42, 0], "hands": 1, "winner": None}, [["A", "C"], ["B", "D"]],
     ["42", "0"], "in play"),
    ("seven-pins", {"totals": [300, 300], "next": None, "winner": None}, ["A", "B"],
     ["300", "300"], "waiting for the start"),
    ("domino-bingo", {"big": [7, 3], "hands": 9, "winner": 0}, ["A", "B"], ["7", "3"],
     "winner: A"),
    ("tally", {"counts": [2, 2], "winner": "draw"}, ["A", "B"], ["2", "2"], "draw"),
])
def test_any_game_is_shown_from_its_state(game, state, players, scores, on_move):
    v = views.view({"game": game, "game_no": 1, "players": players, "state": state,
                    "last_seq": 9}, "t")
    assert [r["score"] for r in v["rows"]] == scores
    assert v["on_move"] == on_move
    assert v["scoring"] and v["kind"] == "generic"
    if game == "novuss":
        assert v["rows"][1]["detail"] == "debt 1" and v["rows"][1]["on_move"]
    if game == "texas-42":
        assert v["rows"][0]["name"] == "A & C" and v["headline"] == "hand 1"


def test_a_board_not_scoring_is_shown_as_such():
    v = views.view(None, "window", scoring=False, why="not scoring: no connection")
    assert not v["scoring"] and v["why"].startswith("not scoring")
    v = views.view({"game": "five-pins", "screen": ["SERVICE", "..."], "state": None}, "w")
    assert not v["scoring"] and "service" in v["why"]


def test_a_board_plugged_in_while_serving_is_served(tmp_path):
    """Without --port or --table, chalk serve looks for new boards: one found is named after its
    board config, archived, and on the pages; one already served is not taken twice."""
    from chalk.link import Port

    venue = serve.Venue(str(tmp_path / "a.sqlite3"), say=lambda text: None)
    try:
        with Sim("shove-hapenny", flash=tmp_path / "flash", test_mode=True) as sim:
            listing = [Port(sim.port, "", 0x10C4, 0xEA60, "CP210x", True),
                       Port("/dev/ttyS0", "", None, None, None, False)]
            added = venue.discover(listing, serve.probe_name)
            assert [t.name for t in added] == ["shove-hapenny"]
            assert venue.discover(listing, serve.probe_name) == []
            t = added[0]
            deadline = time.monotonic() + 60
            while not (t.connected and t.status) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert t.connected, t.log
            assert t.view()["game"] == "shove-hapenny" and t.view()["scoring"]
            # A second board of the same kind gets a name of its own.
            other = Port(str(tmp_path / "gone"), "", 0x1A86, 0x7523, "CH340", True)
            more = venue.discover([other], lambda p: "shove-hapenny")
            assert [m.name for m in more] == ["shove-hapenny-2"]
    finally:
        venue.close()


def test_a_game_whose_sides_are_named_one_by_one_still_shows_its_score():
    v = views.view({"game": "texas-42", "players": ["Ann", "Bob", "Cy", "Di"],
                    "state": {"scores": [30, 12], "hands": 2, "winner": None}}, "t")
    assert [(r["name"], r["score"]) for r in v["rows"]] == [("Ann & Cy", "30"),
                                                            ("Bob & Di", "12")]


def test_serve_options_are_checked_before_anything_starts(tmp_path):
    env = dict(os.environ, CHALK_SERVE_FILE=str(tmp_path / "serve.json"))
    for args, text in ((["--http-port", "70000"], "not a TCP port"),
                       (["--idle", "0"], "above 0"),
                       (["--table", "window"], "is not NAME=PORT"),
                       (["--table", "a=/dev/null", "--table", "a=/dev/zero"], "two tables")):
        r = subprocess.run([sys.executable, "-m", "chalk.cli", "serve", "--db",
                            str(tmp_path / "a.sqlite3")] + args, capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=60)
        assert r.returncode in (1, 2) and text in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "serve.json").exists()
