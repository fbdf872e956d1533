"""Statistics and plots from the archive: what `chalk stats` prints and the /stats pages draw.

Everything is worked out by replaying the archived actions through the rules (export.replay),
from an archive opened read-only (SQLite's mode=ro: the pages never write, and never wait for
the archiver, the file being in WAL mode).

- per game: each side's score after every action (an SVG line chart); shove ha'penny: the coins
  each side put in each bed (a heatmap); five-pins: how often each pin fell, caroms and fouls, per
  player;
- per player, across games: games, wins, losses, the average final score, and head-to-head.

Any game is charted from its state's score (views.score), so a new game needs nothing here.
"""

import csv
import io
import json
import sqlite3
import urllib.parse
from collections import Counter

from chalk import export, views
from chalk.archive import Archive, ArchiveError, default_path
from chalk.errors import ChalkError

PINS = "1234C"


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
    """The names of a game's sides (a partnership's players joined, as the pages show them)."""
    players = header.get("players") or []
    if final is None:  # how many sides: from the game's first state
        try:
            from scoreboard.rules import new_game

            final = new_game(header.get("game"), header.get("config")).state()
        except Exception:  # noqa: BLE001 - an unknown game or config: name players one by one
            final = None
    k = len(views.score(header.get("game"), final)) if final else 0
    return views.side_names(players, k or max(len(players), 2))


def _winner(g, final):
    w = g["winner"] if g["end_seq"] is not None else None
    if w is None and final:
        w = final.get("winner")
    return w


def game_list(db):
    """Every game: id, game, names, actions, result text, winner."""
    out = []
    for g in db.games():
        names = names_of(g["header"])
        w = g["winner"]
        if w is not None and type(w) is int and w < len(names):
            result = "won by %s" % names[w]
        elif w == "draw":
            result = "draw"
        elif g["end_seq"] is not None:
            result = "ended, no winner"
        else:
            result = "in play"
        out.append({"id": g["id"], "game": g["game"], "names": names,
                    "table": g["header"].get("table") or g["board"], "actions": g["actions"],
                    "started": g["started"] or g["archived"], "result": result, "winner": w})
    return out


def game_stats(db, gid):
    """One game's statistics (None if there is no such game)."""
    try:
        g = db.game(gid)
    except ChalkError:
        return None
    head, steps, final = export.replay(db, g)
    names = names_of(head, final)
    series = []
    first = steps[0][2] if steps else final
    series.append({"seq": g["seq"], "t": 0, "score": views.score(g["game"], first)})
    for _line, rec, _before, after in steps:
        series.append({"seq": rec.get("seq"), "t": rec.get("t", 0), "a": rec.get("a"),
                       "score": views.score(g["game"], after)})
    out = {"id": g["id"], "game": g["game"], "names": names, "actions": len(steps),
           "table": head.get("table") or g["board"], "started": g["started"],
           "series": series, "final": final, "winner": _winner(g, final)}
    kept = [rec for _l, rec, _b, _a in _undone(steps)]
    if g["game"] == "shove-hapenny":
        beds = [[0] * 9, [0] * 9]
        for rec in kept:
            if rec.get("a") == "turn" and not rec.get("void"):
                for i, n in enumerate(rec.get("beds") or []):
                    if i < 9:
                        beds[rec["side"]][i] += n
        out["beds"] = beds
        out["marks"] = final.get("beds")
    elif g["game"] == "five-pins":
        pins = [Counter(), Counter()]
        caroms = [Counter(), Counter()]
        fouls = [Counter(), Counter()]
        shots = [0, 0]
        for rec in kept:
            if rec.get("a") != "shot":
                continue
            p = rec["player"]
            shots[p] += 1
            pins[p].update(rec.get("pins") or "")
            if rec.get("carom"):
                caroms[p][rec["carom"]] += 1
            fouls[p].update(rec.get("fouls") or [])
        out["shots"] = shots
        out["pins"] = [[c[x] for x in PINS] for c in pins]
        out["caroms"] = [dict(c) for c in caroms]
        out["fouls"] = [dict(c) for c in fouls]
    out["chart"] = score_chart(series, names)
    if "beds" in out:
        out["heatmap"] = bed_heatmap(out["beds"], names)
    if "pins" in out:
        out["pin_chart"] = pin_chart(out["pins"], names)
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


