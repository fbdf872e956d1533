# Checkpointed undo on MicroPython: applies a list of actions (undos among them) with a small
# block size, and after every one compares the state with a full refold from the initial state.
# Usage: micropython checkpoint_check.py OPS.jsonl BLOCK   (line 1 {"game", "config"}, then one
# action per line, read one at a time)
# Prints one JSON line per action: {"state": ..., "len": n} or {"error": rule}.
import json
import sys

from scoreboard.rules import RuleError, new_game
from scoreboard.rules.base import Codes

f = open(sys.argv[1])
head = json.loads(f.readline())
Codes._BLOCK = int(sys.argv[2])
game = new_game(head["game"], head["config"])
for line in f:
    action = json.loads(line)
    try:
        game.apply(action)
    except RuleError as e:
        print(json.dumps({"error": e.rule}))
        continue
    codes = list(game._codes)
    if game.fold(codes) != game._s:
        print(json.dumps({"mismatch": len(codes)}))
        sys.exit(1)
    for k in range(len(codes) + 1):
        if game.state_at(k) != game.fold(codes, k):
            print(json.dumps({"mismatch_at": k}))
            sys.exit(1)
    print(json.dumps({"state": game.state(), "len": len(game)}))
