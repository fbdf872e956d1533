"""`chalk league run`: the league collects, verifies, files, acknowledges and ranks.

It subscribes to the league's broker (each venue's broker bridged to it, chalk/mqtt_bridge.py)
with a persistent session, so games sent while it is down wait at the broker; and whatever
the broker loses, the venues send again until acknowledged. For each game received:

1. a resend of what is filed already (same venue, message and bytes) is acknowledged again,
   and that is all: a duplicate changes nothing;
2. the same game sent again under another message, or by another venue (the same bytes, or the
   same signed end) is a replay: noted, acknowledged, never counted twice;
3. anything else is verified (chalk/leaguecheck.py), filed in the league's archive with its
   verdict (a forgery too: it is shown, never counted), and acknowledged once stored;
4. a second, different game claiming a board's game number already held is a fork: both are
   disputed by the league until a person resolves them.

Disputes come from venues (with the token the league gave them) and from the league itself
(`chalk league dispute`, the API); they are records beside the game. After every change the
standings are published, retained, on chalk/v1/league/<id>/standings.
"""

import hashlib
import json
import queue
import secrets
import threading
import time

from chalk import leaguecheck, leaguerank, mqttconf
from chalk.errors import ChalkError
from chalk.leaguedb import LeagueDB, now_iso
from chalk.mqttconf import league_topic, venue_topic

SCHEMA = 1
MAX_PAYLOAD = leaguecheck.MAX_LOG


def load_keys(league):
    from chalk.keys import KeyStore

    return KeyStore(league.keys)


