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


# -- seven pins ----------------------------------------------------------------------------------

def seven_pins_rows(head, steps):
    who = names(head, ["P1", "P2"])
    cfg = head.get("config") or {}
    yield "seven pins  %s v %s  from %s down to 0" % (who[0], who[1], cfg.get("start", 300))
    yield "%4s %5s %7s  %-46s %-12s %9s  %s" % (
        "line", "seq", "time", "action", "change", "totals", "next")
    for n, rec, before, after in steps:
        a = rec.get("a")
        if a == "break":
            what = "%s breaks" % who[rec["player"]]
        elif a == "shot":
            parts = ["%s:" % who[rec["player"]]]
            parts.append(" ".join(rec.get("pins") or []) or "no pin")
            if rec.get("pocketed"):
                parts.append("potted %d" % rec["pocketed"])
            if rec.get("carom"):
                parts.append("carom")
            if rec.get("called"):
                parts.append("(called)")
            if rec.get("fouls"):
                parts.append("FOUL " + ",".join(rec["fouls"]))
            what = " ".join(parts)
        else:
            what = a
        moved = []
        for p in (0, 1):
            d = after["totals"][p] - before["totals"][p]
            if d:
                moved.append("%+d %s" % (d, who[p]))
        nxt = "" if after["next"] is None else who[after["next"]]
        yield "%4d %5s %7s  %-46s %-12s %9s  %s" % (
            n, rec.get("seq", ""), clock(rec.get("t", 0)), what[:46], " ".join(moved),
            "%d-%d" % tuple(after["totals"]), nxt)


def seven_pins_result(head, state):
    who = names(head, ["P1", "P2"])
    if state["winner"] is None:
        return "no winner yet: %s %d to go, %s %d to go" % (
            who[0], state["totals"][0], who[1], state["totals"][1])
    w = state["winner"]
    return "winner: %s, down to 0 with %s on %d" % (who[w], who[1 - w], state["totals"][1 - w])


# -- novuss --------------------------------------------------------------------------------------

def novuss_rows(head, steps):
    who = names(head, ["A", "B"])
    cfg = head.get("config") or {}
    yield "novuss  %s v %s  %d pucks a side%s" % (
        who[0], who[1], cfg.get("pucks", 8), "  pairs" if cfg.get("per_side", 1) == 2 else "")
    yield "%4s %5s %7s  %-44s %7s %7s  %s" % (
        "line", "seq", "time", "action", "left", "debt", "next")
    for n, rec, _before, after in steps:
        a = rec.get("a")
        if a == "start":
            what = "%s starts" % who[rec["side"]]
        elif a == "shot":
            parts = ["%s:" % who[rec["side"]]]
            own, opp = rec.get("own", 0), rec.get("opp", 0)
            if own:
                parts.append("%d own" % own)
            if opp:
                parts.append("%d opp" % opp)
            if not own and not opp:
                parts.append("nothing in")
            if rec.get("fouls"):
                parts.append("FOUL " + ",".join(rec["fouls"]))
            what = " ".join(parts)
        else:
            what = a
        nxt = "" if after["next"] is None else who[after["next"]]
        yield "%4d %5s %7s  %-44s %7s %7s  %s" % (
            n, rec.get("seq", ""), clock(rec.get("t", 0)), what[:44],
            "%d-%d" % tuple(after["left"]), "%d-%d" % tuple(after["debt"]), nxt)


def novuss_result(head, state):
    who = names(head, ["A", "B"])
    if state["winner"] is None:
        return "no winner yet: %s %d left (owes %d), %s %d left (owes %d)" % (
            who[0], state["left"][0], state["debt"][0], who[1], state["left"][1],
            state["debt"][1])
    w = state["winner"]
    return "winner: %s, all pucks in; %s had %d left" % (who[w], who[1 - w],
                                                         state["left"][1 - w])


# -- texas 42 ------------------------------------------------------------------------------------

def t42_sides(head):
    """The two partnerships' names: side 0 = players 1 and 3, side 1 = players 2 and 4 (T42-1)."""
    players = head.get("players") or []
    if len(players) == 4 and all(isinstance(p, str) for p in players):
        return [printable("%s & %s" % (players[0], players[2])),
                printable("%s & %s" % (players[1], players[3]))]
    return names(head, ["P1 & P3", "P2 & P4"])


def t42_made(rec):
    """T42-6: did the bidders make their bid (84 and 168 need all 42)?"""
    return rec["took"] == 42 if rec["bid"] in (84, 168) else rec["took"] >= rec["bid"]


