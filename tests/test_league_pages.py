"""The league's pages, served by `chalk league run` (its broker away: the pages still answer and
say plainly that no games are coming in): standings, results by round and venue, each game
with its verdict, players' records, CSV; hostile names shown as text; disputes raised and
resolved through the API only from the league's host or with its token; on a phone in a real
Chromium, no page scrolls sideways and no text is under 12 px."""

import json
import urllib.error
import urllib.request

import pytest

from chalk import leagueconf
from chalk.keys import KeyStore
from chalk.league import Collector
from chalk.leaguedb import LeagueDB
from chalk.mqttconf import Broker
from tests.leaguehelp import Board, LeagueProc, league_config, match
from tests.mqttbroker import free_port

HOSTILE = "Zoë \u202eevil\u202c <script>alert(1)</script>"
PLAYERS = ["Ann", "Bob", HOSTILE, "=SUM(A1)"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("league-pages")
    board = Board("board-a")  # its own key pair, enrolled as over USB
    store = KeyStore(tmp / "keys.json")
    board.enrol(store)
    store.save()
    cfg = league_config(tmp / "league.json", {"board-a": {"venue": "crown"}},
                        {"crown": {"name": "The Crown & Anchor"}}, PLAYERS,
                        rounds={"start": "2026-11-23", "days": 7, "count": 4})
    league = leagueconf.load(cfg)
    c = Collector(league, tmp / "league.sqlite3", Broker(), say=lambda t: None)
    c.keys = KeyStore(tmp / "keys.json")
    c._ack = lambda *a: None
    with LeagueDB(tmp / "league.sqlite3", create=True) as db:
        for no, (a, b), seed in ((1, ("Ann", HOSTILE), 31), (2, ("Bob", "=SUM(A1)"), 32),
                                 (3, ("Cy", "Di"), 34), (4, ("Ann", "Bob"), 33)):
            actions, _w, _s = match(seed, (a, b))
            text = board.log(tmp, [a, b], actions)
            if no != 3:  # the board's game 3 never reaches the league
                c._take(db, "chalk/v1/venue/crown/game/%d" % no, text.encode())
        c._take(db, "chalk/v1/venue/crown/game/9", b"forged nonsense")
    proc = LeagueProc(cfg, args=["--mqtt", "127.0.0.1:%d" % free_port()]).start()
    yield proc
    proc.stop()


def test_every_page_answers_in_words(site):
    page = site.get("/")
    assert "NOT RECEIVING GAMES" in page  # no broker: said plainly, on every page
    assert "Standings" in page and "North Five-Pins League" in page
    assert "&lt;script&gt;" in page and "<script>alert" not in page
    assert "<bdi>Zoë" in page
    assert "game #3 not received" in page  # the board's game 3 never came
    assert "not a match log that can be read" in page
    results = site.get("/results")
    assert "Round 1" in results and "The Crown &amp; Anchor" in results
    assert "won by" in results and "verified: finished and signed by the board" in results
    game = site.get("/game/1")
    assert "COUNTED" in game and "board board-a game #1" in game
    assert "Ann breaks" in game and "— 9 points" in game  # in the game's words, with names
    bad = site.get("/game/4")
    assert "NOT COUNTED" in bad and "not a match log" in bad
    me = site.get("/player/Ann")
    assert "played 2" in me and "won" in me
    venues = site.get("/venues")
    assert "not heard from" in venues and "board-a" in venues
    for path, words in (("/game/999", "no game 999"), ("/game/abc", "no game"),
                        ("/player/Nobody", "no player or team")):
        with pytest.raises(urllib.error.HTTPError) as e:
            site.get(path)
        assert e.value.code == 404 and words in e.value.read().decode()


def test_csv_downloads(site):
    text = site.get("/standings.csv")
    assert text.splitlines()[0].startswith("pos,name,played")
    assert "'=SUM(A1)" in text and "\u202e" not in text
    assert "scores_csv" in site.get("/matches.csv").splitlines()[0]
    assert "not counted" in site.get("/results.csv")


def post(site, path, body, headers=None, ctype="application/json"):
    req = urllib.request.Request(site.url + path, data=json.dumps(body).encode(),
                                 method="POST", headers=dict({"Content-Type": ctype},
                                                             **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_disputes_through_the_api_only_from_the_league(site):
    status, body = post(site, "/api/games/1/dispute", {"note": "x"},
                        {"Origin": "http://evil.example"})
    assert status == 403
    status, body = post(site, "/api/games/1/dispute", {"note": "x"}, ctype="text/plain")
    assert status == 403
    status, body = post(site, "/api/games/1/dispute", {"note": "x"},
                        {"Authorization": "Bearer wrong"} | {"Origin": "http://x"})
    assert status == 403
    status, body = post(site, "/api/games/1/dispute", {"note": ""})
    assert status == 409 and "needs a note" in body["error"]
    status, body = post(site, "/api/games/1/dispute", {"note": "the cue ball was moved"})
    assert status == 200 and body["result"]["status"] == "pending"
    did = body["result"]["dispute"]
    assert "pending: disputed by the league" in site.get("/game/1")
    status, body = post(site, "/api/disputes/%d/resolve" % did, {"outcome": "maybe",
                                                                 "note": "?"})
    assert status == 409
    status, body = post(site, "/api/disputes/%d/resolve" % did,
                        {"outcome": "voided", "note": "replayed on the night: 2-1 Bob"})
    assert status == 200
    assert "VOIDED" in site.get("/game/1")
    status, body = post(site, "/api/disputes/%d/resolve" % did,
                        {"outcome": "accepted", "note": "again"})
    assert status == 409 and "resolved already" in body["error"]
    games = site.get("/api/games")["games"]
    assert games[0]["status"] == "voided"


@pytest.mark.browser
def test_pages_on_a_phone_and_a_tv(site):
    from tests.browser import chrome, find_chromium

    paths, why = find_chromium()
    if paths is None:
        pytest.skip(why)
    for w, h in ((360, 740), (1920, 1080)):
        driver = chrome(paths, w, h)
        try:
            for path in ("/", "/results", "/game/1", "/player/Ann", "/venues"):
                driver.get(site.url + path)
                wide = driver.execute_script(
                    "return document.documentElement.scrollWidth")
                assert wide <= driver.execute_script("return window.innerWidth"), (path, w,
                                                                                    wide)
                if w == 360:
                    small = driver.execute_script(
                        "var m = 99; document.querySelectorAll('body *').forEach(function(e)"
                        "{ if (e.childNodes.length && Array.from(e.childNodes).some("
                        "function(n){return n.nodeType == 3 && n.textContent.trim();}))"
                        "{ m = Math.min(m, parseFloat(getComputedStyle(e).fontSize)); }});"
                        "return m;")
                    assert small >= 12, (path, small)
        finally:
            driver.quit()
