"""The archive: every record a board journals, kept in SQLite by the board's journal seq.

A board numbers every journal record (game headers, actions, game ends) with one sequence that
rises across games and survives reboots (docs/journal.md). The archive keeps, per board, the
last seq it holds; everything it stores is keyed by (board, seq), so storing a record twice is
impossible and a missing one shows as a gap. Records come from two places: the board's live
`rec` frames, and the `journal` command that streams every record after a seq. `Follower` joins
them: it resyncs from the last seq held whenever it may have missed something (a lost frame, a
reboot, a cut cable, a restart of this program), so the archive ends with every record once.

Ingest is one SQLite transaction per batch: a batch is stored whole or not at all.
See docs/archive.md.
"""

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import namedtuple
from datetime import datetime, timezone
from pathlib import Path

from chalk import chainhost
from chalk.errors import ChalkError
from scoreboard import chain, matchlog

SCHEMA_VERSION = 2  # v2: links and heads (the hash chain); v1 archives are upgraded on open
ENV_DB = "CHALK_DB"
LOCK_WAIT = 3.0  # seconds a write waits for another writer before giving up

_SCHEMA = """
CREATE TABLE boards (
    id         INTEGER PRIMARY KEY,
    device     TEXT NOT NULL UNIQUE,          -- the board's unique id (hello "device")
    name       TEXT,                          -- its board config name (hello "board")
    game       TEXT,                          -- the game it plays
    firmware   TEXT,
    first_seen TEXT NOT NULL,                 -- ISO 8601, host clock, UTC
    last_seen  TEXT NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0,    -- the last journal seq held: resync from here
    acked      INTEGER NOT NULL DEFAULT 0     -- the last seq acknowledged to the board
);
CREATE TABLE games (
    id        INTEGER PRIMARY KEY,
    board_id  INTEGER NOT NULL REFERENCES boards(id),
    game_no   INTEGER,                        -- the board's game number
    seq       INTEGER NOT NULL,               -- seq of the header record
    game      TEXT NOT NULL,                  -- game id (five-pins, shove-hapenny)
    header    TEXT NOT NULL,                  -- the header as the board journaled it (JSON)
    started   TEXT,                           -- the header's "started", if the board knew it
    archived  TEXT NOT NULL,                  -- when the header was stored (host clock)
    end_seq   INTEGER,                        -- seq of the end record, once the game ended
    "end"     TEXT,                           -- the end record's payload (JSON)
    finished  TEXT,                           -- when the end record was stored (host clock)
    winner    INTEGER,                        -- the end record's winner (null: none)
    UNIQUE (board_id, seq)
);
CREATE TABLE actions (
    id       INTEGER PRIMARY KEY,
    board_id INTEGER NOT NULL REFERENCES boards(id),
    game_id  INTEGER NOT NULL REFERENCES games(id),
    seq      INTEGER NOT NULL,
    t        INTEGER NOT NULL,                -- ms since the game started
    line     TEXT NOT NULL,                   -- the match-log line, exactly (docs/match-log.md)
    UNIQUE (board_id, seq)
);
CREATE INDEX actions_game ON actions (game_id, seq);
CREATE TABLE states (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    seq      INTEGER NOT NULL,                -- the record that made this state
    game_id  INTEGER NOT NULL REFERENCES games(id),
    state    TEXT NOT NULL,                   -- as the board reported it (JSON)
    PRIMARY KEY (board_id, seq)
);
CREATE INDEX states_game ON states (game_id, seq);
%(chain)sCREATE TABLE gaps (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    after    INTEGER NOT NULL,                -- the last seq held before the gap
    next     INTEGER NOT NULL,                -- the first seq the board still had
    noted    TEXT NOT NULL,
    PRIMARY KEY (board_id, after)
);
"""
_CHAIN_SCHEMA = """
CREATE TABLE links (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    seq      INTEGER NOT NULL,                -- the record: header, action or end
    game_id  INTEGER NOT NULL REFERENCES games(id),
    link     TEXT,                            -- its chain link, hex (docs/match-log.md)
    state    TEXT,                            -- SHA-256 (hex) of the state stored for it
    PRIMARY KEY (board_id, seq)
);
CREATE INDEX links_game ON links (game_id, seq);
CREATE TABLE heads (
    game_id  INTEGER PRIMARY KEY REFERENCES games(id),
    seq      INTEGER NOT NULL,                -- the record whose link the board signed
    head     TEXT NOT NULL,                   -- that link, hex, as the board sent it
    sig      TEXT,                            -- HMAC-SHA256 under the board's key (null: none)
    kid      TEXT,                            -- the name of that key
    noted    TEXT NOT NULL
);
"""
_SCHEMA = _SCHEMA % {"chain": _CHAIN_SCHEMA}
# Beside the records, not part of them: what `chalk serve` still has to send to a league over
# MQTT (chalk/mqtt_outbox.py, docs/mqtt.md). Made on the first writable open of any archive.
_OUTBOX_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id      INTEGER PRIMARY KEY,             -- the message id, in its topic and in the ack
    kind    TEXT NOT NULL,                   -- 'game' (a finished game's log) or 'dispute'
    game_id INTEGER REFERENCES games(id),
    payload TEXT,                            -- what is sent, exactly (null once acknowledged)
    sha256  TEXT,                            -- SHA-256 (hex) of payload, as the ack names it
    queued  TEXT NOT NULL,
    sent_at REAL,                            -- when last sent (epoch seconds, host clock)
    tries   INTEGER NOT NULL DEFAULT 0,
    acked   TEXT,                            -- when every league awaited acknowledged it
    answer  TEXT,                            -- the acks: {league: {"verdict", "status"}}
    problem TEXT                             -- why it cannot be sent (a damaged game)
);
CREATE UNIQUE INDEX IF NOT EXISTS outbox_game ON outbox (game_id) WHERE kind = 'game';
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (acked, id)
"""
_TABLES = ("boards", "games", "actions", "states", "gaps", "links", "heads")


class ArchiveError(ChalkError):
    """A problem with the archive file itself (locked, not a database, unwritable...)."""


class JournalMismatch(ChalkError):
    """The board's journal is not the one archived for its device (erased or replaced)."""


Ingested = namedtuple("Ingested", "stored skipped actions games ended gap last")
Ingested.__doc__ = """What one ingest did. stored: records written; skipped: records already
held; actions: actions written; games: ids of the games touched, in order; ended: ids of the games
whose end was written; gap: (last held, first received) when a live batch did not follow on
(nothing was written: resync), else None; last: the last seq held afterwards."""


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_path():
    """$CHALK_DB, else archive.sqlite3 in the user's data directory."""
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env)
    return _data_path()


def _data_path():
    from platformdirs import user_data_dir

    return Path(user_data_dir("chalk")) / "archive.sqlite3"


def add_db(parser):
    """The --db option of the commands that use the archive."""
    parser.add_argument("--db", default=None,
                        help="the archive file (default $%s, else archive.sqlite3 in the user's "
                        "data directory)" % ENV_DB)


def _dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _canon(obj):
    # States are stored canonically (sorted keys), as the board's frames carry them.
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _state_hash(state):
    try:
        return hashlib.sha256(chain.canon(state)).hexdigest()
    except chain.CanonError:
        return hashlib.sha256(_canon(state).encode()).hexdigest()


def _str_or_none(v):
    return v if type(v) is str else None


def _link(prev, rec):
    """The chain link of a rec payload after `prev` (None if it cannot be chained)."""
    try:
        return chain.step(prev, chainhost.of_rec(rec))
    except chain.CanonError:
        return None


def action_line(rec):
    """The match-log line of a `rec` action payload: seq and t first, then the action's keys."""
    t = rec.get("t", 0)
    return matchlog.action_line(rec["seq"], t, rec)


def _kind(rec):
    return rec.get("type") or "A"


SEQ_MAX = (1 << 53) - 1  # seqs and times a board sends: integers every JSON reader keeps exact
_DEPTH_MAX = 16  # a record's values: the contract's are two or three deep


def _storable(v, depth=0):
    """Why a value from a board cannot go into the archive (SQLite text is UTF-8: a lone
    surrogate has none; a value nested past _DEPTH_MAX is nonsense), or None."""
    t = type(v)
    if t is str:
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return "a string with a lone surrogate (%s)" % ascii(v)[:40]
        return None
    if t is int or t is bool or v is None:
        return None
    if t is float:
        return None if v == v and v not in (float("inf"), float("-inf")) else "NaN"
    if depth >= _DEPTH_MAX:
        return "values nested deeper than %d" % _DEPTH_MAX
    if t is list:
        for x in v:
            bad = _storable(x, depth + 1)
            if bad:
                return bad
        return None
    if t is dict:
        for k, x in v.items():
            bad = _storable(k, depth + 1) or _storable(x, depth + 1)
            if bad:
                return bad
        return None
    return "a %s" % t.__name__


