"""Results leave the pub, end to end: two venues, each with its own Mosquitto broker and
`chalk serve` on simulated boards, bridged to the league's broker, and `chalk league run`.
The line from one venue to the league is cut and mended, the league is killed and started
again, one venue's PC is killed mid-night (its board keeps scoring), the league's broker is
restarted; then a venue cheats: a forged game, a replayed game and a hidden game. The league
must hold every finished game exactly once, verified, with the standings its rules give, and
report the three cheats without a point changing for them. Every wait is on an event (a
message, an archive row, a page's answer) with a deadline."""

import json
import sqlite3
import subprocess
import sys

from chalk import mqttconf
from chalk.export import jsonl
from chalk.sim import Sim
from chalk.store import Archive
from tests.leaguehelp import (
    LeagueProc,
    expected_table,
    league_config,
    play,
    play_direct,
)
from tests.mqttbroker import ROOT, Broker, Link, Serve, Subscriber, add_user, wait_until

PLAYERS = ("Ann", "Bob", "Cy", "Di")
TOKEN = "crown-secret-token-0123456789"


def chalk(*args, env=None):
    return subprocess.run([sys.executable, "-m", "chalk.cli"] + [str(a) for a in args],
                          capture_output=True, text=True, cwd=str(ROOT), env=env, timeout=120)


def counted_ids(games):
    return {(g["device"], g["game_no"]) for g in games if g["status"] == "counted"}


