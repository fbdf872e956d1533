"""The archive's store: every record a board journals, kept in SQLite by the board's journal seq.

A board numbers every journal record (game headers, actions, game ends) with one sequence that
rises across games and survives reboots (docs/journal.md). The archive keeps, per board, the
last seq it holds; everything it stores is keyed by (board, seq), so storing a record twice is
impossible and a missing one shows as a gap. This module is the file alone: its schema, reads,
writes and transactions, and the lock its writers in one process share. What fills it from a
board (resync, live frames, acks, signatures) is the follower, chalk/follow.py.

Ingest is one SQLite transaction per batch: a batch is stored whole or not at all.
See docs/archive.md.
"""

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections import namedtuple
from datetime import datetime, timezone
from pathlib import Path

from chalk import chainhost, sqltx
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
    game      TEXT NOT NULL,                  -- the game id, as its header names it
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
        with _writer(self.path), sqltx.transaction(self.db, self._problem, self._problem) as db:
            yield db

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
        follow.Follower). A malformed record raises ChalkError and writes nothing."""
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
