"""chalk service: the board's service view from the computer, for bring-up and bad switches."""

import sys
import time

from chalk.commands import add_port, positive_seconds
from chalk.errors import ChalkError

ORDER = 55


def render(lines):
    """Text rows for a service reply's lines: {name: {"v", "edges"}} (an analog line: {"v"}, its
    reading) and "pegs": [s0, s1]."""
    rows = ["%-16s %5s %6s" % ("line", "level", "edges")]
    for name in sorted(k for k in lines if k != "pegs"):
        # An analog line (a colour sensor, "colour.<n>") has a reading and no edges.
        rows.append("%-16s %5d %6s" % (name, lines[name]["v"], lines[name].get("edges", "")))
    pegs = lines.get("pegs")
    if pegs is not None:
        rows.append("pegs present (bed 1-9, holes 1-3):")
        for side in (0, 1):
            beds = []
            for bed in range(9):
                bits = pegs[side] >> (bed * 3)
                beds.append("".join("o" if bits >> h & 1 else "." for h in range(3)))
            rows.append("  side %d  %s" % (side, " ".join(beds)))
    return rows


def run(args):
    from chalk.remote import connect
    from chalk.watch import gauge_line

    with connect(args.port) as link:
        if args.off:
            link.request("service", {"on": False})
            print("service view off: the board shows the game again")
            return 0
        # The view this command found the board in (entered at the table, say) is the one it
        # leaves it in: by default, scoring.
        was_on = link.request("state").get("mode") == "service"
        last = None
        try:
            while True:
                res = link.request("service", {"on": True})
                gauge = gauge_line(res.get("gauge"))
                text = "\n".join(render(res["lines"]) + ([gauge] if gauge else []))
                if text != last:
                    last = text
                    if sys.stdout.isatty() and not args.once:
                        sys.stdout.write("\x1b[H\x1b[2J")
                    print(text, flush=True)
                if args.once:
                    return 0
                time.sleep(args.every)
        finally:
            # The board does not score in the service view: leave it as it was, whatever ended
            # this (--once, Ctrl-C, an error), unless the link itself is gone.
            try:
                link.request("service", {"on": was_on})
            except ChalkError:
                pass


def register(sub):
    s = sub.add_parser("service", help="show every line's level and edge count (bring-up)",
                       description="Put the board in its service view and show every button "
                       "and tilt line's live level and edge count, and the pegs present, until "
                       "Ctrl-C (or once, with --once); the board goes back to the game when it "
                       "ends. --off returns a board left in the service view to the game (a long "
                       "press of undo on the board does the same).")
    add_port(s)
    s.add_argument("--once", action="store_true", help="print the lines once and exit")
    s.add_argument("--off", action="store_true", help="leave the service view")
    s.add_argument("--every", type=positive_seconds, default=0.5,
                   help="seconds between readings")
    s.set_defaults(func=run)
