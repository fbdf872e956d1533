"""The SQLite archive: ingest (idempotent, gap-aware, all-or-nothing), opening errors, and
archiving a simulated board over its real pseudo-terminal through a cut cable, a killed host
process, a noisy wire and a power cut.

The live tests (test_live_*) are the slow ones, a few seconds each: they run a sensor trace on
the simulated board in real time. They are part of the default suite.
"""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chalk import store as arch
from chalk.errors import ChalkError
from chalk.follow import Follower
from chalk.store import Archive, ArchiveError, board_records
from chalk.traces import Trace
from scoreboard import journal as jnl
from scoreboard import matchlog
from scoreboard.rules import new_game
from tests.mpy import micropython_path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "host" / "chalk" / "samples"
live = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

HELLO = {"device": "dev-1", "board": "five-pins", "game": "five-pins", "firmware": "0.1.0",
         "last_seq": 0}


def chalk(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def sample(name):
    log = matchlog.read((SAMPLES / name).read_text().splitlines())
    return log.header, [(r["seq"], r["t"], r) for _n, r in log.actions]


def two_games():
    """Records of two five-pins games as a board sends them: (recs, states)."""
    head, actions = sample("five-pins.jsonl")
    recs, states = board_records(dict(head, game_no=1), actions)
    assert recs[-1]["type"] == "E"
    more, more_states = board_records(dict(head, game_no=2), actions[:5], seq=len(recs) + 1)
    return recs + more, states + more_states


def table_rows(path):
    db = sqlite3.connect(str(path))
    try:
        return {t: db.execute("SELECT * FROM %s ORDER BY 1, 2" % t).fetchall()
                for t in ("boards", "games", "actions", "states", "gaps")}
    finally:
        db.close()


# -- unit: schema and ingest -------------------------------------------------------------------

def test_new_archive_is_versioned_wal_with_foreign_keys(tmp_path):
    path = tmp_path / "a.sqlite3"
    with Archive(path, create=True) as a:
        assert a.db.execute("PRAGMA user_version").fetchone()[0] == arch.SCHEMA_VERSION
        assert a.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert a.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        with pytest.raises(ArchiveError):  # foreign keys are enforced
            with a.transaction() as db, a._errors():
                db.execute("INSERT INTO actions (board_id, game_id, seq, t, line) "
                           "VALUES (99, 99, 1, 0, '{}')")
    with Archive(path) as a:  # reopened as it is
        assert a.counts()["boards"] == 0


def test_ingest_stores_games_actions_states_and_ends(tmp_path):
    recs, states = two_games()
    with Archive(tmp_path / "a.db", create=True) as a:
        b = a.board(HELLO)
        res = a.ingest(b, recs, states, resync=True)
        assert res.stored == len(recs) and res.skipped == 0 and res.gap is None
        assert res.last == recs[-1]["seq"]
        games = a.games()
        assert [g["game_no"] for g in games] == [1, 2]
        assert games[0]["end_seq"] is not None and games[0]["winner"] == 0
        assert games[1]["end_seq"] is None
        assert res.ended == [games[0]["id"]]
        # The lines are the match log's, byte for byte (the seqs one up: the header has 1).
        lines = []
        for line in (SAMPLES / "five-pins.jsonl").read_text().splitlines()[1:]:
            seq = json.loads(line)["seq"]
            lines.append(line.replace('{"seq":%d,' % seq, '{"seq":%d,' % (seq + 1), 1))
        assert [line for _s, _t, line in a.actions(games[0]["id"])] == lines
        reported = a.states(games[0]["id"])
        assert len(reported) == len(lines) + 1  # the header's state too
        assert a.last_seq(b) == recs[-1]["seq"]


def test_ingest_is_idempotent(tmp_path):
    recs, states = two_games()
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:30], states[:30], resync=True)
        before = table_rows(path)
        again = a.ingest(b, recs[:30], states[:30], resync=True)
        assert again.stored == 0 and again.skipped == 30
        live_again = a.ingest(b, recs[29:30])  # a live frame already held
        assert live_again.stored == 0 and live_again.gap is None
        assert table_rows(path) == before
        # Overlapping batches (a resync after live frames) store each record once.
        res = a.ingest(b, recs[20:], states[20:], resync=True)
        assert res.skipped == 10 and res.stored == len(recs) - 30
        full = table_rows(path)
        a.ingest(b, list(reversed(recs)), states, resync=True)
        assert table_rows(path) == full
        seqs = [r[0] for r in a.db.execute("SELECT seq FROM actions ORDER BY seq")]
        assert len(seqs) == len(set(seqs))


