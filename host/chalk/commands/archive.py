"""chalk archive: follow a board and keep every record it journals in the SQLite archive."""

import contextlib
import signal
from pathlib import Path

from chalk.commands import add_port, positive_seconds

ORDER = 30


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM (a service manager stopping us) ends like Ctrl-C


def run(args):
    """Follow a board (or, with --once, catch up with it and exit) into the archive."""
    from chalk.store import default_path

    path = Path(args.db) if args.db else default_path()
    fresh = not path.exists()
    try:
        return _follow(args)
    except BaseException:
        if fresh:
            _remove_if_empty(path)  # a busy port or a non-board leaves no empty archive behind
        raise


def _remove_if_empty(path):
    import sqlite3

    try:
        db = sqlite3.connect("%s?mode=ro" % path.resolve().as_uri(), uri=True)
        try:
            empty = db.execute("SELECT (SELECT COUNT(*) FROM games) + "
                               "(SELECT COUNT(*) FROM actions)").fetchone()[0] == 0
        finally:
            db.close()
    except sqlite3.Error:
        # Made by this run and unreadable (its schema never committed: a full disk, a kill):
        # nothing of the user's is in it.
        empty = path.exists()
    if empty:
        for p in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm"),
                  Path(str(path) + "-journal")):
            with contextlib.suppress(OSError):
                p.unlink()


def _follow(args):
    from chalk.follow import Follower
    from chalk.store import Archive

    say = (lambda text: None) if args.quiet else None
    with Archive(args.db, create=True) as db:
        db.check_writable()  # a locked archive fails here, before the board is touched
        follower = Follower(db, port=args.port, once=args.once, idle=args.idle,
                            **({"say": say} if say else {}))
        old = signal.signal(signal.SIGTERM, _terminate)
        try:
            follower.run()
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, old)
        c = follower.counts
        if follower.board_id is not None:
            print("archived %d new records (%d actions) from %s; the archive %s holds up to seq "
                  "%d" % (c["records"], c["actions"], follower.device, db.path,
                          db.last_seq(follower.board_id)), flush=True)
    return 0


def register(sub):
    p = sub.add_parser(
        "archive", help="follow a board and archive its games in SQLite",
        description="Follow a board: catch up from its journal with everything after the last "
        "record the archive holds, then archive each action as it happens. Survives an "
        "unplugged cable, a board reset and a restart of this command with no gap and no "
        "duplicate. Finished games are acknowledged so the board can free their flash. "
        "Ctrl-C stops it.")
    add_port(p)
    from chalk.store import add_db

    add_db(p)
    p.add_argument("--once", action="store_true",
                   help="catch up with the board's journal, acknowledge, and exit")
    p.add_argument("--idle", type=positive_seconds, default=2.0, metavar="SECONDS",
                   help="after this long without a frame, check the board is still there "
                   "(default %(default)s)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no line per game and action, only the summary and errors")
    p.set_defaults(func=run)
