"""Statistics and plots from the archive: what `chalk stats` prints and the /stats pages draw.

Everything is worked out by replaying the archived actions through the rules (export.replay),
from an archive opened read-only (SQLite's mode=ro: the pages never write, and never wait for
the archiver, the file being in WAL mode).

- per player (a person, by name: a side with no name given, which the board calls A, B, P1 ...,
  is left out), across games: finished games, wins, losses, draws, win % and unfinished games
  apart; then per game kind the figures that game counts (marks per turn, points per shot and
  per set, bids made, ...: each game's host module decides), and head-to-head records;
- per game: each side's score after every action (a line chart with axes and a legend), its
  game's own charts (the coins in each bed, the pins down) and figures per side, fouls in
  words;
- the games list, with the same result `chalk games` gives (a game with a winner is won, never
  "in play").

CSV out is made safe for spreadsheets (chalk.text.csv_safe: control characters escaped,
formula-looking cells neutralised).
"""

import json
import sqlite3
import urllib.parse
from collections import Counter

from chalk import export, games
from chalk.errors import ChalkError
from chalk.store import Archive, ArchiveError, default_path
from chalk.text import csv_safe


class ReadOnlyArchive(Archive):
    """The archive opened read-only: SQLite refuses any write through it."""

    def _open(self, create):
        p = self.path
        if not p.is_file():
            raise ArchiveError("no archive at %s" % p,
                               "run `chalk archive` or `chalk serve` first, or give the file "
                               "with --db")
        uri = "file:%s?mode=ro" % urllib.parse.quote(str(p.resolve()))
        try:
            self.db = sqlite3.connect(uri, uri=True, timeout=self.wait, isolation_level=None)
        except sqlite3.Error as e:
            raise ArchiveError("cannot open the archive %s: %s" % (p, e))
        try:
            self._check_schema(False)
        except BaseException:
            self.db.close()
            self.db = None
            raise


def open_ro(path=None):
    return ReadOnlyArchive(path or default_path())


def names_of(header, final=None):
    """The names of a game's sides, as its board shows them (a partnership's players joined)."""
    g = games.get(header.get("game"))
    return g.side_names(header.get("players") or [], header.get("config") or {})


def _winner(g, final):
    """The winner: the rules' (the replay's final state), else the board's end record."""
    w = final.get("winner") if final else None
    if w is None and g["end_seq"] is not None:
        w = g["winner"]
    return w


def result_text(archive, game, superseded=False):
    """A short result: the winner's name, or how an unfinished game stands. `superseded`: a
    later game of the same board exists (so this one will not go on). `chalk games`, `chalk
    show` and the statistics pages all say this."""
    head = game["header"]
    try:
        _head, _steps, state = export.replay(archive, game)
    except ChalkError as e:
        if "damaged" in e.message:
            return "damaged in the archive (chalk verify %d)" % game["id"]
        return "refused by the rules (chalk verify %d)" % game["id"]
    who = names_of(head)
    winner = _winner(game, state)
    if winner == "draw":
        return "a draw"
    if winner is not None:
        return "won by %s" % (who[winner] if type(winner) is int and 0 <= winner < len(who)
                              else winner)
    if game["end_seq"] is not None:
        return "ended, no winner" + (" (abandoned)" if (game["end"] or {}).get("abandoned")
                                     else "")
    try:
        score = games.get(game["game"]).short_score(state)
    except (KeyError, TypeError, ValueError, IndexError):
        score = ""
    if superseded:
        return ("unfinished " + score).strip()
    return ("playing " + score).strip()


def superseded(all_games):
    """Per game id: does a later game of the same board exist?"""
    newest = {}
    for g in all_games:
        newest[g["board_id"]] = max(newest.get(g["board_id"], 0), g["seq"])
    return {g["id"]: g["seq"] < newest[g["board_id"]] for g in all_games}


def game_list(db):
    """Every game: id, game (id and name in words), names, actions, result text, winner."""
    out = []
    every = db.games()
    later = superseded(every)
    for g in every:
        head = g["header"]
        names = names_of(head)
        result = result_text(db, g, later[g["id"]])
        out.append({"id": g["id"], "game": g["game"],
                    "game_name": games.get(g["game"]).game_name(head.get("config") or {}),
                    "names": names, "table": head.get("table") or g["board"],
                    "actions": g["actions"], "started": g["started"] or g["archived"],
                    "result": result, "finished": result.startswith(("won by", "a draw")),
                    "winner": g["winner"]})
    return out