def players(db):
    """Per player across every game: games, wins, losses, average final score; head-to-head."""
    table = {}
    h2h = Counter()
    for g in db.games():
        try:
            head, _steps, final = export.replay(db, g)
        except ChalkError:
            continue  # a game the rules refuse is for `chalk verify`, not for statistics
        if not g["actions"]:
            continue
        scores = views.score(g["game"], final)
        names = names_of(head, final)[:len(scores) or 2]
        w = _winner(g, final)
        for i, n in enumerate(names):
            p = table.setdefault(n, {"name": n, "games": 0, "wins": 0, "losses": 0,
                                     "points": 0, "scored": 0})
            p["games"] += 1
            if i < len(scores):
                p["points"] += scores[i]
                p["scored"] += 1
            if type(w) is int:
                if w == i:
                    p["wins"] += 1
                else:
                    p["losses"] += 1
        if type(w) is int and w < len(names):
            for i, n in enumerate(names):
                if i != w:
                    h2h[(names[w], n)] += 1
    rows = []
    for p in sorted(table.values(), key=lambda p: (-p["wins"], p["losses"], p["name"])):
        decided = p["wins"] + p["losses"]
        rows.append({"name": p["name"], "games": p["games"], "wins": p["wins"],
                     "losses": p["losses"],
                     "win_pct": round(100.0 * p["wins"] / decided, 1) if decided else None,
                     "avg_score": round(p["points"] / p["scored"], 1) if p["scored"] else None})
    pairs = sorted({tuple(sorted(k)) for k in h2h})
    head2head = [{"a": a, "b": b, "a_wins": h2h[(a, b)], "b_wins": h2h[(b, a)]}
                 for a, b in pairs]
    return {"players": rows, "head_to_head": head2head}


# -- the terminal and CSV ----------------------------------------------------------------------

PLAYER_COLUMNS = ["name", "games", "wins", "losses", "win_pct", "avg_score"]


def players_text(report):
    rows = ["%-24s %5s %5s %6s %6s %9s" % ("player", "games", "wins", "losses", "win %",
                                           "avg score")]
    for p in report["players"]:
        rows.append("%-24s %5d %5d %6d %6s %9s" % (
            p["name"][:24], p["games"], p["wins"], p["losses"],
            "" if p["win_pct"] is None else "%.1f" % p["win_pct"],
            "" if p["avg_score"] is None else "%.1f" % p["avg_score"]))
    if report["head_to_head"]:
        rows += ["", "head to head"]
        for h in report["head_to_head"]:
            rows.append("  %s %d - %d %s" % (h["a"], h["a_wins"], h["b_wins"], h["b"]))
    return rows


def game_text(s):
    rows = ["game %d: %s on %s, %s, %d actions" % (s["id"], s["game"], s["table"],
                                                  " vs ".join(s["names"]), s["actions"])]
    w = s["winner"]
    if type(w) is int and w < len(s["names"]):
        rows.append("won by %s" % s["names"][w])
    last = s["series"][-1]["score"] if s["series"] else []
    rows.append("score: " + ", ".join("%s %s" % (n, x) for n, x in zip(s["names"], last)))
    if "beds" in s:
        rows.append("coins per bed   " + " ".join("%3d" % (i + 1) for i in range(9)))
        for n, beds in zip(s["names"], s["beds"]):
            rows.append("  %-13s " % n[:13] + " ".join("%3d" % x for x in beds))
    if "pins" in s:
        rows.append("pins down       " + " ".join("%4s" % p for p in PINS) + "  shots")
        for i, n in enumerate(s["names"][:2]):
            rows.append("  %-13s " % n[:13] + " ".join("%4d" % x for x in s["pins"][i])
                        + "  %5d" % s["shots"][i])
        for i, n in enumerate(s["names"][:2]):
            car = ", ".join("%s: %d" % (k, v) for k, v in sorted(s["caroms"][i].items()))
            fou = ", ".join("%s: %d" % (k, v) for k, v in sorted(s["fouls"][i].items()))
            rows.append("  %s: caroms %s; fouls %s" % (n, car or "none", fou or "none"))
    return rows


def players_csv(report):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(PLAYER_COLUMNS)
    for p in report["players"]:
        w.writerow(["" if p[c] is None else p[c] for c in PLAYER_COLUMNS])
    return buf.getvalue()


def game_csv(s):
    """The score after every action: seq, t_ms, action, then one column per side."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["seq", "t_ms", "action"] + ["score_%d" % (i + 1) for i in range(len(s["names"]))])
    for row in s["series"]:
        w.writerow([row["seq"], row["t"], row.get("a") or "start"] + list(row["score"]))
    return buf.getvalue()


def beds_csv(s):
    """Shove ha'penny: the coins each side put in each bed."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["side", "name"] + ["bed_%d" % (i + 1) for i in range(9)])
    for i, beds in enumerate(s["beds"]):
        w.writerow(["AB"[i], s["names"][i]] + list(beds))
    return buf.getvalue()


