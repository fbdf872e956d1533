# Seven-pins referee: the tilt switches in the seven pins and eight buttons -> break / shot / undo.
#
# The pin-fall latch is the five-pins one with seven lines (a fall that returns counts, a wobble
# does not: SP-2's switches, the design's sensing rules). Pins are stood up again after every shot
# (the contract), so each shot's window starts from a full figure. The buttons add what no switch
# sees: a carom (SP-11), a called carom, the foul (SP-7, SP-8, SP-12, SP-13), and the object balls
# pocketed (SP-10) where no pocket beams are fitted (with beams, each ball through a beam counts
# one, and the button corrects). The shot goes in on "confirm". Until then the screen shows what
# was sensed and chosen ("K S2 p1 car miss"), so nothing is scored that was not seen first.
#
# Buttons: confirm (short: submit the shot / before the game: the break / after it: a new game;
# long: undo), carom and called (toggle), pocket (cycles 0, 1, 2 balls pocketed), foul (the foul
# list, referee/foulist.py: one or more fouls in a shot; long: no foul), undo, break (before the
# game: who breaks, SP-15).

from ...referee import BaseReferee
from ...referee.foulist import FoulList
from ...sense import CLOSING, LONG, POCKET, PRESS, SHOT, SHOT_CLOSED

PINS = ("K", "S1", "S2", "S3", "S4", "M1", "M3")  # tilt line i = PINS[i] (board config order)
# The order of the foul list: the common ones first.
FOULS = ("miss", "cue_pins", "no_cushion", "cue_pocketed", "off_table")


def pin_list(mask):
    """The match-log `pins` list of a latch mask, in canonical order."""
    out = []
    for i in range(len(PINS)):
        if mask >> i & 1:
            out.append(PINS[i])
    return out


class Referee(BaseReferee):
    def __init__(self, app):
        super().__init__(app)
        self.breaker = 0
        self.fouls = FoulList(FOULS)
        self._clear()

    def _clear(self):
        self.carom = 0
        self.called = 0
        self.pocketed = 0
        self.fouls.clear()
        self.pins = 0  # pins down in shot windows closed since the last shot (settled)
        self.closing = False  # "confirm" waits for a pin mid-fall (sense/tilt.py): SHOT submits

    def changed(self):
        self._clear()

    def on_event(self, kind, ident, value, t):
        if kind == SHOT:
            if ident != SHOT_CLOSED:  # windows closed by confirm are taken in confirm()
                self.pins |= value
            elif self.closing:  # ... unless confirm waited for a pin mid-fall
                self.closing = False
                self.pins |= value
                self.submit_shot()
            return
        if self.closing:
            return  # a few ms until the shot is submitted
        if kind == POCKET:
            # A pocket beam saw a ball drop: counted as an object ball (SP-10); a cue ball in a
            # pocket breaks the beam too, so the pocket button puts the count right.
            self.pocketed = min(2, self.pocketed + 1)
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
                self.confirm(t)
        elif name == "undo":
            self.app.submit({"a": "undo"})
        elif name == "carom":
            self.carom = 1 - self.carom
        elif name == "called":
            self.called = 1 - self.called
        elif name == "pocket":
            self.pocketed = (self.pocketed + 1) % 3  # two object balls (SP-1, SP-10)
        elif name == "break":
            self.breaker = 1 - self.breaker

    def confirm(self, t):
        st = self.app.game.state()
        if st["winner"] is not None:
            self.app.new_game()  # the next game, same players and config
            return
        tilt = self.app.tilt
        if st["next"] is None:
            # Pins that moved while the figure was set up belong to no shot.
            if tilt is not None:
                tilt.close(t, wait=False)
            if self.app.submit({"a": "break", "player": self.breaker}):
                self._clear()
            return
        # Closed when the board takes the confirm; a pin that left its base before, not yet for
        # min_fall_ms, is waited for (CLOSING: the SHOT event submits, as on five-pins).
        mask = tilt.close(self.app.taken(t)) if tilt is not None else -1
        if mask == CLOSING:
            self.closing = True
            return
        if mask > 0:
            self.pins |= mask
        self.submit_shot()

    def submit_shot(self):
        st = self.app.game.state()
        if st["next"] is None:
            return
        action = {"a": "shot", "player": st["next"], "pins": pin_list(self.pins),
                  "pocketed": self.pocketed, "carom": self.carom, "called": self.called,
                  "fouls": self.fouls.chosen()}
        if self.app.submit(action):
            self._clear()

    def status(self):
        st = self.app.game.state()
        if st["next"] is None:
            return None if st["winner"] is not None else "break: P%d" % (self.breaker + 1)
        tilt = self.app.tilt
        down = self.pins | (tilt.latched() if tilt is not None else 0)
        parts = pin_list(down)
        if self.pocketed:
            parts.append("p%d" % self.pocketed)
        if self.carom:
            parts.append("car")
        if self.called:
            parts.append("call")
        fouls = self.fouls.summary()
        if fouls:
            parts.append(fouls)
        return " ".join(parts) or None

    def screen(self):
        """The foul list while it is open (8 rows of 16), else None (the score)."""
        st = self.app.game.state()
        who = " P%d" % (st["next"] + 1) if st["next"] is not None else ""
        return self.fouls.screen(who, self.app.warnings())
