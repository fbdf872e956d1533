"""`make demo`, last part: `chalk serve` on a simulated board, and other commands through it.

A simulated table (the registry's first game, on its board) plays its sample sensor trace;
`chalk serve` archives it and serves the scoreboard page; `chalk watch --once` and `chalk stats`
then run beside it, the first through the server's API (the port is the server's). Everything
stays on 127.0.0.1 and in a temporary directory; the commands are printed as a user would type
them.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chalk import games  # noqa: E402
from chalk.sim import Sim, board_for  # noqa: E402

GAME = games.IDS[0]
TRACE = ROOT / "host" / "chalk" / "samples" / "traces" / (GAME + ".jsonl")


def say(text):
    print(text, flush=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, CHALK_SERVE_FILE=str(tmp / "serve.json"),
                   CHALK_DB=str(tmp / "archive.sqlite3"))
        env.pop("CHALK_PORT", None)
        board = board_for(GAME)
        with Sim(board, flash=tmp / "flash", trace=TRACE, game=GAME) as sim:
            say("$ chalk sim --board %s --trace %s &" % (board, TRACE.relative_to(ROOT)))
            say("simulated board on %s" % sim.port)
            say("$ chalk serve --table snug=%s" % sim.port)
            serve = subprocess.Popen(
                [sys.executable, "-m", "chalk.cli", "serve", "--quiet", "--http-port", "0",
                 "--table", "snug=" + sim.port], stdout=subprocess.PIPE, text=True, env=env)
            url = None
            for line in serve.stdout:
                say("  " + line.rstrip())
                if line.startswith("scoreboard at"):
                    url = line.split()[2].rstrip("/")
                    break
            try:
                if url is None:
                    raise SystemExit("chalk serve did not start")
                # Wait until the board has played a few actions (the trace is minutes long).
                deadline = time.monotonic() + 120
                seen = set()
                while time.monotonic() < deadline and len(seen) < 4:
                    with urllib.request.urlopen(url + "/api/tables/snug", timeout=10) as r:
                        t = json.loads(r.read())
                    if t["connected"] and t["view"].get("rows"):
                        seen.add(json.dumps(t["view"]["rows"], sort_keys=True))  # a new score
                    time.sleep(0.2)
                say("$ chalk watch --once        # the board's port is chalk serve's: "
                    "through its API")
                r = subprocess.run([sys.executable, "-m", "chalk.cli", "watch", "--once"],
                                   capture_output=True, text=True, env=env, timeout=60)
                say(r.stdout.rstrip() or r.stderr.rstrip())
                say("$ curl %s/api/tables/snug" % url)
                with urllib.request.urlopen(url + "/api/tables/snug", timeout=10) as r:
                    v = json.loads(r.read())["view"]
                say("  " + json.dumps({k: v[k] for k in ("table", "game", "headline",
                                                         "on_move", "scoring")}))
                say("  " + "; ".join("%s %s" % (row["name"], row["score"]) for row in v["rows"]))
                say("open %s/ for every table, %s/table/snug for this one" % (url, url))
            finally:
                serve.terminate()
                rest = serve.communicate(timeout=30)[0]
                say("(chalk serve stopped) " + " ".join(rest.split("\n")[-3:]).strip())


if __name__ == "__main__":
    main()
