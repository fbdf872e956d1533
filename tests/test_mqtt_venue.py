"""`chalk serve` publishing to a real broker (Mosquitto on a loopback port), read by subscribers
that do what Home Assistant, Node-RED, WLED and a league do: the retained state of each table,
each action in words with its record, the events, discovery rendered through the templates
Home Assistant renders, the Node-RED flow in docs/examples, the WLED preset on a win, the last
will when serve dies, and the outbox: a game finished while the broker was away is sent when
it is back, and only an ack naming what was sent drops it."""

import json
import re
import sqlite3
import subprocess
import sys

import jinja2

from chalk import mqtt_bridge
from chalk.sim import Sim
from tests.leaguehelp import CONFIG, match
from tests.mqttbroker import ROOT, Broker, Serve, Subscriber, wait_until

FLOW = ROOT / "docs" / "examples" / "node-red-chalk-flow.json"


def ha_render(template, state):
    """A template as Home Assistant renders it (Jinja2, the payload as value_json)."""
    return jinja2.Environment().from_string(template).render(value_json=state).strip()


def outbox(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, kind, game_id, sha256, acked, payload IS NULL, tries FROM "
                         "outbox ORDER BY id").fetchall()


def test_a_venue_publishes_its_tables_for_home_automation_and_a_league(tmp_path):
    broker = Broker(tmp_path, "venue").start()
    conf = tmp_path / "mqtt.json"
    conf.write_text(json.dumps({
        "chalk_mqtt": 1, "venue": "crown", "league_token": "tok-0123456789abcdef",
        "broker": {"host": "127.0.0.1", "port": broker.port}, "resend_seconds": 1,
        "wled": [{"topic": "wled/bar", "on_win": {"ps": 2}, "tables": ["window"]}]}))
    flow = json.loads(FLOW.read_text())
    node_in = next(n for n in flow if n["type"] == "mqtt in")
    switch = next(n for n in flow if n["type"] == "switch")
    words = next(n for n in flow if n["type"] == "template")
    sim = Sim("five-pins", flash=tmp_path / "flash", test_mode=True, keys="")
    sim.start()
    serve = None
    try:
        ha = Subscriber(broker.port, ["homeassistant/#", "chalk/v1/venue/crown/table/+/state"])
        nodered = Subscriber(broker.port, [node_in["topic"]])
        wled = Subscriber(broker.port, ["wled/bar/api"])
        everything = Subscriber(broker.port, ["chalk/#"])
        serve = Serve(tmp_path / "serve", [("window", sim.port)],
                      ["--mqtt-config", conf]).start()
        serve.wait_table("window", lambda t: t["connected"])
        actions, winner, st = match(21, ("Ann", "Bob"))
        serve.new("window", "five-pins", ["Ann", "Bob"], dict(CONFIG))
        for a in actions[:3]:
            serve.act("window", a)
        # Each action: its words with the players' names, its record, the state after it.
        act = everything.json("/table/window/action", lambda b: b["seq"] >= 4 and
                              b["record"]["a"] == "shot")
        assert act["words"].startswith(("Ann: ", "Bob: ")) and "{" not in act["words"]
        assert act["record"]["player"] in (0, 1) and "scores" in act["state"]
        for a in actions[3:]:
            serve.act("window", a)
        # Home Assistant: entities announced, retained, rendered from the state topic.
        configs = {t: json.loads(p) for t, p, _r in ha.messages if t.endswith("/config")}
        assert len(configs) >= 6
        for topic, cfg in configs.items():
            assert re.match(r"^homeassistant/(sensor|binary_sensor)/[a-z0-9_]+/[a-z0-9_]+/"
                            r"config$", topic), topic
            assert cfg["availability_topic"] == "chalk/v1/venue/crown/status"
            assert cfg["unique_id"] and cfg["device"]["name"] == "Chalk window"
        score1 = next(c for t, c in configs.items() if t.endswith("/score_1/config"))
        scoring = next(c for t, c in configs.items() if t.endswith("/scoring/config"))
        on_move = next(c for t, c in configs.items() if t.endswith("/on_move/config"))
        final = ha.json("/table/window/state", lambda b: b["winner"] is not None)
        assert ha_render(score1["value_template"], final) == final["players"][0]["score"]
        attrs = json.loads(ha_render(score1["json_attributes_template"], final))
        assert attrs["name"] == "Ann"
        assert ha_render(scoring["value_template"], final) == "ON"
        assert "winner" in ha_render(on_move["value_template"], final)
        # Node-RED: the flow's own topic, switch and template, applied to what came.
        won = nodered.json("/event", lambda b: b["event"] == "game-won")
        prop = switch["property"].split(".")[1:]
        value = won
        for k in prop:
            value = value[k]
        assert value == switch["rules"][0]["v"]
        text = re.sub(r"{{payload\.(\w+)}}", lambda m: str(won[m.group(1)]), words["template"])
        assert text == "%s won at window (Five pins)" % ("Ann", "Bob")[winner]
        # WLED: its JSON API state object on <topic>/api, once per win.
        t, payload, _r = wled.wait(lambda m: True, 30, "the WLED preset")
        assert json.loads(payload) == {"ps": 2}
        # The venue disputes nothing yet: the game ends when the next one starts.
        status, body = serve.call("POST", "/api/disputes", {"game": 2, "note": "pin reset"})
        assert status == 409 and "has not ended" in body["error"]
        serve.new("window", "five-pins", ["Cy", "Di"], dict(CONFIG))
        game = everything.wait(lambda m: "/game/" in m[0], 30, "the finished game")
        assert game[1].decode().splitlines()[0].startswith('{"chalk":1')
        mid = int(game[0].rsplit("/", 1)[1])
        db = tmp_path / "serve" / "archive.sqlite3"
        row = [r for r in outbox(db) if r[0] == mid][0]
        # An ack that does not name what was sent drops nothing; the right one does.
        league = Subscriber(broker.port, [])
        league.publish("chalk/v1/venue/crown/ack/%d" % mid, json.dumps(
            {"v": 1, "id": mid, "sha256": "0" * 64, "league": "north", "status": "counted"}))
        everything.wait(lambda m: m[0] == "chalk/v1/venue/crown/game/%d" % mid and
                        m[1] == game[1], 30, "the game sent again (not acknowledged)")
        assert [r for r in outbox(db) if r[0] == mid][0][4] is None
        league.publish("chalk/v1/venue/crown/ack/%d" % mid, json.dumps(
            {"v": 1, "id": mid, "sha256": row[3], "league": "north", "status": "counted"}))
        wait_until(lambda: [r for r in outbox(db) if r[0] == mid][0][4] is not None, 30,
                   "the ack to drop the game")
        assert [r for r in outbox(db) if r[0] == mid][0][5] == 1  # its payload cleared
        # A dispute through the API (the host itself), queued and sent with the venue token.
        status, body = serve.call("POST", "/api/disputes", {"game": row[2], "note": "pin reset"})
        assert status == 200, body
        d = everything.json("/dispute/%d" % body["result"]["outbox"])
        assert d["token"] == "tok-0123456789abcdef" and d["game"]["sha256"] == row[3]
        # The broker goes away: scoring goes on, the next finished game waits in the outbox.
        broker.stop()
        for a in match(22, ("Cy", "Di"))[0]:
            serve.act("window", a)
        serve.new("window", "five-pins", ["Ann", "Cy"], dict(CONFIG))
        wait_until(lambda: len([r for r in outbox(db) if r[1] == "game" and r[4] is None])
                   >= 1, 30, "the game to wait in the outbox")
        broker.start()
        late = Subscriber(broker.port, ["chalk/v1/venue/crown/game/+",
                                        "chalk/v1/venue/crown/table/window/state"])
        late.wait(lambda m: "/game/" in m[0] and b'"Cy","Di"' in m[1], 60,
                  "the game finished while the broker was away")
        late.wait(lambda m: m[0].endswith("/state"), 30, "the retained state again")
        # serve dies: its last will says so, retained, for whoever looks later.
        serve.stop(kill=True)
        after = Subscriber(broker.port, ["chalk/v1/venue/crown/status"])
        after.wait(lambda m: m[1] == b"offline", 60, "the last will")
        for s in (ha, nodered, wled, everything, league, late, after):
            s.close()
    finally:
        if serve is not None:
            serve.stop()
        sim.stop()
        broker.stop()


