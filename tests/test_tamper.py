"""Tamper evidence: every edit of an archive (filled live or by resync) and of an exported match
log is detected by `chalk verify`, which names the first record that does not hold; a stripped
signature is broken, an unknown key and a game in progress have their own exit codes
(docs/league.md). The board is stood in for by a P-256 key on the host (chainhost.SoftKey),
and by a simulated board that made its own."""

import json
import sqlite3
import subprocess
import sys
import time

import pytest

from chalk import verify
from chalk.chainhost import SoftKey, legacy_key_id
from chalk.keys import KeyStore
from chalk.randomgame import random_match
from chalk.store import Archive, board_records, sign_records
from tests.mpy import micropython_path

KEY = SoftKey("%064x" % 0x7C0FFEE)  # the board's key pair, as a board would hold it
LEGACY = bytes(range(7, 39))  # a host-made key of older firmware
DEVICE = "esp32-00aa11bb22cc"
CONFIG = {"target": 20, "sets": 1, "pin_foul_penalty": 0}


def chalk(*args, env=None):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=60, env=env)


def games(key=KEY):
    """A finished five-pins match (12+ actions, an undo among them) and a second one under
    way, as a board journals them: one seq across both."""
    head, actions = random_match("five-pins", seed=3, config=CONFIG, undo_rate=0.1)
    assert len(actions) >= 12
    h1 = dict(head, players=["Ann", "Bob"], device=DEVICE, game_no=1, board="five-pins")
    recs1, states1 = board_records(h1, actions, seq=1)
    assert recs1[-1]["type"] == "E"
    end_signed = sign_records(recs1, key, DEVICE)
    head2, actions2 = random_match("five-pins", seed=4, config=CONFIG, max_actions=6)
    h2 = dict(head2, players=["Cy", "Di"], device=DEVICE, game_no=2, board="five-pins")
    recs2, states2 = board_records(h2, actions2, seq=recs1[-1]["seq"] + 1)
    signed2 = sign_records(recs2, key, DEVICE)
    return recs1 + recs2, states1 + states2, [end_signed, signed2]


def fill(path, live, key=KEY):
    """An archive of the two games: `live` as the follow loop stores live frames (one record at
    a time, every state), else as a resync stores them (one batch, no states but the last)."""
    recs, states, signed = games(key)
    with Archive(path, create=True) as a:
        b = a.board({"device": DEVICE, "board": "five-pins", "game": "five-pins"})
        if live:
            by_seq = {s["seq"]: s for s in states}
            for r in recs:
                res = a.ingest(b, [r], [by_seq[r["seq"]]] if r["seq"] in by_seq else [])
                assert res.gap is None
        else:
            a.ingest(b, recs, resync=True)
            a.add_states(b, [states[-1]])
        for head in signed:  # the end's `sig` frame, and the head asked for
            assert a.set_head(b, head) or isinstance(key, bytes)
    return path


@pytest.fixture
def keys(tmp_path):
    store = KeyStore(tmp_path / "keys.json")
    store.add_board(DEVICE, KEY.pub, 1, "enrolled over USB (test)")
    store.save()
    return tmp_path / "keys.json"


@pytest.fixture
def legacy_keys(tmp_path):
    store = KeyStore(tmp_path / "legacy.json")
    store.add_legacy(LEGACY.hex(), DEVICE, "kept by chalk deploy (test)")
    store.save()
    return tmp_path / "legacy.json"


@pytest.fixture(params=["live", "resync"])
def archive(request, tmp_path):
    return fill(tmp_path / ("%s.db" % request.param), request.param == "live")


def run_verify(db, keys):
    with Archive(db) as a:
        return verify.verify(a, None, KeyStore(keys))


def sql(db, *stmts):
    con = sqlite3.connect(str(db))
    with con:
        for stmt in stmts:
            if isinstance(stmt, tuple):
                con.execute(*stmt)
            else:
                con.execute(stmt)
    con.close()


def rows(db, query, *args):
    con = sqlite3.connect(str(db))
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def game1(db):
    return rows(db, "SELECT seq, end_seq FROM games WHERE game_no = 1")[0]


def last_action(db, game_no):
    return rows(db, "SELECT MAX(a.seq) FROM actions a JOIN games g ON g.id = a.game_id "
                    "WHERE g.game_no = ?", game_no)[0][0]


