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
import json
import os
import sqlite3
import time
from collections import namedtuple
from datetime import datetime, timezone
from pathlib import Path

from chalk.errors import ChalkError
from scoreboard import matchlog

SCHEMA_VERSION = 1
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
CREATE TABLE gaps (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    after    INTEGER NOT NULL,                -- the last seq held before the gap
    next     INTEGER NOT NULL,                -- the first seq the board still had
    noted    TEXT NOT NULL,
    PRIMARY KEY (board_id, after)
);
"""
_TABLES = ("boards", "games", "actions", "states", "gaps")


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


def action_line(rec):
    """The match-log line of a `rec` action payload: seq and t first, then the action's keys."""
    t = rec.get("t", 0)
    return matchlog.action_line(rec["seq"], t, rec)


def _kind(rec):
    return rec.get("type") or "A"


def _check(rec):
    """Why a rec payload cannot be stored, or None."""
    seq = rec.get("seq") if type(rec) is dict else None
    if type(seq) is not int or seq < 1:
        return "no positive integer seq in %s" % _dumps(rec)[:80]
    kind = _kind(rec)
    if kind == "H":
        h = rec.get("header")
        if type(h) is not dict or type(h.get("game")) is not str:
            return "header seq %d has no game header" % seq
    elif kind == "E":
        if type(rec.get("end")) is not dict:
            return "end seq %d has no end payload" % seq
    elif kind == "A":
        if type(rec.get("a")) is not str:
            return 'action seq %d has no action kind "a"' % seq
        t = rec.get("t", 0)
        if type(t) is not int or t < 0:
            return "action seq %d has no valid t" % seq
    else:
        return "record seq %d has an unknown type %r" % (seq, kind)
    return None


