# Five-pins referee: the pin-fall latch and six buttons -> break / shot / undo (the pin tables'
# shared flow: referee/pintable.py).
#
# The latch decides which pins went down (FP-18..FP-21: a fall that returns counts, a wobble
# does not; a pin lying off its spot when the shot starts, e.g. removed under FP-23, is spent and
# never counts). The referee adds what no sensor sees: the first carom (FP-10) and the fouls
# (FP-13..FP-16), chosen on buttons, and submits the shot when "confirm" is pressed (which also
# closes the latch's shot window, if still open).
#
# Buttons: confirm (short: submit the shot / before the match: the break; long: undo), carom3 /
# carom4 (toggle the first carom's value), foul (the foul list, below; long: no foul), undo,
# break (before the match: who breaks, FP-7).
#
# Several fouls in one shot (FP-14, FP-15): the foul list (referee/foulist.py). One foul is
# "foul" x its position, "confirm"; the shot is then submitted with "confirm" as ever. After the
# fouls come the rulings: "void" (FP-17), "in_contact" (FP-24: the balls were in contact with no
# legal shot and went back to the break position; this shot scores nothing for the shooter, its
# fouls still count for the opponent) and "not down <pin>" for each pin counted down (FP-22).

from ...referee.foulist import VOID
from ...referee.pintable import PinTable
from ...sense import pins_text
from .board import PINS

# The order of the foul list: the common ones first.
FOULS = ("miss", "red_first", "pin", "pins_first", "ball_off", "touch", "wrong_ball", "moving",
         "not_tip", "double_hit", "push", "contact", "foot", "placing", "jump")
IN_CONTACT = "in_contact"  # FP-24's ruling
RULINGS = (VOID, IN_CONTACT)
LIST = FOULS + RULINGS  # the foul list before its "not down" entries (traces: chalk/games)


class Referee(PinTable):
    PINS = PINS
    FOULS = FOULS
    RULINGS = RULINGS

    def clear_shot(self):
        self.carom = 0

    def on_button(self, name, kind):
        if name == "carom3":
            self.carom = 0 if self.carom == 3 else 3
        elif name == "carom4":
            self.carom = 0 if self.carom == 4 else 4

    def pins_value(self, mask):
        return pins_text(mask)  # "12C": PINS' order, the rules' too

    def shot(self, player, mask, fouls, void):
        action = {"a": "shot", "player": player, "pins": pins_text(mask),
                  "carom": 0 if void else self.carom, "fouls": fouls}
        if not void and self.ruled(IN_CONTACT):
            action["in_contact"] = 1
        return action

    def parts(self, down):
        parts = ["pins " + pins_text(down)] if down else []
        if self.carom:
            parts.append("c%d" % self.carom)
        return parts