def _small(v, lo=0):
    return type(v) is int and lo <= v <= SEQ_MAX


def _check(rec):
    """Why a rec payload cannot be stored, or None."""
    seq = rec.get("seq") if type(rec) is dict else None
    if type(seq) is not int or seq < 1:
        return "no positive integer seq in %s" % _clip(rec)
    if seq > SEQ_MAX:
        return "seq %s is beyond any journal's (at most %d)" % (str(seq)[:24], SEQ_MAX)
    kind = _kind(rec)
    if kind == "H":
        h = rec.get("header")
        if type(h) is not dict or type(h.get("game")) is not str:
            return "header seq %d has no game header" % seq
        if h.get("game_no") is not None and not _small(h.get("game_no")):
            return "header seq %d has no valid game_no" % seq
    elif kind == "E":
        if type(rec.get("end")) is not dict:
            return "end seq %d has no end payload" % seq
    elif kind == "A":
        if type(rec.get("a")) is not str:
            return 'action seq %d has no action kind "a"' % seq
        t = rec.get("t", 0)
        if not _small(t):
            return "action seq %d has no valid t" % seq
    else:
        return "record seq %d has an unknown type %s" % (seq, ascii(kind)[:24])
    bad = _storable(rec)
    if bad:
        return "record seq %d holds %s" % (seq, bad)
    return None


def _clip(obj):
    try:
        return ascii(_dumps(obj))[1:81]
    except (ValueError, RecursionError):
        return "(not JSON)"


def load_cell(text):
    """A JSON cell of the archive, or None if it is damaged (not JSON, too deep, NaN)."""
    from scoreboard.safejson import loads

    try:
        return loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None


_WRITERS = {}  # the archive file's real path -> the lock its writers in this process share
_WRITERS_LOCK = threading.Lock()


def _writer(path):
    """The lock every writer of `path` in this process takes for its transaction (re-entrant:
    one thread never waits for itself)."""
    key = os.path.realpath(str(path))
    with _WRITERS_LOCK:
        lock = _WRITERS.get(key)
        if lock is None:
            lock = _WRITERS[key] = threading.RLock()
        return lock