def replace_line(db, seq, old, new):
    line = rows(db, "SELECT line FROM actions WHERE seq = ?", seq)[0][0]
    assert old in line, (old, line)
    sql(db, ("UPDATE actions SET line = ? WHERE seq = ?", (line.replace(old, new, 1), seq)))


def edit_header(db, game_no, fn):
    h = json.loads(rows(db, "SELECT header FROM games WHERE game_no = ?", game_no)[0][0])
    fn(h)
    sql(db, ("UPDATE games SET header = ? WHERE game_no = ?",
             (json.dumps(h, separators=(",", ":")), game_no)))


def shot_seq(db, game_no=1):
    """The seq of a shot of the game (one with pins or a carom to change)."""
    for seq, line in rows(db, "SELECT a.seq, a.line FROM actions a JOIN games g ON "
                              "g.id = a.game_id WHERE g.game_no = ? ORDER BY a.seq", game_no):
        if '"a":"shot"' in line:
            return seq, json.loads(line)
    raise AssertionError("no shot")


def _changed_t(db):
    seq, rec = shot_seq(db)
    replace_line(db, seq, '"t":%d' % rec["t"], '"t":%d' % (rec["t"] + 1))
    sql(db, ("UPDATE actions SET t = t + 1 WHERE seq = ?", (seq,)))


def _delete_last_action_and_state(game_no):
    def edit(db):
        seq = last_action(db, game_no)
        sql(db, ("DELETE FROM actions WHERE seq = ?", (seq,)),
            ("DELETE FROM states WHERE seq = ?", (seq,)))
    return edit


def _delete_last_action_everywhere(db):
    # Its state and chain link too, and the board's last seq put back: only the signed head
    # (asked for by the follow loop) still knows it.
    seq = last_action(db, 2)
    sql(db, ("DELETE FROM actions WHERE seq = ?", (seq,)),
        ("DELETE FROM states WHERE seq = ?", (seq,)),
        ("DELETE FROM links WHERE seq = ?", (seq,)),
        ("UPDATE boards SET last_seq = ?", (seq - 1,)))


def _delete_states(db):
    sql(db, "DELETE FROM states")


def _changed_players(db):
    edit_header(db, 1, lambda h: h.update(players=["Bob", "Ann"]))


def _changed_winner_end(db):
    end = json.loads(rows(db, "SELECT \"end\" FROM games WHERE game_no = 1")[0][0])
    end["winner"] = 1 - end["winner"]
    sql(db, ("UPDATE games SET \"end\" = ?, winner = ? WHERE game_no = 1",
             (json.dumps(end), end["winner"])))


def _changed_winner_table(db):
    sql(db, "UPDATE games SET winner = 1 - winner WHERE game_no = 1")


def _truncate5(keep_end):
    def edit(db):
        last = last_action(db, 1)
        sql(db, ("DELETE FROM actions WHERE seq > ? AND seq <= ?", (last - 5, last)),
            ("DELETE FROM states WHERE seq > ? AND seq <= ?", (last - 5, last)))
        if not keep_end:
            sql(db, "UPDATE games SET end_seq = NULL, \"end\" = NULL, winner = NULL "
                    "WHERE game_no = 1")
    return edit


def _reorder(db):
    a, b = [r[0] for r in rows(db, "SELECT a.line FROM actions a JOIN games g ON "
                                   "g.id = a.game_id WHERE g.game_no = 1 ORDER BY a.seq")][3:5]
    ra, rb = json.loads(a), json.loads(b)
    # Swap what the two lines say, each keeping its place's seq and t.
    na = dict(rb, seq=ra["seq"], t=ra["t"])
    nb = dict(ra, seq=rb["seq"], t=rb["t"])
    sql(db, ("UPDATE actions SET line = ? WHERE seq = ?", (json.dumps(na), ra["seq"])),
        ("UPDATE actions SET line = ? WHERE seq = ?", (json.dumps(nb), rb["seq"])))


def _changed_config(db):
    edit_header(db, 1, lambda h: h["config"].update(target=25))


def _changed_field(db):
    seq, rec = shot_seq(db)
    old = '"carom":%d' % rec["carom"]
    replace_line(db, seq, old, '"carom":%d' % (4 if rec["carom"] != 4 else 3))


