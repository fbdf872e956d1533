"""A printable scoresheet: one row per action with what scored, the running totals and the action
in words, with the players' names.

Rows are built from the states before and after each action, so the sheet shows what the rules
decided, not what the log claims. Each game's columns and words are its host module's
(chalk/games/); a game with none gets a generic sheet.
"""

from chalk import games, views
from chalk.games.common import entry
from chalk.text import printable


def names(head, default):
    """The sides' names of a header, `default` where none was given (escaped for a terminal)."""
    players = head.get("players") or []
    return [printable(entry(players, i, d)) for i, d in enumerate(default)]


def side_names(head):
    """The sides' names of a header, as its game's board shows them (not escaped)."""
    g = games.get(head.get("game"))
    return g.side_names(head.get("players") or [], head.get("config") or {})


def with_undone(steps):
    """(line_no, record, before, after, undone) per step: `undone` is the action an undo took
    back (the latest one still standing), else None."""
    standing = []
    for n, rec, before, after in steps:
        undone = None
        if rec.get("a") == "undo":
            undone = standing.pop() if standing else None
        else:
            standing.append(rec)
        yield n, rec, before, after, undone


def said(head, steps):
    """Each step's action in words (the same words as the pages and `chalk watch`)."""
    g = games.get(head.get("game"))
    config = head.get("config") or {}
    who = side_names(head)
    out = []
    for _n, rec, before, after, undone in with_undone(steps):
        text, _fouls = views.describe(g, rec, before, after, who, config,
                                      _strip(undone) if undone else None)
        out.append(text)
    return out


def _strip(rec):
    return {k: v for k, v in rec.items() if k not in ("seq", "t", "link")}


def scoresheet(head, steps, final):
    """The sheet's lines. `steps`: (line_no, record, state_before, state_after) per action."""
    g = games.get(head.get("game"))
    config = head.get("config") or {}
    who = side_names(head)
    words = said(head, steps)
    out = list(g.sheet_lines(head, [s + (w,) for s, w in zip(steps, words)], who, config))
    if head.get("started"):
        out.insert(1, "started %s" % head["started"])
    out.append(g.sheet_result(final, who, config))
    return [printable(line) for line in out]  # a name never reaches the terminal raw
