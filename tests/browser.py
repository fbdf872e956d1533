"""A real browser for the scoreboard pages: Debian's Chromium, headless, driven by Selenium
through Debian's chromedriver; and a `chalk serve` on simulated boards to point it at.

Also run as a script to regenerate the screenshots in docs/ (`make screenshots`):
    python -m tests.browser docs/
"""

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("chromium", "chromium-driver")


def find_chromium():
    """(chromium, chromedriver) paths, installing Debian's packages when missing and allowed
    (root, apt-get present); None with the reason otherwise."""
    def paths():
        return (shutil.which("chromium") or shutil.which("chromium-browser"),
                shutil.which("chromedriver"))

    browser, driver = paths()
    if browser and driver:
        return (browser, driver), None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, ("Chromium and its driver are not installed (apt-get install %s)"
                      % " ".join(PACKAGES))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + list(PACKAGES)):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return None, "%s failed: %s" % (" ".join(cmd), (r.stderr or r.stdout)[-300:])
    browser, driver = paths()
    if browser and driver:
        return (browser, driver), None
    return None, "installed %s, but chromium or chromedriver is still not on PATH" % (
        " ".join(PACKAGES))


def chrome(paths, width=1280, height=800, dark=None):
    """A headless Chromium under Selenium whose page is exactly width x height CSS pixels (a
    phone's below 600 px wide, with touch and its own scroll bars), preferring a dark or a
    light colour scheme if asked (None: Chromium's own, light)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = paths
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--window-size=%d,%d" % (width, height)):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    size(drv, width, height)
    if dark is not None:
        drv.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    return drv


def size(drv, width, height):
    """Make the page's viewport exactly width x height CSS pixels."""
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


class Served:
    """`chalk serve` in its own process on 127.0.0.1 (a free port, or `http_port`), serving
    `tables` [(name, port)], with its serve file and archive under `tmp`. Everything it prints
    is kept in `lines` (read as it comes, so a chatty server never blocks on its pipe)."""

    def __init__(self, tmp, tables, idle=2.0, http_port=0, env=None, args=()):
        import threading

        self.tmp = Path(tmp)
        self.env = dict(os.environ, CHALK_SERVE_FILE=str(self.tmp / "serve.json"),
                        CHALK_DB=str(self.tmp / "archive.sqlite3"))
        self.env.pop("CHALK_PORT", None)
        self.env.update(env or {})
        cmd = [sys.executable, "-m", "chalk.cli", "serve", "--http-port", str(http_port),
               "--idle", str(idle)] + list(args)
        for name, port in tables:
            cmd += ["--table", "%s=%s" % (name, port)]
        self.log = open(self.tmp / "serve.log", "a+")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=self.env, cwd=str(ROOT))
        self.url = None
        self.lines = []
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("scoreboard at "):
                self.url = line.split()[2].rstrip("/")
                break
        if self.url is None:
            self.proc.wait(10)
            self.log.seek(0)
            raise RuntimeError("chalk serve did not start: %s%s" % ("".join(self.lines),
                                                                   self.log.read()))
        self.port = int(self.url.rsplit(":", 1)[1])
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def said(self, text):
        """Whether the server printed a line holding `text`."""
        return any(text in line for line in list(self.lines))

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def post(self, path, body, headers=None):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers=dict({"Content-Type": "application/json"},
                                                  **(headers or {})), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def wait_table(self, name, pred, timeout=60.0):
        """The table's API answer once pred(answer) holds (it changes as the board acts)."""
        deadline = time.monotonic() + timeout
        while True:
            t = self.get("/api/tables/" + name)
            if pred(t):
                return t
            if time.monotonic() > deadline:
                raise AssertionError("table %s never got there: %s" % (name, t))
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(10)
        self.log.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


GAMES = ("shove-hapenny", "five-pins", "texas-42", "seven-pins", "novuss", "domino-bingo",
         "tally")
LONG_NAMES = ["Bartholomew Fotheringham-Smythe", "Maximiliana Oyelaran-Vasquez",
              "Annabel", "Christopher"]


def sample_status(game, actions=8, players=None, warnings=(), game_no=3):
    """The `state` reply a board of `game` gives after the first `actions` actions of its
    sample game (host/chalk/samples), as a board would send it."""
    from scoreboard import matchlog
    from scoreboard.rules import new_game

    lines = (ROOT / "host" / "chalk" / "samples" / (game + ".jsonl")).read_text().splitlines()
    head = json.loads(lines[0])
    g = new_game(head["game"], head["config"])
    last = None
    for line in lines[1:actions + 1]:
        last = matchlog.strip_meta(json.loads(line))
        last.pop("t", None)
        g.apply(last)
    return {"game": game, "game_no": game_no, "last_seq": actions + 1, "state": g.state(),
            "players": players or head["players"], "last": json.dumps(last)[:40],
            "warnings": list(warnings), "note": None, "mode": "scoring",
            "screen": ["", ""], "outcome": None}


class _Heard:
    """A board link that has just heard its board (a table that is scoring)."""

    beat = None
    ser = None
    noise = ()

    @property
    def heard(self):
        return time.monotonic()


