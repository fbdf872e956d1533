"""chalk record: a real board's line changes as a sensor trace, to replay at a desk."""

import sys

from chalk.commands import add_port, positive_seconds

ORDER = 57


def run(args):
    from chalk.record import record

    def say(msg):
        print(msg, file=sys.stderr, flush=True)

    n = record(args.port, args.trace, seconds=args.seconds, say=say)
    say("%d line changes recorded in %s (replay: chalk sim --virtual --trace %s --board BOARD)"
        % (n, args.trace, args.trace))
    return 0


def register(sub):
    s = sub.add_parser("record", help="record a board's line changes as a sensor trace",
                       description="Record every button, tilt-line and peg-hole change of the "
                       "board, with the board's own ms, as a sensor trace (docs/sensor-trace.md), "
                       "until Ctrl-C. The board goes on scoring meanwhile. `chalk sim --trace "
                       "FILE` replays the trace at a desk.")
    add_port(s)
    s.add_argument("trace", help="the sensor trace to write (JSON Lines)")
    s.add_argument("--seconds", type=positive_seconds, help="stop after this many seconds")
    s.set_defaults(func=run)
