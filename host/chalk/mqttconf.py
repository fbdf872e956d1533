"""Reaching an MQTT broker: where it is, who we are to it, TLS; and Chalk's topic names.

Shared by `chalk serve` (a venue publishing its tables, docs/mqtt.md) and `chalk league` (the
league collecting games, docs/league.md). The client is paho-mqtt, MQTT 3.1.1 (what Home
Assistant, Node-RED, WLED and Mosquitto's bridges all speak).

A broker is given by command-line options or by the "broker" object of a JSON config file:

    {"host": "localhost", "port": 1883, "username": "crown", "password_file": "/etc/chalk/pw",
     "tls": {"ca": "/etc/chalk/ca.pem", "cert": null, "key": null}, "keepalive": 30}

`password` may be given in the file itself (keep the file owner-only) or through
$CHALK_MQTT_PASSWORD; never on the command line, where every user of the computer sees it.
"""

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from chalk.errors import ChalkError
from chalk.text import printable

TOPIC_VERSION = "v1"  # the second level of every Chalk topic: docs/mqtt.md says what v1 holds
ROOT = "chalk"
ENV_PASSWORD = "CHALK_MQTT_PASSWORD"
DEFAULT_PORT = 1883
DEFAULT_TLS_PORT = 8883
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass
class Broker:
    host: str = "localhost"
    port: int = DEFAULT_PORT
    username: str = None
    password: str = None
    tls: bool = False
    ca: str = None
    cert: str = None
    key: str = None
    keepalive: int = 30
    where: str = "the broker options"  # for messages: which file or option said this

    def describe(self):
        return "%s:%d%s%s" % (self.host, self.port, " (TLS)" if self.tls else "",
                              " as %s" % self.username if self.username else "")


def check_name(text, what):
    """A venue's or a league's id: letters, digits, - and _ (it is a topic level, a Mosquitto
    ACL pattern and a bridge's topic: nothing there may need escaping)."""
    if type(text) is not str or not NAME_RE.match(text):
        raise ChalkError("%s %s is not an id: give 1-64 letters, digits, - or _, starting with "
                         "a letter or digit" % (what, json.dumps(printable(str(text))[:70])),
                         "e.g. crown or north-league")
    return text