class PageServer:
    """The venue's pages for tables with given statuses, served in this process (uvicorn in a
    thread, 127.0.0.1, a free port): for layout tests, which need tables in every state and
    game but no boards. `tables`: [(name, status or None, scoring)]."""

    def __init__(self, tmp, tables, db_path=None):
        import socket
        import threading

        import uvicorn

        from chalk import serve, web
        from chalk.commands.serve import uvicorn_config

        self.venue = serve.Venue(str(Path(tmp) / "pages.sqlite3"), say=lambda text: None)
        for name, status, scoring in tables:
            t = self.venue.add(name, "/dev/null-" + name)
            t.status = status
            if scoring:
                t.phase, t.link = "live", _Heard()
        app = web.create_app(self.venue, db_path=db_path)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn_config(app))
        self.server.install_signal_handlers = lambda: None  # uvicorn < 0.29
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the page server did not start")
            time.sleep(0.02)

    def close(self):
        self.venue.stop.set()
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def play(served, table, trace_lines, chunk=24):
    """Play sensor-trace lines on a served simulated board in their own time, as a person at
    the table would: each chunk is injected just before it is due."""
    t0 = trace_lines[0]["t"]
    start = time.monotonic()
    for i in range(0, len(trace_lines), chunk):
        part = trace_lines[i:i + chunk]
        while (part[0]["t"] - t0) / 1000.0 - (time.monotonic() - start) > 0.5:
            time.sleep(0.05)  # pacing the player, not waiting for a result
        now_ms = (time.monotonic() - start) * 1000.0
        events = [{"t": max(0, int(e["t"] - t0 - now_ms)), "line": e["line"], "v": e["v"]}
                  for e in part]
        status, body = served.post("/api/tables/%s/request" % table,
                                   {"cmd": "inject", "args": {"events": events}})
        assert status == 200, body


def screenshots(out_dir):
    """docs/venue-tables.png (a TV: the venue page with ?tv), docs/venue-table.png (one table's
    page, light) and docs/venue-phone.png (a phone, one table not scoring): three simulated
    tables mid-game (five pins, shove ha'penny, texas-42 on a scorepad)."""
    import os
    import signal
    import tempfile

    from chalk.sim import Sim
    from scoreboard import matchlog

    paths, why = find_chromium()
    if paths is None:
        raise SystemExit("screenshots: " + why)
    out = Path(out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        samples = ROOT / "host" / "chalk" / "samples"
        # The shove ha'penny board plays its sample trace (pegs and all) from boot; the others
        # are given the first actions of their sample games.
        with Sim("five-pins", flash=tmp / "fp", test_mode=True) as fp, \
                Sim("shove-hapenny", flash=tmp / "sh",
                    trace=samples / "traces" / "shove-hapenny.jsonl") as sh, \
                Sim("scorepad", flash=tmp / "sp", test_mode=True) as sp, \
                Served(tmp, [("window", fp.port), ("snug", sh.port), ("bar", sp.port)]) as served:
            for name, sample, cut in (("window", "five-pins.jsonl", 9),
                                      ("bar", "texas-42.jsonl", 4)):
                lines = (samples / sample).read_text().splitlines()
                head = json.loads(lines[0])
                served.wait_table(name, lambda t: t["connected"])
                served.post("/api/tables/%s/new" % name, {
                    "game": head["game"], "config": head["config"], "players": head["players"]})
                for line in lines[1:cut]:
                    action = matchlog.strip_meta(json.loads(line))
                    action.pop("t", None)
                    status, body = served.post("/api/tables/%s/request" % name,
                                               {"cmd": "act", "args": {"action": action}})
                    assert status == 200, body
            served.wait_table("snug", lambda t: (t["view"]["seq"] or 0) >= 14, timeout=300)
            drv = chrome(paths, 1920, 1080)
            try:
                for path, name in (("/?tv", "venue-tables.png"),
                                   ("/table/snug?theme=light", "venue-table.png")):
                    drv.get(served.url + path)
                    _wait_live(drv)
                    wait_drawn(drv)
                    drv.save_screenshot(str(out / name))
                    print("wrote", out / name)
            finally:
                drv.quit()
            # The phone: its owner prefers light; the scorepad's board is frozen meanwhile.
            os.killpg(sp.proc.pid, signal.SIGSTOP)
            try:
                served.wait_table("bar", lambda t: t["state"] == "silent")
                drv = chrome(paths, 360, 740, dark=False)
                try:
                    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                        "width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True})
                    drv.get(served.url + "/")
                    _wait_live(drv)
                    wait_drawn(drv)
                    drv.save_screenshot(str(out / "venue-phone.png"))
                    print("wrote", out / "venue-phone.png")
                finally:
                    drv.quit()
            finally:
                os.killpg(sp.proc.pid, signal.SIGCONT)


def _wait_live(drv, timeout=30):
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, timeout).until(
        lambda d: d.find_element("tag name", "body").get_attribute("data-live") == "1")


def wait_drawn(drv, timeout=30):
    """The page has loaded and laid itself out (two animation frames after the last change)."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(
        "return document.readyState === 'complete'"))
    drv.execute_async_script("""
        var done = arguments[arguments.length - 1];
        requestAnimationFrame(function () { requestAnimationFrame(function () { done(); }); });
    """)


if __name__ == "__main__":
    screenshots(sys.argv[1] if len(sys.argv) > 1 else "docs")
