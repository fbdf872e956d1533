# Key entry on a scorepad's 4x4 keypad (docs/scorepad.md): the common part of the referees of the
# games a scorepad plays (their board.py: SENSOR "keypad"). A game's referee lists its fields;
# the scorer types each field's number and presses # to go on, and after the last field the whole
# action is shown and # submits it. Every field is checked by the rules as soon as it is entered
# (the action so far, with harmless values in the fields still to come), so a wrong entry is
# refused on the screen with its rule id at once, and the field stays open to be put right.
#
#   1 2 3 A      digits: the field's number        #: enter the field / confirm the action
#   4 5 6 B      *: delete a digit; on an empty field, back to the previous field (or cancel)
#   7 8 9 C      D: undo the latest action (shown first; # confirms, * keeps it)
#   * 0 # D      A, B, C: per game (on_letter: a count's sign, finishing a game, ...)
#
# Once the game has a winner, # starts the next game (same players and config); D still undoes.

from ..rules import RuleError
from ..sense import KEY
from . import BaseReferee

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_ENTER = 0
_REVIEW = const(1)  # every field entered: the action is shown, # submits it
_UNDO = const(2)  # D pressed: # undoes the latest action
_FINISH = 3  # a game-specific confirm (a letter asked for it: finish the game, say)


class KeyEntry(BaseReferee):
    FIELDS = ()  # (short label, max digits) per field, in entry order

    def __init__(self, app):
        super().__init__(app)
        self.legends = app.cfg["keypad"]["keys"]
        self.reset()

    def reset(self):
        self.values = [None] * len(self.FIELDS)  # type: list
        self.field = 0
        self.buf = ""
        self.mode = _ENTER
        self.refusal = None  # "<rule> <reason>" of the latest refused entry, until a key

    def changed(self):
        self.reset()

    def warnings(self):
        return [self.refusal] if self.refusal else []

    # -- what a game defines -----------------------------------------------------------------
    def action(self, values):
        """The action the entered values make (None for a field not entered yet: use a value
        the rules accept, so that checking a partial entry blames the fields entered)."""
        raise NotImplementedError

    def review(self, action):
        """The action as shown before it is confirmed (up to 32 characters)."""
        raise NotImplementedError

    def on_letter(self, ch):
        """A, B or C: True if the game used the key."""
        return False

    def value_of(self, i, number):
        """The field's value for the number typed (e.g. side 1 on the pad -> side 0)."""
        return number

    # -- keys ----------------------------------------------------------------------------------
    def on_event(self, kind, ident, value, t):
        if kind != KEY or not 0 <= ident < len(self.legends):
            return
        ch = self.legends[ident]
        self.refusal = None
        self.app.error = None  # a new key: the scorer has seen the refusal
        if ch == "D":
            self.mode = _UNDO if self.mode != _UNDO else _ENTER
            return
        if self.mode == _UNDO:
            if ch == "#":
                self.mode = _ENTER
                self.app.submit({"a": "undo"})  # resets the entry on success (changed())
            elif ch == "*":
                self.mode = _ENTER
            return
        if self.mode == _FINISH:
            if ch == "#":
                self.confirm_special()
            elif ch == "*":
                self.mode = _ENTER
            return
        if self.app.game.outcome() is not None:
            if ch == "#":
                self.app.new_game()  # the next game, same players and config
            return
        if "0" <= ch <= "9":
            if self.mode == _ENTER and len(self.buf) < self.FIELDS[self.field][1]:
                self.buf += ch
            return
        if ch == "*":
            self.back()
        elif ch == "#":
            self.enter()
        else:
            self.on_letter(ch)

    def back(self):
        if self.mode == _REVIEW:
            self.mode = _ENTER
            self.field = len(self.FIELDS) - 1
            self.buf = str(self.values[self.field])
            self.values[self.field] = None
            self.reopen()
        elif self.buf:
            self.buf = self.buf[:-1]
        elif self.field > 0:
            self.field -= 1
            v = self.values[self.field]
            self.values[self.field] = None
            self.buf = "" if v is None else self.shown_value(self.field, v)
            self.reopen()

    def reopen(self):
        """A field was opened again for correction (a game may restore a sign, say)."""

    def shown_value(self, i, v):
        return str(v)

    def enter(self):
        if self.mode == _REVIEW:
            if self.app.submit(self.action(self.values)):
                self.reset()
            else:
                self.refuse_submit()
            return
        if not self.buf:
            self.refusal = "type a number"
            return
        values = list(self.values)
        values[self.field] = self.value_of(self.field, int(self.buf))
        err = self.check(self.action(values))
        if err is not None:
            self.refusal = err
            return
        self.values = values
        self.buf = ""
        if self.field + 1 < len(self.FIELDS):
            self.field += 1
        else:
            self.mode = _REVIEW

    def refuse_submit(self):
        self.refusal = self.app.error
        self.app.error = None

    def check(self, action):
        """None if the rules accept the action now, else "<rule> <reason>" to show."""
        try:
            self.app.game.prepare(action)
        except RuleError as e:
            return "%s %s" % (e.rule, e.reason)
        return None

    def confirm_special(self):
        self.mode = _ENTER

    # -- the screen ----------------------------------------------------------------------------
    def entry_text(self):
        """The fields entered so far and the one being typed."""
        raise NotImplementedError

    def status(self):
        if self.mode == _UNDO:
            return "undo last? #=yes *=no"
        if self.app.game.outcome() is not None:
            return "# = next game"
        if self.mode == _REVIEW:
            return self.review(self.action(self.values)) + " #=ok"
        return self.entry_text()
