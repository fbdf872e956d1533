"""chalk watch: a live scoreboard in the terminal."""

from chalk import watch
from chalk.commands import add_port

ORDER = 32


def run(args):
    """Show the board's game until Ctrl-C (or once, with --once)."""
    watch.watch(args.port, once=args.once, raw=args.raw)
    return 0


def register(sub):
    p = sub.add_parser("watch", help="show the board's score live in the terminal",
                       description="Show the game on the board: score, who is on move, the "
                       "last action and any warning (peg mismatch, stuck sensor, refused "
                       "action), redrawn whenever the board reports a change. When the output "
                       "is not a terminal, one line per change. Ctrl-C stops it.")
    add_port(p)
    p.add_argument("--once", action="store_true",
                   help="print the board's game once and exit")
    p.add_argument("--raw", action="store_true",
                   help="print every line from the board as it came, each frame decoded under "
                   "it (compact protocol-2 frames as the JSON they stand for)")
    p.set_defaults(func=run)
