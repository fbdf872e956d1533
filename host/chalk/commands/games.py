"""chalk games: the games in the archive, one row each."""

ORDER = 31


def result_text(archive, game, superseded=False):
    """A short result: the winner's name, or how an unfinished game stands. `superseded`: a
    later game of the same board exists (so this one will not go on)."""
    from chalk import export, sheet
    from chalk.errors import ChalkError

    head = game["header"]
    try:
        _head, _steps, state = export.replay(archive, game)
    except ChalkError as e:
        if "damaged" in e.message:
            return "damaged in the archive (chalk verify %d)" % game["id"]
        return "refused by the rules (chalk verify %d)" % game["id"]
    default = ["A", "B"] if game["game"] == "shove-hapenny" else ["P1", "P2"]
    who = sheet.names(head, default)
    winner = state.get("winner")
    if winner is not None:
        return "won by %s" % (who[winner] if 0 <= winner < len(who) else winner)
    if game["end_seq"] is not None:
        return "ended, no winner" + (" (abandoned)" if (game["end"] or {}).get("abandoned")
                                     else "")
    if "scores" in state:
        score = "set %d %d-%d" % (state["set"], state["scores"][0], state["scores"][1])
    elif "beds" in state:
        score = "%d-%d" % (sum(state["beds"][0]), sum(state["beds"][1]))
    else:
        score = ""
    if superseded:
        return ("unfinished " + score).strip()
    return ("playing " + score).strip()


def run(args):
    from chalk.archive import Archive
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
    from chalk.archive import add_db

    p = sub.add_parser("games", help="list the archived games",
                       description="List the games in the archive: id (for show, export and "
                       "verify), board, game, when it started (~: when it was archived, for a "
                       "board whose clock was not set), actions, and the result.")
    add_db(p)
    p.set_defaults(func=run)
