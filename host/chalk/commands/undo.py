"""chalk undo: take back the board's last action, as the undo button does."""

from chalk import remote, watch
from chalk.commands import add_port

ORDER = 35


def run(args):
    """Retract the latest action not already retracted; print the game as the board shows it."""
    with remote.connect(args.port) as board:
        result = board.request("undo")
        print("undone on %s (journal seq %s)" % (board.port, result.get("seq")))
        print("\n".join(watch.render(board.request("state"))))
    return 0


def register(sub):
    p = sub.add_parser("undo", help="take back the board's last action",
                       description="Retract the latest action not already retracted (the same "
                       "as the board's undo button): journalled as an undo action, archived like "
                       "any other. Exits 1 with the board's message when there is nothing to "
                       "undo.")
    add_port(p)
    p.set_defaults(func=run)
