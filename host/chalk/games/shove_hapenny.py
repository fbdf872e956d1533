"""Shove ha'penny on the host (rules/shove-hapenny.md, SH-1 .. SH-18): everything host-side."""

import re

from chalk.games import common
from chalk.games.common import HostGame, and_list, clock

NEEDED = 3  # scores per bed (SH-7, SH-14)
TARGET = 27
VOIDS = {"touched": "a played coin was touched before all five were played",
         "removed": "coins were removed before the score was recorded"}
_PEG = re.compile(r"^PEG ([AB])([1-9]) ([+-]?\d+)$")
_TOO_MANY = re.compile(r"^(\d+) pegs: a turn has 5 coins \(SH-3\)$")
_NEW = re.compile(r"^([AB])([1-9])$")
PEG_HINT = "Pressing done scores nothing until the pegs match the score (SH-2): put them right " \
           "first"


def _beds(row):
    return "".join(str(n) for n in row)


class Game(HostGame):
    id = "shove-hapenny"
    name = "Shove ha'penny"
    sheet_name = "shove ha'penny"
    defaults = ("A", "B")
    fragment = "shove-hapenny"
    waiting = "who shoots first (SH-5)"
    fouls = {"void-touched": "void: " + VOIDS["touched"] + " (SH-17)",
             "void-removed": "void: " + VOIDS["removed"] + " (SH-17)",
             "out_of_turn": "played out of turn (SH-18)"}
    figures = (("turns", "turns"), ("marks_per_turn", "marks per turn"),
               ("coins_per_turn", "coins in a bed per turn"), ("void", "void turns"),
               ("out_of_turn", "out of turn"))
    tables = {"beds": "beds_csv"}
    random_config = {"sides": 2, "per_side": 1, "overflow": "auto"}
    random_opening = {"a": "start", "side": 0}
    bench = ({}, 0.025)
    long_bench = ({}, 0.0008)
    board_bench = ({}, 0.01)
    sample = dict(seed=11, accuracy=0.55, players=["Ann", "Bob"])

    def race(self, config):
        return "3 in each of the 9 beds"

    # -- words -----------------------------------------------------------------------------
    def describe(self, rec, before, after, names, config):
        a = rec.get("a")
        side = rec.get("side")
        who = names[side]
        other = 1 - side
        if a == "start":
            return "%s %s" % (who, common.verb(who, "starts", "start")), []
        if a == "claim":
            return "%s %s the overflow in bed %d (SH-15)" % (
                who, common.verb(who, "claims", "claim"), rec["bed"]), []
        if a != "turn":
            return HostGame.describe(self, rec, before, after, names, config)
        coins = rec.get("beds") or [0] * 9
        void = rec.get("void")
        if void:
            why = VOIDS.get(void)
            text = "%s: void turn%s (SH-17): nothing scores" % (who, ", " + why if why else "")
            return text, [self.fouls.get("void-" + str(void), "void turn (SH-17)")]
        if before is not None and before["next"] is not None and before["next"] != side:
            return ("%s played out of turn (SH-18): nothing scores, and %s misses the next turn"
                    % (who, who)), [self.fouls["out_of_turn"]]
        landed = ["%d in bed %d" % (n, b + 1) for b, n in enumerate(coins) if n]
        text = "%s: %s" % (who, ", ".join(landed) if landed else "no coin in a bed")
        notes = []
        if before is not None:
            full = []  # beds this turn filled, with nothing over
            for b in range(9):
                gain = after["beds"][side][b] - before["beds"][side][b]
                filled = gain and after["beds"][side][b] >= NEEDED
                extra = coins[b] - gain
                if extra <= 0:
                    if filled:
                        full.append(b + 1)
                    continue
                given = after["beds"][other][b] - before["beds"][other][b]
                lost = extra - given
                mode = (config or {}).get("overflow", "auto")
                bits = ["bed %d full" % (b + 1) if filled else "bed %d" % (b + 1)]
                if given:
                    bits.append("%d over to %s" % (given, names[other]))
                if lost and mode == "claim":
                    bits.append("%d over, for %s to claim (SH-15)" % (lost, names[other]))
                elif lost and mode == "off":
                    bits.append("%d over, lost: overflow is off" % lost)
                elif lost and after["beds"][other][b] >= NEEDED:
                    bits.append("%d over, lost: %s's is full too" % (lost, names[other]))
                elif lost:
                    bits.append("%d over, lost: an overflow may not give %s the winning "
                                "score (SH-15)" % (lost, names[other]))
                notes.append(bits[0] + (", " if filled else ": ") + ", ".join(bits[1:]))
            if full:
                notes.insert(0, "bed%s %s full" % ("s" if len(full) > 1 else "",
                                                   and_list(full)))
        if notes:
            text += " (%s)" % "; ".join(notes).replace(" (SH-15)", ", SH-15")
        if before is not None and before["skip"][other] and not after["skip"][other]:
            text += "; %s misses this turn (SH-18): %s again" % (names[other], who)
        if common.won(before, after) == side:
            text += " — %s wins" % who
        return text, []

    def parse_last(self, text, state):
        m = re.match(r"^([AB]) ([0-5]{9})( void)?$", text or "")
        if m:
            rec = {"a": "turn", "side": "AB".index(m.group(1)),
                   "beds": [int(c) for c in m.group(2)]}
            if m.group(3):
                rec["void"] = "void"
            return rec
        if text == "start" and state and state.get("next") is not None:
            return {"a": "start", "side": state["next"]}
        return HostGame.parse_last(self, text, state) if text == "undo" else None

    def note_words(self, note, state, names):
        # The board's line while a turn is scored: "void touched", "out of turn" (or "OOT"),
        # "+A1 A2 B3" (the pegs put in since the score). "done: A starts" is its prompt.
        if not note or note.startswith("done:"):
            return ""
        words = []
        m = re.search(r"void (touched|removed)", note)
        if m:
            words.append("marked void (%s)" % VOIDS[m.group(1)])
        if "out of turn" in note or "OOT" in note.split():
            words.append("marked out of turn")
        squares = _new_pegs(note)
        if squares:
            per = []
            for s in (0, 1):
                beds = [b for side, b in squares if side == s]
                if beds:
                    per.append("%s's bed%s %s" % (names[s], "s" if len(beds) > 1 else "",
                                                  and_list(beds)))
            words.append("new pegs in " + " and ".join(per))
        return "turn being scored: " + "; ".join(words) if words else ""

    def warning_words(self, text, state, names):
        m = _PEG.match(text)
        if m:
            side = "AB".index(m.group(1))
            bed = int(m.group(2))
            d = int(m.group(3))
            who = _square_owner(names, side)
            if d < 0:
                score = state["beds"][side][bed - 1] if state else None
                what = "put %s in bed %d" % ("a peg" if d == -1 else "%d pegs" % -d, bed)
                if score is not None:
                    what += " (the score there is %d)" % score
            else:
                what = "take %s out of bed %d" % ("the peg" if d == 1 else "%d pegs" % d, bed)
            return "notice", "%s: %s" % (who, what)
        m = _TOO_MANY.match(text)
        if m:
            return "notice", "%s new pegs, but a turn has 5 coins (SH-3): take out the pegs " \
                             "that are not this turn's" % m.group(1)
        return None

    def more_notices(self, notices, state, names, note):
        squares = _new_pegs(note or "")
        if len(squares) > 5 and not any("a turn has 5 coins" in n for n in notices):
            notices.append("New pegs in %d squares, but a turn has 5 coins (SH-3): take out "
                           "the pegs that are not this turn's (after a new game: every peg)"
                           % len(squares))
        pegs = [i for i, n in enumerate(notices) if _is_peg_notice(n)]
        if pegs:
            notices.insert(pegs[-1] + 1, PEG_HINT)
        return notices

    # -- the pages -------------------------------------------------------------------------
    def rows(self, st, names, config):
        rows = []
        for side in (0, 1):
            beds = st["beds"][side]
            rows.append({"name": names[side], "score": str(sum(beds)),
                         "detail": "misses the next turn" if st["skip"][side] else "",
                         "beds": list(beds)})
        return rows, "turn %d" % st["turns"], "marks"

    # -- chalk watch -----------------------------------------------------------------------
    def watch_rows(self, st, names):
        shown, w = common.pad_names(names)
        rows = ["  %-*s  %s  total" % (w, "", " ".join("123456789"))]
        for side in (0, 1):
            mark = ">" if st["next"] == side else " "
            beds = " ".join(str(n) if n else "." for n in st["beds"][side])
            extra = "   misses the next turn" if st["skip"][side] else ""
            rows.append("%s %-*s  %s  %5d%s" % (mark, w, shown[side], beds,
                                                 sum(st["beds"][side]), extra))
        return "turn %d" % st["turns"], rows

    def watch_score(self, st, names):
        shown, _w = common.pad_names(names)
        return "turn %d: %s %s - %s %s" % (st["turns"], shown[0], _beds(st["beds"][0]),
                                           shown[1], _beds(st["beds"][1]))

    # -- the scoresheet --------------------------------------------------------------------
    def sheet_lines(self, head, steps, names, config):
        nw = max(len(n) for n in names) * 2 + 20  # "next": a name, who misses a turn
        yield "shove ha'penny  %s v %s  overflow %s%s" % (
            names[0], names[1], config.get("overflow", "auto"),
            "  pairs" if config.get("per_side", 1) == 2 else "")
        yield "%4s %5s %7s  %-14s %-9s %-9s %5s  %-*s %s" % (
            "line", "seq", "time", "scored", "A beds", "B beds", "A-B", nw, "next", "what happened")
        for n, rec, before, after, words in steps:
            gained = []
            for side in (0, 1):
                d = sum(after["beds"][side]) - sum(before["beds"][side])
                if d:
                    gained.append("%+d %s" % (d, names[side]))
            totals = "%d-%d" % (sum(after["beds"][0]), sum(after["beds"][1]))
            nxt = "" if after["next"] is None else names[after["next"]]
            if after["skip"][0] or after["skip"][1]:
                nxt += " (%s misses a turn)" % names[after["skip"].index(1)]
            yield "%4d %5s %7s  %-14s %-9s %-9s %5s  %-*s %s" % (
                n, rec.get("seq", ""), clock(rec.get("t", 0)), ", ".join(gained),
                _beds(after["beds"][0]), _beds(after["beds"][1]), totals, nw, nxt, words)

    def sheet_result(self, state, names, config):
        if state["winner"] is None:
            return "no winner yet: %s %d of 27, %s %d of 27, %d turns" % (
                names[0], sum(state["beds"][0]), names[1], sum(state["beds"][1]),
                state["turns"])
        w = state["winner"]
        return "winner: %s (27 to %d) after %d turns" % (names[w], sum(state["beds"][1 - w]),
                                                          state["turns"])

    # -- CSV -------------------------------------------------------------------------------
    csv_columns = (["seq", "time", "t_ms", "action", "side", "name"]
                   + ["coins_%d" % b for b in range(1, 10)]
                   + ["void", "out_of_turn", "bed", "points_a", "points_b", "total_a", "total_b",
                      "next", "misses_turn"])

    def csv_rows(self, head, steps, names, config):
        for _n, rec, before, after in steps:
            a = rec.get("a")
            s = rec.get("side")
            beds = rec.get("beds") if a == "turn" else None
            out_of_turn = a == "turn" and not rec.get("void") and before["next"] != s
            totals = [sum(after["beds"][i]) for i in (0, 1)]
            points = [totals[i] - sum(before["beds"][i]) for i in (0, 1)]
            skip = [names[i] for i in (0, 1) if after["skip"][i]]
            yield ([rec["seq"], clock(rec.get("t", 0)), rec.get("t", 0), a,
                    "" if s is None else "AB"[s], "" if s is None else names[s]]
                   + (list(beds) if beds else [""] * 9)
                   + [rec.get("void", ""), int(out_of_turn) if a == "turn" else "",
                      rec.get("bed", "") if a == "claim" else "", points[0], points[1],
                      totals[0], totals[1], "" if after["next"] is None else names[after["next"]],
                      " ".join(skip)])

    # -- statistics ------------------------------------------------------------------------
    def score(self, st):
        return [sum(b) for b in st["beds"]] if st else []

    def short_score(self, st):
        return "%d-%d" % (sum(st["beds"][0]), sum(st["beds"][1]))

    def side_counts(self, kept, final, side, config):
        c = {"turns": 0, "marks": 0, "coins": 0, "void": 0, "out_of_turn": 0}
        for _n, rec, before, after in kept:
            if rec.get("a") != "turn" or rec.get("side") != side:
                continue
            c["turns"] += 1
            if rec.get("void"):
                c["void"] += 1
            elif before["next"] != side:
                c["out_of_turn"] += 1
            else:
                c["coins"] += sum(rec.get("beds") or [])
                c["marks"] += sum(after["beds"][side]) - sum(before["beds"][side])
        return c

    def figure(self, key, c):
        if key in ("turns", "void", "out_of_turn"):
            return c.get(key, 0)
        den = c.get("turns", 0)
        if not den:
            return None
        return round((c["marks"] if key == "marks_per_turn" else c["coins"]) / den, 2)

    def game_extra(self, kept, final, names, config):
        from chalk import stats

        beds = [[0] * 9, [0] * 9]
        for _n, rec, before, _after in kept:
            if rec.get("a") == "turn" and not rec.get("void") and before["next"] == rec["side"]:
                for i, n in enumerate(rec.get("beds") or []):
                    if i < 9:
                        beds[rec["side"]][i] += n
        heatmap = stats.bed_heatmap(beds, names)
        lines = ["coins per bed   " + " ".join("%3d" % (i + 1) for i in range(9))]
        for n, row in zip(names, beds):
            lines.append("  %-13s " % n[:13] + " ".join("%3d" % x for x in row))
        return {"beds": beds, "marks": final.get("beds"), "heatmap": heatmap,
                "charts": [("Coins in each bed", heatmap)], "lines": lines}

    def beds_csv(self, s):
        """The coins each side put in each bed (turns that scored: not void, in turn)."""
        rows = [["side", "name"] + ["bed_%d" % (i + 1) for i in range(9)]]
        for i, beds in enumerate(s["beds"]):
            rows.append(["AB"[i], s["names"][i]] + list(beds))
        return rows

    # -- random games and traces -----------------------------------------------------------
    def random_action(self, rng, state, accuracy):
        side = state["next"]
        if rng.random() < 0.02:
            side = 1 - side  # the wrong side plays (SH-18)
        beds = [0] * 9
        for _ in range(5):
            if rng.random() < accuracy:
                # Skilled players aim where they still need scores, but coins stray.
                need = [b for b in range(9) if state["beds"][side][b] < 3] or list(range(9))
                b = rng.choice(need) if rng.random() < 0.7 else rng.randrange(9)
                beds[min(8, max(0, b + rng.choice((-1, 0, 0, 0, 1))))] += 1
        action = {"a": "turn", "side": side, "beds": beds}
        if rng.random() < 0.03:
            action["void"] = rng.choice(("touched", "removed"))
        return action

    def trace(self, tr, head, actions):
        from scoreboard.rules import new_game

        game = new_game(head["game"], head.get("config"))
        pegs = [[0] * 9, [0] * 9]

        def sync(beds):
            # Put pegs in (or pull them) until each square shows the rules' count.
            changed = False
            for s in (0, 1):
                for b in range(9):
                    while pegs[s][b] < beds[s][b]:
                        pegs[s][b] += 1
                        tr.edge(tr.t, "peg.%d.%d.%d" % (s, b + 1, pegs[s][b]), 1)
                        tr.wait(tr.rng.randint(150, 400))
                        changed = True
                    while pegs[s][b] > beds[s][b]:
                        tr.edge(tr.t, "peg.%d.%d.%d" % (s, b + 1, pegs[s][b]), 0)
                        pegs[s][b] -= 1
                        tr.wait(tr.rng.randint(150, 400))
                        changed = True
            if changed:
                tr.wait(600)  # past the peg debounce before the button

        for action in actions:
            before = game.state()
            after = game.apply(action)
            a = action["a"]
            if a == "start":
                if action["side"] == 1:
                    tr.press("out_of_turn")
                tr.press("done")
            elif a == "turn":
                tr.wait(tr.rng.randint(3000, 9000))  # five coins shoved
                void = action.get("void")
                if void:
                    for _ in range(("touched", "removed").index(void) + 1):
                        tr.press("void")
                if action["side"] != before["next"]:
                    tr.press("out_of_turn")
                sync(after["beds"])
                tr.press("done")
            elif a == "claim":
                sync(after["beds"])
                tr.press("claim")
            elif a == "undo":
                tr.long_press("done")
                sync(after["beds"])
            else:
                raise ValueError("no trace for shove action %r" % a)


def _new_pegs(note):
    """The squares in the board's "+A1 A2 B3" note: [(side, bed)]."""
    i = note.find("+")
    if i < 0:
        return []
    out = []
    for tok in note[i + 1:].split():
        m = _NEW.match(tok)
        if not m:
            break
        out.append(("AB".index(m.group(1)), int(m.group(2))))
    return out


def _square_owner(names, side):
    letter = "AB"[side]
    return letter if names[side] == letter else "%s (%s)" % (letter, names[side])


def _is_peg_notice(n):
    # The notices of warning_words() and more_notices(): a square's owner first, or new pegs.
    return n.startswith(("A: ", "B: ", "A (", "B (")) or "new pegs" in n.lower()
