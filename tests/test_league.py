"""A league checking the logs pubs mail in (docs/league.md), against a simulated board (the
firmware on the MicroPython unix port behind a pty) that made its own key: each attack with the
input that broke the old trust model, and what `chalk verify` and `chalk keys` now say.

The board plays four games of five-pins (three finished, one under way); one archive holds them
(`chalk archive --once`), and each is exported as a match log. A rival pub has a board and a
key of its own."""

import json
import shutil
import subprocess
import sys
import time

import pytest

from chalk import chainhost, keys, verify
from chalk.keys import KeyStore
from chalk.link import BoardLink, open_port
from chalk.sim import Sim
from chalk.store import Archive
from scoreboard import chain
from tests.mpy import micropython_path

pytestmark = pytest.mark.skipif(micropython_path() is None, reason="micropython not installed")

CONFIG = {"target": 6, "sets": 1}
SHOTS = [{"a": "break", "player": 0},
         {"a": "shot", "player": 0, "pins": "12", "carom": 0, "fouls": []},  # 4
         {"a": "shot", "player": 1, "pins": "", "carom": 0, "fouls": []},
         {"a": "shot", "player": 0, "pins": "1", "carom": 0, "fouls": []}]  # 6: won


def chalk(*args, env=None, stdin=None):
    return subprocess.run([sys.executable, "-m", "chalk.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env, input=stdin)


def play(link, actions, players=("Ann", "Bob")):
    link.request("new", {"game": "five-pins", "config": CONFIG, "players": list(players)})
    for a in actions:
        link.request("act", {"action": a})


def wait_signed(link, seq, timeout=30.0):
    """Ask the board to sign its head, and wait for its `sig` frame (it signs between scans)."""
    res = link.request("sign")
    deadline = time.monotonic() + timeout
    while res.get("pending") or res.get("seq") != seq:
        f = link.poll(0.2)
        if f is not None and f.type == "sig" and f.payload.get("seq") == seq:
            return f.payload
        assert time.monotonic() < deadline, res
    return res


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines()


def game_id(db, game_no):
    with Archive(db) as a:
        return [g["id"] for g in a.games() if g["game_no"] == game_no][0]


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    d = tmp_path_factory.mktemp("league")
    store = d / "keys.json"
    sim = Sim("five-pins", flash=d / "flash", test_mode=True, keys=store)  # enrolled at start
    port = sim.start()
    try:
        link = BoardLink(open_port(port), port)
        link.hello()
        play(link, SHOTS, ("Ann", "Bob"))  # game 2 (game 1: the board's boot game, ended)
        play(link, SHOTS[:2], ("Cy", "Di"))  # game 3, under way: archived and signed mid-game
        mid = wait_signed(link, link.request("state")["last_seq"])
        link.close()
        r = chalk("archive", "--once", "--port", port, "--db", d / "a.db")
        assert r.returncode == 0, r.stderr
        mid_log = d / "mid3.jsonl"  # game 3 as exported mid-game
        r = chalk("export", game_id(d / "a.db", 3), "--db", d / "a.db", "-o", mid_log)
        assert r.returncode == 0, r.stderr
        link = BoardLink(open_port(port), port)
        link.hello()
        for a in SHOTS[2:]:
            link.request("act", {"action": a})  # game 3 won
        play(link, SHOTS, ("Ed", "Flo"))  # game 4, won
        play(link, SHOTS[:2], ("Gil", "Hal"))  # game 5, under way
        link.close()
        r = chalk("archive", "--once", "--port", port, "--db", d / "a.db")
        assert r.returncode == 0, r.stderr
        # The board rewound: its flash as it was after game 4 put back, another game 5 played.
        shutil.copytree(d / "flash", d / "flash-copy")
    finally:
        sim.stop()
    logs = {}
    for no in range(1, 6):
        out = d / ("g%d.jsonl" % no)
        r = chalk("export", game_id(d / "a.db", no), "--db", d / "a.db", "-o", out)
        assert r.returncode == 0, r.stderr
        logs[no] = out
    device = json.loads(lines_of(logs[2])[0])["device"]
    return {"dir": d, "store": store, "logs": logs, "mid": mid_log, "mid_head": mid,
            "device": device, "port": port, "db": d / "a.db", "flash": d / "flash"}


def run_verify(league, *files, store=None):
    return chalk("verify", *files, "--keys", store or league["store"])


# -- honest games ------------------------------------------------------------------------------

def test_finished_games_verify_and_the_one_under_way_is_in_progress(league):
    logs = league["logs"]
    r = run_verify(league, logs[2], logs[3], logs[4])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("FINISHED: signed at its end") == 3
    r = run_verify(league, logs[5])
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
    assert "IN PROGRESS: signed up to seq" in r.stdout
    r = chalk("verify", "--db", league["db"], "--keys", league["store"])
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
    assert r.stdout.count("FINISHED") == 4 and "outside every signature" in r.stdout
    head = json.loads(lines_of(logs[2])[0])
    assert head["chain"]["v"] == 2 and head["prev"]["game_no"] == 1
    assert chainhost.is_hex(head["chain"]["signed"]["sig"], 128)


def test_a_log_with_a_byte_order_mark_verifies(league, tmp_path):
    text = league["logs"][2].read_text(encoding="utf-8")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    r = run_verify(league, bom)
    assert r.returncode == 0, r.stdout + r.stderr
    r = chalk("verify", "-", "--keys", league["store"], stdin="\ufeff" + text)
    assert r.returncode == 0, r.stdout + r.stderr


# -- the key store: a key enters only with proof -----------------------------------------------

def test_the_key_claim_forgery_is_refused(league, tmp_path):
    """A rival pub files its own key under this board's device id (the old `keys import` kept
    it without a word) and signs a forged log "of that board" with it."""
    store = tmp_path / "keys.json"
    shutil.copy(league["store"], store)
    rival = chainhost.SoftKey()
    forged_keys = write(tmp_path / "rival-keys.json", [json.dumps({"chalk_keys": 2, "keys": [
        {"kind": "board", "device": league["device"], "pub": rival.pub, "since": 1}]})])
    r = chalk("keys", "import", forged_keys, "--keys", store)
    assert r.returncode == 1 and "not signed by a league key this store trusts" in r.stderr
    assert "Traceback" not in r.stderr
    assert KeyStore(store).board_key(league["device"])["kid"] != rival.kid
    # Even signed by a league key the store trusts, another key for a known board needs
    # --replace naming the old one.
    league_store = tmp_path / "league.json"
    assert chalk("keys", "league", "County", "League", "--keys", league_store).returncode == 0
    ls = KeyStore(league_store)
    ls.add_board(league["device"], rival.pub, 1, "claimed")
    ls.save()
    signed_file = tmp_path / "signed.json"
    assert chalk("keys", "export", "-o", signed_file, "--keys", league_store).returncode == 0
    lk = ls.league()["kid"]
    assert chalk("keys", "trust", signed_file, lk, "--keys", store).returncode == 0
    r = chalk("keys", "import", signed_file, "--keys", store)
    assert r.returncode == 1 and "already signs with key" in r.stderr and "--replace" in r.stderr
    old = KeyStore(store).board_key(league["device"])["kid"]
    r = chalk("keys", "import", signed_file, "--keys", store, "--replace", "0123456789abcdef")
    assert r.returncode == 1 and "names no key" in r.stderr
    # A file changed after the league signed it is refused whole.
    data = json.loads(signed_file.read_text())
    data["keys"][0]["device"] = "esp32-000000000001"
    tampered = write(tmp_path / "tampered.json", [json.dumps(data)])
    r = chalk("keys", "import", tampered, "--keys", store)
    assert r.returncode == 1 and "does not hold" in r.stderr
    # The forged log, signed by the rival's key and claiming this board, is broken.
    lines = lines_of(league["logs"][2])
    h = json.loads(lines[0])
    h["chain"]["signed"]["kid"] = rival.kid
    h["chain"]["signed"]["sig"] = rival.sign_head(
        league["device"], h["chain"]["signed"]["seq"], bytes.fromhex(h["chain"]["signed"]["head"]))
    lines[0] = json.dumps(h)
    forged = write(tmp_path / "forged.jsonl", lines)
    r = run_verify(league, forged, store=store)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "which is not board %s's" % league["device"] in r.stdout
    # With --replace naming the old key, loudly.
    r = chalk("keys", "import", signed_file, "--keys", store, "--replace", old)
    assert r.returncode == 0 and "REPLACED the key of board" in r.stdout, r.stdout + r.stderr


def test_enrolment_reads_the_key_from_the_board_and_a_clone_is_refused(league, tmp_path):
    """`chalk keys enrol`: the board signs a fresh challenge. A second board claiming the same
    device id (a clone: another key) is refused unless --replace names the enrolled key."""
    flash = tmp_path / "clone"
    flash.mkdir()
    (flash / "device_id").write_text(league["device"] + "\n")  # claims the league's board
    store = tmp_path / "keys.json"
    shutil.copy(league["store"], store)
    enrolled = KeyStore(store).board_key(league["device"])
    with Sim("five-pins", flash=flash) as clone:
        r = chalk("keys", "enrol", "--port", clone.port, "--keys", store)
        assert r.returncode == 1 and "already signs with key %s" % enrolled["kid"] in r.stderr
        r = chalk("keys", "enrol", "--port", clone.port, "--keys", store, "--replace",
                  enrolled["kid"])
        assert r.returncode == 0 and "REPLACED" in r.stdout, r.stdout + r.stderr
        # The private key never came over the link: only its public half is kept.
        kept = json.loads(store.read_text())
        assert all("priv" not in e and "key" not in e for e in kept["keys"]
                   if e["kind"] == "board")
        nvs_sk = (flash / "nvs" / "sk").read_bytes().hex()
        assert nvs_sk not in store.read_text()


def test_a_board_that_does_not_prove_its_key_is_not_enrolled():
    good = chainhost.SoftKey()
    challenge = "ab" * 32
    reply = {"device": "sim-1", "pub": good.pub, "kid": good.kid, "since": 1,
             "challenge": challenge}
    from scoreboard import signwork

    reply["sig"] = good.sign(signwork.enrol_message("sim-1", good.pub, 1, challenge))
    assert chainhost.enrol_ok(reply, challenge) is None
    assert "another challenge" in chainhost.enrol_ok(reply, "cd" * 32)  # a replayed reply
    other = dict(reply, pub=chainhost.SoftKey().pub)
    assert chainhost.enrol_ok(other, challenge) is not None  # a key it does not hold
    assert "not a point" in chainhost.enrol_ok(dict(reply, pub="00" * 64), challenge)
    assert chainhost.enrol_ok(dict(reply, device="sim-2"), challenge) is not None


# -- finished means signed at the end ----------------------------------------------------------

def test_a_rollback_to_a_mid_game_head_is_in_progress_never_finished(league, tmp_path):
    """Game 3 finished; the league gets it cut back to the head the board signed mid-game (the
    archiver asks for one at idle moments, so every mid-game export holds one)."""
    final = lines_of(league["logs"][3])
    mid = lines_of(league["mid"])
    assert json.loads(mid[0])["chain"]["signed"]["seq"] == league["mid_head"]["seq"]
    r = run_verify(league, league["mid"])
    assert r.returncode == verify.EXIT_IN_PROGRESS and "signed up to seq" in r.stdout
    # The final log with its end signature swapped for the mid-game one: still in progress.
    h = json.loads(final[0])
    h["chain"]["signed"] = json.loads(mid[0])["chain"]["signed"]
    rolled = write(tmp_path / "rolled.jsonl", [json.dumps(h)] + final[1:])
    r = run_verify(league, rolled)
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr
    assert "the end record (seq" in r.stdout and "is not signed" in r.stdout
    # The same in the archive: the heads row put back to the mid-game head.
    db = tmp_path / "a.db"
    shutil.copy(league["db"], db)
    import sqlite3

    con = sqlite3.connect(str(db))
    with con:
        m = league["mid_head"]
        con.execute("UPDATE heads SET seq = ?, head = ?, sig = ? WHERE game_id = ?",
                    (m["seq"], m["head"], m["sig"], game_id(db, 3)))
    con.close()
    r = chalk("verify", game_id(db, 3), "--db", db, "--keys", league["store"])
    assert r.returncode == verify.EXIT_IN_PROGRESS, r.stdout + r.stderr


# -- stripping is breaking ---------------------------------------------------------------------

def _edited(lines):
    i = next(i for i, ln in enumerate(lines) if '"shot"' in ln)
    rec = json.loads(lines[i])
    rec["pins"] = "12C"
    lines[i] = json.dumps(rec)
    return lines


@pytest.mark.parametrize("how", ["signature dropped", "chain stripped", "edited, signature "
                                 "dropped", "edited, chain stripped", "sig null"])
def test_a_stripped_forgery_is_broken(league, tmp_path, how):
    lines = lines_of(league["logs"][2])
    if "edited" in how:
        lines = _edited(lines)
    h = json.loads(lines[0])
    if "chain" in how:
        h.pop("chain")
        lines = [json.dumps({k: v for k, v in json.loads(ln).items() if k != "link"})
                 for ln in lines[1:]]
        lines.insert(0, json.dumps(h))
    elif "null" in how:
        h["chain"]["signed"]["sig"] = None
        lines[0] = json.dumps(h)
    else:
        h["chain"].pop("signed")
        lines[0] = json.dumps(h)
    path = write(tmp_path / "stripped.jsonl", lines)
    r = run_verify(league, path)
    assert r.returncode == verify.EXIT_BROKEN, r.stdout + r.stderr
    assert "stripped" in r.stdout
    # A store that does not know the board can only say "not signed" (exit 3).
    r = run_verify(league, path, store=tmp_path / "empty.json")
    assert r.returncode in (verify.EXIT_UNSIGNED, verify.EXIT_BROKEN), r.stdout


def test_a_downgrade_to_a_legacy_key_is_broken(league, tmp_path):
    """The pub still holds the HMAC key an old `chalk deploy` made for this board, re-signs an
    edited game with it, and gets the league to keep that key (as legacy)."""
    store = tmp_path / "keys.json"
    shutil.copy(league["store"], store)
    legacy = bytes(range(32))
    kf = write(tmp_path / "legacy.json", [json.dumps({"chalk_keys": 1, "keys": [
        {"device": league["device"], "key": legacy.hex()}]})])
    r = chalk("keys", "import", kf, "--keys", store)
    assert r.returncode == 1 and "--legacy" in r.stderr  # no proof: not without saying so
    r = chalk("keys", "import", kf, "--legacy", "--keys", store)
    assert r.returncode == 0 and "the pub holds this key" in r.stdout
    lines = _edited(lines_of(league["logs"][2]))
    # Every link worked out again (anyone can: SHA-256 needs no key), then signed with it.
    c = verify.read_log(lines)[0]
    h = json.loads(lines[0])
    out = [None]
    link = chain.step(chain.ZERO, chain.record(c.header_seq, "H", c.header))
    h["chain"]["link"] = chain.hexlify(link)
    for _seq, rec in c.actions:
        link = chain.step(link, chainhost.of_rec(rec))
        out.append(json.dumps(dict(rec, link=chain.hexlify(link))))
    end_seq, end = c.end
    link = chain.step(link, chain.record(end_seq, "E", end))
    h["chain"]["end"]["link"] = chain.hexlify(link)
    h["chain"]["signed"] = {"seq": end_seq, "head": chain.hexlify(link),
                            "kid": chainhost.legacy_key_id(legacy),
                            "sig": chainhost.legacy_sign(legacy, league["device"], end_seq, link)}
    out[0] = json.dumps(h)
    path = write(tmp_path / "downgraded.jsonl", out)
    r = run_verify(league, path, store=store)
    assert r.returncode == verify.EXIT_BROKEN, r.stdout + r.stderr
    assert "downgraded" in r.stdout


# -- everything covered ------------------------------------------------------------------------

def test_an_added_header_key_is_caught(league, tmp_path):
    lines = lines_of(league["logs"][2])
    h = json.loads(lines[0])
    h["event"] = "County Cup, round 3"  # a friendly passed off as a cup game
    plain = write(tmp_path / "added.jsonl", [json.dumps(h)] + lines[1:])
    r = run_verify(league, plain)
    assert r.returncode == verify.EXIT_BROKEN and "chain link does not hold" in r.stdout
    h["chain"]["added"] = ["event"]  # declared as added by the archive: not covered
    marked = write(tmp_path / "marked.jsonl", [json.dumps(h)] + lines[1:])
    r = run_verify(league, marked)
    assert r.returncode == verify.EXIT_BROKEN, r.stdout + r.stderr
    assert "header key event is not in the board's chain" in r.stdout
    # A key on an action line is covered too, whatever its name.
    lines[2] = lines[2][:-1] + ', "kid": "x"}'
    r = run_verify(league, write(tmp_path / "action.jsonl", lines))
    assert r.returncode == verify.EXIT_BROKEN


@pytest.mark.parametrize("sig", ["\u00e9" * 128, "ab" * 63, "AB" * 64, "zz" * 64, 12345,
                                 ["ab"], {"r": 1}, "", "ab" * 640, "\U0001f3b1"])
def test_every_hostile_sig_is_one_clear_line(league, tmp_path, sig):
    lines = lines_of(league["logs"][2])
    h = json.loads(lines[0])
    h["chain"]["signed"]["sig"] = sig
    path = write(tmp_path / "hostile.jsonl", [json.dumps(h)] + lines[1:])
    r = run_verify(league, path)
    assert r.returncode == verify.EXIT_BROKEN, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    bad = [ln for ln in r.stdout.splitlines() if "signature" in ln]
    assert len(bad) == 1 and len(bad[0]) < 300, r.stdout


@pytest.mark.parametrize("field,value", [("kid", "\u00e9" * 16), ("kid", None), ("seq", "3"),
                                         ("seq", 10 ** 30), ("head", 7), ("head", "00" * 32)])
def test_hostile_signed_heads_are_broken_not_tracebacks(league, tmp_path, field, value):
    lines = lines_of(league["logs"][2])
    h = json.loads(lines[0])
    h["chain"]["signed"][field] = value
    r = run_verify(league, write(tmp_path / "h.jsonl", [json.dumps(h)] + lines[1:]))
    assert r.returncode == verify.EXIT_BROKEN and "Traceback" not in r.stderr, r.stdout


# -- a chain of games per board ----------------------------------------------------------------

def test_a_hidden_game_is_reported(league):
    logs = league["logs"]
    r = run_verify(league, logs[2], logs[4])  # game 3, lost, left out
    assert r.returncode == verify.EXIT_SEQUENCE, r.stdout + r.stderr
    assert "game 3 is missing from the sequence" in r.stdout


def test_a_repeated_game_is_reported(league):
    logs = league["logs"]
    r = run_verify(league, logs[2], logs[3], logs[3])  # the won game sent twice
    assert r.returncode == verify.EXIT_SEQUENCE, r.stdout + r.stderr
    assert "game 3 is given 2 times" in r.stdout


def test_a_rewound_board_shows_as_two_games_with_one_predecessor(league, tmp_path):
    """The board's flash (journal and NVS) put back as it was before game 5, and another game
    5 played: two games claim game 4 as their predecessor."""
    flash = tmp_path / "flash"
    shutil.copytree(league["dir"] / "flash-copy", flash)
    # Back to just after game 4's end: game 5's file is dropped, NVS as it was then.
    for f in sorted(flash.glob("g*.jnl"))[-1:]:
        f.unlink()
    with Sim("five-pins", flash=flash, test_mode=True) as sim:
        link = BoardLink(open_port(sim.port), sim.port)
        link.hello()
        play(link, SHOTS, ("Ivo", "Jo"))  # ends the game 5 it started at boot, plays game 6
        link.close()
        db = tmp_path / "other.db"
        assert chalk("archive", "--once", "--port", sim.port, "--db", db).returncode == 0
    out = tmp_path / "rewound.jsonl"
    assert chalk("export", game_id(db, 5), "--db", db, "-o", out).returncode == 0
    assert json.loads(lines_of(out)[0])["prev"]["game_no"] == 4
    r = run_verify(league, league["logs"][5], out)
    assert r.returncode == verify.EXIT_SEQUENCE, r.stdout + r.stderr
    assert "claim game 4 as the one before them" in r.stdout
    assert "2 different games are numbered 5" in r.stdout


# -- older boards -------------------------------------------------------------------------------

def test_a_legacy_hmac_log_verifies_as_legacy_never_as_a_board_key(tmp_path):
    from chalk.store import board_records, sign_records

    key = bytes(range(40, 72))
    head = {"chalk": 1, "game": "five-pins", "config": {"target": 6, "sets": 1,
                                                         "pin_foul_penalty": 0},
            "players": ["Ann", "Bob"], "device": "esp32-00aa11bb22cc", "board": "five-pins",
            "game_no": 1}
    recs, states = board_records(head, [dict(a, t=0) for a in SHOTS])
    sign_records(recs, key, head["device"])
    db = tmp_path / "old.db"
    with Archive(db, create=True) as a:
        b = a.board({"device": head["device"], "board": "five-pins", "game": "five-pins"})
        a.ingest(b, recs, states)
    out = tmp_path / "old.jsonl"
    assert chalk("export", 1, "--db", db, "-o", out).returncode == 0
    assert json.loads(lines_of(out)[0])["chain"]["v"] == 1
    store = tmp_path / "keys.json"
    store.write_text(json.dumps({"chalk_keys": 1, "keys": [{"device": head["device"],
                                                            "key": key.hex()}]}))
    r = chalk("verify", out, "--keys", store)
    assert r.returncode == verify.EXIT_LEGACY, r.stdout + r.stderr
    assert "LEGACY: signed by legacy key" in r.stdout and "the pub holds this key" in r.stdout
    r = chalk("verify", "--db", db, "--keys", store)
    assert r.returncode == verify.EXIT_LEGACY, r.stdout + r.stderr
    r = chalk("keys", "list", "--keys", store)
    assert "legacy key" in r.stdout and "the pub holds this key" in r.stdout


# -- the library a league's automatic checks call ----------------------------------------------

def test_the_verdict_library(league):
    store = KeyStore(league["store"])
    text = league["logs"][3].read_text(encoding="utf-8")
    v = verify.verdict_of_log(text, store, name="mailed-in")
    assert (v.grade, v.code, v.finished, v.device, v.game_no) == (
        "ok-finished", 0, True, league["device"], 3)
    assert v.prev["game_no"] == 2 and v.key == "board" and v.seq == v.end_seq == v.last
    v5 = verify.verdict_of_log(league["logs"][5], store)
    assert v5.grade == "ok-in-progress" and not v5.finished and v5.seq is not None
    bad = verify.verdict_of_log("not json\n", store)
    assert bad.grade == "unreadable" and bad.code == 2 and bad.reasons
    vs = [verify.verdict_of_log(league["logs"][i], store) for i in (2, 4, 4)]
    kinds = sorted(p.kind for p in verify.check_set(vs))
    assert kinds == ["missing", "repeated"]
    # From the records a board sends (what an automatic collector gets), not a file.
    with Archive(league["db"]) as a:
        g = a.game(game_id(league["db"], 4))
        recs = [{"seq": g["seq"], "type": "H", "header": g["header"]}]
        recs += [json.loads(line) for _s, _t, line in a.actions(g["id"])]
        recs.append({"seq": g["end_seq"], "type": "E", "end": g["end"]})
        signed = a.head(g["id"])
    v = verify.verdict_of_records(recs, store, signed, source="game 4")
    assert v.grade == "ok-finished", v.reasons
    assert verify.verdict_of_records(recs, store, None).grade == "broken"  # stripped
    assert verify.verdict_of_records(recs[:-1], store, signed).grade == "broken"  # cut


def test_keys_list_names_each_kind(league, tmp_path):
    store = tmp_path / "keys.json"
    shutil.copy(league["store"], store)
    assert chalk("keys", "league", "County", "--keys", store).returncode == 0
    r = chalk("keys", "list", "--keys", store)
    assert "board key" in r.stdout and "enrolled over USB" in r.stdout
    assert "league County" in r.stdout and "this store's own" in r.stdout
    assert keys.KeyStore(store).league() is not None


def test_every_grade_is_one_name_in_verify_the_league_and_the_docs():
    """The grades verify gives are the ones the league files, says in words and counts by,
    and the ones docs/league.md and docs/mqtt.md (the acks' verdict) name."""
    from pathlib import Path

    from chalk import leaguecheck

    docs = Path(__file__).resolve().parent.parent / "docs"
    league_md = (docs / "league.md").read_text(encoding="utf-8")
    mqtt_md = (docs / "mqtt.md").read_text(encoding="utf-8")
    assert set(leaguecheck.WORDS) == set(verify.GRADES) == set(leaguecheck.GRADES)
    assert set(leaguecheck.COUNTABLE) <= set(verify.AUTHENTIC) <= set(verify.GRADES)
    for grade, code in verify.GRADES.items():
        assert "| `%s` |" % grade in league_md and "(%d) |" % code in league_md, grade
        assert "`%s`" % grade in mqtt_md, grade
    for old in ('"in_progress"', '"unknown_key"', '"finished" 0'):
        assert old not in league_md, old
