# The shot at a table with a tilt switch in each pin: what the referees of such tables share
# (docs/scoring-at-the-table.md). A game's referee (games/<game>/referee.py) subclasses PinTable
# and says only what is its own: its pins and fouls, its buttons beyond the common ones, the
# shot's keys in its match-log vocabulary, and its part of the status row.
#
# The pin-fall latch (sense/tilt.py) decides which pins went down: a fall that returns counts, a
# wobble does not (FP-18..FP-21), a pin lying off its spot when the shot starts is spent. The
# buttons add what no switch sees, and nothing is scored before "confirm": until then the
# screen shows what was sensed and chosen, so it can be put right first.
#
# Buttons every pin table has: confirm (short: submit the shot / before the game: the break /
# after it: the next game; long: undo), foul (the foul list, referee/foulist.py; long: no foul),
# undo, break (before the game: who breaks). The foul list ends with the referee's rulings:
#   - VOID: the shot is void, a third party or force majeure spoilt it (FP-17): nothing counts,
#     no foul is charged, the turn passes; the pins the switches counted go in `struck`;
#   - "not down <pin>", offered for each pin counted down: the referee strikes it (FP-22: a pin
#     leaning on a ball that falls as the ball rolls away is not down): the shot goes in without
#     it, the pin in `struck`;
#   - whatever the game adds (RULINGS after VOID).
#
# The confirm closes the latch's shot window when the board takes it (its release plus
# min_press_ms); a pin that left its base before then, not yet down for min_fall_ms, is waited
# for (CLOSING: the SHOT event that closes the window submits the shot).

from ..sense import CLOSING, LONG, POCKET, PRESS, SHOT, SHOT_CLOSED
from . import BaseReferee
from .foulist import VOID, FoulList

NOT_DOWN = "not down "  # + a pin id: the ruling that strikes that pin (FP-22)


class PinTable(BaseReferee):
    PINS = ()  # the tilt lines' pin ids, in the lines' order (the game's board.py)
    FOULS = ()  # its foul codes, the common ones first (the foul list's order)
    RULINGS = (VOID,)  # the rulings after the fouls, before the "not down" ones

    def __init__(self, app):
        super().__init__(app)
        self.breaker = 0
        self._nf = len(self.FOULS)
        self._nr = self._nf + len(self.RULINGS)
        self.fouls = FoulList(self.FOULS + self.RULINGS + tuple(NOT_DOWN + p for p in self.PINS),
                              self._nf)
        self._clear()

    # -- what a game's referee says --------------------------------------------------------
    def clear_shot(self):
        """Forget what was chosen for the shot besides the pins and the list (a carom...)."""

    def on_button(self, name, kind):
        """A press of one of the game's own buttons."""

    def on_pocket(self, what):
        """A pocket's beam saw something drop (sense/pockets.py)."""

    def pins_value(self, mask):
        """The pins of a latch mask as the game's match log writes them."""
        raise NotImplementedError

    def shot(self, player, mask, fouls, void):
        """The shot action: the pins counted (`mask`), the fouls, and what the game's buttons
        chose (none of it in a void shot)."""
        raise NotImplementedError

    def parts(self, down):
        """The game's part of the status row: the pins counted down and what was chosen."""
        return []

    # -- the common flow -------------------------------------------------------------------
    def _clear(self):
        self.fouls.clear()
        self.pins = 0  # pins down in shot windows closed since the last shot (settled)
        self.closing = False  # "confirm" waits for a pin mid-fall: the SHOT event submits
        self.clear_shot()

    def changed(self):
        self._clear()

    def down(self):
        """The pins counted down so far: closed windows and the latch's open one."""
        tilt = self.app.tilt
        return self.pins | (tilt.latched() if tilt is not None else 0)

    def _offer(self):
        """Offer "not down" for each pin counted down now, and only those."""
        down = self.down()
        hidden = 0
        for i in range(len(self.PINS)):
            if not down >> i & 1:
                hidden |= 1 << (self._nr + i)
        self.fouls.hidden = hidden

    def struck(self):
        """The latch mask of the pins the referee struck (FP-22), of those counted down."""
        lst = self.fouls
        return (lst.marked & ~lst.hidden) >> self._nr & self.down()

    def ruled(self, ruling):
        return self.fouls.is_marked(ruling)

    def on_event(self, kind, ident, value, t):
        if kind == SHOT:
            # A window the latch closed by itself (settled). Windows closed by "confirm" are
            # taken in confirm(), so their SHOT event is not counted twice, unless confirm had
            # to wait for a pin that left its base before it (FP-18).
            if ident != SHOT_CLOSED:
                self.pins |= value
            elif self.closing:
                self.closing = False
                self.pins |= value
                self.submit_shot()
            return
        if self.closing:
            return  # a few ms until the shot is submitted: nothing else is taken meanwhile
        if kind == POCKET:
            self.on_pocket(value)
            return
        if kind != PRESS and kind != LONG:
            return
        name = self.app.button(ident)
        self._offer()
        if self.fouls.button(name, kind):
            return
        if name == "confirm":
            if kind == LONG:
                self.app.submit({"a": "undo"})
            else:
                self.confirm(t)
        elif name == "undo":
            self.app.submit({"a": "undo"})
        elif name == "break":
            self.breaker = 1 - self.breaker
        else:
            self.on_button(name, kind)

    def confirm(self, t):
        st = self.app.game.state()
        if st["winner"] is not None:
            self.app.new_game()  # the next game, same players and config
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
        self._offer()
        void = self.ruled(VOID)
        struck = self.pins if void else self.struck()
        fouls = [] if void else self.fouls.chosen(0, self._nf)
        action = self.shot(st["next"], self.pins & ~struck, fouls, void)
        if void:
            action["void"] = 1
        if struck:
            action["struck"] = self.pins_value(struck)
        if self.app.submit(action):
            self._clear()

    def status(self):
        st = self.app.game.state()
        if st["next"] is None:
            return None if st["winner"] is not None else "break: P%d" % (self.breaker + 1)
        self._offer()
        struck = self.struck()
        parts = self.parts(self.down() & ~struck)
        fouls = self.fouls.summary(self._nf)
        if fouls:
            parts.append(fouls)
        if struck:
            parts.append("not " + " ".join(self.pins_value(struck)))
        parts += self.fouls.chosen(self._nf, self._nr)  # the rulings marked: "void", ...
        return " ".join(parts) or None

    def screen(self):
        """The foul list while it is open (8 rows of 16), else None (the score)."""
        if self.fouls.cursor < 0:
            return None  # closed: nothing worked out (the screen asks at every redraw)
        st = self.app.game.state()
        who = " P%d" % (st["next"] + 1) if st["next"] is not None else ""
        self._offer()
        return self.fouls.screen(who, self.app.warnings())
