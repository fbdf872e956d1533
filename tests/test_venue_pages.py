"""The venue's pages on the screens a pub has, in headless Chromium: a phone (360 x 740) and a
1080p TV (1920 x 1080). No page scrolls sideways; on the phone no text is under 12 px; a table's
page fits the screen, warnings and all; the venue page fills the TV for 1 to 12 tables, bigger
cards for fewer; dark on the TV, the phone's own preference on a phone.

The tables here have the states of real games (the sample logs, through the rules) and every
state a table can show, served in this process: layout needs no boards."""

import statistics
import time

import pytest

from tests.browser import (
    GAMES,
    LONG_NAMES,
    PageServer,
    chrome,
    sample_status,
    size,
    wait_drawn,
)

pytestmark = pytest.mark.browser

PHONE = (360, 740)
TV = (1920, 1080)
WARNINGS = ["+A1 A2 B9: peg mismatch", "pin.3 stuck: it has not changed for 10 minutes",
            "journal: the flash is full"]
GAUGE = {"mem_free": 41 * 1024, "mem_block": 12 * 1024, "gap_ms": 9, "step_ms": 31}
HEAP_LOW = "heap low: 7K free, 1K block"


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """An archive with a game of every kind (the sample logs), for the statistics pages."""
    from tests.test_stats import sample, store

    path = tmp_path_factory.mktemp("stats") / "archive.sqlite3"
    store(path, "dev-1", [sample(g + ".jsonl") for g in GAMES])
    return path


def every_table():
    """A table of each game, with long names, warnings and every state a table can be in."""
    tables = []
    for i, game in enumerate(GAMES):
        players = None
        if game in ("five-pins", "shove-hapenny"):
            players = LONG_NAMES[:2]
        status = sample_status(game, 10, players=players,
                               warnings=WARNINGS if i % 2 == 0 else WARNINGS[:1])
        status.update(GAUGE)  # every board reports its gauge; one is short of memory
        if i == 3:
            status["warnings"].append(HEAP_LOW)
        tables.append(("t-" + game, status, i % 3 != 1))
    tables.append(("no-game", None, False))
    return tables


_MEASURE = """
var out = {w: window.innerWidth, h: window.innerHeight,
           sw: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
           sh: Math.max(document.documentElement.scrollHeight, document.body.scrollHeight),
           small: [], cut: [], cards: 0};
var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
var n;
while ((n = walker.nextNode())) {
  if (!n.data.trim()) continue;
  var el = n.parentElement;
  if (!el || !el.getClientRects().length) continue;  // not shown
  var st = getComputedStyle(el);
  if (st.visibility === "hidden" || st.display === "none") continue;
  var px = parseFloat(st.fontSize);
  if (el instanceof SVGElement && el.getScreenCTM) {  // a chart: its drawn size
    var m = el.getScreenCTM();
    px *= Math.sqrt(m.a * m.a + m.b * m.b);
  }
  if (px < 11.95) out.small.push([n.data.trim().slice(0, 30), Math.round(px * 10) / 10]);
}
document.querySelectorAll(".table-card").forEach(function (c) {
  out.cards++;
  if (c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1)
    out.cut.push(c.getAttribute("data-table"));
});
return out;
"""


def measure(drv, url):
    drv.get(url)
    wait_drawn(drv)
    return drv.execute_script(_MEASURE)


def test_every_page_fits_a_phone_and_a_tv(tmp_path, chromium_paths, archive):
    tables = every_table()
    with PageServer(tmp_path, tables, db_path=archive) as ps:
        pages = ["/", "/?tv", "/stats"] + ["/table/" + name for name, _s, _c in tables] + \
            ["/stats/game/%d" % (i + 1) for i in range(len(GAMES))]
        for w, h in (PHONE, TV):
            drv = chrome(chromium_paths, w, h)
            try:
                for path in pages:
                    m = measure(drv, ps.url + path)
                    assert (m["w"], m["h"]) == (w, h)
                    where = "%s at %dx%d" % (path, w, h)
                    assert m["sw"] <= w, "%s scrolls sideways: %d px wide" % (where, m["sw"])
                    if (w, h) == PHONE:
                        assert not m["small"], "%s: text under 12 px: %s" % (where, m["small"])
                    assert not m["cut"], "%s: cards cut: %s" % (where, m["cut"])
                    if path.startswith("/table/"):
                        assert m["cards"] == 1
                        assert m["sh"] <= h, "%s: %d px high" % (where, m["sh"])
            finally:
                drv.quit()


