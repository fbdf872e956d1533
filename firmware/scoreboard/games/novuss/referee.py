# Novuss referee: buttons (and, where fitted, the pocket sensors) -> start / shot / undo.
#
# A shot's pucks are counted by the pocket sensors where fitted (a beam and a colour sensor in
# each corner pocket: sense/pockets.py) and on the `own` and `opp` buttons, each press one puck;
# the foul list (referee/foulist.py) marks one or more NV-7 codes, and after them the ruling
# "void" (a third party or force majeure spoilt the shot, as FP-17: nothing counts, the turn
# passes, NV-6). Nothing is scored before "confirm": the screen shows the counts and the fouls
# chosen so far ("own 2 opp 1 opp_first"), so a count can be put right first.
#
# Buttons: confirm (short: submit the shot / before the game: the start / after it: a new game;
# long: undo), own and opp (one puck each press; long: back to 0), foul (the foul list; long: no
# foul), undo, start (before the game: which side shoots first).

from ...referee import BaseReferee
from ...referee.foulist import VOID, FoulList
from ...sense import LONG, POCKET, PRESS
from ...sense.pockets import BALL, BLACK, RED, STRIKER

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

# The order of the foul list: the common ones first.
FOULS = ("opp_first", "no_own_touch", "striker_pocketed", "own_off", "direct_in_zone",
         "striker_off", "opp_off", "zone_ricochet")
LIST = FOULS + (VOID,)  # the foul list: the fouls, then the ruling
_MAX = const(8)  # NV-1: pucks a side


class Referee(BaseReferee):
    def __init__(self, app):
        super().__init__(app)
        self.first = 0
        self.fouls = FoulList(LIST, len(FOULS))
        self._clear()

    def _clear(self):
        self.own = 0
        self.opp = 0
        self.fouls.clear()

    def changed(self):
        self._clear()

    def on_event(self, kind, ident, value, t):
        if kind == POCKET:
            self.pocketed(value)
            return
        if kind != PRESS and kind != LONG:
            return
        name = self.app.button(ident)
        if self.fouls.button(name, kind):
            return
        if name == "confirm":
            if kind == LONG:
                self.app.submit({"a": "undo"})
            else:
                self.confirm()
        elif name == "undo":
            self.app.submit({"a": "undo"})
        elif name == "own":
            self.own = 0 if kind == LONG else min(_MAX, self.own + 1)
        elif name == "opp":
            self.opp = 0 if kind == LONG else min(_MAX, self.opp + 1)
        elif name == "start":
            self.first = 1 - self.first

    def pocketed(self, what):
        """A pocket sensor saw `what` drop. Side 0 (A) plays the red pucks, side 1 (B) the black;
        a puck of unknown colour (a pocket without a colour sensor) counts as the shooter's own;
        the striker marks the striker_pocketed foul (NV-7)."""
        side = self.app.game.state()["next"]
        if side is None:
            return
        if what == STRIKER:
            self.fouls.mark("striker_pocketed")
        elif what == BALL or (what == RED) == (side == 0):
            self.own = min(_MAX, self.own + 1)
        elif what == RED or what == BLACK:
            self.opp = min(_MAX, self.opp + 1)

    def confirm(self):
        st = self.app.game.state()
        if st["winner"] is not None:
            self.app.new_game()
            return
        if st["next"] is None:
            if self.app.submit({"a": "start", "side": self.first}):
                self._clear()
            return
        if self.fouls.is_marked(VOID):
            action = {"a": "shot", "side": st["next"], "own": 0, "opp": 0, "fouls": [],
                      "void": 1}
        else:
            action = {"a": "shot", "side": st["next"], "own": self.own, "opp": self.opp,
                      "fouls": self.fouls.chosen(0, len(FOULS))}
        if self.app.submit(action):
            self._clear()

    def status(self):
        st = self.app.game.state()
        if st["next"] is None:
            return None if st["winner"] is not None else "start: %s" % "AB"[self.first]
        parts = []
        if self.own:
            parts.append("own %d" % self.own)
        if self.opp:
            parts.append("opp %d" % self.opp)
        fouls = self.fouls.summary(len(FOULS))
        if fouls:
            parts.append(fouls)
        if self.fouls.is_marked(VOID):
            parts.append(VOID)
        return " ".join(parts) or None

    def screen(self):
        """The foul list while it is open (8 rows of 16), else None (the score)."""
        if self.fouls.cursor < 0:
            return None  # closed: nothing worked out (the screen asks at every redraw)
        st = self.app.game.state()
        who = " " + "AB"[st["next"]] if st["next"] is not None else ""
        return self.fouls.screen(who, self.app.warnings())