class Archive:
    """An open archive file. `create`: make the file if missing (its directory must exist);
    otherwise a missing file is an error, and the file is opened read-only (`readonly`, by
    default `not create`), so an archive on read-only media or without write permission can be
    read. Every failure comes out as ArchiveError naming the file."""

    def __init__(self, path=None, create=False, wait=LOCK_WAIT, readonly=None):
        self.path = Path(path) if path else default_path()
        self.wait = wait
        self.db = None
        self.readonly = (not create) if readonly is None else readonly
        self._open(create)

    # -- opening -----------------------------------------------------------------------------
    def _open(self, create):
        p = self.path
        if p.is_dir():
            raise ArchiveError("%s is a directory, not an archive file" % p,
                               "give a file path with --db")
        if not p.exists():
            if not create:
                raise ArchiveError("no archive at %s" % p,
                                   "run `chalk archive` first, or give the file with --db")
            if not p.parent.is_dir() and p != _data_path():
                # A --db (or $CHALK_DB) in a directory that is not there is a typo, not a place
                # to create; only the default place in the user's data directory is made.
                raise ArchiveError("cannot create the archive %s: no directory %s"
                                   % (p, p.parent), "create the directory first, or fix the "
                                   "path given with --db")
            try:
                if p == _data_path():
                    p.parent.mkdir(parents=True, exist_ok=True)
                with open(p, "ab"):
                    pass
            except OSError as e:
                raise ArchiveError("cannot create the archive %s: %s" % (p, e.strerror or e),
                                   "choose a writable place with --db")
        try:
            # isolation_level=None: transactions are begun and ended here, explicitly.
            if self.readonly:
                self.db = self._connect_ro(p)
            else:
                self.db = sqlite3.connect(str(p), timeout=self.wait, isolation_level=None)
        except sqlite3.Error as e:
            raise ArchiveError("cannot open the archive %s: %s" % (p, e))
        try:
            self._check_schema(create)
        except BaseException:
            self.db.close()
            self.db = None
            raise

    def _connect_ro(self, p):
        # mode=ro: nothing is written, so a read-only file or directory can be read. A WAL
        # database whose -shm cannot be made (read-only directory) opens as immutable instead.
        uri = p.resolve().as_uri()
        for extra in ("?mode=ro", "?mode=ro&immutable=1"):
            db = sqlite3.connect(uri + extra, uri=True, timeout=self.wait, isolation_level=None)
            try:
                db.execute("PRAGMA user_version").fetchone()
            except sqlite3.Error as e:
                if "unable to open" in str(e) or "readonly" in str(e):
                    db.close()
                    continue
            return db  # other trouble (not a database...) is named by _check_schema
        raise sqlite3.OperationalError("unable to open the file read-only")

    def integrity(self):
        """What SQLite's integrity check finds wrong with the file ([] when it is sound)."""
        rows = self._q("PRAGMA integrity_check")
        return [r[0] for r in rows if r[0] != "ok"]

    def _check_schema(self, create):
        with self._errors():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version > SCHEMA_VERSION:
            raise ArchiveError("the archive %s was made by a newer chalk (schema v%d; this chalk "
                               "reads v%d)" % (self.path, version, SCHEMA_VERSION),
                               "upgrade chalk (pip install --upgrade chalk)")
        if version == 0:
            if tables:
                raise ArchiveError("%s is an SQLite database but not a Chalk archive (tables: "
                                   "%s)" % (self.path, ", ".join(sorted(tables))),
                                   "give another file with --db")
            if not create:
                raise ArchiveError("%s is an empty file, not a Chalk archive yet" % self.path,
                                   "run `chalk archive` to fill it")
            with self._errors():
                # WAL: readers (chalk games, show, export) never wait for the writer.
                self.db.execute("PRAGMA journal_mode = WAL")
            with self.transaction():
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute("PRAGMA user_version = %d" % SCHEMA_VERSION)
        elif version == 1 and set(_TABLES[:5]) <= tables:
            self._upgrade_v1()
        elif not set(_TABLES) <= tables:
            raise ArchiveError("the archive %s is damaged: tables missing (%s)" % (
                self.path, ", ".join(sorted(set(_TABLES) - tables))),
                "restore it from a backup or start a new one with --db")
        with self._errors():
            self.db.execute("PRAGMA foreign_keys = ON")
        if not self.readonly and "outbox" not in tables:
            with self.transaction():
                for stmt in _OUTBOX_SCHEMA.split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)

    def _upgrade_v1(self):
        """A v1 archive gets the chain tables, with the links of what it holds worked out.
        Opened read-only, the file is left as it is: the tables are made for this connection
        only (TEMP), so it still reads, and verifies as a v2 one would."""
        if self.readonly:
            with self._errors():
                for stmt in _CHAIN_SCHEMA.split(";"):
                    if stmt.strip().startswith("CREATE TABLE"):
                        self.db.execute(stmt.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
                self._fill_links(self.db)
            return
        with self.transaction() as db:
            for stmt in _CHAIN_SCHEMA.split(";"):
                if stmt.strip():
                    db.execute(stmt)
            self._fill_links(db)
            db.execute("PRAGMA user_version = %d" % SCHEMA_VERSION)

    def _fill_links(self, db):
        """The links of every record held, and the hashes of the states (a damaged cell is
        left without: verify names it)."""
        for gid, board_id, seq, header, end_seq, end in db.execute(
                "SELECT id, board_id, seq, header, end_seq, \"end\" FROM games").fetchall():
            recs = [{"seq": seq, "type": "H", "header": load_cell(header)}]
            for aseq, line in db.execute("SELECT seq, line FROM actions WHERE game_id = ? "
                                         "ORDER BY seq", (gid,)).fetchall():
                rec = load_cell(line)
                recs.append(rec if type(rec) is dict else {"seq": aseq, "a": None})
            if end_seq is not None:
                recs.append({"seq": end_seq, "type": "E", "end": load_cell(end)})
            link = chain.ZERO
            for r in recs:
                try:
                    link = _link(link, r) if link is not None else None
                except (AttributeError, KeyError, TypeError):
                    link = None  # a damaged record: no link from here on
                db.execute("INSERT OR IGNORE INTO links (board_id, seq, game_id, link) VALUES "
                           "(?, ?, ?, ?)", (board_id, r["seq"], gid,
                                            chain.hexlify(link) if link else None))
        for board_id, seq, state in db.execute(
                "SELECT board_id, seq, state FROM states").fetchall():
            st = load_cell(state)
            if type(st) is dict:
                db.execute("UPDATE links SET state = ? WHERE board_id = ? AND seq = ?",
                           (_state_hash(st), board_id, seq))

    def close(self):
        if self.db is not None:
            self.db.close()
            self.db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- errors and transactions -------------------------------------------------------------
    def _problem(self, e):
        text = str(e)
        if isinstance(e, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
            return ArchiveError(
                "the archive %s is locked: another program is writing to it (another chalk "
                "archive?)" % self.path,
                "wait for it or stop it; a second board can use its own file with --db")
        if "not a database" in text or "malformed" in text or "encrypted" in text:
            return ArchiveError("%s is not a Chalk archive (%s)" % (self.path, text),
                                "give another file with --db, or restore it from a backup")
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            return ArchiveError("cannot write the archive %s (%s)" % (self.path, text),
                                "check the permissions of the file and its directory")
        if "disk" in text and "full" in text:
            return ArchiveError("cannot write the archive %s: the disk is full" % self.path)
        return ArchiveError("archive %s: %s" % (self.path, text))

    @contextlib.contextmanager
    def _errors(self):
        try:
            yield
        except sqlite3.Error as e:
            raise self._problem(e) from None

    @contextlib.contextmanager
    def transaction(self):
        """One write transaction: everything inside is stored, or nothing is. Writers of one
        file in this process take their turn (_writer): `chalk serve`'s tables never find the
        archive locked by each other; LOCK_WAIT is only for another program's writes."""
        with _writer(self.path), self._transaction() as db:
            yield db

    @contextlib.contextmanager
    def _transaction(self):
        with self._errors():
            # IMMEDIATE takes the write lock now, so a locked archive fails before any work.
            self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise self._problem(e) from None

    def check_writable(self):
        """Fail now, with the one-line error, if another program holds the write lock."""
        with self.transaction():
            pass

    def _q(self, sql, args=()):
        with self._errors():
            return self.db.execute(sql, args).fetchall()

    # -- boards ------------------------------------------------------------------------------
    def board(self, info):
        """The board id for a hello/boot result (its `device`), noting when it was seen."""
        device = info.get("device")
        if type(device) is not str or not device:
            raise ChalkError("the board did not say its device id (hello has no \"device\")",
                             "its firmware is older than this chalk: `chalk deploy`")
        if len(device) > 64 or _storable(device) or not device.isprintable():
            raise ChalkError("the board's device id %s is not one a board has" % ascii(device)[:70],
                             "a firmware problem or another device on the port")
        info = {k: (info.get(k) if type(info.get(k)) is str and not _storable(info.get(k))
                    else None) for k in ("board", "game", "firmware")}
        now = now_iso()
        with self.transaction() as db, self._errors():
            row = db.execute("SELECT id FROM boards WHERE device = ?", (device,)).fetchone()
            if row is None:
                cur = db.execute(
                    "INSERT INTO boards (device, name, game, firmware, first_seen, last_seen) "
                    "VALUES (?, ?, ?, ?, ?, ?)", (device, info.get("board"), info.get("game"),
                                                  info.get("firmware"), now, now))
                return cur.lastrowid
            db.execute("UPDATE boards SET name = ?, game = ?, firmware = ?, last_seen = ? "
                       "WHERE id = ?", (info.get("board"), info.get("game"),
                                        info.get("firmware"), now, row[0]))
            return row[0]

    def board_info(self, board_id):
        rows = self._q("SELECT id, device, name, game, firmware, first_seen, last_seen, "
                       "last_seq, acked FROM boards WHERE id = ?", (board_id,))
        if not rows:
            return None
        keys = ("id", "device", "name", "game", "firmware", "first_seen", "last_seen",
                "last_seq", "acked")
        return dict(zip(keys, rows[0]))

    def last_seq(self, board_id):
        """The last journal seq held for a board: a resync asks for the records after it."""
        rows = self._q("SELECT last_seq FROM boards WHERE id = ?", (board_id,))
        return rows[0][0] if rows else 0

    def ack_due(self, board_id):
        """The seq to acknowledge to the board, or None when nothing new can be rotated out.

        A finished game's file goes only once a newer game exists on the board (the newest file
        carries the seqs across a reboot), so an ack is due when a game ended after the last ack
        and a later game's header is held too."""
        rows = self._q(
            "SELECT b.last_seq FROM boards b WHERE b.id = ? AND EXISTS ("
            " SELECT 1 FROM games g WHERE g.board_id = b.id AND g.end_seq > b.acked"
            " AND EXISTS (SELECT 1 FROM games n WHERE n.board_id = b.id AND n.seq > g.end_seq))",
            (board_id,))
        return rows[0][0] if rows else None

    def set_acked(self, board_id, seq):
        with self.transaction() as db, self._errors():
            db.execute("UPDATE boards SET acked = MAX(acked, ?) WHERE id = ?", (seq, board_id))

    # -- ingest ------------------------------------------------------------------------------
    def ingest(self, board_id, recs, states=(), resync=False):
        """Store a batch of `rec` payloads (and `state` payloads {"seq", "state"}) of one board,
        in one transaction. Returns Ingested.

        Records at or below the last seq held are skipped (already archived). A live batch
        (resync False) must follow on from the last seq held with no hole: otherwise nothing is
        written and `gap` says so, and the caller resyncs. A resync batch (the board's journal
        after the last seq) is stored whole; a hole in it is a seq the board no longer has
        (rotated out, or lost to damage) and is noted in the gaps table. A state is stored when
        the record that made it is held; the others are left out (see pending states in
        Follower). A malformed record raises ChalkError and writes nothing."""
        for rec in recs:
            bad = _check(rec)
            if bad:
                raise ChalkError("the board sent a malformed record: %s" % bad,
                                 "a firmware problem: please report it with this message")
        recs = sorted(recs, key=lambda r: r["seq"])
        with self.transaction() as db, self._errors():
            last = db.execute("SELECT last_seq FROM boards WHERE id = ?",
                              (board_id,)).fetchone()
            if last is None:
                raise ChalkError("no board %r in the archive" % board_id)
            last = last[0]
            new = []
            seen = set()
            for r in recs:
                if r["seq"] > last and r["seq"] not in seen:
                    seen.add(r["seq"])
                    new.append(r)
            skipped = len(recs) - len(new)
            if not resync and new:
                expect = last + 1
                for r in new:
                    if r["seq"] != expect:  # nothing written yet: the transaction stays empty
                        return Ingested(0, skipped, 0, [], [], (expect - 1, r["seq"]), last)
                    expect += 1
            now = now_iso()
            game = None  # (id, header seq, ended) of the game the next action belongs to
            if new and _kind(new[0]) != "H":
                game = self._game_before(db, board_id, new[0]["seq"])
            touched, ended, actions = [], [], 0
            prev = last
            link = None  # the chain link of the record before, in the same game
            if game is not None:
                row = db.execute("SELECT link FROM links WHERE game_id = ? AND seq < ? ORDER BY "
                                 "seq DESC LIMIT 1", (game[0], new[0]["seq"])).fetchone()
                link = chainhost.unhex(row[0]) if row else None
            for r in new:
                seq = r["seq"]
                if seq != prev + 1 and resync:
                    db.execute("INSERT OR IGNORE INTO gaps (board_id, after, next, noted) "
                               "VALUES (?, ?, ?, ?)", (board_id, prev, seq, now))
                prev = seq
                kind = _kind(r)
                if kind == "H":
                    h = r["header"]
                    cur = db.execute(
                        "INSERT INTO games (board_id, game_no, seq, game, header, started, "
                        "archived) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (board_id, h.get("game_no"), seq, h["game"], _dumps(h),
                         h.get("started"), now))
                    game = (cur.lastrowid, seq, False)
                    link = chain.ZERO
                elif game is None:
                    raise ChalkError("the board sent record seq %d before any game header" % seq,
                                     "the board's journal is damaged: see its warnings")
                elif kind == "E":
                    if game[2]:
                        raise ChalkError("the board sent a second end for its game %d (seq %d)"
                                         % (game[0], seq), "a firmware problem: please report "
                                         "it with this message")
                    end = r["end"]
                    winner = end.get("winner")
                    db.execute("UPDATE games SET end_seq = ?, \"end\" = ?, finished = ?, "
                               "winner = ? WHERE id = ?",
                               (seq, _dumps(end), now, winner if _small(winner) else None,
                                game[0]))
                    game = (game[0], game[1], True)
                    ended.append(game[0])
                    if type(end.get("head")) is str:
                        db.execute("INSERT OR REPLACE INTO heads (game_id, seq, head, sig, kid, "
                                   "noted) VALUES (?, ?, ?, ?, ?, ?)",
                                   (game[0], seq, end["head"], _str_or_none(end.get("sig")),
                                    _str_or_none(end.get("kid")), now))
                else:
                    if game[2]:
                        raise ChalkError("the board sent action seq %d after its game ended"
                                         % seq, "a firmware problem: please report it")
                    db.execute("INSERT INTO actions (board_id, game_id, seq, t, line) "
                               "VALUES (?, ?, ?, ?, ?)",
                               (board_id, game[0], seq, r.get("t", 0), action_line(r)))
                    actions += 1
                # The record's chain link, from the one before it in its game (none when that
                # one is not held: a gap, which verify reports).
                link = _link(link, r) if link is not None else None
                db.execute("INSERT INTO links (board_id, seq, game_id, link) VALUES (?, ?, ?, ?)",
                           (board_id, seq, game[0], chain.hexlify(link) if link else None))
                if game is not None and (not touched or touched[-1] != game[0]):
                    touched.append(game[0])
            if new:
                last = new[-1]["seq"]
                db.execute("UPDATE boards SET last_seq = ?, last_seen = ? WHERE id = ?",
                           (last, now, board_id))
            self._store_states(db, board_id, states, last)
        return Ingested(len(new), skipped, actions, touched, ended, None, last)

    def game_before(self, board_id, seq):
        """(id, header seq, ended) of the board's game a record at `seq` belongs to, or None."""
        with self._errors():
            return self._game_before(self.db, board_id, seq)

    def _game_before(self, db, board_id, seq):
        row = db.execute("SELECT id, seq, end_seq FROM games WHERE board_id = ? AND seq < ? "
                         "ORDER BY seq DESC LIMIT 1", (board_id, seq)).fetchone()
        if row is None:
            return None
        return (row[0], row[1], row[2] is not None and row[2] < seq)

    def _store_states(self, db, board_id, states, last):
        for st in states:
            if type(st) is not dict:
                continue
            seq = st.get("seq")
            state = st.get("state")
            if (type(seq) is not int or seq > last or seq < 1 or type(state) is not dict
                    or _storable(state)):
                continue  # (a state no record is held for, or one the archive cannot keep)
            g = db.execute("SELECT id, end_seq FROM games WHERE board_id = ? AND seq <= ? "
                           "ORDER BY seq DESC LIMIT 1", (board_id, seq)).fetchone()
            if g is None or (g[1] is not None and g[1] <= seq):
                continue  # an end record makes no state
            # The first report of a seq stands: a board reports each state once. Its hash goes
            # beside the record's link, so a state deleted or changed later shows in verify.
            cur = db.execute("INSERT OR IGNORE INTO states (board_id, seq, game_id, state) "
                             "VALUES (?, ?, ?, ?)", (board_id, seq, g[0], _canon(state)))
            if cur.rowcount:
                db.execute("UPDATE links SET state = ? WHERE board_id = ? AND seq = ?",
                           (_state_hash(state), board_id, seq))

    def add_states(self, board_id, states):
        """Store state payloads whose records are held; returns those left out (not held)."""
        if not states:
            return []
        last = self.last_seq(board_id)
        with self.transaction() as db, self._errors():
            self._store_states(db, board_id, states, last)
        return [s for s in states if type(s) is dict and _small(s.get("seq")) and s["seq"] > last]

    def set_head(self, board_id, signed):
        """Keep a signed chain head the board gave (a `sign` reply or a `sig` frame) for its
        game, if it is newer than the one kept and covers only records held: a head of the
        game in progress, or the signature of a finished game's end. Returns True if kept."""
        seq = signed.get("seq") if isinstance(signed, dict) else None
        if type(seq) is not int or type(signed.get("head")) is not str \
                or type(signed.get("sig")) is not str:
            return False
        with self.transaction() as db, self._errors():
            last = db.execute("SELECT last_seq FROM boards WHERE id = ?", (board_id,)).fetchone()
            g = db.execute("SELECT id, end_seq FROM games WHERE board_id = ? AND seq <= ? AND "
                           "game_no IS ? ORDER BY seq DESC LIMIT 1",
                           (board_id, seq, signed.get("game_no"))).fetchone()
            if last is None or seq > last[0] or g is None or (g[1] is not None and seq > g[1]):
                return False  # records not held yet, or past the game's end
            old = db.execute("SELECT seq FROM heads WHERE game_id = ?", (g[0],)).fetchone()
            if old is not None and old[0] >= seq:
                return False
            db.execute("INSERT OR REPLACE INTO heads (game_id, seq, head, sig, kid, noted) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (g[0], seq, signed["head"],
                                                     _str_or_none(signed.get("sig")),
                                                     _str_or_none(signed.get("kid")), now_iso()))
        return True

    def unsigned_ends(self, board_id):
        """(game_no, header seq) of the board's finished games whose end signature is not held
        (the board signs an end a moment after it; `chalk archive` asks for those it missed),
        oldest first."""
        return self._q("SELECT g.game_no, g.seq FROM games g LEFT JOIN heads h ON "
                       "h.game_id = g.id WHERE g.board_id = ? AND g.end_seq IS NOT NULL AND "
                       "g.game_no IS NOT NULL AND (h.seq IS NULL OR h.seq < g.end_seq) "
                       "ORDER BY g.seq", (board_id,))

    def head(self, game_id):
        """The latest signed head kept for a game: {"seq", "head", "sig", "kid"}, or None."""
        rows = self._q("SELECT seq, head, sig, kid FROM heads WHERE game_id = ?", (game_id,))
        return dict(zip(("seq", "head", "sig", "kid"), rows[0])) if rows else None

    def links(self, game_id):
        """The chain links kept for a game's records: {seq: (link hex, state hash)}."""
        return {seq: (link, state) for seq, link, state in self._q(
            "SELECT seq, link, state FROM links WHERE game_id = ? ORDER BY seq", (game_id,))}

    def has_state(self, board_id, seq):
        return bool(self._q("SELECT 1 FROM states WHERE board_id = ? AND seq = ?",
                            (board_id, seq)))

    # -- reading -----------------------------------------------------------------------------
    _GAME_COLS = ("id", "board_id", "game_no", "seq", "game", "header", "started", "archived",
                  "end_seq", "end", "finished", "winner", "device", "board", "actions",
                  "last_seq")

    def _games(self, where="", args=()):
        rows = self._q(
            "SELECT g.id, g.board_id, g.game_no, g.seq, g.game, g.header, g.started, g.archived,"
            " g.end_seq, g.\"end\", g.finished, g.winner, b.device, b.name,"
            " (SELECT COUNT(*) FROM actions a WHERE a.game_id = g.id),"
            " (SELECT MAX(seq) FROM actions a WHERE a.game_id = g.id)"
            " FROM games g JOIN boards b ON b.id = g.board_id " + where +
            " ORDER BY g.id", args)
        out = []
        for r in rows:
            d = dict(zip(self._GAME_COLS, r))
            # A damaged cell (edited by hand, a bad disk) is noted, never a traceback: the game
            # is still listed, and verify and export say what is wrong with it.
            d["damaged"] = []
            head = load_cell(d["header"])
            if type(head) is not dict:
                d["damaged"].append("header")
                head = {"game": d["game"]}
            d["header"] = head
            end = load_cell(d["end"]) if d["end"] else None
            if d["end"] and type(end) is not dict:
                d["damaged"].append("end")
                end = {}
            d["end"] = end
            out.append(d)
        return out

    def games(self):
        """Every game, oldest first: dicts with the games columns plus device, board, actions."""
        return self._games()

    def game(self, game_id):
        """One game (as in games()); ChalkError naming the id if there is none."""
        try:
            gid = int(game_id)
        except (TypeError, ValueError):
            raise ChalkError("%r is not a game id (a number from `chalk games`)" % (game_id,))
        rows = self._games("WHERE g.id = ?", (gid,))
        if not rows:
            raise ChalkError("no game %d in the archive %s" % (gid, self.path),
                             "`chalk games` lists the games archived")
        return rows[0]

    def actions(self, game_id):
        """The game's actions: [(seq, t, line)] by seq."""
        return self._q("SELECT seq, t, line FROM actions WHERE game_id = ? ORDER BY seq",
                       (game_id,))

    def states(self, game_id):
        """The states the board reported for the game: {seq: state dict}."""
        out = {}
        for seq, s in self._q("SELECT seq, state FROM states WHERE game_id = ? ORDER BY seq",
                              (game_id,)):
            state = load_cell(s)
            # A damaged state is text, so it never equals the replay's state: verify shows it.
            out[seq] = state if type(state) is dict else "damaged: %r" % (str(s)[:60],)
        return out

    def gaps(self, board_id):
        return self._q("SELECT after, next FROM gaps WHERE board_id = ? ORDER BY after",
                       (board_id,))

    def counts(self):
        """Rows per table, for summaries and tests."""
        return {t: self._q("SELECT COUNT(*) FROM %s" % t)[0][0] for t in _TABLES}