_CARDS = """
var main = document.getElementById("tables").getBoundingClientRect();
var area = 0, scores = [];
document.querySelectorAll(".table-card").forEach(function (c) {
  var r = c.getBoundingClientRect();
  area += r.width * r.height;
  if (c.getAttribute("data-table") === "t00") {
    c.querySelectorAll(".score").forEach(function (s) {
      scores.push(s.getBoundingClientRect().height);
    });
  }
});
return {main: main.width * main.height, bottom: main.bottom, area: area, scores: scores,
        fill: document.documentElement.classList.contains("fill")};
"""


def test_the_venue_page_fills_a_tv_for_1_to_12_tables(tmp_path, chromium_paths):
    shown = {}
    drv = chrome(chromium_paths, *TV)
    try:
        for n in (1, 2, 3, 5, 8, 12):
            tables = [("t%02d" % i, sample_status(GAMES[i % 3], 8 + i,
                                                  warnings=WARNINGS[:i % 3]), i % 4 != 3)
                      for i in range(n)]
            with PageServer(tmp_path, tables) as ps:
                m = measure(drv, ps.url + "/")
                assert m["sw"] <= TV[0] and m["sh"] <= TV[1], (n, m)
                assert not m["cut"] and m["cards"] == n, (n, m)
                c = drv.execute_script(_CARDS)
                assert c["fill"] and c["bottom"] <= TV[1], (n, c)
                # The cards cover the screen below the header (gaps and margins aside).
                assert c["area"] >= 0.85 * c["main"], (n, c["area"] / c["main"])
                shown[n] = statistics.median(c["scores"])
    finally:
        drv.quit()
    # Fewer tables, bigger cards: the first table's scores shrink as tables are added.
    sizes = [shown[n] for n in sorted(shown)]
    assert all(a >= b - 1 for a, b in zip(sizes, sizes[1:])), shown
    assert shown[1] > 2 * shown[12], shown
    assert shown[12] >= 24, shown  # still a score across a room, on a full TV


_BACKGROUND = """
var c = getComputedStyle(document.body).backgroundColor.match(/[0-9.]+/g).map(Number);
return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
"""


@pytest.mark.parametrize("w,h,path,dark,want", [
    (1920, 1080, "/", False, "dark"),  # a TV's browser says light: the TV is dark anyway
    (1920, 1080, "/?tv", False, "dark"),
    (360, 740, "/?tv", False, "dark"),
    (360, 740, "/", False, "light"),  # a phone: its owner's preference
    (360, 740, "/", True, "dark"),
    (360, 740, "/table/window", False, "light"),
    (1920, 1080, "/?theme=light", False, "light"),
])
def test_dark_on_the_tv_and_as_the_phone_prefers(tmp_path, chromium_paths, w, h, path, dark,
                                                 want):
    with PageServer(tmp_path, [("window", sample_status("five-pins", 4), True)]) as ps:
        drv = chrome(chromium_paths, w, h, dark=dark)
        try:
            drv.get(ps.url + path)
            wait_drawn(drv)
            lum = drv.execute_script(_BACKGROUND)
        finally:
            drv.quit()
    assert (lum < 60) == (want == "dark"), lum


_ORDER = """
var el = document.querySelector(arguments[0]), tail = arguments[1];
var walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n, xs = [];
while ((n = walker.nextNode())) {
  var at = n.data.indexOf(tail);
  if (at < 0) continue;
  for (var i = at; i < at + tail.length; i++) {
    if (n.data[i] === " ") continue;
    var r = document.createRange();
    r.setStart(n, i);
    r.setEnd(n, i + 1);
    xs.push(r.getBoundingClientRect().left);
  }
}
return xs;
"""


def test_a_name_with_a_bidi_override_cannot_reverse_the_rest_of_the_line(tmp_path,
                                                                         chromium_paths):
    evil = "\u202eBob"
    status = sample_status("five-pins", 2, players=["Ann", evil])
    status["state"].update(next=1, ball_in_hand=True)  # "on move: <name>, ball in hand"
    with PageServer(tmp_path, [("snug \u202e1", status, True)]) as ps:
        drv = chrome(chromium_paths, *TV)
        try:
            drv.get(ps.url + "/")
            wait_drawn(drv)
            xs = drv.execute_script(_ORDER, ".status", ", ball in hand")
            assert len(xs) == len(",ballinhand"), xs
            assert xs == sorted(xs), "the text after the name is reversed: %s" % xs
            bidi = drv.execute_script("""return Array.prototype.map.call(
                document.querySelectorAll('.row .name, .table-name'), function (e) {
                    return [getComputedStyle(e).unicodeBidi, e.getAttribute('dir')]; });""")
            assert bidi and all(b == ["isolate", "auto"] for b in bidi), bidi
        finally:
            drv.quit()


