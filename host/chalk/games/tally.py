"""Tally games on the host (caps, backgammon, parcheesi, any count; rules/other-seed-games.md,
TL-1 .. TL-5): everything host-side."""

from chalk.games import common
from chalk.games.common import HostGame, and_list, clock

KIND_NAMES = {"caps": "Caps", "backgammon": "Backgammon", "parcheesi": "Parcheesi",
              "custom": "Tally"}


class Game(HostGame):
    id = "tally"
    name = "Tally"
    sheet_name = "tally"
    turnless = "count"
    figures = (("count_per_game", "count per game"),)
    random_config = {"players": 3, "target": 15, "kind": "caps"}
    bench = ({"target": None}, 0.5)
    long_bench = ({"target": None}, 0.5)
    sample = dict(seed=3, accuracy=0.5, players=["Ann", "Bob", "Cy"])
    keypad = True

    def game_name(self, config=None):
        kind = (config or {}).get("kind", "custom")
        return KIND_NAMES.get(kind, "Tally") if kind != "custom" else "Tally"

    def default_names(self, config=None):
        n = (config or {}).get("players", 2)
        n = n if type(n) is int and 2 <= n <= 9 else 2
        return ["P%d" % (i + 1) for i in range(n)]

    def side_names(self, players, config=None):
        players = players or []
        n = max(len(self.default_names(config)), min(len(players), 9))
        return [common.entry(players, i, "P%d" % (i + 1)) for i in range(n)]

    def race(self, config):
        target = (config or {}).get("target")
        return "first to %d" % target if target else ""

    # -- words -----------------------------------------------------------------------------
    def describe(self, rec, before, after, names, config):
        a = rec.get("a")
        counts = after["counts"]
        if a == "finish":
            w = after.get("winner")
            if w == "draw":
                top = max(counts)
                return "Finished: a draw at %d (%s)" % (
                    top, and_list([names[i] for i, c in enumerate(counts) if c == top])), []
            if type(w) is int:
                return "Finished: %s wins with %d" % (names[w], counts[w]), []
            return "Finished", []
        if a != "add":
            return HostGame.describe(self, rec, before, after, names, config)
        p = rec["player"]
        n = rec["n"]
        text = "%s %s%d, now %d" % (names[p], "+" if n >= 0 else "\u2212", abs(n), counts[p])
        if before is not None and before["counts"][p] + n < 0:
            text += " (a count never goes below 0, TL-2)"
        if common.won(before, after) == p:
            text += " — %s reaches %d and wins (TL-3)" % (names[p], counts[p])
        return text, []

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        return "", ["  %-*s  %5d" % (w, shown[i], c) for i, c in enumerate(st["counts"])]

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return ", ".join("%s %d" % (shown[i], c) for i, c in enumerate(st["counts"]))

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        target = config.get("target")
        yield "tally (%s)  %s  %s" % (config.get("kind", "custom"), " v ".join(names),
                                      "first to %d" % target if target else "no target")
        yield "%4s %5s %7s  %-24s  %s" % ("line", "seq", "time", "counts", "what happened")
        for n, rec, _before, after, words in steps:
            yield "%4d %5s %7s  %-24s  %s" % (n, rec.get("seq", ""), clock(rec.get("t", 0)),
                                              " ".join(str(c) for c in after["counts"]), words)

    def sheet_result(self, state, names, config):
        counts = ", ".join("%s %d" % (names[i], c) for i, c in enumerate(state["counts"]))
        if state["winner"] is None:
            return "no winner yet: %s" % counts
        if state["winner"] == "draw":
            return "draw: %s" % counts
        return "winner: %s (%s)" % (names[state["winner"]], counts)

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = (["seq", "time", "t_ms", "action", "player", "name", "n"]
                   + ["count_%d" % p for p in range(1, 10)] + ["winner"])

    def csv_rows(self, head, steps, names, config):
        for _n, rec, _before, after in steps:
            add = rec.get("a") == "add"
            counts = list(after["counts"])
            yield ([rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), rec.get("a")]
                   + ([rec["player"] + 1, names[rec["player"]], rec["n"]] if add else [""] * 3)
                   + counts + [""] * (9 - len(counts))
                   + [common.winner_name(names, after["winner"])])

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["counts"]) if st else []

    def short_score(self, st):
        return "-".join(str(c) for c in st["counts"])

    def side_counts(self, kept, final, side, config):
        return {"games": 1, "count": final["counts"][side] if side < len(final["counts"]) else 0}

    def figure(self, key, c):
        return round(c["count"] / c["games"], 1) if c.get("games") else None

    # -- random games and traces -----------------------------------------------------------
    def random_action(self, rng, state, accuracy):
        player = rng.randrange(len(state["counts"]))
        if rng.random() < 0.05:
            return {"a": "add", "player": player, "n": -1}  # a mistaken count put right (TL-2)
        return {"a": "add", "player": player, "n": rng.choice((1, 1, 1, 2, 3))}

    def keys(self, action):
        if action["a"] == "finish":
            return "C#"
        n = action["n"]
        return "%d#%s%d##" % (action["player"] + 1, "B" if n < 0 else "", abs(n))

    def trace(self, tr, head, actions):
        common.keypad_trace(self, tr, head, actions)