def _undone(steps):
    """The steps still standing after undos (an undo retracts the latest one standing)."""
    kept = []
    for step in steps:
        if step[1].get("a") == "undo":
            if kept:
                kept.pop()
        else:
            kept.append(step)
    return kept


def game_stats(db, gid):
    """One game's statistics (None if there is no such game)."""
    try:
        g = db.game(gid)
    except ChalkError:
        return None
    head, steps, final = export.replay(db, g)
    game = games.get(g["game"])
    config = head.get("config") or {}
    names = names_of(head, final)
    series = []
    first = steps[0][2] if steps else final
    series.append({"seq": g["seq"], "t": 0, "score": game.score(first)})
    for _line, rec, _before, after in steps:
        series.append({"seq": rec.get("seq"), "t": rec.get("t", 0), "a": rec.get("a"),
                       "score": game.score(after)})
    kept = _undone(steps)
    winner = _winner(g, final)
    later = superseded([x for x in db.games() if x["board_id"] == g["board_id"]])
    out = {"id": g["id"], "game": g["game"], "game_name": game.game_name(config),
           "race": game.race(config), "names": names, "actions": len(steps),
           "table": head.get("table") or g["board"], "started": g["started"],
           "series": series, "final": final, "winner": winner,
           "result": result_text(db, g, later.get(g["id"], False)), "charts": [],
           "page_tables": [], "lines": [], "tables": sorted(game.tables)}
    out["figures"] = [(label, [game.figure(key, game.side_counts(kept, final, i, config))
                               for i in range(len(names))]) for key, label in game.figures]
    out["figures_shown"] = [(label, [_cell(v) for v in values])
                            for label, values in out["figures"]]
    out.update(game.game_extra(kept, final, names, config))
    out["chart"] = score_chart(series, names)
    return out


# -- players ---------------------------------------------------------------------------------

def _new_row(name):
    return {"name": name, "games": 0, "wins": 0, "losses": 0, "draws": 0, "unfinished": 0}


def _tally(row, decided, w, i):
    if not decided:
        row["unfinished"] += 1
        return
    row["games"] += 1
    if w == "draw":
        row["draws"] += 1
    elif w == i:
        row["wins"] += 1
    else:
        row["losses"] += 1


def _finish(row):
    decided = row["wins"] + row["losses"]
    row["win_pct"] = round(100.0 * row["wins"] / decided, 1) if decided else None
    row["shown"] = {k: _cell(v) for k, v in row.items() if k != "name"}  # as the pages show it
    return row


def _order(rows):
    return sorted(rows, key=lambda p: (-p["wins"], p["losses"], -p["games"], p["name"]))


def players(db):
    """Per person across the archive: finished games, wins, losses, draws, win %, unfinished
    games; per game kind the same with that game's figures; head-to-head; how many games are
    unfinished and how many sides had no name."""
    defaults = games.default_names()
    people = {}
    kinds = {}
    h2h = Counter()
    unfinished = 0
    unnamed = 0
    for g in db.games():
        try:
            head, steps, final = export.replay(db, g)
        except ChalkError:
            continue  # a game the rules refuse is for `chalk verify`, not for statistics
        if not steps:
            continue  # no action: not played
        game = games.get(g["game"])
        config = head.get("config") or {}
        plist = head.get("players") or []
        names = game.side_names(plist, config)
        named = game.named(plist, config)
        person = [i < len(named) and named[i] and names[i] not in defaults
                  for i in range(len(names))]
        w = _winner(g, final)
        decided = w is not None
        unfinished += not decided
        unnamed += sum(1 for p in person if not p)
        kind = kinds.setdefault(game.id, {})
        kept = _undone(steps) if decided else []
        for i, n in enumerate(names):
            if not person[i]:
                continue
            _tally(people.setdefault(n, _new_row(n)), decided, w, i)
            row = kind.setdefault(n, dict(_new_row(n), counts=Counter()))
            _tally(row, decided, w, i)
            if decided:
                row["counts"].update(game.side_counts(kept, final, i, config))
        if decided and type(w) is int and w < len(names) and person[w]:
            for i, n in enumerate(names):
                if i != w and person[i]:
                    h2h[(names[w], n)] += 1
    report_kinds = []
    for gid in [i for i in games.IDS if i in kinds] + sorted(k for k in kinds
                                                             if k not in games.IDS):
        game = games.get(gid)
        rows = []
        for row in kinds[gid].values():
            counts = row.pop("counts")
            for key, _label in game.figures:
                row[key] = game.figure(key, counts) if row["games"] else None
            rows.append(_finish(row))
        if rows:
            report_kinds.append({"game": gid, "name": game.game_name(),
                                 "figures": [list(f) for f in game.figures],
                                 "players": _order(rows)})
    pairs = sorted({tuple(sorted(k)) for k in h2h})
    head2head = [{"a": a, "b": b, "a_wins": h2h[(a, b)], "b_wins": h2h[(b, a)]}
                 for a, b in pairs]
    return {"players": _order([_finish(p) for p in people.values()]), "kinds": report_kinds,
            "head_to_head": head2head, "unfinished": unfinished, "unnamed": unnamed}


