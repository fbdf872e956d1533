"""Seven pins on the host (rules/seven-pins.md, SP-1 .. SP-16): everything host-side."""

from chalk.games import common
from chalk.games.common import HostGame, PinTable, and_list, clock
from scoreboard.games.seven_pins.referee import FOULS as LIST_ORDER  # the foul list's order
from scoreboard.games.seven_pins.referee import LIST as RULING_LIST  # ... with the rulings
from scoreboard.games.seven_pins.referee import PINS
from scoreboard.referee.pintable import NOT_DOWN

FOUL_WORDS = {
    "cue_pins": "the cue ball knocked a pin (SP-8)",
    "off_table": "a ball left the table (SP-13)",
    "miss": "the cue ball missed every ball (SP-12)",
    "cue_pocketed": "the cue ball was pocketed (SP-12)",
    "no_cushion": "pins knocked without the cushion first (SP-7)",
}
_SHORT = {k: v[:v.rindex(" (")] for k, v in FOUL_WORDS.items()}
PIN_WORDS = {"K": "the king"}
PENALTY = ("cue_pins", "off_table")


def pins_words(pins):
    pins = [p for p in PINS if p in (pins or ())]
    if not pins:
        return "no pin"
    if len(pins) == 7:
        return "all seven pins"
    return and_list([PIN_WORDS.get(p, p) for p in pins])