def _inserted_action(db):
    # A shot slipped in at the end of the game under way, numbered on from the board's last.
    seq = last_action(db, 2)
    gid = rows(db, "SELECT id FROM games WHERE game_no = 2")[0][0]
    line = json.dumps({"seq": seq + 1, "t": 999999, "a": "undo"})
    sql(db, ("INSERT INTO actions (board_id, game_id, seq, t, line) VALUES (1, ?, ?, ?, ?)",
             (gid, seq + 1, 999999, line)),
        ("UPDATE boards SET last_seq = ?", (seq + 1,)))


def _inserted_action_renumbered(db):
    # A shot slipped into the finished game, every later record renumbered to make room.
    seq, _rec = shot_seq(db)
    gid = rows(db, "SELECT id FROM games WHERE game_no = 1")[0][0]
    for s, line in rows(db, "SELECT seq, line FROM actions WHERE seq > ? ORDER BY seq DESC",
                        seq):
        sql(db, ("UPDATE actions SET seq = ?, line = ? WHERE seq = ?",
                 (s + 1, json.dumps(dict(json.loads(line), seq=s + 1)), s)))
    sql(db, ("UPDATE games SET end_seq = end_seq + 1 WHERE game_no = 1",),
        ("UPDATE games SET seq = seq + 1 WHERE game_no = 2",),
        ("INSERT INTO actions (board_id, game_id, seq, t, line) VALUES (1, ?, ?, 5, ?)",
         (gid, seq + 1, json.dumps({"seq": seq + 1, "t": 5, "a": "undo"}))))


def _duplicated(db):
    seq = last_action(db, 2)
    line, t, gid = rows(db, "SELECT line, t, game_id FROM actions WHERE seq = ?", seq)[0]
    sql(db, ("INSERT INTO actions (board_id, game_id, seq, t, line) VALUES (1, ?, ?, ?, ?)",
             (gid, seq + 1, t, json.dumps(dict(json.loads(line), seq=seq + 1)))),
        ("UPDATE boards SET last_seq = ?", (seq + 1,)))


def _changed_device(db):
    sql(db, "UPDATE boards SET device = 'esp32-ffffffffffff'")


def _changed_device_header(db):
    edit_header(db, 1, lambda h: h.update(device="esp32-ffffffffffff"))


ARCHIVE_EDITS = {
    "changed t": _changed_t,
    "deleted last action and its state (finished game)": _delete_last_action_and_state(1),
    "deleted last action and its state (game under way)": _delete_last_action_and_state(2),
    "deleted last action, its state, link and last seq": _delete_last_action_everywhere,
    "deleted states": _delete_states,
    "changed players": _changed_players,
    "changed winner in the end record": _changed_winner_end,
    "changed winner in the games table": _changed_winner_table,
    "finished game truncated by 5 actions": _truncate5(keep_end=True),
    "finished game truncated by 5 actions and its end": _truncate5(keep_end=False),
    "reordered lines": _reorder,
    "changed config": _changed_config,
    "changed field value": _changed_field,
    "inserted action": _inserted_action,
    "inserted action, later records renumbered": _inserted_action_renumbered,
    "duplicated line": _duplicated,
    "changed device id (boards table)": _changed_device,
    "changed device id (header)": _changed_device_header,
}


def test_an_untouched_archive_verifies(archive, keys):
    results = run_verify(archive, keys)
    assert len(results) == 2
    for r in results:
        assert r.problems == [] and r.differences == [], verify.report(results)
        assert r.signer is not None
    assert [r.verdict.grade for r in results] == ["ok-finished", "ok-in-progress"]
    r = chalk("verify", "--db", archive, "--keys", keys)
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
    assert "FINISHED: signed at its end" in r.stdout and "IN PROGRESS" in r.stdout


@pytest.mark.parametrize("name", sorted(ARCHIVE_EDITS))
def test_every_archive_edit_is_detected(archive, keys, tmp_path, name):
    ARCHIVE_EDITS[name](archive)
    results = run_verify(archive, keys)
    problems = [p for r in results for p in r.problems]
    diffs = [d for r in results for d in r.differences]
    assert verify.exit_code(problems, diffs) == verify.EXIT_BROKEN, \
        "\n".join(verify.report(results))
    r = chalk("verify", "--db", archive, "--keys", keys)
    assert r.returncode == 1, r.stdout + r.stderr
    # The first record that does not hold is named by its seq.
    assert " seq " in r.stdout