def level(text):
    """One topic level holding any name (a table's): the characters MQTT gives a meaning to
    (/ + # and a leading $), %, and control characters are %-escaped; everything else stays."""
    out = []
    for i, ch in enumerate(str(text)):
        o = ord(ch)
        if ch in "/+#%" or o < 0x20 or 0x7F <= o < 0xA0 or (ch == "$" and i == 0) \
                or 0xD800 <= o < 0xE000:
            out.extend("%%%02X" % b for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "".join(out) or "%00"


def venue_topic(venue, *rest):
    return "/".join((ROOT, TOPIC_VERSION, "venue", venue) + rest)


def league_topic(league, *rest):
    return "/".join((ROOT, TOPIC_VERSION, "league", league) + rest)


def parse_address(text, tls=False):
    """HOST[:PORT] (IPv6 as [::1]:PORT) -> (host, port)."""
    text = str(text).strip()
    port = DEFAULT_TLS_PORT if tls else DEFAULT_PORT
    host = text
    m = re.match(r"^\[([^\]]+)\](?::(\d+))?$", text)
    if m:
        host, p = m.group(1), m.group(2)
    elif text.count(":") == 1:
        host, p = text.split(":")
    else:
        p = None
    if p is not None:
        if not p.isdigit() or not 0 < int(p) < 65536:
            raise ChalkError("%r is not HOST:PORT (the port must be 1-65535)" % text,
                             "e.g. --mqtt localhost:1883")
        port = int(p)
    if not host or any(c.isspace() for c in host):
        raise ChalkError("%r is not a broker address" % text, "e.g. --mqtt localhost:1883")
    return host, port


def read_json(path, what):
    """A JSON object from a config file, or one clear error naming the file."""
    from scoreboard import safejson

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ChalkError("no %s %s" % (what, path))
    except (OSError, UnicodeDecodeError) as e:
        raise ChalkError("cannot read the %s %s: %s" % (what, path,
                                                        getattr(e, "strerror", None) or e))
    try:
        data = safejson.loads(text)
    except ValueError as e:
        raise ChalkError("%s: not valid JSON (%s)" % (path, str(e)[:120]),
                         "docs/mqtt.md and docs/league.md show whole examples")
    if type(data) is not dict:
        raise ChalkError("%s: the %s must be a JSON object {...}" % (path, what))
    return data


def _type(where, key, value, types, text):
    if value is not None and type(value) not in types:
        raise ChalkError("%s: \"%s\" must be %s, not %s" % (where, key, text,
                                                            json.dumps(value)[:60]))
    return value


def broker_from(obj, where, base=None):
    """A Broker from a config file's "broker" object (paths relative to the file's folder)."""
    if type(obj) is not dict:
        raise ChalkError("%s: \"broker\" must be an object {\"host\": ..., \"port\": ...}"
                         % where)
    known = {"host", "port", "username", "password", "password_file", "tls", "keepalive"}
    extra = sorted(set(obj) - known)
    if extra:
        raise ChalkError("%s: unknown key \"broker.%s\" (known: %s)" % (
            where, printable(extra[0])[:40], ", ".join(sorted(known))))
    b = Broker(where=where)
    b.host = _type(where, "broker.host", obj.get("host"), (str,), "a host name") or b.host
    tls = obj.get("tls")
    _type(where, "broker.tls", tls, (bool, dict), "true, false or {\"ca\", \"cert\", \"key\"}")
    if tls:
        b.tls = True
        b.port = DEFAULT_TLS_PORT
        if type(tls) is dict:
            bad = sorted(set(tls) - {"ca", "cert", "key"})
            if bad:
                raise ChalkError("%s: unknown key \"broker.tls.%s\" (known: ca, cert, key)"
                                 % (where, printable(bad[0])[:40]))
            for k in ("ca", "cert", "key"):
                v = _type(where, "broker.tls." + k, tls.get(k), (str,), "a file path")
                setattr(b, k, _path(v, base))
    port = _type(where, "broker.port", obj.get("port"), (int,), "a port number")
    if port is not None:
        if not 0 < port < 65536:
            raise ChalkError("%s: \"broker.port\" %d is not a port (1-65535)" % (where, port))
        b.port = port
    b.username = _type(where, "broker.username", obj.get("username"), (str,), "text")
    b.password = _type(where, "broker.password", obj.get("password"), (str,), "text")
    pf = _type(where, "broker.password_file", obj.get("password_file"), (str,), "a file path")
    if pf:
        b.password = read_password(_path(pf, base))
    ka = _type(where, "broker.keepalive", obj.get("keepalive"), (int,), "seconds")
    if ka is not None:
        if not 5 <= ka <= 3600:
            raise ChalkError("%s: \"broker.keepalive\" must be 5-3600 seconds" % where)
        b.keepalive = ka
    return b


def _path(p, base):
    if p is None:
        return None
    p = Path(p).expanduser()
    return str(p if p.is_absolute() or base is None else Path(base) / p)


def read_password(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ChalkError("cannot read the broker password file %s: %s" % (
            path, getattr(e, "strerror", None) or e), "the file holds the password alone")
    pw = text.strip("\r\n")
    if not pw:
        raise ChalkError("the broker password file %s is empty" % path)
    return pw


def add_broker_options(p, what):
    """--mqtt HOST[:PORT], credentials and TLS (override a config file's "broker")."""
    p.add_argument("--mqtt", metavar="HOST[:PORT]",
                   help="the MQTT broker %s (default port 1883, 8883 with --mqtt-tls)" % what)
    p.add_argument("--mqtt-user", metavar="NAME", help="the broker user name")
    p.add_argument("--mqtt-password-file", metavar="FILE",
                   help="a file holding the broker password (or $%s)" % ENV_PASSWORD)
    p.add_argument("--mqtt-tls", action="store_true",
                   help="connect with TLS (the system's CA certificates unless --mqtt-ca)")
    p.add_argument("--mqtt-ca", metavar="FILE", help="CA certificate(s) to trust (PEM); "
                   "implies --mqtt-tls")
    p.add_argument("--mqtt-cert", metavar="FILE", help="client certificate (PEM), with "
                   "--mqtt-key")
    p.add_argument("--mqtt-key", metavar="FILE", help="client key (PEM)")


def broker_from_args(args, broker=None):
    """The broker options over a config file's Broker (or the defaults)."""
    b = broker or Broker()
    if getattr(args, "mqtt_tls", False) or getattr(args, "mqtt_ca", None):
        if not b.tls:
            b.tls = True
            if b.port == DEFAULT_PORT:
                b.port = DEFAULT_TLS_PORT
    if getattr(args, "mqtt", None):
        b.host, b.port = parse_address(args.mqtt, b.tls)
        b.where = "--mqtt"
    if getattr(args, "mqtt_user", None):
        b.username = args.mqtt_user
    if getattr(args, "mqtt_password_file", None):
        b.password = read_password(args.mqtt_password_file)
    elif b.password is None and os.environ.get(ENV_PASSWORD):
        b.password = os.environ[ENV_PASSWORD]
    for k in ("ca", "cert", "key"):
        v = getattr(args, "mqtt_" + k, None)
        if v:
            setattr(b, k, v)
    if (b.cert is None) != (b.key is None):
        raise ChalkError("a client certificate needs its key (and a key its certificate)",
                         "give both --mqtt-cert and --mqtt-key")
    for k in ("ca", "cert", "key"):
        v = getattr(b, k)
        if v is not None and not Path(v).is_file():
            raise ChalkError("no TLS %s file %s" % ({"ca": "CA", "cert": "certificate",
                                                      "key": "key"}[k], v))
    if b.password is not None and b.username is None:
        raise ChalkError("a broker password without a user name", "give --mqtt-user NAME")
    return b


class Connection:
    """A paho client that keeps itself connected: on_up(client) after every (re)connection,
    on_message(topic, payload, retained). `will`: (topic, payload) retained as a last will.
    `up` is a threading.Event set while connected; `problem` says why not, in words."""

    def __init__(self, broker, client_id, on_up=None, on_message=None, will=None,
                 persistent=True):
        import paho.mqtt.client as mqtt

        self.broker = broker
        self.up = threading.Event()
        self.problem = "connecting to the broker at %s" % broker.describe()
        self.on_up = on_up
        self.on_message = on_message
        c = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2,
                        client_id=client_id, clean_session=not persistent,
                        protocol=mqtt.MQTTv311)
        if broker.username is not None:
            c.username_pw_set(broker.username, broker.password)
        if broker.tls:
            import ssl

            try:
                c.tls_set(ca_certs=broker.ca, certfile=broker.cert, keyfile=broker.key,
                          cert_reqs=ssl.CERT_REQUIRED)
            except (OSError, ValueError, ssl.SSLError) as e:
                raise ChalkError("cannot use the TLS files for the broker: %s" % e,
                                 "check --mqtt-ca, --mqtt-cert and --mqtt-key")
        if will is not None:
            c.will_set(will[0], will[1], qos=1, retain=True)
        c.reconnect_delay_set(1, 10)
        c.max_queued_messages_set(1000)
        c.on_connect = self._connected
        c.on_disconnect = self._disconnected
        c.on_message = self._message
        c.on_connect_fail = self._failed
        self.client = c

    def start(self):
        try:
            self.client.connect_async(self.broker.host, self.broker.port,
                                      keepalive=self.broker.keepalive)
        except (OSError, ValueError) as e:
            raise ChalkError("cannot reach the broker at %s: %s" % (self.broker.describe(), e))
        self.client.loop_start()

    def stop(self, last=None):
        """Disconnect (publishing `last` (topic, payload), retained, first if connected)."""
        if last is not None and self.up.is_set():
            try:
                self.client.publish(last[0], last[1], qos=1, retain=True).wait_for_publish(2.0)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
        self.up.clear()

    def publish(self, topic, payload, qos=0, retain=False):
        """Publish if connected; returns the paho MessageInfo, or None when not connected."""
        if not self.up.is_set():
            return None
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        return info if info.rc == 0 else None

    def _connected(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self.problem = "the broker at %s refused us: %s" % (self.broker.describe(),
                                                                reason_code)
            return
        self.problem = None
        self.up.set()
        if self.on_up is not None:
            self.on_up(client)

    def _disconnected(self, client, userdata, flags, reason_code, properties):
        self.up.clear()
        self.problem = "lost the broker at %s (%s); reconnecting" % (self.broker.describe(),
                                                                      reason_code)

    def _failed(self, client, userdata):
        self.problem = "cannot reach the broker at %s; retrying" % self.broker.describe()

    def _message(self, client, userdata, msg):
        if self.on_message is not None:
            self.on_message(msg.topic, msg.payload, bool(msg.retain))
