"""Archived games out: the match log (JSON Lines), a CSV for spreadsheets, or the scoresheet.

The match log is the archive's lines as stored, under a header built from the board's; CSV and
text are worked out by replaying the actions through the rules, as chalk/sheet.py does, so they
show what the rules decided. Formats: docs/archive.md.
"""

import csv
import io
import json
from pathlib import Path

from chalk import atomic, sheet
from chalk.archive import load_cell, log_lines
from chalk.errors import ChalkError
from scoreboard import matchlog
from scoreboard.rules import RuleError

FORMATS = ("jsonl", "csv", "text")
EXTENSIONS = {"jsonl": ".jsonl", "csv": ".csv", "text": ".txt"}


def replay(archive, game):
    """(header, steps, final state) of an archived game; steps are (line_no, record,
    state_before, state_after), line_no counting the header as line 1 as in its match log."""
    head = game["header"]
    _check_damage(game)
    try:
        rules = matchlog.new_game(head)
    except matchlog.LineError as e:
        raise ChalkError("game %d: %s" % (game["id"], e))
    before = rules.state()
    steps = []
    for i, (seq, _t, line) in enumerate(archive.actions(game["id"])):
        rec = load_cell(line)
        if type(rec) is not dict or rec.get("seq") != seq:
            raise _damaged(game, "its action seq %s is not a match-log line: %s"
                           % (seq, json.dumps(str(line))[:60]))
        try:
            after = rules.apply(matchlog.strip_meta(rec))
        except RuleError as e:
            raise ChalkError("game %d seq %d: the rules refuse the archived action: %s"
                             % (game["id"], seq, e), "`chalk verify %d` compares the archive "
                             "with the states the board reported" % game["id"])
        steps.append((i + 2, rec, before, after))
        before = after
    return head, steps, rules.state()


def _damaged(game, what):
    return ChalkError("game %d is damaged in the archive: %s" % (game["id"], what),
                      "`chalk verify %d` shows what is wrong; restore the archive from a backup"
                      % game["id"])


def _check_damage(game):
    if game.get("damaged"):
        raise _damaged(game, "its %s cannot be read" % " and ".join(game["damaged"]))


# -- formats ---------------------------------------------------------------------------------

def jsonl(archive, game):
    # A match log is read by others: nothing unreadable goes into one (the rules are not asked:
    # the log is the record as archived, and `chalk replay` judges it).
    _check_damage(game)
    lines = log_lines(archive, game)
    problems = matchlog.read(lines).problems
    if problems:
        n, text = problems[0]
        raise _damaged(game, "line %d of its match log: %s" % (n, text))
    return "\n".join(lines) + "\n"


def text(archive, game):
    head, steps, final = replay(archive, game)
    return "\n".join(sheet.scoresheet(head, steps, final)) + "\n"


FIVE_PINS_COLUMNS = ["seq", "time", "t_ms", "action", "player", "name", "pins", "carom", "fouls",
                     "points_1", "points_2", "score_1", "score_2", "set", "sets_1", "sets_2",
                     "ball_in_hand", "next"]
SHOVE_COLUMNS = (["seq", "time", "t_ms", "action", "side", "name"]
                 + ["coins_%d" % b for b in range(1, 10)]
                 + ["void", "out_of_turn", "bed", "points_a", "points_b", "total_a", "total_b",
                    "next", "misses_turn"])
SEVEN_PINS_COLUMNS = ["seq", "time", "t_ms", "action", "player", "name", "pins", "pocketed",
                      "carom", "called", "fouls", "change_1", "change_2", "total_1", "total_2",
                      "next"]
NOVUSS_COLUMNS = ["seq", "time", "t_ms", "action", "side", "name", "own", "opp", "fouls",
                  "left_a", "left_b", "debt_a", "debt_b", "next"]
TEXAS_42_COLUMNS = ["seq", "time", "t_ms", "action", "bidder", "bidders", "bid", "took", "made",
                    "points_a", "points_b", "score_a", "score_b", "hands", "winner"]
DOMINO_BINGO_COLUMNS = ["seq", "time", "t_ms", "action", "trump", "points_1", "points_2",
                        "declared_1", "declared_2", "big_in_hand_1", "big_in_hand_2", "big_1",
                        "big_2", "hands", "winner"]
TALLY_COLUMNS = (["seq", "time", "t_ms", "action", "player", "name", "n"]
                 + ["count_%d" % p for p in range(1, 10)] + ["winner"])
