"""`make demo`, Chalk's main job: a whole traced game of each kind on the simulated board (the
firmware on the MicroPython unix port), its screen, the scoresheet it kept, checked against the
rules. Every game of the registry with a bundled sample: its sensor trace
(host/chalk/samples/traces/<game>.jsonl) played on the board that plays it, with the sample's
config. Each command is printed before it runs, as make prints its own."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHALK = Path(sys.executable).with_name("chalk")


def commands():
    from chalk import games
    from chalk.sim import board_for

    samples = ROOT / "host" / "chalk" / "samples"
    for g in games.every():
        trace = samples / "traces" / (g.id + ".jsonl")
        if g.sample is None or not trace.is_file():
            continue
        head = json.loads((samples / (g.id + ".jsonl")).read_text().splitlines()[0])
        board = board_for(g.id)
        cmd = [str(CHALK), "sim", "--virtual", "--sheet", "--board", board]
        cfg = json.loads((ROOT / "firmware" / "boards" / (board + ".json")).read_text())
        if cfg["game"] != g.id:  # a scorepad switched to the game, with the sample's config
            cmd += ["--game", g.id, "--config", json.dumps(head["config"], separators=(",", ":"))]
        yield cmd + ["--trace", str(trace.relative_to(ROOT))]


def main():
    for i, cmd in enumerate(commands()):
        if i:
            print(flush=True)
        shown = [str(Path(c).relative_to(ROOT)) if c == str(CHALK) and CHALK.is_relative_to(ROOT)
                 else c for c in cmd]
        print(" ".join(shlex.quote(c) for c in shown), flush=True)
        if subprocess.run(cmd, cwd=str(ROOT)).returncode != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