def test_the_first_record_that_does_not_hold_is_named(tmp_path, keys):
    db = fill(tmp_path / "a.db", live=False)
    seq, rec = shot_seq(db)
    _changed_field(db)
    (r1, _r2) = run_verify(db, keys)
    first = [p for p in r1.problems if p.kind == "link"][0]
    assert first.seq == seq and first.where == "seq %d" % seq
    assert "was changed" in first.text


def test_missing_signature_and_unknown_key_have_their_own_exit_codes(tmp_path, keys):
    db = fill(tmp_path / "a.db", live=True)
    empty = tmp_path / "none.json"
    r = chalk("verify", "--db", db, "--keys", empty)
    assert r.returncode == verify.EXIT_UNKNOWN_KEY, r.stdout + r.stderr
    assert "unknown key" in r.stdout and "chalk keys import" in r.stderr
    sql(db, "DELETE FROM heads WHERE game_id = 2")
    r = chalk("verify", "2", "--db", db, "--keys", keys)
    assert r.returncode == verify.EXIT_BROKEN, r.stdout + r.stderr  # the board is known
    assert "stripped" in r.stdout
    r = chalk("verify", "2", "--db", db, "--keys", empty)
    assert r.returncode == verify.EXIT_UNSIGNED, r.stdout + r.stderr  # it is not
    # A record changed as well: that is worse, and wins.
    _changed_players(db)
    r = chalk("verify", "--db", db, "--keys", keys)
    assert r.returncode == 1


# -- exported match logs ---------------------------------------------------------------------

def export(db, tmp_path, game_id):
    out = tmp_path / ("g%d.jsonl" % game_id)
    r = chalk("export", game_id, "--db", db, "-o", out)
    assert r.returncode == 0, r.stderr
    return out


def log_lines(path):
    return path.read_text().splitlines()


def write(path, lines):
    path.write_text("\n".join(lines) + "\n")


def _header(fn):
    def edit(lines):
        h = json.loads(lines[0])
        fn(h)
        lines[0] = json.dumps(h)
    return edit


def _line(i, fn):
    def edit(lines):
        rec = json.loads(lines[i])
        fn(rec)
        lines[i] = json.dumps(rec)
    return edit


def _flip_winner(h):
    h["chain"]["end"]["end"]["winner"] = 1 - h["chain"]["end"]["end"]["winner"]


def _first_shot(lines):
    return next(i for i, ln in enumerate(lines) if '"a": "shot"' in ln or '"a":"shot"' in ln)


def _log_changed_field(lines):
    i = _first_shot(lines)
    rec = json.loads(lines[i])
    rec["carom"] = 4 if rec["carom"] != 4 else 3
    lines[i] = json.dumps(rec)


def _log_changed_t(lines):
    _line(3, lambda r: r.update(t=r["t"] + 1))(lines)


def _log_swap(lines):
    lines[3], lines[4] = lines[4], lines[3]


def _log_swap_keeping_seqs(lines):
    a, b = json.loads(lines[3]), json.loads(lines[4])
    lines[3] = json.dumps(dict(b, seq=a["seq"], t=a["t"], link=a["link"]))
    lines[4] = json.dumps(dict(a, seq=b["seq"], t=b["t"], link=b["link"]))


def _log_insert(lines):
    rec = json.loads(lines[3])
    lines.insert(4, json.dumps({"seq": rec["seq"], "t": rec["t"], "a": "undo",
                                "link": rec["link"]}))


def _log_duplicate(lines):
    lines.insert(4, lines[3])


def _log_relink(edit):
    """An edit, then every link recomputed (anyone can: SHA-256 needs no key)."""
    from chalk import chainhost
    from scoreboard import chain

    def run(lines):
        edit(lines)
        h = json.loads(lines[0])
        info = h["chain"]
        payload = {k: v for k, v in h.items() if k != "chain" and k not in info["added"]}
        link = chain.step(chain.ZERO, chain.record(info["seq"], "H", payload))
        info["link"] = chain.hexlify(link)
        lines[0] = json.dumps(h)
        for i in range(1, len(lines)):
            rec = json.loads(lines[i])
            rec.pop("link")
            link = chain.step(link, chainhost.of_rec(rec))
            rec["link"] = chain.hexlify(link)
            lines[i] = json.dumps(rec)
    return run