GENERIC_COLUMNS = ["seq", "time", "t_ms", "action", "record", "state"]


def _five_pins_rows(head, steps):
    who = sheet.names(head, ["P1", "P2"])
    target = (head.get("config") or {}).get("target", 60)
    for _n, rec, before, after in steps:
        a = rec.get("a")
        p = rec.get("player")
        points = []
        for i in (0, 1):
            if after["set"] != before["set"] or after["sets"] != before["sets"]:
                # A set was won: its scores start again, so count what took the winner there.
                d = target - before["scores"][i] if after["sets"][i] > before["sets"][i] else 0
            else:
                d = after["scores"][i] - before["scores"][i]
            points.append(d)
        yield [rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), a,
               "" if p is None else p + 1, "" if p is None else who[p],
               rec.get("pins", "") if a == "shot" else "",
               rec.get("carom", 0) if a == "shot" else "",
               " ".join(rec.get("fouls") or ()) if a == "shot" else "",
               points[0], points[1], after["scores"][0], after["scores"][1], after["set"],
               after["sets"][0], after["sets"][1], int(bool(after["ball_in_hand"])),
               "" if after["next"] is None else who[after["next"]]]


def _shove_rows(head, steps):
    who = sheet.names(head, ["A", "B"])
    for _n, rec, before, after in steps:
        a = rec.get("a")
        s = rec.get("side")
        beds = rec.get("beds") if a == "turn" else None
        out_of_turn = a == "turn" and not rec.get("void") and before["next"] != s
        totals = [sum(after["beds"][i]) for i in (0, 1)]
        points = [totals[i] - sum(before["beds"][i]) for i in (0, 1)]
        skip = [who[i] for i in (0, 1) if after["skip"][i]]
        yield ([rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), a,
                "" if s is None else "AB"[s], "" if s is None else who[s]]
               + (list(beds) if beds else [""] * 9)
               + [rec.get("void", ""), int(out_of_turn) if a == "turn" else "",
                  rec.get("bed", "") if a == "claim" else "", points[0], points[1], totals[0],
                  totals[1], "" if after["next"] is None else who[after["next"]],
                  " ".join(skip)])


def _seven_pins_rows(head, steps):
    who = sheet.names(head, ["P1", "P2"])
    for _n, rec, before, after in steps:
        a = rec.get("a")
        p = rec.get("player")
        shot = a == "shot"
        yield [rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), a,
               "" if p is None else p + 1, "" if p is None else who[p],
               " ".join(rec.get("pins") or ()) if shot else "",
               rec.get("pocketed", 0) if shot else "", rec.get("carom", 0) if shot else "",
               rec.get("called", 0) if shot else "",
               " ".join(rec.get("fouls") or ()) if shot else "",
               after["totals"][0] - before["totals"][0], after["totals"][1] - before["totals"][1],
               after["totals"][0], after["totals"][1],
               "" if after["next"] is None else who[after["next"]]]


def _novuss_rows(head, steps):
    who = sheet.names(head, ["A", "B"])
    for _n, rec, _before, after in steps:
        a = rec.get("a")
        s = rec.get("side")
        shot = a == "shot"
        yield [rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), a,
               "" if s is None else "AB"[s], "" if s is None else who[s],
               rec.get("own", 0) if shot else "", rec.get("opp", 0) if shot else "",
               " ".join(rec.get("fouls") or ()) if shot else "",
               after["left"][0], after["left"][1], after["debt"][0], after["debt"][1],
               "" if after["next"] is None else who[after["next"]]]


def _winner(who, w):
    return "" if w is None else ("draw" if w == "draw" else who[w])


