"""chalk export: archived games back out as match logs (that chalk replay reads), CSV rows and
scoresheets. The games are the worked examples of docs/match-log.md, archived as a board sends
them; the expected figures are the ones worked out by hand there.
"""

import csv
import io
import json
import subprocess
import sys

import pytest

from chalk.errors import ChalkError
from chalk.export import export, filename
from chalk.store import Archive, board_records

DEVICE = {"device": "esp32-a1b2c3d4e5f6", "board": "red-lion-1", "game": "five-pins",
          "firmware": "0.1.0", "last_seq": 0}

FIVE_PINS_HEAD = {"chalk": 1, "game": "five-pins",
                  "config": {"target": 20, "sets": 1, "pin_foul_penalty": 0},
                  "players": ["Ann", "Bob"], "started": "2026-11-28T21:00:00Z"}
# docs/match-log.md, five-pins: running scores 4-0, 6-0, 18-0, 18-8, 18-10, 18-15, 18-15, 20-15.
FIVE_PINS_LINES = [
    '{"seq":1,"t":0,"a":"break","player":0}',
    '{"seq":2,"t":15000,"a":"shot","player":0,"pins":"12","carom":0,"fouls":[]}',
    '{"seq":3,"t":33000,"a":"shot","player":1,"pins":"","carom":0,"fouls":["miss"]}',
    '{"seq":4,"t":51000,"a":"shot","player":0,"pins":"C","carom":4,"fouls":[]}',
    '{"seq":5,"t":70000,"a":"shot","player":1,"pins":"34C","carom":0,"fouls":[]}',
    '{"seq":6,"t":88000,"a":"shot","player":0,"pins":"2","carom":0,"fouls":["pin"]}',
    '{"seq":7,"t":104000,"a":"shot","player":1,"pins":"1","carom":3,"fouls":[]}',
    '{"seq":8,"t":121000,"a":"shot","player":0,"pins":"","carom":0,"fouls":[]}',
    '{"seq":9,"t":140000,"a":"shot","player":1,"pins":"","carom":0,"fouls":["red_first"]}',
]
FIVE_PINS_FINAL = {"scores": [20, 15], "sets": [1, 0], "set": 1, "next": None, "breaker": 0,
                   "ball_in_hand": False, "winner": 0}

SHOVE_HEAD = {"chalk": 1, "game": "shove-hapenny",
              "config": {"sides": 2, "per_side": 1, "overflow": "auto"},
              "players": ["Ann", "Bob"], "started": "2026-11-28T20:00:00Z",
              "table": "Red Lion, board 1"}


def _beds(*coins):
    row = [0] * 9
    for i, n in enumerate(coins):
        row[i] = n
    return row


# docs/match-log.md, the complete shove ha'penny game.
SHOVE_ACTIONS = [
    {"a": "start", "side": 0},
    {"a": "turn", "side": 0, "beds": _beds(3, 2)},
    {"a": "turn", "side": 1, "beds": _beds(0, 0, 0, 0, 0, 0, 0, 0, 3)},
    {"a": "turn", "side": 0, "beds": _beds(0, 1, 3, 1)},
    {"a": "turn", "side": 1, "beds": _beds()},
    {"a": "turn", "side": 0, "beds": _beds(0, 0, 0, 2, 3)},
    {"a": "turn", "side": 1, "beds": _beds(), "void": "touched"},
    {"a": "turn", "side": 0, "beds": _beds(0, 0, 0, 0, 0, 3, 2)},
    {"a": "turn", "side": 1, "beds": _beds(1)},
    {"a": "turn", "side": 0, "beds": _beds(0, 0, 0, 0, 0, 0, 1, 3, 1)},
    {"a": "turn", "side": 1, "beds": _beds()},
    {"a": "turn", "side": 0, "beds": _beds(0, 0, 0, 0, 0, 0, 0, 0, 1)},
    {"a": "turn", "side": 1, "beds": _beds(0, 0, 0, 0, 0, 0, 0, 0, 1)},
    {"a": "turn", "side": 0, "beds": _beds(0, 0, 0, 0, 0, 0, 0, 0, 1)},
]
SHOVE_FINAL = {"beds": [[3] * 9, [1, 0, 0, 0, 0, 0, 0, 0, 3]], "next": None, "turns": 13,
               "skip": [0, 0], "winner": 0}


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def db(tmp_path):
    """An archive holding the five-pins example (game 1, finished), the shove ha'penny example
    (game 2, on another board) and a five-pins game with an undo, in progress (game 3)."""
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        fp = [json.loads(line) for line in FIVE_PINS_LINES]
        b = a.board(DEVICE)
        recs, states = board_records(dict(FIVE_PINS_HEAD, board="red-lion-1", game_no=1),
                                     [(r["seq"], r["t"], r) for r in fp])
        more, more_states = board_records(
            dict(FIVE_PINS_HEAD, board="red-lion-1", game_no=2),
            [(0, 0, {"a": "break", "player": 1}),
             (0, 9000, {"a": "shot", "player": 1, "pins": "1C", "carom": 0, "fouls": []}),
             (0, 20000, {"a": "undo"}),
             (0, 31000, {"a": "shot", "player": 1, "pins": "", "carom": 3, "fouls": []})],
            seq=len(recs) + 1)
        a.ingest(b, recs + more, states + more_states, resync=True)
        s = a.board(dict(DEVICE, device="sim-0badc0ffee00", board="shove-hapenny",
                         game="shove-hapenny"))
        recs, states = board_records(dict(SHOVE_HEAD, board="shove-hapenny", game_no=7),
                                     [(0, 1000 * i, x) for i, x in enumerate(SHOVE_ACTIONS)],
                                     seq=41)
        a.ingest(s, recs, states, resync=True)
    return path


