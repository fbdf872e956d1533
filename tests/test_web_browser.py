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
from tests.browser import Served, chrome, find_chromium, play

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium_paths():
    paths, why = find_chromium()
    if paths is None:
        pytest.fail(why)
    return paths


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
