"""Statistics and plots from the archive (`chalk stats`, the /stats pages): games built here
with known pins, beds, undos and winners, stored as a board would send them."""

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from chalk import stats
from chalk.store import Archive, board_records
from scoreboard import matchlog
from scoreboard.rules import new_game

SAMPLES = Path(__file__).resolve().parent.parent / "host" / "chalk" / "samples"
FP = {"target": 60, "sets": 3, "pin_foul_penalty": 0}


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def store(path, device, games):
    """games: [(header, [action dicts])], one board's journal in that order."""
    with Archive(path, create=True) as db:
        bid = db.board({"device": device, "board": "test", "game": games[0][0]["game"]})
        seq = 1
        for n, (head, actions) in enumerate(games):
            recs, states = board_records(dict(head, game_no=n + 1), actions, seq=seq)
            db.ingest(bid, recs, states, resync=True)
            seq = recs[-1]["seq"] + 1


def sample(name):
    log = matchlog.read((SAMPLES / name).read_text().splitlines())
    actions = []
    for _n, r in log.actions:
        a = matchlog.strip_meta(r)
        a.pop("seq", None)
        actions.append(a)
    return log.header, actions


FIVE = ({"chalk": 1, "game": "five-pins", "config": FP, "players": ["Ann", "<i>Bob</i>"]}, [
    {"a": "break", "player": 0},
    {"a": "shot", "player": 0, "pins": "12", "carom": 0, "fouls": []},
    {"a": "shot", "player": 1, "pins": "1", "carom": 3, "fouls": []},
    {"a": "shot", "player": 0, "pins": "", "carom": 0, "fouls": ["miss"]},
    {"a": "undo"},  # the miss never happened (FP-14 foul retracted)
    {"a": "shot", "player": 0, "pins": "C", "carom": 0, "fouls": []},
])
SHOVE = ({"chalk": 1, "game": "shove-hapenny", "config": {"sides": 2, "per_side": 1,
                                                          "overflow": "auto"},
          "players": ["Cy", "Di"]}, [
    {"a": "start", "side": 0},
    {"a": "turn", "side": 0, "beds": [1, 1, 0, 0, 0, 0, 0, 0, 0]},
    {"a": "turn", "side": 1, "beds": [0, 0, 2, 0, 0, 0, 0, 0, 1]},
    {"a": "turn", "side": 0, "beds": [3, 0, 0, 0, 0, 0, 0, 0, 0], "void": "touched"},  # SH-17
    {"a": "turn", "side": 1, "beds": [0, 0, 1, 0, 0, 0, 0, 0, 0]},
])


