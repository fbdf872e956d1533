"""A printable scoresheet: one row per action with who shot, what scored and the running totals.

Rows are built from the states before and after each action, so the sheet shows what the rules
decided, not what the log claims. A game without a formatter here gets a generic sheet.
"""

import json

from chalk.text import printable
from scoreboard import matchlog


def clock(ms):
    s = ms // 1000
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60) if s >= 3600 else "%d:%02d" % (
        s // 60, s % 60)


def names(head, default):
    players = head.get("players") or []
    out = []
    for i, d in enumerate(default):
        p = players[i] if i < len(players) else None
        if isinstance(p, list):
            p = " & ".join(str(x) for x in p)
        elif isinstance(p, dict):
            p = p.get("name")
        out.append(printable(p) if p else d)  # a name never reaches the terminal raw
    return out


# -- shove ha'penny ------------------------------------------------------------------------------

def _beds(row):
    return "".join(str(n) for n in row)


def shove_rows(head, steps):
    who = names(head, ["A", "B"])
    cfg = head.get("config") or {}
    yield "shove ha'penny  %s v %s  overflow %s%s" % (
        who[0], who[1], cfg.get("overflow", "auto"),
        "  pairs" if cfg.get("per_side", 1) == 2 else "")
    yield "%4s %5s %7s  %-34s %-14s %-9s %-9s %5s  %s" % (
        "line", "seq", "time", "action", "scored", "A beds", "B beds", "A-B", "next")
    for n, rec, before, after in steps:
        a = rec.get("a")
        if a == "start":
            what = "%s starts" % who[rec["side"]]
        elif a == "turn":
            coins = [str(b + 1) for b, c in enumerate(rec["beds"]) for _ in range(c)]
            what = "%s: %s" % (who[rec["side"]], " ".join(coins) or "no coin in a bed")
            if rec.get("void"):
                what += " VOID (%s)" % rec["void"]
            elif before["next"] != rec["side"]:
                what += " OUT OF TURN"
        elif a == "claim":
            what = "%s claims bed %d" % (who[rec["side"]], rec["bed"])
        else:
            what = a
        gained = []
        for side in (0, 1):
            d = sum(after["beds"][side]) - sum(before["beds"][side])
            if d:
                gained.append("%+d %s" % (d, who[side]))
        totals = "%d-%d" % (sum(after["beds"][0]), sum(after["beds"][1]))
        nxt = "" if after["next"] is None else who[after["next"]]
        if after["skip"][0] or after["skip"][1]:
            nxt += " (%s misses a turn)" % who[after["skip"].index(1)]
        yield "%4d %5s %7s  %-34s %-14s %-9s %-9s %5s  %s" % (
            n, rec.get("seq", ""), clock(rec.get("t", 0)), what[:34], ", ".join(gained),
            _beds(after["beds"][0]), _beds(after["beds"][1]), totals, nxt)


def shove_result(head, state):
    who = names(head, ["A", "B"])
    if state["winner"] is None:
        return "no winner yet: %s %d of 27, %s %d of 27, %d turns" % (
            who[0], sum(state["beds"][0]), who[1], sum(state["beds"][1]), state["turns"])
    w = state["winner"]
    return "winner: %s (27 to %d) after %d turns" % (who[w], sum(state["beds"][1 - w]),
                                                      state["turns"])


# -- five pins -----------------------------------------------------------------------------------

def five_pins_rows(head, steps):
    who = names(head, ["P1", "P2"])
    cfg = head.get("config") or {}
    yield "five pins  %s v %s  target %s  best of %s" % (
        who[0], who[1], cfg.get("target", 60), cfg.get("sets", 3))
    yield "%4s %5s %7s  %-40s %-16s %3s %9s %5s  %s" % (
        "line", "seq", "time", "action", "points", "set", "score", "sets", "next")
    for n, rec, before, after in steps:
        a = rec.get("a")
        if a == "break":
            what = "%s breaks" % who[rec["player"]]
        elif a == "shot":
            parts = ["%s:" % who[rec["player"]]]
            parts.append("pins %s" % rec["pins"] if rec.get("pins") else "no pin")
            if rec.get("carom"):
                parts.append("carom %d" % rec["carom"])
            if rec.get("fouls"):
                parts.append("FOUL " + ",".join(rec["fouls"]))
            what = " ".join(parts)
        else:
            what = a
        pts = []
        for p in (0, 1):
            if after["set"] != before["set"] or after["sets"] != before["sets"]:
                d = (cfg.get("target", 60) - before["scores"][p]
                     if after["sets"][p] > before["sets"][p] else 0)
            else:
                d = after["scores"][p] - before["scores"][p]
            if d:
                pts.append("%+d %s" % (d, who[p]))
        if after["ball_in_hand"]:
            pts.append("in hand")
        nxt = "" if after["next"] is None else who[after["next"]]
        yield "%4d %5s %7s  %-40s %-16s %3d %9s %5s  %s" % (
            n, rec.get("seq", ""), clock(rec.get("t", 0)), what[:40], " ".join(pts),
            after["set"], "%d-%d" % tuple(after["scores"]), "%d-%d" % tuple(after["sets"]), nxt)


def five_pins_result(head, state):
    who = names(head, ["P1", "P2"])
    if state["winner"] is None:
        return "no winner yet: set %d, %d-%d, sets %d-%d" % (
            state["set"], state["scores"][0], state["scores"][1], state["sets"][0],
            state["sets"][1])
    w = state["winner"]
    return "winner: %s, %d sets to %d" % (who[w], state["sets"][w], state["sets"][1 - w])


# -- any game ------------------------------------------------------------------------------------

def generic_rows(head, steps):
    yield "%s  %s" % (head.get("game"), json.dumps(head.get("config") or {}))
    for n, rec, _before, after in steps:
        yield "%4d  %s  ->  %s" % (n, matchlog.dumps(matchlog.strip_meta(rec)),
                                   matchlog.dumps(after))


def generic_result(head, state):
    return "final: %s" % matchlog.dumps(state)


FORMATS = {
    "shove-hapenny": (shove_rows, shove_result),
    "five-pins": (five_pins_rows, five_pins_result),
}


def scoresheet(head, steps, final):
    """The sheet's lines. `steps`: (line_no, record, state_before, state_after) per action."""
    rows, result = FORMATS.get(head.get("game"), (generic_rows, generic_result))
    out = list(rows(head, steps))
    if head.get("started"):
        out.insert(1, "started %s" % head["started"])
    out.append(result(head, final))
    return out