def test_live_gap_writes_nothing_and_resync_fills_it(tmp_path):
    recs, states = two_games()
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:5], states[:5])
        before = table_rows(path)
        res = a.ingest(b, [recs[7]], [states[7]])  # seqs 6 and 7 lost on the wire
        assert res.gap == (5, 8) and res.stored == 0
        assert table_rows(path) == before
        res = a.ingest(b, recs[5:8], resync=True)  # the journal after seq 5
        assert res.gap is None and res.stored == 3 and a.last_seq(b) == 8
        assert a.gaps(b) == []


def test_resync_records_what_the_board_no_longer_has(tmp_path):
    recs, _ = two_games()
    with Archive(tmp_path / "a.db", create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:5], resync=True)
        # The board rotated seqs 6..9 out (another archive acknowledged them): stored, noted.
        res = a.ingest(b, recs[9:20], resync=True)
        assert res.stored == 11 and a.gaps(b) == [(5, 10)]


def test_failure_mid_batch_leaves_the_archive_as_before(tmp_path, monkeypatch):
    recs, states = two_games()
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:10], states[:10], resync=True)
        before = table_rows(path)
        # A record the archive refuses half way through the batch (an action after its
        # game's end): everything of the batch before it is rolled back.
        end = next(i for i, r in enumerate(recs) if r.get("type") == "E")
        bad = recs[10:end + 1] + [dict(recs[3], seq=recs[end]["seq"] + 1)]
        with pytest.raises(ChalkError, match="after its game ended"):
            a.ingest(b, bad, resync=True)
        assert table_rows(path) == before
        # A failure of the machinery itself (here: the third line cannot be made).
        calls = []
        real = arch.action_line

        def flaky(rec):
            calls.append(rec["seq"])
            if len(calls) == 3:
                raise RuntimeError("disk went away")
            return real(rec)

        monkeypatch.setattr(arch, "action_line", flaky)
        with pytest.raises(RuntimeError):
            a.ingest(b, recs[10:], states[10:], resync=True)
        assert table_rows(path) == before and a.last_seq(b) == 10
        monkeypatch.setattr(arch, "action_line", real)
        # A malformed record is refused before anything is written.
        with pytest.raises(ChalkError, match="malformed record: action seq 12"):
            a.ingest(b, [recs[10], {"seq": 12, "t": 5}], resync=True)
        assert table_rows(path) == before
        a.ingest(b, recs[10:], states[10:], resync=True)
        assert a.last_seq(b) == recs[-1]["seq"]


def test_states_are_kept_only_for_records_held(tmp_path):
    recs, states = two_games()
    with Archive(tmp_path / "a.db", create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:4])
        left = a.add_states(b, states[:6])
        assert [s["seq"] for s in left] == [5, 6]
        assert sorted(a.states(a.games()[0]["id"])) == [1, 2, 3, 4]


def test_ack_is_due_once_the_next_game_is_held(tmp_path):
    recs, _ = two_games()
    end = next(i for i, r in enumerate(recs) if r.get("type") == "E")
    with Archive(tmp_path / "a.db", create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:end], resync=True)
        assert a.ack_due(b) is None  # game 1 not finished
        a.ingest(b, [recs[end]])
        assert a.ack_due(b) is None  # finished, but still the board's newest file
        a.ingest(b, recs[end + 1:end + 3])
        assert a.ack_due(b) == recs[end + 2]["seq"]
        a.set_acked(b, recs[end + 2]["seq"])
        assert a.ack_due(b) is None


def test_a_board_is_known_by_its_device_id(tmp_path):
    with Archive(tmp_path / "a.db", create=True) as a:
        one = a.board(HELLO)
        assert a.board(dict(HELLO, firmware="0.2.0")) == one
        assert a.board_info(one)["firmware"] == "0.2.0"
        assert a.board(dict(HELLO, device="dev-2")) != one
        with pytest.raises(ChalkError, match="device"):
            a.board({"board": "five-pins"})


# -- unit: opening errors --------------------------------------------------------------------