def chalk(*args):
    return subprocess.run([sys.executable, "-m", "chalk.cli"] + [str(a) for a in args],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=60)


def test_bad_mqtt_options_are_one_line_before_anything_starts(tmp_path):
    bad = tmp_path / "bad.json"
    cases = [
        (["--mqtt", "localhost:99999"], "the port must be 1-65535"),
        (["--mqtt", "localhost", "--mqtt-venue", "the crown"], "is not an id"),
        (["--mqtt-config", tmp_path / "none.json"], "no MQTT config"),
        (["--mqtt-config", bad], "not valid JSON"),
        (["--mqtt", "localhost", "--mqtt-ca", tmp_path / "none.pem"], "no TLS CA file"),
        (["--mqtt", "localhost", "--mqtt-cert", bad], "needs its key"),
    ]
    bad.write_text("{\"broker\": ")
    for args, words in cases:
        r = chalk("serve", "--port", "/dev/null-nothing", "--rescan", "0", *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    bad.write_text(json.dumps({"chalk_mqtt": 1, "wled": [{"topic": "wled/#"}]}))
    r = chalk("serve", "--port", "/dev/null-nothing", "--mqtt-config", bad)
    assert r.returncode == 1 and "wled[0]" in r.stderr


def test_the_bridge_and_broker_configs_mosquitto_takes(tmp_path):
    """The generated configs load in Mosquitto itself, with users and the ACL."""
    from tests.mqttbroker import add_user, free_port, mosquitto

    passwd = tmp_path / "passwd"
    add_user(tmp_path, passwd, "league", "pw")
    acl = tmp_path / "acl"
    acl.write_text(mqtt_bridge.league_acl())
    port = free_port()
    conf = tmp_path / "league.conf"
    conf.write_text(mqtt_bridge.league_broker_config(port, passwd, acl, tmp_path, "127.0.0.1")
                    + "log_dest stderr\n" + ("user root\n" if __import__("os").geteuid() == 0
                                             else ""))
    p = subprocess.Popen([mosquitto(), "-c", str(conf)], stderr=subprocess.PIPE)
    try:
        import socket

        wait_until(lambda: p.poll() is not None or _listens(socket, port), 20, "mosquitto")
        assert p.poll() is None, p.stderr.read().decode()
    finally:
        p.terminate()
        p.wait(10)
    text = mqtt_bridge.bridge_config("crown", "league.example.org", 8883, "crown", "pw",
                                     ca="/etc/ssl/certs/ca-certificates.crt")
    assert "bridge_cafile /etc/ssl/certs/ca-certificates.crt" in text
    assert "topic chalk/v1/venue/crown/ack/# in 1" in text
    assert "cleansession false" in text
    r = chalk("league", "bridge-config", "--venue", "../x", "--league", "h:1")
    assert r.returncode == 1 and "is not an id" in r.stderr


def _listens(socket, port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_topic_levels_hold_any_table_name():
    from chalk.mqttconf import level

    assert level("window") == "window"
    assert level("bar/back room") == "bar%2Fback room"
    assert level("#1+") == "%231%2B"
    assert level("$SYS") == "%24SYS"
    assert level("Zoë") == "Zoë"
    assert "/" not in level("a/b/c") and "\x1b" not in level("\x1b[2J")


def test_an_action_without_the_pages_words_is_said_by_its_game_or_plainly():
    """The action topic's words, when no view brought the table's own: the game's words
    (chalk.games) from the states before and after it; without a game the host knows, or for
    a record its game cannot say, only the kind and the seq, never the record's fields."""
    from chalk.mqtt import describe
    from scoreboard import matchlog

    head = matchlog.header("five-pins", dict(CONFIG), ["Ann", "Bob"])
    rules = matchlog.new_game(head)
    start = rules.state()
    opened = rules.apply({"a": "break", "player": 0})
    after = rules.apply({"a": "shot", "player": 0, "pins": "C", "carom": 3})
    shot = {"seq": 3, "t": 900, "a": "shot", "player": 0, "pins": "C", "carom": 3}
    words = describe(shot, ["Ann", "Bob"], "five-pins", opened, after, CONFIG)
    assert words.startswith("Ann: pin C, carom 3") and "11 points" in words, words
    assert describe({"seq": 2, "a": "break", "player": 1}, ["Ann", "Bob"], "five-pins",
                    start, opened, CONFIG).startswith("Bob")
    # no header seen yet (no game), a record not in the game's vocabulary, no state after it
    for game, rec, st in ((None, shot, after), ("five-pins", dict(shot, pins="Q"), after),
                          ("five-pins", shot, None)):
        said = describe(rec, ["Ann", "Bob"], game, opened, st, CONFIG)
        assert said == "shot (action 3 of the board)", said
    # a game the host has no module for: the registry's generic words, fields named
    said = describe(shot, ["Ann", "Bob"], "crokinole", opened, after, CONFIG)
    assert "player Ann" in said and "{" not in said, said
    assert describe({"seq": 4, "a": "undo"}, [], None) == "the last action was taken back (undo)"
