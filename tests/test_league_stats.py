"""Statistics a league secretary would sign (`chalk stats`, /stats): players are people by name
(the board's default names are not), figures per game kind, unfinished games apart, the games
list agreeing with `chalk games`, charts with axes, values and legends that survive long names,
fouls in words, and CSV that a spreadsheet cannot be tricked by."""

import csv
import io
import re
import subprocess
import sys

from chalk import stats
from chalk.store import Archive, board_records

FP = {"target": 12, "sets": 1, "pin_foul_penalty": 0}


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def store(path, device, games, end=True):
    """games: [(header, [action dicts])], one board's journal in that order."""
    with Archive(path, create=True) as db:
        bid = db.board({"device": device, "board": "test", "game": games[0][0]["game"]})
        seq = 1
        for n, (head, actions) in enumerate(games):
            recs, states = board_records(dict(head, game_no=n + 1), actions, seq=seq, end=end)
            db.ingest(bid, recs, states, resync=True)
            seq = recs[-1]["seq"] + 1


def five(players, actions):
    return ({"chalk": 1, "game": "five-pins", "config": FP, "players": players},
            [{"a": "break", "player": 0}] + actions)


def shot(p, pins="", carom=0, fouls=()):
    return {"a": "shot", "player": p, "pins": pins, "carom": carom, "fouls": list(fouls)}


WIN_ANN = [shot(0, "12"), shot(1, "1"), shot(0, "1234C")]  # Ann: 4 then 12 -> 12, set and match
SHOVE = {"chalk": 1, "game": "shove-hapenny", "config": {"overflow": "auto"}}


def turn(side, *coins):
    beds = [0] * 9
    for b in coins:
        beds[b - 1] += 1
    return {"a": "turn", "side": side, "beds": beds}


def test_default_names_are_not_people_and_unfinished_games_stand_apart(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-1", [
        five([], WIN_ANN),  # P1 beat P2: nobody's record
        five(["P1", "P2"], WIN_ANN),  # the default names typed in: still nobody
        five(["Ann", "Bob"], WIN_ANN),
        five(["Ann", "Bob"], [shot(0, "1")]),  # in play
    ])
    store(db_path, "sim-2", [
        (dict(SHOVE, players=["A", "B"]), [{"a": "start", "side": 0}, turn(0, 1, 2)]),
        ({"chalk": 1, "game": "texas-42", "config": {"target": 250}},
         [{"a": "hand", "bidder": 0, "bid": 30, "took": 30}]),
    ])
    with stats.open_ro(db_path) as db:
        report = stats.players(db)
        listing = {g["id"]: g for g in stats.game_list(db)}
    names = {p["name"] for p in report["players"]}
    assert names == {"Ann", "Bob"}
    ann = {p["name"]: p for p in report["players"]}["Ann"]
    assert (ann["games"], ann["wins"], ann["losses"], ann["unfinished"]) == (1, 1, 0, 1)
    assert report["unfinished"] == 3  # Ann v Bob in play, the shove turn, the texas hand
    assert all(p["name"] not in ("P1", "P2", "A", "B", "S1", "S2")
               for k in report["kinds"] for p in k["players"])
    # The games list says what `chalk games` says: a won game is won, whatever the archive's
    # end record (none here: the board has not started its next game yet).
    assert listing[3]["result"] == "won by Ann" and listing[3]["finished"]
    assert listing[4]["result"] == "playing set 1 2-0"
    r = chalk("games", "--db", db_path)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()[1:]
    for line in rows:
        gid = int(line.split()[0])
        assert line.rstrip().endswith(listing[gid]["result"]), (line, listing[gid]["result"])


