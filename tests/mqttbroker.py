"""Real brokers for the MQTT tests: Debian's mosquitto on loopback ports, each with a config of
its own; a TCP link between two of them that a test can cut (the pub's internet going down);
a paho subscriber that collects what it is sent, waited on by predicate."""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def mosquitto():
    """The mosquitto binary (installed by .ci/run); installed with apt here when missing and
    allowed, else the test is skipped with the reason."""
    found = shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                     "mosquitto"]):
            subprocess.run(cmd, env=env, capture_output=True, timeout=900)
        found = shutil.which("mosquitto") or (
            "/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
        if found:
            return found
    pytest.skip("mosquitto is not installed (apt-get install mosquitto)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until(pred, timeout=30.0, what="the condition", every=0.02):
    """Poll `pred` until it holds (a deadline, not a pace); its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(every)


class Broker:
    """`mosquitto -c FILE` on 127.0.0.1:port. `extra`: more config lines (a bridge, users)."""

    def __init__(self, tmp, name, extra="", port=None, anonymous=True, persistence=False):
        self.dir = Path(tmp) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.port = port or free_port()
        self.conf = self.dir / "mosquitto.conf"
        lines = ["per_listener_settings false", "listener %d 127.0.0.1" % self.port,
                 "allow_anonymous %s" % ("true" if anonymous else "false"),
                 "log_dest file %s" % (self.dir / "mosquitto.log"),
                 "log_type error", "log_type warning", "log_type notice",
                 "connection_messages true"]
        if os.geteuid() == 0:  # mosquitto started by root drops to the `mosquitto` user,
            lines.append("user root")  # who could not read the files made here
        if persistence:
            lines += ["persistence true", "persistence_location %s/" % self.dir,
                      "autosave_interval 1"]
        self.conf.write_text("\n".join(lines) + "\n" + extra)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([mosquitto(), "-c", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def up():
            if self.proc.poll() is not None:
                raise AssertionError("mosquitto %s exited: %s %s" % (
                    self.name, self.proc.stderr.read().decode()[-500:], self.log()[-500:]))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return True
            except OSError:
                return False
        wait_until(up, 20, "mosquitto %s to listen on port %d" % (self.name, self.port))
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def log(self):
        p = self.dir / "mosquitto.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def add_user(broker_dir, passwd_file, user, password):
    """A user in a mosquitto password file (mosquitto_passwd, Debian's mosquitto package)."""
    tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    flags = ["-b"] if Path(passwd_file).exists() else ["-c", "-b"]
    subprocess.run([tool] + flags + [str(passwd_file), user, password], check=True,
                   capture_output=True, timeout=30)
    os.chmod(passwd_file, 0o600)


class Link:
    """A TCP relay 127.0.0.1:port -> target port: the line between a venue and the league.
    cut() drops every connection and refuses new ones; mend() takes them again."""

    def __init__(self, target, port=None):
        self.target = target
        self.port = port or free_port()
        self._socks = []
        self._server = None
        self._lock = threading.Lock()
        self.mend()

    def mend(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self._server = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, server):
        while True:
            try:
                a, _ = server.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                a.close()
                continue
            b.settimeout(None)
            with self._lock:
                self._socks += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(x, y), daemon=True).start()

    def _pipe(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        if self._server is not None:
            try:  # wakes the thread in accept(), so the port is free again at once
                self._server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._server.close()
            self._server = None
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.cut()


class Subscriber:
    """A paho client subscribed to `topics`, keeping every message (topic, payload, retain)."""

    def __init__(self, port, topics, client_id=None, username=None, password=None):
        import paho.mqtt.client as mqtt

        self.messages = []
        self.cond = threading.Condition()
        self.connected = threading.Event()
        c = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2,
                        client_id=client_id or "", protocol=mqtt.MQTTv311)
        if username:
            c.username_pw_set(username, password)
        topics = [(t, 1) for t in topics]

        def on_connect(client, userdata, flags, rc, props):
            if topics:
                client.subscribe(topics)
            else:
                self.connected.set()

        def on_subscribe(client, userdata, mid, rcs, props):
            self.connected.set()

        def on_message(client, userdata, msg):
            with self.cond:
                self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))
                self.cond.notify_all()

        c.on_connect, c.on_message, c.on_subscribe = on_connect, on_message, on_subscribe
        c.connect("127.0.0.1", port, keepalive=30)
        c.loop_start()
        self.client = c
        assert self.connected.wait(20), "the subscriber never got its subscription"

    def publish(self, topic, payload, qos=1, retain=False):
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(10)
        return info

    def wait(self, pred, timeout=30.0, what="a message"):
        """The first message (topic, payload, retain) pred holds for, waiting for it."""
        deadline = time.monotonic() + timeout
        with self.cond:
            seen = 0
            while True:
                for m in self.messages[seen:]:
                    if pred(m):
                        return m
                seen = len(self.messages)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for %s; got %s" % (
                        what, [t for t, _p, _r in self.messages[-15:]]))
                self.cond.wait(left)

    def json(self, topic_end, pred=lambda b: True, timeout=30.0):
        """The payload (as JSON) of the first message whose topic ends with `topic_end`."""
        m = self.wait(lambda m: m[0].endswith(topic_end) and _ok(pred, m[1]), timeout,
                      "a message on ...%s" % topic_end)
        return json.loads(m[1])

    def on(self, topic_end):
        return [json.loads(p) if p[:1] in b"{[" else p for t, p, _r in list(self.messages)
                if t.endswith(topic_end)]

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _ok(pred, payload):
    try:
        return pred(json.loads(payload))
    except ValueError:
        return False