def test_corrupt_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "a.db"
    data = b"this is not a database, it is a shopping list\n" * 100
    path.write_bytes(data)
    with pytest.raises(ArchiveError) as e:
        Archive(path, create=True)
    assert "not a Chalk archive" in e.value.message and str(path) in e.value.message
    assert "\n" not in e.value.message
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db"]


def test_other_sqlite_file_and_newer_schema_are_refused(tmp_path):
    other = tmp_path / "other.db"
    db = sqlite3.connect(str(other))
    db.execute("CREATE TABLE recipes (name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(ArchiveError, match="not a Chalk archive.*recipes"):
        Archive(other, create=True)
    newer = tmp_path / "newer.db"
    Archive(newer, create=True).close()
    db = sqlite3.connect(str(newer))
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(ArchiveError, match="newer chalk"):
        Archive(newer)


def test_missing_archive_and_unwritable_place(tmp_path):
    with pytest.raises(ArchiveError, match="no archive at"):
        Archive(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()  # reading never creates a file
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ArchiveError, match="cannot create the archive"):
        Archive(blocker / "a.db", create=True)


def test_locked_archive_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "a.db"
    Archive(path, create=True).close()
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with Archive(path, create=True, wait=0.1) as a:
            with pytest.raises(ArchiveError) as e:
                a.check_writable()
            assert "locked" in e.value.message and str(path) in e.value.message
            assert "\n" not in e.value.message
            with pytest.raises(ArchiveError, match="locked"):
                a.board(HELLO)
            assert a.games() == []  # readers are not blocked (WAL)
    finally:
        other.execute("ROLLBACK")
        other.close()


# -- the CLI's failures: one line, non-zero, nothing written -----------------------------------

def test_cli_locked_archive(tmp_path):
    path = tmp_path / "a.db"
    with Archive(path, create=True) as a:
        a.ingest(a.board(HELLO), two_games()[0][:3], resync=True)
    before = table_rows(path)
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        r = chalk("archive", "--once", "--db", path, "--port", tmp_path / "no-such-port")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert r.returncode != 0
    err = r.stderr.splitlines()
    assert err[0] == ("chalk: the archive %s is locked: another program is writing to it "
                      "(another chalk archive?)" % path)
    assert len(err) == 2 and err[1].startswith("chalk: hint: ")
    assert r.stdout == ""
    assert table_rows(path) == before


def test_cli_corrupt_archive(tmp_path):
    path = tmp_path / "a.db"
    data = os.urandom(8192)
    path.write_bytes(data)
    for cmd in (("archive", "--once", "--port", tmp_path / "no-such-port"), ("games",),
                ("export", "--all", "-o", tmp_path / "out"), ("verify",)):
        r = chalk(*cmd, "--db", path)
        assert r.returncode != 0, cmd
        err = r.stderr.splitlines()
        assert err[0].startswith("chalk: %s is not a Chalk archive" % path), r.stderr
        assert len(err) == 2
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db"]


def test_cli_unwritable_place(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = chalk("archive", "--once", "--db", blocker / "a.db", "--port", tmp_path / "none")
    assert r.returncode != 0
    assert r.stderr.splitlines()[0].startswith("chalk: cannot create the archive %s"
                                               % (blocker / "a.db"))


def test_follower_refuses_a_journal_behind_the_archive(tmp_path):
    # A board whose journal was erased starts again at seq 1: archiving it on top of the old
    # records would drop its new games as duplicates.
    recs, _ = two_games()
    with Archive(tmp_path / "a.db", create=True) as a:
        b = a.board(HELLO)
        a.ingest(b, recs[:20], resync=True)
        f = Follower(a)
        f.board_id = b
        with pytest.raises(arch.JournalMismatch, match="erased or replaced"):
            f._check_journal(dict(HELLO, last_seq=3), a.last_seq(b), "/dev/ttyUSB0")


# -- live: a simulated board over its pseudo-terminal ------------------------------------------

CONFIG = {"target": 20, "sets": 1, "pin_foul_penalty": 0}
# Button presses held well past the 20 ms debounce: on a busy machine the simulated board's loop
# can stall, and a press shorter than the stall would be seen as no press at all.
PRESS_MS = 100


def board_config(tmp_path):
    cfg = json.loads((ROOT / "firmware" / "boards" / "five-pins.json").read_text())
    cfg["game_config"] = CONFIG  # short matches: one set to 20
    path = tmp_path / "five-pins-short.json"
    path.write_text(json.dumps(cfg))
    return path


class Play:
    """People at a five-pins table, as a sensor trace, and the records the board must journal
    for it (worked out with the rules, as the board's referee decides)."""

    def __init__(self, seed=1, start=600, game=None, seq=0):
        self.tr = Trace(seed)
        self.tr.wait(start)
        self.game = game or new_game("five-pins", CONFIG)
        self.games = [[]]
        self.seq = seq if game else seq + 1  # the header of the first game

    def press(self, button):
        self.tr.press(button, hold=PRESS_MS, after=80)

    def _did(self, action):
        self.game.apply(action)
        self.games[-1].append(action)
        self.seq += 1

    def confirm(self):
        st = self.game.state()
        self.press("confirm")
        if st["winner"] is not None:  # the next match
            self.game = new_game("five-pins", CONFIG)
            self.games.append([])
            self.seq += 2  # its end and the new header
        elif st["next"] is None:
            self._did({"a": "break", "player": 0})
        else:
            self._did({"a": "shot", "player": st["next"], "pins": "", "carom": 0, "fouls": []})

    def shot(self, carom=0, pins=""):
        st = self.game.state()
        assert st["next"] is not None
        if pins:
            t = self.tr.t + 10
            for i, p in enumerate(pins):
                self.tr.pin_fall(p, t + 15 * i, 100)  # down and up again: it counts (FP-19)
            self.tr.wait(200)
        if carom:
            self.press("carom%d" % carom)
        self.press("confirm")
        self._did({"a": "shot", "player": st["next"], "pins": pins, "carom": carom,
                   "fouls": []})

    def undo(self):
        self.tr.long_press("confirm", hold=900, after=100)
        self._did({"a": "undo"})

    def write(self, path):
        self.tr.wait(300)
        self.tr.write(path)
        return path

    @property
    def seconds(self):
        return self.tr.t / 1000


def standard_play(seed=1):
    """Two matches: the first won (so it ends and is acknowledged), the second under way with
    fallen pins and an undo. About 5 s of play."""
    p = Play(seed)
    p.confirm()  # break
    rng = random.Random(seed)
    while p.game.state()["winner"] is None:
        if p.game.state()["next"] == 0:
            p.shot(carom=4, pins=rng.choice(["", "1", "2C", ""]))
        else:
            p.confirm()
    p.confirm()  # the next match
    p.confirm()  # break
    for i, (carom, pins) in enumerate([(0, ""), (3, ""), (0, "3"), (0, ""), (0, "14"), (3, ""),
                                       (0, ""), (0, "3"), (0, ""), (4, "")]):
        if i == 5:
            p.undo()
        p.shot(carom=carom, pins=pins)
    assert p.game.state()["winner"] is None
    return p


def flash_records(flash):
    """Every whole record in the board's journal files: {seq: (kind, payload)}."""
    out = {}
    for f in sorted(Path(flash).glob("g*.jnl")):
        for line in f.read_bytes().splitlines(keepends=True):
            d = jnl.decode(line)
            if isinstance(d, tuple):
                out[d[0]] = (d[1], json.loads(bytes(d[2])))
    return out


def flash_last_seq(flash):
    recs = flash_records(flash)
    return max(recs) if recs else 0


class Following:
    """The archive's follow loop in a thread, as `chalk archive` runs it."""

    def __init__(self, db, port, **kw):
        self.db, self.port, self.kw = db, port, kw
        self.log = []
        self.error = None
        self.counts = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            with Archive(self.db, create=True) as a:
                f = Follower(a, self.port, stop=self.stop, say=self.log.append,
                             **dict({"idle": 0.4, "reply": 1.0, "backoff": (0.1, 0.4)},
                                    **self.kw))
                self.counts = f.run()
        except BaseException as e:  # reported by close()
            self.error = e

    def close(self):
        self.stop.set()
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the follow loop did not stop\n" + self.text()
        if self.error is not None:
            raise AssertionError("the follow loop failed: %r\n%s" % (self.error, self.text()))

    def text(self):
        return "\n".join(self.log)


def archive_last_seq(db):
    try:
        with Archive(db) as a:
            rows = a.db.execute("SELECT MAX(last_seq) FROM boards").fetchone()
            return rows[0] or 0
    except ArchiveError:
        return 0


def wait_caught_up(db, flash, timeout=20.0, not_before=0.0, log="", expect=None, state=True):
    """Wait until the board's journal holds `expect`, the last seq the play makes, and the
    archive holds it too: events, however slow a busy machine makes the board. Without
    `expect`: until the trace has played (not_before, a time.monotonic() value), the journal has
    stopped growing, and the archive holds its last seq. Either way the archive must hold a
    state at that seq too (on a noisy line, a state frame lost on the wire is asked for once the
    line is quiet; `state=False` leaves that out for a line that never goes quiet). `timeout` is
    only an upper bound."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        board = flash_last_seq(flash)
        now = time.monotonic()
        if board != last:
            last, since = board, now
        if expect is not None:
            if board >= expect and archive_last_seq(db) == board and (
                    not state or _has_state(db, board)):
                return board
        elif now >= not_before and now - since >= 0.8 and archive_last_seq(db) == board and (
                not state or _has_state(db, board)):
            return board
        time.sleep(0.1)
    raise AssertionError("the archive holds seq %d, the board is at %s\n%s" % (
        archive_last_seq(db), last, log() if callable(log) else log))


def _has_state(db, seq):
    try:
        with Archive(db) as a:
            return a.has_state(1, seq)
    except ArchiveError:
        return False  # not created yet


def board_state(port):
    from chalk.remote import connect

    with connect(port) as link:
        return link.hello(), link.request("state")


def archived(db):
    """{game_no: [(seq, record)]} and the whole set of seqs the archive holds."""
    with Archive(db) as a:
        games = a.games()
        out = {}
        seqs = []
        for g in games:
            rows = [(s, json.loads(line)) for s, _t, line in a.actions(g["id"])]
            out[g["game_no"]] = (g, rows, a.states(g["id"]))
            seqs.append(g["seq"])
            if g["end_seq"] is not None:
                seqs.append(g["end_seq"])
            seqs.extend(s for s, _ in rows)
        gaps = a.db.execute("SELECT COUNT(*) FROM gaps").fetchone()[0]
    return out, sorted(seqs), gaps


def check_archive(db, flash, expected_games, final_state, log="", every_game_states=True):
    """No gap, no duplicate, the expected actions in order, the same lines as the board's
    journal, every reported state equal to the replay, and the final state the board's."""
    games, seqs, gaps = archived(db)
    assert seqs == list(range(1, len(seqs) + 1)), "gap or duplicate in %s" % seqs
    assert gaps == 0
    assert len(games) == len(expected_games)
    on_flash = flash_records(flash)
    for no, want in zip(sorted(games), expected_games):
        g, rows, states = games[no]
        got = [matchlog.strip_meta(r) for _s, r in rows]
        assert got == want, "game %d" % no
        for s, r in rows:
            assert r["seq"] == s and type(r["t"]) is int
            assert list(r)[:2] == ["seq", "t"]  # a match-log line: seq and t first
            if s in on_flash:
                kind, payload = on_flash[s]
                assert kind == "A" and dict(payload, seq=s) == r
        if g["seq"] in on_flash:
            assert on_flash[g["seq"]] == ("H", g["header"])
        # Every state the board reported is the replay's at that seq.
        rules = new_game("five-pins", g["header"]["config"])
        replayed = {g["seq"]: rules.state()}
        for s, r in rows:
            replayed[s] = rules.apply(matchlog.strip_meta(r))
        if every_game_states or no == max(games):
            assert states, "no state reported for game %d\n%s" % (no, log)
        for s, st in states.items():
            assert st == replayed[s], "game %d seq %d" % (no, s)
    assert rules.state() == final_state


class Live:
    """One live run: the simulated board, its flash, the archive file, the follow loop."""

    def __init__(self, tmp_path, play, test_mode=True, deferred=False):
        from chalk.sim import Sim

        trace = play.write(tmp_path / "trace.jsonl")
        self.play = play
        self.flash = tmp_path / "flash"
        self.db = tmp_path / "a.db"
        # deferred: the board boots idle and plays only after start_play(), once a follower
        # that starts slowly on a busy machine is there to see every record live.
        self.trace = trace
        self.sim = Sim(board_config(tmp_path), flash=self.flash,
                       trace=None if deferred else trace, test_mode=test_mode)
        self.ctl = None
        self.port = self.sim.start()
        self.t0 = time.monotonic()
        self.more = 0.0  # seconds of play added after the first trace (a second trace)
        self.expect = play.seq  # the last seq the board journals once everything has played

    def follow(self):
        self.ctl = Following(self.db, self.port)

    def start_play(self):
        """Switch the idle board off and on: it boots into the trace (the game's header it
        journaled at its first boot stays, so the play's seqs are unchanged)."""
        self.sim.next_trace = self.trace
        self.sim.power_cut()
        self.t0 = time.monotonic()

    def wait(self, timeout=120.0):
        log = self.ctl.text if self.ctl else ""
        return wait_caught_up(self.db, self.flash, timeout=self.play.seconds + self.more + timeout,
                              not_before=self.t0 + self.play.seconds + self.more, log=log,
                              expect=self.expect)

    def wait_for(self, what, pred, timeout=120.0):
        """Wait for an event (pred() true); `timeout` is only an upper bound."""
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                raise AssertionError("gave up waiting for %s\n%s" % (
                    what, self.ctl.text() if self.ctl else ""))
            time.sleep(0.02)

    def close(self):
        if self.ctl is not None and self.ctl.thread.is_alive():
            self.ctl.stop.set()
            self.ctl.thread.join(timeout=5)
        self.sim.stop()


def run_live(tmp_path, play, disturb, follow=True, deferred=False):
    """Play `play` on a simulated board archived into tmp_path/a.db while `disturb(live)` runs;
    returns (live, board hello, board state, follower log)."""
    lv = Live(tmp_path, play, deferred=deferred)
    try:
        if follow:
            lv.follow()
        disturb(lv)
        lv.wait()
        if lv.ctl:
            lv.ctl.close()
        lv.sim.corrupt = None
        hello, state = board_state(lv.port)
        return lv, hello, state, (lv.ctl.text() if lv.ctl else "")
    finally:
        lv.close()


@live
def test_live_cable_cut_and_restored(tmp_path):
    play = standard_play(seed=1)

    def disturb(lv):
        lv.wait_for("the first records archived", lambda: archive_last_seq(lv.db) >= 3)
        lv.sim.cut = True  # unplugged: bytes lost both ways while the game goes on
        at_cut = flash_last_seq(lv.flash)
        lv.wait_for("the follower to notice the cut and the game to go on", lambda: (
            "retrying" in lv.ctl.text() and flash_last_seq(lv.flash) >= at_cut + 2))
        lv.sim.cut = False

    lv, hello, state, log = run_live(tmp_path, play, disturb)
    db, flash = lv.db, lv.flash
    assert hello["last_seq"] == play.seq
    check_archive(db, flash, play.games, state["state"])
    assert "retrying" in log and "again" in log, log
    # The first match was acknowledged and rotated out of the board's flash.
    assert "rotated out game 1" in log
    assert not (flash / "g00001.jnl").exists() and (flash / "g00002.jnl").exists()
    with Archive(db) as a:
        assert a.board_info(1)["acked"] >= a.games()[0]["end_seq"]


@live
def test_live_host_killed_and_restarted(tmp_path):
    play = standard_play(seed=2)
    runs = []

    def start(port):
        p = subprocess.Popen([sys.executable, "-m", "chalk.cli", "archive", "--port", port,
                              "--db", tmp_path / "a.db", "--idle", "0.5"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        runs.append(p)
        return p

    def disturb(lv):
        first = start(lv.port)
        # The game starts once the archiver follows (it holds the header), so it sees game 1
        # live, states and all; it is killed mid-game, perhaps mid-transaction.
        lv.wait_for("the first archiver to follow", lambda: archive_last_seq(lv.db) >= 1)
        lv.start_play()
        lv.wait_for("the first archiver to store records", lambda: archive_last_seq(lv.db) >= 4)
        first.send_signal(signal.SIGKILL)
        first.wait()
        at_kill = flash_last_seq(lv.flash)
        # The game goes on with nobody listening.
        lv.wait_for("records journaled with nobody listening",
                    lambda: flash_last_seq(lv.flash) >= at_kill + 2)
        start(lv.port)
        # Once it has caught up, stop it as a service manager would (SIGTERM): the port is
        # then free for the checks.
        lv.wait()
        runs[-1].send_signal(signal.SIGTERM)
        runs[-1].wait(timeout=10)

    try:
        lv, hello, state, _ = run_live(tmp_path, play, disturb, follow=False, deferred=True)
        db, flash = lv.db, lv.flash
    finally:
        for p in runs:
            if p.poll() is None:
                p.kill()
                p.wait()
    out = runs[1].stdout.read()
    assert runs[1].returncode == 0, runs[1].stderr.read()
    assert "holds seq" in out and "archived" in out.splitlines()[-1]
    check_archive(db, flash, play.games, state["state"])
    # Exported, the games replay to the board's final state (chalk export | chalk replay).
    with Archive(db) as a:
        last = a.games()[-1]["id"]
    out_file = tmp_path / "last.jsonl"
    r = chalk("export", last, "--db", db, "-o", out_file)
    assert r.returncode == 0, r.stderr
    r = chalk("replay", out_file)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == state["state"]


def flipper(rate, seed=7):
    """Damage the wire: flip the low bit of bytes at random (never making a control byte,
    which the board's REPL would act on)."""
    rng = random.Random(seed)
    count = [0]

    def corrupt(data, direction):
        b = bytearray(data)
        for i in range(len(b)):
            if rng.random() < rate:
                b[i] ^= 0x01
                count[0] += 1
        return bytes(b)

    corrupt.count = count
    return corrupt


@live
def test_live_corrupted_wire(tmp_path):
    play = standard_play(seed=3)
    noise = flipper(1 / 400)

    def disturb(lv):
        lv.sim.corrupt = noise  # from the first byte to the last check

    lv, hello, state, log = run_live(tmp_path, play, disturb)
    db, flash = lv.db, lv.flash
    assert noise.count[0] > 20
    # A state frame lost on the wire is gone (the journal keeps actions, not states); the
    # state after a resync is asked for, so the game in progress always has one.
    check_archive(db, flash, play.games, state["state"], log, every_game_states=False)


@live
def test_live_power_cut_and_reboot(tmp_path):
    # Before the cut: a break and shots; the board is killed mid-game, boots from its journal
    # and play goes on (a second trace, as people keep playing after the lights come back).
    first = Play(seed=4)
    first.confirm()
    for i in range(24):
        first.shot(carom=3 if i % 8 == 0 else 0, pins="2" if i % 5 == 0 else "")
    # Low scores: neither player reaches 20, wherever the cut falls.
    after_spec = [(0, ""), (0, "1"), (3, ""), (0, ""), (0, ""), (0, "3"), (0, ""), (0, "")]
    second_trace = tmp_path / "after.jsonl"
    second = Trace(seed=5)
    second.wait(700)
    for carom, pins in after_spec:
        if pins:
            t = second.t + 10
            for i, p in enumerate(pins):
                second.pin_fall(p, t + 15 * i, 100)
            second.wait(200)
        if carom:
            second.press("carom%d" % carom, hold=PRESS_MS, after=80)
        second.press("confirm", hold=PRESS_MS, after=80)
    second.wait(300)
    second.write(second_trace)

    def disturb(lv):
        # Cut once a few shots are journaled (however slowly the board boots), mid-game.
        lv.wait_for("shots on the board's journal", lambda: flash_last_seq(lv.flash) >= 6)
        lv.sim.next_trace = second_trace
        proc = lv.sim.proc
        lv.sim.power_cut()
        proc.wait(timeout=60)
        # The board is dead: its journal is what the reboot resumes, and the second trace adds
        # one record per shot to it.
        lv.expect = flash_last_seq(lv.flash) + len(after_spec)
        lv.more = max(2.0 + second.t / 1000 - first.seconds, 0.0)

    lv, hello, state, log = run_live(tmp_path, first, disturb)
    db, flash = lv.db, lv.flash
    assert "restarted" in log, log
    games, seqs, _ = archived(db)
    rows = games[1][1]
    # The actions before the cut are a prefix of the first trace's; the rest are the second's,
    # played from where the board stood after its reboot.
    k = len(rows) - len(after_spec)
    assert 3 <= k < len(first.games[0]), "the cut did not land mid-game (k=%d)" % k
    want = first.games[0][:k]
    rules = new_game("five-pins", CONFIG)
    for a in want:
        rules.apply(a)
    for carom, pins in after_spec:
        a = {"a": "shot", "player": rules.state()["next"], "pins": pins, "carom": carom,
             "fouls": []}
        rules.apply(a)
        want.append(a)
    assert rules.state()["winner"] is None
    check_archive(db, flash, [want], state["state"])
