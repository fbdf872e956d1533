# Shove ha'penny referee: the peg grid and five buttons -> start / turn / claim / undo.
#
# The scorer records a turn the way it is done at the table: by putting pegs in the scoring
# squares (SH-2), one per score, an overflow in the opponent's square (SH-15), then pressing
# "done". The turn's `beds` are the pegs that appeared since the rules' state: the shooter's
# row plus, with overflow "auto" or "claim", the opponent's row (an overflow peg stands for a
# shooter's coin in that bed; with "claim" it scores when the opponent presses "claim", and an
# unclaimed one must be pulled before the next turn). The referee then asks the rules what that
# turn gives; if the pegs on the board disagree (a peg pulled, in the wrong square, an overflow
# that may not be credited), nothing is submitted and the mismatch is shown until the pegs are
# put right (never silently accepted).
#
# Buttons: done (short: end of turn / before the start: start; long: undo), void (cycles the
# SH-17 reason: touched, removed, none), out_of_turn (the turn just played was by the side not
# on move, SH-18; before the start: B starts), undo, claim (overflow "claim": the new pegs in a
# square are claims, SH-15).

from ...referee import BaseReferee
from ...sense import LONG, PEG, PRESS

_VOIDS = (None, "touched", "removed")
_SIDES = "AB"


class Referee(BaseReferee):
    def __init__(self, app):
        super().__init__(app)
        self.void = 0
        self.out_of_turn = False
        self.problems = []  # mismatch texts of the last refused "done", until pegs change
        # The pegs against the score, worked out once for each change of either (every redraw
        # asks, twice): [side 0 bits, side 1 bits, game, its generation, pulled, new, diff].
        self._vs = [-1, -1, None, -1, None, None, None]  # type: list

    # -- the pegs ----------------------------------------------------------------------------
    def counts(self):
        g = self.app.grid
        return [g.beds(0), g.beds(1)]

    def diff(self, beds):
        """Pegs on the board minus the scores in `beds`, per side and bed."""
        c = self.counts()
        return [[c[s][b] - beds[s][b] for b in range(9)] for s in (0, 1)]

    def _against_score(self, i):
        """The beds with fewer pegs than the score ("PEG A3 -1"; i 4), or with more ("A3";
        i 5), as the pegs and the score stand now: the difference worked out once for each
        change of either, each list when first asked for (a redraw asks for both, in parts)."""
        g = self.app.grid
        game = self.app.game
        a = g.side_bits(0)
        b = g.side_bits(1)
        vs = self._vs
        if vs[0] != a or vs[1] != b or vs[2] is not game or vs[3] != game._gen:
            vs[6] = self.diff(game.state()["beds"])
            vs[4] = vs[5] = None
            vs[0] = a
            vs[1] = b
            vs[2] = game
            vs[3] = game._gen
        if vs[i] is None:
            d = vs[6]
            if i == 4:
                # Between turns a peg may only be added (the turn being scored); fewer pegs
                # than scores is always wrong.
                vs[4] = ["PEG %s%d %d" % (_SIDES[s], k + 1, d[s][k])
                         for s in (0, 1) for k in range(9) if d[s][k] < 0]
            else:
                vs[5] = ["%s%d" % (_SIDES[s], k + 1) for s in (0, 1) for k in range(9)
                         if d[s][k] > 0]
        return vs[i]

    def warnings(self):
        if self.problems:
            return self.problems
        return list(self._against_score(4))

    def changed(self):
        self.problems = []

    # -- events ------------------------------------------------------------------------------
    def on_event(self, kind, ident, value, t):
        if kind == PEG:
            self.problems = []  # the scorer is putting things right
            return
        if kind != PRESS and kind != LONG:
            return
        name = self.app.button(ident)
        if name == "done":
            if kind == LONG:
                self.app.submit({"a": "undo"})
            else:
                self.end_turn()
        elif name == "undo":
            self.app.submit({"a": "undo"})
        elif name == "void":
            self.void = (self.void + 1) % len(_VOIDS)
        elif name == "out_of_turn":
            self.out_of_turn = not self.out_of_turn
        elif name == "claim":
            self.claim()

    def status(self):
        st = self.app.game.state()
        if st["next"] is None and st["winner"] is None:
            return "done: %s starts" % _SIDES[1 if self.out_of_turn else 0]
        parts = []
        if _VOIDS[self.void]:
            parts.append("void " + _VOIDS[self.void])
        if self.out_of_turn:
            # both marks must fit the row: "void touched OOT"
            parts.append("OOT" if _VOIDS[self.void] else "out of turn")
        new = self._against_score(5)
        if new:
            parts.append("+" + " ".join(new))
        return " ".join(parts) or None

    def _reset(self):
        self.void = 0
        self.out_of_turn = False
        self.problems = []

    def end_turn(self):
        game = self.app.game
        st = game.state()
        if st["winner"] is not None:
            self.app.new_game()  # the next game, same players and config
            self._reset()
            return
        if st["next"] is None:
            if self.app.submit({"a": "start", "side": 1 if self.out_of_turn else 0}):
                self._reset()
            return
        shooter = 1 - st["next"] if self.out_of_turn else st["next"]
        d = self.diff(st["beds"])
        action = {"a": "turn", "side": shooter, "beds": [0] * 9}
        if _VOIDS[self.void] or self.out_of_turn:
            # SH-17 / SH-18: the turn scores nothing whatever the pegs say; any peg added for
            # it stays shown as a mismatch after the turn is recorded.
            if _VOIDS[self.void]:
                action["void"] = _VOIDS[self.void]
        else:
            pulled = ["PEG %s%d %d" % (_SIDES[s], b + 1, d[s][b])
                      for s in (0, 1) for b in range(9) if d[s][b] < 0]
            if pulled:
                self.problems = pulled
                return
            # An overflow peg in the opponent's square stands for a shooter's coin in a full bed:
            # credited at once ("auto") or left for the opponent to claim ("claim", SH-15).
            overflows = game.config.get("overflow") in ("auto", "claim")
            opp = 1 - shooter
            action["beds"] = [d[shooter][b] + (d[opp][b] if overflows else 0) for b in range(9)]
            if sum(action["beds"]) > 5:
                self.problems = ["%d pegs: a turn has 5 coins (SH-3)" % sum(action["beds"])]
                return
            want = self.app.predict(action)
            if want is None:
                return  # the rules refused it; the app shows why
            if game.config.get("overflow") != "claim":
                dd = self.diff(want["beds"])
                bad = ["PEG %s%d %+d" % (_SIDES[s], b + 1, dd[s][b])
                       for s in (0, 1) for b in range(9) if dd[s][b]]
                if bad:
                    self.problems = bad  # e.g. an overflow peg that may not be credited
                    return
        if self.app.submit(action):
            self._reset()

    def claim(self):
        # SH-15 with overflow "claim": each new peg in a square is one claim of that bed.
        st = self.app.game.state()
        d = self.diff(st["beds"])
        for s in (0, 1):
            for b in range(9):
                for _ in range(max(0, d[s][b])):
                    if not self.app.submit({"a": "claim", "side": s, "bed": b + 1}):
                        return
