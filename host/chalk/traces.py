"""Sensor traces (docs/sensor-trace.md): build them from table moves, or from a match log.

A trace is what the board's lines did, `{"t": ms, "line": name, "v": 0|1}` per change. The
builder plays the people at the table: presses with contact bounce, pins that fall (and some that
stand up again, FP-19), pins that only wobble (FP-21), pegs put in and pulled. `from_matchlog`
turns a whole match log into the trace a scorer would produce for it, so a simulated board can
be checked against the rules: replaying the trace must give the log's final state.
"""

import json
import random

from scoreboard import matchlog
from scoreboard.referee.five_pins import FOULS
from scoreboard.referee.novuss import FOULS as NOVUSS_FOULS
from scoreboard.referee.seven_pins import FOULS as SEVEN_PINS_FOULS
from scoreboard.referee.seven_pins import PINS as SEVEN_PINS
from scoreboard.rules import new_game


class Trace:
    def __init__(self, seed=1, bounce=True, bounce_ms=None):
        self.t = 0
        self.records = []
        self.rng = random.Random(seed)
        self.bounce = bounce
        # (lo, hi): every edge of a press, a pin and a peg rattles two or four times, lo..hi ms
        # apart (a worn contact); None: presses get the fixed bounce below, pins and pegs none.
        self.bounce_ms = bounce_ms

    def edge(self, t, line, v):
        """An edge to `v` at t with random contact bounce; returns when it has settled."""
        self.at(t, line, v)
        if self.bounce_ms is None:
            return t
        lo, hi = self.bounce_ms
        for k in range(self.rng.choice((2, 4))):
            t += self.rng.randint(lo, hi)
            self.at(t, line, v if k % 2 else 1 - v)
        return t

    def at(self, t, line, v):
        self.records.append((t, line, v))

    def wait(self, ms):
        self.t += ms

    def set(self, line, v):
        self.at(self.t, line, v)

    def press(self, button, hold=90, after=150):
        """A button press with contact bounce on make and break."""
        line = "btn." + button
        t = self.t
        if self.bounce_ms is not None:
            self.edge(t, line, 1)
            self.edge(t + hold, line, 0)
            self.t = t + hold + after
            return
        if self.bounce:
            self.at(t, line, 1)
            self.at(t + 2, line, 0)
            self.at(t + 3, line, 1)
        else:
            self.at(t, line, 1)
        self.at(t + hold, line, 0)
        if self.bounce:
            self.at(t + hold + 1, line, 1)
            self.at(t + hold + 3, line, 0)
        self.t = t + hold + after

    def key(self, legend, hold=110, after=180):
        """A scorepad key press (line "key.<legend>"), with contact bounce on make and break."""
        line = "key." + legend
        t = self.t
        if self.bounce:
            self.at(t, line, 1)
            self.at(t + 3, line, 0)
            self.at(t + 5, line, 1)
        else:
            self.at(t, line, 1)
        self.at(t + hold, line, 0)
        if self.bounce:
            self.at(t + hold + 2, line, 1)
            self.at(t + hold + 4, line, 0)
        self.t = t + hold + after

    def keys(self, text, gap=(120, 400)):
        """Keys typed one after another, at a person's pace."""
        for ch in text:
            self.key(ch)
            self.wait(self.rng.randint(*gap))

    def long_press(self, button, hold=1200, after=200):
        self.press(button, hold=hold, after=after)

    def pin_fall(self, pin, at, down_for=None):
        """A pin leaves its base at `at`; stands again after `down_for` ms (None: stays down)."""
        self.edge(at, "pin." + pin, 1)
        if down_for is not None:
            self.edge(at + down_for, "pin." + pin, 0)

    def wobble(self, pin, at, ms=12):
        """A pin rocks without losing contact long enough to count (FP-21)."""
        self.edge(at, "pin." + pin, 1)
        self.edge(at + ms, "pin." + pin, 0)

    def pocket(self, n, at, colour=None, ms=30):
        """Something drops through pocket n's beam at `at` for `ms`; a colour sensor beside it
        reads `colour` (an ADC reading) while it passes, the dark throat (80) after."""
        if colour is not None:
            self.at(at, "colour.%d" % n, colour)
            self.at(at + ms, "colour.%d" % n, 80)
        self.at(at, "pocket.%d" % n, 1)
        self.at(at + ms, "pocket.%d" % n, 0)

    def lines(self):
        out = sorted(self.records, key=lambda r: r[0])
        return [json.dumps({"t": t, "line": line, "v": v}) for t, line, v in out]

    def write(self, path):
        from chalk import atomic

        atomic.write_file(path, "\n".join(self.lines()) + "\n")


def _shove(tr, head, actions):
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


def _five_pins(tr, head, actions):
    game = new_game(head["game"], head.get("config"))
    for action in actions:
        game.apply(action)  # the log must be legal: a refused action stops here
        a = action["a"]
        if a == "break":
            if action["player"] != 0:
                tr.press("break")
            tr.press("confirm")
        elif a == "shot":
            tr.wait(tr.rng.randint(2000, 6000))  # lining up the shot
            strike = tr.t
            standing = [p for p in "1234C" if p not in action.get("pins", "")]
            for p in action.get("pins", ""):
                # Most pins stay down; some bounce back onto their spot and still count (FP-19).
                back = tr.rng.random() < 0.3
                tr.pin_fall(p, strike + tr.rng.randint(300, 1200),
                            tr.rng.randint(60, 400) if back else 1500)
            if standing and tr.rng.random() < 0.5:
                tr.wobble(tr.rng.choice(standing), strike + tr.rng.randint(200, 1500))
            tr.t = strike + 4500  # the balls have stopped; the window settled
            carom = action.get("carom", 0)
            if carom:
                tr.press("carom%d" % carom)
            _foul_list(tr, action.get("fouls", []), FOULS)
            tr.press("confirm")
            tr.wait(500)
        elif a == "undo":
            tr.long_press("confirm")
        else:
            raise ValueError("no trace for five-pins action %r" % a)