def test_two_venues_bridged_to_a_league_every_game_once_through_every_fault(tmp_path):
    import os

    # -- the league's broker: users and an ACL (each venue writes under its own id only) ----
    ldir = tmp_path / "league"
    ldir.mkdir()
    passwd = ldir / "passwd"
    for user, pw in (("crown", "crown-pw"), ("swan", "swan-pw"), ("league", "league-pw")):
        add_user(ldir, passwd, user, pw)
    acl = ldir / "acl"
    r = chalk("league", "acl", "-o", acl)
    assert r.returncode == 0, r.stderr
    lb = Broker(tmp_path, "league-broker", anonymous=False, persistence=True,
                extra="password_file %s\nacl_file %s\n" % (passwd, acl)).start()
    line = Link(lb.port)  # the crown's internet line to the league
    bridges = {}
    for venue, port in (("crown", line.port), ("swan", lb.port)):
        pwf = tmp_path / ("%s.pw" % venue)
        pwf.write_text("%s-pw\n" % venue)
        r = chalk("league", "bridge-config", "--venue", venue, "--league",
                  "127.0.0.1:%d" % port, "--password-file", pwf)
        assert r.returncode == 0, r.stderr
        assert "topic chalk/v1/venue/%s/game/# out 1" % venue in r.stdout
        bridges[venue] = r.stdout
    vb = {v: Broker(tmp_path, "%s-broker" % v, extra=bridges[v]).start()
          for v in ("crown", "swan")}
    sims = {}
    servers = {}
    league = None
    watch = None
    try:
        keys = {v: str(tmp_path / ("%s-keys.json" % v)) for v in ("crown", "swan")}
        for name, venue in (("window", "crown"), ("snug", "crown"), ("bar", "swan")):
            sims[name] = Sim("five-pins", flash=tmp_path / name, test_mode=True,
                             keys=keys[venue])
            sims[name].start()
        device = {n: (tmp_path / n / "device_id").read_text().strip() for n in sims}
        venue_of = {"window": "crown", "snug": "crown", "bar": "swan"}
        cfg = league_config(
            ldir / "league.json", {},
            {"crown": {"name": "The Crown", "token": TOKEN}, "swan": {"name": "The Swan"}},
            PLAYERS, broker={"host": "127.0.0.1", "port": lb.port, "username": "league",
                             "password": "league-pw"})
        r = chalk("league", "check", "--config", cfg)  # no board yet
        assert r.returncode == 0, r.stdout + r.stderr
        # The league's enrolment night: each board on USB signs a fresh challenge with its own
        # key, and the league keeps its public key and the board's venue.
        for n in sims:
            r = chalk("league", "enrol", "--port", sims[n].port, "--venue", venue_of[n],
                      "--config", cfg)
            assert r.returncode == 0, r.stdout + r.stderr
            assert "board %s enrolled at %s" % (device[n], venue_of[n]) in r.stdout
            assert "enrolled over USB" in r.stdout
        r = chalk("league", "check", "--config", cfg)
        assert r.returncode == 0, r.stdout + r.stderr
        held = json.loads((ldir / "keys.json").read_text())["keys"]
        assert sorted(e["device"] for e in held) == sorted(device.values())
        assert all(e["kind"] == "board" for e in held)
        mqtt_conf = {}
        for v in ("crown", "swan"):
            mqtt_conf[v] = tmp_path / ("%s-mqtt.json" % v)
            conf = {"chalk_mqtt": 1, "venue": v, "leagues": ["north"], "resend_seconds": 3,
                    "broker": {"host": "127.0.0.1", "port": vb[v].port}}
            if v == "crown":
                conf["league_token"] = TOKEN
            mqtt_conf[v].write_text(json.dumps(conf))

        def serve(v):
            tables = [(n, sims[n].port) for n in sims if venue_of[n] == v]
            return Serve(tmp_path / ("serve-%s" % v), tables,
                         ["--mqtt-config", mqtt_conf[v]], env={"CHALK_KEYS": keys[v]}).start()
        for v in ("crown", "swan"):
            servers[v] = serve(v)
        for n in sims:
            servers[venue_of[n]].wait_table(n, lambda t: t["connected"])
        league = LeagueProc(cfg).start()
        watch = Subscriber(lb.port, [mqttconf.league_topic("north", "standings")],
                           username="league", password="league-pw")
        results = []
        seed = iter(range(100, 1000))

        def game(table, a, b):
            results.append(play(servers[venue_of[table]], table, (a, b), next(seed)))
            results[-1]["device"] = device[table]

        # Each table's first game (the board's own, before anyone) ends unplayed: abandoned.
        game("window", "Ann", "Bob")
        game("bar", "Cy", "Di")
        game("window", "Cy", "Ann")  # ends Ann v Bob: it is now finished and signed
        game("bar", "Bob", "Di")
        league.wait_games(lambda g: len(counted_ids(g)) >= 2, what="the first two games")

        # -- the crown's line goes down, and the league process dies ------------------------
        line.cut()
        game("snug", "Ann", "Di")
        game("window", "Bob", "Cy")  # ends Cy v Ann, which waits at the crown
        league.stop(kill=True)
        game("bar", "Ann", "Cy")  # ends Bob v Di: queued at the league broker for the league
        league.start()
        line.mend()
        league.wait_games(lambda g: len(counted_ids(g)) >= 4, what="games after the line "
                          "and the league came back")

        # -- the swan's PC dies; its board plays on ----------------------------------------
        servers["swan"].stop(kill=True)
        results.append(play_direct(sims["bar"].port, ("Bob", "Ann"), next(seed), end=False))
        results[-1]["device"] = device["bar"]
        # (the Ann v Cy game ended at the `new` above: both wait on the board's journal)
        servers["swan"] = serve("swan")
        servers["swan"].wait_table("bar", lambda t: t["connected"])
        game("bar", "Di", "Cy")  # ends Bob v Ann
        # -- the league's broker restarts, then the crown's (and with it the bridge) -------
        lb.restart()
        game("snug", "Bob", "Cy")  # ends Ann v Di
        vb["crown"].restart()
        game("window", "Di", "Ann")  # ends Bob v Cy
        for n in sims:
            servers[venue_of[n]].new(n, "five-pins", [], {"target": 8, "sets": 3})
        finished = [r for r in results if r["winner"] is not None]
        assert len(finished) == len(results)
        # the last game at each table is ended by the `new` just made
        league.wait_games(lambda g: len(counted_ids(g)) >= len(results),
                          what="all %d games" % len(results), timeout=180)

        # -- a venue cheats ------------------------------------------------------------------
        cheat = Subscriber(lb.port, [], username="crown", password="crown-pw")
        crown_db = tmp_path / "serve-crown" / "archive.sqlite3"
        with Archive(crown_db) as db:
            done = [g for g in db.games() if g["end_seq"] and g["header"].get("players")]
            honest = jsonl(db, done[0])
        lines = honest.splitlines()
        rec = json.loads(lines[3])
        rec["pins"] = "1234C"  # a better shot than the one played
        forged = "\n".join(lines[:3] + [json.dumps(rec)] + lines[4:]) + "\n"
        cheat.publish(mqttconf.venue_topic("crown", "game", "9001"), forged)
        cheat.publish(mqttconf.venue_topic("crown", "game", "9002"), honest)  # a replay
        # The crown hides a game it lost: its PC is stopped, the game is archived by hand and
        # marked sent in the outbox, then the next game is played and sent as usual.
        servers["crown"].stop()
        hidden = play_direct(sims["snug"].port, ("Cy", "Di"), next(seed))
        r = chalk("archive", "--once", "--port", sims["snug"].port, "--db", crown_db,
                  env=dict(os.environ, CHALK_KEYS=keys["crown"]))
        assert r.returncode == 0, r.stderr
        with sqlite3.connect(crown_db) as c:
            gid = c.execute("SELECT MAX(id) FROM games WHERE end_seq IS NOT NULL").fetchone()[0]
            c.execute("INSERT INTO outbox (kind, game_id, queued, acked) VALUES "
                      "('game', ?, 'now', 'now')", (gid,))
        servers["crown"] = serve("crown")
        servers["crown"].wait_table("snug", lambda t: t["connected"])
        game("snug", "Ann", "Bob")
        servers["crown"].new("snug", "five-pins", [], {"target": 8, "sets": 3})

        reports = wait_until(lambda: (lambda r: r if any(
            s["kind"] == "missing" for s in r["sequences"]) else None)(
                league.get("/api/reports")), 120, "the hidden game to be reported")
        games = league.wait_games(lambda g: len(counted_ids(g)) >= len(results) and any(
            x["verdict"] == "broken" for x in g), what="every game and the forgery")
        reports = league.get("/api/reports")

        # -- what the league holds --------------------------------------------------------
        authentic = [g for g in games if g["verdict"] == "ok-finished"]  # board-held keys
        claims = [(g["device"], g["game_no"]) for g in authentic]
        assert len(claims) == len(set(claims)), "a game filed twice: %s" % claims
        want = {(r["device"], r["players"][0], r["players"][1], r["winner"]) for r in results}
        got = {(g["device"], g["sides"][0][0], g["sides"][1][0], g["winner"]) for g in games
               if g["status"] == "counted"}
        assert got == want
        forged_g = [g for g in games if g["verdict"] == "broken"]
        assert len(forged_g) == 1 and forged_g[0]["status"] == "not counted"
        assert any(r["kind"] == "replayed" for r in reports["reports"]), reports["reports"]
        missing = [s for s in reports["sequences"] if s["kind"] == "missing"]
        assert len(missing) == 1 and missing[0]["device"] == device["snug"], missing
        table = {row["name"]: row for row in league.get("/api/standings")["standings"]}
        exp = expected_table(results, PLAYERS)
        for p in PLAYERS:
            assert (table[p]["played"], table[p]["won"], table[p]["lost"], table[p]["points"],
                    table[p]["sets_difference"]) == (
                exp[p]["played"], exp[p]["won"], exp[p]["lost"], exp[p]["points"],
                exp[p]["sets"]), (p, table[p], exp[p])
        points = [table[p]["points"] for p in sorted(table, key=lambda n: table[n]["pos"])]
        assert points == sorted(points, reverse=True)
        # The standings message agrees, retained for anyone subscribing.
        last = watch.json("/standings", lambda b: {r["name"]: r["points"] for r in
                                                   b["standings"]} ==
                          {p: exp[p]["points"] for p in PLAYERS}, timeout=60)
        assert "problems" in last
        # Each venue's outbox: every game acknowledged (the hidden one by the cheat itself).
        def waiting(db):
            with sqlite3.connect(db) as c:
                return c.execute("SELECT COUNT(*) FROM outbox WHERE acked IS NULL").fetchone()[0]
        for v in ("crown", "swan"):
            db = tmp_path / ("serve-%s" % v) / "archive.sqlite3"
            wait_until(lambda db=db: waiting(db) == 0, 60, "the %s outbox to empty" % v)
        # The pages say it in words.
        page = league.get("/")
        assert "not received" in page and "came again" in page
        assert "does not verify" in page
        assert hidden["winner"] is not None
        cheat.close()
    finally:  # everything stopped, whatever failed: nothing left running after the test
        parts = ([watch.close] if watch is not None else []) + (
            [league.stop] if league is not None else []) + [
            s.stop for s in servers.values()] + [s.stop for s in sims.values()] + [
            b.stop for b in vb.values()] + [line.close, lb.stop]
        for stop in parts:
            try:
                stop()
            except Exception:
                pass