def test_five_pins_pins_caroms_fouls_and_score_series(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-1", [FIVE])
    with stats.open_ro(db_path) as db:
        s = stats.game_stats(db, 1)
    assert s["shots"] == [2, 1]
    assert s["pins"] == [[1, 1, 0, 0, 1], [1, 0, 0, 0, 0]]  # pins 1 2 3 4 C
    assert s["caroms"] == [{}, {3: 1}]
    assert s["fouls"] == [{}, {}]  # the undone miss is not counted
    # The score after every action is what the rules give, step by step.
    game = new_game("five-pins", FP)
    expected = [[0, 0]] + [list(game.apply(a)["scores"]) for a in FIVE[1]]
    assert [r["score"] for r in s["series"]] == expected
    assert s["chart"].startswith("<svg") and "&lt;i&gt;Bob&lt;/i&gt;" in s["chart"]
    assert "<i>" not in s["chart"] and s["pin_chart"].count("<rect") == 10


def test_shove_heatmap_counts_the_coins_of_valid_turns(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-2", [SHOVE])
    with stats.open_ro(db_path) as db:
        s = stats.game_stats(db, 1)
    assert s["beds"] == [[1, 1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 3, 0, 0, 0, 0, 0, 1]]
    assert s["heatmap"].count("<rect") == 18
    assert [r["score"] for r in s["series"]][-1] == [2, 4]


def test_players_wins_averages_and_head_to_head(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    fp_head, fp_actions = sample("five-pins.jsonl")
    sh_head, sh_actions = sample("shove-hapenny.jsonl")
    store(db_path, "sim-3", [(fp_head, fp_actions), (fp_head, fp_actions)])
    store(db_path, "sim-4", [(sh_head, sh_actions)])
    winners = []
    for head, actions in ((fp_head, fp_actions), (sh_head, sh_actions)):
        g = new_game(head["game"], head["config"])
        for a in actions:
            g.apply(a)
        winners.append(head["players"][g.state()["winner"]])
    with stats.open_ro(db_path) as db:
        report = stats.players(db)
    rows = {p["name"]: p for p in report["players"]}
    fp_winner = winners[0]
    fp_loser = [n for n in fp_head["players"] if n != fp_winner][0]
    assert rows[fp_winner]["wins"] == 2 and rows[fp_winner]["losses"] == 0
    assert rows[fp_loser]["wins"] == 0 and rows[fp_loser]["losses"] == 2
    assert rows[fp_winner]["win_pct"] == 100.0
    assert rows[winners[1]]["wins"] == 1 and rows[winners[1]]["games"] == 1
    h = [x for x in report["head_to_head"] if {x["a"], x["b"]} == set(fp_head["players"])][0]
    assert (h["a_wins"], h["b_wins"]) == ((2, 0) if h["a"] == fp_winner else (0, 2))

    r = chalk("stats", "--db", db_path)
    assert r.returncode == 0, r.stderr
    assert fp_winner in r.stdout and "head to head" in r.stdout
    out = tmp_path / "players.csv"
    r = chalk("stats", "--db", db_path, "--csv", out)
    assert r.returncode == 0, r.stderr
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert {row["name"]: int(row["wins"]) for row in table}[fp_winner] == 2
    r = chalk("stats", "1", "--db", db_path, "--csv", "-")
    series = list(csv.reader(io.StringIO(r.stdout)))
    assert series[0] == ["seq", "t_ms", "action", "score_1", "score_2"]
    assert len(series) == 2 + len(fp_actions)


def test_stats_never_write_and_say_what_is_wrong(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-5", [FIVE])
    before = db_path.read_bytes()
    with stats.open_ro(db_path) as db:
        with pytest.raises(Exception, match="readonly|read-only"):
            db.db.execute("DELETE FROM actions")
    assert db_path.read_bytes() == before
    r = chalk("stats", "--db", tmp_path / "none.sqlite3")
    assert r.returncode == 1 and "no archive at" in r.stderr and "Traceback" not in r.stderr
    r = chalk("stats", "9", "--db", db_path)
    assert r.returncode == 1 and "no game 9" in r.stderr
    assert not (tmp_path / "none.sqlite3").exists()


def test_stats_pages_draw_the_plots_with_names_as_text(tmp_path):
    from chalk import serve, web
    from tests.test_serve import LAN, _call

    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-6", [FIVE, SHOVE])
    app = web.create_app(serve.Venue(str(db_path), say=lambda text: None), db_path=db_path)
    status, html = _call(app, "GET", "/stats", LAN)
    assert status == 200
    assert b"&lt;i&gt;Bob&lt;/i&gt;" in html and b"<i>Bob" not in html
    status, html = _call(app, "GET", "/stats/game/1", LAN)
    assert status == 200 and html.count(b"<svg") == 2  # score chart, pins
    status, html = _call(app, "GET", "/stats/game/2", LAN)
    assert status == 200 and html.count(b"<svg") == 2 and b"Coins in each bed" in html
    assert _call(app, "GET", "/stats/game/99", LAN)[0] == 404
    assert db_path.stat().st_size and not list(tmp_path.glob("*.sqlite3-journal"))


def test_partnership_games_count_for_the_pair(tmp_path):
    """texas-42: sides are players 1 & 3 and 2 & 4 (T42 partnerships): the pair wins."""
    db_path = tmp_path / "a.sqlite3"
    head, actions = sample("texas-42.jsonl")
    store(db_path, "sim-7", [(head, actions)])
    g = new_game(head["game"], head["config"])
    for a in actions:
        g.apply(a)
    winner = g.state()["winner"]
    pairs = ["%s & %s" % (head["players"][0], head["players"][2]),
             "%s & %s" % (head["players"][1], head["players"][3])]
    with stats.open_ro(db_path) as db:
        report = stats.players(db)
        (game,) = stats.game_list(db)
        s = stats.game_stats(db, 1)
    assert {p["name"]: p["wins"] for p in report["players"]} == {
        pairs[winner]: 1, pairs[1 - winner]: 0}
    assert game["names"] == pairs and game["result"] == "won by " + pairs[winner]
    assert s["names"] == pairs and s["series"][-1]["score"] == g.state()["scores"]


def test_a_games_beds_and_pins_as_csv(tmp_path):
    db_path = tmp_path / "a.sqlite3"
    store(db_path, "sim-8", [FIVE, SHOVE])
    r = chalk("stats", "1", "--db", db_path, "--csv", "-", "--of", "pins")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["name"], x["shots"], x["pin_1"], x["pin_C"], x["carom_3"], x["foul_miss"])
            for x in rows] == [("Ann", "2", "1", "1", "0", "0"), ("<i>Bob</i>", "1", "1", "0",
                                                                   "1", "0")]
    r = chalk("stats", "2", "--db", db_path, "--csv", "-", "--of", "beds")
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[1] == ["A", "Cy", "1", "1", "0", "0", "0", "0", "0", "0", "0"]
    assert rows[2] == ["B", "Di", "0", "0", "3", "0", "0", "0", "0", "0", "1"]
    r = chalk("stats", "1", "--db", db_path, "--csv", "-", "--of", "beds")
    assert r.returncode == 1 and "has no beds" in r.stderr