def test_a_refused_entry_shows_its_rule_for_a_few_seconds(tmp_path, chromium_paths):
    from chalk import serve

    status = sample_status("domino-bingo", 3)
    with PageServer(tmp_path, [("bar", status, True)]) as ps:
        t = ps.venue.tables["bar"]
        t.refusal = (time.monotonic() + 1.5, "DB-1", serve._reason(
            "DB-1", 'DB-1: the points add up to 150, more than 130 in play with trump 2; '
            'action {"a": "hand"}'))
        drv = chrome(chromium_paths, *PHONE)
        try:
            drv.get(ps.url + "/table/bar")
            wait_drawn(drv)
            text = drv.execute_script(
                "var r = document.querySelector('.refused'); return r && r.textContent;")
            assert text == "Refused (DB-1)the points add up to 150, more than 130 in play " \
                "with trump 2", text
            # Gone by itself once its time is up (the server is not even pushing here).
            deadline = time.monotonic() + 10
            while drv.execute_script("return !!document.querySelector('.refused')"):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            size(drv, *TV)  # and the table's page lays itself out again for a TV
            wait_drawn(drv)
            assert drv.execute_script(_MEASURE)["sh"] <= TV[1]
        finally:
            drv.quit()


def test_pages_left_for_others_let_their_streams_go(tmp_path, chromium_paths):
    """A browser opens six connections to a server at most: pages kept for the back button
    must not each keep an event stream open, or the seventh page never loads (it did)."""
    tables = [("t%d" % i, sample_status("tally", 3), True) for i in range(8)]
    with PageServer(tmp_path, tables) as ps:
        drv = chrome(chromium_paths, *PHONE)
        try:
            for name, _s, _c in tables * 2:
                t0 = time.monotonic()
                drv.get(ps.url + "/table/" + name)
                wait_drawn(drv)
                assert time.monotonic() - t0 < 10, name
                deadline = time.monotonic() + 10
                while len(ps.venue._listeners) > 1:
                    assert time.monotonic() < deadline, len(ps.venue._listeners)
                    time.sleep(0.05)
            drv.back()
            wait_drawn(drv)
            deadline = time.monotonic() + 10  # back: the page listens again
            while drv.execute_script("return document.body.getAttribute('data-live')") != "1":
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            drv.quit()


def test_the_table_page_shows_the_boards_gauge_and_a_heap_low_board_says_so(tmp_path,
                                                                           chromium_paths):
    """Staff looking for a fault find the board's gauge in small print on the table's page
    (not on the room's TV), and a board short of memory has it said in words on its card."""
    low = sample_status("five-pins", 6, warnings=[HEAP_LOW])
    low.update(GAUGE, mem_free=7 * 1024 + 100, mem_block=1500)
    well = sample_status("novuss", 6)
    well.update(GAUGE)
    with PageServer(tmp_path, [("bar", low, True), ("snug", well, True)]) as ps:
        for w, h in (PHONE, TV):
            drv = chrome(chromium_paths, w, h)
            try:
                m = measure(drv, ps.url + "/table/bar")
                assert not m["cut"] and m["sh"] <= h and m["sw"] <= w
                if (w, h) == PHONE:
                    assert not m["small"], m["small"]
                said = drv.execute_script("""
                    var g = document.querySelector('.gauge');
                    return {gauge: g && g.textContent,
                            warnings: Array.prototype.map.call(
                                document.querySelectorAll('.warning'),
                                function (x) { return x.textContent; })};""")
                assert said["gauge"] == "board: 7 KB free (block 1 KB), scan gap 9 ms, step 31 ms"
                assert any("Heap low: the board is short of memory (7 KB free, largest block 1 "
                           "KB)" in x for x in said["warnings"]), said["warnings"]
                assert not any("heap low:" in x for x in said["warnings"])  # in words only
                m = measure(drv, ps.url + "/")
                assert m["cards"] == 2
                assert drv.execute_script("return document.querySelectorAll('.gauge').length") \
                    == 0  # the room's screen keeps to the scores
                heap = drv.execute_script("""
                    return Array.prototype.map.call(document.querySelectorAll('.table-card'),
                        function (c) { return [c.getAttribute('data-table'),
                                               c.textContent.indexOf('Heap low') >= 0]; });""")
                assert sorted(heap) == [["bar", True], ["snug", False]]
            finally:
                drv.quit()