class Game(PinTable):
    id = "seven-pins"
    name = "Seven pins"
    sheet_name = "seven pins"
    waiting = "the break (SP-15)"
    fouls = FOUL_WORDS
    figures = (("shots", "shots"), ("off_per_shot", "written off per shot"),
               ("added", "penalty points"), ("all_seven", "all seven"))
    random_config = {"start": 300}
    random_opening = {"a": "break", "player": 0}
    bench = ({"start": 5000}, 0.5)
    # (the rules' upper bound is start 100000; a shot that misses everything writes nothing
    # off, so low accuracy lasts)
    long_bench = ({"start": 100000}, 0.02)
    sample = dict(seed=0, accuracy=0.5, players=["Misha", "Oleg"])

    def race(self, config):
        return "from %d down to 0" % (config or {}).get("start", 300)

    # -- words -----------------------------------------------------------------------------
    # A void shot (as FP-17): a third party or force majeure spoilt it
    void_words = "%s: shot void (a third party or force majeure), nothing counts; the turn " \
        "passes (SP-9)"
    pins_words = staticmethod(pins_words)

    def shot_words(self, rec, before, after, names, config):
        p = rec["player"]
        pins = rec.get("pins") or []
        parts = [pins_words(pins)]
        if rec.get("pocketed"):
            parts.append("%d ball%s potted" % (rec["pocketed"], "s" if rec["pocketed"] > 1
                                              else ""))
        if rec.get("carom"):
            parts.append("a carom" + (" as called" if rec.get("called") else ""))
        elif rec.get("called"):
            parts.append("the called carom missed (SP-11)")
        if parts[0] == "no pin":
            parts = parts[1:] or ["nothing down"]
        text = "%s: %s" % (names[p], ", ".join(parts))
        if rec.get("struck"):  # as FP-22: counted by the switches, ruled not down
            text += " (%s struck by the referee, not down)" % pins_words(rec["struck"])
        fouls = rec.get("fouls") or []
        if fouls:
            text += " — foul: %s" % and_list([_SHORT.get(f, f) for f in fouls])
        if before is not None:
            change = after["totals"][p] - before["totals"][p]
            if common.won(before, after) == p and not fouls and len(pins) == 7:
                text += " — %s wins at once (SP-6)" % names[p]
                return text, self.foul_words(fouls)
            if change < 0:
                text += ", %d off" % -change
            elif change > 0:
                text += ", %d added" % change
            elif parts != ["nothing down"]:
                text += ", nothing written off"
            if common.won(before, after) == p:
                text += " — %s is down to 0 and wins" % names[p]
            else:
                text += " (%d to go)" % after["totals"][p]
                if after.get("next") == p:
                    text += "; %s plays on (SP-9)" % names[p]
        return text, self.foul_words(fouls)

    def parse_last(self, text, state):
        # The board's short text: "P1 K S1 M1 cue_pins,miss" ("-" for no pin), "P1 void".
        toks = (text or "").split()
        if len(toks) == 2 and toks[0] in ("P1", "P2") and toks[1] == "void":
            return {"a": "shot", "player": int(toks[0][1]) - 1, "pins": [], "fouls": [],
                    "void": 1}
        if len(toks) >= 2 and toks[0] in ("P1", "P2"):
            pins = [t for t in toks[1:] if t in PINS]
            rest = [t for t in toks[1:] if t not in PINS and t != "-"]
            fouls = rest[0].split(",") if rest else []
            if len(rest) > 1 or any(f not in FOUL_WORDS for f in fouls):
                return None
            return {"a": "shot", "player": int(toks[0][1]) - 1, "pins": pins, "fouls": fouls}
        if text == "break" and state and state.get("next") is not None:
            return {"a": "break", "player": state["next"]}
        return HostGame.parse_last(self, text, state) if text == "undo" else None

    def note_words(self, note, state, names):
        # The shot being scored: pin ids, "p1" (balls potted), "car", "call", a foul or
        # "2 fouls"; "break: P1" is the board's prompt.
        if not note or note.startswith("break:"):
            return ""
        toks = note.split()
        pins = [t for t in toks if t in PINS]
        words = [pins_words(pins)] if pins else []
        for i, t in enumerate(toks):
            if t in ("p1", "p2"):
                words.append("%s ball%s potted" % (t[1], "s" if t == "p2" else ""))
            elif t == "car":
                words.append("a carom")
            elif t == "call":
                words.append("a carom called")
            elif t in _SHORT:
                words.append("foul: " + _SHORT[t])
            elif t == "fouls" and i and toks[i - 1].isdigit():
                words.append("%s fouls" % toks[i - 1])
        return "shot so far: " + ", ".join(words) if words else ""

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  to go" % (w, "")]
        for p in (0, 1):
            mark = ">" if st["next"] == p else " "
            rows.append("%s %-*s  %5d" % (mark, w, shown[p], st["totals"][p]))
        return "", rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return "to go: %s %d - %s %d" % (shown[0], st["totals"][0], shown[1], st["totals"][1])

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        nw = max([len(n) for n in names] + [10])  # the "next" column
        yield "seven pins  %s v %s  from %s down to 0" % (names[0], names[1],
                                                          config.get("start", 300))
        yield "%4s %5s %7s  %-12s %9s  %-*s %s" % (
            "line", "seq", "time", "change", "totals", nw, "next", "what happened")
        for n, rec, before, after, words in steps:
            moved = []
            for p in (0, 1):
                d = after["totals"][p] - before["totals"][p]
                if d:
                    moved.append("%+d %s" % (d, names[p]))
            nxt = "" if after["next"] is None else names[after["next"]]
            yield "%4d %5s %7s  %-12s %9s  %-*s %s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), " ".join(moved),
                "%d-%d" % tuple(after["totals"]), nw, nxt, words)

    def sheet_result(self, state, names, config):
        if state["winner"] is None:
            return "no winner yet: %s %d to go, %s %d to go" % (
                names[0], state["totals"][0], names[1], state["totals"][1])
        w = state["winner"]
        return "winner: %s, down to 0 with %s on %d" % (names[w], names[1 - w],
                                                         state["totals"][1 - w])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "player", "name", "pins", "pocketed",
                   "carom", "called", "fouls", "change_1", "change_2", "total_1", "total_2",
                   "next"]

    def csv_rows(self, head, steps, names, config):
        for _n, rec, before, after in steps:
            a = rec.get("a")
            p = rec.get("player")
            shot = a == "shot"
            yield [rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), a,
                   "" if p is None else p + 1, "" if p is None else names[p],
                   " ".join(rec.get("pins") or ()) if shot else "",
                   rec.get("pocketed", 0) if shot else "", rec.get("carom", 0) if shot else "",
                   rec.get("called", 0) if shot else "",
                   " ".join(rec.get("fouls") or ()) if shot else "",
                   after["totals"][0] - before["totals"][0],
                   after["totals"][1] - before["totals"][1],
                   after["totals"][0], after["totals"][1],
                   "" if after["next"] is None else names[after["next"]]]

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["totals"]) if st else []

    def short_score(self, st):
        return "%d-%d to go" % tuple(st["totals"])

    def side_counts(self, kept, final, side, config):
        c = {"shots": 0, "off": 0, "added": 0, "all_seven": 0}
        for _n, rec, before, after in kept:
            if rec.get("a") != "shot" or rec.get("player") != side:
                continue
            c["shots"] += 1
            d = after["totals"][side] - before["totals"][side]
            if d < 0:
                c["off"] -= d
            else:
                c["added"] += d
            if len(rec.get("pins") or ()) == 7 and not rec.get("fouls"):
                c["all_seven"] += 1
        return c

    def figure(self, key, c):
        if key == "off_per_shot":
            return round(c["off"] / c["shots"], 1) if c.get("shots") else None
        return c.get(key, 0)

    # -- random games and traces -----------------------------------------------------------
    RANDOM_FOULS = ["miss", "cue_pocketed", "no_cushion", "cue_pins", "off_table"]

    def random_action(self, rng, state, accuracy):
        player = state["next"]
        if rng.random() < 0.12:
            return {"a": "shot", "player": player, "pins": [], "pocketed": 0, "carom": 0,
                    "called": 0, "fouls": [rng.choice(self.RANDOM_FOULS)]}
        down = [p for p in PINS if rng.random() < accuracy * (0.2 if p[0] == "S" else 0.3)]
        pocketed = rng.choice((0, 0, 0, 1, 2)) if rng.random() < accuracy else 0
        carom = 1 if rng.random() < accuracy * 0.3 else 0
        called = 1 if rng.random() < 0.05 else 0
        fouls = ["cue_pins"] if down and rng.random() < 0.08 else []
        return {"a": "shot", "player": player, "pins": down, "pocketed": pocketed,
                "carom": carom, "called": called, "fouls": fouls}

    def trace_shot(self, tr, action):
        pocketed = action.get("pocketed", 0)

        def balls(t0, n=pocketed):
            for i in range(n):
                # An object ball drops through a pocket's beam (SP-10): counted.
                tr.pocket(tr.rng.choice((1, 2)), t0 + 1500 + 700 * i)

        # The switches count the pins down and those the referee strikes (as FP-22).
        struck = action.get("struck", [])
        down = [p for p in PINS if p in action.get("pins", []) or p in struck]
        common.strike(tr, down, PINS, then=balls)
        if action.get("carom"):
            tr.press("carom")
        if action.get("called"):
            tr.press("called")
        common.foul_list(tr, action.get("fouls", []), LIST_ORDER)
        marks = ["void"] if action.get("void") else [NOT_DOWN + p for p in struck]
        common.foul_list(tr, marks, list(RULING_LIST) + [NOT_DOWN + p for p in down])