def texas_42_rows(head, steps):
    who = t42_sides(head)
    yield "texas 42  %s v %s  to %s" % (who[0], who[1], (head.get("config") or {}).get(
        "target", 250))
    yield "%4s %5s %7s  %-36s %-16s %9s" % ("line", "seq", "time", "hand", "hand points", "score")
    for n, rec, before, after in steps:
        if rec.get("a") == "hand":
            what = "%s bid %d, took %d: %s" % (who[rec["bidder"]], rec["bid"], rec["took"],
                                               "made" if t42_made(rec) else "SET")
        else:
            what = rec.get("a")
        pts = "%+d %+d" % tuple(after["scores"][i] - before["scores"][i] for i in (0, 1))
        yield "%4d %5s %7s  %-36s %-16s %9s" % (
            n, rec.get("seq", ""), clock(rec.get("t", 0)), what[:36], pts,
            "%d-%d" % tuple(after["scores"]))


def texas_42_result(head, state):
    who = t42_sides(head)
    a, b = state["scores"]
    if state["winner"] is None:
        return "no winner yet: %s %d, %s %d after %d hands" % (who[0], a, who[1], b,
                                                               state["hands"])
    w = state["winner"]
    return "winner: %s, %d to %d after %d hands" % (who[w], state["scores"][w],
                                                    state["scores"][1 - w], state["hands"])


# -- domino bingo ----------------------------------------------------------------------------------

TRUMPS = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes")


def domino_bingo_rows(head, steps):
    who = names(head, ["P1", "P2"])
    yield "domino bingo  %s v %s  %s big points to win" % (
        who[0], who[1], (head.get("config") or {}).get("big_points_to_win", 7))
    yield "%4s %5s %7s  %-7s %-11s %-11s %-12s %-16s %5s" % (
        "line", "seq", "time", "trump", "points", "declared", "big in hand", "big points",
        "total")
    for n, rec, before, after in steps:
        gained = ["%+d %s" % (after["big"][i] - before["big"][i], who[i]) for i in (0, 1)
                  if after["big"][i] != before["big"][i]]
        if rec.get("a") == "hand":
            yield "%4d %5s %7s  %-7s %-11s %-11s %-12s %-16s %5s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), TRUMPS[rec["trump"]],
                "%d-%d" % tuple(rec["points"]), "%d-%d" % tuple(rec["declared"]),
                "%d-%d" % tuple(rec["big"]), " ".join(gained), "%d-%d" % tuple(after["big"]))
        else:
            yield "%4d %5s %7s  %-48s %-16s %5s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), rec.get("a"), " ".join(gained),
                "%d-%d" % tuple(after["big"]))


def domino_bingo_result(head, state):
    who = names(head, ["P1", "P2"])
    if state["winner"] is None:
        return "no winner yet: %s %d, %s %d big points after %d hands" % (
            who[0], state["big"][0], who[1], state["big"][1], state["hands"])
    w = state["winner"]
    return "winner: %s, %d big points to %d after %d hands" % (
        who[w], state["big"][w], state["big"][1 - w], state["hands"])


# -- tally -----------------------------------------------------------------------------------------

def tally_names(head):
    n = (head.get("config") or {}).get("players", 2)
    return names(head, ["P%d" % (i + 1) for i in range(n)])


def tally_rows(head, steps):
    who = tally_names(head)
    cfg = head.get("config") or {}
    target = cfg.get("target")
    yield "tally (%s)  %s  %s" % (cfg.get("kind", "custom"), " v ".join(who),
                                  "first to %d" % target if target else "no target")
    yield "%4s %5s %7s  %-24s  %s" % ("line", "seq", "time", "action", "counts")
    for n, rec, _before, after in steps:
        a = rec.get("a")
        what = "%s %+d" % (who[rec["player"]], rec["n"]) if a == "add" else a
        yield "%4d %5s %7s  %-24s  %s" % (n, rec.get("seq", ""), clock(rec.get("t", 0)),
                                          what[:24], " ".join(str(c) for c in after["counts"]))


def tally_result(head, state):
    who = tally_names(head)
    counts = ", ".join("%s %d" % (who[i], c) for i, c in enumerate(state["counts"]))
    if state["winner"] is None:
        return "no winner yet: %s" % counts
    if state["winner"] == "draw":
        return "draw: %s" % counts
    return "winner: %s (%s)" % (who[state["winner"]], counts)


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
    "seven-pins": (seven_pins_rows, seven_pins_result),
    "novuss": (novuss_rows, novuss_result),
    "texas-42": (texas_42_rows, texas_42_result),
    "domino-bingo": (domino_bingo_rows, domino_bingo_result),
    "tally": (tally_rows, tally_result),
}


def scoresheet(head, steps, final):
    """The sheet's lines. `steps`: (line_no, record, state_before, state_after) per action."""
    rows, result = FORMATS.get(head.get("game"), (generic_rows, generic_result))
    out = list(rows(head, steps))
    if head.get("started"):
        out.insert(1, "started %s" % head["started"])
    out.append(result(head, final))
    return out