# -- the terminal and CSV ----------------------------------------------------------------------

PLAYER_COLUMNS = ["name", "games", "wins", "losses", "draws", "win_pct", "unfinished"]
_HEADS = {"name": "player", "games": "games", "wins": "won", "losses": "lost",
          "draws": "drawn", "win_pct": "win %", "unfinished": "unfinished"}


def _cell(v):
    if v is None:
        return ""
    if type(v) is float:
        return ("%.2f" % v).rstrip("0").rstrip(".")
    return str(v)


def _table(columns, heads, rows):
    """Text columns: the first left, the rest right-aligned, each as wide as it needs."""
    cells = [[heads[i] for i in range(len(columns))]] + [[_cell(r.get(c)) for c in columns]
                                                         for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    out = []
    for row in cells:
        out.append("  ".join(row[0].ljust(widths[0]) if i == 0 else row[i].rjust(widths[i])
                             for i in range(len(columns))).rstrip())
    return out


def players_text(report):
    rows = ["players: finished games (a side with no name given is not a player)"]
    rows += _table(PLAYER_COLUMNS, [_HEADS[c] for c in PLAYER_COLUMNS], report["players"])
    for kind in report.get("kinds", ()):
        cols = PLAYER_COLUMNS + [k for k, _label in kind["figures"]]
        heads = [_HEADS[c] for c in PLAYER_COLUMNS] + [label for _k, label in kind["figures"]]
        rows += ["", kind["name"]] + _table(cols, heads, kind["players"])
    if report["head_to_head"]:
        rows += ["", "head to head"]
        for h in report["head_to_head"]:
            rows.append("  %s %d - %d %s" % (h["a"], h["a_wins"], h["b_wins"], h["b"]))
    if report.get("unfinished"):
        rows += ["", "unfinished games (not counted above): %d" % report["unfinished"]]
    return rows


def players_csv(report):
    """One row per player overall (game "all"), then per game kind with its figures."""
    figure_keys = []
    for kind in report.get("kinds", ()):
        for key, _label in kind["figures"]:
            if key not in figure_keys:
                figure_keys.append(key)
    columns = ["game"] + PLAYER_COLUMNS + figure_keys
    rows = [columns]
    for p in report["players"]:
        rows.append(["all"] + [p.get(c) for c in PLAYER_COLUMNS] + [None] * len(figure_keys))
    for kind in report.get("kinds", ()):
        for p in kind["players"]:
            rows.append([kind["game"]] + [p.get(c) for c in PLAYER_COLUMNS + figure_keys])
    return csv_safe(rows)


def game_text(s):
    rows = ["game %d: %s on %s, %s, %d actions" % (s["id"], s["game_name"], s["table"],
                                                  " vs ".join(s["names"]), s["actions"])]
    if s.get("race"):
        rows.append("%s, %s" % (s["game_name"], s["race"]))
    rows.append("result: %s" % s["result"])
    last = s["series"][-1]["score"] if s["series"] else []
    rows.append("score: " + ", ".join("%s %s" % (n, x) for n, x in zip(s["names"], last)))
    if s["figures"]:
        cols = ["name"] + ["f%d" % i for i in range(len(s["figures"]))]
        heads = ["side"] + [label for label, _v in s["figures"]]
        table = [dict({"name": n}, **{"f%d" % i: values[k] for i, (_l, values) in
                                     enumerate(s["figures"])})
                 for k, n in enumerate(s["names"])]
        rows += _table(cols, heads, table)
    rows += s.get("lines", [])
    if s.get("tables"):
        rows.append("as CSV: --csv FILE --of %s" % " | ".join(["score"] + s["tables"]))
    return rows


def game_csv(s):
    """The score after every action: seq, t_ms, action, then one column per side."""
    rows = [["seq", "t_ms", "action"] + ["score_%d" % (i + 1) for i in range(len(s["names"]))]]
    for row in s["series"]:
        rows.append([row["seq"], row["t"], row.get("a") or "start"] + list(row["score"]))
    return csv_safe(rows)


def table_names():
    """Every per-game table `chalk stats ID --csv --of NAME` can write, besides "score"."""
    out = []
    for g in games.every():
        out += [t for t in g.tables if t not in out]
    return out


def table_csv(s, name):
    """A game's own table as CSV (e.g. "beds": the coins each side put in each bed)."""
    game = games.get(s["game"])
    return csv_safe(getattr(game, game.tables[name])(s))


# -- SVG -------------------------------------------------------------------------------------
# Drawn 400 units wide with text of 15 units or more, so on a 360-pixel phone, where the chart
# shrinks to the screen, no text is under 12 pixels. Legends are one row a side below the plot,
# a long name cut with "…" (the whole name in its <title>), so no two overlap.

COLOURS = ["#e8a33d", "#4fa3e0", "#5fd47a", "#e05f8a", "#b38cf0", "#9aa39c", "#f06a4f",
           "#3fc4b4", "#d4d45f"]
WIDTH = 400
FONT = 15
_CHARS = 40  # a legend's name, in characters


def _x(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _short(name, n=_CHARS):
    name = str(name)
    return name if len(name) <= n else name[:n - 1] + "\u2026"


def nice_ticks(lo, hi, most=5):
    """Round tick values from lo to hi (at most `most` + 1 of them)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / float(most)
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    step = max(1, int(step)) if step >= 1 else step
    start = int(lo // step) * step
    ticks = []
    v = start
    while v <= hi + 1e-9:
        if v >= lo - 1e-9:
            ticks.append(v)
        v += step
    if ticks[-1] < hi:
        ticks.append(ticks[-1] + step)
    return ticks


def _legend(out, y, names, values=None):
    """One row a side: a coloured line, the name (cut), its value; returns the y below."""
    for s, name in enumerate(names):
        colour = COLOURS[s % len(COLOURS)]
        yy = y + 22 * s
        out.append('<line x1="8" y1="%d" x2="30" y2="%d" stroke="%s" stroke-width="5"/>'
                   % (yy - 5, yy - 5, colour))
        label = _short(name) + ("  %s" % values[s] if values is not None and s < len(values)
                                else "")
        out.append('<text x="38" y="%d" font-size="%d"><title>%s</title>%s</text>'
                   % (yy, FONT + 1, _x(name), _x(label)))
    return y + 22 * len(names)


def score_chart(series, names, width=WIDTH):
    """Each side's score after every action, as an SVG line chart: a y axis with values, an
    x axis numbered by action, a legend below with each side's final score."""
    sides = max([len(r["score"]) for r in series] + [0])
    names = [names[s] if s < len(names) else "P%d" % (s + 1) for s in range(sides)]
    values = [v for r in series for v in r["score"]]
    yt = nice_ticks(min(values + [0]), max(values + [1]))
    lo, top = yt[0], yt[-1]
    n = max(len(series) - 1, 1)
    xt = nice_ticks(0, n, 4)
    xt = [t for t in xt if t <= n] or [0]
    pad_l = 14 + 9 * len(str(int(top)))
    pad_r, pad_t, plot_h = 14, 14, 190
    w = width - pad_l - pad_r
    axis_y = pad_t + plot_h
    height = axis_y + 44 + 22 * sides + 8
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="score after each action">' % (width, height, width, height)]

    def y_of(v):
        return pad_t + plot_h - plot_h * (v - lo) / float(top - lo or 1)

    for v in yt:
        y = y_of(v)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" '
                   'stroke-opacity="0.35"/>' % (pad_l, y, pad_l + w, y))
        out.append('<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>'
                   % (pad_l - 5, y + 5, FONT, _cell(v)))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>'
               % (pad_l, axis_y, pad_l + w, axis_y))
    for t in xt:
        x = pad_l + w * t / float(n)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>'
                   % (x, axis_y, x, axis_y + 5))
        out.append('<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>'
                   % (x, axis_y + 21, FONT, _cell(t)))
    out.append('<text x="%d" y="%d" font-size="%d" text-anchor="middle">action</text>'
               % (pad_l + w // 2, axis_y + 39, FONT))
    for s in range(sides):
        pts = []
        for i, r in enumerate(series):
            if s < len(r["score"]):
                pts.append("%.1f,%.1f" % (pad_l + w * i / float(n), y_of(r["score"][s])))
        out.append('<polyline fill="none" stroke="%s" stroke-width="3" points="%s"/>'
                   % (COLOURS[s % len(COLOURS)], " ".join(pts)))
    last = series[-1]["score"] if series else []
    _legend(out, axis_y + 66, names, last)
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(categories, values, names, y_label, aria, width=WIDTH):
    """Grouped bars: per category one bar a side, its value on top; a y axis with values and
    a legend below."""
    top = nice_ticks(0, max([max(v) for v in values if v] + [1]), 4)
    pad_l = 14 + 9 * len(str(int(top[-1])))
    pad_r, pad_t, plot_h = 10, 22, 160
    w = width - pad_l - pad_r
    axis_y = pad_t + plot_h
    height = axis_y + 30 + 22 * len(values) + 22
    group = w / float(len(categories))
    bar = group / (len(values) + 1)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="%s">' % (width, height, width, height, _x(aria))]
    for v in top:
        y = axis_y - plot_h * v / float(top[-1])
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" '
                   'stroke-opacity="0.35"/>' % (pad_l, y, pad_l + w, y))
        out.append('<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>'
                   % (pad_l - 5, y + 5, FONT, _cell(v)))
    out.append('<text x="%d" y="%d" font-size="%d">%s</text>' % (pad_l, 15, FONT, _x(y_label)))
    for s, counts in enumerate(values):
        for i, n in enumerate(counts):
            bh = plot_h * n / float(top[-1])
            x = pad_l + i * group + s * bar + bar / 2
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, axis_y - bh, bar * 0.9, bh, COLOURS[s % len(COLOURS)]))
            if n:
                out.append('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="middle">%d'
                           '</text>' % (x + bar * 0.45, axis_y - bh - 3, FONT, n))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>'
               % (pad_l, axis_y, pad_l + w, axis_y))
    for i, c in enumerate(categories):
        out.append('<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>'
                   % (pad_l + i * group + group / 2, axis_y + 20, FONT, _x(c)))
    _legend(out, axis_y + 48, names[:len(values)])
    out.append("</svg>")
    return "\n".join(out)


