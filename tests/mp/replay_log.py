# Replays a match log on MicroPython (or CPython), reading it line by line as a board would,
# and prints the final state as JSON. Usage: micropython replay_log.py LOG
import json
import sys

from scoreboard import matchlog

with open(sys.argv[1]) as f:
    try:
        game = matchlog.replay_lines(f)
    except matchlog.LineError as e:
        print(str(e))
        sys.exit(1)
print(json.dumps(game.state()))
