"""chalk show: one archived game: its header, final state and scoresheet."""

import json

ORDER = 32


def run(args):
    from chalk import export
    from chalk.commands.games import result_text
    from chalk.store import Archive, match_header
    from chalk.text import printable

    with Archive(args.db) as db:
        g = db.game(args.id)
        head, steps, final = export.replay(db, g)
        h = match_header(g)
        print("game %d: %s #%s on board %s (%s)" % (g["id"], g["game"], g["game_no"],
                                                    printable(g["board"] or "?"),
                                                    printable(g["device"])))
        print("players: %s" % (", ".join(printable(" & ".join(p) if isinstance(p, list) else p)
                                         for p in h["players"]) or "(not named)"))
        print("config:  %s" % json.dumps(h["config"], separators=(",", ":")))
        print("started: %s" % (g["started"] or "(unknown; archived %s)" % g["archived"]))
        if g["end_seq"] is not None:
            print("ended:   seq %d, archived %s" % (g["end_seq"], g["finished"]))
        later = any(o["board_id"] == g["board_id"] and o["seq"] > g["seq"] for o in db.games())
        print("result:  %s" % result_text(db, g, later))
        print("state:   %s" % json.dumps(final, separators=(",", ":")))
        reported = db.states(g["id"])
        expected = {g["seq"]: steps[0][2] if steps else final}
        expected.update((rec["seq"], after) for _n, rec, _b, after in steps)
        if reported:
            seq = max(reported)
            if reported[seq] != expected.get(seq):
                print("note:    the board's last reported state (seq %d) differs from the "
                      "replay: chalk verify %d" % (seq, g["id"]))
        print()
        from chalk import sheet

        print("\n".join(sheet.scoresheet(head, steps, final)))
    return 0


def register(sub):
    from chalk.store import add_db

    p = sub.add_parser("show", help="show an archived game and its scoresheet",
                       description="Show one archived game: who played, the config, its result "
                       "and final state (replayed through the rules), then the scoresheet.")
    p.add_argument("id", help="the game's id (see chalk games)")
    add_db(p)
    p.set_defaults(func=run)