class Collector:
    """The league's worker: takes messages from the broker, one at a time, in its own thread."""

    def __init__(self, league, db_path, broker, say=print):
        self.league = league
        self.db_path = db_path
        self.say = say
        self.inbox = queue.Queue()
        self.stop_event = threading.Event()
        self.venues = {}  # venue id -> {"status": online/offline, "since": iso}
        self.counts = {"received": 0, "filed": 0, "duplicates": 0, "replays": 0, "forks": 0,
                       "acks": 0, "disputes": 0, "refused": 0}
        self.filed_at = {}  # game id -> time.monotonic() when filed (for the bench)
        self.thread = threading.Thread(target=self._run, name="league", daemon=True)
        self.conn = mqttconf.Connection(
            broker, "chalk-league-%s" % league.id, on_up=self._up, on_message=self._message,
            will=(league_topic(league.id, "status"), "offline"))
        self._standings_version = None
        self._keys_mtime = None
        self.keys = None
        self.published = threading.Event()  # set after each standings message

    def start(self):
        self.thread.start()
        self.conn.start()

    def stop(self):
        self.stop_event.set()
        self.inbox.put(None)
        self.thread.join(10)
        self.conn.stop(last=(league_topic(self.league.id, "status"), "offline"))

    def _up(self, client):
        v = "/".join((mqttconf.ROOT, mqttconf.TOPIC_VERSION, "venue"))
        client.subscribe([(v + "/+/game/+", 1), (v + "/+/dispute/+", 1), (v + "/+/status", 1)])
        client.publish(league_topic(self.league.id, "status"), "online", qos=1, retain=True)
        self.inbox.put(("standings",))

    def _message(self, topic, payload, retained):
        self.inbox.put(("msg", topic, bytes(payload)))

    # -- the worker ------------------------------------------------------------------------
    def _run(self):
        db = None
        while not self.stop_event.is_set():
            try:
                if db is None:
                    db = LeagueDB(self.db_path, create=True)
                    self._keys_mtime = None
                    self._fresh_keys()
                    self._reverify(db)
                    self._publish_standings(db, force=True)
                try:
                    item = self.inbox.get(timeout=1.0)
                except queue.Empty:
                    item = ("idle",)
                if item is None:
                    break
                if item[0] == "msg":
                    self._take(db, item[1], item[2])
                # Our own writes, or the standings asked for; data_version shows the writes of
                # others (a dispute from `chalk league dispute`).
                self._publish_standings(db, force=item[0] in ("standings", "msg"))
            except ChalkError as e:  # a busy archive: this message comes again (no ack)
                self.say("league: %s" % e.message)
                time.sleep(0.5)
            except Exception as e:  # never a dead worker: say it, go on with the next
                self.say("league: could not take a message: %s: %s" % (type(e).__name__, e))
        if db is not None:
            db.close()

    def _take(self, db, topic, payload):
        parts = topic.split("/")
        if len(parts) == 5 and parts[2] == "venue" and parts[4] == "status":
            state = payload.decode("utf-8", "replace").strip()[:20]
            self.venues[parts[3]] = {"status": state, "since": now_iso()}
            return
        if len(parts) != 6 or parts[2] != "venue" or parts[4] not in ("game", "dispute"):
            return
        venue, kind, msg_id = parts[3], parts[4], parts[5]
        self.counts["received"] += 1
        if venue not in self.league.venues:
            self._refuse(db, venue, msg_id, kind, "%s %s from %s, which is not a venue of this "
                         "league" % ("a game" if kind == "game" else "a dispute", msg_id,
                                     venue), ack=True)
            return
        if kind == "game":
            self._game(db, venue, msg_id, payload)
        else:
            self._dispute(db, venue, msg_id, payload)

    def _ack(self, venue, msg_id, sha, verdict, status, words):
        body = {"v": SCHEMA, "id": int(msg_id) if msg_id.isdigit() else msg_id, "sha256": sha,
                "league": self.league.id, "verdict": verdict, "status": status,
                "words": words}
        self.conn.publish(venue_topic(venue, "ack", msg_id),
                          json.dumps(body, ensure_ascii=False, separators=(",", ":")), qos=1)
        self.counts["acks"] += 1

    def _refuse(self, db, venue, msg_id, kind, text, ack):
        self.counts["refused"] += 1
        if not db.q("SELECT 1 FROM reports WHERE kind = 'refused' AND venue IS ? AND text = ?",
                    (venue, text)):
            db.report("refused", text, venue=venue)
            self.say("league: refused %s" % text)
        if ack:
            self._ack(venue, msg_id, None, None, "refused", text)

    def _game(self, db, venue, msg_id, payload):
        sha = hashlib.sha256(payload).hexdigest()
        if len(payload) > MAX_PAYLOAD:
            self._refuse(db, venue, msg_id, "game", "game %s from %s is larger than %d MB" % (
                msg_id, venue, MAX_PAYLOAD // 2**20), ack=False)
            self._ack(venue, msg_id, sha, "unreadable", "refused", "too large")
            return
        gid = db.received(venue, msg_id, sha)
        if gid is not None:  # a resend: acknowledged again, nothing else
            self.counts["duplicates"] += 1
            db.receipt(gid, venue, msg_id, sha, "again")
            return self._ack_game(db, venue, msg_id, sha, gid)
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        same = db.by_sha(sha)
        if same is not None:
            return self._replay(db, venue, msg_id, sha, same)
        self._fresh_keys()
        verdict = (leaguecheck.check_log(text, self.keys) if text is not None else
                   leaguecheck.Verdict("unreadable", reasons=["the log is not UTF-8 text"]))
        if verdict.finished and verdict.device and verdict.game_no is not None:
            rivals = [g for g in db.games("WHERE device = ? AND game_no = ?",
                                          (verdict.device, verdict.game_no))
                      if g["verdict"] and g["verdict"]["grade"] in leaguecheck.AUTHENTIC
                      and g["verdict"]["finished"]]
            twin = [g for g in rivals if g["end_head"] == verdict.end_head]
            if twin:
                return self._replay(db, venue, msg_id, sha, twin[0]["id"])
        else:
            rivals = []
        gid = db.file(venue, msg_id, sha, text if text is not None else
                      payload.decode("utf-8", "replace"), verdict)
        self.filed_at[gid] = time.monotonic()
        self.counts["filed"] += 1
        if rivals:
            self.counts["forks"] += 1
            others = ", ".join(str(g["id"]) for g in rivals)
            text = ("board %s game #%d: game %d differs from game%s %s filed before (a board "
                    "rewound or cloned, or a forgery signed with the board's key)" % (
                        verdict.device, verdict.game_no, gid, "" if len(rivals) == 1 else "s",
                        others))
            db.report("forked", text, game_id=gid, other_id=rivals[0]["id"], venue=venue)
            for g in [gid] + [g["id"] for g in rivals]:
                db.dispute(g, "league", "two different games claim board %s game #%d: accept "
                           "the true one and void the other" % (verdict.device, verdict.game_no),
                           msg="fork-%s-%s-%d" % (verdict.device, verdict.game_no, g))
            self.say("league: %s" % text)
        elif verdict.grade == "legacy" and self.league.legacy == "pending":
            db.dispute(gid, "league", "signed with a legacy key, which the pub holds: accept "
                       "it if the result is known to be true", msg="legacy-%d" % gid)
        self._ack_game(db, venue, msg_id, sha, gid)

    def _replay(self, db, venue, msg_id, sha, gid):
        self.counts["replays"] += 1
        g = db.game(gid)
        db.receipt(gid, venue, msg_id, sha, "replayed")
        text = ("game %d (board %s #%s) came again from %s as message %s: filed once, counted "
                "once" % (gid, g["device"], g["game_no"], venue, msg_id))
        db.report("replayed", text, game_id=gid, venue=venue)
        self.say("league: %s" % text)
        self._ack_game(db, venue, msg_id, sha, gid)

    def _ack_game(self, db, venue, msg_id, sha, gid):
        g = db.game(gid)
        a = leaguerank.assess(self.league, [g], db.disputes())[0]
        self._ack(venue, msg_id, sha, (g["verdict"] or {}).get("grade"), a.status, a.why)

    def _dispute(self, db, venue, msg_id, payload):
        from chalk.mqtt_outbox import check_note

        sha = hashlib.sha256(payload).hexdigest()
        try:
            body = json.loads(payload.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None
        if type(body) is not dict or not isinstance(body.get("game"), dict):
            return self._refuse(db, venue, msg_id, "dispute", "dispute %s from %s is not a "
                                "Chalk dispute message" % (msg_id, venue), ack=True)
        token = self.league.venues[venue].get("token")
        given = body.get("token")
        if not token or type(given) is not str or not secrets.compare_digest(
                given.encode("utf-8", "replace"), token.encode()):
            return self._refuse(db, venue, msg_id, "dispute", "a dispute from %s without its "
                                "venue token (or with a wrong one): not recorded" % venue,
                                ack=True)
        try:
            note = check_note(body.get("note"))
        except ChalkError as e:
            return self._refuse(db, venue, msg_id, "dispute", "dispute %s from %s: %s" % (
                msg_id, venue, e.message), ack=True)
        ref = body["game"]
        gid = db.by_sha(ref.get("sha256")) if type(ref.get("sha256")) is str else None
        if gid is None and type(ref.get("device")) is str and type(ref.get("game_no")) is int:
            ids = [g["id"] for g in db.games("WHERE device = ? AND game_no = ?",
                                             (ref["device"], ref["game_no"]))]
            gid = ids[-1] if ids else None
        if gid is None:  # the game is on its way, perhaps: not acknowledged, so sent again
            return self._refuse(db, venue, msg_id, "dispute", "a dispute from %s of board %s "
                                "game #%s, which the league has not received (yet)" % (
                                    venue, ref.get("device"), ref.get("game_no")), ack=False)
        did = db.dispute(gid, venue, note, msg=msg_id)
        self.counts["disputes"] += 1
        self.say("league: game %d disputed by %s: %s" % (gid, venue, note))
        self._ack(venue, msg_id, sha, None, "pending", "dispute %d recorded: game %d is "
                  "pending until the league resolves it" % (did, gid))

    def _fresh_keys(self):
        """The key store read again when it changed (a board enrolled while this runs)."""
        try:
            mtime = self.league.keys.stat().st_mtime_ns
        except OSError:
            mtime = None
        if mtime != self._keys_mtime or getattr(self, "keys", None) is None:
            self.keys = load_keys(self.league)
        self._keys_mtime = mtime

    def _reverify(self, db):
        """Games whose board's key was not known when they came, and those filed before the
        league kept the boards' chains of games: checked again."""
        for g in db.games():
            v = g["verdict"]
            if v and (v["grade"] == "unknown-key" or _chainless(v)):
                again = leaguecheck.check_log(db.log(g["id"]), self.keys)
                if again.grade != v["grade"] or _chainless(v):
                    db.add_verdict(g["id"], again)
                    self.say("league: game %d verified again: %s" % (g["id"], again.words()))

    def _publish_standings(self, db, force=False):
        version = db.version()
        if not force and version == self._standings_version:
            return
        if not self.conn.up.is_set():
            return
        self._standings_version = version
        body = snapshot(self.league, db)
        body["venues"] = dict(self.venues)
        self.conn.publish(league_topic(self.league.id, "standings"),
                          json.dumps(body, ensure_ascii=False, separators=(",", ":")),
                          qos=1, retain=True)
        self.published.set()


def snapshot(league, db):
    """The standings and what the league noticed, as the API and the MQTT message give them."""
    games = db.games()
    assessed = leaguerank.assess(league, games, db.disputes())
    rows = leaguerank.standings(league, assessed)
    counts = {}
    for a in assessed:
        counts[a.status] = counts.get(a.status, 0) + 1
    return {"v": SCHEMA, "league": league.id, "name": league.name, "updated": now_iso(),
            "standings": rows, "games": counts, "filed": len(games),
            "problems": [s["text"] for s in leaguerank.sequences(league, games)]
            + [r["text"] for r in db.reports() if r["kind"] in ("forked", "refused")]}


def reverify(league, db_path, say=print):
    """`chalk league reverify`: every game whose verdict may change with the keys now held."""
    keys = load_keys(league)
    changed = 0
    with LeagueDB(db_path) as db:
        for g in db.games():
            v = g["verdict"]
            if v and (v["grade"] != "ok-finished" or _chainless(v)):
                again = leaguecheck.check_log(db.log(g["id"]), keys)
                if again.grade != v["grade"] or _chainless(v):
                    db.add_verdict(g["id"], again)
                    changed += 1
                    say("game %d: %s (was: %s)" % (g["id"], again.words(),
                                                   leaguecheck.WORDS.get(v["grade"],
                                                                         v["grade"])))
    return changed


def _chainless(v):
    """A verdict the signature holds for, filed without its chain facts (a v1 archive)."""
    return v["grade"] in leaguecheck.AUTHENTIC and not v.get("chain")