# -- the match log of an archived game -----------------------------------------------------------

_HEAD_FIRST = ("chalk", "game", "config", "players", "started")


def match_header(game):
    """The match-log header of an archived game (a games() row): chalk, game, config, players,
    started, then the board's extras (board, device, game_no, firmware...)."""
    h = game["header"]
    out = {"chalk": matchlog.VERSION, "game": h.get("game", game["game"]),
           "config": h.get("config") or {}, "players": h.get("players") or []}
    if h.get("started"):
        out["started"] = h["started"]
    extras = dict(h)
    extras.setdefault("board", game.get("board"))
    extras["device"] = game["device"]
    extras.setdefault("game_no", game["game_no"])
    for k in ("board", "device", "game_no"):
        if extras.get(k) is not None:
            out[k] = extras[k]
    for k in sorted(extras):
        if k not in out and k not in _HEAD_FIRST:
            out[k] = extras[k]
    return out


def log_lines(archive, game):
    """The game as a match log v1 with its chain (docs/match-log.md): the header line, with a
    "chain" object (the header's link, the end record, the signed head), then one line per
    action, each with its "link". Readers that know nothing of chains ignore both keys."""
    head = match_header(game)
    links = archive.links(game["id"])
    h = game["header"]
    # v2: the board signs with its own key and names the game before ("prev"); v1: older
    # firmware (a host-made key, or none).
    info = {"v": 2 if "prev" in h else 1, "seq": game["seq"],
            "link": links.get(game["seq"], (None,))[0],
            # Keys this header has that the board did not journal: left out of link 0.
            "added": [k for k in head if k not in h]}
    if game["end_seq"] is not None:
        info["end"] = {"seq": game["end_seq"], "end": game["end"],
                       "link": links.get(game["end_seq"], (None,))[0]}
    signed = archive.head(game["id"])
    if signed is not None:
        info["signed"] = signed
    head["chain"] = info
    lines = [_dumps(head)]
    for seq, _t, line in archive.actions(game["id"]):
        link = links.get(seq, (None,))[0]
        if link and line.endswith("}"):
            line = line[:-1] + ',"link":"%s"}' % link
        lines.append(line)
    return lines


