"""Texas 42 on the host (rules/texas-42.md, T42-1 .. T42-7): everything host-side."""

from chalk.games import common
from chalk.games.common import HostGame, clock, entry, given
from scoreboard.games.texas_42.rules import HAND_POINTS, MARKS, hand_points


def made(rec):
    """T42-6: did the bidders make their bid (84 and 168 need all 42)?"""
    return rec["took"] == HAND_POINTS if rec["bid"] in MARKS else rec["took"] >= rec["bid"]


def bid_words(bid):
    return "%d (%d marks)" % (bid, bid // 42) if bid in MARKS else str(bid)


class Game(HostGame):
    id = "texas-42"
    name = "Texas 42"
    sheet_name = "texas 42"
    # The board's screen names the partnerships S1 and S2 (side 1 = players 1 and 3, T42-1)
    # when no names were given, and "Ann&Cy" when four were (display.py).
    defaults = ("S1", "S2")
    turnless = "hand"
    figures = (("hands", "hands"), ("bids", "bids"), ("bids_made", "bids made"),
               ("made_pct", "bids made %"), ("points_per_hand", "points per hand"))
    bench = ({"target": 10000}, 0.5)  # the rules' upper bound
    long_bench = ({"target": 10000}, 0.5)
    random_config = {"target": 250}
    sample = dict(seed=42, accuracy=0.5, players=["Ann", "Bob", "Cy", "Di"])
    keypad = True

    def side_names(self, players, config=None):
        """Side 0 = players 1 and 3, side 1 = players 2 and 4 (T42-1) when four are named one
        by one; else one entry a side (a name, or a pair)."""
        players = players or []
        if len(players) == 4 and all(isinstance(p, str) and p for p in players):
            return ["%s & %s" % (players[0], players[2]), "%s & %s" % (players[1], players[3])]
        return [entry(players, i, d) for i, d in enumerate(self.defaults)]

    def named(self, players, config=None):
        players = players or []
        if len(players) == 4 and all(isinstance(p, str) and p for p in players):
            return [True, True]
        return [given(players, i) for i in (0, 1)]

    def race(self, config):
        return "to %d" % (config or {}).get("target", 250)

    # -- words -----------------------------------------------------------------------------
    def describe(self, rec, before, after, names, config):
        if rec.get("a") != "hand":
            return HostGame.describe(self, rec, before, after, names, config)
        b = rec["bidder"]
        pts = hand_points(b, rec["bid"], rec["took"])
        if made(rec):
            text = "%s bid %s, made it: %d, %s %d" % (names[b], bid_words(rec["bid"]),
                                                      pts[b], names[1 - b], pts[1 - b])
        else:
            text = "%s bid %s and were set, taking %d: %s score %d (T42-6)" % (
                names[b], bid_words(rec["bid"]), rec["took"], names[1 - b], pts[1 - b])
        w = common.won(before, after)
        if w is not None:
            text += " — %s win, %d to %d" % (names[w], after["scores"][w],
                                             after["scores"][1 - w])
        return text, []

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  score" % (w, "")] + ["  %-*s  %5d" % (w, shown[i], st["scores"][i])
                                             for i in (0, 1)]
        return "hand %d" % (st["hands"] + 1), rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return ", ".join("%s %d" % (shown[i], st["scores"][i]) for i in (0, 1))

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        yield "texas 42  %s v %s  to %s" % (names[0], names[1], config.get("target", 250))
        yield "%4s %5s %7s  %-16s %9s  %s" % ("line", "seq", "time", "hand points", "score",
                                              "what happened")
        for n, rec, before, after, words in steps:
            pts = "%+d %+d" % tuple(after["scores"][i] - before["scores"][i] for i in (0, 1))
            yield "%4d %5s %7s  %-16s %9s  %s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), pts,
                "%d-%d" % tuple(after["scores"]), words)

    def sheet_result(self, state, names, config):
        a, b = state["scores"]
        if state["winner"] is None:
            return "no winner yet: %s %d, %s %d after %d hands" % (names[0], a, names[1], b,
                                                                   state["hands"])
        w = state["winner"]
        return "winner: %s, %d to %d after %d hands" % (names[w], state["scores"][w],
                                                        state["scores"][1 - w], state["hands"])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "bidder", "bidders", "bid", "took", "made",
                   "points_a", "points_b", "score_a", "score_b", "hands", "winner"]

    def csv_rows(self, head, steps, names, config):
        for _n, rec, before, after in steps:
            hand = rec.get("a") == "hand"
            yield ([rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
                   + ([rec["bidder"], names[rec["bidder"]], rec["bid"], rec["took"],
                       int(made(rec))] if hand else [""] * 5)
                   + [after["scores"][i] - before["scores"][i] for i in (0, 1)]
                   + [after["scores"][0], after["scores"][1], after["hands"],
                      common.winner_name(names, after["winner"])])

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["scores"]) if st else []

    def short_score(self, st):
        return "%d-%d" % tuple(st["scores"])

    def side_counts(self, kept, final, side, config):
        c = {"hands": 0, "bids": 0, "bids_made": 0, "points": 0}
        for _n, rec, before, after in kept:
            if rec.get("a") != "hand":
                continue
            c["hands"] += 1
            c["points"] += after["scores"][side] - before["scores"][side]
            if rec["bidder"] == side:
                c["bids"] += 1
                c["bids_made"] += made(rec)
        return c

    def figure(self, key, c):
        if key == "made_pct":
            return round(100.0 * c["bids_made"] / c["bids"], 1) if c.get("bids") else None
        if key == "points_per_hand":
            return round(c["points"] / c["hands"], 1) if c.get("hands") else None
        return c.get(key, 0)

    # -- random games and traces -----------------------------------------------------------
    def random_action(self, rng, state, accuracy):
        bid = rng.choice((30, 30, 31, 32, 33, 34, 35, 36, 38, 40, 42, 84)) \
            if rng.random() < 0.97 else 168
        if rng.random() < 0.6 + 0.3 * accuracy:  # made (T42-6)
            took = 42 if bid >= 42 else rng.randint(bid, 42)
        else:
            took = rng.randint(max(0, min(bid, 42) - 12), min(bid, 42) - 1)
        return {"a": "hand", "bidder": rng.randrange(2), "bid": bid, "took": took}

    def keys(self, action):
        """The keys a scorer types on a scorepad for one hand (docs/scorepad.md)."""
        return "%d#%d#%d##" % (action["bidder"] + 1, action["bid"], action["took"])

    def trace(self, tr, head, actions):
        common.keypad_trace(self, tr, head, actions)