def _ids(path):
    with Archive(path) as a:
        return {(g["device"], g["game_no"]): g["id"] for g in a.games()}


def test_jsonl_is_the_match_log_v1(db, tmp_path):
    ids = _ids(db)
    r = chalk("export", ids[(DEVICE["device"], 1)], "--db", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = json.loads(lines[0])
    assert list(head)[:5] == ["chalk", "game", "config", "players", "started"]
    chained = head.pop("chain")
    assert head == dict(FIVE_PINS_HEAD, board="red-lion-1", device=DEVICE["device"], game_no=1)
    # The chain (docs/match-log.md): the keys the board did not journal are named, the end
    # record is there with its link.
    assert chained["seq"] == 1 and chained["added"] == ["device"]
    assert chained["end"]["seq"] == len(lines) + 1 and len(chained["link"]) == 64
    # The action lines are the documented ones, byte for byte, but for the board's seqs (its
    # header took seq 1) and each record's chain link at the end.
    want = [line.replace('{"seq":%d,' % (i + 1), '{"seq":%d,' % (i + 2), 1)
            for i, line in enumerate(FIVE_PINS_LINES)]
    assert [ln[:ln.rindex(',"link":"')] + "}" for ln in lines[1:]] == want
    assert all(len(json.loads(ln)["link"]) == 64 for ln in lines[1:])
    # ... and the log replays to the documented final state.
    path = tmp_path / "g.jsonl"
    path.write_text(r.stdout)
    r = chalk("replay", path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == FIVE_PINS_FINAL


def test_export_all_to_a_directory_reimports(db, tmp_path):
    out = tmp_path / "out"
    r = chalk("export", "--all", "-o", out, "--db", db)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["esp32-a1b2c3d4e5f6-g00001.jsonl", "esp32-a1b2c3d4e5f6-g00002.jsonl",
                     "sim-0badc0ffee00-g00007.jsonl"]
    shove = json.loads(chalk("replay", out / names[2]).stdout)
    assert shove == SHOVE_FINAL
    undone = json.loads(chalk("replay", out / names[1]).stdout)
    assert undone["scores"] == [0, 3] and undone["next"] == 0
    assert not list(out.glob("*.part"))
    for fmt, ext in (("csv", ".csv"), ("text", ".txt")):
        r = chalk("export", "--all", "-f", fmt, "-o", out, "--db", db)
        assert r.returncode == 0, r.stderr
        assert len(list(out.glob("*" + ext))) == 3


def _csv(db, game_id):
    r = chalk("export", game_id, "-f", "csv", "--db", db)
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def test_csv_five_pins_has_the_running_scores(db):
    rows = _csv(db, _ids(db)[(DEVICE["device"], 1)])
    assert len(rows) == len(FIVE_PINS_LINES)
    shots = rows[1:]
    assert [(r["score_1"], r["score_2"]) for r in shots] == [
        ("4", "0"), ("6", "0"), ("18", "0"), ("18", "8"), ("18", "10"), ("18", "15"),
        ("18", "15"), ("20", "15")]
    assert rows[0]["action"] == "break" and rows[0]["name"] == "Ann"
    miss = shots[1]  # Bob's miss: 2 to Ann, and Ann has ball in hand (FP-15, FP-26)
    assert (miss["name"], miss["fouls"], miss["points_1"], miss["points_2"],
            miss["ball_in_hand"], miss["next"]) == ("Bob", "miss", "2", "0", "1", "Ann")
    pin = shots[4]  # Ann's pin foul: the pin's 2 to Bob, no ball in hand (FP-14)
    assert (pin["pins"], pin["fouls"], pin["points_2"], pin["ball_in_hand"]) == (
        "2", "pin", "2", "0")
    last = shots[-1]  # red_first gives Ann 4, capped at the target: 2 points count
    assert (last["points_1"], last["set"], last["sets_1"], last["sets_2"], last["next"]) == (
        "2", "1", "1", "0", "")
    assert shots[2]["time"] == "0:51" and shots[2]["t_ms"] == "51000"
    assert shots[2]["carom"] == "4" and shots[2]["pins"] == "C"


def test_csv_undo_row_takes_the_points_back(db):
    rows = _csv(db, _ids(db)[(DEVICE["device"], 2)])
    assert [r["action"] for r in rows] == ["break", "shot", "undo", "shot"]
    assert rows[1]["points_2"] == "6" and rows[2]["points_2"] == "-6"
    assert rows[2]["score_2"] == "0" and rows[3]["score_2"] == "3"


def test_csv_shove_hapenny_has_coins_points_and_totals(db):
    rows = _csv(db, _ids(db)[("sim-0badc0ffee00", 7)])
    assert list(rows[0]) == ["seq", "time", "t_ms", "action", "side", "name"] + [
        "coins_%d" % b for b in range(1, 10)] + ["void", "out_of_turn", "bed", "points_a",
                                                  "points_b", "total_a", "total_b", "next",
                                                  "misses_turn"]
    assert len(rows) == len(SHOVE_ACTIONS)
    first = rows[1]
    assert [first["coins_%d" % b] for b in range(1, 10)] == ["3", "2"] + ["0"] * 7
    assert (first["points_a"], first["total_a"], first["next"]) == ("5", "5", "Bob")
    assert rows[6]["void"] == "touched" and rows[6]["points_b"] == "0"
    # Bob's coin in bed 9 (line 13) would overflow into Ann's winning score: not credited.
    assert (rows[12]["points_a"], rows[12]["points_b"]) == ("0", "0")
    assert (rows[-1]["total_a"], rows[-1]["total_b"], rows[-1]["next"]) == ("27", "4", "")


def test_text_is_the_scoresheet_of_the_exported_log(db, tmp_path):
    gid = _ids(db)[("sim-0badc0ffee00", 7)]
    text = chalk("export", gid, "-f", "text", "--db", db)
    assert text.returncode == 0, text.stderr
    log = tmp_path / "g.jsonl"
    assert chalk("export", gid, "-o", log, "--db", db).returncode == 0
    sheet = chalk("replay", "--sheet", log)
    assert text.stdout == sheet.stdout
    assert "winner: Ann (27 to 4) after 13 turns" in text.stdout


def test_show_and_games(db):
    r = chalk("games", "--db", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["id", "board", "game", "started", "actions", "result"]
    assert "won by Ann" in lines[1] and "playing set 1 0-3" in lines[2]
    assert "2026-11-28T20:00:00Z" in lines[3] and "14" in lines[3].split()
    r = chalk("show", _ids(db)[(DEVICE["device"], 1)], "--db", db)
    assert r.returncode == 0, r.stderr
    assert "players: Ann, Bob" in r.stdout and "result:  won by Ann" in r.stdout
    assert "state:   " + json.dumps(FIVE_PINS_FINAL, separators=(",", ":")) in r.stdout
    assert "winner: Ann, 1 sets to 0" in r.stdout


def test_export_errors(db, tmp_path):
    r = chalk("export", "--all", "--db", db)
    assert r.returncode != 0 and "give a directory with -o DIR" in r.stderr
    r = chalk("export", "99", "--db", db)
    assert r.returncode != 0 and r.stderr.startswith("chalk: no game 99 in the archive")
    r = chalk("export", "--db", db)
    assert r.returncode != 0 and "give a game id" in r.stderr
    r = chalk("export", "--db", tmp_path / "none.db", "1")
    assert r.returncode != 0 and "no archive at" in r.stderr
    f = tmp_path / "file.txt"
    f.write_text("keep")
    r = chalk("export", "1", "2", "-o", f, "--db", db)
    assert r.returncode != 0 and "needs a directory" in r.stderr and f.read_text() == "keep"


def test_library_export_and_file_names(db, tmp_path):
    with Archive(db, readonly=False) as a:  # it edits the archive below
        games = a.games()
        assert filename(games[0], "csv") == "esp32-a1b2c3d4e5f6-g00001.csv"
        out = []
        assert export(a, [games[0]["id"]], fmt="text", write=out.append) == []
        assert out[0].startswith("five pins  Ann v Bob")
        with pytest.raises(ChalkError, match="unknown export format"):
            export(a, [games[0]["id"]], fmt="xml", write=out.append)
        # A tampered action the rules refuse: CSV and text say so (jsonl is the raw record).
        a.db.execute("UPDATE actions SET line = replace(line, '\"player\":1', '\"player\":0') "
                     "WHERE seq = 4 AND board_id = 1")
        with pytest.raises(ChalkError, match="seq 4: the rules refuse"):
            export(a, [games[0]["id"]], fmt="csv", write=out.append)
        export(a, [games[0]["id"]], fmt="jsonl", out=tmp_path / "raw.jsonl")
        assert '"seq":4,"t":33000,"a":"shot","player":0' in (tmp_path / "raw.jsonl").read_text()