def board_records(head, actions, seq=1, end=True):
    """The `rec` and `state` payloads a board sends for a match log (header, [(seq?, t, action)]
    or action dicts), numbering records from `seq`: for tests, benchmarks and imports.
    `end`: add the end record when the game is over. Returns (recs, states)."""
    from scoreboard.rules import new_game

    game = new_game(head["game"], head.get("config"))
    h = dict(head)
    h.setdefault("game_no", 1)
    recs = [{"seq": seq, "type": "H", "header": h}]
    states = [{"seq": seq, "state": game.state()}]
    for item in actions:
        if isinstance(item, tuple):
            _s, t, action = item
        else:
            t, action = item.get("t", 0), item
        seq += 1
        rec = {"seq": seq}
        rec.update(matchlog.strip_meta(action))
        rec["t"] = t
        recs.append(rec)
        states.append({"seq": seq, "state": game.apply(matchlog.strip_meta(action))})
    if end and game.state().get("winner") is not None:
        seq += 1
        recs.append({"seq": seq, "type": "E", "end": {"winner": game.state()["winner"]}})
    return recs, states


def sign_records(recs, key, device):
    """Sign `rec` payloads as a board would (tests, benchmarks, imports). `key`: a
    chainhost.SoftKey standing for a board key (the end record, if any, is signed by the
    returned head), or the bytes of a legacy key (the end record gets its head, key id and
    signature, as firmware with a host-made key put them there). Returns the signed head of
    the last record, as the board's `sign` reply (or `sig` frame) gives it."""
    legacy = isinstance(key, bytes)
    link = chain.ZERO
    for r in recs:
        if _kind(r) == "H":
            link = chain.ZERO
        if _kind(r) == "E" and legacy:
            end = {k: v for k, v in r["end"].items() if k not in ("head", "sig", "kid")}
            link = chain.step(link, chain.record(r["seq"], "E", end))
            end["head"] = chain.hexlify(link)
            end["kid"] = chainhost.legacy_key_id(key)
            end["sig"] = chainhost.legacy_sign(key, device, r["seq"], link)
            r["end"] = end
        else:
            link = chain.step(link, chainhost.of_rec(r))
    seq = recs[-1]["seq"]
    header = next(r["header"] for r in recs if _kind(r) == "H")
    if legacy:
        kid, sig = chainhost.legacy_key_id(key), chainhost.legacy_sign(key, device, seq, link)
    else:
        kid, sig = key.kid, key.sign_head(device, seq, link)
    return {"device": device, "game_no": header.get("game_no"), "seq": seq,
            "head": chain.hexlify(link), "kid": kid, "sig": sig}


# -- following a board ---------------------------------------------------------------------------

def _say(text):
    print(text, flush=True)


