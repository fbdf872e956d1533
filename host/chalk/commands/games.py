"""chalk games: the games in the archive, one row each."""

ORDER = 31


def result_text(archive, game, superseded=False):
    """A short result: the winner's name, or how an unfinished game stands (stats.py says the
    same on the statistics pages)."""
    from chalk import stats

    return stats.result_text(archive, game, superseded)


def run(args):
    from chalk.store import Archive
    from chalk.text import printable

    with Archive(args.db) as db:
        games = db.games()
        if not games:
            print("no games in the archive %s" % db.path)
            return 0
        rows = [("id", "board", "game", "started", "actions", "result")]
        newest = {}
        for g in games:
            newest[g["board_id"]] = max(newest.get(g["board_id"], 0), g["seq"])
        for g in games:
            board = printable("%s %s" % (g["board"] or "?", g["device"]))
            rows.append((str(g["id"]), board, "%s #%s" % (g["game"], g["game_no"]),
                         g["started"] or "~" + g["archived"], str(g["actions"]),
                         result_text(db, g, g["seq"] < newest[g["board_id"]])))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            print("  ".join(c.ljust(w) if i != 4 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))) + "  " + r[-1])
    return 0


def register(sub):
    from chalk.store import add_db

    p = sub.add_parser("games", help="list the archived games",
                       description="List the games in the archive: id (for show, export and "
                       "verify), board, game, when it started (~: when it was archived, for a "
                       "board whose clock was not set), actions, and the result.")
    add_db(p)
    p.set_defaults(func=run)
