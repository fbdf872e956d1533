"""Five pins on the host (rules/five-pins.md, FP-1 .. FP-26): everything host-side."""

import re
from collections import Counter

from chalk.games import common
from chalk.games.common import HostGame, PinTable, and_list, clock
from scoreboard.games.five_pins.referee import FOULS as LIST_ORDER  # the foul list's order
from scoreboard.games.five_pins.referee import LIST as RULING_LIST  # ... with the rulings
from scoreboard.games.five_pins.rules import FOULS, PINS, foul_penalty, pin_points
from scoreboard.referee.pintable import NOT_DOWN

FOUL_WORDS = {
    "pin": "own ball knocked pins (FP-14)",
    "miss": "missed the opponent's ball (FP-15)",
    "red_first": "hit the red first (FP-15)",
    "pins_first": "hit pins first (FP-15)",
    "wrong_ball": "struck the opponent's ball (FP-15)",
    "ball_off": "ball off the table (FP-15)",
    "moving": "shot while balls moved (FP-15)",
    "not_tip": "struck not with the tip (FP-15)",
    "double_hit": "double hit (FP-15)",
    "push": "push shot (FP-15)",
    "touch": "touched a ball or pin (FP-15)",
    "contact": "played onto a touching ball (FP-15)",
    "foot": "no foot on the floor (FP-15)",
    "placing": "placed the ball wrongly (FP-15)",
    "jump": "jumped the pins (FP-15)",
}
_SHORT = {k: v[:v.rindex(" (")] for k, v in FOUL_WORDS.items()}
_FOULS_NOTE = re.compile(r"^(\d+) fouls$")


def pins_words(pins):
    """"pin C", "pins 2 and C", "all five pins", "no pin"."""
    pins = [p for p in PINS if p in (pins or "")]
    if not pins:
        return "no pin"
    if len(pins) == 5:
        return "all five pins"
    return ("pin " if len(pins) == 1 else "pins ") + and_list(pins)


def _mask(pins):
    m = 0
    for i, p in enumerate(PINS):
        if p in (pins or ""):
            m |= 1 << i
    return m


def _fmask(fouls):
    m = 0
    for f in fouls or ():
        if f in FOULS:
            m |= 1 << FOULS.index(f)
    return m


def ruling_list(down):
    """The whole foul list while the pins `down` are counted: the fouls, the rulings, then
    "not down <pin>" for each of those pins (referee/pintable.py)."""
    return list(RULING_LIST) + [NOT_DOWN + p for p in down]


def rulings(action, struck):
    """The rulings a shot's record says the referee marked: void (FP-17), in contact (FP-24),
    each pin struck (FP-22; in a void shot its pins are struck by the void itself)."""
    if action.get("void"):
        return ["void"]
    out = ["in_contact"] if action.get("in_contact") else []
    return out + [NOT_DOWN + p for p in struck]


def shot_points(rec, config):
    """(points, penalty, to_opponent) of a shot by FP-9 .. FP-15, FP-17 and FP-24."""
    if rec.get("void"):
        return 0, 0, False  # FP-17: nothing counts
    points = pin_points(_mask(rec.get("pins"))) + (rec.get("carom") or 0)
    fouls = _fmask(rec.get("fouls"))
    if not fouls:
        return (0 if rec.get("in_contact") else points), 0, False  # FP-24: none for him
    return points, foul_penalty(fouls, (config or {}).get("pin_foul_penalty", 0)), True


