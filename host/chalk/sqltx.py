"""One SQLite write transaction, for the archive (chalk/store.py) and the league's archive
(chalk/leaguedb.py): everything inside is stored, or nothing is. Each file words its own errors:
the caller gives the functions that turn an sqlite3.Error at BEGIN or at COMMIT into its own
one-line error."""

import contextlib
import sqlite3


@contextlib.contextmanager
def transaction(db, begin_error, commit_error):
    """BEGIN IMMEDIATE … COMMIT on connection `db`; ROLLBACK on any exception inside, which is
    raised again as it was. An sqlite3.Error at BEGIN raises begin_error(e) (nothing was done);
    at COMMIT, commit_error(e) (after a ROLLBACK, so nothing half-written stays)."""
    try:
        # IMMEDIATE takes the write lock now, so a locked file fails before any work.
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as e:
        raise begin_error(e) from None
    try:
        yield db
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    try:
        db.execute("COMMIT")
    except sqlite3.Error as e:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise commit_error(e) from None
