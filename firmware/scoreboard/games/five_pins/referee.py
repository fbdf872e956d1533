# Five-pins referee: the pin-fall latch and six buttons -> break / shot / undo.
#
# The latch decides which pins went down (FP-18..FP-21: a fall that returns counts, a wobble
# does not; a pin lying off its spot when the shot starts, e.g. removed under FP-23, is spent and
# never counts). The referee adds what no sensor sees: the first carom (FP-10) and the foul
# (FP-13..FP-16), chosen on buttons, and submits the shot when "confirm" is pressed (which also
# closes the latch's shot window, if still open).
#
# Buttons: confirm (short: submit the shot / before the match: the break; long: undo), carom3 /
# carom4 (toggle the first carom's value), foul (the foul list, below; long: no foul), undo,
# break (before the match: who breaks, FP-7).
#
# Several fouls in one shot (FP-14, FP-15): the foul list (referee/foulist.py). One foul is
# "foul" x its position, "confirm"; the shot is then submitted with "confirm" as ever.

from ...referee import BaseReferee
from ...referee.foulist import FoulList
from ...sense import CLOSING, LONG, PRESS, SHOT, SHOT_CLOSED, pins_text

# The order of the foul list: the common ones first.
FOULS = ("miss", "red_first", "pin", "pins_first", "ball_off", "touch", "wrong_ball", "moving",
         "not_tip", "double_hit", "push", "contact", "foot", "placing", "jump")


class Referee(BaseReferee):
    def __init__(self, app):
        super().__init__(app)
        self.breaker = 0
        self.fouls = FoulList(FOULS)
        self._clear()

    def _clear(self):
        self.carom = 0
        self.fouls.clear()
        self.pins = 0  # pins down in shot windows closed since the last shot (settled)
        self.closing = False  # "confirm" waits for a pin mid-fall (FP-18): SHOT submits

    def changed(self):
        self._clear()

    def on_event(self, kind, ident, value, t):
        if kind == SHOT:
            # A window the latch closed by itself (settled). Windows closed by "confirm" are
            # taken directly in confirm(), so their SHOT event is not counted twice, unless
            # confirm had to wait for a pin that left its base before it (FP-18).
            if ident != SHOT_CLOSED:
                self.pins |= value
            elif self.closing:
                self.closing = False
                self.pins |= value
                self.submit_shot()
            return
        if self.closing:
            return  # a few ms until the shot is submitted: nothing else is taken meanwhile
        if kind != PRESS and kind != LONG:
            return
        name = self.app.button(ident)
        if self.fouls.button(name, kind):
            return
        if name == "confirm":
            if kind == LONG:
                self.app.submit({"a": "undo"})
            else:
                self.confirm(t)
        elif name == "undo":
            self.app.submit({"a": "undo"})
        elif name == "carom3":
            self.carom = 0 if self.carom == 3 else 3
        elif name == "carom4":
            self.carom = 0 if self.carom == 4 else 4
        elif name == "break":
            self.breaker = 1 - self.breaker

    def confirm(self, t):
        st = self.app.game.state()
        if st["winner"] is not None:
            self.app.new_game()  # the next match, same players and config
            return
        tilt = self.app.tilt
        if st["next"] is None:
            # Pins that moved before the break (the figure being set up) belong to no shot:
            # close their window now, so it cannot settle later into the first shot and pins
            # still lying are spent (FP-23: a pin off its spot is not counted).
            if tilt is not None:
                tilt.close(t, wait=False)
            if self.app.submit({"a": "break", "player": self.breaker}):
                self._clear()
            return
        # Closed when the board takes the confirm (its release has lasted min_press_ms), not at
        # the release itself: a pin that left its base before then is this shot's (FP-18).
        mask = tilt.close(self.app.taken(t)) if tilt is not None else -1
        if mask == CLOSING:
            self.closing = True  # a pin is mid-fall: the shot goes when it is down (FP-18)
            return
        if mask > 0:
            self.pins |= mask
        self.submit_shot()

    def submit_shot(self):
        st = self.app.game.state()
        if st["next"] is None:
            return
        action = {"a": "shot", "player": st["next"], "pins": pins_text(self.pins),
                  "carom": self.carom, "fouls": self.fouls.chosen()}
        if self.app.submit(action):
            self._clear()

    def status(self):
        st = self.app.game.state()
        if st["next"] is None:
            return None if st["winner"] is not None else "break: P%d" % (self.breaker + 1)
        tilt = self.app.tilt
        down = self.pins | (tilt.latched() if tilt is not None else 0)
        parts = []
        if down:
            parts.append("pins " + pins_text(down))
        if self.carom:
            parts.append("c%d" % self.carom)
        fouls = self.fouls.summary()
        if fouls:
            parts.append(fouls)
        return " ".join(parts) or None

    def screen(self):
        """The foul list while it is open (8 rows of 16), else None (the score)."""
        st = self.app.game.state()
        who = " P%d" % (st["next"] + 1) if st["next"] is not None else ""
        return self.fouls.screen(who, self.app.warnings())