def _texas_42_rows(head, steps):
    who = sheet.t42_sides(head)
    for _n, rec, before, after in steps:
        hand = rec.get("a") == "hand"
        yield ([rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
               + ([rec["bidder"], who[rec["bidder"]], rec["bid"], rec["took"],
                   int(sheet.t42_made(rec))] if hand else [""] * 5)
               + [after["scores"][i] - before["scores"][i] for i in (0, 1)]
               + [after["scores"][0], after["scores"][1], after["hands"],
                  _winner(who, after["winner"])])


def _domino_bingo_rows(head, steps):
    who = sheet.names(head, ["P1", "P2"])
    for _n, rec, _before, after in steps:
        hand = rec.get("a") == "hand"
        yield ([rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
               + ([sheet.TRUMPS[rec["trump"]]] + list(rec["points"]) + list(rec["declared"])
                  + list(rec["big"]) if hand else [""] * 7)
               + [after["big"][0], after["big"][1], after["hands"],
                  _winner(who, after["winner"])])


def _tally_rows(head, steps):
    who = sheet.tally_names(head)
    for _n, rec, _before, after in steps:
        add = rec.get("a") == "add"
        counts = list(after["counts"])
        yield ([rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
               + ([rec["player"] + 1, who[rec["player"]], rec["n"]] if add else [""] * 3)
               + counts + [""] * (9 - len(counts)) + [_winner(who, after["winner"])])


def _generic_rows(head, steps):
    for _n, rec, _before, after in steps:
        yield [rec["seq"], sheet.clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a"),
               matchlog.dumps(matchlog.strip_meta(rec)), matchlog.dumps(after)]


CSV = {
    "five-pins": (FIVE_PINS_COLUMNS, _five_pins_rows),
    "shove-hapenny": (SHOVE_COLUMNS, _shove_rows),
    "seven-pins": (SEVEN_PINS_COLUMNS, _seven_pins_rows),
    "novuss": (NOVUSS_COLUMNS, _novuss_rows),
    "texas-42": (TEXAS_42_COLUMNS, _texas_42_rows),
    "domino-bingo": (DOMINO_BINGO_COLUMNS, _domino_bingo_rows),
    "tally": (TALLY_COLUMNS, _tally_rows),
}


def csv_text(archive, game):
    head, steps, _final = replay(archive, game)
    columns, rows = CSV.get(head.get("game"), (GENERIC_COLUMNS, _generic_rows))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in rows(head, steps):
        w.writerow(row)
    return buf.getvalue()


RENDER = {"jsonl": jsonl, "csv": csv_text, "text": text}


def filename(game, fmt):
    """A game's file name in an export directory: <device>-g<game_no>.<ext>."""
    no = game["game_no"] if game["game_no"] is not None else "id%d" % game["id"]
    stem = "%s-g%05d" % (game["device"], no) if isinstance(no, int) else "%s-%s" % (
        game["device"], no)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
    return safe + EXTENSIONS[fmt]


def render(archive, game, fmt):
    if fmt not in RENDER:
        raise ChalkError("unknown export format %r (known: %s)" % (fmt, ", ".join(FORMATS)))
    return RENDER[fmt](archive, game)


def export(archive, ids=(), all_games=False, fmt="jsonl", out=None, write=None):
    """Export games. One game: to `out` (a file, or a directory to put it in) or, without out,
    through write(text). Several (or all_games): one file each into the directory `out`; the
    text format may also go to write(), sheets one after the other. Returns the paths written."""
    if all_games:
        games = archive.games()
        if not games:
            raise ChalkError("no games in the archive %s" % archive.path,
                             "`chalk archive` fills it from a board")
    else:
        if not ids:
            raise ChalkError("give a game id (see `chalk games`) or --all")
        games = [archive.game(i) for i in ids]
    outp = Path(out) if out and out != "-" else None  # -o - is standard output
    many = all_games or len(games) > 1
    if many and outp is None and fmt != "text":
        raise ChalkError("exporting several games writes one file each: give a directory "
                         "with -o DIR", "or export one game at a time to standard output")
    if many and outp is not None and outp.exists() and not outp.is_dir():
        raise ChalkError("%s is a file: exporting several games needs a directory" % outp)
    if many and outp is not None and not outp.exists() and outp.suffix:
        raise ChalkError("%s looks like a file name: exporting several games writes one file "
                         "each into a directory" % outp,
                         "give a directory with -o DIR (it is created), or export one game")
    # Every game is rendered before anything is written: a damaged game stops the export with
    # no file half-written and no directory half-filled.
    texts = [render(archive, g, fmt) for g in games]
    written = []
    if outp is None:
        try:
            for i, text in enumerate(texts):
                write(("\n" if i else "") + text)
        except OSError as e:
            raise atomic.problem("the standard output", e) from None
        return written
    if many or outp.is_dir():
        # Built beside the directory and renamed into it: a full disk or a Ctrl-C half way
        # leaves the directory as it was, with no half file and no stray temporary one.
        with atomic.build_dir(outp) as stage:
            for g, text in zip(games, texts):
                atomic.write_file(stage / filename(g, fmt), text)
        return [outp / filename(g, fmt) for g in games]
    atomic.write_file(outp, texts[0])
    written.append(outp)
    return written