def pins_csv(s):
    """Five-pins: per player, shots, each pin's falls, caroms by value and fouls by code (every
    code of FP-14 and FP-15, in the rules' order)."""
    from scoreboard.rules.five_pins import FOULS

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["player", "name", "shots"] + ["pin_%s" % p for p in PINS] +
               ["carom_3", "carom_4"] + ["foul_%s" % f for f in FOULS])
    for i in range(2):
        w.writerow([i + 1, s["names"][i], s["shots"][i]] + list(s["pins"][i]) +
                   [s["caroms"][i].get(3, 0), s["caroms"][i].get(4, 0)] +
                   [s["fouls"][i].get(f, 0) for f in FOULS])
    return buf.getvalue()


# -- SVG -------------------------------------------------------------------------------------

COLOURS = ["#e8a33d", "#4fa3e0", "#5fd47a", "#e05f8a", "#b38cf0", "#9aa39c", "#f06a4f",
           "#3fc4b4", "#d4d45f"]


def _x(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def score_chart(series, names, width=720, height=300):
    """Each side's score after every action, as an SVG line chart."""
    sides = max([len(r["score"]) for r in series] + [0])
    pad_l, pad_r, pad_t, pad_b = 48, 16, 16, 36
    top = max([max(r["score"]) for r in series if r["score"]] + [1])
    n = max(len(series) - 1, 1)
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="score after each action">' % (width, height, width, height)]
    for k in range(5):
        v = top * k / 4.0
        y = pad_t + h - h * k / 4.0
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" stroke-opacity="0.3"/>'
                   % (pad_l, y, pad_l + w, y))
        out.append('<text x="%d" y="%.1f" font-size="12" text-anchor="end">%s</text>'
                   % (pad_l - 6, y + 4, ("%.0f" % v)))
    out.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">action</text>'
               % (pad_l + w // 2, height - 6))
    for s in range(sides):
        pts = []
        for i, r in enumerate(series):
            if s < len(r["score"]):
                pts.append("%.1f,%.1f" % (pad_l + w * i / n, pad_t + h - h * r["score"][s] / top))
        colour = COLOURS[s % len(COLOURS)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="3" points="%s"/>'
                   % (colour, " ".join(pts)))
        name = names[s] if s < len(names) else "P%d" % (s + 1)
        out.append('<text x="%d" y="%d" font-size="14" fill="%s">%s</text>'
                   % (pad_l + 8 + 140 * s, pad_t + 14, colour, _x(name)))
    out.append("</svg>")
    return "\n".join(out)


def bed_heatmap(beds, names, cell=56):
    """Shove ha'penny: the coins each side put in each bed, darker for more."""
    top = max([max(b) for b in beds] + [1])
    label = 130
    width, height = label + 9 * cell + 8, 28 + len(beds) * cell + 8
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="coins per bed">' % (width, height, width, height)]
    for b in range(9):
        out.append('<text x="%d" y="20" font-size="13" text-anchor="middle">bed %d</text>'
                   % (label + b * cell + cell // 2, b + 1))
    for s, row in enumerate(beds):
        y = 28 + s * cell
        name = names[s] if s < len(names) else "AB"[s]
        out.append('<text x="4" y="%d" font-size="14">%s</text>' % (y + cell // 2 + 5,
                                                                   _x(name[:16])))
        for b, n in enumerate(row):
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" '
                       'fill-opacity="%.2f" stroke="#888" stroke-opacity="0.4"/>'
                       % (label + b * cell, y, cell - 4, cell - 4, COLOURS[s],
                          0.08 + 0.92 * n / top))
            out.append('<text x="%d" y="%d" font-size="16" text-anchor="middle">%d</text>'
                       % (label + b * cell + (cell - 4) // 2, y + cell // 2 + 4, n))
    out.append("</svg>")
    return "\n".join(out)


def pin_chart(pins, names, width=420, height=220):
    """Five-pins: how often each pin fell, per player (grouped bars)."""
    top = max([max(p) for p in pins] + [1])
    pad_l, pad_b, pad_t = 30, 30, 24
    group = (width - pad_l - 10) / len(PINS)
    bar = group / (len(pins) + 1)
    h = height - pad_b - pad_t
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" '
           'role="img" aria-label="pins down per player">' % (width, height, width, height)]
    for s, counts in enumerate(pins):
        out.append('<text x="%d" y="16" font-size="13" fill="%s">%s</text>'
                   % (pad_l + 150 * s, COLOURS[s], _x(names[s] if s < len(names) else s)))
        for i, n in enumerate(counts):
            bh = h * n / top
            x = pad_l + i * group + s * bar + bar / 2
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (x, pad_t + h - bh, bar * 0.9, bh, COLOURS[s]))
    for i, p in enumerate(PINS):
        out.append('<text x="%.1f" y="%d" font-size="13" text-anchor="middle">pin %s</text>'
                   % (pad_l + i * group + group / 2, height - 8, p))
    out.append("</svg>")
    return "\n".join(out)


def as_json(obj):
    return json.dumps(obj, indent=1, sort_keys=True)
