"""The venue publishes: `chalk serve` tells an MQTT broker what its tables do (docs/mqtt.md).

The publisher listens to the venue as a web page does (serve.Venue.listen: a `view` event per
change, and each table's own frames) and publishes, under chalk/v1/venue/<venue>/:

  status                        "online" / "offline" (retained; "offline" is the last will)
  table/<table>/state           the table as the room sees it (retained)
  table/<table>/action          each action: its words, its record, the score after it
  table/<table>/event           game-started, game-won, game-resumed, not-scoring, scoring
  game/<id>                     a finished game's whole signed match log (from the outbox)
  dispute/<id>                  a dispute the venue raises (from the outbox)

and takes the league's acknowledgements on ack/<id>. Home Assistant's discovery and WLED are
in chalk/mqtt_discovery.py. The broker being away changes nothing for the tables: scoring and
archiving go on, live messages of that time are not kept (the state is sent again, retained,
when the broker is back), and the games and disputes wait in the outbox (chalk/mqtt_outbox.py)
until a league has them.
"""

import asyncio
import json
import socket
import threading
import time

from chalk import games, mqtt_discovery, mqttconf, views
from chalk.errors import ChalkError
from chalk.mqttconf import venue_topic

SCHEMA = 1  # "v" in every JSON payload (docs/mqtt.md)
DEFAULT_RESEND = 30.0  # seconds before a message the league has not acknowledged goes again
PUMP_S = 1.0  # how often the outbox is looked at (new games, messages due)
RECS_KEPT = 64  # views' words kept per table, to pair with the records they describe
HOLD_S = 0.6  # an action waits at most this long for the view that describes it


class Settings:
    """What a venue publishes and where (from --mqtt options and/or a config file)."""

    def __init__(self, broker, venue, league_token=None, leagues=(), resend=DEFAULT_RESEND,
                 discovery="homeassistant", wled=(), actions=True):
        self.broker = broker
        self.venue = venue
        self.league_token = league_token
        self.leagues = tuple(leagues)
        self.resend = resend
        self.discovery = discovery
        self.wled = list(wled)
        self.actions = actions


CONFIG_KEYS = {"chalk_mqtt", "venue", "broker", "league_token", "leagues", "resend_seconds",
               "home_assistant", "wled", "actions"}


def settings_from(args):
    """Settings from `chalk serve`'s options (--mqtt-config FILE and the --mqtt* options over
    it), or None when nothing asks for MQTT. Everything is checked before serve starts."""
    from pathlib import Path

    path = getattr(args, "mqtt_config", None)
    data = {}
    broker = None
    if path:
        data = mqttconf.read_json(path, "MQTT config")
        where = str(path)
        extra = sorted(set(data) - CONFIG_KEYS)
        if extra:
            raise ChalkError("%s: unknown key \"%s\" (known: %s)" % (
                where, extra[0][:40], ", ".join(sorted(CONFIG_KEYS))))
        if data.get("chalk_mqtt", 1) != 1:
            raise ChalkError("%s: \"chalk_mqtt\" must be 1 (this chalk reads version 1)"
                             % where)
        if "broker" in data:
            broker = mqttconf.broker_from(data["broker"], where, Path(path).parent)
    elif not getattr(args, "mqtt", None):
        return None
    where = str(path) if path else "--mqtt"
    broker = mqttconf.broker_from_args(args, broker)
    venue = getattr(args, "mqtt_venue", None) or data.get("venue")
    if venue is None:
        venue = "".join(c if c.isalnum() or c in "-_" else "-"
                        for c in socket.gethostname().split(".")[0])[:64] or "venue"
    mqttconf.check_name(venue, "the venue id")
    token = data.get("league_token")
    if token is not None and (type(token) is not str or not token.strip()):
        raise ChalkError("%s: \"league_token\" must be the text the league gave this venue"
                         % where)
    leagues = data.get("leagues", [])
    if type(leagues) is not list:
        raise ChalkError("%s: \"leagues\" must be a list of league ids" % where)
    for lg in leagues:
        mqttconf.check_name(lg, "%s: the league id" % where)
    resend = data.get("resend_seconds", DEFAULT_RESEND)
    if getattr(args, "mqtt_resend", None):
        resend = args.mqtt_resend
    if type(resend) not in (int, float) or not 0.5 <= resend <= 86400:
        raise ChalkError("%s: \"resend_seconds\" must be a number of seconds, 0.5-86400"
                         % where)
    ha = data.get("home_assistant", {})
    if ha is False or getattr(args, "no_mqtt_discovery", False):
        discovery = None
    elif type(ha) is dict and set(ha) <= {"prefix"}:
        discovery = ha.get("prefix", "homeassistant")
        if type(discovery) is not str or not discovery or "+" in discovery \
                or "#" in discovery:
            raise ChalkError("%s: \"home_assistant.prefix\" must be a topic such as "
                             "homeassistant" % where)
    else:
        raise ChalkError("%s: \"home_assistant\" must be false or {\"prefix\": "
                         "\"homeassistant\"}" % where)
    wled = []
    raw = data.get("wled", [])
    if type(raw) is not list:
        raise ChalkError("%s: \"wled\" must be a list of {\"topic\", \"on_win\", \"tables\"}"
                         % where)
    for i, w in enumerate(raw):
        if type(w) is not dict or type(w.get("topic")) is not str or not w["topic"] or \
                type(w.get("on_win")) is not dict or set(w) - {"topic", "on_win", "tables"}:
            raise ChalkError("%s: wled[%d] must be {\"topic\": \"wled/NAME\", \"on_win\": "
                             "{WLED JSON state, e.g. \"ps\": 2}, \"tables\": [...]}"
                             % (where, i))
        if any(c in w["topic"] for c in "+#"):
            raise ChalkError("%s: wled[%d].topic is a WLED device topic, without + or #"
                             % (where, i))
        tables = w.get("tables")
        if tables is not None and (type(tables) is not list or
                                   not all(type(t) is str for t in tables)):
            raise ChalkError("%s: wled[%d].tables must be a list of table names" % (where, i))
        wled.append(w)
    actions = data.get("actions", True)
    if type(actions) is not bool:
        raise ChalkError("%s: \"actions\" must be true or false" % where)
    return Settings(broker, venue, token, leagues, float(resend), discovery, wled, actions)


