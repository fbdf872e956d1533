"""chalk replay: fold a match log through the rules; the final state or a scoresheet."""

import json

from chalk import logs, sheet
from chalk.errors import ChalkError

ORDER = 10


def run(args):
    """Replay a match log through the rules: print the final state, or the scoresheet."""
    log = logs.load(args.log, skip_bad=args.skip_bad)
    steps = []
    try:
        before = [logs.matchlog.new_game(log.header).state()] if args.sheet else None
    except logs.matchlog.LineError as e:  # a header config the rules cannot play
        raise ChalkError("%s %s" % (args.log, e), code=logs.RULE_BROKEN) from None

    def keep(n, rec, state):
        steps.append((n, rec, before[0], state))
        before[0] = state

    game = logs.replay(args.log, log, keep if args.sheet else None)
    if args.sheet:
        print("\n".join(sheet.scoresheet(log.header, steps, game.state())))
    else:
        print(json.dumps(game.state(), separators=(",", ":")))
    return 0


def register(sub):
    r = sub.add_parser("replay", help="replay a match log and print its final state",
                       description="Replay a match log (v1) through the rules. Prints the final "
                       "state as one JSON object and exits 0; exits 1 naming the line and rule if "
                       "the log breaks a rule, 2 if it cannot be read.")
    r.add_argument("log", help="match log file (JSON Lines), or - for standard input")
    r.add_argument("--sheet", action="store_true",
                   help="print a readable scoresheet: the state after every action")
    r.add_argument("--skip-bad", action="store_true",
                   help="replay the good lines of a log with malformed ones (reported on stderr)")
    r.set_defaults(func=run)
