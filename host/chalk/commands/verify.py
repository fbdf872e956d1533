"""chalk verify: check archived games, or match log files, against their hash chain, the
board's signature and the rules."""

ORDER = 34


_RANK = {0: 0, 3: 1, 4: 2, 1: 3}  # exit codes, the worst outcome last


def _is_file(arg):
    from pathlib import Path

    return arg == "-" or not arg.isdigit() or Path(arg).is_file()


def run(args):
    from chalk import keys as keystore
    from chalk import verify
    from chalk.archive import Archive
    from chalk.errors import ChalkError

    if args.all and args.ids:
        raise ChalkError("give game ids or --all, not both")
    keys = keystore.KeyStore(args.keys)
    files = [a for a in args.ids if _is_file(a)]
    if files:
        if len(files) != len(args.ids):
            raise ChalkError("give archived game ids or match log files, not both")
        worst = 0
        for path in files:
            summary, problems, signer = verify.verify_log(path, keys)
            for line in verify.report_log(summary, problems, signer):
                print(line, flush=True)
            code = verify.exit_code(problems)
            if _RANK[code] > _RANK[worst]:
                worst = code
        if worst:
            raise ChalkError("%s does not verify" % (files[0] if len(files) == 1 else
                                                      "a match log"),
                             {1: "a record was changed, removed, added or reordered since the "
                                 "board signed it, or the rules refuse it",
                              3: "the log carries no signature for all its records: ask for a "
                                 "log exported from an archive of a board deployed with a key",
                              4: "import the board's key: `chalk keys import FILE`"}[worst],
                             code=worst)
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
        verify.check_results(results)
    return 0


def register(sub):
    from chalk.archive import add_db
    from chalk.keys import add_keys

    p = sub.add_parser("verify", help="check archived games or match logs (chain, signature, "
                       "rules)",
                       description="Check each archived game (or each match log FILE given): "
                       "the hash chain over its records, the board's signature of the chain "
                       "head (with the board's key from the key store), and a replay through "
                       "the rules compared with every state the board reported and with the "
                       "winner. Names the first record that does not hold. Exit 0: all good; "
                       "1: a record does not hold; 2: a file cannot be read; 3: no signature "
                       "(or records after the last signed head); 4: signed by a key the key "
                       "store does not hold.")
    p.add_argument("ids", nargs="*", metavar="ID|FILE",
                   help="game id(s), or match log file(s) (.jsonl; - for stdin); default: "
                   "every archived game")
    p.add_argument("--all", action="store_true", help="every game (the default)")
    add_db(p)
    add_keys(p)
    p.set_defaults(func=run)