LOG_EDITS = {
    "changed t": _log_changed_t,
    "deleted last action": lambda lines: lines.pop(),
    "changed players": _header(lambda h: h.update(players=["Bob", "Ann"])),
    "changed winner in the end record": _header(_flip_winner),
    "truncated by 5 actions": lambda lines: lines.__delitem__(slice(-5, None)),
    "truncated by 5 actions and the end removed": lambda lines: (
        lines.__delitem__(slice(-5, None)), _header(lambda h: h["chain"].pop("end"))(lines)),
    "reordered lines": _log_swap,
    "reordered lines keeping seqs and links": _log_swap_keeping_seqs,
    "changed config": _header(lambda h: h["config"].update(target=25)),
    "changed field value": _log_changed_field,
    "changed field value, links recomputed": _log_relink(_log_changed_field),
    "changed t, links recomputed": _log_relink(_log_changed_t),
    "inserted action": _log_insert,
    "duplicated line": _log_duplicate,
    "changed device id": _header(lambda h: h.update(device="esp32-ffffffffffff")),
    "changed game number": _header(lambda h: h.update(game_no=7)),
    "link removed from a line": _line(2, lambda r: r.pop("link")),
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    db = fill(d / "a.db", live=True)
    return export(db, d, 1), export(db, d, 2)


def test_an_exported_log_verifies_on_its_own_and_reads_as_v1(exported, keys, tmp_path):
    for path, code in zip(exported, (0, verify.EXIT_IN_PROGRESS)):
        r = chalk("verify", path, "--keys", keys)
        assert r.returncode == code, r.stdout + r.stderr
        assert "signed at its end" in r.stdout or "signed up to seq" in r.stdout
        r = chalk("replay", path)  # an old-style reader: the chain keys are ignored
        assert r.returncode == 0, r.stderr
    head = json.loads(log_lines(exported[0])[0])
    assert head["chalk"] == 1 and set(head["chain"]) >= {"seq", "link", "end", "signed"}
    assert all("link" in json.loads(ln) for ln in log_lines(exported[0])[1:])


@pytest.mark.parametrize("name", sorted(LOG_EDITS))
def test_every_log_edit_is_detected(exported, keys, tmp_path, name):
    path = tmp_path / "edited.jsonl"
    lines = log_lines(exported[0])
    LOG_EDITS[name](lines)
    write(path, lines)
    r = chalk("verify", path, "--keys", keys)
    assert r.returncode == 1, name + "\n" + r.stdout + r.stderr
    assert "line " in r.stdout or "seq " in r.stdout


def test_a_log_names_the_line_that_does_not_hold(exported, keys, tmp_path):
    path = tmp_path / "edited.jsonl"
    lines = log_lines(exported[0])
    i = _first_shot(lines)
    _log_changed_field(lines)
    write(path, lines)
    first = verify.verify_log(path, KeyStore(keys)).problems[0]
    assert first.kind == "link" and first.where.startswith("line %d (seq " % (i + 1))


def test_log_without_signature_or_key(exported, keys, tmp_path):
    path = tmp_path / "unsigned.jsonl"
    lines = log_lines(exported[0])
    _header(lambda h: h.pop("chain"))(lines)
    write(path, lines)
    r = chalk("verify", path, "--keys", keys)
    assert r.returncode == verify.EXIT_BROKEN and "no \"chain\"" in r.stdout  # stripped
    r = chalk("verify", path, "--keys", tmp_path / "no-keys.json")
    assert r.returncode == verify.EXIT_UNSIGNED, r.stdout  # a board nobody knows: unsigned
    lines = log_lines(exported[0])
    _header(lambda h: h["chain"].pop("signed"))(lines)
    write(path, lines)
    r = chalk("verify", path, "--keys", keys)
    assert r.returncode == verify.EXIT_BROKEN and "stripped" in r.stdout, r.stdout
    r = chalk("verify", exported[0], "--keys", tmp_path / "no-keys.json")
    assert r.returncode == verify.EXIT_UNKNOWN_KEY and "unknown key" in r.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[[[\n")
    r = chalk("verify", bad, "--keys", keys)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = chalk("verify", tmp_path / "missing.jsonl", "--keys", keys)
    assert r.returncode == 2 and "no match log" in r.stdout and "unreadable" in r.stderr


# -- a real (simulated) board, signing with its own key -----------------------------------------

@pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")
def test_a_board_archive_live_and_by_resync_detects_every_edit(tmp_path, monkeypatch):
    """The board signs with the key `chalk sim` gave it: archived live (following it) and by
    resync (`chalk archive --once` afterwards), both verify, and every edit of the list is
    caught in each; an exported log verifies on its own."""
    import shutil

    from chalk.follow import Follower
    from chalk.sim import Sim
    from tests.test_archive import (
        Following,
        archive_last_seq,
        board_config,
        flash_last_seq,
        standard_play,
    )

    # The live archiver acknowledges nothing here, so the board still has both games for the
    # resync-filled archive afterwards.
    monkeypatch.setattr(Follower, "_ack", lambda self, link: None)
    keys = tmp_path / "keys.json"
    play = standard_play(seed=6)
    sim = Sim(board_config(tmp_path), flash=tmp_path / "flash",
              trace=play.write(tmp_path / "trace.jsonl"), keys=keys)
    port = sim.start()
    live_db, resync_db = tmp_path / "live.db", tmp_path / "resync.db"
    try:
        ctl = Following(live_db, port)
        wait = play.seconds + 60

        def caught_up():
            return flash_last_seq(tmp_path / "flash") == play.seq == archive_last_seq(live_db)
        deadline = time.monotonic() + wait
        while not caught_up():  # an event, polled; the deadline only bounds a failure
            assert time.monotonic() < deadline, ctl.text()
            time.sleep(0.1)
        ctl.close()  # stopped: the port is free for the resync
        r = chalk("archive", "--once", "--port", port, "--db", resync_db)
        assert r.returncode == 0, r.stderr
    finally:
        sim.stop()
    for db in (live_db, resync_db):
        r = chalk("verify", "--db", db, "--keys", keys)
        assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
        assert r.stdout.count("FINISHED: signed at its end") == 1, r.stdout  # the won match
        assert r.stdout.count("IN PROGRESS: signed up to seq") == 1, r.stdout
    out = export(live_db, tmp_path, 1)
    r = chalk("verify", out, "--keys", keys)
    assert r.returncode == 0, r.stdout + r.stderr
    for name, edit in sorted(ARCHIVE_EDITS.items()):
        for db in (live_db, resync_db):
            copy = tmp_path / "edited.db"
            for suffix in ("", "-wal", "-shm"):
                src = db.with_name(db.name + suffix)
                dst = copy.with_name(copy.name + suffix)
                if dst.exists():
                    dst.unlink()
                if src.exists():
                    shutil.copy(src, dst)
            edit(copy)
            with Archive(copy) as a:
                results = verify.verify(a, None, KeyStore(keys))
            problems = [p for r in results for p in r.problems]
            diffs = [d for r in results for d in r.differences]
            assert verify.exit_code(problems, diffs) == verify.EXIT_BROKEN, (
                name, db.name, "\n".join(verify.report(results)))


def test_a_v1_archive_is_upgraded_with_its_links(tmp_path, legacy_keys):
    db = fill(tmp_path / "old.db", live=True, key=LEGACY)  # older firmware: a host-made key
    # What a chalk before chains left: no links, no heads, schema version 1.
    sql(db, "DROP TABLE links", "DROP TABLE heads", "PRAGMA user_version = 1")
    # Read (read-only): the chain tables are made for that connection, the file is untouched.
    with Archive(db) as a:
        results = verify.verify(a, None, KeyStore(legacy_keys))
    assert rows(db, "PRAGMA user_version") == [(1,)]
    # Opened to write (as `chalk archive` does): upgraded for good.
    with Archive(db, readonly=False) as a:
        assert a.db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert verify.verify(a, None, KeyStore(legacy_keys))[0].signer == results[0].signer
    # Every record chained and holding; the end record carried its signature all along, the
    # game under way was signed only by `sign` replies, which a v1 archive did not keep.
    assert [r.signer for r in results] == [legacy_key_id(LEGACY), None]
    assert [r.verdict.grade for r in results] == ["legacy", "unsigned"]
    assert all(p.kind != "link" for r in results for p in r.problems)
    r = chalk("verify", "--db", db, "--keys", legacy_keys)
    assert r.returncode == verify.EXIT_UNSIGNED, r.stdout + r.stderr
    assert "LEGACY: signed by legacy key" in r.stdout
