"""Write the bundled sample matches (host/chalk/samples/) from seeded random legal games."""

import sys
from pathlib import Path

from chalk.randomgame import random_match
from chalk.traces import from_matchlog
from scoreboard import matchlog

OUT = Path(__file__).resolve().parent.parent / "host" / "chalk" / "samples"
SAMPLES = {
    "shove-hapenny": dict(seed=11, accuracy=0.55, players=["Ann", "Bob"]),
    "five-pins": dict(seed=5, accuracy=0.5, players=["Dasha", "Ivan"]),
    "seven-pins": dict(seed=0, accuracy=0.5, players=["Misha", "Oleg"]),
    "novuss": dict(seed=57, accuracy=0.5, players=["Liga", "Janis"]),
    "texas-42": dict(seed=42, accuracy=0.5, players=["Ann", "Bob", "Cy", "Di"]),
    "domino-bingo": dict(seed=7, accuracy=0.5, players=["Lena", "Oleg"]),
    "tally": dict(seed=3, accuracy=0.5, players=["Ann", "Bob", "Cy"]),
}

SCOREPAD = ("texas-42", "domino-bingo", "tally")  # their traces are keys typed on a scorepad

for game, kw in SAMPLES.items():
    head, actions = random_match(game, **kw)
    with open(OUT / (game + ".jsonl"), "w") as f:
        matchlog.write(f, head, actions)
    print("%s: %d actions" % (game, len(actions)), file=sys.stderr)
    if game in SCOREPAD:
        from chalk.traces import from_matchlog

        from_matchlog((OUT / (game + ".jsonl")).read_text().splitlines()).write(
            OUT / "traces" / (game + ".jsonl"))

# The sensor traces of the seven-pins and novuss samples (make demo plays them): a scorer's
# presses and the pins' falls for each action, built by chalk.traces.
for game in ("seven-pins", "novuss"):
    lines = (OUT / (game + ".jsonl")).read_text().splitlines()
    from_matchlog(lines, seed=1).write(OUT / "traces" / (game + ".jsonl"))
