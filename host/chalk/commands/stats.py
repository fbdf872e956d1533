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
            if args.of == "beds" and "beds" not in s:
                raise ChalkError("game %d is %s: it has no beds" % (s["id"], s["game"]),
                                 "--of beds is for shove ha'penny games")
            if args.of == "pins" and "pins" not in s:
                raise ChalkError("game %d is %s: it has no pins" % (s["id"], s["game"]),
                                 "--of pins is for five-pins games")
            _write({"score": stats.game_csv, "beds": stats.beds_csv,
                    "pins": stats.pins_csv}[args.of](s), args.csv)
        else:
            print("\n".join(printable(r) for r in stats.game_text(s)))  # names escaped
    return 0


def register(sub):
    p = sub.add_parser("stats", help="players' wins and averages, a game's statistics",
                       description="Without ID: every player across the archive (games, wins, "
                       "losses, win %%, average final score) and head-to-head records. With ID: "
                       "that game's score after each action, and per game kind the coins per "
                       "bed (shove ha'penny) or pins, caroms and fouls (five-pins). --csv writes "
                       "the players table, or the game's score series, as CSV. The archive is "
                       "only read.")
    p.add_argument("game", nargs="?", type=int, metavar="ID", help="a game id (chalk games)")
    from chalk.archive import add_db

    add_db(p)
    p.add_argument("--csv", metavar="FILE", help="write CSV to FILE (- for standard output)")
    p.add_argument("--of", choices=("score", "beds", "pins"), default="score",
                   help="with ID and --csv: the score after each action (default), the coins "
                   "per bed (shove ha'penny) or pins, caroms and fouls per player (five-pins)")
    p.set_defaults(func=run)