def bed_heatmap(beds, names, width=WIDTH):
    """Shove ha'penny: the coins each side put in each bed, darker for more, the count in each
    square; one row a side (the name cut to fit, whole in its <title>)."""
    top = max([max(b) for b in beds] + [1])
    label = 112
    cell = (width - label - 6) // 9
    height = 30 + len(beds) * cell + 8
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="coins per bed">' % (width, height, width, height)]
    out.append('<text x="4" y="20" font-size="%d">bed</text>' % FONT)
    for b in range(9):
        out.append('<text x="%d" y="20" font-size="%d" text-anchor="middle">%d</text>'
                   % (label + b * cell + cell // 2, FONT, b + 1))
    for s, row in enumerate(beds):
        y = 28 + s * cell
        name = names[s] if s < len(names) else "AB"[s]
        out.append('<text x="4" y="%d" font-size="%d"><title>%s</title>%s</text>'
                   % (y + cell // 2 + 5, FONT, _x(name), _x(_short(name, 11))))
        for b, n in enumerate(row):
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" '
                       'fill-opacity="%.2f" stroke="#888" stroke-opacity="0.4"/>'
                       % (label + b * cell, y, cell - 3, cell - 3, COLOURS[s],
                          0.08 + 0.92 * n / top))
            out.append('<text x="%d" y="%d" font-size="%d" text-anchor="middle">%d</text>'
                       % (label + b * cell + (cell - 3) // 2, y + cell // 2 + 4, FONT, n))
    out.append("</svg>")
    return "\n".join(out)


def as_json(obj):
    return json.dumps(obj, indent=1, sort_keys=True)
