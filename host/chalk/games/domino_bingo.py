"""Domino bingo on the host (rules/domino-bingo.md, DB-1 .. DB-8): everything host-side."""

from chalk.games import common
from chalk.games.common import HostGame, clock, plural
from scoreboard.games.domino_bingo.rules import BONUS_AT, TOTALS

TRUMPS = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes")


class Game(HostGame):
    id = "domino-bingo"
    name = "Domino bingo"
    sheet_name = "domino bingo"
    turnless = "hand"
    figures = (("hands", "hands"), ("big_per_hand", "big points per hand"),
               ("seventy", "hands of 70 or more"), ("declared", "declared"))
    random_config = {"big_points_to_win": 7}
    bench = ({"big_points_to_win": 10000}, 0.5)
    long_bench = ({"big_points_to_win": 10000}, 0.5)
    sample = dict(seed=7, accuracy=0.5, players=["Lena", "Oleg"])
    keypad = True

    def race(self, config):
        return "to %s" % plural((config or {}).get("big_points_to_win", 7), "big point")

    # -- words -----------------------------------------------------------------------------
    def describe(self, rec, before, after, names, config):
        if rec.get("a") != "hand":
            return HostGame.describe(self, rec, before, after, names, config)
        parts = []
        for p in (0, 1):
            pts = rec["points"][p]
            dec = rec["declared"][p]
            bit = "%s %d" % (names[p], pts)
            if dec:
                bit += " + %d declared" % dec
            parts.append(bit)
        big = []
        for p in (0, 1):
            why = []
            if rec["big"][p]:
                why.append("%d in the hand" % rec["big"][p])
            if rec["points"][p] + rec["declared"][p] >= BONUS_AT:
                why.append("1 for %d or more" % BONUS_AT)
            n = rec["big"][p] + (rec["points"][p] + rec["declared"][p] >= BONUS_AT)
            if n:
                big.append("%s +%d (%s)" % (names[p], n, ", ".join(why)))
        text = "Trump %s: %s; %s" % (TRUMPS[rec["trump"]], ", ".join(parts),
                                     "big points " + ", ".join(big) if big else "no big point")
        w = common.won(before, after)
        if w is not None:
            text += " — %s wins, %d big points to %d" % (names[w], after["big"][w],
                                                         after["big"][1 - w])
        return text, []

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  big points" % (w, "")] + ["  %-*s  %10d" % (w, shown[i], st["big"][i])
                                                  for i in (0, 1)]
        return "hand %d" % (st["hands"] + 1), rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return ", ".join("%s %d" % (shown[i], st["big"][i]) for i in (0, 1))

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        yield "domino bingo  %s v %s  %s big points to win" % (
            names[0], names[1], config.get("big_points_to_win", 7))
        yield "%4s %5s %7s  %-7s %-11s %-11s %-12s %-16s %5s  %s" % (
            "line", "seq", "time", "trump", "points", "declared", "big in hand", "big points",
            "total", "what happened")
        for n, rec, before, after, words in steps:
            gained = ["%+d %s" % (after["big"][i] - before["big"][i], names[i]) for i in (0, 1)
                      if after["big"][i] != before["big"][i]]
            if rec.get("a") == "hand":
                yield "%4d %5s %7s  %-7s %-11s %-11s %-12s %-16s %5s  %s" % (
                    n, rec.get("seq", ""), clock(rec.get("t", 0)), TRUMPS[rec["trump"]],
                    "%d-%d" % tuple(rec["points"]), "%d-%d" % tuple(rec["declared"]),
                    "%d-%d" % tuple(rec["big"]), " ".join(gained), "%d-%d" % tuple(after["big"]),
                    words)
            else:
                yield "%4d %5s %7s  %-44s %-16s %5s  %s" % (
                    n, rec.get("seq", ""), clock(rec.get("t", 0)), "", " ".join(gained),
                    "%d-%d" % tuple(after["big"]), words)

    def sheet_result(self, state, names, config):
        if state["winner"] is None:
            return "no winner yet: %s %d, %s %d big points after %d hands" % (
                names[0], state["big"][0], names[1], state["big"][1], state["hands"])
        w = state["winner"]
        return "winner: %s, %d big points to %d after %d hands" % (
            names[w], state["big"][w], state["big"][1 - w], state["hands"])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "trump", "points_1", "points_2",
                   "declared_1", "declared_2", "big_in_hand_1", "big_in_hand_2", "big_1",
                   "big_2", "hands", "winner"]

    def csv_rows(self, head, steps, names, config):
        for _n, rec, _before, after in steps:
            hand = rec.get("a") == "hand"
            yield ([rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
                   + ([TRUMPS[rec["trump"]]] + list(rec["points"]) + list(rec["declared"])
                      + list(rec["big"]) if hand else [""] * 7)
                   + [after["big"][0], after["big"][1], after["hands"],
                      common.winner_name(names, after["winner"])])

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["big"]) if st else []

    def short_score(self, st):
        return "%d-%d" % tuple(st["big"])

    def side_counts(self, kept, final, side, config):
        c = {"hands": 0, "big": 0, "seventy": 0, "declared": 0}
        for _n, rec, before, after in kept:
            if rec.get("a") != "hand":
                continue
            c["hands"] += 1
            c["big"] += after["big"][side] - before["big"][side]
            c["seventy"] += rec["points"][side] + rec["declared"][side] >= BONUS_AT
            c["declared"] += rec["declared"][side]
        return c

    def figure(self, key, c):
        if key == "big_per_hand":
            return round(c["big"] / c["hands"], 2) if c.get("hands") else None
        return c.get(key, 0)

    # -- random games and traces -----------------------------------------------------------
    def random_action(self, rng, state, accuracy):
        trump = rng.randrange(7)
        a = rng.randint(0, TOTALS[trump])
        b = rng.randint(0, TOTALS[trump] - a)
        declared = [rng.choice((0, 0, 0, 0, 0, 20, 20, 40, 50, 60)) for _ in (0, 1)]
        big = [1 if rng.random() < 0.08 else 0 for _ in (0, 1)]  # bingo beat a trump (DB-3)
        return {"a": "hand", "trump": trump, "points": [a, b], "declared": declared,
                "big": big}

    def keys(self, action):
        nums = [action["trump"]] + list(action["points"]) + list(action["declared"]) + \
            list(action["big"])
        return "".join("%d#" % n for n in nums) + "#"

    def trace(self, tr, head, actions):
        common.keypad_trace(self, tr, head, actions)
