"""The league's own archive (SQLite): every game a venue sent, as it was sent, with its
verdicts; every receipt of it; what the league noticed (replays, forks, refused messages);
disputes and their resolutions. Records are added, never edited: a dispute is a row beside
the game, its resolution a row beside the dispute, a second verification (a key enrolled
later) a new verdict row. docs/league.md.
"""

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from chalk import sqltx
from chalk.errors import ChalkError

SCHEMA_VERSION = 2  # v2: each verdict's chain facts (a v1 archive is upgraded on open)
_SCHEMA = """
CREATE TABLE games (
    id          INTEGER PRIMARY KEY,
    venue       TEXT NOT NULL,                -- the venue whose topic it came on, first
    msg_id      TEXT NOT NULL,                -- its message id there
    sha256      TEXT NOT NULL UNIQUE,         -- of the log, as received
    log         TEXT NOT NULL,                -- the match log, exactly as received
    received    TEXT NOT NULL,                -- ISO 8601, league clock, UTC
    device      TEXT,                         -- the board the header names
    game_no     INTEGER,                      -- its game number on that board
    game        TEXT,
    config      TEXT,                         -- JSON, the header's config
    players     TEXT,                         -- JSON list, as in the header
    started     TEXT,                         -- the header's "started"
    end_head    TEXT,                         -- the chain head the board signed at the end
    predecessor TEXT                          -- the header's link to the board's game before
);
CREATE INDEX games_board ON games (device, game_no);
CREATE TABLE verdicts (
    id       INTEGER PRIMARY KEY,
    game_id  INTEGER NOT NULL REFERENCES games(id),
    checked  TEXT NOT NULL,
    grade    TEXT NOT NULL,                   -- leaguecheck.GRADES (or a newer verify's)
    finished INTEGER NOT NULL,
    signer   TEXT,
    reasons  TEXT NOT NULL,                   -- JSON list of lines
    result   TEXT,                            -- JSON: winner, scores, sets, abandoned
    chain    TEXT                             -- JSON: leaguecheck.chain_facts (NULL in v1)
);
CREATE INDEX verdicts_game ON verdicts (game_id, id);
CREATE TABLE receipts (
    id       INTEGER PRIMARY KEY,
    game_id  INTEGER NOT NULL REFERENCES games(id),
    venue    TEXT NOT NULL,
    msg_id   TEXT NOT NULL,
    sha256   TEXT NOT NULL,
    received TEXT NOT NULL,
    kind     TEXT NOT NULL                    -- first, again (a resend), replayed
);
CREATE INDEX receipts_game ON receipts (game_id);
CREATE TABLE reports (
    id       INTEGER PRIMARY KEY,
    kind     TEXT NOT NULL,                   -- replayed, forked, refused
    game_id  INTEGER REFERENCES games(id),
    other_id INTEGER REFERENCES games(id),
    venue    TEXT,
    text     TEXT NOT NULL,
    noted    TEXT NOT NULL
);
CREATE TABLE disputes (
    id      INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    by      TEXT NOT NULL,                    -- "league", or the venue's id
    note    TEXT NOT NULL,
    raised  TEXT NOT NULL,
    msg     TEXT,                             -- the venue's message id (a resend is one)
    UNIQUE (by, msg)
);
CREATE TABLE resolutions (
    id         INTEGER PRIMARY KEY,
    dispute_id INTEGER NOT NULL UNIQUE REFERENCES disputes(id),
    outcome    TEXT NOT NULL CHECK (outcome IN ('accepted', 'voided')),
    note       TEXT NOT NULL,
    resolved   TEXT NOT NULL
);
"""
_TABLES = ("games", "verdicts", "receipts", "reports", "disputes", "resolutions")
LOCK_WAIT = 10.0


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class LeagueDB:
    def __init__(self, path, create=False, readonly=False):
        self.path = Path(path)
        if not self.path.exists() and not create:
            raise ChalkError("no league archive at %s" % self.path,
                             "`chalk league run` makes it; give another with --db")
        try:
            if readonly:
                self.db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                                          timeout=LOCK_WAIT, isolation_level=None)
            else:
                self.db = sqlite3.connect(str(self.path), timeout=LOCK_WAIT,
                                          isolation_level=None)
            self.db.execute("PRAGMA foreign_keys = ON")
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as e:
            raise ChalkError("cannot open the league archive %s: %s" % (self.path, e),
                             "give another file with --db")
        if version == 0 and not tables and not readonly:
            self.db.execute("PRAGMA journal_mode = WAL")
            with self.transaction() as db:
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        db.execute(stmt)
                db.execute("PRAGMA user_version = %d" % SCHEMA_VERSION)
        elif version == 1 and set(_TABLES) <= tables and not readonly:
            # v1 kept no chain facts: their column is added, empty (a reverify fills it).
            with self.transaction() as db:
                db.execute("ALTER TABLE verdicts ADD COLUMN chain TEXT")
                db.execute("PRAGMA user_version = %d" % SCHEMA_VERSION)
        elif version not in (1, SCHEMA_VERSION) or not set(_TABLES) <= tables:
            self.db.close()
            raise ChalkError("%s is not a Chalk league archive (schema v%d)" % (self.path,
                                                                                 version),
                             "give the league's own file with --db")

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def transaction(self):
        """One write transaction (chalk/sqltx.py), worded for the league's archive."""
        return sqltx.transaction(self.db, self._busy, self._unwritable)

    def _busy(self, e):
        return ChalkError("the league archive %s is busy or unwritable: %s" % (self.path, e),
                          "is another chalk league running on it?")

    def _unwritable(self, e):
        return ChalkError("cannot write the league archive %s: %s" % (self.path, e))

    def q(self, sql, args=()):
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise ChalkError("league archive %s: %s" % (self.path, e))

    def version(self):
        """Changes when any connection commits (to notice a dispute from the command line)."""
        return self.q("PRAGMA data_version")[0][0]

    # -- reading -------------------------------------------------------------------------------
    _COLS = ("id", "venue", "msg_id", "sha256", "received", "device", "game_no", "game",
             "config", "players", "started", "end_head", "predecessor")

    def games(self, where="", args=()):
        rows = self.q("SELECT %s FROM games %s ORDER BY id" % (", ".join(self._COLS), where),
                      args)
        out = []
        verdicts = self.latest_verdicts()
        for r in rows:
            g = dict(zip(self._COLS, r))
            g["players"] = _load(g["players"], [])
            g["config"] = _load(g["config"], {})
            g["verdict"] = verdicts.get(g["id"])
            g["result"] = (g["verdict"] or {}).get("result")
            out.append(g)
        return out

    def game(self, gid):
        rows = self.games("WHERE id = ?", (gid,))
        return rows[0] if rows else None

    def log(self, gid):
        rows = self.q("SELECT log FROM games WHERE id = ?", (gid,))
        return rows[0][0] if rows else None

    def latest_verdicts(self):
        out = {}
        chain = "chain" if self._chained() else "NULL"
        for gid, checked, grade, finished, signer, reasons, result, facts in self.q(
                "SELECT game_id, checked, grade, finished, signer, reasons, result, %s FROM "
                "verdicts ORDER BY id" % chain):
            out[gid] = {"checked": checked, "grade": grade, "finished": bool(finished),
                        "signer": signer, "reasons": _load(reasons, []),
                        "result": _load(result, None), "chain": _load(facts, None)}
        return out

    def _chained(self):
        # (a v1 archive opened read-only has no chain column)
        if not hasattr(self, "_has_chain"):
            self._has_chain = any(r[1] == "chain" for r in self.q("PRAGMA table_info(verdicts)"))
        return self._has_chain

    def by_sha(self, sha):
        rows = self.q("SELECT id FROM games WHERE sha256 = ?", (sha,))
        return rows[0][0] if rows else None

    def receipts(self, gid=None):
        sql = "SELECT game_id, venue, msg_id, sha256, received, kind FROM receipts"
        rows = self.q(sql + (" WHERE game_id = ? ORDER BY id" if gid else " ORDER BY id"),
                      (gid,) if gid else ())
        return [dict(zip(("game_id", "venue", "msg_id", "sha256", "received", "kind"), r))
                for r in rows]

    def received(self, venue, msg_id, sha):
        """The game a (venue, message id, payload) was filed as already, or None."""
        rows = self.q("SELECT game_id FROM receipts WHERE venue = ? AND msg_id = ? AND "
                      "sha256 = ?", (venue, msg_id, sha))
        return rows[0][0] if rows else None

    def reports(self):
        return [dict(zip(("id", "kind", "game_id", "other_id", "venue", "text", "noted"), r))
                for r in self.q("SELECT id, kind, game_id, other_id, venue, text, noted FROM "
                                "reports ORDER BY id")]

    def disputes(self):
        """Every dispute with its resolution (None while pending)."""
        rows = self.q("SELECT d.id, d.game_id, d.by, d.note, d.raised, r.outcome, r.note, "
                      "r.resolved FROM disputes d LEFT JOIN resolutions r ON r.dispute_id = "
                      "d.id ORDER BY d.id")
        return [{"id": r[0], "game_id": r[1], "by": r[2], "note": r[3], "raised": r[4],
                 "resolution": None if r[5] is None else {"outcome": r[5], "note": r[6],
                                                          "resolved": r[7]}} for r in rows]

    # -- writing -------------------------------------------------------------------------------
    def file(self, venue, msg_id, sha, log, verdict, received=None):
        """A new game and its first verdict and receipt, in one transaction; its id."""
        now = received or now_iso()
        h = verdict.header or {}
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO games (venue, msg_id, sha256, log, received, device, game_no, "
                "game, config, players, started, end_head, predecessor) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (venue, msg_id, sha, log, now, verdict.device, verdict.game_no,
                 h.get("game") if type(h.get("game")) is str else None,
                 json.dumps(h.get("config") if type(h.get("config")) is dict else {},
                            ensure_ascii=False),
                 json.dumps(h.get("players") if type(h.get("players")) is list else [],
                            ensure_ascii=False),
                 h.get("started") if type(h.get("started")) is str else None,
                 verdict.end_head, verdict.predecessor))
            gid = cur.lastrowid
            self._verdict(db, gid, verdict, now)
            db.execute("INSERT INTO receipts (game_id, venue, msg_id, sha256, received, kind) "
                       "VALUES (?, ?, ?, ?, ?, 'first')", (gid, venue, msg_id, sha, now))
        return gid

    def _verdict(self, db, gid, v, now):
        db.execute("INSERT INTO verdicts (game_id, checked, grade, finished, signer, reasons, "
                   "result, chain) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (gid, now, v.grade, int(v.finished), v.signer,
                    json.dumps(v.reasons, ensure_ascii=False),
                    json.dumps(v.result, ensure_ascii=False) if v.result else None,
                    json.dumps(v.chain) if v.chain else None))

    def add_verdict(self, gid, verdict):
        with self.transaction() as db:
            self._verdict(db, gid, verdict, now_iso())

    def receipt(self, gid, venue, msg_id, sha, kind):
        with self.transaction() as db:
            db.execute("INSERT INTO receipts (game_id, venue, msg_id, sha256, received, kind) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (gid, venue, msg_id, sha, now_iso(), kind))

    def report(self, kind, text, game_id=None, other_id=None, venue=None):
        with self.transaction() as db:
            db.execute("INSERT INTO reports (kind, game_id, other_id, venue, text, noted) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (kind, game_id, other_id, venue, text,
                                                    now_iso()))

    def dispute(self, gid, by, note, msg=None):
        """A dispute (a resend of the same venue message is the same one); its id."""
        if self.game(gid) is None:
            raise ChalkError("no game %s in the league archive" % gid,
                             "`chalk league games` lists them")
        with self.transaction() as db:
            if msg is not None:
                row = db.execute("SELECT id FROM disputes WHERE by = ? AND msg = ?",
                                 (by, msg)).fetchone()
                if row:
                    return row[0]
            cur = db.execute("INSERT INTO disputes (game_id, by, note, raised, msg) VALUES "
                             "(?, ?, ?, ?, ?)", (gid, by, note, now_iso(), msg))
            return cur.lastrowid

    def resolve(self, dispute_id, outcome, note):
        if outcome not in ("accepted", "voided"):
            raise ChalkError("a dispute is resolved as accepted or voided, not %r" % outcome)
        with self.transaction() as db:
            row = db.execute("SELECT d.id, r.outcome FROM disputes d LEFT JOIN resolutions r "
                             "ON r.dispute_id = d.id WHERE d.id = ?", (dispute_id,)).fetchone()
            if row is None:
                raise ChalkError("no dispute %s" % dispute_id,
                                 "`chalk league disputes` lists them")
            if row[1] is not None:
                raise ChalkError("dispute %s was resolved already (%s): a resolution is a "
                                 "record, never changed" % (dispute_id, row[1]),
                                 "raise a new dispute of the game with its own note")
            db.execute("INSERT INTO resolutions (dispute_id, outcome, note, resolved) VALUES "
                       "(?, ?, ?, ?)", (dispute_id, outcome, note, now_iso()))


def _load(text, default):
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default
