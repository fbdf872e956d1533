"""Novuss on the host (rules/novuss.md, NV-1 .. NV-7): everything host-side."""

import re

from chalk.games import common
from chalk.games.common import HostGame, and_list, clock, plural
from scoreboard.games.novuss.referee import FOULS as LIST_ORDER  # the foul list's order
from scoreboard.games.novuss.referee import LIST as RULING_LIST  # ... with the ruling

FOUL_WORDS = {
    "no_own_touch": "the striker touched no own puck (NV-7)",
    "striker_pocketed": "the striker was pocketed (NV-7)",
    "striker_off": "the striker left the table (NV-7)",
    "direct_in_zone": "a direct shot in the zone: own pucks put back (NV-5)",
    "opp_off": "an opponent's puck sent off the table (NV-7)",
    "zone_ricochet": "a ricochet missed the opposite cushion (NV-7)",
    "opp_first": "the striker touched an opponent's puck first (NV-7)",
    "own_off": "an own puck over the cushion (NV-6)",
}
_SHORT = {k: v[:v.rindex(" (")] for k, v in FOUL_WORDS.items()}
_PENALTY = ("no_own_touch", "striker_pocketed", "striker_off", "direct_in_zone", "opp_off",
            "zone_ricochet", "opp_first")  # a penalty puck each (NV-7)


