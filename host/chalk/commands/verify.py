"""chalk verify: replay archived games through the rules and compare with the board's states."""

ORDER = 34


def run(args):
    from chalk import verify
    from chalk.archive import Archive
    from chalk.errors import ChalkError

    if args.all and args.ids:
        raise ChalkError("give game ids or --all, not both")
    with Archive(args.db) as db:
        broken = db.integrity()
        if broken:  # SQLite's own check: pages or indexes damaged under the rows
            raise ChalkError("the archive %s is damaged: SQLite's integrity check says: %s"
                             % (db.path, "; ".join(broken[:3])[:300]),
                             "restore it from a backup; `sqlite3 FILE .recover` may save rows")
        results = verify.verify(db, args.ids or None)
        if not results:
            print("no games in the archive %s" % db.path)
            return 0
        for line in verify.report(results):
            print(line, flush=True)
        verify.check(results)
    return 0


def register(sub):
    from chalk.archive import add_db

    p = sub.add_parser("verify", help="check archived games against the rules",
                       description="Replay each archived game through the rules on this "
                       "computer and compare, after every action, with the state the board "
                       "reported. Prints each difference (game, seq, expected, reported) and "
                       "exits 1 if there is any.")
    p.add_argument("ids", nargs="*", metavar="ID", help="game id(s); default: every game")
    p.add_argument("--all", action="store_true", help="every game (the default)")
    add_db(p)
    p.set_defaults(func=run)
