"""Write the bundled sample matches (host/chalk/samples/) from seeded random legal games, and
the sensor traces `make demo` plays: each game's sample (seed, accuracy, players) and trace
builder are its host module's (chalk/games/)."""

import sys
from pathlib import Path

from chalk import games
from chalk.randomgame import random_match
from chalk.traces import from_matchlog
from scoreboard import matchlog

OUT = Path(__file__).resolve().parent.parent / "host" / "chalk" / "samples"

for g in games.every():
    if g.sample is None:
        continue
    head, actions = random_match(g.id, **g.sample)
    with open(OUT / (g.id + ".jsonl"), "w") as f:
        matchlog.write(f, head, actions)
    print("%s: %d actions" % (g.id, len(actions)), file=sys.stderr)

# Each sample's sensor trace (`make demo` plays them): the presses, pin falls, pegs and pockets
# at a table, or the keys typed on a scorepad, for every action.
for g in games.every():
    if g.sample is None:
        continue
    lines = (OUT / (g.id + ".jsonl")).read_text().splitlines()
    from_matchlog(lines, seed=1).write(OUT / "traces" / (g.id + ".jsonl"))