def _foul_list(tr, fouls, codes):
    """Mark each foul on the foul list (docs/scoring-at-the-table.md): "foul" opens it and moves
    down, "confirm" marks the code under the cursor and closes it."""
    for code in fouls:
        for _ in range(codes.index(code) + 1):
            tr.press("foul")
        tr.press("confirm")


def _seven_pins(tr, head, actions):
    game = new_game(head["game"], head.get("config"))
    for action in actions:
        game.apply(action)  # the log must be legal: a refused action stops here
        a = action["a"]
        if a == "break":
            if action["player"] != 0:
                tr.press("break")
            tr.press("confirm")
        elif a == "shot":
            tr.wait(tr.rng.randint(2000, 6000))  # lining up the shot
            strike = tr.t
            down = action.get("pins", [])
            for p in down:
                # Light pins bounce off the balls; some land back on their spot and still count.
                back = tr.rng.random() < 0.3
                tr.pin_fall(p, strike + tr.rng.randint(300, 1200),
                            tr.rng.randint(60, 400) if back else 1500)
            standing = [p for p in SEVEN_PINS if p not in down]
            if standing and tr.rng.random() < 0.5:
                tr.wobble(tr.rng.choice(standing), strike + tr.rng.randint(200, 1500))
            for i in range(action.get("pocketed", 0)):
                # An object ball drops through a pocket's beam (SP-10): the board counts it.
                tr.pocket(tr.rng.choice((1, 2)), strike + 1500 + 700 * i)
            tr.t = strike + 4500  # the balls have stopped; the pins are stood up again
            if action.get("carom"):
                tr.press("carom")
            if action.get("called"):
                tr.press("called")
            _foul_list(tr, action.get("fouls", []), SEVEN_PINS_FOULS)
            tr.press("confirm")
            tr.wait(500)
        elif a == "undo":
            tr.long_press("confirm")
        else:
            raise ValueError("no trace for seven-pins action %r" % a)


def _novuss(tr, head, actions):
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
            # The pucks drop through the pockets' beams past the colour sensors; side 0 plays
            # the red pucks, side 1 the black (referee/novuss.py).
            side = action["side"]
            for colour in ([side] * action.get("own", 0) + [1 - side] * action.get("opp", 0)):
                tr.wait(tr.rng.randint(200, 600))
                tr.pocket(tr.rng.randint(1, 4), tr.t, (2000, 600)[colour])
            tr.wait(tr.rng.randint(1000, 2000))  # everything at rest
            _foul_list(tr, action.get("fouls", []), NOVUSS_FOULS)
            tr.press("confirm")
            tr.wait(500)
        elif a == "undo":
            tr.long_press("confirm")
        else:
            raise ValueError("no trace for novuss action %r" % a)


BUILDERS = {"seven-pins": _seven_pins, "novuss": _novuss}


def keypad_keys(game, action):
    """The keys a scorer types on a scorepad for one action (docs/scorepad.md)."""
    a = action["a"]
    if a == "undo":
        return "D#"
    if game == "texas-42":
        return "%d#%d#%d##" % (action["bidder"] + 1, action["bid"], action["took"])
    if game == "domino-bingo":
        nums = [action["trump"]] + list(action["points"]) + list(action["declared"]) + \
            list(action["big"])
        return "".join("%d#" % n for n in nums) + "#"
    if game == "tally":
        if a == "finish":
            return "C#"
        n = action["n"]
        return "%d#%s%d##" % (action["player"] + 1, "B" if n < 0 else "", abs(n))
    raise ValueError("no keys for %s action %r" % (game, a))


def _keypad(tr, head, actions):
    game = new_game(head["game"], head.get("config"))
    for action in actions:
        game.apply(action)  # the log must be legal: a refused action stops here
        if action["a"] != "undo":
            tr.wait(tr.rng.randint(4000, 15000))  # the hand (or the throw) is played
        tr.keys(keypad_keys(head["game"], action))


def from_matchlog(lines, seed=1, bounce_ms=None):
    """The sensor trace of a match log's actions (header excluded) as a Trace; bounce_ms=(lo, hi)
    rattles every press, pin and peg edge (Trace)."""
    log = matchlog.read(lines)
    if log.problems:
        raise ValueError("bad match log: %s" % log.problems[0][1])
    actions = [matchlog.strip_meta(r) for _, r in log.actions]
    for a in actions:
        a.pop("t", None)
    tr = Trace(seed, bounce_ms=bounce_ms)
    tr.wait(500)
    build = BUILDERS.get(log.header["game"])
    if build is None:
        build = {"shove-hapenny": _shove, "five-pins": _five_pins, "texas-42": _keypad,
                 "domino-bingo": _keypad, "tally": _keypad}[log.header["game"]]
    build(tr, log.header, actions)
    tr.wait(3000)
    return tr
