"""The one SQLite write transaction (chalk/sqltx.py) that the archive and the league's archive
share: all or nothing, a lock refused before any work, a failed COMMIT rolled back, and each
file's own wording of its errors."""

import contextlib
import sqlite3

import pytest

from chalk import leaguedb, sqltx
from chalk.errors import ChalkError
from chalk.leaguedb import LeagueDB
from chalk.store import Archive, ArchiveError


def _db(path):
    db = sqlite3.connect(str(path), timeout=0.1, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    db.executescript("CREATE TABLE IF NOT EXISTS p (id INTEGER PRIMARY KEY);"
                     "CREATE TABLE IF NOT EXISTS c (p INTEGER REFERENCES p(id)"
                     " DEFERRABLE INITIALLY DEFERRED);")
    return db


class Worded(Exception):
    pass


def _begin(e):
    return Worded("begin: %s" % e)


def _commit(e):
    return Worded("commit: %s" % e)


@contextlib.contextmanager
def _locked(path):
    """Another connection holding the database's write lock meanwhile."""
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def _rows(db):
    return db.execute("SELECT count(*) FROM p").fetchone()[0] + \
        db.execute("SELECT count(*) FROM c").fetchone()[0]


def test_everything_inside_is_stored(tmp_path):
    db = _db(tmp_path / "a.db")
    with sqltx.transaction(db, _begin, _commit) as d:
        assert d is db
        db.execute("INSERT INTO p VALUES (1)")
        db.execute("INSERT INTO c VALUES (1)")
    assert _rows(db) == 2 and not db.in_transaction


def test_an_error_inside_stores_nothing_and_is_raised_as_it_was(tmp_path):
    db = _db(tmp_path / "a.db")
    with pytest.raises(KeyError, match="mid-batch"):
        with sqltx.transaction(db, _begin, _commit):
            db.execute("INSERT INTO p VALUES (1)")
            raise KeyError("mid-batch")
    assert _rows(db) == 0 and not db.in_transaction
    with pytest.raises(KeyboardInterrupt):  # not only Exception: a Ctrl-C mid-batch too
        with sqltx.transaction(db, _begin, _commit):
            db.execute("INSERT INTO p VALUES (2)")
            raise KeyboardInterrupt
    assert _rows(db) == 0 and not db.in_transaction


def test_a_locked_file_fails_at_begin_before_any_work(tmp_path):
    path = tmp_path / "a.db"
    db, other = _db(path), _db(path)
    other.execute("BEGIN IMMEDIATE")
    ran = []
    try:
        with pytest.raises(Worded, match="^begin: database is locked$") as e:
            with sqltx.transaction(db, _begin, _commit):
                ran.append(1)
        assert e.value.__suppress_context__  # the one-line error, not sqlite's chained
    finally:
        other.execute("ROLLBACK")
    assert ran == [] and not db.in_transaction


def test_a_failed_commit_is_rolled_back_and_worded(tmp_path):
    db = _db(tmp_path / "a.db")
    with pytest.raises(Worded, match="^commit: FOREIGN KEY constraint failed$"):
        with sqltx.transaction(db, _begin, _commit):
            db.execute("INSERT INTO p VALUES (1)")
            db.execute("INSERT INTO c VALUES (99)")  # deferred: refused only at COMMIT
    assert _rows(db) == 0 and not db.in_transaction
    with sqltx.transaction(db, _begin, _commit):  # and the connection is usable again
        db.execute("INSERT INTO p VALUES (1)")
    assert _rows(db) == 1


def test_the_archive_words_a_lock_its_own_way(tmp_path):
    path = tmp_path / "a.db"
    with Archive(path, create=True, wait=0.1) as a:
        with _locked(path), pytest.raises(ArchiveError) as e:
            with a.transaction():
                pass
        assert e.value.message == ("the archive %s is locked: another program is writing to "
                                   "it (another chalk archive?)" % path)


def test_the_league_archive_words_a_lock_its_own_way_and_stores_all_or_nothing(tmp_path,
                                                                                monkeypatch):
    monkeypatch.setattr(leaguedb, "LOCK_WAIT", 0.1)
    path = tmp_path / "league.db"
    with LeagueDB(path, create=True) as league:
        with _locked(path), pytest.raises(ChalkError) as e:
            with league.transaction():
                pass
        assert e.value.message == ("the league archive %s is busy or unwritable: database is "
                                   "locked" % path)
        assert "another chalk league" in e.value.hint
        # A game stored, then a verdict the schema refuses: neither stays.
        with pytest.raises(sqlite3.IntegrityError):
            with league.transaction() as db:
                db.execute("INSERT INTO games (venue, msg_id, sha256, log, received) "
                           "VALUES ('v', 'm', 'h', '{}', 'now')")
                db.execute("INSERT INTO verdicts (game_id, checked, grade, finished, reasons)"
                           " VALUES (424242, 'now', 'x', 0, '[]')")
        assert league.q("SELECT count(*) FROM games")[0][0] == 0
        assert not league.db.in_transaction
