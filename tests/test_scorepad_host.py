"""The scorepad games on the host: the worked examples of docs/match-log.md (texas-42,
domino-bingo, tally) archived as a board sends them, then exported as match logs, CSV and
scoresheets, verified, and replayed, with the figures worked out there."""

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chalk.chainhost import SoftKey
from chalk.keys import KeyStore
from chalk.store import Archive, board_records, sign_records

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("texas-42", "domino-bingo", "tally")


def doc_examples():
    doc = (ROOT / "docs" / "match-log.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", doc, re.S)
    out = {}
    for log, final in zip(blocks, blocks[1:]):
        if log.startswith('{"chalk":1') and "\n{" in log.strip():
            lines = log.strip().splitlines()
            out[json.loads(lines[0])["game"]] = (lines, json.loads(final))
    return out


EXAMPLES = doc_examples()


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("scorepad") / "a.db"
    with Archive(path, create=True) as a:
        for no, game in enumerate(GAMES, 1):
            lines, _ = EXAMPLES[game]
            device = "esp32-5c0e9ad00%d" % no
            head = dict(json.loads(lines[0]), game_no=no, device=device)
            recs = [json.loads(x) for x in lines[1:]]
            b = a.board({"device": device, "board": "scorepad", "game": game})
            r, states = board_records(head, [(0, x["t"], {k: v for k, v in x.items()
                                                          if k not in ("seq", "t")})
                                             for x in recs])
            # Signed as the board would, with a key in the (throw-away) key store.
            key = SoftKey("%064x" % (0x5C0 + no))  # the board's own key pair
            signed = sign_records(r, key, device)
            a.ingest(b, r, states, resync=True)
            a.set_head(b, signed)
            keys = KeyStore()
            if keys.board_key(device) is None:
                keys.add_board(device, key.pub, 1, "enrolled over USB (test)")
                keys.save()
    return path


def _id(db, game):
    with Archive(db) as a:
        return next(g["id"] for g in a.games() if g["header"]["game"] == game)


@pytest.mark.parametrize("game", GAMES)
def test_export_jsonl_replays_to_the_documented_state(db, game, tmp_path):
    r = chalk("export", _id(db, game), "--db", db)
    assert r.returncode == 0, r.stderr
    p = tmp_path / "g.jsonl"
    p.write_text(r.stdout)
    r = chalk("replay", p)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == EXAMPLES[game][1]


def test_verify_passes_for_the_scorepad_games(db):
    r = chalk("verify", "--db", db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("FINISHED: signed at its end") >= 3


def _csv(db, game):
    r = chalk("export", _id(db, game), "-f", "csv", "--db", db)
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def test_csv_columns(db):
    rows = _csv(db, "texas-42")
    hands = [(r["bidders"], r["bid"], r["took"], r["made"], r["score_a"], r["score_b"])
             for r in rows]
    assert hands == [("Ann & Cy", "30", "35", "1", "35", "7"),
                     ("Bob & Di", "32", "28", "0", "81", "7"),
                     ("Bob & Di", "34", "40", "1", "83", "47"),
                     ("", "", "", "", "81", "7"),
                     ("Bob & Di", "34", "36", "1", "87", "43"),
                     ("Ann & Cy", "31", "30", "0", "87", "86"),
                     ("Ann & Cy", "42", "42", "1", "129", "86")]
    assert rows[-1]["winner"] == "Ann & Cy" and rows[1]["points_a"] == "46"
    rows = _csv(db, "domino-bingo")
    assert [(r["trump"], r["big_1"], r["big_2"]) for r in rows] == [
        ("fives", "1", "0"), ("blanks", "2", "1"), ("twos", "2", "2"), ("sixes", "3", "3"),
        ("threes", "4", "3")]
    assert rows[-1]["winner"] == "Lena" and rows[3]["winner"] == ""
    rows = _csv(db, "tally")
    assert [(r["name"], r["n"], r["count_1"], r["count_2"], r["count_3"]) for r in rows] == [
        ("Ann", "1", "1", "0", ""), ("Bob", "1", "1", "1", ""), ("Ann", "1", "2", "1", ""),
        ("", "", "1", "1", ""), ("Bob", "1", "1", "2", ""), ("Ann", "1", "2", "2", ""),
        ("Ann", "1", "3", "2", "")]
    assert rows[-1]["winner"] == "Ann"


@pytest.mark.parametrize("game, last", [
    ("texas-42", "winner: Ann & Cy, 129 to 86 after 5 hands"),
    ("domino-bingo", "winner: Lena, 4 big points to 3 after 5 hands"),
    ("tally", "winner: Ann (Ann 3, Bob 2)"),
])
def test_scoresheet(db, game, last):
    r = chalk("export", _id(db, game), "-f", "text", "--db", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == last
    assert len(lines) == 3 + len(EXAMPLES[game][0])  # title, started, columns, rows, result


def test_a_tally_draw_on_the_sheet(tmp_path):
    p = tmp_path / "caps.jsonl"
    p.write_text('{"chalk":1,"game":"tally","config":{"players":3,"kind":"caps"},'
                 '"players":["Ann","Bob","Cy"]}\n'
                 '{"seq":1,"t":0,"a":"add","player":0,"n":4}\n'
                 '{"seq":2,"t":1,"a":"add","player":2,"n":4}\n'
                 '{"seq":3,"t":2,"a":"finish"}\n')
    r = chalk("replay", "--sheet", p)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "draw: Ann 4, Bob 0, Cy 4"
    assert json.loads(chalk("replay", p).stdout) == {"counts": [4, 0, 4], "winner": "draw"}


@pytest.mark.parametrize("line, rule", [
    ('{"seq":9,"t":9,"a":"hand","bidder":0,"bid":30,"took":43}', "T42-3"),
    ('{"seq":9,"t":9,"a":"hand","bidder":2,"bid":30,"took":30}', "T42-1"),
    ('{"seq":9,"t":9,"a":"hand","bidder":0,"bid":29,"took":30}', "T42-2"),
])
def test_replay_refuses_an_illegal_hand_naming_line_and_rule(tmp_path, line, rule):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"chalk":1,"game":"texas-42","config":{}}\n'
                 '{"seq":1,"t":0,"a":"hand","bidder":0,"bid":30,"took":30}\n' + line + "\n")
    r = chalk("replay", p)
    assert r.returncode == 1
    assert r.stderr.startswith("chalk: %s line 3: %s: " % (p, rule)), r.stderr


def test_watch_shows_each_scorepad_game():
    from chalk import watch

    t42 = {"game": "texas-42", "game_no": 3, "players": ["Ann", "Bob", "Cy", "Di"],
           "state": {"scores": [129, 86], "hands": 5, "winner": None}}
    assert watch.render(t42) == ["texas-42, game 3, hand 6", "", "            score",
                                 "  Ann & Cy    129", "  Bob & Di     86", "",
                                 "next: the next hand"]
    assert watch.one_line(t42) == ("texas-42 game 3 | Ann & Cy 129, Bob & Di 86 | "
                                   "next: the next hand")
    db = {"game": "domino-bingo", "game_no": 4, "players": ["Lena", "Oleg"],
          "state": {"big": [4, 3], "hands": 5, "winner": 0}}
    assert watch.render(db)[-1] == "winner: Lena"
    tl = {"game": "tally", "game_no": 5, "players": ["Ann", "Bob", "Cy"],
          "state": {"counts": [4, 0, 4], "winner": "draw"}}
    assert watch.one_line(tl) == "tally game 5 | Ann 4, Bob 0, Cy 4 | a draw"
