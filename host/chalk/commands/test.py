"""chalk test: rule-level scenarios against a board over the link."""

import sys

from chalk import remote, scenarios
from chalk.commands import add_port

ORDER = 40


def run(args):
    """Run the scenarios; print the table; exit 0 only if every scenario run passed."""
    with remote.connect(args.port) as board:

        def progress(res):
            if args.verbose:
                for i, text in res.problems:
                    print("%s: %s" % (res.name, text if i is None else "step %d: %s"
                                      % (i + 1, text)), file=sys.stderr)

        results = scenarios.run(board, args.scenarios, progress=progress)
    print("\n".join(scenarios.table(results)))
    return 0 if scenarios.all_passed(results) else 1


def register(sub):
    p = sub.add_parser("test", help="run rule scenarios against a board (test mode)",
                       description="Run rule-level scenario files against a board over the "
                       "serial link: for each, a new game with its config, then each step's "
                       "action (or input events), checking the state the board reports. The "
                       "board must be in test mode. Scenarios for another game than the "
                       "board's are skipped. Exits 0 if all passed, 1 if any failed.")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help="scenario files (.json) or directories of them (searched recursively)")
    add_port(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also list every failing step on stderr, not only the first")
    p.set_defaults(func=run)
