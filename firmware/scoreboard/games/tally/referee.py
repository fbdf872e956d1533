# Tally (caps, backgammon, parcheesi, custom) on the scorepad (docs/scorepad.md): the player
# (1..N) and #, then the count (A = add, B = take away, default add) and #, then # again to
# record it (TL-2). C then # finishes the game (TL-4).
#
# Screen while entering: "P2 +3_"; before the confirm: "P2 +3 #=ok".

from ...referee.keyentry import _ENTER, _FINISH, KeyEntry

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_PLAYER = const(0)
_COUNT = const(1)


class Referee(KeyEntry):
    FIELDS = (("player", 1), ("n", 4))

    def reset(self):
        super().reset()
        self.sign = 1

    def value_of(self, i, number):
        return number - 1 if i == _PLAYER else self.sign * number

    def shown_value(self, i, v):
        if i == _PLAYER:
            return str(v + 1)
        self.sign = -1 if v < 0 else 1
        return str(abs(v))

    def action(self, v):
        if v[_PLAYER] is None:
            return {"a": "add", "player": 0, "n": 0}
        return {"a": "add", "player": v[_PLAYER], "n": 0 if v[_COUNT] is None else v[_COUNT]}

    def review(self, a):
        return "P%d %+d" % (a["player"] + 1, a["n"])

    def on_letter(self, ch):
        if ch == "A" or ch == "B":
            if self.mode == _ENTER and self.field == _COUNT:
                self.sign = 1 if ch == "A" else -1
                return True
            return False
        if ch == "C":
            self.mode = _FINISH  # finish the game (TL-4): shown first, # confirms
            return True
        return False

    def confirm_special(self):
        self.mode = _ENTER
        if self.app.submit({"a": "finish"}):
            self.reset()
        else:
            self.refuse_submit()

    def status(self):
        if self.mode == _FINISH:
            return "finish game? #=yes *=no"
        return super().status()

    def entry_text(self):
        n = len(self.app.game.state()["counts"])
        if self.field == _PLAYER:
            return "player 1-%d? %s_" % (n, self.buf)
        return "P%d %s%s_" % (self.values[_PLAYER] + 1, "+" if self.sign > 0 else "-", self.buf)