class Follower:
    """Archive a board: connect, resync from the last seq held, then take live frames; after a
    lost connection, reconnect with backoff and resync. `once`: resync and return.

    archive: an Archive; port: as for --port (None: $CHALK_PORT, else auto); say: where progress
    lines go; stop: a threading.Event that ends the loop; idle: seconds without a frame before
    the board is asked whether it is still there (and how far its journal is); reply: seconds to
    wait for a reply; backoff: (first, longest) wait between reconnections."""

    def __init__(self, archive, port=None, once=False, say=_say, stop=None, idle=2.0,
                 reply=3.0, backoff=(0.25, 5.0), baud=None):
        self.archive = archive
        self.port = port
        self.once = once
        self.say = say or (lambda text: None)
        self.stop = stop
        self.idle = idle
        self.reply = reply
        self.backoff = backoff
        self.baud = baud
        self.board_id = None
        self.device = None
        self.counts = {"sessions": 0, "resyncs": 0, "records": 0, "actions": 0, "skipped": 0,
                       "acks": 0, "gaps": 0, "lost": 0, "restarts": 0, "corrupt": 0,
                       "unreadable": 0}
        self._pending = {}  # seq -> state payload whose record is not held yet
        self._signed_at = None  # the last seq held when the board last signed its head
        self._kid = None  # the board's own key (hello "kid"): it signs every game's end
        self._asked = {}  # game_no (None: the game in progress) -> (seq, when) of a pending sign
        self._gone_ends = set()  # finished games the board can no longer sign (rotated out)
        self._end_ok = True  # the board takes `sign` with a game_no (older firmware does not)
        # Good records that came ahead of a missing one (a noisy line): stored once the
        # records before them are, kept across reconnections to the same board.
        self._buffer = {}
        self._bad = {}  # seq (or ("frame", n)) -> why: records the archive cannot take
        self._want_ok = True  # the board takes journal's "want" (older firmware does not)
        self._block_ok = True  # ... and "block" (the size of its packed frames)
        self._block = _BLOCK_MAX
        self._quiet_said = False  # "no reply ...; retrying" said, and not taken back yet
        self._last_error = None
        self._up = False  # this connection got as far as a hello

    def _stopped(self):
        return self.stop is not None and self.stop.is_set()

    def _sleep(self, seconds):
        if self.stop is not None:
            self.stop.wait(seconds)
        else:
            time.sleep(seconds)

    def run(self):
        """Follow until stopped (or, with once, until resynced). Returns the counts."""
        from chalk.link import NoReply, resolve_port

        delay = self.backoff[0]
        quiet_since = time.monotonic()
        while not self._stopped():
            self._up = False
            try:
                port = resolve_port(self.port)
                self._session(port)
                return self.counts
            except (ArchiveError, JournalMismatch):
                raise
            except ChalkError as e:
                if self._up:
                    quiet_since = time.monotonic()
                # --once gives up at once on a board that is not there (no such port, not a
                # board); a noisy line that swallowed the replies gets ONCE_PATIENCE seconds.
                if self.once and (not isinstance(e, NoReply)
                                  or time.monotonic() - quiet_since > ONCE_PATIENCE):
                    raise
                if self._up:  # it was working: try again soon
                    delay = self.backoff[0]
                text = e.message + ("; " + e.hint if e.hint and "busy" in e.message else "")
                if text != self._last_error:
                    self.say("%s; retrying" % text)
                    self._last_error = text
                self._sleep(delay)
                delay = min(delay * 2, self.backoff[1])
        return self.counts

    # -- one connection ----------------------------------------------------------------------
    def _session(self, port):
        from chalk.link import BAUD, BoardLink, open_port

        ser = open_port(port, self.baud or BAUD)
        link = BoardLink(ser, port)
        try:
            info = link.hello(self.reply, self._retries())
            self._up = True
            self.counts["sessions"] += 1
            first = self.board_id is None
            self._board(info, port)
            if self._last_error is not None or not first:
                self.say("connected to %s on %s again" % (self.device, port))
            self._last_error = None
            self._set_clock(link)
            self._sync(link)
            if self.once:
                return
            self._live(link)
        finally:
            self._tally(link)
            link.close()

    def _tally(self, link):
        st = link.stats()
        for k in ("lost", "restarts", "corrupt"):
            self.counts[k] += st[k]

    def _board(self, info, port):
        device = info.get("device")
        if self.device is not None and device != self.device:
            self.say("another board on %s: %s (was %s)" % (port, device, self.device))
            self._pending = {}
            self._buffer = {}
        self.board_id = self.archive.board(info)
        self.device = device
        self._kid = info.get("kid") if type(info.get("kid")) is str else None
        held = self.archive.last_seq(self.board_id)
        self._check_journal(info, held, port)
        if self.counts["sessions"] == 1:
            self.say("board %s (%s, %s) on %s: archive %s holds seq %d, the board is at %d"
                     % (device, info.get("board"), info.get("game"), port, self.archive.path,
                        held, info["last_seq"] if _small(info.get("last_seq")) else 0))

    def _check_journal(self, info, held, port):
        last = info.get("last_seq")
        if type(last) is int and last < held:
            raise JournalMismatch(
                "the board %s on %s is at journal seq %d, but the archive %s holds its records "
                "up to seq %d: its journal was erased or replaced" % (
                    info.get("device"), port, last, self.archive.path, held),
                "nothing was archived or acknowledged; the archive will not mix two journals "
                "of one board: archive this one into another file with --db")

    def _set_clock(self, link):
        # Game headers get a "started" time only from a board whose clock was set.
        from chalk.link import BoardError, NoReply

        try:
            self._ask(link, "clock", {"ms": int(time.time() * 1000)})
        except (BoardError, NoReply):
            pass  # an older firmware without a clock (or a noisy line): no "started" then

    # -- resync ------------------------------------------------------------------------------
    def _sync(self, link):
        """Catch up with the board's journal, then record its state now (the last record's
        state frame may have been lost) and acknowledge what can be rotated out."""
        self.counts["resyncs"] += 1
        touched = []
        for _ in range(10):
            others = self._catch_up(link, touched)
            # Frames met on the way (live records after the stream, states, warnings) are
            # taken as if they came now; one that shows a new loss means another round.
            if not any([self._frame(link, f, syncing=True) for f in others]):
                break
        for gid in touched:
            self._report_game(gid)
        if not touched:
            self.say("up to date at seq %d" % self.archive.last_seq(self.board_id))
        now = self._optional(link, "state")
        snap = []
        if _small(now.get("last_seq"), 1) and type(now.get("state")) is dict:
            snap = [{"seq": now["last_seq"], "state": now["state"]}]
        # A state still ahead of what is held belongs to an action made meanwhile, whose own
        # rec and state frames are on their way.
        self.archive.add_states(self.board_id, list(self._pending.values()) + snap)
        self._pending = {}
        self._ack(link)
        self._sign(link, every=True)
        if self.once:
            self._await_signatures(link)

    def _optional(self, link, cmd):
        """A request whose answer only adds to the archive (a state snapshot): on a noisy line
        a long reply may not get through whole; then it is done without ({})."""
        from chalk.link import BoardError, NoReply

        try:
            return link.request(cmd, timeout=min(self.reply, 1.0),
                                retries=max(2, int(min(self.reply, 1.0) / _RESEND)))
        except NoReply:
            return {}
        except BoardError as e:  # (a board short of memory for a long reply, say)
            self.say("the board did not give its %s: %s" % (cmd, e.message))
            return {}

    def _sign(self, link, every=False):
        """Ask the board to sign its chain head as it is now, and the end of any finished game
        whose signature did not come, and keep them (verify then covers every record held).
        The board signs between its scans: a reply {"pending": true} means the signature
        follows in a `sig` frame (taken by _frame); it is not asked again for a while. One
        request a call (the live frames come first), or with `every` all that are due."""
        from chalk.link import BoardError, NoReply

        now = time.monotonic()
        if self._kid is not None and self._end_ok:
            for game_no, _seq in self._unsigned():
                if game_no in self._gone_ends:
                    continue
                asked = self._asked.get(game_no)
                if asked is not None and now - asked[1] < _SIGN_WAIT:
                    continue
                try:
                    res = self._ask(link, "sign", {"game_no": game_no})
                except BoardError as e:
                    if e.reason == "args":
                        self._end_ok = False  # older firmware: it signs its ends in them
                    elif "busy" not in e.message:
                        self._gone_ends.add(game_no)  # rotated out: it cannot sign it now
                    break
                except NoReply:
                    return  # a noisy line: asked again at the next quiet moment
                self._asked[game_no] = (None, now)
                if not res.get("pending"):
                    self.archive.set_head(self.board_id, res)
                if not every:
                    return  # one request per quiet moment: the live frames come first
        held = self.archive.last_seq(self.board_id)
        if self._signed_at != held and self._head_kept(held):
            self._signed_at = held  # signed already (by an earlier run of the archiver)
        if self._signed_at == held:
            return
        asked = self._asked.get(None)
        if asked is not None and asked[0] == held and now - asked[1] < _SIGN_WAIT:
            return  # its `sig` frame is on its way
        if asked is not None and not every and now - asked[1] < _HEAD_EVERY:
            return  # a signature costs an ESP32 a second of work: not several a second
        try:
            res = self._ask(link, "sign")
        except BoardError:
            return  # older firmware without a key, or a board busy signing: later
        except NoReply:
            return  # a noisy line: asked again at the next quiet moment
        self._asked[None] = (held, now)
        if res.get("pending"):
            return
        self.archive.set_head(self.board_id, res)
        if res.get("seq") == held:
            self._signed_at = held

    def _head_kept(self, held):
        """True if the archive keeps the board's signature of its chain up to seq `held`."""
        if not held:
            return False
        g = self.archive.game_before(self.board_id, held + 1)
        h = self.archive.head(g[0]) if g is not None else None
        return h is not None and h.get("seq") == held

    def _unsigned(self):
        return [g for g in self.archive.unsigned_ends(self.board_id)
                if g[0] not in self._gone_ends]

    def _await_signatures(self, link, wait=None, stop=True):
        """`once`, or stopping: the signatures asked for come in `sig` frames a moment later
        (the board makes them between its scans): take them, asking for the rest, until every
        end and the head held are signed, or nothing came for `wait` seconds (_SIGN_WAIT).
        Then acknowledge what their signatures free."""
        if self._kid is None:
            return
        wait = _SIGN_WAIT if wait is None else wait
        try:
            self._awaiting(link, wait, stop, time.monotonic())
        except ChalkError:
            if not stop:
                return  # stopping anyway: what came is kept
            raise

    def _awaiting(self, link, wait, stop, quiet):
        while not (stop and self._stopped()) and time.monotonic() - quiet < wait:
            held = self.archive.last_seq(self.board_id)
            if not self._unsigned() and self._signed_at == held:
                break
            self._sign(link, every=True)
            f = link.poll(0.2)
            if f is not None:
                quiet = time.monotonic()
                self._frame(link, f, syncing=True)
        self._ack(link)

    def _signature(self, link, payload, syncing):
        """A `sig` frame: the board signed a head (a game's end, or the head it was asked
        for)."""
        kept = self.archive.set_head(self.board_id, payload)
        held = self.archive.last_seq(self.board_id)
        if payload.get("seq") == held and (kept or self._head_kept(held)):
            self._signed_at = held  # (a head signed again: the one kept already)
        if kept:
            if not syncing:
                self._ack(link)  # an end now signed: its game may go from the board

    def _silent(self, link, e):
        """The board did not answer (a cut cable, or a line too noisy for a while): said once."""
        if not self._quiet_said:
            self._quiet_said = True
            self.say("%s; retrying" % e.message)

    def _heard(self, link):
        if self._quiet_said:
            self._quiet_said = False
            self.say("the board on %s answers again" % link.port)

    def _retries(self):
        return max(2, int(self.reply / _RESEND))

    def _ask(self, link, cmd, args=None, progress=(), until=None):
        """A request, resent often within the reply time: on a noisy line each try is a new
        chance for the command and its reply to get through whole (the board answers a
        repeat of a state-changing command from its last reply, never twice)."""
        return link.request(cmd, args, timeout=self.reply, retries=self._retries(),
                            progress=progress, until=until)

    def _flush(self, touched, gone=(), gone_until=0):
        """Store the records held back that now follow on from the last seq held, stepping
        over seqs the board no longer has as a gap: those in `gone`, every seq up to
        `gone_until` not here, and the records it sent that the archive cannot take (said
        once, in _unreadable). Returns the last seq held. Bounded by the records held back,
        whatever seqs a board claims."""
        held = self.archive.last_seq(self.board_id)
        run = []
        s = held
        for k in sorted(k for k in self._buffer if k > held):
            if k != s + 1 and not (k - 1 <= gone_until or (
                    k - s - 1 <= 2 * _WANT_BITS and all(
                        x in gone or x in self._bad for x in range(s + 1, k)))):
                break
            run.append(self._buffer[k])
            s = k
        if run and _kind(run[0]) != "H" and self.archive.game_before(self.board_id,
                                                                        run[0]["seq"]) is None:
            # Actions whose game header the archive could not take (said above): they belong to
            # no game here, so they are stepped over with it.
            orphans = []
            for r in run:
                if _kind(r) == "H":
                    break
                orphans.append(r["seq"])
            for seq in orphans:
                self._buffer.pop(seq, None)
                self._bad[seq] = "its game's header could not be taken"
            self.say("seqs %d..%d belong to a game whose header the archive could not take: "
                     "skipped" % (orphans[0], orphans[-1]))
            return self._flush(touched, gone, gone_until)
        if run:
            prev = held
            for r in run:
                if r["seq"] != prev + 1:
                    self.counts["gaps"] += 1
                    unread = [x for x in range(prev + 1, min(r["seq"], prev + 4))
                              if x in self._bad]
                    self.say("seqs %d..%d are %s: the archive has a gap there" % (
                        prev + 1, r["seq"] - 1, "records the board sent that the archive "
                        "cannot take (above)" if unread else "no longer on the board (rotated "
                        "out, or lost to damage)"))
                prev = r["seq"]
            res = self.archive.ingest(self.board_id, run, resync=True)
            self._took(res, touched)
            held = res.last
        for k in [k for k in self._buffer if k <= held]:
            del self._buffer[k]  # stored meanwhile (a record is stored once, by its seq)
        for k in [k for k in self._bad if type(k) is int and k <= held]:
            del self._bad[k]
        return held

    def _unreadable(self, f, why):
        """A frame from the board the archive cannot take: said once, in one line naming the
        board and the frame; its seq (if it has one) is stepped over as a gap."""
        seq = f.payload.get("seq") if isinstance(f.payload, dict) else None
        key = seq if _small(seq, 1) else ("frame", f.n)
        if key in self._bad:
            return
        if _small(seq, 1):
            self._bad[seq] = why
        elif len(self._bad) > 1000:
            return  # a board sending nothing but nonsense: said often enough
        else:
            self._bad[key] = why
        self.counts["unreadable"] += 1
        self.say("the board %s sent a record the archive cannot take, frame %d: %s; skipped"
                 % (self.device, f.n, why))

    def _catch_up(self, link, touched):
        """Fetch every record after the last seq held. Records are exactly-once by seq, so
        every good one that arrives is kept, whatever its order (self._buffer), and stored as
        soon as it follows on from what is held. While records are missing below one already
        here, a round asks the board for exactly those (journal "want", a bitmap of seqs);
        otherwise for everything after the last seq held; until a whole stream to the board's
        end has come. A round with no reply is asked again after a growing pause; several in a
        row end the connection (run() starts it again, without end; the records kept so far
        stay kept). Returns the other frames met on the way."""
        from chalk.link import BoardError, NoReply

        others = []
        silent = 0
        nonsense = 0
        pause = _RESEND
        while not self._stopped():
            held = self._flush(touched)
            later = [s for s in self._buffer if s > held]
            args = {"after": held}
            wanted = []
            if later and self._want_ok and min(later) <= held + _WANT_BITS:
                # (a hole wider than a bitmap: the whole rest, judged by its count, instead)
                top = min(max(later), held + _WANT_BITS)
                wanted = [s for s in range(held + 1, top)
                          if s not in self._buffer and s not in self._bad]
                args["want"] = "%x" % sum(1 << (s - held - 1) for s in wanted)
            if self._block_ok:
                args["block"] = int(self._block)
            result = None
            until = _all_here(wanted, self._buffer) if wanted else None
            frames_before = link.stats()["frames"]
            try:
                if wanted:
                    # Short rounds: what came meanwhile is not asked for again in the next.
                    result = link.request("journal", args, timeout=_WANT_ROUND, retries=2,
                                          progress=("rec",), until=until)
                else:
                    result = self._ask(link, "journal", args, progress=("rec",))
            except BoardError as e:
                if e.reason == "args" and "block" in args and "block" in e.message:
                    self._block_ok = False  # older firmware: its own block size
                    continue
                if e.reason != "args" or "want" not in args:
                    raise
                self._want_ok = False  # older firmware: the whole rest, every round
                continue
            except NoReply as e:
                if link.stats()["frames"] == frames_before:
                    silent += 1  # not a frame: the board may be gone
                    self._silent(link, e)
                    if silent >= 6:
                        raise
                else:
                    silent = 0
            bad_here = 0
            arrived = 0
            for f in _drain(link):
                if f.type != "rec":
                    others.append(f)
                    continue
                arrived += 1
                seq = f.payload.get("seq")
                why = _check(f.payload)
                if why is not None:
                    self._unreadable(f, why)
                    bad_here += 1  # it came: the stream's count holds it
                elif seq > held:
                    self._buffer.setdefault(seq, f.payload)
            if link.stats()["frames"] != frames_before:
                self._heard(link)
            self._adapt(arrived, result, wanted)
            if result is None:
                if wanted and any(s in self._buffer for s in wanted):
                    pause = _RESEND
                    continue  # some (or all) of it came: ask for what is still missing
                self._sleep(pause)
                pause = min(pause * 2, 2.0)
                continue
            silent = 0
            pause = _RESEND
            # Judged on the records here by seq, never on frames: `count` is the stream's
            # frames, and one `r` frame carries a run of records (protocol 2); `records` is
            # how many records the board sent (a board without it sends one frame a record).
            last = result.get("last", held)
            count = result.get("records", result.get("count", 0))
            if not _small(last) or not _small(count):
                nonsense += 1
                if nonsense == 1:
                    self.say("the board %s answered journal with nonsense (%s); asking again"
                             % (self.device, _clip(result)))
                if nonsense >= 3:
                    return others  # what follows on is stored; the rest waits for a sane reply
                self._sleep(pause)
                continue
            bad = [s for s in self._bad if type(s) is int and held < s <= last]
            if wanted:
                got = [s for s in wanted if s in self._buffer or s in self._bad]
                if len(got) + bad_here >= count:
                    # All it sent came: a wanted seq it did not send is no longer on the board.
                    self._flush(touched, gone=set(wanted) - set(got))
                continue
            got = [s for s in self._buffer if held < s <= last]
            if len(got) + len(bad) + bad_here < count:
                continue  # frames lost on the way: the next round asks for what is missing
            # The whole stream came: a seq in it that did not is one the board no longer has
            # (rotated out, or lost to damage), stored as a gap.
            before = self.archive.last_seq(self.board_id)
            now = self._flush(touched, gone_until=last)
            if not [s for s in self._buffer if s > last]:
                return others
            if now == before and not [s for s in self._buffer if now < s <= last + 1]:
                return others  # nothing here follows on: what came is ahead of the board's end
        return others

    def _adapt(self, arrived, result, wanted):
        """The block size of the next round (as serial file transfers adapt theirs, ZMODEM and
        Kermit): halved when frames of this one were lost, half as large again when it came
        whole. A lost frame of a smaller block loses fewer records, and a small frame gets
        through a noisy line more often; a clean line gets large blocks back within rounds."""
        sent = result.get("records") if isinstance(result, dict) else None
        if not _small(sent):
            sent = len(wanted) if wanted and result is None and arrived else None
        if not sent:
            return
        if arrived < sent:
            self._block = max(_BLOCK_MIN, self._block / 2)
        else:
            self._block = min(_BLOCK_MAX, self._block * 1.5)

    def _took(self, res, touched):
        self._count(res)
        for gid in res.games:
            if gid not in touched:
                touched.append(gid)

    def _ack(self, link):
        from chalk.link import BoardError

        seq = self.archive.ack_due(self.board_id)
        if seq is None:
            return
        if self._kid is not None:
            # A game goes from the board only once its end signature is held: the board can
            # sign only what it still holds.
            for game_no, header_seq in self.archive.unsigned_ends(self.board_id):
                if game_no not in self._gone_ends:
                    seq = min(seq, header_seq - 1)
                    break
            if seq <= (self.archive.board_info(self.board_id) or {}).get("acked", 0):
                return
        try:
            res = self._ask(link, "ack", {"seq": seq})
        except BoardError as e:
            self.say("the board refused the ack of seq %d: %s" % (seq, e.message))
            return
        self.archive.set_acked(self.board_id, seq)
        self.counts["acks"] += 1
        rotated = res.get("rotated") or []
        if rotated:
            self.say("acknowledged up to seq %d: the board rotated out game%s %s" % (
                seq, "" if len(rotated) == 1 else "s", ", ".join(str(n) for n in rotated)))

    def _count(self, res):
        self.counts["records"] += res.stored
        self.counts["actions"] += res.actions
        self.counts["skipped"] += res.skipped

    def _report(self, res, rec):
        if not res.stored:
            return
        g = res.games[-1] if res.games else None
        kind = _kind(rec)
        if kind == "A":
            self.say("game %s seq %d: %s" % (g, rec["seq"], _dumps(matchlog.strip_meta(rec))))
        elif kind == "H":
            self.say("game %s: new game #%s (seq %d)" % (g, rec["header"].get("game_no"),
                                                         rec["seq"]))
        else:
            self.say("game %s: ended, winner %s (seq %d)" % (g, _winner_text(rec["end"]),
                                                             rec["seq"]))

    def _report_game(self, gid):
        g = self.archive.game(gid)
        end = ""
        if g["end_seq"] is not None:
            end = ", ended, winner %s" % _winner_text(g["end"])
        self.say("game %d (%s #%s on %s): %d actions archived, up to seq %s%s" % (
            gid, g["game"], g["game_no"], g["device"], g["actions"],
            g["last_seq"] if g["last_seq"] is not None else g["seq"], end))

    # -- live --------------------------------------------------------------------------------
    tick = 0.2  # the longest wait for a frame before _between runs again

    def _between(self, link):
        """Called between frames while live: `chalk serve` passes its clients' commands here."""

    def _live(self, link):
        from chalk.link import NoReply

        base = link.stats()
        quiet = time.monotonic()
        unanswered = 0
        while not self._stopped():
            self._between(link)
            f = link.poll(self.tick)
            st = link.stats()
            need = st["lost"] > base["lost"] or st["restarts"] > base["restarts"]
            if f is None:
                if not need and time.monotonic() - quiet < self.idle:
                    # A quiet moment after the board spoke: have it sign what is held (a no-op
                    # when its head was signed at the last seq held already).
                    self._sign(link)
                if not need and time.monotonic() - quiet >= self.idle:
                    # Silence: is the board still there, and did we miss anything? On a noisy
                    # line the reply may not come whole: only several silences in a row end
                    # the connection (and run() starts it again).
                    try:
                        info = link.hello(self.reply, self._retries())
                    except NoReply as e:
                        self._silent(link, e)
                        unanswered += 1
                        if unanswered >= 3:
                            raise
                        quiet = time.monotonic()
                        continue
                    unanswered = 0
                    if info.get("device") != self.device:
                        raise ChalkError("the board on %s changed" % link.port)
                    held = self.archive.last_seq(self.board_id)
                    self._check_journal(info, held, link.port)
                    last = info.get("last_seq")
                    need = _small(last) and last > held
                    if not need and held and not self.archive.has_state(self.board_id, held):
                        # The state frame of the last action was lost on the wire: ask.
                        now = self._optional(link, "state")
                        if now.get("last_seq") == held and type(now.get("state")) is dict:
                            self.archive.add_states(self.board_id,
                                                    [{"seq": held, "state": now["state"]}])
                    quiet = time.monotonic()
            else:
                quiet = time.monotonic()
                self._heard(link)
                need = self._frame(link, f) or need
            if need:
                self._sync(link)
                base = link.stats()
        # Stopped (a service manager, Ctrl-C): the signatures on their way are waited for a
        # moment, so what is held ends signed as far as the board has signed it.
        self._await_signatures(link, _STOP_WAIT, stop=False)

    def _frame(self, link, f, syncing=False):
        """Take one unsolicited frame; True when a resync is needed."""
        if f.type == "rec":
            rec = f.payload
            why = _check(rec)
            if why is not None:
                self._unreadable(f, why)
                return True  # a resync steps over it (a gap) once the records after it come
            res = self.archive.ingest(self.board_id, [rec])
            if res.gap is not None:
                # Ahead of a record lost on the way: kept, stored once the ones before it are.
                self._buffer.setdefault(rec["seq"], rec)
                return True
            self._count(res)
            self._report(res, rec)
            if self._buffer:
                self._flush([])
            if _kind(rec) == "H" and not syncing:
                self._ack(link)
            return False
        if f.type == "state":
            seq = f.payload.get("seq")
            if not _small(seq, 1) or type(f.payload.get("state")) is not dict:
                return False
            if seq > self.archive.last_seq(self.board_id):
                self._pending[seq] = f.payload  # its record was lost on the way
                return True
            self.archive.add_states(self.board_id, [f.payload])
            return False
        if f.type == "boot":
            if f.payload.get("device") not in (None, self.device):
                raise ChalkError("another board started on %s" % link.port)
            # Its last_seq is the journal at that boot, which may be older than records already
            # held (a boot frame still queued behind our hello): check the journal as it is now.
            self.say("the board restarted (journal at seq %s)" % f.payload.get("last_seq"))
            self._check_journal(link.hello(self.reply, self._retries()),
                                self.archive.last_seq(self.board_id), link.port)
            return True
        if f.type == "warn":
            self.say("board warns: %s" % _dumps(f.payload))
        if f.type == "sig":
            self._signature(link, f.payload, syncing)
        return False


