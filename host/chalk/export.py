"""Archived games out: the match log (JSON Lines), a CSV for spreadsheets, or the scoresheet.

The match log is the archive's lines as stored, under a header built from the board's; CSV and
text are worked out by replaying the actions through the rules, as chalk/sheet.py does, so they
show what the rules decided. Formats: docs/archive.md.
"""

import json
from pathlib import Path

from chalk import atomic, games, sheet
from chalk.errors import ChalkError
from chalk.store import load_cell, log_lines
from chalk.text import csv_safe
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


def csv_text(archive, game):
    """The game as CSV: its game's columns (chalk/games/), one row per action; text cells are
    made safe for spreadsheets (chalk.text.csv_safe)."""
    head, steps, _final = replay(archive, game)
    g = games.get(head.get("game"))
    rows = [g.csv_columns]
    rows += g.csv_rows(head, steps, sheet.side_names(head), head.get("config") or {})
    return csv_safe(rows)


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
