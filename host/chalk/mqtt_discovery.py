"""Home automation out of the box: Home Assistant's MQTT discovery for every table, and the
WLED light effect on a game's end (docs/mqtt.md).

Home Assistant: each table is a device with entities read from the table's retained state
topic through templates (HA renders them with Jinja2, `value_json` being the state payload):
one score per side, who is on move, the last action in words, the game, and a binary sensor
"scoring" (on: the board keeps the score; off: NOT SCORING, with the reason as an attribute).
They are announced with retained config messages under the discovery prefix (default
`homeassistant`) and are unavailable whenever the venue's presence topic says `offline` (the
server's last will). Nobody types a topic into Home Assistant.

WLED: a WLED controller subscribes to `<its topic>/api` and takes a JSON API state object
there; `chalk serve` sends the one configured (e.g. {"ps": 2}, preset 2) when a game is won.
"""

import hashlib
import json
import re

from chalk import mqttconf


def slug(name):
    """An id Home Assistant takes (a-z, 0-9, _) for any table name, stable and distinct: the
    name's letters, then a short hash of the name itself."""
    text = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")[:32] or "table"
    return "%s_%s" % (text, hashlib.sha1(str(name).encode("utf-8", "surrogatepass"))
                      .hexdigest()[:6])


def ha_configs(prefix, venue, table, sides):
    """[(config topic, payload dict)] announcing one table's entities (`sides`: how many
    score entities: the most sides its games have had, at least 2)."""
    node = "chalk_%s_%s" % (venue.lower().replace("-", "_"), slug(table))
    state = mqttconf.venue_topic(venue, "table", mqttconf.level(table), "state")
    device = {"identifiers": [node], "name": "Chalk %s" % table, "manufacturer": "Chalk",
              "model": "pub table scoreboard", "suggested_area": venue}
    common = {"state_topic": state, "availability_topic": mqttconf.venue_topic(venue, "status"),
              "payload_available": "online", "payload_not_available": "offline",
              "device": device}
    out = []

    def add(component, key, name, **more):
        cfg = dict(common, name=name, unique_id="%s_%s" % (node, key))
        cfg.update(more)
        out.append(("%s/%s/%s/%s/config" % (prefix, component, node, key), cfg))

    for i in range(max(2, sides)):
        have = "value_json.players | length > %d" % i
        add("sensor", "score_%d" % (i + 1), "Score %d" % (i + 1),
            value_template="{{ value_json.players[%d].score if %s else '' }}" % (i, have),
            json_attributes_topic=state,
            json_attributes_template="{{ (value_json.players[%d] if %s else {}) | tojson }}"
            % (i, have), icon="mdi:scoreboard")
    add("sensor", "on_move", "On move", value_template="{{ value_json.on_move }}",
        icon="mdi:account-arrow-right")
    add("sensor", "last_action", "Last action", value_template="{{ value_json.last }}",
        icon="mdi:format-quote-close")
    add("sensor", "game", "Game", value_template="{{ value_json.game_name }}",
        icon="mdi:billiards")
    add("binary_sensor", "scoring", "Scoring", device_class="running",
        value_template="{{ 'ON' if value_json.scoring else 'OFF' }}",
        json_attributes_topic=state,
        json_attributes_template="{{ {'why': value_json.why, 'state': value_json.state} "
        "| tojson }}")
    return out


def wled_payload(rule):
    """The JSON API state object a WLED rule sends (checked when the config is read)."""
    return json.dumps(rule, separators=(",", ":"))