def add_options(p):
    """`chalk serve`'s MQTT options."""
    mqttconf.add_broker_options(p, "to publish the tables to")
    p.add_argument("--mqtt-config", metavar="FILE",
                   help="a JSON file with the broker, the venue id, the league token, Home "
                   "Assistant and WLED settings (docs/mqtt.md); the --mqtt* options override it")
    p.add_argument("--mqtt-venue", metavar="ID",
                   help="this venue's id in topics and at the league (default: the host name)")
    p.add_argument("--mqtt-resend", type=float, metavar="SECONDS",
                   help="send a game the league has not acknowledged again after this long "
                   "(default %d)" % DEFAULT_RESEND)
    p.add_argument("--no-mqtt-discovery", action="store_true",
                   help="no Home Assistant discovery messages")


# -- words ------------------------------------------------------------------------------------

def describe(rec, names, game=None, before=None, after=None, config=None):
    """An action in words, when the view has none: the game's own words for it (chalk.games,
    from the state before it, None when not known, and the state after it), or, for a game
    the host does not know or a record it cannot say, only the kind of action and its seq."""
    if not isinstance(rec, dict):
        return ""
    if game is not None and type(after) is dict:
        g = games.get(game)
        text, _fouls = views.describe(g, rec, before if type(before) is dict else None, after,
                                      names, config if type(config) is dict else {})
        if text:
            return text
    kind = str(rec.get("a", "")).replace("_", " ") or "an action"
    if kind == "undo":
        return "the last action was taken back (undo)"
    seq = rec.get("seq")
    return "%s (action %d of the board)" % (kind, seq) if type(seq) is int else kind


def state_payload(venue, v):
    """The retained state of a table (docs/mqtt.md): a view, in the fields v1 promises."""
    rows = v.get("rows") or []
    winner = v.get("winner")
    names = [str(r.get("name", "")) for r in rows]
    return {
        "v": SCHEMA, "venue": venue, "table": v.get("table"), "device": v.get("device"),
        "game": v.get("game"), "game_name": v.get("game_name") or v.get("game") or "",
        "game_no": v.get("game_no"), "seq": v.get("seq"),
        "scoring": bool(v.get("scoring")),
        "state": v.get("state") or ("scoring" if v.get("scoring") else "not scoring"),
        "why": v.get("why") or "",
        "players": [{"name": names[i], "score": r.get("score", ""),
                     "on_move": bool(r.get("on_move")), "winner": bool(r.get("winner"))}
                    for i, r in enumerate(rows)],
        "on_move": v.get("on_move") or "", "headline": v.get("headline") or "",
        "race": v.get("race") or "", "last": v.get("last") or "",
        "winner": (names[winner] if type(winner) is int and winner < len(names)
                   else winner if winner is not None else None),
        "warnings": list(v.get("warnings") or []),
    }


