"""chalk verify: the archive replayed through the rules on CPython against the states the board
reported. A clean archive passes; an edited action or state is caught, naming game and seq.

test_live_verify_a_board_archive is the slow one (a few seconds of a simulated board).
"""

import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from chalk import verify
from chalk.chainhost import SoftKey
from chalk.keys import KeyStore
from chalk.store import Archive, board_records, sign_records
from tests.mpy import micropython_path

live = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

HEAD = {"chalk": 1, "game": "five-pins", "config": {"target": 20, "sets": 1,
                                                     "pin_foul_penalty": 0},
        "players": ["Ann", "Bob"], "game_no": 1, "device": "esp32-0011223344"}
KEY = SoftKey("%064x" % 0x40C0FFEE)  # the board's key pair, as a board holds it
ACTIONS = [
    {"a": "break", "player": 0},
    {"a": "shot", "player": 0, "pins": "12", "carom": 0, "fouls": []},
    {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": ["miss"]},
    {"a": "shot", "player": 0, "pins": "C", "carom": 4, "fouls": []},
    {"a": "shot", "player": 1, "pins": "34C", "carom": 0, "fouls": []},
    {"a": "undo"},
    {"a": "shot", "player": 1, "pins": "3", "carom": 3, "fouls": []},
    {"a": "shot", "player": 0, "pins": "", "carom": 0, "fouls": []},
]


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        b = a.board({"device": "esp32-0011223344", "board": "five-pins", "game": "five-pins"})
        recs, states = board_records(HEAD, [(0, 1000 * i, x) for i, x in enumerate(ACTIONS)])
        signed = sign_records(recs, KEY, HEAD["device"])
        a.ingest(b, recs, states, resync=True)
        a.set_head(b, signed)
    keys = KeyStore()  # $CHALK_KEYS: a throw-away store for the tests (conftest)
    if keys.board_key(HEAD["device"]) is None:
        keys.add_board(HEAD["device"], KEY.pub, 1, "enrolled over USB (test)")
        keys.save()
    return path


def edit(path, sql, *args):
    db = sqlite3.connect(str(path))
    with db:
        assert db.execute(sql, args).rowcount == 1
    db.close()


def test_clean_archive_passes(db):
    # The game is under way (no winner yet): signed up to its last record, not finished.
    r = chalk("verify", "--db", db)
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stderr
    assert r.stdout.splitlines()[0] == (
        "game 1 (five-pins #1 on esp32-0011223344): 8 actions, 9 reported states compared: "
        "IN PROGRESS: signed up to seq 9 by board key %s, not finished" % KEY.kid)
    assert "in progress (not signed at its end)" in r.stderr
    with Archive(db) as a:
        (res,) = verify.verify(a, None, KeyStore())
        assert res.compared == 9 and res.differences == [] and res.problems == []


def test_tampered_action_is_caught(db):
    # Seq 5 (the centre pin and carom 4, 8 + 4) edited to a carom 3: still legal, one point
    # less, so every later state differs from what the board reported.
    edit(db, "UPDATE actions SET line = replace(line, '\"carom\":4', '\"carom\":3') "
             "WHERE seq = 5")
    r = chalk("verify", "1", "--db", db)
    assert r.returncode == 1
    out = r.stdout.splitlines()
    # The chain names the record (its link no longer holds, and so the signed head is not
    # reached); the replay shows every state after it differs from what the board reported.
    assert out[0].endswith(": BROKEN")
    assert out[1].startswith("  game 1 seq 5: link: the chain link does not hold")
    assert out[2].startswith("  game 1 seq 9: link: the chain recomputed from the records")
    assert out[-1].startswith("note: the archive's own times")
    states = out[3:-1]
    assert states[0].startswith('  game 1 seq 5: expected {"ball_in_hand":false,"breaker":0,'
                                '"next":1,"scores":[17,0]')
    assert '"scores":[18,0]' in states[0].split("reported")[1]
    assert [line.split(":")[0] for line in states] == [
        "  game 1 seq 5", "  game 1 seq 6", "  game 1 seq 7", "  game 1 seq 8", "  game 1 seq 9"]
    err = r.stderr.splitlines()
    assert err[0] == "chalk: 1 game of 1 broken"
    assert err[1].startswith("chalk: hint: ")


def test_tampered_state_is_caught(db):
    edit(db, "UPDATE states SET state = replace(state, '\"scores\":[6,0]', '\"scores\":[6,1]') "
             "WHERE seq = 4")
    r = chalk("verify", "--all", "--db", db)
    assert r.returncode == 1
    diffs = [line for line in r.stdout.splitlines() if line.startswith("  ")]
    assert len(diffs) == 2 and diffs[1].startswith("  game 1 seq 4: expected")
    assert '"scores":[6,0]' in diffs[1] and '"scores":[6,1]' in diffs[1]
    assert diffs[0] == ("  game 1 seq 4: state: the state stored for seq 4 was changed since "
                        "the board reported it")


def test_action_the_rules_refuse_is_caught(db):
    edit(db, "UPDATE actions SET line = replace(line, '\"player\":1', '\"player\":0') "
             "WHERE seq = 4")
    with Archive(db) as a:
        (res,) = verify.verify(a, None, KeyStore())
    assert len(res.differences) == 1
    assert [p.seq for p in res.problems if p.kind == "replay"] == [4]
    d = res.differences[0]
    assert d.seq == 4 and d.expected.startswith("refused: FP-6")
    assert d.reported["scores"] == [6, 0]  # what the board had after it


def test_deleted_states_are_caught(db):
    db_ = sqlite3.connect(str(db))
    with db_:
        db_.execute("DELETE FROM states WHERE seq BETWEEN 2 AND 7")
    db_.close()
    with Archive(db) as a:
        (res,) = verify.verify(a, None, KeyStore())
    assert res.compared == 3 and res.differences == []  # what is left agrees with the rules
    assert [(p.kind, p.seq) for p in res.problems] == [("state", s) for s in range(2, 8)]


def test_verify_errors(db, tmp_path):
    r = chalk("verify", "7", "--db", db)
    assert r.returncode != 0 and "no game 7" in r.stderr
    r = chalk("verify", "1", "--all", "--db", db)
    assert r.returncode != 0
    empty = tmp_path / "empty.db"
    Archive(empty, create=True).close()
    r = chalk("verify", "--db", empty)
    assert r.returncode == 0 and "no games" in r.stdout


def signed_up_to(db, seq):
    if not db.exists():
        return False
    con = sqlite3.connect(str(db))
    try:
        row = con.execute("SELECT MAX(seq) FROM heads").fetchone()
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return row is not None and row[0] == seq


@live
def test_live_verify_a_board_archive(tmp_path):
    """A simulated board archived live by `chalk archive`, then verified; then tampered."""
    from chalk.sim import Sim
    from chalk.traces import Trace
    from tests.test_archive import PRESS_MS, archive_last_seq, board_config  # one set to 20

    tr = Trace(seed=9)
    tr.wait(500)
    for i in range(12):
        if i % 3 == 1:
            tr.press("carom3", hold=PRESS_MS, after=80)
        tr.press("confirm", hold=PRESS_MS, after=80)
    tr.wait(300)
    trace = tmp_path / "trace.jsonl"
    tr.write(trace)
    db = tmp_path / "a.db"
    sim = Sim(board_config(tmp_path), flash=tmp_path / "flash", keys="")
    port = sim.start()
    try:
        p = subprocess.Popen([sys.executable, "-m", "chalk.cli", "archive", "--port", port,
                              "--db", db, "--quiet"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # Play starts once the archive follows the board (it holds the game's header), so every
        # state is reported live, however slowly a busy machine starts `chalk archive`: the
        # board is switched off and on, and plays the trace from its boot.
        deadline = time.monotonic() + 120
        while archive_last_seq(db) < 1 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        sim.next_trace = trace
        sim.power_cut()
        # Stopped once the archive holds the trace's last record (seq 13), however slowly a busy
        # machine plays it; 120 s is an upper bound only.
        deadline = time.monotonic() + 120
        while archive_last_seq(db) < 13 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        # ... and its head signed at that last record (asked for at a quiet moment).
        while not signed_up_to(db, 13) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert out.startswith("archived 13 new records (12 actions)"), out
    finally:
        sim.stop()
    r = chalk("verify", "--db", db)
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
    assert "12 actions, 13 reported states compared: IN PROGRESS: signed up to seq 13" in r.stdout
    edit(db, "UPDATE actions SET line = replace(line, '\"carom\":3', '\"carom\":4') "
             "WHERE seq = 3")
    r = chalk("verify", "--db", db)
    assert r.returncode == 1
    assert "  game 1 seq 3: expected" in r.stdout
