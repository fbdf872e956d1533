# Domino bingo on the scorepad (docs/scorepad.md): per hand, the trump suit (0 = blanks .. 6,
# DB-1), each player's points in tricks (DB-6), doubles declared and won (DB-8) and big points
# earned in the hand (DB-3, DB-8), each followed by #, then # again to score the hand.
#
# Screen while entering: "T5 P80/52 D20/_" (trump, points, declared, big points, player 1/2).

from ...referee.keyentry import KeyEntry

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_TRUMP = const(0)


class Referee(KeyEntry):
    # trump, points 1, points 2, declared 1, declared 2, big 1, big 2
    FIELDS = (("trump", 1), ("pts", 3), ("pts", 3), ("decl", 3), ("decl", 3), ("big", 2),
              ("big", 2))

    def action(self, v):
        def z(i):
            return 0 if v[i] is None else v[i]
        return {"a": "hand", "trump": z(0), "points": [z(1), z(2)], "declared": [z(3), z(4)],
                "big": [z(5), z(6)]}

    def review(self, a):
        return "T%d P%d/%d D%d/%d B%d/%d" % (a["trump"], a["points"][0], a["points"][1],
                                             a["declared"][0], a["declared"][1], a["big"][0],
                                             a["big"][1])

    def entry_text(self):
        if self.field == _TRUMP:
            return "trump 0-6? %s_" % self.buf
        text = "T%d" % self.values[0]
        for i, letter in ((1, "P"), (3, "D"), (5, "B")):
            if self.field < i:
                break
            a = self.values[i]
            first = self.buf + "_" if self.field == i else str(a)
            text += " %s%s" % (letter, first)
            if self.field > i:
                second = self.buf + "_" if self.field == i + 1 else str(self.values[i + 1])
                text += "/" + second
        return text
