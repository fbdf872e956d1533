# Seven-pins referee: the tilt switches in the seven pins and eight buttons -> break / shot / undo
# (the pin tables' shared flow: referee/pintable.py).
#
# The pin-fall latch is the pin tables' one with seven lines (a fall that returns counts, a
# wobble does not: SP-2's switches, the design's sensing rules). Pins are stood up again after
# every shot (the contract), so each shot's window starts from a full figure. The buttons add
# what no switch sees: a carom (SP-11), a called carom, the foul (SP-7, SP-8, SP-12, SP-13), and
# the object balls pocketed (SP-10) where no pocket beams are fitted (with beams, each ball
# through a beam counts one, and the button corrects). The shot goes in on "confirm". Until then
# the screen shows what was sensed and chosen ("K S2 p1 car miss"), so nothing is scored that
# was not seen first.
#
# Buttons: confirm (short: submit the shot / before the game: the break / after it: a new game;
# long: undo), carom and called (toggle), pocket (cycles 0, 1, 2 balls pocketed), foul (the foul
# list, referee/foulist.py: one or more fouls in a shot, then the rulings "void" and "not down
# <pin>"; long: no foul), undo, break (before the game: who breaks, SP-15).

from ...referee.pintable import PinTable
from .board import PINS  # tilt line i = PINS[i] (board config order)

# The order of the foul list: the common ones first.
FOULS = ("miss", "cue_pins", "no_cushion", "cue_pocketed", "off_table")
LIST = FOULS + PinTable.RULINGS  # the foul list before its "not down" entries (traces)


def pin_list(mask):
    """The match-log `pins` list of a latch mask, in canonical order."""
    out = []
    for i in range(len(PINS)):
        if mask >> i & 1:
            out.append(PINS[i])
    return out


class Referee(PinTable):
    PINS = PINS
    FOULS = FOULS

    def clear_shot(self):
        self.carom = 0
        self.called = 0
        self.pocketed = 0

    def on_pocket(self, what):
        # A pocket beam saw a ball drop: counted as an object ball (SP-10); a cue ball in a
        # pocket breaks the beam too, so the pocket button puts the count right.
        self.pocketed = min(2, self.pocketed + 1)

    def on_button(self, name, kind):
        if name == "carom":
            self.carom = 1 - self.carom
        elif name == "called":
            self.called = 1 - self.called
        elif name == "pocket":
            self.pocketed = (self.pocketed + 1) % 3  # two object balls (SP-1, SP-10)

    def pins_value(self, mask):
        return pin_list(mask)

    def shot(self, player, mask, fouls, void):
        if void:
            return {"a": "shot", "player": player, "pins": [], "pocketed": 0, "carom": 0,
                    "called": 0, "fouls": []}
        return {"a": "shot", "player": player, "pins": pin_list(mask),
                "pocketed": self.pocketed, "carom": self.carom, "called": self.called,
                "fouls": fouls}

    def parts(self, down):
        parts = pin_list(down)
        if self.pocketed:
            parts.append("p%d" % self.pocketed)
        if self.carom:
            parts.append("car")
        if self.called:
            parts.append("call")
        return parts
