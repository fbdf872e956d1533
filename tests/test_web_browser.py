"""The venue's scoreboard in a real browser: a simulated five-pins table played from a sensor
trace while headless Chromium shows its page; the score on the page must follow the board.

Chromium and chromedriver are Debian's (installed here with apt-get when missing, as .ci/run
does); everything else runs on 127.0.0.1.
"""

import json

import pytest

from chalk.sim import Sim
from chalk.traces import Trace
from scoreboard.rules import new_game
from tests.browser import Served, chrome, play

pytestmark = pytest.mark.browser


def _wait(drv, pred, timeout=60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(drv, timeout, poll_frequency=0.05).until(lambda d: pred(d))


_READ = """
var card = document.querySelector('section.table-card[data-table="' + arguments[0] + '"]');
if (!card) return null;
function texts(sel) {
  return Array.prototype.map.call(card.querySelectorAll(sel), function (e) {
    return e.textContent; });
}
return {scores: texts(".row .score"), names: texts(".row .name"),
        scoring: card.getAttribute("data-scoring"), status: texts(".status").join(""),
        banner: texts(".banner").join(""), imgs: card.querySelectorAll("img").length};
"""


def _read(drv, table):
    """The table's card as the page shows it now, read in one go (the page replaces a card on
    each update, so element handles kept across updates would go stale)."""
    return drv.execute_script(_READ, table)


def _scores(drv, table):
    card = _read(drv, table)
    return card and card["scores"]


def trace_of_a_game():
    """Break by the first player, then two shots: FP-7, FP-9 (pins 1 and 3 down), FP-6."""
    tr = Trace(seed=3)
    tr.wait(300)
    tr.press("confirm")  # the first player breaks
    tr.wait(500)
    strike = tr.t
    tr.pin_fall("1", strike + 300, 1500)
    tr.pin_fall("3", strike + 500, 120)  # falls and stands again: still counts (FP-19)
    tr.t = strike + 3000  # still for longer than settle_ms
    tr.press("confirm")
    tr.wait(800)
    strike = tr.t
    tr.pin_fall("C", strike + 400, 1500)
    tr.t = strike + 3000
    tr.press("confirm")
    tr.wait(500)
    actions = [{"a": "break", "player": 0}, {"a": "shot", "player": 0, "pins": "13"},
               {"a": "shot", "player": 1, "pins": "C"}]
    return [json.loads(line) for line in tr.lines()], actions


def test_scoreboard_page_follows_a_traced_game_in_chromium(tmp_path, chromium_paths):
    lines, actions = trace_of_a_game()
    game = new_game("five-pins", {"target": 60, "sets": 3, "pin_foul_penalty": 0})
    for a in actions[:-1]:
        game.apply(a)
    after_two = [str(s) for s in game.state()["scores"]]
    game.apply(actions[-1])
    final = [str(s) for s in game.state()["scores"]]
    assert final != after_two != ["0", "0"]
    evil = "<img src=x onerror=alert(1)>"
    with Sim("five-pins", flash=tmp_path / "flash", test_mode=True) as sim, \
            Served(tmp_path, [("window", sim.port)]) as served:
        served.wait_table("window", lambda t: t["connected"])
        status, body = served.post("/api/tables/window/new", {
            "game": "five-pins", "players": ["Ann", evil],
            "config": {"target": 60, "sets": 3, "pin_foul_penalty": 0}})
        assert status == 200, body
        drv = chrome(chromium_paths)
        try:
            drv.get(served.url + "/table/window")
            _wait(drv, lambda d: d.find_element("tag name", "body")
                  .get_attribute("data-live") == "1")
            _wait(drv, lambda d: _scores(d, "window") == ["0", "0"])
            card = _read(drv, "window")
            assert card["names"] == ["Ann", evil]  # shown as text, not as markup
            assert card["imgs"] == 0 and card["scoring"] == "1"

            play(served, "window", lines)
            # The page changes by itself (pushed by the server), first after the second
            # action, then to the final score.
            _wait(drv, lambda d: _scores(d, "window") == after_two)
            _wait(drv, lambda d: _scores(d, "window") == final)
            api = served.get("/api/tables/window")["view"]
            assert [r["score"] for r in api["rows"]] == final
            assert _read(drv, "window")["status"].startswith("on move")

            # The venue page shows the same table, and says so when it stops scoring.
            drv.get(served.url + "/")
            _wait(drv, lambda d: _scores(d, "window") == final)
            sim.cut = True  # the cable is pulled
            _wait(drv, lambda d: _read(d, "window")["scoring"] == "0")
            card = _read(drv, "window")
            assert card["banner"].startswith("NOT SCORING") and card["scores"] == final
            sim.cut = False
            _wait(drv, lambda d: _read(d, "window")["scoring"] == "1")
        finally:
            drv.quit()


# -- faults, as the room sees them ------------------------------------------------------------

_STATE = """
var out = {server: document.body.getAttribute("data-server")};
document.querySelectorAll("section.table-card").forEach(function (c) {
  var gone = c.querySelector(".gone");
  out[c.getAttribute("data-table")] = {
    state: c.getAttribute("data-state"),
    banner: (c.querySelector(".banner") || {}).textContent || "",
    gone: gone ? getComputedStyle(gone).display !== "none" : false,
    goneText: gone ? gone.textContent : ""};
});
return out;
"""


def _page(drv):
    return drv.execute_script(_STATE)


def _until(drv, pred, deadline_s, what):
    """Seconds until pred(page) holds, read in the browser every 20 ms; fails past the
    deadline with what the page showed."""
    import time

    t0 = time.monotonic()
    while True:
        page = _page(drv)
        if pred(page):
            return time.monotonic() - t0
        assert time.monotonic() - t0 <= deadline_s, "%s: after %.1f s the page shows %s" % (
            what, time.monotonic() - t0, page)
        time.sleep(0.02)


def test_the_page_shows_every_fault_and_comes_back_by_itself(tmp_path, chromium_paths):
    """A board frozen 6 s, the service view, a board unplugged and plugged back, chalk serve
    stopped and started: what the TV shows, within deadlines from the heartbeats."""
    import os
    import signal
    import time

    from chalk import serve, web
    from tests.test_venue import BACK, NOTICE, SLACK

    gone_after = 2 * web.SERVER_BEAT_S + 0.5 + SLACK  # two server beats missed
    with Sim("five-pins", flash=tmp_path / "fp", test_mode=True) as fp, \
            Sim("shove-hapenny", flash=tmp_path / "sh", test_mode=True) as sh:
        tables = [("window", fp.port), ("snug", sh.port)]
        served = Served(tmp_path, tables)
        drv = chrome(chromium_paths, 1920, 1080)
        try:
            for name in ("window", "snug"):
                served.wait_table(name, lambda t: t["state"] == "scoring")
            drv.get(served.url + "/?tv")
            _until(drv, lambda p: p["server"] == "live" and p.get("window", {}).get("state")
                   == "scoring" and p.get("snug", {}).get("state") == "scoring", 30, "start")

            # 1. A board frozen for 6 s (kill -STOP), then thawed.
            frozen = time.monotonic()
            os.killpg(fp.proc.pid, signal.SIGSTOP)
            try:
                _until(drv, lambda p: p["window"]["state"] == "silent", NOTICE, "frozen")
                page = _page(drv)
                assert page["window"]["banner"].startswith("NOT SCORING")
                assert "does not answer" in page["window"]["banner"]
                assert page["snug"]["state"] == "scoring"  # the other table is not touched
                while time.monotonic() - frozen < 6.0:
                    assert _page(drv)["window"]["state"] == "silent"
                    time.sleep(0.1)
            finally:
                os.killpg(fp.proc.pid, signal.SIGCONT)
            _until(drv, lambda p: p["window"]["state"] == "scoring", BACK, "thawed")

            # 2. The service view (chalk service), and back.
            code, body = served.post("/api/tables/snug/request",
                                     {"cmd": "service", "args": {"on": True}})
            assert code == 200, body
            _until(drv, lambda p: p["snug"]["state"] == "service", BACK, "service")
            assert "SERVICE VIEW" in _page(drv)["snug"]["banner"]
            served.post("/api/tables/snug/request", {"cmd": "service", "args": {"on": False}})
            _until(drv, lambda p: p["snug"]["state"] == "scoring", BACK, "service off")

            # 3. The cable pulled, and plugged back.
            fp.cut = True
            try:
                _until(drv, lambda p: p["window"]["state"] == "silent", NOTICE, "unplugged")
            finally:
                fp.cut = False
            _until(drv, lambda p: p["window"]["state"] == "scoring",
                   BACK + serve.BACKOFF[1], "plugged back")

            # 4. chalk serve stopped: every card says so, over its whole face.
            port = served.port
            assert served.stop() == 0
            _until(drv, lambda p: p["server"] == "gone" and p["window"]["gone"] and
                   p["snug"]["gone"], gone_after, "server stopped")
            assert "No contact with the scoreboard server" in _page(drv)["window"]["goneText"]
            # ... and started again: the page comes back by itself, both tables scoring.
            served = Served(tmp_path, tables, http_port=port)
            _until(drv, lambda p: p["server"] == "live" and not p["window"]["gone"] and
                   p["window"]["state"] == "scoring" and p["snug"]["state"] == "scoring",
                   60, "server started again")
        finally:
            drv.quit()
            served.stop()
