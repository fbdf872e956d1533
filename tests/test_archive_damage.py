"""A damaged or read-only archive: every read command answers in one line, never a traceback;
export never writes a damaged game into a match log; verify reports what SQLite finds broken.

Damage is done as it happens: one cell edited by hand (or by a bad disk) with the sqlite3
module, and an index whose pages no longer match its table.
"""

import json
import os
import sqlite3
import stat
import subprocess
import sys

import pytest

from chalk.store import Archive, board_records

DEVICE = {"device": "esp32-a1b2c3d4e5f6", "board": "red-lion-1", "game": "five-pins",
          "firmware": "0.1.0", "last_seq": 0}
HEAD = {"chalk": 1, "game": "five-pins", "config": {"target": 20, "sets": 1},
        "players": ["Ann", "Bob"], "started": "2026-11-28T21:00:00Z", "game_no": 1}
ACTIONS = [{"a": "break", "player": 0},
           {"a": "shot", "player": 0, "pins": "12", "carom": 0, "fouls": []},
           {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": ["miss"]},
           {"a": "shot", "player": 0, "pins": "C", "carom": 4, "fouls": []}]
READS = [("games",), ("show", "1"), ("verify",), ("export", "1", "-f", "csv"),
         ("export", "1", "-f", "text"), ("export", "1")]


def chalk(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60, cwd=cwd)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        b = a.board(DEVICE)
        recs, states = board_records(HEAD, [(0, 1000 * i, x) for i, x in enumerate(ACTIONS)])
        a.ingest(b, recs, states, resync=True)
        recs, states = board_records(dict(HEAD, game_no=2), ACTIONS[:2], seq=len(recs) + 1)
        a.ingest(b, recs, states, resync=True)
    return path


def edit(path, sql):
    con = sqlite3.connect(str(path))
    con.execute(sql)
    con.commit()
    con.close()


def no_traceback(r):
    assert "Traceback" not in r.stderr, r.stderr
    return r


DAMAGE = {
    "action not JSON": "UPDATE actions SET line = '{\"seq\":3,\"t\":' WHERE seq = 3",
    "action deep": "UPDATE actions SET line = '%s' WHERE seq = 3" % ("[" * 100000),
    "action NaN": "UPDATE actions SET line = replace(line, '\"player\":1', '\"player\":NaN') "
                  "WHERE seq = 4",
    "action wrong type": "UPDATE actions SET line = replace(line, '\"player\":1', "
                         "'\"player\":\"one\"') WHERE seq = 4",
    "header": "UPDATE games SET header = '{\"game\":' WHERE id = 1",
    "end": "UPDATE games SET \"end\" = 'not json' WHERE id = 1",
    "state": "UPDATE states SET state = '[[[' WHERE seq = 3",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_cell_never_tracebacks(db, tmp_path, damage):
    edit(db, DAMAGE[damage])
    for cmd in READS:
        r = no_traceback(chalk(*cmd, "--db", db))
        if r.returncode:
            assert r.stderr.startswith("chalk: ") and r.returncode == 1, (cmd, r.stderr)
    r = chalk("verify", "--db", db)
    assert r.returncode == 1 and "game 1 " in r.stdout and "broken" in r.stderr, r.stdout
    # The other game is untouched: it is listed, shown and exported as before.
    assert "game 2 " in r.stdout
    r = chalk("games", "--db", db)
    assert r.returncode == 0 and "\n2 " in r.stdout, r.stdout
    assert chalk("export", "2", "--db", db).returncode == 0


@pytest.mark.parametrize("damage", ["action not JSON", "action deep", "action NaN",
                                    "action wrong type", "header"])
def test_export_refuses_to_write_a_damaged_match_log(db, tmp_path, damage):
    edit(db, DAMAGE[damage])
    out = tmp_path / "game.jsonl"
    r = no_traceback(chalk("export", "1", "-o", out, "--db", db))
    assert r.returncode == 1 and "game 1 is damaged" in r.stderr and len(r.stderr) < 600
    assert not out.exists() and not list(tmp_path.glob("*.part"))
    r = no_traceback(chalk("export", "1", "--db", db))
    assert r.returncode == 1 and r.stdout == ""
    # --all into a directory: nothing is written, not the good game either.
    r = no_traceback(chalk("export", "--all", "-o", tmp_path / "logs", "--db", db))
    assert r.returncode == 1 and not (tmp_path / "logs").exists()


def test_verify_reports_a_database_failing_integrity_check(db):
    # Point the actions index at the states index's pages: every row is still readable by a
    # table scan, but the index no longer matches its table.
    con = sqlite3.connect(str(db))
    pages = dict(con.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'index'"))
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'actions_game'",
                (pages["states_game"],))
    con.commit()
    con.close()
    r = no_traceback(chalk("verify", "--db", db))
    assert r.returncode == 1 and "integrity check" in r.stderr, (r.stdout, r.stderr)


def _read_only(paths):
    """Make files and directories read-only even for root (the immutable attribute, where the
    file system has it; mode bits otherwise). Returns the undo."""
    if os.geteuid() == 0:
        r = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
        if r.returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make a file read-only")
        return lambda: subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
    modes = {p: os.stat(p).st_mode for p in paths}
    for p in paths:
        os.chmod(p, modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return lambda: [os.chmod(p, m) for p, m in modes.items()]


def test_read_only_archive_can_be_read(db, tmp_path):
    # Checkpointed, then the file and its directory read-only: no -wal or -shm can be made.
    edit(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    for extra in ("-wal", "-shm"):
        p = tmp_path / ("a.db" + extra)
        if p.exists():
            p.unlink()
    undo = _read_only([db, tmp_path])
    try:
        with pytest.raises(PermissionError):
            (tmp_path / "probe").write_text("x")  # the directory really is read-only
        for cmd in READS:
            r = no_traceback(chalk(*cmd, "--db", db))
            # These games carry no board signature: verify reads them and says so (exit 3).
            assert r.returncode == (3 if cmd == ("verify",) else 0), (cmd, r.stderr)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db"]
    finally:
        undo()


def test_missing_db_directory_is_refused(tmp_path):
    r = no_traceback(chalk("archive", "--once", "--port", "/dev/null",
                           "--db", tmp_path / "nope" / "a.db"))
    assert r.returncode == 1 and "no directory" in r.stderr
    assert not (tmp_path / "nope").exists()


def test_archive_once_on_a_non_board_leaves_no_file(tmp_path):
    db = tmp_path / "a.db"
    r = no_traceback(chalk("archive", "--once", "--port", "/dev/null", "--db", db))
    assert r.returncode == 1 and r.stderr.startswith("chalk: ")
    assert list(tmp_path.iterdir()) == []


def test_export_options(db, tmp_path):
    r = chalk("export", "1", "-o", "-", "--db", db, cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[0])["game"] == "five-pins"
    assert not (tmp_path / "-").exists()
    r = no_traceback(chalk("export", "--all", "-o", tmp_path / "games.txt", "--db", db))
    assert r.returncode == 1 and "looks like a file name" in r.stderr
    assert not (tmp_path / "games.txt").exists()
