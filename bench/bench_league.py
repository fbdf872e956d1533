"""A league under load, printed (never asserted): how many venues one `chalk league` keeps up
with, and how long a finished game takes from its table to the league's standings.

Venues: V venues, each with 4 tables, each venue finishing a game a minute and each table
sending an action a second (what a busy pub night is), are played at many times that pace
into one real Mosquitto broker: the league's collector (the same code `chalk league run` runs)
verifies each signed game (chain, signature, replay through the rules), files it, acknowledges
it and publishes the standings, while the action messages cross the same broker (as a bridge
with --live carries them). Its sustained rate of filed games is the number of venues at one
game a minute it keeps up with.

Latency: a simulated board, `chalk serve` publishing to the venue's broker, a Mosquitto bridge
to the league's broker, and the collector: from the command that ends a game at the table (its
next game started: the end record is signed and journaled then) to the standings message that
counts it.
"""

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk import leagueconf, mqtt_bridge, mqttconf  # noqa: E402
from chalk.keys import KeyStore, enrol  # noqa: E402
from chalk.league import Collector  # noqa: E402
from tests.leaguehelp import CONFIG, Board, league_config, match  # noqa: E402
from tests.mqttbroker import Broker, Serve, Subscriber, wait_until  # noqa: E402

PLAYERS = ("Ann", "Bob", "Cy", "Di")
TABLES = 4  # per venue
ACTIONS_PER_GAME = TABLES * 60  # a game a minute per venue, an action a second per table


def _league(tmp, venues, port, boards):
    cfg = league_config(tmp / "league.json", {d: {"venue": v} for d, v in boards.items()},
                        {v: {"name": v} for v in venues}, PLAYERS,
                        broker={"host": "127.0.0.1", "port": port})
    return leagueconf.load(cfg)


def throughput(tmp, games=120, venues=20, actions=ACTIONS_PER_GAME):
    """(games filed a second, action messages a second alongside)."""
    broker = Broker(tmp, "league-broker").start()
    try:
        names = ["v%02d" % i for i in range(venues)]
        boards = {"board-%s" % v: v for v in names}
        tables = {d: Board(d) for d in boards}  # each board with its own key pair
        store = KeyStore(tmp / "keys.json")
        for b in tables.values():
            b.enrol(store)
        store.save()
        logs = []
        for i in range(games):
            d = list(boards)[i % venues]
            pair = (PLAYERS[i % 4], PLAYERS[(i + 1 + i // 4) % 4])
            if pair[0] == pair[1]:
                pair = (pair[0], PLAYERS[(i + 2) % 4])
            acts, _w, _s = match(1000 + i, pair)
            logs.append((boards[d], i + 1, tables[d].log(tmp, list(pair), acts)))
        league = _league(tmp, names, broker.port, boards)
        c = Collector(league, tmp / "league.sqlite3", league.broker, say=lambda t: None)
        c.start()
        wait_until(lambda: c.conn.up.is_set(), 30, "the league to connect")
        pub = Subscriber(broker.port, [])
        action = json.dumps({"v": 1, "venue": "v00", "table": "window", "game_no": 1,
                             "seq": 10, "words": "Ann: shot, pins 12C, carom 3",
                             "record": {"seq": 10, "t": 9000, "a": "shot", "player": 0,
                                        "pins": "12C", "carom": 3, "fouls": []}})
        t0 = time.monotonic()
        sent_actions = 0
        for venue, mid, text in logs:
            pub.client.publish(mqttconf.venue_topic(venue, "game", str(mid)), text, qos=1)
            for k in range(actions):
                pub.client.publish(mqttconf.venue_topic(venue, "table", "t%d" % (k % TABLES),
                                                        "action"), action, qos=0)
            sent_actions += actions
        wait_until(lambda: c.counts["filed"] >= games, 600, "every game filed", every=0.01)
        t1 = time.monotonic()
        pub.close()
        c.stop()
        return games / (t1 - t0), sent_actions / (t1 - t0)
    finally:
        broker.stop()


def latency(tmp, games=3):
    """Seconds from ending a game at the table to the league's standings counting it."""
    from chalk.sim import Sim

    league_broker = Broker(tmp, "l-broker").start()
    bridge = mqtt_bridge.bridge_config("crown", "127.0.0.1", league_broker.port)
    venue_broker = Broker(tmp, "v-broker", extra=bridge).start()
    sim = Sim("five-pins", flash=tmp / "flash", test_mode=True, keys=str(tmp / "vkeys.json"))
    sim.start()
    serve = collector = watch = None
    try:
        device = (tmp / "flash" / "device_id").read_text().strip()
        enrol(sim.port, tmp / "keys.json")  # the league enrols the board over USB
        league = _league(tmp, ["crown"], league_broker.port, {device: "crown"})
        collector = Collector(league, tmp / "league.sqlite3", league.broker, say=lambda t: None)
        collector.start()
        watch = Subscriber(league_broker.port, [mqttconf.league_topic("north", "standings")])
        conf = tmp / "mqtt.json"
        conf.write_text(json.dumps({"chalk_mqtt": 1, "venue": "crown", "broker": {
            "host": "127.0.0.1", "port": venue_broker.port}}))
        serve = Serve(tmp / "serve", [("window", sim.port)], ["--mqtt-config", conf],
                      env={"CHALK_KEYS": str(tmp / "vkeys.json")}).start()
        serve.wait_table("window", lambda t: t["connected"])
        out = []
        for i in range(games + 1):
            acts, _w, _s = match(500 + i, ("Ann", "Bob"))
            t0 = time.monotonic()
            serve.new("window", "five-pins", ["Ann", "Bob"], dict(CONFIG))  # ends the last
            if i:
                watch.wait(lambda m, i=i: sum(r["played"] for r in json.loads(m[1])[
                    "standings"]) >= 2 * i, 60, "the standings to count game %d" % i)
                out.append(time.monotonic() - t0)
            for a in acts:
                serve.act("window", a)
        return out
    finally:
        if watch is not None:
            watch.close()
        if serve is not None:
            serve.stop()
        if collector is not None:
            collector.stop()
        sim.stop()
        venue_broker.stop()
        league_broker.stop()


def main(smoke=False):
    print("league over MQTT (one chalk league, real Mosquitto brokers)")
    with tempfile.TemporaryDirectory(prefix="chalk-bench-league-") as d:
        games, venues = (6, 3) if smoke else (120, 20)
        actions = 10 if smoke else ACTIONS_PER_GAME
        rate, arate = throughput(Path(d) / "t", games, venues, actions)
        print("  games verified, filed, acknowledged and ranked: %.1f a second, beside %.0f "
              "action messages a second" % (rate, arate))
        if not smoke:
            print("  venues kept up with (a game a minute each, %d tables at an action a "
                  "second): %d   (goal: 50)" % (TABLES, int(rate * 60)))
        (Path(d) / "l").mkdir()
        lat = latency(Path(d) / "l", 1 if smoke else 5)
        print("  a game's end at the table to the league's standings: median %.2f s, worst "
              "%.2f s   (goal: under 5 s)" % (statistics.median(lat), max(lat)))
    return rate, lat


if __name__ == "__main__":
    main("--smoke" in sys.argv)
