"""Seven pins and Novuss through the archive: the docs/match-log.md examples archived as a board
sends them, then exported (match log, CSV, scoresheet) and verified; replay refuses a broken log
naming the line and the rule. Figures are the ones worked out by hand in the docs."""

import csv
import io
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chalk.chainhost import SoftKey
from chalk.keys import KeyStore
from chalk.store import Archive, board_records, sign_records

DOC = (Path(__file__).resolve().parent.parent / "docs" / "match-log.md").read_text()


def doc_log(game):
    for block in re.findall(r"```json\n(.*?)```", DOC, re.S):
        if block.startswith('{"chalk":1,"game":"%s"' % game):
            lines = block.strip().splitlines()
            return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    raise AssertionError("no %s example in docs/match-log.md" % game)


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        seq = 1
        for i, game in enumerate(("seven-pins", "novuss")):
            head, actions = doc_log(game)
            device = "esp32-00%d" % i
            b = a.board({"device": device, "board": game, "game": game})
            recs, states = board_records(dict(head, game_no=1, device=device),
                                         [(0, x["t"], x) for x in actions], seq=seq)
            # Signed as the board would, with a key in the (throw-away) key store.
            key = SoftKey("%064x" % (0x70 + i))  # the board's own key pair
            signed = sign_records(recs, key, device)
            a.ingest(b, recs, states, resync=True)
            a.set_head(b, signed)
            keys = KeyStore()
            if keys.board_key(device) is None:
                keys.add_board(device, key.pub, 1, "enrolled over USB (test)")
                keys.save()
    return path


def ids(path):
    with Archive(path) as a:
        return {g["game"]: g["id"] for g in a.games()}


def test_jsonl_export_replays_to_the_documented_states(db, tmp_path):
    want = {"seven-pins": {"totals": [0, 95], "next": None, "winner": 0},
            "novuss": {"left": [0, 1], "debt": [0, 0], "next": None, "winner": 0}}
    for game, gid in ids(db).items():
        r = chalk("export", gid, "--db", db)
        assert r.returncode == 0, r.stderr
        p = tmp_path / (game + ".jsonl")
        p.write_text(r.stdout)
        r = chalk("replay", p)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == want[game]


def test_csv_seven_pins_running_totals(db):
    r = chalk("export", ids(db)["seven-pins"], "-f", "csv", "--db", db)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["total_1"], x["total_2"]) for x in rows] == [
        ("100", "100"), ("70", "100"), ("20", "100"), ("25", "100"), ("25", "65"), ("25", "95"),
        ("25", "95"), ("25", "95"), ("15", "95"), ("25", "95"), ("0", "95")]
    bob = rows[5]  # Bob's cue ball knocked M3: its 30 go on his total (SP-8)
    assert (bob["name"], bob["pins"], bob["fouls"], bob["change_2"], bob["next"]) == (
        "Bob", "M3", "cue_pins", "30", "Ann")
    assert rows[4]["pins"] == "K S2" and rows[4]["pocketed"] == "1"
    assert rows[-1]["carom"] == "1" and rows[-1]["next"] == ""


def test_csv_novuss_pucks_and_debt(db):
    r = chalk("export", ids(db)["novuss"], "-f", "csv", "--db", db)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["left_a"], x["left_b"], x["debt_a"], x["debt_b"]) for x in rows] == [
        ("3", "3", "0", "0"), ("3", "2", "0", "0"), ("3", "3", "0", "0"), ("3", "3", "1", "0"),
        ("3", "1", "0", "0"), ("2", "1", "0", "0"), ("2", "1", "0", "0"), ("0", "1", "0", "0")]
    assert rows[0]["side"] == "B" and rows[0]["name"] == "Bob"
    assert rows[5]["fouls"] == "own_off" and rows[5]["next"] == "Bob"


