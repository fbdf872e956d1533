# Texas 42 on the scorepad (docs/scorepad.md): per hand, the bidding side (1 = players 1 and 3,
# 2 = players 2 and 4: T42-1), the bid (30..42, 84, 168: T42-2), the points the bidders took
# (0..42: T42-3), each followed by #, then # again to score the hand (T42-6).
#
# Screen while entering: "side 1 bid 34 took 3_"; before the confirm: "S1 34 took 36 made".

from ...referee.keyentry import KeyEntry
from .rules import MARKS

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):  # type: ignore[misc]
        return x

_SIDE = const(0)
_BID = const(1)
_TOOK = const(2)
_LABELS = ("side", "bid", "took")

class Referee(KeyEntry):
    FIELDS = (("side", 1), ("bid", 3), ("took", 2))

    def value_of(self, i, number):
        return number - 1 if i == _SIDE else number  # side 1/2 on the pad, 0/1 in the rules

    def shown_value(self, i, v):
        return str(v + 1) if i == _SIDE else str(v)

    def action(self, v):
        bid = 30 if v[_BID] is None else v[_BID]
        took = v[_TOOK]
        if took is None:
            took = 42 if bid in MARKS or bid > 42 else bid  # made: harmless for the check
        return {"a": "hand", "bidder": 0 if v[_SIDE] is None else v[_SIDE], "bid": bid,
                "took": took}

    def review(self, a):
        made = a["took"] == 42 if a["bid"] in MARKS else a["took"] >= a["bid"]
        return "S%d %d took %d %s" % (a["bidder"] + 1, a["bid"], a["took"],
                                      "made" if made else "SET")

    def entry_text(self):
        parts = []
        for i in range(self.field):
            parts.append("%s %s" % (_LABELS[i], self.shown_value(i, self.values[i])))
        parts.append("%s %s_" % (_LABELS[self.field], self.buf))
        if self.field == _SIDE and not self.buf:
            parts[-1] = "side 1/2?"
        return " ".join(parts)