class Game(PinTable):
    id = "five-pins"
    name = "Five pins"
    sheet_name = "five pins"
    fragment = "five-pins"
    waiting = "the break (FP-7)"
    fouls = FOUL_WORDS
    figures = (("shots", "shots"), ("points_per_shot", "points per shot"),
               ("points_per_set", "points per set"), ("caroms", "caroms"),
               ("foul_pct", "foul shots %"))
    tables = {"pins": "pins_csv"}
    random_config = {"target": 60, "sets": 3, "pin_foul_penalty": 0}
    random_opening = {"a": "break", "player": 0}
    bench = ({"target": 400, "sets": 3}, 0.5)
    long_bench = ({"target": 10000, "sets": 3}, 0.5)
    board_bench = ({"target": 1000, "sets": 3}, 0.5)
    sample = dict(seed=5, accuracy=0.5, players=["Dasha", "Ivan"])

    def race(self, config):
        config = config or {}
        sets = config.get("sets", 3)
        return "to %d, %s" % (config.get("target", 60),
                              "one set" if sets == 1 else "best of %d sets" % sets)

    # -- words -----------------------------------------------------------------------------
    void_words = "%s: shot void (FP-17: a third party or force majeure), nothing counts"
    pins_words = staticmethod(pins_words)

    def shot_words(self, rec, before, after, names, config):
        p = rec["player"]
        other = 1 - p
        struck = ""
        if rec.get("struck"):
            # FP-22: pins the switches counted that the referee ruled were not down
            struck = "; %s struck by the referee, not down (FP-22)" % pins_words(rec["struck"])
        parts = [pins_words(rec.get("pins"))] if rec.get("pins") else []
        if rec.get("carom"):
            parts.append("carom %d" % rec["carom"])
        points, penalty, foul = shot_points(rec, config)
        fouls = self.foul_words(rec.get("fouls") or [])
        if foul:
            text = "%s%s — foul: %s, %d to %s" % (
                names[p], ": " + ", ".join(parts) if parts else "",
                and_list([_SHORT.get(f, f) for f in rec.get("fouls") or []]), points + penalty,
                names[other])
        elif points:
            text = "%s: %s — %d points" % (names[p], ", ".join(parts), points)
        elif rec.get("in_contact"):
            text = "%s%s — balls were in contact, played from the break position: nothing " \
                "for the shooter (FP-24)" % (names[p], ": " + ", ".join(parts) if parts else "")
        else:
            text = "%s: no score" % names[p]
        if foul and rec.get("in_contact"):
            text += " (played from the break position, balls in contact: FP-24)"
        text += struck
        to = other if foul else p
        if before is not None and after["sets"] != before["sets"]:
            target = (config or {}).get("target", 60)
            if common.won(before, after) is not None:
                text += "; %s wins the match, %d sets to %d" % (
                    names[to], after["sets"][to], after["sets"][1 - to])
            else:
                text += "; %s wins set %d, %d to %d" % (
                    names[to], before["set"], target, before["scores"][1 - to])
        elif after.get("ball_in_hand"):
            text += "; %s has ball in hand (FP-26)" % names[other]
        return text, fouls

    def parse_last(self, text, state):
        # The board's short text: "P1 12C c4 red_first,miss" ("-" for no pin).
        m = re.match(r"^P([12]) ([1234C]+|-)( c([34]))?( ([a-z_,]+))?$", text or "")
        if m:
            return {"a": "shot", "player": int(m.group(1)) - 1,
                    "pins": "" if m.group(2) == "-" else m.group(2),
                    "carom": int(m.group(4) or 0),
                    "fouls": m.group(6).split(",") if m.group(6) else []}
        m = re.match(r"^P([12]) void$", text or "")
        if m:
            return {"a": "shot", "player": int(m.group(1)) - 1, "pins": "", "carom": 0,
                    "fouls": [], "void": 1}
        if text == "break" and state and state.get("breaker") is not None:
            return {"a": "break", "player": state["breaker"]}
        return HostGame.parse_last(self, text, state) if text == "undo" else None

    def note_words(self, note, state, names):
        # The shot being scored: "pins 12C c4 miss", "pins 1 2 fouls", "c3"; "break: P1" is the
        # board's prompt before the break.
        if not note or note.startswith("break:"):
            return ""
        toks = note.split()
        words = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t == "pins" and i + 1 < len(toks):
                words.append(pins_words(toks[i + 1]))
                i += 2
                continue
            if re.match(r"^c[34]$", t):
                words.append("carom %s" % t[1])
            elif t in _SHORT:
                words.append("foul: " + _SHORT[t])
            elif _FOULS_NOTE.match(" ".join(toks[i:i + 2])):
                words.append("%s fouls" % t)
                i += 1
            i += 1
        return "shot so far: " + ", ".join(words) if words else ""

    # -- the pages -------------------------------------------------------------------------
    def rows(self, st, names, config):
        rows = []
        for p in (0, 1):
            rows.append({"name": names[p], "score": str(st["scores"][p]),
                         "detail": "sets %d" % st["sets"][p], "sets": st["sets"][p]})
        return rows, "set %d" % st["set"], "points"

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  score  sets" % (w, "")]
        for p in (0, 1):
            mark = ">" if st["next"] == p else " "
            extra = ""
            if st["breaker"] == p and st["next"] is None and st["winner"] is None:
                extra = "   breaks"
            rows.append("%s %-*s  %5d  %4d%s" % (mark, w, shown[p], st["scores"][p],
                                                  st["sets"][p], extra))
        return "set %d" % st["set"], rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return "set %d: %s %d (%d) - %s %d (%d)" % (
            st["set"], shown[0], st["scores"][0], st["sets"][0], shown[1], st["scores"][1],
            st["sets"][1])

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        nw = max([len(n) for n in names] + [10])  # the "next" column
        yield "five pins  %s v %s  target %s  best of %s" % (
            names[0], names[1], config.get("target", 60), config.get("sets", 3))
        yield "%4s %5s %7s  %-16s %3s %9s %5s  %-*s %s" % (
            "line", "seq", "time", "points", "set", "score", "sets", nw, "next", "what happened")
        for n, rec, before, after, words in steps:
            d = self._points(before, after, config)
            pts = ["%+d %s" % (d[p], names[p]) for p in (0, 1) if d[p]]
            if after["ball_in_hand"]:
                pts.append("in hand")
            nxt = "" if after["next"] is None else names[after["next"]]
            yield "%4d %5s %7s  %-16s %3d %9s %5s  %-*s %s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), " ".join(pts), after["set"],
                "%d-%d" % tuple(after["scores"]), "%d-%d" % tuple(after["sets"]), nw, nxt, words)

    @staticmethod
    def _points(before, after, config):
        """What each player gained: a set won restarts the scores, so the winner's gain is
        what took him to the target."""
        target = (config or {}).get("target", 60)
        out = []
        for i in (0, 1):
            if after["set"] != before["set"] or after["sets"] != before["sets"]:
                out.append(target - before["scores"][i] if after["sets"][i] > before["sets"][i]
                           else 0)
            else:
                out.append(after["scores"][i] - before["scores"][i])
        return out

    def sheet_result(self, state, names, config):
        if state["winner"] is None:
            return "no winner yet: set %d, %d-%d, sets %d-%d" % (
                state["set"], state["scores"][0], state["scores"][1], state["sets"][0],
                state["sets"][1])
        w = state["winner"]
        return "winner: %s, %d sets to %d" % (names[w], state["sets"][w], state["sets"][1 - w])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "player", "name", "pins", "carom", "fouls",
                   "points_1", "points_2", "score_1", "score_2", "set", "sets_1", "sets_2",
                   "ball_in_hand", "next"]

    def csv_rows(self, head, steps, names, config):
        for _n, rec, before, after in steps:
            a = rec.get("a")
            p = rec.get("player")
            points = self._points(before, after, config)
            yield [rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), a,
                   "" if p is None else p + 1, "" if p is None else names[p],
                   rec.get("pins", "") if a == "shot" else "",
                   rec.get("carom", 0) if a == "shot" else "",
                   " ".join(rec.get("fouls") or ()) if a == "shot" else "",
                   points[0], points[1], after["scores"][0], after["scores"][1], after["set"],
                   after["sets"][0], after["sets"][1], int(bool(after["ball_in_hand"])),
                   "" if after["next"] is None else names[after["next"]]]

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["scores"]) if st else []

    def short_score(self, st):
        return "set %d %d-%d" % (st["set"], st["scores"][0], st["scores"][1])

    def side_counts(self, kept, final, side, config):
        c = {"shots": 0, "made": 0, "gained": 0, "sets": 0, "caroms": 0, "fouls": 0}
        for _n, rec, before, after in kept:
            c["gained"] += self._points(before, after, config)[side]
            if rec.get("a") != "shot" or rec.get("player") != side:
                continue
            c["shots"] += 1
            if rec.get("carom"):
                c["caroms"] += 1
            if rec.get("fouls"):
                c["fouls"] += 1
            else:
                c["made"] += self._points(before, after, config)[side]
        c["sets"] = final["sets"][0] + final["sets"][1] + (final["winner"] is None)
        return c

    def figure(self, key, c):
        if key in ("shots", "caroms"):
            return c.get(key, 0)
        if key == "points_per_set":
            return round(c["gained"] / c["sets"], 1) if c.get("sets") else None
        if not c.get("shots"):
            return None
        if key == "points_per_shot":
            return round(c["made"] / c["shots"], 2)
        return round(100.0 * c["fouls"] / c["shots"], 1)

    def game_extra(self, kept, final, names, config):
        from chalk import stats

        pins = [Counter(), Counter()]
        caroms = [Counter(), Counter()]
        fouls = [Counter(), Counter()]
        shots = [0, 0]
        for _n, rec, _before, _after in kept:
            if rec.get("a") != "shot":
                continue
            p = rec["player"]
            shots[p] += 1
            pins[p].update(rec.get("pins") or "")
            if rec.get("carom"):
                caroms[p][rec["carom"]] += 1
            fouls[p].update(rec.get("fouls") or [])
        pin_counts = [[c[x] for x in PINS] for c in pins]
        chart = stats.bar_chart(["pin %s" % p for p in PINS], pin_counts, names, "times down",
                                "pins down per player")
        lines = ["pins down       " + " ".join("%4s" % p for p in PINS) + "  shots"]
        for i, n in enumerate(names[:2]):
            lines.append("  %-13s " % n[:13] + " ".join("%4d" % x for x in pin_counts[i])
                         + "  %5d" % shots[i])
        for i, n in enumerate(names[:2]):
            car = ", ".join("carom %s: %d" % (k, v) for k, v in sorted(caroms[i].items()))
            fou = ", ".join("%s: %d" % (FOUL_WORDS.get(k, k), v)
                            for k, v in sorted(fouls[i].items()))
            lines.append("  %s: %s; fouls: %s" % (n, car or "no carom", fou or "none"))
        rows = []
        for i, n in enumerate(names[:2]):
            rows.append([n, shots[i],
                         ", ".join("carom %s: %d" % kv for kv in sorted(caroms[i].items()))
                         or "none",
                         "; ".join("%s: %d" % kv for kv in sorted(
                             (FOUL_WORDS.get(k, k), v) for k, v in fouls[i].items())) or "none"])
        return {"shots": shots, "pins": pin_counts, "caroms": [dict(c) for c in caroms],
                "fouls": [dict(c) for c in fouls], "pin_chart": chart,
                "charts": [("Pins down", chart)], "lines": lines,
                "page_tables": [("Caroms and fouls", ["player", "shots", "caroms", "fouls"],
                                 rows)]}

    def pins_csv(self, s):
        """Per player: shots, each pin's falls, caroms by value and fouls by code (every code
        of FP-14 and FP-15, in the rules' order)."""
        rows = [["player", "name", "shots"] + ["pin_%s" % p for p in PINS] +
                ["carom_3", "carom_4"] + ["foul_%s" % f for f in FOULS]]
        for i in range(2):
            rows.append([i + 1, s["names"][i], s["shots"][i]] + list(s["pins"][i]) +
                        [s["caroms"][i].get(3, 0), s["caroms"][i].get(4, 0)] +
                        [s["fouls"][i].get(f, 0) for f in FOULS])
        return rows

    # -- random games and traces -----------------------------------------------------------
    FOULS_COMMON = ["miss", "red_first", "ball_off", "touch", "pins_first", "moving"]

    def random_action(self, rng, state, accuracy):
        player = state["next"]
        roll = rng.random()
        if roll < 0.12:
            return {"a": "shot", "player": player, "pins": "", "carom": 0,
                    "fouls": [rng.choice(self.FOULS_COMMON)]}
        down = "".join(p for p in PINS if rng.random() < accuracy * (0.6 if p == "C" else 0.35))
        carom = rng.choice((0, 0, 0, 3, 4)) if rng.random() < accuracy else 0
        fouls = ["pin"] if down and rng.random() < 0.1 else []
        return {"a": "shot", "player": player, "pins": down, "carom": carom, "fouls": fouls}

    def trace_shot(self, tr, action):
        # The switches count the pins down and those the referee strikes (FP-22).
        struck = action.get("struck", "")
        down = "".join(p for p in PINS if p in action.get("pins", "") or p in struck)
        common.strike(tr, down, PINS)
        carom = action.get("carom", 0)
        if carom:
            tr.press("carom%d" % carom)
        common.foul_list(tr, action.get("fouls", []), LIST_ORDER)
        common.foul_list(tr, rulings(action, struck), ruling_list(down))

