# Writes to a journal until killed, printing each seq the moment its write returned.
# Usage: micropython journal_writer.py DIR [ACTIONS_PER_GAME]
# Output: "boot <last_seq> <errors> <repaired>", then one seq per line. A seq printed is a
# record the journal acknowledged: it must survive whatever happens to this process next.

import sys

from scoreboard.journal import Journal

HEAD = {"chalk": 1, "game": "five-pins", "config": {"target": 60},
        "players": ["Cat", "Dan"], "started": "2025-02-01T21:00:00"}

root = sys.argv[1]
per_game = int(sys.argv[2]) if len(sys.argv) > 2 else 25
j = Journal(root)
r = j.boot()
print("boot %d %d %d" % (r.last_seq, len(r.errors), len(r.repaired)))
n = r.count
while True:
    if r.header is None:
        print(j.new_game(HEAD)[1])
        r.header = HEAD
        n = 0
    n += 1
    print(j.append({"a": "shot", "player": n % 2, "pins": "12C"[:n % 4], "carom": 0,
                    "fouls": [], "t": 700 * n}))
    if n >= per_game:
        print(j.end_game({"winner": n % 2}))
        r.header = None
