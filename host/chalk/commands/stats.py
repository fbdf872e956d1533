"""chalk stats: players' records and games' statistics from the archive, as text or CSV."""

import sys

from chalk.errors import ChalkError

ORDER = 47


def _write(text, path):
    from chalk import atomic

    if path in (None, "-"):
        try:
            sys.stdout.write(text)
        except OSError as e:
            raise atomic.problem("the standard output", e) from None
        return
    atomic.write_file(path, text)  # whole or absent, whatever happens meanwhile


def run(args):
    from chalk import stats
    from chalk.text import printable

    with stats.open_ro(args.db) as db:
        if args.game is None:
            report = stats.players(db)
            if args.csv:
                _write(stats.players_csv(report), args.csv)
            else:
                print("\n".join(printable(r) for r in stats.players_text(report)))
            return 0
        s = stats.game_stats(db, args.game)
        if s is None:
            raise ChalkError("no game %s in the archive %s" % (args.game, db.path),
                             "`chalk games` lists the games archived")
        if args.csv:
            if args.of == "score":
                _write(stats.game_csv(s), args.csv)
            else:
                from chalk import games

                if args.of not in games.get(s["game"]).tables:
                    offer = [g.game_name() for g in games.every() if args.of in g.tables]
                    raise ChalkError("game %d is %s: it has no %s" % (s["id"], s["game_name"],
                                                                      args.of),
                                     "--of %s is for %s games" % (args.of, " and ".join(offer)))
                _write(stats.table_csv(s, args.of), args.csv)
        else:
            print("\n".join(printable(r) for r in stats.game_text(s)))  # names escaped
    return 0


def register(sub):
    p = sub.add_parser("stats", help="players' records and figures, a game's statistics",
                       description="Without ID: every player across the archive (a person, by "
                       "name: a side with no name given is left out): finished games, wins, "
                       "losses, draws, win %%, unfinished games apart; then per game kind the "
                       "figures that game counts; head-to-head records. With ID: that game's "
                       "score after each action and its game's own figures. --csv writes the "
                       "players table, or the game's score series, as CSV (text cells made "
                       "safe for spreadsheets). The archive is only read.")
    p.add_argument("game", nargs="?", type=int, metavar="ID", help="a game id (chalk games)")
    from chalk.store import add_db

    add_db(p)
    p.add_argument("--csv", metavar="FILE", help="write CSV to FILE (- for standard output)")
    p.add_argument("--of", metavar="TABLE", default="score",
                   help="with ID and --csv: the score after each action (default), or one of "
                   "the game's own tables (`chalk stats ID` names them, e.g. the coins in each "
                   "bed, or the pins down)")
    p.set_defaults(func=run)