def test_text_sheets(db):
    r = chalk("export", ids(db)["seven-pins"], "-f", "text", "--db", db)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "seven pins  Ann v Bob  from 100 down to 0"
    assert out[-1] == "winner: Ann, down to 0 with Bob on 95"
    assert any("Bob: M3 — foul: the cue ball knocked a pin, 30 added" in x and "+30 Bob" in x
               for x in out)
    r = chalk("export", ids(db)["novuss"], "-f", "text", "--db", db)
    out = r.stdout.splitlines()
    assert out[0] == "novuss  Ann v Bob  3 pucks a side"
    assert out[-1] == "winner: Ann, all pucks in; Bob had 1 left"


def test_verify_passes_then_catches_an_edit(db):
    r = chalk("verify", "--db", db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("FINISHED: signed at its end") == 2, r.stdout
    con = sqlite3.connect(str(db))
    with con:
        # Bob's M3 on seven-pins: an edit to K (50, not 30) keeps it legal, so only the states
        # the board reported catch it.
        ((rowid, line),) = con.execute(
            "SELECT rowid, line FROM actions WHERE line LIKE '%cue_pins%'").fetchall()
        rec = json.loads(line)
        assert rec["pins"] == ["M3"]
        rec["pins"] = ["K"]
        n = con.execute("UPDATE actions SET line = ? WHERE rowid = ?",
                        (json.dumps(rec, separators=(",", ":")), rowid)).rowcount
    con.close()
    assert n == 1
    r = chalk("verify", "--db", db)
    assert r.returncode != 0 and "seven-pins" in r.stdout + r.stderr


@pytest.mark.parametrize("game, bad, rule", [
    ("seven-pins", {"a": "shot", "player": 1, "pins": ["K"]}, "SP-9"),
    ("seven-pins", {"a": "shot", "player": 0, "pins": ["K", "K"]}, "SP-2"),
    ("seven-pins", {"a": "shot", "player": 0, "fouls": ["push"]}, "SP-4"),
    ("novuss", {"a": "shot", "side": 0, "own": 1}, "NV-6"),
    ("novuss", {"a": "shot", "side": 1, "own": 9}, "NV-1"),
    ("novuss", {"a": "shot", "side": 1, "fouls": ["opp_first", "opp_first"]}, "NV-7"),
])
def test_replay_refuses_a_broken_log_naming_line_and_rule(tmp_path, game, bad, rule):
    head, actions = doc_log(game)
    lines = [json.dumps(head)] + [json.dumps(a) for a in actions[:1]]
    lines.append(json.dumps(dict(bad, seq=2, t=1000)))
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    r = chalk("replay", p)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "line 3: %s: " % rule in r.stderr


@pytest.mark.parametrize("game, config", [
    ("seven-pins", {"start": 0}), ("seven-pins", {"start": 302}), ("novuss", {"pucks": 9}),
    ("novuss", {"per_side": 3}),
])
def test_replay_refuses_a_config_out_of_range(tmp_path, game, config):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"chalk": 1, "game": game, "config": config}) + "\n")
    r = chalk("replay", p)
    assert r.returncode == 1 and "line 1" in r.stderr and "Traceback" not in r.stderr


def test_watch_renders_both_games():
    from chalk import watch

    st = {"totals": [120, 45], "next": 1, "winner": None}
    lines = watch.render({"game": "seven-pins", "game_no": 2, "state": st,
                          "players": ["Misha", "Oleg"], "last": "P1 M1"})
    assert "> Oleg      45" in lines and "  Misha    120" in lines
    # The board's own short text ("P1 M1") is said in words, with the player's name.
    assert "on move: Oleg" in lines and "last: Misha: M1" in lines
    assert watch.one_line({"game": "seven-pins", "game_no": 2, "state": st}).startswith(
        "seven-pins game 2 | to go: P1 120 - P2 45 | on move: P2")
    nv = {"left": [3, 8], "debt": [0, 1], "next": None, "winner": None}
    lines = watch.render({"game": "novuss", "game_no": 1, "state": nv, "players": []})
    assert "  A     3     0" in lines and "  B     8     1" in lines
    assert "to start: which side shoots first" in lines
    won = dict(nv, winner=0)
    assert "winner: Liga" in watch.one_line({"game": "novuss", "game_no": 1, "state": won,
                                             "players": ["Liga", "Janis"]})