_RESEND = 0.4  # seconds between resends of a request to the board
ONCE_PATIENCE = 30.0  # seconds `--once` goes on asking a board whose replies a noisy line loses
_BLOCK_MAX = 360  # bytes of packed records an `r` frame carries at most (pack.Block.LIMIT)
_BLOCK_MIN = 24  # a few records a frame: on the noisiest line each still gets through
_SIGN_WAIT = 15.0  # seconds a pending signature is waited for before it is asked for again
_HEAD_EVERY = 1.0  # seconds at least between two signatures asked for a game in progress
_STOP_WAIT = 3.0  # seconds a stopping archiver waits for the signatures on their way
_WANT_BITS = 256  # the most records one journal round may ask for by seq
_WANT_ROUND = 0.45  # seconds of a round asking for missing records (sent 3 times in it)


def _all_here(wanted, buffer):
    """A request's `until`: every record asked for is here (queued or held back), so the
    reply (its count) is not needed."""
    wanted = set(wanted)

    def until(queue):
        here = {f.payload.get("seq") for f in queue if f.type == "rec"}
        return all(s in here or s in buffer for s in wanted)
    return until


def _drain(link):
    """The unsolicited frames already received, without waiting for more."""
    out = []
    while True:
        f = link.poll(0)
        if f is None:
            return out
        out.append(f)


def _winner_text(end):
    w = (end or {}).get("winner")
    if w is None:
        return "none" + (" (abandoned)" if (end or {}).get("abandoned") else "")
    return str(w)
