# Runs scenario files on MicroPython (or CPython) and prints one JSON line per step:
#   {"file": F, "step": I, "state": {...}, "error": rule or null, "problems": [...]}
# The pytest side runs the same files in-process on CPython and compares line by line.
# Usage: micropython run_scenarios.py FILE...

import gc
import json
import sys

from scoreboard import scenario
from scoreboard.rules import RuleError, new_game


def run_file(path):
    with open(path) as f:
        sc = json.load(f)
    game = new_game(sc["game"], sc.get("config"))
    for i, state, err, problems in scenario.run(sc, game.apply, game.state, RuleError):
        print(json.dumps({"file": path, "step": i, "state": state, "error": err,
                          "problems": problems}))
    gc.collect()


for p in sys.argv[1:]:
    run_file(p)