def load_cell(text):
    """A JSON cell of the archive, or None if it is damaged (not JSON, too deep, NaN)."""
    from scoreboard.safejson import loads

    try:
        return loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None


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
        elif not set(_TABLES) <= tables:
            raise ArchiveError("the archive %s is damaged: tables missing (%s)" % (
                self.path, ", ".join(sorted(set(_TABLES) - tables))),
                "restore it from a backup or start a new one with --db")
        with self._errors():
            self.db.execute("PRAGMA foreign_keys = ON")

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
        """One write transaction: everything inside is stored, or nothing is."""
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
                               (seq, _dumps(end), now, winner if type(winner) is int else None,
                                game[0]))
                    game = (game[0], game[1], True)
                    ended.append(game[0])
                else:
                    if game[2]:
                        raise ChalkError("the board sent action seq %d after its game ended"
                                         % seq, "a firmware problem: please report it")
                    db.execute("INSERT INTO actions (board_id, game_id, seq, t, line) "
                               "VALUES (?, ?, ?, ?, ?)",
                               (board_id, game[0], seq, r.get("t", 0), action_line(r)))
                    actions += 1
                if game is not None and (not touched or touched[-1] != game[0]):
                    touched.append(game[0])
            if new:
                last = new[-1]["seq"]
                db.execute("UPDATE boards SET last_seq = ?, last_seen = ? WHERE id = ?",
                           (last, now, board_id))
            self._store_states(db, board_id, states, last)
        return Ingested(len(new), skipped, actions, touched, ended, None, last)

    def _game_before(self, db, board_id, seq):
        row = db.execute("SELECT id, seq, end_seq FROM games WHERE board_id = ? AND seq < ? "
                         "ORDER BY seq DESC LIMIT 1", (board_id, seq)).fetchone()
        if row is None:
            return None
        return (row[0], row[1], row[2] is not None and row[2] < seq)

    def _store_states(self, db, board_id, states, last):
        for st in states:
            seq = st.get("seq")
            state = st.get("state")
            if type(seq) is not int or seq > last or type(state) is not dict:
                continue
            g = db.execute("SELECT id, end_seq FROM games WHERE board_id = ? AND seq <= ? "
                           "ORDER BY seq DESC LIMIT 1", (board_id, seq)).fetchone()
            if g is None or (g[1] is not None and g[1] <= seq):
                continue  # an end record makes no state
            # The first report of a seq stands: a board reports each state once.
            db.execute("INSERT OR IGNORE INTO states (board_id, seq, game_id, state) "
                       "VALUES (?, ?, ?, ?)", (board_id, seq, g[0], _canon(state)))

    def add_states(self, board_id, states):
        """Store state payloads whose records are held; returns those left out (not held)."""
        if not states:
            return []
        last = self.last_seq(board_id)
        with self.transaction() as db, self._errors():
            self._store_states(db, board_id, states, last)
        return [s for s in states if type(s.get("seq")) is int and s["seq"] > last]

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
    """The game as a match log v1: the header line, then one line per action."""
    lines = [_dumps(match_header(game))]
    lines.extend(line for _seq, _t, line in archive.actions(game["id"]))
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
                       "acks": 0, "gaps": 0, "lost": 0, "restarts": 0, "corrupt": 0}
        self._pending = {}  # seq -> state payload whose record is not held yet
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
        from chalk.link import resolve_port

        delay = self.backoff[0]
        while not self._stopped():
            self._up = False
            try:
                port = resolve_port(self.port)
                self._session(port)
                return self.counts
            except (ArchiveError, JournalMismatch):
                raise
            except ChalkError as e:
                if self.once:
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
            info = link.hello(self.reply)
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
        self.board_id = self.archive.board(info)
        self.device = device
        held = self.archive.last_seq(self.board_id)
        self._check_journal(info, held, port)
        if self.counts["sessions"] == 1:
            self.say("board %s (%s, %s) on %s: archive %s holds seq %d, the board is at %d"
                     % (device, info.get("board"), info.get("game"), port, self.archive.path,
                        held, info.get("last_seq") or 0))

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
        from chalk.link import BoardError

        try:
            link.request("clock", {"ms": int(time.time() * 1000)}, timeout=self.reply)
        except BoardError:
            pass  # an older firmware without a clock: headers just lack "started"

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
        now = link.request("state", timeout=self.reply)
        snap = []
        if type(now.get("last_seq")) is int and type(now.get("state")) is dict:
            snap = [{"seq": now["last_seq"], "state": now["state"]}]
        # A state still ahead of what is held belongs to an action made meanwhile, whose own
        # rec and state frames are on their way.
        self.archive.add_states(self.board_id, list(self._pending.values()) + snap)
        self._pending = {}
        self._ack(link)

    def _catch_up(self, link, touched):
        """Ask for the records after the last seq held until none is missing. The records that
        arrived in order are stored after each round, so a noisy line still makes progress
        (every round keeps what came through). Returns the other frames met on the way."""
        others = []
        stalls = 0
        while True:
            held = self.archive.last_seq(self.board_id)
            result = link.request("journal", {"after": held}, timeout=max(self.reply, 5.0),
                                  progress=("rec",))
            recs = {}
            for f in _drain(link):
                seq = f.payload.get("seq") if f.type == "rec" else None
                if type(seq) is int and held < seq <= result.get("last", held):
                    recs[seq] = f.payload
                else:
                    others.append(f)
            count = result.get("count", 0)
            seqs = sorted(recs)
            if len(seqs) >= count:
                # The whole stream: a hole in it is a seq the board no longer has.
                res = self.archive.ingest(self.board_id, [recs[s] for s in seqs], resync=True)
                prev = held
                for s in seqs:
                    if s != prev + 1:
                        self.counts["gaps"] += 1
                        self.say("seqs %d..%d are no longer on the board (rotated out, or lost "
                                 "to damage): the archive has a gap there" % (prev + 1, s - 1))
                    prev = s
                self._took(res, touched)
                return others
            prefix = []
            for s in seqs:
                if s != held + 1 + len(prefix):
                    break
                prefix.append(recs[s])
            if prefix:
                self._took(self.archive.ingest(self.board_id, prefix), touched)
                stalls = 0
            else:
                stalls += 1
                if stalls >= 4:
                    raise ChalkError("the journal from the board on %s kept losing frames"
                                     % link.port, "check the USB cable; records already "
                                     "archived are kept")

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
        try:
            res = link.request("ack", {"seq": seq}, timeout=self.reply)
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
        base = link.stats()
        quiet = time.monotonic()
        while not self._stopped():
            self._between(link)
            f = link.poll(self.tick)
            st = link.stats()
            need = st["lost"] > base["lost"] or st["restarts"] > base["restarts"]
            if f is None:
                if not need and time.monotonic() - quiet >= self.idle:
                    # Silence: is the board still there, and did we miss anything?
                    info = link.hello(self.reply)
                    if info.get("device") != self.device:
                        raise ChalkError("the board on %s changed" % link.port)
                    held = self.archive.last_seq(self.board_id)
                    self._check_journal(info, held, link.port)
                    need = (info.get("last_seq") or 0) > held
                    if not need and held and not self.archive.has_state(self.board_id, held):
                        # The state frame of the last action was lost on the wire: ask.
                        now = link.request("state", timeout=self.reply)
                        if now.get("last_seq") == held and type(now.get("state")) is dict:
                            self.archive.add_states(self.board_id,
                                                    [{"seq": held, "state": now["state"]}])
                    quiet = time.monotonic()
            else:
                quiet = time.monotonic()
                need = self._frame(link, f) or need
            if need:
                self._sync(link)
                base = link.stats()

    def _frame(self, link, f, syncing=False):
        """Take one unsolicited frame; True when a resync is needed."""
        if f.type == "rec":
            rec = f.payload
            res = self.archive.ingest(self.board_id, [rec])
            if res.gap is not None:
                return True
            self._count(res)
            self._report(res, rec)
            if _kind(rec) == "H" and not syncing:
                self._ack(link)
            return False
        if f.type == "state":
            seq = f.payload.get("seq")
            if type(seq) is not int:
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
            self._check_journal(link.hello(self.reply), self.archive.last_seq(self.board_id),
                                link.port)
            return True
        if f.type == "warn":
            self.say("board warns: %s" % _dumps(f.payload))
        return False


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