def launch(cmd, env, log_path, marker):
    """A chalk command in a process of its own, up once it prints a line starting `marker`
    (its address the line's third word): (process, log file, url, lines printed). Its output
    is read on by a thread of its own, into the same list."""
    log = open(log_path, "a+")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                            cwd=str(ROOT))
    lines, url = [], None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(marker):
            url = line.split()[2].rstrip("/")
            break
    if url is None:
        proc.wait(10)
        log.seek(0)
        raise RuntimeError("%s did not start: %s%s" % (" ".join(map(str, cmd[2:5])),
                                                      "".join(lines), log.read()))

    def drain():
        for line in proc.stdout:
            lines.append(line)
    threading.Thread(target=drain, daemon=True).start()
    return proc, log, url, lines


def stop_process(proc, kill=False):
    if proc is not None and proc.poll() is None:
        (proc.kill if kill else proc.terminate)()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode if proc is not None else None


class Serve:
    """`chalk serve` in a process of its own, publishing to a broker (`mqtt_args`), its archive,
    serve file and key store under `dir`."""

    def __init__(self, dir, tables, mqtt_args=(), env=None, idle=2.0):
        self.dir = Path(dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.tables = tables
        self.mqtt_args = list(mqtt_args)
        self.env = dict(os.environ, CHALK_SERVE_FILE=str(self.dir / "serve.json"),
                        CHALK_DB=str(self.dir / "archive.sqlite3"), **(env or {}))
        self.env.pop("CHALK_PORT", None)
        self.idle = idle
        self.proc = None
        self.url = None

    def start(self):
        cmd = [sys.executable, "-m", "chalk.cli", "serve", "--http-port", "0", "--idle",
               str(self.idle)] + self.mqtt_args
        for name, port in self.tables:
            cmd += ["--table", "%s=%s" % (name, port)]
        self.proc, self.log, self.url, self.lines = launch(
            cmd, self.env, self.dir / "serve.log", "scoreboard at ")
        return self

    def call(self, method, path, body=None, headers=None):
        import urllib.error
        import urllib.request

        req = urllib.request.Request(
            self.url + path, data=None if body is None else json.dumps(body).encode(),
            headers=dict({"Content-Type": "application/json"}, **(headers or {})),
            method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def table(self, name):
        return self.call("GET", "/api/tables/" + name)[1]

    def wait_table(self, name, pred, timeout=60.0):
        return wait_until(lambda: (lambda t: t if pred(t) else None)(self.table(name)),
                          timeout, "table %s" % name, every=0.05)

    def act(self, table, action):
        status, body = self.call("POST", "/api/tables/%s/request" % table,
                                 {"cmd": "act", "args": {"action": action}})
        assert status == 200, body
        return body["result"]

    def new(self, table, game, players, config=None):
        body = {"game": game, "players": players}
        if config is not None:
            body["config"] = config
        status, r = self.call("POST", "/api/tables/%s/new" % table, body)
        assert status == 200, r
        return r["result"]

    def stop(self, kill=False):
        rc = stop_process(self.proc, kill)
        if self.proc is not None:
            self.log.close()
        self.proc = None
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
