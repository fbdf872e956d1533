"""chalk export: archived games as match logs (JSONL), CSV or printable scoresheets."""

import sys

ORDER = 33


def run(args):
    from chalk.export import export
    from chalk.store import Archive

    with Archive(args.db) as db:
        written = export(db, args.ids, all_games=args.all, fmt=args.format, out=args.output,
                         write=sys.stdout.write)
    for path in written:
        print("wrote %s" % path, file=sys.stderr)
    return 0


def register(sub):
    from chalk.export import FORMATS
    from chalk.store import add_db

    p = sub.add_parser("export", help="export archived games: match log, CSV or scoresheet",
                       description="Export archived games. jsonl: the match log v1 "
                       "(docs/match-log.md), which chalk replay reads; csv: one row per action "
                       "(turn or shot) with points and running totals, for spreadsheets; text: "
                       "the printable scoresheet. One game goes to standard output or -o FILE; "
                       "several (or --all) go one file each into -o DIR.")
    p.add_argument("ids", nargs="*", metavar="ID", help="game id(s), from chalk games")
    p.add_argument("--all", action="store_true", help="every game in the archive")
    p.add_argument("--format", "-f", choices=FORMATS, default="jsonl",
                   help="output format (default %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE|DIR",
                   help="write to this file, or into this directory (one file per game)")
    add_db(p)
    p.set_defaults(func=run)