def _dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Tagged:
    """A queue for Venue.listen that tags what it is given: ("view", view) or ("frame", table
    name, frame)."""

    def __init__(self, q, tag=None):
        self.q = q
        self.tag = tag

    def put_nowait(self, data):
        self.q.put_nowait(("view", data) if self.tag is None else ("frame", self.tag, data))


class _Table:
    def __init__(self):
        self.view = None
        self.state = None  # the state payload last published
        self.game_no = None
        # seq -> [rec, the state after it, when it came, its game number]: to publish
        self.pending = {}
        self.words = {}  # seq -> the view's words for that action
        self.seen = None  # the highest seq a view showed
        self.names = []
        self.game_no_rec = None  # the game number of the last header record seen
        self.game = None  # the game id and config of that header: the words of its actions
        self.config = {}
        self.after = None  # the state after the last action published (None: not known)
        self.sides = 2


class Publisher:
    """Publishes a serve.Venue to an MQTT broker, from a thread of its own."""

    def __init__(self, venue, settings, db_path, say=print):
        self.venue = venue
        self.settings = settings
        self.db_path = db_path
        self.say = say
        self.tables = {}
        self.thread = threading.Thread(target=self._run, name="mqtt publisher", daemon=True)
        self._loop = None
        self._q = None
        self._kick = False  # every message not acknowledged is due now
        self.counts = {"states": 0, "actions": 0, "events": 0, "games_sent": 0,
                       "acks": 0, "disputes_sent": 0}
        self.problem = None
        s = settings
        self.conn = mqttconf.Connection(
            s.broker, "chalk-serve-%s" % s.venue, on_up=self._up, on_message=self._message,
            will=(venue_topic(s.venue, "status"), "offline"))

    # -- life ----------------------------------------------------------------------------------
    def start(self):
        self.conn.start()
        self.thread.start()
        self.say("mqtt: publishing venue %s to %s" % (self.settings.venue,
                                                       self.settings.broker.describe()))

    def stop(self, timeout=5.0):
        if self._loop is not None and self._q is not None:
            try:
                self._loop.call_soon_threadsafe(self._q.put_nowait, ("stop",))
            except RuntimeError:
                pass
        if self.thread.is_alive():
            self.thread.join(timeout)
        self.conn.stop(last=(venue_topic(self.settings.venue, "status"), "offline"))

    def status(self):
        return {"connected": self.conn.up.is_set(), "problem": self.conn.problem,
                "venue": self.settings.venue, "broker": self.settings.broker.describe(),
                "counts": dict(self.counts), "outbox": getattr(self, "_outbox_counts", {})}

    def _run(self):
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._main(loop))
        finally:
            loop.close()

    async def _main(self, loop):
        from chalk.mqtt_outbox import Outbox
        from chalk.store import Archive

        q = asyncio.Queue(maxsize=10000)
        self._loop, self._q = loop, q
        listening = [self.venue.listen(loop, _Tagged(q), None, "view")]
        framed = set()
        archive = None
        next_pump = 0.0
        try:
            for name in list(self.venue.tables):
                self._frames_of(loop, q, name, framed, listening)
            while not self.venue.stop.is_set():
                try:
                    item = await asyncio.wait_for(q.get(), 0.2)
                except asyncio.TimeoutError:
                    item = None
                try:
                    if item is not None:
                        if item[0] == "stop":
                            break
                        self._take(item, loop, q, framed, listening)
                    self._actions()
                except Exception as e:  # a bad view or message must not end the thread
                    self._problem("mqtt: could not publish %s: %s" % (
                        item[0] if item else "actions", e))
                if time.monotonic() < next_pump and not self._kick:
                    continue
                next_pump = time.monotonic() + PUMP_S
                try:
                    if archive is None:
                        archive = Archive(self.db_path, create=True)
                        self.outbox = Outbox(archive, self.settings.leagues)
                    self._pump(self.outbox)
                    self.problem = None
                except ChalkError as e:  # a locked archive: the next pump tries again
                    self._problem("mqtt: the outbox waits: %s" % e.message)
                    if archive is not None and "locked" not in e.message:
                        archive.close()
                        archive = None
        finally:
            for item in listening:
                self.venue.unlisten(item)
            if archive is not None:
                archive.close()

    def _problem(self, text):
        if text != self.problem:
            self.problem = text
            self.say(text)

    def _frames_of(self, loop, q, name, framed, listening):
        if name not in framed:
            framed.add(name)
            listening.append(self.venue.listen(loop, _Tagged(q, name), name, "frame"))

    # -- events from the venue and the broker --------------------------------------------------
    def _take(self, item, loop, q, framed, listening):
        kind = item[0]
        if kind == "view":
            self._frames_of(loop, q, item[1].get("table"), framed, listening)
            self._view(item[1])
        elif kind == "frame":
            t = self.tables.setdefault(item[1], _Table())
            f = item[2]
            p = f.get("payload")
            if not isinstance(p, dict) or type(p.get("seq")) is not int:
                return
            if f.get("type") == "rec":
                if p.get("type") == "E":
                    self._kick = True  # a game just finished: to the outbox at once
                elif p.get("type") == "H" and isinstance(p.get("header"), dict):
                    h = p["header"]
                    t.game_no_rec = h.get("game_no")
                    t.game = h.get("game") if type(h.get("game")) is str else None
                    t.config = h.get("config") if type(h.get("config")) is dict else {}
                    t.after = None
                    if type(h.get("players")) is list:
                        t.names = views.side_names(h["players"], max(2, len(t.names)))
                elif p.get("type") != "H" and self.settings.actions:
                    t.pending[p["seq"]] = [p, None, time.monotonic(), t.game_no_rec]
            elif f.get("type") == "state" and p["seq"] in t.pending:
                t.pending[p["seq"]][1] = p.get("state")
        elif kind == "up":
            self._republish()
            self._kick = True
            self._resend = True
        elif kind == "mqtt":
            self._mqtt(item[1], item[2])

    def _view(self, v):
        name = v.get("table")
        if name is None:
            return
        t = self.tables.setdefault(name, _Table())
        old = t.view
        t.view = v
        s = self.settings
        base = venue_topic(s.venue, "table", mqttconf.level(name))
        sides = len(v.get("rows") or [])
        if sides > t.sides or old is None:
            t.sides = max(t.sides, sides)
            self._discovery(name, t)
        st = state_payload(s.venue, v)
        if st != t.state:
            if self.conn.publish(base + "/state", _dumps(st), qos=1, retain=True):
                t.state = st
                self.counts["states"] += 1
        self._events(name, t, old, v, st, base)

    def _events(self, name, t, old, v, st, base):
        def event(what, **more):
            body = {"v": SCHEMA, "event": what, "venue": self.settings.venue, "table": name,
                    "game": st["game"], "game_name": st["game_name"], "game_no": st["game_no"],
                    "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            body.update(more)
            if self.conn.publish(base + "/event", _dumps(body), qos=1):
                self.counts["events"] += 1

        names = [p["name"] for p in st["players"]]
        t.names = names
        # The view's `last` is in words once views carry the game's own words (they then name
        # the game: game_name); before that it is the board's own line, not for people.
        if type(v.get("seq")) is int and v.get("game_name"):
            t.words[v["seq"]] = v.get("last") or ""
            for k in [k for k in t.words if k < v["seq"] - RECS_KEPT]:
                del t.words[k]
        if type(v.get("seq")) is int:
            t.seen = max(t.seen or 0, v["seq"])
        if old is None:
            t.game_no = v.get("game_no")
            return
        if bool(old.get("scoring")) != bool(v.get("scoring")):
            event("scoring" if v.get("scoring") else "not-scoring", why=st["why"])
        before = old.get("winner")
        if v.get("game_no") != t.game_no and v.get("game_no") is not None:
            t.game_no = v.get("game_no")
            event("game-started", players=names)
            before = None  # a new game: its winner (a view can come late) is news
        if before is None and v.get("winner") is not None:
            event("game-won", winner=st["winner"], players=names)
            self._wled(name)
        elif before is not None and v.get("winner") is None \
                and old.get("game_no") == v.get("game_no"):
            event("game-resumed", players=names)

    def _actions(self, force=False):
        """Each action in words, in order: published once the view of its seq is here (its
        words), or a moment after its record came (words made from the record)."""
        now = time.monotonic()
        s = self.settings
        for name, t in self.tables.items():
            for seq in sorted(t.pending):
                rec, state, since, game_no = t.pending[seq]
                have = seq in t.words
                if not (force or now - since >= HOLD_S or state is not None and (
                        have or t.seen is not None and t.seen > seq)):
                    break  # in order: the later ones wait for this one
                del t.pending[seq]
                body = {"v": SCHEMA, "venue": s.venue, "table": name,
                        "game_no": game_no if game_no is not None else t.game_no,
                        "seq": seq, "words": t.words.get(seq) or describe(
                            rec, t.names, t.game, t.after, state, t.config),
                        "record": rec, "state": state}
                t.after = state
                base = venue_topic(s.venue, "table", mqttconf.level(name))
                if self.conn.publish(base + "/action", _dumps(body), qos=0):
                    self.counts["actions"] += 1

    def _wled(self, table):
        for w in self.settings.wled:
            if w.get("tables") is None or table in w["tables"]:
                self.conn.publish(w["topic"].rstrip("/") + "/api",
                                  mqtt_discovery.wled_payload(w["on_win"]), qos=1)

    def _discovery(self, name, t):
        prefix = self.settings.discovery
        if prefix is None:
            return
        for topic, cfg in mqtt_discovery.ha_configs(prefix, self.settings.venue, name,
                                                    t.sides):
            self.conn.publish(topic, _dumps(cfg), qos=1, retain=True)

    def _republish(self):
        """After a (re)connection: presence, discovery and every table's state again."""
        s = self.settings
        self.conn.publish(venue_topic(s.venue, "status"), "online", qos=1, retain=True)
        for name, t in self.tables.items():
            self._discovery(name, t)
            if t.view is not None:
                base = venue_topic(s.venue, "table", mqttconf.level(name))
                t.state = state_payload(s.venue, t.view)
                self.conn.publish(base + "/state", _dumps(t.state), qos=1, retain=True)
        for name, table in list(self.venue.tables.items()):
            if name not in self.tables or self.tables[name].view is None:
                self._view(table.view())

    def _up(self, client):
        s = self.settings
        client.subscribe([(venue_topic(s.venue, "ack", "+"), 1),
                          (mqttconf.ROOT + "/" + mqttconf.TOPIC_VERSION + "/league/+/status", 1),
                          ("$SYS/broker/connection/+/state", 0)])
        self._post(("up",))

    def _message(self, topic, payload, retained):
        self._post(("mqtt", topic, payload))

    def _post(self, item):
        loop, q = self._loop, self._q
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(q.put_nowait, item)
        except RuntimeError:
            pass

    def _mqtt(self, topic, payload):
        parts = topic.split("/")
        if topic.startswith("$SYS/broker/connection/"):
            if payload.strip() == b"1":  # a bridge (to the league) came back
                self._resend = True
                self._kick = True
            return
        if len(parts) == 5 and parts[2] == "league" and parts[4] == "status":
            if payload.strip() == b"online":  # a league (re)started: whatever waits, again
                self._resend = True
                self._kick = True
            return
        if len(parts) == 6 and parts[4] == "ack":
            self._ack(parts[5], payload)

    def _ack(self, msg_id, payload):
        try:
            body = json.loads(payload.decode("utf-8"))
            mid = int(msg_id)
        except (ValueError, UnicodeDecodeError):
            return
        if type(body) is not dict or body.get("id") not in (mid, str(mid)):
            return
        outbox = getattr(self, "outbox", None)
        if outbox is None:
            return
        league = body.get("league") if type(body.get("league")) is str else "?"
        answer = {k: body.get(k) for k in ("verdict", "status", "words") if k in body}
        try:
            done = outbox.ack(mid, body.get("sha256"), league, answer)
        except ChalkError as e:
            self._problem("mqtt: could not note the ack of message %d: %s" % (mid, e.message))
            return
        if done is None:
            return
        self.counts["acks"] += 1
        kind, gid, dropped = done
        self.say("mqtt: league %s has %s %s: %s" % (
            league, "the game" if kind == "game" else "the dispute of game", gid,
            answer.get("words") or answer.get("status") or answer.get("verdict") or "filed"))

    # -- the outbox ----------------------------------------------------------------------------
    _resend = False

    def _pump(self, outbox):
        self._kick = False
        for _mid, game, problem in outbox.fill():
            if problem:
                self.say("mqtt: game %d cannot be sent to the league: %s" % (game["id"],
                                                                           problem))
        if not self.conn.up.is_set():
            self._outbox_counts = outbox.counts()
            return
        if self._resend:
            self._resend = False
            outbox.resend_all()
        s = self.settings
        sent = []
        for mid, kind, payload in outbox.due(s.resend):
            topic = venue_topic(s.venue, kind, str(mid))
            if self.conn.publish(topic, payload.encode("utf-8"), qos=1) is None:
                break
            sent.append(mid)
            self.counts["games_sent" if kind == "game" else "disputes_sent"] += 1
        outbox.sent(sent)
        self._outbox_counts = outbox.counts()