def test_a_won_game_without_its_end_record_is_never_in_play(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-3", [five(["Ann", "Bob"], WIN_ANN)], end=False)
    with stats.open_ro(db_path) as db:
        (g,) = stats.game_list(db)
        report = stats.players(db)
        s = stats.game_stats(db, g["id"])
    assert g["result"] == "won by Ann" and s["result"] == "won by Ann"
    assert {p["name"]: p["wins"] for p in report["players"]} == {"Ann": 1, "Bob": 0}


def test_figures_per_game_kind(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-4", [
        five(["Ann", "Bob"], [shot(0, "12"), shot(1, "C", 0, ["miss"])]),
        # Ann 4, then Bob's foul gives her 8 + 2 = 10 more: 14, capped at 12 (FP-4), the match
    ])
    # SH-15's worked example 3, then Ann's own winning coin: 27 marks in 7 turns.
    store(db_path, "sim-5", [(dict(SHOVE, players=["Ann", "Cy"]), [
        {"a": "start", "side": 0}, turn(0, 1, 1, 1, 2, 2), turn(1, 9, 9, 9),
        turn(0, 2, 3, 3, 3, 4), turn(1), turn(0, 4, 4, 5, 5, 5), turn(1),
        turn(0, 6, 6, 6, 7, 7), turn(1), turn(0, 7, 8, 8, 8, 9), turn(1), turn(0, 9),
        turn(1, 9), turn(0, 9)])])
    store(db_path, "sim-6", [({"chalk": 1, "game": "texas-42", "config": {"target": 100},
                               "players": ["Ann", "Bob", "Cy", "Di"]},
                              [{"a": "hand", "bidder": 0, "bid": 30, "took": 35},
                               {"a": "hand", "bidder": 1, "bid": 31, "took": 20},
                               {"a": "hand", "bidder": 0, "bid": 32, "took": 40}])])
    with stats.open_ro(db_path) as db:
        report = stats.players(db)
    kinds = {k["game"]: {p["name"]: p for p in k["players"]} for k in report["kinds"]}
    ann = kinds["five-pins"]["Ann"]
    assert ann["shots"] == 1 and ann["points_per_shot"] == 4.0  # 4 points with her own shot
    assert ann["points_per_set"] == 12.0  # capped at the target (FP-4)
    assert kinds["five-pins"]["Bob"]["foul_pct"] == 100.0
    sh = kinds["shove-hapenny"]["Ann"]
    assert sh["turns"] == 7 and sh["marks_per_turn"] == round(27 / 7, 2)
    assert kinds["shove-hapenny"]["Cy"]["marks_per_turn"] == round(3 / 6, 2)
    pair = kinds["texas-42"]
    assert pair["Ann & Cy"]["bids"] == 2 and pair["Ann & Cy"]["made_pct"] == 100.0
    assert pair["Bob & Di"]["bids"] == 1 and pair["Bob & Di"]["bids_made"] == 0
    # Overall, the unlike figures are never averaged together: no mixed "avg score".
    assert "avg_score" not in report["players"][0]
    r = chalk("stats", "--db", db_path)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for head in ("Five pins", "Shove ha'penny", "Texas 42", "marks per turn",
                 "points per shot", "bids made %"):
        assert head in text, head


def test_stats_csv_cannot_trick_a_spreadsheet_or_a_terminal(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    evil = ["=HYPERLINK(\"http://x\")", "+1+1", "-2", "@SUM(A1)", "\x1b[2JEve", "\tTab",
            "\uff1d1"]
    games = [five([e, "Bob"], WIN_ANN) for e in evil]
    store(db_path, "sim-7", games)
    r = chalk("stats", "--db", db_path, "--csv", "-")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\t" not in r.stdout
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    names = {row["name"] for row in rows}
    assert names >= {"'=HYPERLINK(\"http://x\")", "'+1+1", "'-2", "'@SUM(A1)", "\\x1b[2JEve",
                     "\\x09Tab", "'\uff1d1", "Bob"}
    for row in rows:  # numbers stay numbers
        assert re.fullmatch(r"\d+", row["wins"]) and row["game"] in ("all", "five-pins")
    r = chalk("stats", "--db", db_path)
    assert "\x1b" not in r.stdout and "\\x1b[2JEve" in r.stdout
    # The export's CSV is made safe the same way; its negative points stay numbers.
    r = chalk("export", "1", "-f", "csv", "--db", db_path)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows[0]["name"] == "'=HYPERLINK(\"http://x\")"


def test_charts_have_axes_values_and_legends_that_survive_long_names(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    long_a = "Annabel " + "Featherstonehaugh-" * 3 + "Smythe"
    long_b = "Bartholomew " + "X" * 28
    store(db_path, "sim-8", [five([long_a, long_b], WIN_ANN)])
    with stats.open_ro(db_path) as db:
        s = stats.game_stats(db, 1)
    chart = s["chart"]
    texts = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', chart)
    values = [t for _x, _y, t in texts]
    assert "action" in values and "0" in values and "12" in values  # the axes' values
    legend = [(x, y, t) for x, y, t in texts if "<title>" in t]
    assert len(legend) == 2 and len({y for _x, y, _t in legend}) == 2  # one row each
    for (_x, _y, t), name in zip(legend, (long_a, long_b)):
        shown = t.split("</title>")[1]
        assert "<title>%s</title>" % name in t and len(shown) <= 48  # cut, the whole in title
    assert s["chart"].count("<polyline") == 2
    # Text big enough to read on a 360-pixel phone, where a 400-unit chart shrinks to ~320.
    for svg in [chart] + [c for _t, c in s["charts"]]:
        sizes = [int(v) for v in re.findall(r'font-size="(\d+)"', svg)]
        assert sizes and min(sizes) * 320 / 400 >= 12
        assert 'viewBox="0 0 400 ' in svg
    pins = s["pin_chart"]
    assert pins.count("<rect") == 10 and ">pin C<" in pins and "times down" in pins


def test_the_game_page_says_fouls_in_words(tmp_path):
    from chalk import serve, web
    from tests.test_serve import LAN, _call

    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-9", [five(["Ann", "Bob"], [shot(0, "1"), shot(1, "", 0, ["red_first"]),
                                                   shot(0, "1234C")])])
    app = web.create_app(serve.Venue(str(db_path), say=lambda text: None), db_path=db_path)
    status, html = _call(app, "GET", "/stats/game/1", LAN)
    assert status == 200
    assert b"hit the red first (FP-15): 1" in html and b"red_first" not in html
    assert b"Five pins" in html and b"to 12, one set" in html and b"won by Ann" in html
    status, html = _call(app, "GET", "/stats", LAN)
    assert status == 200 and b"won by Ann" in html and b"in play" not in html
    assert b"points per shot" in html
