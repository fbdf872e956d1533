"""chalk verify: check archived games, or match log files, against their hash chain, the
board's signature, the rules, and each board's chain of games (docs/league.md)."""

ORDER = 34


def _is_file(arg):
    from pathlib import Path

    return arg == "-" or not arg.isdigit() or Path(arg).is_file()


def run(args):
    from chalk import keys as keystore
    from chalk import verify
    from chalk.errors import ChalkError
    from chalk.store import Archive

    if args.all and args.ids:
        raise ChalkError("give game ids or --all, not both")
    keys = keystore.KeyStore(args.keys)
    files = [a for a in args.ids if _is_file(a)]
    if files:
        if len(files) != len(args.ids):
            raise ChalkError("give archived game ids or match log files, not both")
        verdicts = []
        for path in files:
            v = verify.verdict_of_log(path, keys)
            verdicts.append(v)
            for line in verify.report_log(v):
                print(line, flush=True)
        problems = verify.check_set(verdicts)
        for line in verify.report_set(problems):
            print(line, flush=True)
        verify.check_verdicts(verdicts, problems, "match log")
        return 0
    with Archive(args.db) as db:
        broken = db.integrity()
        if broken:  # SQLite's own check: pages or indexes damaged under the rows
            raise ChalkError("the archive %s is damaged: SQLite's integrity check says: %s"
                             % (db.path, "; ".join(broken[:3])[:300]),
                             "restore it from a backup; `sqlite3 FILE .recover` may save rows")
        results = verify.verify(db, args.ids or None, keys)
        if not results:
            print("no games in the archive %s" % db.path)
            return 0
        for line in verify.report(results):
            print(line, flush=True)
        problems = verify.check_set([r.verdict for r in results])
        for line in verify.report_set(problems):
            print(line, flush=True)
        print("note: %s" % verify.OUTSIDE, flush=True)
        verify.check_results(results, problems)
    return 0


def register(sub):
    from chalk.keys import add_keys
    from chalk.store import add_db

    p = sub.add_parser("verify", help="check archived games or match logs (chain, signature, "
                       "rules, each board's chain of games)",
                       description="Check each archived game (or each match log FILE given): "
                       "the hash chain over its records, the board's signature (with the "
                       "board's key from the key store), a replay through the rules compared "
                       "with every state the board reported and with the winner, and, over "
                       "them all, each board's chain of games (none missing, given twice or "
                       "forked). Names the first record that does not hold. Exit 0: every game "
                       "finished and signed at its end by a board key; 5: in progress (signed "
                       "up to a seq, not at its end); 6: signed by a legacy key (the pub holds "
                       "it); 3: not signed, by a board the key store does not know; 4: signed "
                       "by a key the store does not hold; 2: a file cannot be read; 7: a "
                       "board's games do not form one chain; 1: broken (changed, stripped, a "
                       "key claiming another board, or refused by the rules). docs/league.md.")
    p.add_argument("ids", nargs="*", metavar="ID|FILE",
                   help="game id(s), or match log file(s) (.jsonl; - for stdin); default: "
                   "every archived game")
    p.add_argument("--all", action="store_true", help="every game (the default)")
    add_db(p)
    add_keys(p)
    p.set_defaults(func=run)