class Game(HostGame):
    id = "novuss"
    name = "Novuss"
    sheet_name = "novuss"
    defaults = ("A", "B")
    waiting = "which side shoots first"
    fouls = FOUL_WORDS
    figures = (("shots", "shots"), ("pucks_per_shot", "own pucks in per shot"),
               ("penalties", "penalty pucks"))
    random_config = {"per_side": 1, "pucks": 8}
    random_opening = {"a": "start", "side": 0}
    bench = ({}, 0.01)
    # The random player pockets an opponent's puck in 8 % of shots whatever its accuracy, so
    # no random game lasts 10,000 actions: make bench leaves its long rows out, and says so.
    long_bench = ({}, 0.0005)
    sample = dict(seed=57, accuracy=0.5, players=["Liga", "Janis"])

    def race(self, config):
        return "%s a side" % plural((config or {}).get("pucks", 8), "puck")

    # -- words -----------------------------------------------------------------------------
    def describe(self, rec, before, after, names, config):
        a = rec.get("a")
        side = rec.get("side")
        if a == "start":
            return "%s %s" % (names[side], common.verb(names[side], "starts", "start")), []
        if a != "shot":
            return HostGame.describe(self, rec, before, after, names, config)
        other = 1 - side
        if rec.get("void"):
            # A void shot (as FP-17): a third party or force majeure spoilt it
            return ("%s: shot void (a third party or force majeure), nothing counts; %s to "
                    "play (NV-6)" % (names[side], names[other])), []
        own, opp = rec.get("own", 0), rec.get("opp", 0)
        fouls = rec.get("fouls") or []
        parts = []
        if own:
            parts.append("%d in" % own)
        if opp:
            parts.append("%d of %s's in" % (opp, names[other]))
        text = "%s: %s" % (names[side], " and ".join(parts) if parts else "nothing in")
        if fouls:
            n = sum(1 for f in fouls if f in _PENALTY)
            text += " — foul: %s" % and_list([_SHORT.get(f, f) for f in fouls])
            if n:
                text += ", %s" % plural(n, "penalty puck")
        if after.get("winner") is not None and common.won(before, after) is not None:
            text += " — %s wins" % names[after["winner"]]
            return text, self.foul_words(fouls)
        text += " (%s %d left, %s %d)" % (names[side], after["left"][side], names[other],
                                          after["left"][other])
        owes = [(names[s], after["debt"][s]) for s in (0, 1) if after["debt"][s]]
        if owes:
            text += "; %s" % ", ".join("%s owes %s" % (w, plural(n, "penalty puck"))
                                       for w, n in owes)
        if after.get("next") == side:
            text += "; %s %s again" % (names[side], common.verb(names[side], "shoots", "shoot"))
        return text, self.foul_words(fouls)

    def parse_last(self, text, state):
        # The board's short text: "A 2+1 striker_pocketed,opp_first", "A void".
        if text in ("A void", "B void"):
            return {"a": "shot", "side": "AB".index(text[0]), "own": 0, "opp": 0, "fouls": [],
                    "void": 1}
        m = re.match(r"^([AB]) (\d)\+(\d)( ([a-z_,]+))?$", text or "")
        if m:
            return {"a": "shot", "side": "AB".index(m.group(1)), "own": int(m.group(2)),
                    "opp": int(m.group(3)),
                    "fouls": m.group(5).split(",") if m.group(5) else []}
        if text == "start" and state and state.get("next") is not None:
            return {"a": "start", "side": state["next"]}
        return HostGame.parse_last(self, text, state) if text == "undo" else None

    def note_words(self, note, state, names):
        # The shot being scored: "own 2 opp 1 striker_pocketed" (or "2 fouls"); "start: A"
        # is the board's prompt.
        if not note or note.startswith("start:"):
            return ""
        words = []
        m = re.search(r"\bown (\d+)", note)
        if m:
            words.append("%s in" % m.group(1))
        m = re.search(r"\bopp (\d+)", note)
        if m:
            words.append("%s of the opponent's in" % m.group(1))
        for t in note.split():
            if t in _SHORT:
                words.append("foul: " + _SHORT[t])
        m = re.search(r"\b(\d+) fouls\b", note)
        if m:
            words.append("%s fouls" % m.group(1))
        return "shot so far: " + ", ".join(words) if words else ""

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  left  owes" % (w, "")]
        for side in (0, 1):
            mark = ">" if st["next"] == side else " "
            rows.append("%s %-*s  %4d  %4d" % (mark, w, shown[side], st["left"][side],
                                                st["debt"][side]))
        return "", rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return "left: %s %d (owes %d) - %s %d (owes %d)" % (
            shown[0], st["left"][0], st["debt"][0], shown[1], st["left"][1], st["debt"][1])

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        nw = max([len(n) for n in names] + [10])  # the "next" column
        yield "novuss  %s v %s  %d pucks a side%s" % (
            names[0], names[1], config.get("pucks", 8),
            "  pairs" if config.get("per_side", 1) == 2 else "")
        yield "%4s %5s %7s  %7s %7s  %-*s %s" % (
            "line", "seq", "time", "left", "debt", nw, "next", "what happened")
        for n, rec, _before, after, words in steps:
            nxt = "" if after["next"] is None else names[after["next"]]
            yield "%4d %5s %7s  %7s %7s  %-*s %s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), "%d-%d" % tuple(after["left"]),
                "%d-%d" % tuple(after["debt"]), nw, nxt, words)

    def sheet_result(self, state, names, config):
        if state["winner"] is None:
            return "no winner yet: %s %d left (owes %d), %s %d left (owes %d)" % (
                names[0], state["left"][0], state["debt"][0], names[1], state["left"][1],
                state["debt"][1])
        w = state["winner"]
        return "winner: %s, all pucks in; %s had %d left" % (names[w], names[1 - w],
                                                             state["left"][1 - w])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = ["seq", "time", "t_ms", "action", "side", "name", "own", "opp", "fouls",
                   "left_a", "left_b", "debt_a", "debt_b", "next"]

    def csv_rows(self, head, steps, names, config):
        for _n, rec, _before, after in steps:
            a = rec.get("a")
            s = rec.get("side")
            shot = a == "shot"
            yield [rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), a,
                   "" if s is None else "AB"[s], "" if s is None else names[s],
                   rec.get("own", 0) if shot else "", rec.get("opp", 0) if shot else "",
                   " ".join(rec.get("fouls") or ()) if shot else "",
                   after["left"][0], after["left"][1], after["debt"][0], after["debt"][1],
                   "" if after["next"] is None else names[after["next"]]]

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return list(st["left"]) if st else []

    def short_score(self, st):
        return "%d-%d left" % tuple(st["left"])

    def side_counts(self, kept, final, side, config):
        c = {"shots": 0, "in": 0, "penalties": 0}
        for _n, rec, _before, _after in kept:
            if rec.get("a") != "shot" or rec.get("side") != side:
                continue
            c["shots"] += 1
            fouls = rec.get("fouls") or []
            if "direct_in_zone" not in fouls:
                c["in"] += rec.get("own", 0)
            c["penalties"] += sum(1 for f in fouls if f in _PENALTY)
        return c

    def figure(self, key, c):
        if key == "pucks_per_shot":
            return round(c["in"] / c["shots"], 2) if c.get("shots") else None
        return c.get(key, 0)

    # -- random games and traces -----------------------------------------------------------
    RANDOM_FOULS = ["no_own_touch", "striker_pocketed", "opp_first", "own_off", "direct_in_zone"]

    def random_action(self, rng, state, accuracy):
        side = state["next"]
        own = 0
        for _ in range(min(2, state["left"][side])):
            own += rng.random() < accuracy * 0.6
        opp = 1 if state["left"][1 - side] and rng.random() < 0.08 else 0
        fouls = [rng.choice(self.RANDOM_FOULS)] if rng.random() < 0.1 else []
        return {"a": "shot", "side": side, "own": own, "opp": opp, "fouls": fouls}

    def trace(self, tr, head, actions):
        from scoreboard.rules import new_game

        game = new_game(head["game"], head.get("config"))
        for action in actions:
            game.apply(action)
            a = action["a"]
            if a == "start":
                if action["side"] != 0:
                    tr.press("start")
                tr.press("confirm")
            elif a == "shot":
                tr.wait(tr.rng.randint(1000, 3000))  # lining up
                # The pucks drop through the pockets' beams past the colour sensors; side 0
                # plays the red pucks, side 1 the black (referee/novuss.py).
                side = action["side"]
                for colour in ([side] * action.get("own", 0)
                               + [1 - side] * action.get("opp", 0)):
                    tr.wait(tr.rng.randint(200, 600))
                    tr.pocket(tr.rng.randint(1, 4), tr.t, (2000, 600)[colour])
                tr.wait(tr.rng.randint(1000, 2000))  # everything at rest
                common.foul_list(tr, action.get("fouls", []), LIST_ORDER)
                if action.get("void"):  # the ruling after the fouls
                    common.foul_list(tr, ["void"], RULING_LIST)
                tr.press("confirm")
                tr.wait(500)
            elif a == "undo":
                tr.long_press("confirm")
            else:
                raise ValueError("no trace for novuss action %r" % a)
