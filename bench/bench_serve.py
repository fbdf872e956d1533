"""`chalk serve` under load, printed (never asserted): how many boards one server keeps up with
at one action a second each, and how long a board's action takes to reach the page.

N simulated boards of one kind (BOARD; the firmware on the MicroPython unix port, each behind
its own pseudo-terminal) are served by one `chalk serve`. Each board gets one action a second
through the server's API (`act`, a legal random game); a listener on the page's event stream
(/api/events, what the browser's EventSource reads) notes when each table's view shows the
action's seq. Latency is from the request to that event: the board applying and journaling the
action, its frames on the wire, the archive's transaction, the server's state refresh and the
push. "keeps up" is every action on the page, 95th percentile under a second.

On a machine with few cores the simulated boards (one MicroPython process each) compete with
the server for the CPU, so the figure is a floor for real boards, which bring their own CPU.
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk.randomgame import random_match  # noqa: E402
from chalk.sim import Sim  # noqa: E402
from scoreboard import matchlog  # noqa: E402

BOARD = "five-pins"  # the board config every simulated table of this bench runs
CONFIG = {"target": 400}  # its game's config: a game that lasts the bench
SECONDS = 12
BOARDS = (1, 4, 8, 16, 24, 32)


def smoke():
    """Small sizes for `bench.py --smoke` (make test)."""
    global SECONDS, BOARDS
    SECONDS, BOARDS = 2, (1, 2)


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def listen(url, seen, stop, alarms=None):
    """Note (table, seq) -> first time the page's event stream showed it; and in `alarms`
    every (table, state) the page showed while not scoring."""
    with urllib.request.urlopen(url + "/api/events", timeout=60) as r:
        data, event = None, None
        while not stop.is_set():
            line = r.readline()
            if not line:
                return
            line = line.strip()
            if line.startswith(b"event:"):
                event = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data = json.loads(line[5:])
            elif not line and data is not None:
                if event == "view":
                    key = (data["table"], data.get("seq"))
                    seen.setdefault(key, time.monotonic())
                    if alarms is not None and data.get("state", "scoring") != "scoring":
                        alarms.append((data["table"], data.get("state")))
                data, event = None, None


def _game():
    """The game BOARD plays (its config's)."""
    return json.loads((ROOT / "firmware" / "boards" / (BOARD + ".json")).read_text())["game"]


def drive(url, table, sent, errors, stop):
    _head, actions = random_match(_game(), seed=hash(table) % 1000, max_actions=200,
                                  config=dict(CONFIG))
    start = time.monotonic()
    for i, (_s, _t, a) in enumerate(actions):
        if stop.is_set():
            return
        due = start + i
        while time.monotonic() < due and not stop.is_set():
            time.sleep(0.01)
        a = matchlog.strip_meta(a)
        a.pop("t", None)
        t0 = time.monotonic()
        try:
            res = post(url + "/api/tables/%s/request" % table, {"cmd": "act",
                                                                "args": {"action": a}})
            sent.append((table, res["result"]["seq"], t0))
        except Exception as e:  # noqa: BLE001 - counted, printed in the summary
            errors.append(str(e))


def run(n, tmp, seconds):
    tmp = Path(tmp)
    sims = [Sim(BOARD, flash=tmp / ("flash%d" % i), test_mode=True) for i in range(n)]
    for s in sims:
        s.start()
    env = dict(os.environ, CHALK_SERVE_FILE=str(tmp / "serve.json"),
               CHALK_DB=str(tmp / "archive.sqlite3"))
    cmd = [sys.executable, "-m", "chalk.cli", "serve", "--quiet", "--http-port", "0"]
    for i, s in enumerate(sims):
        cmd += ["--table", "t%d=%s" % (i, s.port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        # What it says, read by a thread of its own (so it never waits on a full pipe, and a
        # server that never says where it is fails the bench instead of hanging it).
        said = queue.Queue()
        threading.Thread(target=lambda: [said.put(line) for line in proc.stdout],
                         daemon=True).start()
        deadline = time.monotonic() + 60 + 3 * n
        url = None
        while url is None:
            try:
                line = said.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError("chalk serve never said where its scoreboard is")
            if line.startswith("scoreboard at"):
                url = line.split()[2].rstrip("/")
        for i in range(n):
            while True:
                try:
                    with urllib.request.urlopen(url + "/api/tables/t%d" % i, timeout=10) as r:
                        if json.loads(r.read())["connected"]:
                            break
                except OSError:  # (a server busy starting its tables: asked again)
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("table t%d never connected" % i)
                time.sleep(0.1)
            post(url + "/api/tables/t%d/new" % i, {"game": _game(), "config": dict(CONFIG)})
        seen, sent, errors, alarms = {}, [], [], []
        stop, heard = threading.Event(), threading.Event()
        threading.Thread(target=listen, args=(url, seen, heard, alarms), daemon=True).start()
        time.sleep(0.5)
        drivers = [threading.Thread(target=drive, args=(url, "t%d" % i, sent, errors, stop))
                   for i in range(n)]
        for d in drivers:
            d.start()
        time.sleep(seconds)
        stop.set()
        for d in drivers:
            d.join()
        # An action is on the page once a view of its table at its seq or later arrived: the
        # last ones are waited for (10 s at most; one not there by then is missing).
        deadline = time.monotonic() + 10
        while True:
            lat, missing = [], 0
            for t, s, t0 in sent:
                times = [at for (table, seq), at in list(seen.items())
                         if table == t and type(seq) is int and seq >= s and at >= t0]
                if times:
                    lat.append(min(times) - t0)
                else:
                    missing += 1
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        heard.set()
        lat.sort()
        return len(sent), missing, len(errors), lat, alarms
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err = proc.stderr.read()
        if proc.returncode != 0 or err.strip():
            print("chalk serve ended with %s: %s" % (proc.returncode, err.strip()[-500:]))
        for s in sims:
            s.stop()


def pct(xs, p):
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000 if xs else float("nan")


def main(boards=None, seconds=None):
    # (the sizes read when it runs, not when it was defined: smoke() sets them first)
    boards = BOARDS if boards is None else boards
    seconds = SECONDS if seconds is None else seconds
    print("chalk serve: boards at one action a second each, %d s each (goal: keeps up, page "
          "update p95 < 1000 ms, never a table shown NOT SCORING)" % seconds)
    print("%6s %9s %8s %10s %10s %10s %7s  %s" % ("boards", "actions", "missing", "p50 ms",
                                                  "p95 ms", "max ms", "alarms", "keeps up"))
    best = 0
    for n in boards:
        with tempfile.TemporaryDirectory() as tmp:
            done, missing, errors, lat, alarms = run(n, tmp, seconds)
        ok = not missing and not errors and done >= n * (seconds - 1) and \
            pct(lat, 0.95) < 1000 and not alarms
        print("%6d %9d %8d %10.0f %10.0f %10.0f %7d  %s" % (
            n, done, missing + errors, pct(lat, 0.5), pct(lat, 0.95),
            lat[-1] * 1000 if lat else float("nan"), len(alarms), "yes" if ok else "no"),
            flush=True)
        if alarms:
            print("       shown not scoring: %s" % ", ".join(sorted(
                {"%s (%s)" % a for a in alarms})[:8]))
        if not ok:
            break
        best = n
    print("one chalk serve keeps up with %d board%s at one action a second each (goal: 32)"
          % (best, "" if best == 1 else "s"))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or BOARDS)
